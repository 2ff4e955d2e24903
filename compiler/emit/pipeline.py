"""`capidx build`: validate → catalog → render → measure → budget → write, I/O only at the edges.

Files are written as they are rendered, in this process, into a temporary sibling directory that
replaces the current build only once everything is rendered and measured (and is removed on failure),
so invalid data, a template error or an encoding that cannot be loaded leave the previous build
untouched. Tool answers are packed, one file per tool (compiler/emit/packs.py). Texts are tokenized in
batches by tiktoken's own batch API, and a count is reused by sha256 from the previous manifest. A
budget breach still writes the build (for inspection) and exits 1. When the inputs' digest equals the
current build's and every file is intact, the build is up to date and nothing is rendered, tokenized
or written.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from importlib import resources
from itertools import chain
from pathlib import Path
from typing import Any, TextIO

from capidx.compiler import __version__, finished
from capidx.compiler.artifacts import Artifact, Measured, PendingRow, count_lines, count_words, encode, short_uri
from capidx.compiler.catalog import Catalog, build_catalog
from capidx.compiler.config import Config
from capidx.compiler.diagnostics import USAGE_CODES, Diagnostic, ExitCode, exit_code_for, visible
from capidx.compiler.emit import digest as digests
from capidx.compiler.emit.budgets import BudgetResult, budget_remedy, check_budgets
from capidx.compiler.emit.madehere import previous_build, remember
from capidx.compiler.emit.manifest import (
    known_token_counts,
    manifest_document,
    previous_json,
    serialized,
)
from capidx.compiler.emit.outdir import (
    CHOOSE_FOR,
    OutputError,
    Replaceable,
    check_kind,
    check_listing,
    check_location,
    check_output_dir,
    recheck,
    removal_problem,
    remove_leftovers,
    restore_interrupted,
)
from capidx.compiler.emit.packs import pack_path
from capidx.compiler.emit.table import kind_table, overview_breach, overview_text
from capidx.compiler.emit.tokens import TokenCounter, check_names, reported_names
from capidx.compiler.emit.write import SetAsideKept, TreeWriter, signals_held
from capidx.compiler.emit.writefail import write_failure
from capidx.compiler.errors import CapidxError, UsageError
from capidx.compiler.validate.load import read_limited
from capidx.schema.builddir import MANIFEST, MATCH_INDEX
from capidx.schema.pathkind import PathKind, path_kind
from capidx.schema.realpath import resolve
from capidx.schema.wording import shown

# Above this many artifacts a TTY gets progress bars (small catalogs build faster than a bar draws).
PROGRESS_THRESHOLD = 5_000


class ValidationFailed(CapidxError):
    """The catalog failed validation (its report is printed already): exit 1, or 2 when files could not
    be read at all, as `capidx validate` exits."""


class WriteFailed(UsageError):
    """The build could not be written (a full disk, a folder that is not writable): exit 2 (an I/O
    failure, as an input that cannot be read), `out` unchanged."""


@dataclass
class BuildResult:
    """What a build did; `execute` prints it. Tests inspect it directly."""

    exit_code: ExitCode
    out: Path
    up_to_date: bool = False
    validated: bool = True  # False: up to date by the inputs' digest alone, so no validation warning was printed
    manifest: dict[str, Any] = field(default_factory=dict)
    budgets: tuple[BudgetResult, ...] = ()
    tokenized: int = 0  # texts actually tokenized (0 on a no-op rebuild)
    encoders_loaded: tuple[str, ...] = ()
    files: int = 0  # files written (0 on a no-op rebuild)


def execute(
    config: Config,
    *,
    strict: bool = False,
    quiet: bool = False,
    verbose: bool = False,
    err: TextIO | None = None,
) -> BuildResult:
    """Run a build and print its outcome: the table to stdout, problems to stderr.

    Validation problems are printed by the text reporter of `capidx validate`: repetitive warnings grouped
    per file (`verbose` lists each), `quiet` shows errors only."""
    err = err or sys.stderr
    verbosity = -1 if quiet else (1 if verbose else 0)
    told = _Told(config.out)
    try:
        try:
            result = run_build(
                config,
                strict=strict,
                err=err,
                progress=_progress_factory(err),
                verbosity=verbosity,
                on_restore=told.restored,
            )
        except CapidxError as failure:  # every failure says what became of the previous build
            print(f"error: {_placed(failure, config)}", file=err)  # a CapidxError's message is printable already
            print(visible(told.failed(failure)), file=err)
            return BuildResult(ExitCode(failure.exit_code), config.out)
        # a Ctrl-C while the table prints: the build is in, and it says so
        _print_outcome(result, quiet, err, config.config_file)
    except KeyboardInterrupt:  # Ctrl-C: say what became of the build; the CLI then exits 130
        print(f"\ninterrupted: {visible(told.interrupted())}", file=err)
        finished.interruption_said()
        raise
    finished.said(result.exit_code)  # said: a Ctrl-C from here on keeps the build's code
    return result


def _placed(failure: CapidxError, config: Config) -> str:
    """The failure's message; a refused build directory that capidx.yaml's `paths.out` names is said to be that
    setting, at its line:col, not `--out` (which the user did not give). Only a refusal, which asks for another
    folder (CHOOSE_FOR): a previous build that cannot be put back is no fault of the setting."""
    message = failure.format_message()
    origin = config.origin("out")
    if not isinstance(failure, OutputError) or origin is None or CHOOSE_FOR not in message:
        return message
    return f"{visible(origin.place())}: {message.replace(CHOOSE_FOR, 'folder for paths.out in capidx.yaml')}"


class _Told:
    """What `execute` says became of `out` when a build fails or is interrupted. `run_build` may first put back
    the previous build a killed build had set aside (`on_restore`): the folder was missing, so "unchanged" would
    not be true, and which build the folder holds (what tells a Ctrl-C after the swap) is the one put back."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.before = _identity(out)
        self.put_back = False

    def restored(self, source: Path) -> None:
        self.put_back = True
        self.before = _identity(self.out)

    def failed(self, failure: CapidxError) -> str:
        if isinstance(failure, SetAsideKept):  # the swap was done: what it moved aside is named in the error
            return f"the new build is in {self.out}"
        return self.not_written()

    def not_written(self) -> str:
        if not os.path.lexists(self.out):  # a dangling link is something, and it is left as it was
            return f"build not written; nothing is at {self.out}"
        if self.put_back:
            return f"build not written; the previous build was put back at {self.out}"
        return f"build not written; {self.out} is unchanged"

    def interrupted(self) -> str:
        swapped = _identity(self.out) != self.before
        return f"the new build was already in {self.out}" if swapped else self.not_written()


