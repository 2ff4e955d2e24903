"""JSON Schema checking whose messages say what is wrong, where, and what to write instead.

jsonschema's own messages repeat the whole offending value and stop at "is not one of [...]"; here each
error becomes a `Diagnostic` at the value's line:col with a hint: the closest allowed value, the unknown
key's likely spelling, the expected date format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import cache, cached_property
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate.fastschema import compile_check
from capidx.compiler.validate.load import SourceFile, file_problem, load_file
from capidx.compiler.validate.regexrisk import MAX_WRITTEN_OUT, backtracking_risk, written_out
from capidx.compiler.validate.schemacost import Budget, SlowPattern, TooCostly, counted
from capidx.schema.wording import Search, describe, json_type, shown, without_shadowed
from capidx.schema.wording import short as _short
from capidx.schema.wording import short_message as _short_message

CAPABILITY_SCHEMA = "capability-schema.json"
ALIASES_SCHEMA = "aliases-schema.json"
CONFIG_SCHEMA = "config-schema.json"


@cache
def bundled_schema(name: str) -> dict[str, Any]:
    return json.loads(resources.files("capidx.schema").joinpath(name).read_text("utf-8"))


@cache
def bundled_validator(name: str) -> LazyValidator:
    return LazyValidator(bundled_schema(name), ours=True)


class LazyValidator:
    """A schema's jsonschema validator, made on first use (anything else is delegated to it), with its fast check.

    Only capidx's own schemas (`ours`) have a fast check (`fastschema`); a user's is checked by jsonschema alone.
    Importing jsonschema costs 0.1-0.15 s, more than a no-op `capidx build` needs in all: a valid document is
    proved so by the fast check alone (its formats by `formats`, jsonschema's rules without jsonschema), and
    jsonschema is imported only to describe the errors of a document not proved valid.
    """

    def __init__(
        self, schema: dict[str, Any], registry: Any = None, *, ours: bool = False, path: Path | None = None
    ) -> None:
        self.schema = schema
        self.registry = registry  # of the local schemas its `$ref`s may name (schemarefs); None: the bundled ones
        self.ours = ours
        self.path = path  # a user's schema file, blamed when applying the schema recurses without end
        self.budget = None if ours else Budget()  # a user's schema may ask for unbounded work (schemacost)

    @property
    def search(self) -> Search | None:
        """How the schema's regexes are matched outside jsonschema (hints, near misses): with the time limit of a
        user's schema; None, `re.search`, for capidx's own."""
        return None if self.budget is None else self.budget.search

    @property
    def stopped(self) -> bool:
        """Whether checking the last document was stopped for taking too long (schemacost)."""
        return self.budget is not None and self.budget.stopped

    def recurses(self, instance: Any) -> bool:
        """Whether checking `instance` ends in a RecursionError."""
        try:
            for _ in self.iter_errors(instance):
                pass
        except RecursionError:
            return True
        except TooCostly:  # the schema's fault too: said as such by the caller
            raise
        except Exception:  # another failure of the schema: said when a document meets it
            return False
        return False

    @cached_property
    def jsonschema_validator(self) -> Any:
        return make_validator(self.schema, self.registry, self.budget)

    def iter_errors(self, instance: Any) -> Any:
        """The errors of `instance`; TooCostly (schemacost) when finding them takes too much work."""
        validator = self.jsonschema_validator
        if self.budget is not None:
            self.budget.start()
        return validator.iter_errors(instance)

    @cached_property
    def fast_check(self) -> Callable[[Any], bool] | None:
        """The fast check of one of capidx's own schemas (made without jsonschema), or None."""
        return compile_check(self.schema) if self.ours else None

    def certainly_valid(self, instance: Any) -> bool:
        """True when the fast check proves `instance` valid; errors are always left to jsonschema."""
        check = self.fast_check
        try:
            return check is not None and check(instance)
        except Exception:  # e.g. RecursionError on absurd nesting: jsonschema decides, and reports it
            return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.jsonschema_validator, name)


def make_validator(schema: dict[str, Any], registry: Any = None, budget: Budget | None = None) -> Any:
    """A validator for the schema's own draft (2020-12 when it names none), with format checking on, whose
    `$ref`s resolve in `registry` (default: the bundled schemas; else one `check_references` crawled, holding the
    schema) and never over the network; its keyword checks spend from `budget` when one is given."""
    import jsonschema

    from capidx.compiler.validate.schemarefs import offline_registry, root_resolver

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    if budget is not None:
        cls = counted(cls, budget)
    if registry is None:
        return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=offline_registry())
    # `_resolver` is not public, but every jsonschema pyproject.toml allows (4.18 to 4.x) takes it; without it each
    # anchor a document meets crawls the whole schema again (`root_resolver`).
    return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=registry, _resolver=root_resolver(registry, schema))


