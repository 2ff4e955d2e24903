"""What the server echoes back of a client's input: at most `ECHO_CHARS` characters of it.

Unbounded, a 10 MB URI would come back whole, twice (in the error message and in `data.uri`), so one
request could make the server build and send twice what it received. `clip` keeps the start of such a value
and says how long it was, which is all a client needs to recognise its own request. The bound is
long enough for any URI the server could serve (a prefix, a kind and a name of at most 200
characters), so an ordinary mistake comes back whole.
"""

from __future__ import annotations

import unicodedata

ECHO_CHARS = 512
# Characters a reader of the message would not see, or that reorder what follows (U+202E, zero-width ones):
# echoed as escapes, so that the message shows what was sent.
_UNSEEN = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def clip(text: str, limit: int = ECHO_CHARS) -> str:
    """`text` if it is short, else its first `limit` characters and its length: `abc… (10000000 characters)`;
    invisible and control characters as `\\u202e`."""
    shown = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in _UNSEEN else c for c in text[:limit])
    return shown if len(text) <= limit else f"{shown}… ({len(text)} characters)"