def _restore_interrupted(out: Path, err: TextIO, on_restore: Callable[[Path], None] | None) -> None:
    """Put back the previous build of `out` when a killed build left it aside (outdir.restore_interrupted), and
    say so even with -q: the folder changed without a new build, and the reason is a build that was killed.
    A Ctrl-C meanwhile waits until `on_restore` is told and the warning printed, so that all that is said is true."""
    with signals_held():
        restored = restore_interrupted(out)
        if restored is None:
            return
        if on_restore is not None:
            on_restore(restored)
        print(
            visible(
                f"warning: {out} was missing: a build was stopped while replacing it; put the previous build back"
                f" from {restored.name}"
            ),
            file=err,
        )


def _identity(out: Path) -> tuple[int, int] | None:
    """Which build is in `out` (its manifest's inode and change time): a swap puts another one there."""
    try:
        found = (out / "manifest.json").stat()
    except OSError:
        return None
    return found.st_ino, found.st_ctime_ns


def run_build(
    config: Config,
    *,
    strict: bool = False,
    err: TextIO | None = None,
    progress: Callable[[str, int], Any] | None = None,
    counter_factory: Callable[..., Any] | None = None,
    verbosity: int = 0,
    on_restore: Callable[[Path], None] | None = None,
) -> BuildResult:
    """The build proper; raises a `CapidxError` for every failure (each leaves the previous build untouched).

    `verbosity` is the validation reporter's: -1 errors only, 0 grouped warnings, 1 every warning.
    `counter_factory(encodings, known)`: the token counter (tests); `tokens.TokenCounter` by default.
    `on_restore(source)`: told when a killed build's previous build was put back from `source` (see below)."""
    encodings = reported_names(config.encodings)
    out = config.out
    check_location(out, protected_folders(config), config.agents)
    if not check_kind(out):
        # Missing: a killed swap may have set the previous build aside. It is put back only once `out` is known
        # to be a place a build may be written to (a refused `--out` stays missing, and that build stays where
        # it is), and before anything else: nothing below may remove it as a leftover, or fail and leave none.
        _restore_interrupted(out, err or sys.stderr, on_restore)
    check_names(encodings)

    env, templates = _templates(config, err or sys.stderr, verbosity)
    # A build this user's capidx did not write (one a pull request committed) is never up to date, nor one with a
    # file changed since (madehere.py): `previous` is whole when it is not None.
    previous = previous_build(out)
    if previous and _may_skip_validation(config, strict):
        # Byte-identical inputs (and compiler) to a build that passed validation: nothing to do.
        on_disk = _inputs_on_disk(config)
        quick = on_disk is not None and _input_digest(config, on_disk, templates, encodings)
        if quick == previous.get("inputDigest"):
            check_listing(out, previous)
            remove_leftovers(out.parent)
            return _up_to_date(out, previous, validated=False)
    # Replacing `out` (or writing it): only a provable capidx build may be replaced (outdir.py).
    replaceable = check_output_dir(out)
    remove_leftovers(out.parent)

    validation = _validate(config, strict, err or sys.stderr, verbosity)
    digest = _input_digest(config, _validated_inputs(config, validation), templates, encodings)
    if previous and previous.get("inputDigest") == digest:
        return _up_to_date(out, previous)
    # A CatalogError propagates as it is (a CapidxError).
    catalog = build_catalog(
        [(doc.agent_id or doc.path.parent.parent.name, doc.data) for doc in validation.documents],
        validation.aliases.data if validation.aliases else None,
        validation.categories,
    )
    del validation  # the parsed documents are not needed any more: the catalog holds what the build needs
    counter = (counter_factory or TokenCounter)(encodings, known_token_counts(previous))
    result = _build(config, catalog, digest, env, previous, counter, progress, replaceable)
    remember(out)
    return result


