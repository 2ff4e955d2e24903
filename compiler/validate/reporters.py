"""Reporters turn a `ValidationResult` into text; they never decide anything (exit codes live elsewhere).

- `text`: `path:line:col: $.json.path: message (hint)`, warnings marked `warning:`, repetitive
  warnings grouped per file unless verbose, then a one-line summary. Colour only when asked.
- `json`: one stable object, documented in docs/configuration.md, listing every diagnostic.
- `github`: workflow commands (`::error file=…,line=…,col=…,title=…::message`), which GitHub Actions
  shows as annotations on the pull request's diff. GitHub shows only ten annotations of a level per
  step: one annotation per diagnostic while they fit, then only what does not fit is grouped (one
  annotation per file and rule, with the count and the other lines) and, past that, capped; the log
  then gets the text form, and `step_summary` a table for the job's page: in both, warnings that pile up
  (a source never verified) are grouped per file unless verbose, as the text form groups them.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import click

from capidx.compiler.diagnostics import (
    ANNOTATIONS_PER_LEVEL,
    Diagnostic,
    escape_workflow_data,
    escape_workflow_property,
    plural,
    visible,
    within_annotation_cap,
)
from capidx.compiler.files import shown
from capidx.compiler.markup import defuse
from capidx.compiler.render.markdown import cell
from capidx.compiler.worktree import annotation_path

if TYPE_CHECKING:
    from capidx.compiler.validate.run import ValidationResult

# Warnings that pile up (one per source), grouped into one line per file unless verbose (`grouped`).
GROUPED_WARNINGS = {
    "never-verified": ("sources never verified", "add verifiedDate after checking them"),
    "verified-age": ("sources verified more than staleness.warn_days ago", "re-check them, update verifiedDate"),
    "stale": ("stale sources", "re-check them, update verifiedDate"),
}
GROUP_THRESHOLD = 3  # a file with more than this many warnings of one kind gets one line for them


def grouped(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The warnings that pile up (`GROUPED_WARNINGS`, more than `GROUP_THRESHOLD` of a kind in a file) as one
    line per file and kind, at the first one's place; everything else as it is."""
    counts = Counter((d.path, d.code) for d in diagnostics if not d.is_error and d.code in GROUPED_WARNINGS)
    out: list[Diagnostic] = []
    done: set[tuple[str, str]] = set()
    for diagnostic in diagnostics:
        key = (diagnostic.path, diagnostic.code)
        if diagnostic.is_error or counts.get(key, 0) <= GROUP_THRESHOLD:
            out.append(diagnostic)
        elif key not in done:
            done.add(key)
            label, hint = GROUPED_WARNINGS[diagnostic.code]
            out.append(
                Diagnostic(
                    diagnostic.path,
                    diagnostic.line,
                    diagnostic.col,
                    "",
                    "warning",
                    f"{counts[key]} {label}",
                    f"{hint}; -v lists them",
                    diagnostic.code,
                )
            )
    return out


class Reporter:
    name: ClassVar[str]

    def __init__(self, *, color: bool = False, verbosity: int = 0, cwd: Path | None = None) -> None:
        """`verbosity`: -1 quiet (errors only, no summary), 0 normal, 1 verbose (no grouping)."""
        self.color = color
        self.verbosity = verbosity
        self.cwd = cwd or Path.cwd()

    def render(self, result: ValidationResult) -> str:
        raise NotImplementedError

    def display_path(self, path: str) -> str:
        """Paths below the working directory are shown relative to it, as editors and CI expect (`files.shown`, which
        build and inject, and the paths inside validate's messages, use too)."""
        return shown(path, self.cwd)


class TextReporter(Reporter):
    name = "text"

    def render(self, result: ValidationResult) -> str:
        shown = [_visible(d) for d in result.diagnostics if d.is_error or self.verbosity >= 0]
        lines = [self._line(d) for d in (shown if self.verbosity > 0 else grouped(shown))]
        if self.verbosity >= 0:
            lines.append(self._summary(result))
        return "\n".join(lines)

    def _line(self, diagnostic: Diagnostic) -> str:
        location = f"{self.display_path(diagnostic.path)}"
        if diagnostic.line is not None:
            location += f":{diagnostic.line}" + (f":{diagnostic.col}" if diagnostic.col is not None else "")
        fg = "red" if diagnostic.is_error else "yellow"
        text = click.style(f"{location}:", fg=fg, bold=True) if self.color else f"{location}:"
        if diagnostic.pointer:
            text += f" {diagnostic.pointer}:"
        if not diagnostic.is_error:
            text += " " + (click.style("warning:", fg=fg) if self.color else "warning:")
        text += f" {diagnostic.message}"
        if diagnostic.hint:
            text += " " + (click.style(f"({diagnostic.hint})", dim=True) if self.color else f"({diagnostic.hint})")
        return text

    def _summary(self, result: ValidationResult) -> str:
        errors, warnings = len(result.errors), len(result.warnings)
        files = plural(len(result.checked), "file")
        if errors:
            text = f"{plural(errors, 'error')}, {plural(warnings, 'warning')}" + (
                f" in {files}" if result.checked else ""
            )
            return click.style(text, fg="red", bold=True) if self.color else text
        text = f"{files} valid" + (f" ({plural(warnings, 'warning')})" if warnings else "")
        return click.style(text, fg="green") if self.color else text


