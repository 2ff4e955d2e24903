"""Text from a file as every command prints it: validate's reporters, the build, report, inject, verify and the
server's log.

capidx runs in CI on pull requests from forks, and its messages quote what those hold: file names, templates' and
libraries' errors, values of capidx.yaml and of the catalog, a build's manifest. A line break in such text would end
the line and start a forged one (on a GitHub runner, `::error file=…::` is an annotation, `::add-mask::` hides text
from the log), and an escape sequence would clear the terminal, set its title or hide what follows. So no command
prints a control, format or separator character it did not write: each is written as Python's escape (`\\x1b`,
`\\u202e`). Standard library only, and nothing imported: every command loads this at start.
"""

from __future__ import annotations

from collections.abc import Iterable

# A GitHub runner reads its first syntax of workflow commands, `##[command]…`, anywhere in a line: the second '#' of
# it is written as its escape, so no quoted text can hold one.
_RUNNER_COMMAND = "##["
_RUNNER_COMMAND_SHOWN = "#\\x23["


def visible(text: str, keep: str = "") -> str:
    """`text` with every control, format, separator and surrogate character written as an escape (`\\x1b`,
    `\\u202e`), so data quoted in a message cannot move the cursor, ring the bell, end a line or reorder what a
    terminal shows, and with no `##[` a runner would read as a command (`#\\x23[`). Characters in `keep` are left
    for the caller to escape its way."""
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() or ch in keep else escape_character(ch) for ch in text)
    return text.replace(_RUNNER_COMMAND, _RUNNER_COMMAND_SHOWN) if _RUNNER_COMMAND in text else text


def unlike_command(path: str) -> str:
    """`path` as it may begin a printed line (`path:line:col: …`, `path: created`): a relative path a runner would read
    as a workflow command, `::` after any blanks (a folder a pull request names `::error title=…::x` in capidx.yaml, a
    file pre-commit passes), is written from the current folder, `./::error…`, the same file on a line of capidx's."""
    return "./" + path if path.lstrip().startswith("::") else path


def escape_character(ch: str) -> str:
    """`\\x1b`, `\\u202e`, `\\U000e0001`: Python's escape for one character."""
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible_lines(message: str | Iterable[str]) -> str:
    """A message as it is printed: one line, or the lines given, each `visible`. A line break inside a line is the
    data's (a file name, or a library's error quoting one) and is escaped with the rest: only a message given as
    lines has lines, so a message of several lines cannot print the data's line breaks by mistake."""
    return "\n".join(visible(line) for line in ([message] if isinstance(message, str) else message))