def _templates(config: Config, err: TextIO, verbosity: int) -> tuple[Any, list[tuple[str, bytes]]]:
    """The Jinja environment and the templates' sources (for the input digest); a template the loader
    refuses (a link out of its folder, not UTF-8) fails the build. Warns about user files that are not used.
    Listing the templates folder here (`files.walk_templates`, which raises at a folder in it that cannot be listed
    and at too many files) is the walk validation would make for the same problems: it is not made again there."""
    from capidx.compiler.render.environment import make_environment, override_warnings, templates_digest

    env = make_environment(config.templates)
    templates = templates_digest(env, config.out)  # TemplateFailure when the loader refuses one
    if verbosity >= 0:
        for warning in override_warnings(env):  # a file name of the user's templates folder is the data's
            print(f"warning: {visible(warning)}", file=err)
    return env, templates


def _build(
    config: Config,
    catalog: Catalog,
    digest: str,
    env: Any,
    previous: dict[str, Any] | None,
    counter: Any,
    progress: Callable[[str, int], Any] | None,
    replaceable: Replaceable,
) -> BuildResult:
    """Build `catalog` into a temporary sibling of `out`, then swap it in."""
    encodings = counter.encodings
    out = config.out
    try:
        writer = TreeWriter(
            out,
            before_swap=lambda: recheck(out, replaceable),
            may_remove=lambda folder: removal_problem(folder, replaceable),
        )
    except OSError as exc:
        raise WriteFailed(write_failure(out, exc, 0, previous, None, f"cannot write a build next to {out}")) from None
    try:
        # A TemplateFailure, EncodingUnavailable or SettingsError propagates as it is (a CapidxError).
        overview: list[dict[str, Any]] = []
        measured = _render_and_measure(
            config, catalog, env, encodings, previous, progress, counter, writer, input_digest=digest, overview=overview
        )
        budgets = check_budgets(config.budgets, measured, encodings[0])
        manifest, rows = manifest_document(
            version=__version__,
            input_digest=digest,
            prefix=config.uri_prefix,
            encodings=encodings,
            catalog=catalog,
            measured=measured,
            budgets=budgets,
            overview=overview,
        )
        # An OutputError (something appeared in `out` while the build ran) propagates: `out` stays as it is. So
        # does a SetAsideKept (`out` replaced after that check, before the swap): the new build is in place.
        writer.add(MANIFEST, serialized(manifest, rows))
        writer.finish()
    except OSError as exc:  # removed first, so that the message can say whether anything stayed
        left = writer.abort()
        raise WriteFailed(write_failure(out, exc, writer.written, previous, left, f"writing {out} failed")) from None
    finally:
        writer.abort()  # a failed build leaves nothing behind (nothing to do after `finish`)
    return BuildResult(
        ExitCode.OK if all(result.ok for result in budgets) and _overview_ok(manifest) else ExitCode.INVALID,
        out,
        manifest=manifest,
        budgets=budgets,
        tokenized=counter.encoded_texts,
        encoders_loaded=counter.loaded,
        files=writer.files,
    )