class JsonReporter(Reporter):
    """`{"ok", "errors", "warnings", "files", "diagnostics": [...]}`; the keys are a stable interface."""

    name = "json"

    def render(self, result: ValidationResult) -> str:
        document = {
            "ok": result.ok,
            "errors": len(result.errors),
            "warnings": len(result.warnings),
            "files": len(result.checked),
            "diagnostics": [self._entry(d) for d in result.diagnostics],
        }
        return json.dumps(document, indent=2)

    def _entry(self, diagnostic: Diagnostic) -> dict[str, object]:
        return {
            "path": self.display_path(diagnostic.path),
            "line": diagnostic.line,
            "col": diagnostic.col,
            "pointer": diagnostic.pointer,
            "severity": diagnostic.severity,
            "code": diagnostic.code,
            "message": diagnostic.message,
            "hint": diagnostic.hint,
        }


class GithubReporter(Reporter):
    """One annotation per diagnostic, grouped and capped past GitHub's limits (see the module docstring);
    `step_summary` for the full list."""

    name = "github"
    LISTED_LINES = 20  # line numbers named in a grouped annotation's message
    SUMMARY_ROWS = 2000  # diagnostics in the step summary's table (GitHub caps a summary at 1 MiB)

    def render(self, result: ValidationResult) -> str:
        lines: list[str] = []
        complete = True
        for level in ("error", "warning"):
            mine = [_visible(d, keep="\r\n") for d in result.diagnostics if d.is_error == (level == "error")]
            shown, rest = within_annotation_cap(_annotation_groups(mine, ANNOTATIONS_PER_LEVEL))
            lines += [self._command(group) for group in shown]
            complete = complete and not rest and all(len(group) == 1 for group in shown)
            if rest:
                count = sum(len(group) for group in rest)
                files = sorted({self.display_path(group[0].path) for group in rest})
                message = (
                    f"{plural(count, level)} more in {', '.join(files)}: GitHub shows only "
                    f"{ANNOTATIONS_PER_LEVEL} annotations of a level per step; the log and the job summary list them "
                    "all (sources never verified counted per file; -v lists each)"
                )
                lines.append(f"::{level} title=capidx validate::{escape_workflow_data(message)}")
        if not complete:  # the log keeps what the annotations only count, grouped as the text form groups it
            lines.append(TextReporter(verbosity=max(self.verbosity, 0), cwd=self.cwd).render(result))
        return "\n".join(lines)

    def step_summary(self, result: ValidationResult) -> str:
        """Markdown for `$GITHUB_STEP_SUMMARY`: the counts, then every diagnostic in a table."""
        errors, warnings = len(result.errors), len(result.warnings)
        verdict = "❌ invalid" if errors else "✅ valid"
        head = f"### capidx validate: {verdict}\n\n{plural(errors, 'error')}, {plural(warnings, 'warning')}"
        head += f" in {plural(len(result.checked), 'file')}\n"
        if not result.diagnostics:
            return head
        rows = ["| Level | Location | Rule | Problem |", "|:--|:--|:--|:--|"]
        listed = result.diagnostics if self.verbosity > 0 else grouped(list(result.diagnostics))
        for diagnostic in listed[: self.SUMMARY_ROWS]:
            where = self.display_path(diagnostic.path)
            if diagnostic.line is not None:
                where += f":{diagnostic.line}" + (f":{diagnostic.col}" if diagnostic.col is not None else "")
            problem = f"{diagnostic.pointer}: {diagnostic.message}" if diagnostic.pointer else diagnostic.message
            if diagnostic.hint:
                problem += f" ({diagnostic.hint})"
            level = "error" if diagnostic.is_error else "warning"
            # the job's page renders Markdown: a value quoted from a fork's data must not show an image or a link there
            rows.append(f"| {level} | {cell(defuse(where))} | {cell(diagnostic.code)} | {cell(defuse(problem))} |")
        if len(listed) > self.SUMMARY_ROWS:
            rows.append(f"\n…and {len(listed) - self.SUMMARY_ROWS} more: run `capidx validate -v`")
        return head + "\n" + "\n".join(rows) + "\n"

    def _command(self, group: list[Diagnostic]) -> str:
        """One annotation for the diagnostics of one rule in one file, at the first one's position."""
        first = group[0]
        properties = {"file": annotation_path(first.path, self.display_path(first.path).replace(os.sep, "/"))}
        if first.line is not None:
            properties["line"] = str(first.line)
            if first.col is not None:
                properties["col"] = str(first.col)
        properties["title"] = f"capidx {first.code}" + (f" ({len(group)})" if len(group) > 1 else "")
        message = f"{first.pointer}: {first.message}" if first.pointer else first.message
        if first.hint:
            message += f" ({first.hint})"
        if len(group) > 1:
            lines = [str(d.line) for d in group[1:] if d.line is not None]
            named = ", ".join(lines[: self.LISTED_LINES]) + (", …" if len(lines) > self.LISTED_LINES else "")
            where = f" ({'line' if len(lines) == 1 else 'lines'} {named})" if named else ""
            message += f"\nand {len(group) - 1} more of this kind in this file{where}"
        level = "error" if first.is_error else "warning"
        fields = ",".join(f"{key}={escape_workflow_property(value)}" for key, value in properties.items())
        return f"::{level} {fields}::{escape_workflow_data(message)}"


