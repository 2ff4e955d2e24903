"""Problems as values.

Every check returns `Diagnostic`s instead of raising, so one run reports every problem (as
check-jsonschema and mkdocs do) and reporters decide how to print them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Literal, TypeVar

# How every command prints text from a file (validate's reporters, the build, report, inject, verify, the server's
# log): shared with the server, as `plural` is, which imports nothing from the compiler.
from capidx.schema.printable import escape_character as escape_character
from capidx.schema.printable import visible as visible
from capidx.schema.printable import visible_lines as visible_lines
from capidx.schema.text import plural as plural  # shared with the server, which imports nothing from the compiler

Severity = Literal["error", "warning"]


class ExitCode(IntEnum):
    """Exit codes shared by every command (documented in docs/cli.md)."""

    OK = 0
    INVALID = 1  # the data, a budget or a build failed
    USAGE = 2  # bad flags, unreadable input, missing build directory


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem found in one file.

    `line` and `col` are 1-based and point at the offending value in the source file; `pointer`
    is the JSON path (`$.capabilities[3].category`). Either may be unknown for problems that
    concern a file as a whole.
    """

    path: str
    line: int | None
    col: int | None
    pointer: str
    severity: Severity
    message: str
    hint: str | None = None
    code: str = "schema"

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def location(self) -> str:
        parts = [self.path]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def as_text(self) -> str:
        """`path:line:col: $.json.path: message (hint)` — the format editors and CI logs parse."""
        pointer = f"{self.pointer}: " if self.pointer else ""
        text = f"{self.location()}: {pointer}{self.message}"
        return visible(f"{text} ({self.hint})" if self.hint else text)

    def promoted(self) -> Diagnostic:
        """The same problem as an error (`--strict`)."""
        if self.is_error:
            return self
        return Diagnostic(self.path, self.line, self.col, self.pointer, "error", self.message, self.hint, self.code)


# Problems that stop capidx from checking at all (a file it cannot read, a broken capidx.yaml or
# --schema file) are usage/I-O errors; everything else that is wrong with the data is "invalid".
USAGE_CODES = frozenset({"io", "config", "schema-file"})


def exit_code_for(diagnostics: Iterable[Diagnostic]) -> ExitCode:
    """2 if anything could not be read or configured, else 1 if there is an error, else 0 (warnings pass)."""
    errors = [diagnostic for diagnostic in diagnostics if diagnostic.is_error]
    if any(diagnostic.code in USAGE_CODES for diagnostic in errors):
        return ExitCode.USAGE
    return ExitCode.INVALID if errors else ExitCode.OK


def escape_workflow_data(text: str) -> str:
    """GitHub's workflow-command escaping of a message (actions/toolkit `escapeData`).

    As in @actions/core: a newline would end the command.
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_workflow_property(text: str) -> str:
    """GitHub's workflow-command escaping of a property value (actions/toolkit `escapeProperty`)."""
    return escape_workflow_data(text).replace(":", "%3A").replace(",", "%2C")


# GitHub shows at most 10 error, 10 warning and 10 notice annotations per step (50 per job) and drops the
# rest without a word (actions/toolkit docs/problem-matchers.md, "Limitations").
ANNOTATIONS_PER_LEVEL = 10


T = TypeVar("T")


def within_annotation_cap(items: Sequence[T]) -> tuple[list[T], list[T]]:
    """The items that get an annotation each, and the rest, for one last annotation to count: together no
    more than `ANNOTATIONS_PER_LEVEL`."""
    if len(items) <= ANNOTATIONS_PER_LEVEL:
        return list(items), []
    return list(items[: ANNOTATIONS_PER_LEVEL - 1]), list(items[ANNOTATIONS_PER_LEVEL - 1 :])


def append_step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """Append `markdown` to the job's step summary (`$GITHUB_STEP_SUMMARY`), where GitHub shows it on the
    run's page without a limit on the number of items; None when not running in GitHub Actions.
    Append, never overwrite: other steps of the same job write their own summaries to this file."""
    target = (os.environ if environ is None else environ).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8", newline="\n") as stream:
        stream.write(markdown.rstrip("\n") + "\n")
    return Path(target)