def _validate(config: Config, strict: bool, err: TextIO, verbosity: int = 0) -> Any:
    from capidx.compiler.validate.reporters import REPORTER_BY_NAME
    from capidx.compiler.validate.run import validate_project

    result = validate_project(config, strict=strict, for_build=True, templates_listed=True)  # by `_templates`
    if result.diagnostics and (text := REPORTER_BY_NAME["text"](verbosity=verbosity).render(result)):
        print(text, file=err)
    if not result.ok:
        # As `capidx validate`: a catalog that cannot be found or read is an I/O error (2), not invalid data (1).
        raise ValidationFailed(_errors_message(result.errors), exit_code_for(result.diagnostics))
    return result


def _errors_message(errors: Sequence[Diagnostic]) -> str:
    """The errors counted by what they are, as the exit code tells them: a capidx.yaml, schema file or input that
    cannot be used (exit 2) is no "validation error" (invalid data, exit 1), which `paths.agents: nope` was called."""
    usage = sum(error.code in USAGE_CODES for error in errors)
    counts = [(usage, "configuration or input error"), (len(errors) - usage, "validation error")]
    return ", ".join(f"{count} {what}{'s' if count != 1 else ''}" for count, what in counts if count)


def _may_skip_validation(config: Config, strict: bool) -> bool:
    """Validation depends on the clock only through staleness: warnings (which --strict makes errors)
    and `staleness.error_days`. Without both, valid data stays valid, so an unchanged catalog need not
    be validated again."""
    return not strict and config.staleness.error_days is None


def protected_folders(config: Config) -> list[tuple[Path, str]]:
    """Folders `--out` may never be nor hold (besides `/`, the home folder and the catalog): see outdir.py."""
    root = "the project root (the folder of capidx.yaml)" if config.config_file else "the project root"
    folders = [(config.root, root)]
    with suppress(OSError):  # the working folder was removed: nothing there to protect
        folders.append((Path.cwd(), "the working folder"))
    if config.templates is not None:
        folders.append((config.templates, "the templates folder"))
    return folders


