"""Jinja filters that keep catalog text inside the Markdown structure a template puts it in.

Catalog data may come from a fork's pull request, and the rendered Markdown is read by agents as is.
A value must never start a heading, list item, quote, fence or rule of its own, open an HTML comment
or tag, or leave its table cell; each filter escapes exactly that and returns any other text unchanged
(so a catalog with nothing to escape renders byte for byte as before):

- `inline`: text within one Markdown line (after a label, in a heading): line breaks become spaces, and
  `<` that would open an HTML tag or comment becomes `\\<`;
- `line`: `inline` for text that *begins* a Markdown line (or a list item): a block marker at its start is
  escaped too (`# x` -> `\\# x`);
- `cell`: `inline`, and `|` escaped, for a table cell;
- `block`: a paragraph of its own (a description): every line that would start a block (`#`, `>`, `-`,
  `+`, `*`, `1.`, `===`, `---`, fences) gets a backslash before its marker, and `<` that would open an
  HTML tag or comment becomes `\\<`;
- `code`: a code span with its own delimiters, long enough for the backticks inside (`` `a`b` ``); no
  other escaping is needed or possible there.

Registered once by `capidx.compiler.render.environment.make_environment` (`FILTERS`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_LINE_BREAKS = ("\n", "\r", "\u2028", "\u2029")
# What may begin a line and make it a block of its own (CommonMark): ATX heading, block quote, bullet,
# ordered-list number, setext underline or thematic break, code fence. Group 1: indentation; group 2:
# what gets the backslash in front.
_BLOCK_START = re.compile(
    r"^([ \t]*)(#{1,6}(?=[ \t]|$)|>|[-+*](?=[ \t]|$)|=+[ \t]*$|-{3,}|_{3,}|\*{3,}|`{3,}|~{3,})"
    r"|^([ \t]*\d{1,9})([.)])(?=[ \t]|$)",
    re.MULTILINE,
)
_LEADING = frozenset("#>-+*=_`~ \t0123456789")  # a line starting otherwise cannot start a block
_HTML_START = re.compile(r"<(?=[A-Za-z/!?])")  # a tag, a closing tag, a comment or declaration, a PI


def block(value: Any) -> str:
    """`value` as Markdown text of its own paragraph: block markers at line starts and HTML escaped."""
    text = value if isinstance(value, str) else str(value)
    if "<" in text:
        text = _HTML_START.sub(r"\\<", text)
    if (text and text[0] in _LEADING) or "\n" in text:
        text = _BLOCK_START.sub(_backslash, text)
    return text


def inline(value: Any) -> str:
    """`value` within one Markdown line: line breaks collapse to spaces (the words are kept), HTML escaped."""
    text = value if isinstance(value, str) else str(value)
    if any(mark in text for mark in _LINE_BREAKS):
        text = " ".join(text.splitlines())
    return _HTML_START.sub(r"\\<", text) if "<" in text else text


def line(value: Any) -> str:
    """`value` at the start of a Markdown line: `inline`, and a block marker at its start escaped."""
    text = inline(value)
    return _BLOCK_START.sub(_backslash, text, count=1) if text and text[0] in _LEADING else text


def cell(value: Any) -> str:
    """`value` inside a Markdown table cell: `inline`, and `|` escaped so the cell cannot end early."""
    return inline(value).replace("|", "\\|")


def code(value: Any) -> str:
    """`value` as a code span, delimiters included: one backtick more than the longest run inside, and a
    space of padding where the text starts or ends with a backtick (CommonMark strips one)."""
    text = " ".join((value if isinstance(value, str) else str(value)).splitlines())
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in re.findall(r"`+", text)) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _backslash(match: re.Match[str]) -> str:
    if match.group(2) is not None:
        return f"{match.group(1)}\\{match.group(2)}"
    return f"{match.group(3)}\\{match.group(4)}"


FILTERS: dict[str, Callable[[Any], str]] = {"inline": inline, "line": line, "cell": cell, "block": block, "code": code}