def load_schema_file(path: Path) -> tuple[LazyValidator | None, list[Diagnostic]]:
    """A validator for a user's schema file; problems with the file itself carry the code `schema-file` (exit 2)."""
    source, problems = load_file(path)
    problems = [replace(problem, code="schema-file") for problem in problems if problem.is_error]
    if source is None or problems:
        return None, problems
    schema = source.data
    if not isinstance(schema, dict):
        return None, [source.diagnostic((), "error", "a JSON Schema must be an object", code="schema-file")]
    import jsonschema

    cls, warnings = _draft(source, jsonschema.Draft202012Validator, "checked as JSON Schema draft 2020-12")
    errors = [problem for problem in warnings if problem.is_error] or _meta_schema_errors(source, cls)
    if errors:
        return None, errors
    from capidx.compiler.validate.schemarefs import check_references

    try:
        registry, errors, referenced = check_references(source, lambda file: _local_file_errors(file, cls))
        risky = (problem for schema_file in (source, *referenced) for problem in _risky_patterns(schema_file))
        errors += dict.fromkeys(risky)  # a file reached by several references is checked, and said, once
    except RecursionError:
        return None, [source.diagnostic((), "error", "the schema is nested too deeply to check", code="schema-file")]
    # jsonschema applies a referenced file naming no draft it knows with the draft of the schema referring to it
    said = list(dict.fromkeys(problem for file in referenced for problem in _draft(file, cls, _REFERRER_DRAFT)[1]))
    errors += [problem for problem in said if problem.is_error]
    if errors:
        return None, errors
    return LazyValidator(schema, registry, path=source.path), warnings + said


_REFERRER_DRAFT = "checked as the draft of the schema referring to it"


def _draft(source: SourceFile, default: Any, fallback: str) -> tuple[Any, list[Diagnostic]]:
    """The validator class of the draft the schema in `source` names by `$schema` (`default` when it names none, or
    one jsonschema does not know: a warning whose hint is `fallback`); an error when `$schema` is no string, which
    jsonschema and referencing cannot read (they fail with an AttributeError)."""
    import jsonschema

    data = source.data if isinstance(source.data, dict) else {}  # a file's `true`: no draft named
    declared = data.get("$schema", "")
    if not isinstance(declared, str):
        message = f"not a valid schema: $schema must be a draft's URI, a string; received {json_type(declared)}"
        hint = 'write it in quotes, such as "https://json-schema.org/draft/2020-12/schema", or leave $schema out'
        return default, [source.diagnostic(("$schema",), "error", message, hint, "schema-file")]
    cls = jsonschema.validators.validator_for(data, default=None)
    if cls is not None or "$schema" not in data:
        return cls or default, []
    return default, [
        source.diagnostic(("$schema",), "warning", f"unknown $schema {declared!r}", fallback, "schema-file")
    ]


def _meta_schema_errors(source: SourceFile, cls: Any) -> list[Diagnostic]:
    """The errors of the schema in `source` against the meta-schema of its draft (`cls`)."""
    # Formats on, as jsonschema's own check_schema does: the meta-schema's `regex` format is what finds
    # a `pattern` that does not compile, here with its position instead of failing later on every document.
    meta = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    return [
        source.diagnostic(
            tuple(error.absolute_path),
            "error",
            f"not a valid schema: {_short_message(error.message)}",
            code="schema-file",
        )
        for error in meta.iter_errors(source.data)
    ]


def _local_file_errors(source: SourceFile, default: Any) -> list[Diagnostic]:
    """What is wrong with a local schema file a schema refers to (`default`: the draft of that schema), said when
    referencing cannot read the file: only then, as a file is used in parts and jsonschema never checks it whole."""
    cls, said = _draft(source, default, "")
    return [problem for problem in said if problem.is_error] or _meta_schema_errors(source, cls)