def _validated_inputs(config: Config, validation: Any) -> list[tuple[str, bytes]]:
    parts = []
    for doc in validation.documents:
        label = digests.relative_label(doc.path, config.agents, f"{doc.agent_id}/capabilities/{doc.path.name}")
        parts.append((f"data/{label}", doc.raw))
    if validation.aliases is not None:
        parts.append(("aliases", validation.aliases.raw))
    return parts


def _inputs_on_disk(config: Config) -> list[tuple[str, bytes]] | None:
    """The same parts as `_validated_inputs`, read directly. Any difference from what validate
    reads only makes the digests differ, which means "rebuild": never a stale "up to date".
    None when a document cannot be read (a broken link, a folder, a pipe, too large, unreadable) or the walk of the
    catalog finds an error (a document in a misspelled folder or behind a linked one, a second alias table): no byte
    of the digest shows what is wrong around the documents read, so only validation can say it."""
    from capidx.compiler.validate import discover

    inputs = discover.collect(config, (), templates_listed=True)  # by `_templates`, before
    if any(problem.is_error for problem in inputs.problems):
        return None
    parts = []
    for path in inputs.documents:
        data, _ = read_limited(path)  # first: a link loop cannot be resolved for its label
        if data is None:
            return None
        parts.append((f"data/{digests.relative_label(path, config.agents, path.name)}", data))
    # Path.is_file raised PermissionError for a table this user may not look at: read_limited answers None for it,
    # as for a document that cannot be read, so that validation says why
    if config.aliases is not None and (os.path.isfile(config.aliases) or path_kind(config.aliases) is PathKind.DENIED):
        data, _ = read_limited(config.aliases)
        if data is None:
            return None
        parts.append(("aliases", data))
    return parts


def _input_digest(
    config: Config, inputs: list[tuple[str, bytes]], templates: list[tuple[str, bytes]], encodings: Sequence[str]
) -> str:
    parts = list(inputs)
    parts.append(("schema", _schema_bytes(config)))
    parts.extend(_referenced_schemas(config))
    parts.extend((f"templates/{name}", source) for name, source in templates)
    settings = {
        "uriPrefix": config.uri_prefix,
        "title": config.title,
        "encodings": list(encodings),
        "budgets": config.budgets,
        "characterBudgets": config.character_budgets,
        "build": config.build_label,  # memory.md names the project's build directory
        # and the command that makes it, when it is not `capidx build` (a project below a work tree's top)
        **({"buildCommand": config.build_command} if config.build_command != "capidx build" else {}),
        "staleDays": config.staleness.old_days,
        "relationships": dataclasses.asdict(config.relationships),
        "injection": dataclasses.asdict(config.injection),
        "site": config.site,
    }
    parts.append(("config", digests.settings_bytes(settings)))
    if config.site:  # the page's template, script and style sheet are not compiler code: inputs in their own right
        from capidx.compiler.render.site_page import site_inputs

        parts.extend(site_inputs())
    parts.append(("capidx", __version__.encode() + b"\0" + digests.compiler_fingerprint()))
    return digests.input_digest(parts)


def _schema_bytes(config: Config) -> bytes:
    if config.schema is not None:  # never a pipe or a device: that would hang; validation reports it
        data, _ = read_limited(config.schema)
        return data if data is not None else b"\0unreadable"
    return resources.files("capidx.schema").joinpath("capability-schema.json").read_bytes()


def _referenced_schemas(config: Config) -> list[tuple[str, bytes]]:
    """The local schema files a user schema refers to (`$ref`): inputs too."""
    if config.schema is None:
        return []
    from capidx.compiler.validate.schemarefs import referenced_files

    parts = []
    for path in referenced_files(config.schema):
        with suppress(OSError):  # unreadable: validation reports it
            parts.append((f"schema/{path.relative_to(resolve(config.schema.parent)).as_posix()}", path.read_bytes()))
    return parts


