"""The compiler's errors: one tree, each error carrying the exit code the user gets.

    CapidxError (click.ClickException)    every failure a capidx command reports; `exit_code` on the class
    ├── UsageError          exit 2        the command cannot run as asked: a bad option or setting, an input
    │                                     that cannot be read, an output that may not or cannot be written
    └── InvalidError        exit 1        the inputs were read but are wrong: catalog data, a template, an
                                          encoding file; or the build could not be completed from them

Each module that raises keeps its own subclass where a caller (or a test) needs to tell failures apart,
e.g. `render.TemplateFailure(InvalidError)`, `outdir.OutputError(UsageError)`. A few errors know their
code only when raised (a tiktoken encoding that is unknown (2) or whose file is corrupt (1); validation
that failed on unreadable (2) or invalid (1) files): they derive from `CapidxError` and pass `exit_code`.

Nothing translates one error type into another: an error travels up to click, which prints
`Error: <message>` on stderr and exits with `exit_code` (`capidx build` prints `error: <message>` and
that the previous build is unchanged, from one handler in `build.execute`). `format_message` is what
the user reads; a subclass may prefix it (`template error: ...`) without changing `str(error)`.

What is printed is escaped as validate's reports are (`capidx.schema.printable.visible_lines`): a message quotes
file names, templates' and libraries' errors and values from a fork's pull request, whose line break would start a
forged line (a GitHub workflow command `::error …`) and whose escape sequence would reach the terminal. A message
of several lines is given as its lines (a sequence of str); a line break inside a str is the data's, and escaped.

Exceptions that never reach a user (control flow inside a module, turned into a diagnostic or a verdict
where they are caught: `verify.fetch.FetchFailure`, `sourcemap.YamlShapeError`, ...) stay plain
`Exception`s; tests/test_errors.py lists them and says why.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from capidx.compiler.diagnostics import ExitCode, visible_lines


class CapidxError(click.ClickException):
    """A failure reported to the user as `Error: <message>`, exiting with `exit_code` (1 or 2)."""

    exit_code: int = ExitCode.INVALID

    def __init__(self, message: str | Sequence[str], exit_code: ExitCode | None = None) -> None:
        super().__init__(visible_lines(message))
        if exit_code is not None:
            self.exit_code = ExitCode(exit_code)


class UsageError(CapidxError):
    """Exit 2: a bad option or setting, unreadable input, an output that may not or cannot be written.

    Unlike `click.UsageError` (also exit 2) it prints no usage line: the message says what to change."""

    exit_code = ExitCode.USAGE


class InvalidError(CapidxError):
    """Exit 1: invalid data, a broken template or encoding file, a build that could not be completed."""

    exit_code = ExitCode.INVALID