def _annotation_groups(diagnostics: list[Diagnostic], limit: int) -> list[list[Diagnostic]]:
    """The diagnostics of one level as annotations: one each while they fit in `limit`, else the first ones
    each alone and the rest grouped per file and rule, with as many alone as still fit. An annotation
    marks one line of the pull request's diff, so grouping only what does not fit hides the fewest lines.
    When even one annotation per file and rule is too many, they are all grouped (the caller caps them).
    """
    alone = 0  # the first `alone` diagnostics get an annotation each, the rest one per file and rule
    while alone < len(diagnostics) and alone + 1 + len({_rule(d) for d in diagnostics[alone + 1 :]}) <= limit:
        alone += 1
    rest: dict[tuple[str, str], list[Diagnostic]] = {}  # in reading order: a group where its first one stands
    for diagnostic in diagnostics[alone:]:
        rest.setdefault(_rule(diagnostic), []).append(diagnostic)
    return [[diagnostic] for diagnostic in diagnostics[:alone]] + list(rest.values())


def _rule(diagnostic: Diagnostic) -> tuple[str, str]:
    return diagnostic.path, diagnostic.code


def _visible(diagnostic: Diagnostic, keep: str = "") -> Diagnostic:
    """The diagnostic with control and invisible characters of the data it quotes escaped (`visible`): a
    terminal or a CI log shows them as text instead of obeying them. (JSON escapes them by itself.)"""
    path, pointer, message = (visible(text, keep) for text in (diagnostic.path, diagnostic.pointer, diagnostic.message))
    hint = visible(diagnostic.hint, keep) if diagnostic.hint else diagnostic.hint
    if (path, pointer, message, hint) == (diagnostic.path, diagnostic.pointer, diagnostic.message, diagnostic.hint):
        return diagnostic
    return replace(diagnostic, path=path, pointer=pointer, message=message, hint=hint)


REPORTER_BY_NAME: dict[str, type[Reporter]] = {
    reporter.name: reporter for reporter in (TextReporter, JsonReporter, GithubReporter)
}


def problem_text(problem: Diagnostic, cwd: Path | None = None) -> str:
    """A problem said outside a report (a capidx.yaml that does not load, for build and report; what verify cannot
    read), as `Diagnostic.as_text`, its file named as the reporters name it (`files.shown`): capidx holds the
    configured paths as absolute ones, so `build --config bad.yaml` named `/home/…/bad.yaml`, where validate said
    `bad.yaml`."""
    return replace(problem, path=shown(problem.path, cwd)).as_text()


def use_color(stream_is_tty: bool, environ: Iterable[tuple[str, str]] | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set to anything (https://no-color.org)."""
    env = dict(environ if environ is not None else os.environ.items())
    return stream_is_tty and not env.get("NO_COLOR")