def _render_and_measure(
    config: Config,
    catalog: Catalog,
    env: Any,
    encodings: Sequence[str],
    previous: dict[str, Any] | None,
    progress: Callable[[str, int], Any] | None,
    counter: Any,
    writer: TreeWriter,
    *,
    input_digest: str = "",
    overview: list[dict[str, Any]],
) -> list[Measured]:
    """Every artifact, written and measured; `overview` collects the manifest rows of the overview's fits."""
    from capidx.compiler.derive.enhance import enhance_for_build
    from capidx.compiler.render.plan import (
        markdown_artifacts,
        overview_artifacts,
        stats_artifact,
        summary_artifact,
        tool_artifacts,
    )

    previous_index = previous_json(config.out, previous, MATCH_INDEX, encodings[0])  # reuses its label overhead
    enhanced, indexed = enhance_for_build(catalog, config, counter, encodings[0], previous_index)
    markdown: Iterable[Any] = markdown_artifacts(catalog, env, config.uri_prefix, enhanced, title=config.title)
    if config.site:
        from capidx.compiler.render.site import with_markdown_copies

        markdown = with_markdown_copies(markdown, config.uri_prefix)
    artifacts = chain(markdown, tool_artifacts(catalog, config.uri_prefix, enhanced, indexed))
    expected = len((previous or {}).get("artifacts", ()))  # for the progress bar: the last build's size
    with _bar(progress, "rendering", expected) as tick:
        measured = _measure(artifacts, counter, encodings[0], writer, tick, env=env)
    full_tokens = next(item.tokens[encodings[0]] for item in measured if item.artifact.kind == "full")
    summary = summary_artifact(catalog, env, config.uri_prefix, full_tokens, title=config.title)
    measured += _measure([summary], counter, encodings[0], writer, env=env)
    fitted = overview_artifacts(
        catalog,
        config.uri_prefix,
        config.character_budgets,
        title=config.title,
        build=config.build_label,
        make=config.build_command,
    )
    measured += _measure([artifact for artifact, _ in fitted], counter, encodings[0], writer)
    overview.extend(fit.manifest_row(artifact.kind, artifact.uri) for artifact, fit in fitted)
    if config.site:
        measured += _site(config, catalog, encodings, input_digest, measured, counter, writer)
    stats = stats_artifact(catalog, config.staleness.old_days, config.uri_prefix)
    measured += _measure([stats], counter, encodings[0], writer)
    return measured


def _site(
    config: Config,
    catalog: Catalog,
    encodings: Sequence[str],
    input_digest: str,
    measured: list[Measured],
    counter: Any,
    writer: TreeWriter,
) -> list[Measured]:
    """site/ (compiler/render/site.py): its documents, then api/index.json, which lists their measured figures."""
    from capidx.compiler.render.site import SiteSettings, api_index_artifact, site_artifacts

    settings = SiteSettings(
        config.uri_prefix, config.title, __version__, input_digest, config.staleness.old_days, tuple(encodings)
    )
    done = _measure(site_artifacts(catalog, settings, measured), counter, encodings[0], writer)
    index = api_index_artifact(catalog, settings, [*measured, *done])
    return done + _measure([index], counter, encodings[0], writer)


