"""The exit code of a command that has printed its outcome, for a Ctrl-C that lands after it.

Between the outcome and the process's end (the command returning, click unwinding) a Ctrl-C would turn a finished
build's code into 130, the code of an interrupted one, with no word said; the entry point (entry/cli.py) exits with
the code recorded here instead. Once the interpreter shuts down, SIGINT is ignored there too.
"""

from __future__ import annotations

_codes: list[int] = []  # the code of the command running in this process, once it has said its outcome
_interruption: list[bool] = []  # [True] once the running command has said what a Ctrl-C left of its work


def said(code: int) -> None:
    """The running command has printed its outcome, and exits with `code`."""
    _codes[:] = [code]


def code() -> int | None:
    """The code of the running command's printed outcome; None before it has one."""
    return _codes[0] if _codes else None


def interruption_said() -> None:
    """The running command has said what a Ctrl-C left (`interrupted: build not written; …`): nothing more is said."""
    _interruption[:] = [True]


def interruption_unsaid() -> bool:
    """Whether a Ctrl-C of the running command is still to be said (`interrupted`, by the entry point)."""
    return not _interruption


def begin() -> None:
    """A command starts: nothing of it is said yet (tests run many commands in one process)."""
    _codes.clear()
    _interruption.clear()
