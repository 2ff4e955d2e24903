"""`capidx validate`: load every data file, check it, and collect every problem.

`validate_project` is pure apart from reading the files: it returns a `ValidationResult` (data); the
reporters in `capidx.compiler.validate.reporters` turn it into text, JSON or GitHub annotations, and `execute`
ties config, validation and reporting together for the command line. `capidx build` calls
`validate_project` too and builds only from a result that is `ok`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from capidx.compiler.config import Config, given_by_flags, load_config, with_catalog
from capidx.compiler.diagnostics import Diagnostic, ExitCode, exit_code_for
from capidx.compiler.validate import across, configured, discover, keys, lint
from capidx.compiler.validate import aliases as alias_rules
from capidx.compiler.validate import build_needs as contract
from capidx.compiler.validate.load import SourceFile, load_file
from capidx.compiler.validate.schemacategories import defined_categories
from capidx.compiler.validate.schemacost import TooCostly
from capidx.compiler.validate.schemas import (
    ALIASES_SCHEMA,
    CAPABILITY_SCHEMA,
    bundled_validator,
    load_schema_file,
    schema_diagnostics,
    stopped,
)
from capidx.schema.yamldata import json_path


@dataclass(frozen=True)
class LoadedDocument:
    """A parsed data file. `agent_id` is the agent directory name (None for the alias table)."""

    path: Path
    agent_id: str | None
    data: Any
    raw: bytes = field(repr=False)


@dataclass(frozen=True)
class ValidationResult:
    documents: tuple[LoadedDocument, ...]  # capability documents, sorted by agent id
    aliases: LoadedDocument | None
    diagnostics: tuple[Diagnostic, ...]
    checked: tuple[Path, ...] = ()  # every file that was looked at, readable or not
    categories: tuple[str, ...] = ()  # the categories the schema defines (`defined_categories`), used or not

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if not d.is_error)

    @property
    def ok(self) -> bool:
        return not self.errors


def validate_project(
    config: Config,
    paths: Sequence[Path] = (),
    *,
    strict: bool = False,
    today: date | None = None,
    for_build: bool = False,
    templates_listed: bool = False,
) -> ValidationResult:
    """Validate the catalog named by `config` (or only `paths`, when given).

    With a schema other than the bundled one, what the build needs of a document (`contract`) is checked
    too: warnings for `capidx validate` (a catalog of another layout may be checked against its own
    schema), errors when the build validates (`for_build`), which then stops with them instead of a crash.
    `templates_listed`: the templates folder was listed already, and passed (`discover.collect`).
    """
    today = today or date.today()
    return _validate_project(config, paths, strict=strict, today=today, for_build=for_build, listed=templates_listed)


def _validate_project(
    config: Config, paths: Sequence[Path], *, strict: bool, today: date, for_build: bool, listed: bool
) -> ValidationResult:
    inputs = discover.collect(config, paths, templates_listed=listed)
    diagnostics = list(inputs.problems)
    validator, problems = _capability_validator(config)
    diagnostics += problems
    documents: list[LoadedDocument] = []
    sources: list[SourceFile] = []
    for path in inputs.documents if validator is not None else ():
        source, problems = load_file(path, partial=True)
        diagnostics += problems
        if source is not None:
            source.warning_cap = MAX_SAID_WARNINGS
            checked = _check_document(source, validator, config, today)
            # An error of the schema file found with each document (its references loop) is said once.
            diagnostics += [found for found in checked if found.code != "schema-file" or found not in diagnostics]
            if config.schema is not None:
                diagnostics += contract.check_document(source, "error" if for_build else "warning")
            documents.append(LoadedDocument(path, discover.agent_id(path), source.data, source.raw))
            sources.append(source)
    diagnostics += lint.check_duplicate_agents((doc.agent_id or "", doc.path) for doc in documents)
    # The catalog's other documents (named files only, as a pre-commit hook passes them): read quietly, for
    # the rules that compare a document with the rest, as the whole catalog's run reads them.
    context = [found for path in inputs.context if (found := load_file(path, partial=True)[0]) is not None]
    # Every document read, and each with a list of capabilities: a document that is null, a list, or whose
    # `capabilities` is misspelled has names nobody knows, which alias targets and successors may name.
    listed = all(
        isinstance(s.data, dict) and isinstance(s.data.get("capabilities"), list) for s in (*sources, *context)
    )
    read = len(sources) == len(inputs.documents) and len(context) == len(inputs.context)
    # A value JSON cannot hold, read as null, where a capability's name is: which names the catalog has is not known.
    read = read and not any(_NAME_PLACE.fullmatch(at) for source in (*sources, *context) for at in source.nulled)
    catalog_complete = inputs.complete and listed and read
    names = {name for source in (*sources, *context) for name in lint.capability_names(source.data)}
    diagnostics += across.check_across_agents(sources, context, _refused_categories(diagnostics, sources, validator))
    diagnostics += across.check_name_near_misses(sources, context)
    diagnostics += lint.check_agent_names(sources, context)
    diagnostics += lint.check_catalog_size(sources, context)
    if catalog_complete:  # with a document unreadable, its names are unknown: no false alarms
        diagnostics += lint.check_successors(sources, names)
    named = alias_rules.name_keys((*sources, *context))  # once: the table rules and the records' aliases read it
    aliases, table, problems = _check_alias_tables(inputs, names, catalog_complete, (*sources, *context), named)
    diagnostics += problems + alias_rules.check_record_aliases(sources, context, table, named)
    diagnostics += alias_rules.check_names_that_are_aliases(sources, context, table, named)
    unmade = {str(source.path): source.unmade for source in sources}
    diagnostics = _within_warning_cap(sorted(_unsaid_of_nulls(diagnostics, sources), key=_reading_order), unmade)
    if strict:
        diagnostics = [diagnostic.promoted() for diagnostic in diagnostics]
    return ValidationResult(
        tuple(sorted(documents, key=document_order)),
        aliases,
        tuple(sorted(diagnostics, key=_reading_order)),
        inputs.checked,
        defined_categories(validator.schema) if validator is not None else (),
    )


# Warnings said of one file. A pull request's document of 0.8 MB, one alias written 120,000 times, made 120,000
# `alias-repeated` warnings (4 s and 120,000 printed lines): its errors were bounded
# (`MAX_SCHEMA_ERRORS`), its warnings not. The first ones say what is wrong; the rest are counted.
MAX_SAID_WARNINGS = 1_000
_FIX_THOSE = "fix those and validate again"


def _within_warning_cap(diagnostics: Sequence[Diagnostic], unmade: Mapping[str, int]) -> list[Diagnostic]:
    """`diagnostics` (in reading order) with each file's first `MAX_SAID_WARNINGS` warnings and every error, then one
    warning per file counting the warnings left unsaid (before `--strict` promotes them: it is an error then too, so
    the exit code is the one every warning would have made). `unmade`: by file, the warnings its rules only counted
    (`SourceFile.past_cap`), each past the first `MAX_SAID_WARNINGS` of its rule, so never said."""
    kept: list[Diagnostic] = []
    counts: dict[str, int] = {}
    for diagnostic in diagnostics:
        if not diagnostic.is_error:
            counts[diagnostic.path] = counts.get(diagnostic.path, 0) + 1
            if counts[diagnostic.path] > MAX_SAID_WARNINGS:
                continue
        kept.append(diagnostic)
    for path, count in unmade.items():
        counts[path] = counts.get(path, 0) + count
    for path, count in counts.items():
        if (more := count - MAX_SAID_WARNINGS) > 0:
            message = f"{more:,} more warnings than the first {MAX_SAID_WARNINGS:,}, which are said"
            kept.append(Diagnostic(path, None, None, "", "warning", message, _FIX_THOSE, "warnings"))
    return kept


def document_order(doc: LoadedDocument) -> tuple[str, str]:
    """The order of `ValidationResult.documents` (by agent id, then path): the build's order."""
    return doc.agent_id or "", str(doc.path)