def _measure(
    artifacts: Iterable[Artifact],
    counter: Any,
    primary: str,
    writer: TreeWriter,
    tick: Callable[[int], None] | None = None,
    *,
    env: Any = None,
) -> list[Measured]:
    """Write and measure artifacts as they come: a file each, or an answer appended to its tool's pack.

    Only their figures are kept (texts and bytes are dropped); token counts are collected at the end. `env`: the
    templates' environment, when templates rendered the artifacts (a text UTF-8 cannot encode is their error)."""
    done = []
    for artifact in artifacts:
        try:
            data, sha = encode(artifact)
        except UnicodeEncodeError as error:
            if env is None:
                raise
            from capidx.compiler.render.plan import unencodable

            raise unencodable(env, artifact, error) from None
        pack = pack_path(artifact.kind)
        if pack is None:
            writer.add(artifact.path, data)
            offset = None
        else:
            offset = writer.append(pack, data)
        counter.submit(sha, artifact.text)
        item, size = artifact.without_text(), len(data)
        words, lines = count_words(artifact.text), count_lines(artifact.text)
        row = PendingRow(item, size, sha, words, lines, primary, offset)
        done.append((item, size, sha, words, lines, row, offset))
        if tick:
            tick(1)
    counter.wait()
    return [
        Measured(item, size, sha, counter.counts(sha), words, lines, row, offset)
        for item, size, sha, words, lines, row, offset in done
    ]


def _up_to_date(out: Path, previous: dict[str, Any], *, validated: bool = True) -> BuildResult:
    budgets = tuple(
        BudgetResult(row["kind"], row["budget"], row["tokens"], row["uri"]) for row in previous.get("budgets", ())
    )
    ok = all(result.ok for result in budgets) and _overview_ok(previous)
    return BuildResult(
        ExitCode.OK if ok else ExitCode.INVALID,
        out,
        up_to_date=True,
        validated=validated,
        manifest=previous,
        budgets=budgets,
    )


def _overview_ok(manifest: dict[str, Any]) -> bool:
    return all(row.get("ok", True) for row in manifest.get("overview", ()))


def _print_outcome(result: BuildResult, quiet: bool, err: TextIO, config_file: Path | None = None) -> None:
    """The table and the outcome. An up-to-date build's figures are its manifest's, which a pull request may have
    written by hand: every line is printed `visible`, and the table's kinds are (`kind_table`). A token budget
    breached ends with what to do (`budget_remedy`), naming `config_file`, the capidx.yaml that set it."""
    manifest = result.manifest
    primary = manifest["encodings"][0]
    if not quiet:
        sizes = [(row["kind"], row["tokens"][primary]) for row in manifest["artifacts"]]
        print(kind_table(sizes, manifest["budgets"]))
        for row in manifest.get("overview", ()):
            print(visible(overview_text(row)))
        unchanged = (
            "inputs unchanged" if result.validated else "inputs unchanged, not validated again: see `capidx validate`"
        )
        state = f"up to date ({unchanged})" if result.up_to_date else "written"
        print(visible(f"build {state}: {result.out} ({len(manifest['artifacts']):,} artifacts, tokens: {primary})"))
    prefix = manifest["uriPrefix"]
    breaches = [budget.breach_text(prefix) for budget in result.budgets if not budget.ok]
    breaches += [overview_breach(row) for row in manifest.get("overview", ()) if not row["ok"]]
    for breach in breaches:
        print(visible(breach), file=err)
    if breaches and result.up_to_date:  # nothing was written: the build over budget is the one already there
        said = f"the build in {result.out} is up to date, not written again (kept for inspection)"
        print(visible(f"over budget: {said}"), file=err)
    elif breaches:
        print(visible(f"over budget: build written to {result.out} for inspection"), file=err)
    if over := [(budget.kind, short_uri(budget.uri, prefix)) for budget in result.budgets if not budget.ok]:
        print(visible(budget_remedy(over, shown(config_file) if config_file else None)), file=err)


def _progress_factory(err: TextIO) -> Callable[[str, int], Any] | None:
    if not err.isatty():
        return None
    import click

    def make(label: str, length: int) -> Any:
        return click.progressbar(length=length, label=label, file=err) if length >= PROGRESS_THRESHOLD else None

    return make


@contextmanager
def _bar(progress: Callable[[str, int], Any] | None, label: str, length: int) -> Iterator[Callable[[int], None] | None]:
    bar = progress(label, length) if progress else None
    if bar is None:
        yield None
        return
    with bar:
        yield bar.update
