"""What the server echoes back of a client's input: at most `ECHO_CHARS` characters of it.

Unbounded, a 10 MB URI would come back whole, twice (in the error message and in `data.uri`), so one
request could make the server build and send twice what it received. `clip` keeps the start of such a value
and says how long it was, which is all a client needs to recognise its own request. The bound is
long enough for any URI the server could serve (a prefix, a kind and a name of at most 200
characters), so an ordinary mistake comes back whole.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

ECHO_CHARS = 512
# Characters a reader of a message would not see, or that reorder what follows (U+202E, zero-width ones): echoed as
# escapes, so that a message shows what was sent. Format and control characters, and the invisible others:
# variation selectors, the combining grapheme joiner, Hangul fillers.
_UNSEEN = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))
_INVISIBLE = frozenset([0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])


def clip(text: str, limit: int = ECHO_CHARS, *, escape: bool = True) -> str:
    """`text` if it is short, else as much of it as fits in `limit` characters and its length:
    `abc… (10000000 characters)`. `escape` (for messages): a backslash and each unseen character as an escape
    (`\\u202e`, `\\U000e0041`), within the same limit; data fields keep the characters (JSON carries them)."""
    shown: list[str] = []
    used = 0
    for character in text:
        piece = _escaped(character) if escape else character
        if used + len(piece) > limit:
            return f"{''.join(shown)}… ({len(text)} characters)"
        shown.append(piece)
        used += len(piece)
    return "".join(shown)


def _escaped(character: str) -> str:
    code = ord(character)
    if character == "\\":
        return "\\\\"
    if code in _INVISIBLE or unicodedata.category(character) in _UNSEEN:
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return character


def larger_than(value: Any, limit: int) -> bool:
    """Whether the parsed JSON `value` takes more than about `limit` bytes of memory, as CPython holds it (a string 50
    and its characters, any other scalar 32, a list 64 and 8 an item, an object 64 and 16 an entry: rough, and never
    far below). A message's bytes bound what it costs to read, not what it costs to hold: 4 MiB of `[]` are 1.4
    million lists, about 100 MB, where a string of 4 MiB is 4 MiB. Walked without recursion and given up as soon as it
    is past `limit`, so that a value of any size or depth costs at most about `limit / 32` steps."""
    size, pending = 0, [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            size += 50 + len(item)
        elif isinstance(item, Mapping):
            size += 64 + 16 * len(item)
            if size <= limit:
                pending += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):
            size += 64 + 8 * len(item)
            if size <= limit:
                pending += item
        else:
            size += 32
        if size > limit:
            return True
    return False