def _risky_patterns(source: SourceFile) -> list[Diagnostic]:
    """An error for each `pattern` / `patternProperties` regex of a user schema that could backtrack
    catastrophically (regexrisk), said at its place before any document is read: jsonschema runs them on every
    string of every document, and each match then stops after `MAX_MATCH_SECONDS` (schemacost) with an error at the
    value, far from the pattern. The same structural check refuses such `useWhen` patterns in catalog data. So is
    a regex the `regex` package would write out past `MAX_WRITTEN_OUT` parts to compile (`a{10000000}`), which no
    time limit bounds: also the patterns of one `patternProperties` together, which `additionalProperties` matches
    as one."""
    found: list[Diagnostic] = []
    for parts, regexes in _regexes(source.data):
        sizes = [_written_out(pattern) for _, pattern in regexes]
        for (where, pattern), size in zip(regexes, sizes, strict=True):
            problem = backtracking_risk(pattern) or (_long("its repeats", size) if size > MAX_WRITTEN_OUT else None)
            if problem is not None:
                message = f"regex {_short(pattern)}: {problem[0]}"
                found.append(source.diagnostic((*parts, *where), "error", message, problem[1], "schema-file"))
        if len(regexes) > 1 and max(sizes) <= MAX_WRITTEN_OUT < sum(sizes):
            message, hint = _long("its regexes, which additionalProperties matches as one,", sum(sizes))
            found.append(source.diagnostic((*parts, "patternProperties"), "error", message, hint, "schema-file"))
    return found


def _regexes(data: Any) -> Iterator[tuple[tuple[Any, ...], list[tuple[tuple[str, ...], str]]]]:
    """(place of an object of a schema file, its regexes as ((keyword, ...), pattern)) for each object holding any."""
    pending: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while pending:
        node, parts = pending.pop()
        if isinstance(node, list):
            pending += [(item, (*parts, index)) for index, item in enumerate(node)]
            continue
        if not isinstance(node, dict):
            continue
        # Every object may be used as a schema (`{"$ref": "#/$defs"}` makes a map of names one): its regexes run
        if isinstance(node.get("pattern"), str):
            yield parts, [(("pattern",), node["pattern"])]
        if isinstance(node.get("patternProperties"), dict):
            yield parts, [(("patternProperties", key), key) for key in node["patternProperties"]]
        # value keywords too: `$ref` may point into `examples` or `default`, and jsonschema runs what it finds there
        pending += [(value, (*parts, key)) for key, value in node.items()]


def _written_out(pattern: str) -> int:
    """regexrisk.written_out; 0 for a pattern `re` refuses, which the meta-schema's `regex` format says."""
    try:
        return written_out(pattern)
    except re.error:
        return 0


def _long(what: str, size: int) -> tuple[str, str]:
    """The error of regexes `regex` would write out in `size` parts to compile, and its hint."""
    return (
        f"{what} come to {size:,} parts written out, more than the {MAX_WRITTEN_OUT:,} a schema's regex may have",
        "to compile a regex, each repeated part is written out as many times as its least count: lower the count,"
        " or bound a length with minLength and maxLength",
    )


# Schema errors said of one file. A document of 3 MB (within the 10 MB a file may have) holding 100,000 capabilities
# that each miss their keys made 600,000 errors: 69 s, 2 GB of memory and 120 MB of output, for one file of a pull
# request. The first ones say what is wrong as well; the rest are counted, not described, nor even made.
MAX_SCHEMA_ERRORS = 1_000


def schema_diagnostics(validator: LazyValidator, source: SourceFile, code: str = "schema") -> list[Diagnostic]:
    """The schema errors of the file, deduplicated, as positioned diagnostics: at most `MAX_SCHEMA_ERRORS`, and then
    one more saying that there are more."""
    if validator.certainly_valid(source.data):
        return []
    found: dict[Diagnostic, None] = {}
    try:
        errors = list(islice(validator.iter_errors(source.data), MAX_SCHEMA_ERRORS + 1))
        more = len(errors) > MAX_SCHEMA_ERRORS
        for error in without_shadowed(errors[:MAX_SCHEMA_ERRORS]):
            for diagnostic in _describe(error, source, code, validator.search):
                found.setdefault(diagnostic)
            if len(found) >= MAX_SCHEMA_ERRORS:
                more = more or len(found) > MAX_SCHEMA_ERRORS or error is not errors[-1]
                break
        if more:
            found = dict.fromkeys(islice(found, MAX_SCHEMA_ERRORS))
            message = f"more schema errors than the first {MAX_SCHEMA_ERRORS:,}, which are said"
            found.setdefault(file_problem(source.path, message, "fix those and validate again", code))
    except RecursionError:
        found.setdefault(_recursed(validator, source))
    except TooCostly as exc:  # the schema's fault far more often than the document's: said once (run.py)
        found.setdefault(stopped(validator, source, exc))
    except Exception as exc:  # a user schema can fail inside jsonschema in many ways (bad $ref, bad regex)
        message = f"the schema cannot be applied: {type(exc).__name__}: {_short_message(str(exc))}"
        hint = "fix the schema given by --schema or paths.schema (e.g. a bad $ref or pattern)"
        found.setdefault(file_problem(source.path, message, hint, "schema-file"))
    return list(found)


