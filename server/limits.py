"""What the server echoes back of a client's input: at most `ECHO_CHARS` characters of it.

A 10 MB URI used to come back whole, twice (in the error message and in `data.uri`), so one request
could make the server build and send twice what it received. `clip` keeps the start of such a value
and says how long it was, which is all a client needs to recognise its own request.
"""

from __future__ import annotations

ECHO_CHARS = 200


def clip(text: str, limit: int = ECHO_CHARS) -> str:
    """`text` if it is short, else its first `limit` characters and its length: `abc… (10000000 characters)`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"