def _capability_validator(config: Config) -> tuple[Any | None, list[Diagnostic]]:
    if config.schema is None:
        return bundled_validator(CAPABILITY_SCHEMA), []
    if (problem := configured.missing(config, "schema")) is not None:
        return None, [problem]
    return load_schema_file(config.schema)


# Lint codes that repeat what the bundled schema says of the same value (a category not in its enum, an address
# that is no URI at all, an empty name): said once, by the schema, when it refused the value.
_SAID_BY_SCHEMA = frozenset({"category-slug", "url-scheme", "blank"})


def _unsaid(linted: Sequence[Diagnostic], schema: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The lint findings the schema has not said already of the same value (its message, with its did-you-mean,
    says it all)."""
    refused = {problem.pointer for problem in schema}
    return [problem for problem in linted if problem.code not in _SAID_BY_SCHEMA or problem.pointer not in refused]


def _refused_categories(found: Sequence[Diagnostic], sources: Sequence[SourceFile], validator: Any) -> across.Refused:
    """Whether the schema refuses a capability's category (not in its enumeration): said in `found` for the checked
    `sources`; a document read only to compare with is checked when first asked, as a run naming it would check it,
    so that a file is told the same checked alone as with the whole catalog."""
    said = {(problem.path, problem.pointer) for problem in found if problem.code == "schema"}
    checked = {str(source.path) for source in sources}

    def refused(source: SourceFile, index: int) -> bool:
        if str(source.path) not in checked and validator is not None:
            checked.add(str(source.path))
            said.update((problem.path, problem.pointer) for problem in schema_diagnostics(validator, source))
        return (str(source.path), json_path(("capabilities", index, "category"))) in said

    return refused


# The JSON paths of a null that may stand for a capability's name: the capability, or its name. (A null document or
# `capabilities` is no list of capabilities, which makes the names unknown already.)
_NAME_PLACE = re.compile(r"\$\.capabilities\[\d+\](\.name)?")


def _unsaid_of_nulls(diagnostics: Sequence[Diagnostic], sources: Sequence[SourceFile]) -> list[Diagnostic]:
    """`diagnostics` without what the schema and the rules say of the nulls put for YAML values JSON cannot hold
    (`load_file(partial=True)`): each value is said to be unusable (`parse`), and the rest of its document is checked
    as if it were null, which nobody wrote. What is said of its key (unknown, misspelled, written twice) is placed
    at the key, and stands."""
    nulled = {
        (str(source.path), pointer, *(place or (None, None)))
        for source in sources
        for pointer, place in source.nulled.items()
    }
    if not nulled:
        return list(diagnostics)
    return [
        found
        for found in diagnostics
        if found.code == "parse" or (found.path, found.pointer, found.line, found.col) not in nulled
    ]


def _check_document(source: SourceFile, validator: Any, config: Config, today: date) -> list[Diagnostic]:
    schema = schema_diagnostics(validator, source)
    linted = _unsaid(lint.check_document(source, config, today), schema)
    problems = [*schema, *linted, *lint.check_agent_directory(source.path)]
    if config.schema is not None and not validator.stopped:
        # capidx's own schema is closed: its unknown keys are errors already. A check stopped for taking too long (a
        # slow pattern) is not given more time for near misses, which match the same patterns.
        problems += _near_misses(source, validator)
    return problems


def _near_misses(source: SourceFile, validator: Any) -> list[Diagnostic]:
    """keys.near_misses, within what is left of the document's time (it matches the schema's patterns too)."""
    try:
        return keys.near_misses(
            source, validator.schema, [bundled_validator(CAPABILITY_SCHEMA).schema], validator.search
        )
    except TooCostly as exc:
        return [stopped(validator, source, exc)]


def _check_alias_tables(
    inputs: discover.Inputs,
    names: set[str],
    catalog_complete: bool,
    documents: Sequence[SourceFile],
    named: Mapping[str, alias_rules.Named],
) -> tuple[LoadedDocument | None, Any, list[Diagnostic]]:
    """The alias table checked (first of those named), the data of the table the build reads (that one, else the
    catalog's own when only documents are named: each related table is read once, here), and the problems."""
    first: LoadedDocument | None = None
    related: SourceFile | None = None
    diagnostics: list[Diagnostic] = []
    for path in inputs.aliases:
        source, problems = load_file(path, partial=True)
        diagnostics += problems
        if source is None:
            continue
        schema = schema_diagnostics(bundled_validator(ALIASES_SCHEMA), source)
        if (flat := alias_rules.flat_table(source)) is not None:  # said once, not once per phrase
            schema = [flat[0], *(problem for problem in schema if problem.pointer not in flat[1])]
        found = [*schema, *_unsaid(lint.check_alias_text(source), schema), *alias_rules.check_table_keys(source)]
        if catalog_complete:  # with a document unreadable, its names are unknown: no false alarms
            found += lint.check_alias_targets(source, names) + lint.check_alias_wordings(source, documents)
            found += alias_rules.check_table_names(source, named)
        diagnostics += _unsaid_of_nulls(found, [source])
        first = first or LoadedDocument(path, None, source.data, source.raw)
    for path in inputs.related_aliases:
        # Not named: read as the whole catalog's run reads it, and only its targets are checked (its own problems
        # are its commit's).
        source, _ = load_file(path, partial=True)
        if source is None:
            continue
        related = related or source
        diagnostics += lint.check_alias_targets(source, names) if catalog_complete else []
    table = first.data if first is not None else related.data if related is not None else None
    return first, table, diagnostics


def _reading_order(diagnostic: Diagnostic) -> tuple[str, int, int, str]:
    """By file, then place: a file by where it is, so that one found by a walk of a named folder (`agents/x/...`) and
    one the configuration names (its whole path: the alias table, capidx.yaml) stand in one order, as without PATHS."""
    where = os.path.abspath(diagnostic.path) if diagnostic.path else ""
    return where, diagnostic.line or 0, diagnostic.col or 0, diagnostic.message


@dataclass(frozen=True)
class ValidateArgs:
    """`capidx validate`'s options, parsed. `None` means "not given": capidx.yaml or the default applies."""

    cwd: Path
    paths: tuple[Path, ...] = ()
    config_file: Path | None = None
    agents: Path | None = None
    aliases: Path | None = None
    no_aliases: bool = False
    schema: Path | None = None
    max_age_days: int | None = None
    strict: bool = False
    today: date | None = None


def effective_config(args: ValidateArgs) -> tuple[Config, list[Diagnostic]]:
    """capidx.yaml (or defaults) with the flags the user gave on top; paths in flags are relative to the cwd."""
    agents, aliases = _absolute(args.agents, args.cwd), _absolute(args.aliases, args.cwd)
    given = given_by_flags(agents, aliases, args.no_aliases, _absolute(args.schema, args.cwd))
    config, problems = load_config(_absolute(args.config_file, args.cwd), args.cwd, given)
    config = with_catalog(config, agents, aliases, args.no_aliases)
    config = config.with_overrides(schema=_absolute(args.schema, args.cwd))
    if args.max_age_days is not None:
        config = replace(config, staleness=replace(config.staleness, error_days=args.max_age_days))
    return config, problems


def execute(args: ValidateArgs) -> tuple[ExitCode, ValidationResult]:
    """Run the command: a broken configuration stops before any data is read (exit 2)."""
    config, problems = effective_config(args)
    if problems:
        return ExitCode.USAGE, ValidationResult((), None, tuple(problems))
    result = validate_project(config, args.paths, strict=args.strict, today=args.today)
    return exit_code_for(result.diagnostics), result


def _absolute(path: Path | None, cwd: Path) -> Path | None:
    return None if path is None else cwd / path  # a leading `~` was expanded by the CLI's HomePath