def stopped(validator: LazyValidator, source: SourceFile, cause: TooCostly) -> Diagnostic:
    """What to say when checking `source` was stopped (schemacost): one match of a pattern, at its value; or the
    whole document, an error of the schema file."""
    if isinstance(cause, SlowPattern):
        return _slow_pattern(validator, source, cause)
    if cause.pattern is not None:  # the time ran out while a pattern was matched
        message = f"checking a document takes too much work ({cause}), the last of it in the pattern"
        message += f" {_short(cause.pattern)}"
        hint = f"simplify the pattern: {_BACKTRACKING}"
    else:
        message = f"checking a document takes too much work ({cause}): the schema's alternatives multiply it"
        hint = (
            "anyOf, oneOf or allOf nested in each other try every branch at every level: make the branches exclusive"
            " (a `type` or `required` each) or the nesting shallower"
        )
    return file_problem(validator.path or source.path, message, hint, "schema-file")


_BACKTRACKING = (
    "parts that can match the same characters in turn, such as \\d*\\d* or .*a.*a, try every way to share them"
)


def _slow_pattern(validator: LazyValidator, source: SourceFile, slow: SlowPattern) -> Diagnostic:
    """A match that took too long, at the value (or key) it was matched against: a problem of the schema (exit 2),
    which the value shows. A match made outside jsonschema (near misses, hints) has no place: the text is looked for."""
    parts, key = (tuple(slow.path), False) if slow.path else _place_of(source.data, slow.text)
    message = f"the schema's pattern {_short(slow.pattern)} took over {slow.seconds:g} s on {_short(slow.text)}"
    schema = f" in {shown(validator.path)}" if validator.path is not None else ""
    hint = f"simplify the pattern{schema}: {_BACKTRACKING}"
    return source.diagnostic(parts, "error", message, hint, "schema-file", key=key)


def _place_of(data: Any, text: str) -> tuple[tuple[Any, ...], bool]:
    """The place of the first string or key equal to `text` in `data`, breadth first, and whether it is a key;
    ((), False) when there is none."""
    pending: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    for value, parts in pending:
        if value == text:
            return parts, False
        if isinstance(value, dict):
            for name, item in value.items():
                if name == text:
                    return (*parts, name), True
                pending.append((item, (*parts, name)))
        elif isinstance(value, list):
            pending += [(item, (*parts, index)) for index, item in enumerate(value)]
    return (), False


_SHALLOW = 8  # levels of a document kept to tell a schema that loops from a document nested too deeply


def _recursed(validator: LazyValidator, source: SourceFile) -> Diagnostic:
    """What to say of a document whose check ended in a RecursionError. When the same document cut to its first
    levels recurses too, the data's depth is not the cause: the schema applies itself to the same value without end
    (`a` refers to `b`, which refers back to `a`), an error of the schema file, the same for every document."""
    try:
        loops = validator.path is not None and validator.recurses(_cut(source.data, _SHALLOW))
    except TooCostly as exc:  # the document cut short takes too long too: the schema is to blame, for that
        return stopped(validator, source, exc)
    if loops:
        message = "checking a document does not end: the schema's references loop without going into the data"
        hint = (
            "a schema may refer back to itself only below a keyword that goes into the value, such as properties "
            "or items"
        )
        return file_problem(validator.path, message, hint, "schema-file")
    return file_problem(source.path, "nested too deeply to check", code="parse")


def _cut(value: Any, levels: int) -> Any:
    """`value` with what is nested more than `levels` deep emptied (`{}`, `[]`)."""
    if isinstance(value, dict):
        return {key: _cut(item, levels - 1) for key, item in value.items()} if levels else {}
    if isinstance(value, list):
        return [_cut(item, levels - 1) for item in value] if levels else []
    return value


def _describe(error: Any, source: SourceFile, code: str, search: Search | None) -> list[Diagnostic]:
    """One jsonschema error as positioned diagnostics, in the words `capidx.schema.wording` gives every command."""
    return [
        source.diagnostic(problem.parts, "error", problem.message, problem.hint, code, key=problem.key)
        for problem in describe(error, source.written, search)
    ]
