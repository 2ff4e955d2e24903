"""`capidx report`, run: load the manifests, compute the report, render it, write it (the I/O edges).

`model` computes, `formats` and `html` render; this module alone knows all of them, so none of them
imports another's caller.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capidx.compiler.diagnostics import ExitCode
from capidx.compiler.errors import UsageError
from capidx.compiler.files import write_whole
from capidx.compiler.report.artifact_reader import ArtifactUnreadable, read_artifacts
from capidx.compiler.report.datadiff import (
    COMPARE_KIND,
    INDEX_KIND,
    MAX_INDEX_BYTES,
    DataDiff,
    DataUnavailable,
    diff_builds,
)
from capidx.compiler.report.formats import render_github, render_json, render_markdown, render_text
from capidx.compiler.report.html import render_page
from capidx.compiler.report.manifest_reader import Manifest, load_manifest, printable
from capidx.compiler.report.model import BudgetPlace, Report, build_report
from capidx.compiler.report.propose import propose_budgets
from capidx.schema.printable import visible
from capidx.schema.realpath import real_path, resolve


def render_html(report: Report, *, color: bool = False) -> str:
    """One self-contained page: inline CSS, no scripts, no external assets."""
    return render_page(report)


RENDERER_BY_NAME: dict[str, Callable[..., str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "github": render_github,
    "html": render_html,
}


@dataclass(frozen=True)
class ReportOptions:
    """Parsed `capidx report` options (check-jsonschema's parse-then-execute)."""

    build: Path
    build_given: bool = False  # --build named it (else capidx.yaml's `paths.out` or `build/`)
    # The capidx.yaml of a folder above, none being in force nor --build given: named if `build` holds no build.
    above: Path | None = None
    # --config as given: each `capidx build` a missing build's message suggests names it, to work where it is printed.
    given_config: str | None = None
    against: Path | None = None
    format: str = "text"
    output: Path | None = None
    fail: bool = True
    color: bool = False
    step_summary: Path | None = None  # $GITHUB_STEP_SUMMARY, for --format github
    # Where the capidx.yaml in force sets each budget, for --format github (`render_github`).
    budget_places: Mapping[tuple[str, str], BudgetPlace] = field(default_factory=dict)
    # The capidx.yaml that set the budgets, as a breach's remedy names it (None: unknown, as with --build DIR).
    config_file: str | None = None
    # --propose-budgets: the headroom in percent (None: the report). Prints a budgets: block, exit 0.
    propose: float | None = None
    # --baseline-budgets: each budget the tighter of the build's and the --against baseline's.
    baseline_budgets: bool = False


class ReportUsageError(UsageError):
    """The report cannot be written (exit 2)."""


def run_report(options: ReportOptions, echo: Any = print) -> int:
    """Load, compute, render, write; return the exit code (0, or 1 on a breach unless --no-fail).

    Raises a `UsageError` for anything that is not about the budgets (exit code 2): `ManifestError`,
    `BaselineError`, `ReportUsageError`.
    """
    build = printable(
        load_manifest(options.build, given=options.build_given, above=options.above, config=options.given_config)
    )
    if options.propose is not None:  # YAML for capidx.yaml, whatever the budgets say of this build
        _deliver(options, propose_budgets(build, options.propose), echo)
        return int(ExitCode.OK)
    baseline = None
    if options.against is not None:
        baseline = printable(
            load_manifest(options.against, "--against BASELINE", given=True, config=options.given_config)
        )
    data = None if baseline is None else _data_diff(build, baseline)
    report = build_report(build, baseline, data, held=options.baseline_budgets)
    if options.format == "github":
        text = render_github(report, places=options.budget_places)
    else:
        named = {"config_file": options.config_file} if options.format in ("text", "markdown") else {}
        text = RENDERER_BY_NAME[options.format](report, color=options.color, **named)
    _deliver(options, text, echo)
    if options.format == "github" and options.step_summary is not None:
        # After the report, as `validate --format github` does: a refused -o appends nothing to the job's summary,
        # and a summary file that cannot be written loses none of the annotations. Append: other steps of the same
        # job write their own summaries to this file.
        summary = options.step_summary  # named as such when it fails: the user never gave that path
        text = render_markdown(report, config_file=options.config_file) + "\n"
        _write(summary, text, "a", f"cannot append to $GITHUB_STEP_SUMMARY ({summary})")
    return int(ExitCode.INVALID if not report.ok and options.fail else ExitCode.OK)


def _deliver(options: ReportOptions, text: str, echo: Any) -> None:
    """To standard output, or written whole to --output."""
    if options.output is None:
        echo(text.rstrip("\n"))
    else:
        _refuse_inside_a_build(options.output)
        _replace(options.output, text)


def _data_diff(build: Manifest, baseline: Manifest) -> DataDiff:
    """The comparison of the two builds' records, read from the compare documents their manifests list."""
    manifests = {"build": build, "baseline": baseline}

    def read(which: str) -> dict[str, bytes]:
        try:
            documents = read_artifacts(manifests[which], COMPARE_KIND)
        except ArtifactUnreadable as error:
            raise DataUnavailable(visible(str(error))) from None
        try:  # the aliases: without the index, the other sections stand (`datadiff._aliases`)
            return documents | read_artifacts(manifests[which], INDEX_KIND, MAX_INDEX_BYTES)
        except ArtifactUnreadable:
            return documents

    return diff_builds(build.data, baseline.data, read)


def _refuse_inside_a_build(path: Path) -> None:
    """A file written into a build directory is one its manifest does not list: the next `capidx build` would
    refuse to replace the folder."""
    from capidx.compiler.emit.outdir import enclosing_build

    try:
        target = resolve(path)  # '..' and a linked file read as they land
    except OSError:  # a link loop: the write says so
        return
    if (build := enclosing_build(target)) is not None:
        raise ReportUsageError(
            f"{path}: is inside the capidx build directory {build}; refusing to write there (the next build would "
            f"refuse to replace a folder holding a file its manifest does not list). Write the report elsewhere."
        )


def _replace(path: Path, text: str) -> None:
    """Write the report whole or not at all: a full disk or any failure part way leaves the previous report as it
    was, where truncating it first would leave it empty or cut. The file keeps its mode, and a link is written
    through (the file it names is replaced, as opening it would have written there); a missing folder stays an
    error rather than being created for a mistyped path, and a file this user may not write (opened for writing
    first, without truncating it) is refused as writing into it was; one that may be written but not replaced (its
    folder takes no new file) is written into, as before. A path that is no regular file (/dev/null, a pipe) is
    written as before: no rename can replace it."""
    try:
        info = os.stat(path)
    except OSError as exc:  # missing, or a link to a missing file: the write says what is wrong
        if exc.errno == errno.ELOOP:  # a link loop names no file: a rename would replace the link itself
            raise _cannot_write(path, exc) from None
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        _write(path, text, "w")
        return
    mode = None if info is None else stat.S_IMODE(info.st_mode)
    real = Path(real_path(path))
    try:
        if info is not None:  # a rename needs only the folder's permission: a file this user may not write stays
            os.close(os.open(real, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)))
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        write_whole(real, text.encode("utf-8"), mode, make_folder=False)
    except PermissionError as exc:
        if info is None:
            raise _cannot_write(path, exc) from None
        # The file may be written but not replaced: its folder takes no new file, or it is another user's in a
        # sticky folder (/tmp). Written into, as before: not whole or nothing, but written.
        _write(path, text, "w")
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def _write(path: Path, text: str, mode: str, failure: str | None = None) -> None:
    """Write (or, mode "a", append) `text`; a failure said as `failure` (default: the report at `path`)."""
    try:
        with path.open(mode, encoding="utf-8", newline="\n") as stream:
            stream.write(text)
    except OSError as exc:
        raise _cannot_write(path, exc, failure) from None


def _cannot_write(path: Path, error: OSError, failure: str | None = None) -> ReportUsageError:
    """The refusal of a write, said as `failure` (default: the report at `path`) with the system's reason; a
    folder that is not there is named (it is not made: a mistyped path would make one)."""
    reason = error.strerror or str(error)
    if error.errno == errno.ENOENT and not os.path.isdir(path.parent):
        reason += f" (no folder {path.parent}: make it first)"
    return ReportUsageError(f"{failure or f'{path}: cannot write the report'}: {reason}")
