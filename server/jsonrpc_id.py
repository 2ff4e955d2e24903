"""What JSON-RPC 2.0 allows as a request id, and lone surrogates, for both transports (server/stdio.py,
server/http.py).

Why: the SDK's message model reads a request whose id is an object, an array, null, a boolean or a fraction
as a notification, which nobody answers, so the client waits forever; each transport answers such a request
`-32600` naming what the id is instead. A lone surrogate escape ('\\ud83d', half of an emoji a client split) is
valid JSON that the SDK's parser refuses, on stdio without the request's id: each transport writes it `\\ufffd`.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE_ESCAPE = re.compile(rb"\\u([dD][89a-fA-F][0-9a-fA-F]{2})")  # a surrogate escape, if its \ is not escaped
MAX_SURROGATES = 100_000  # surrogate escapes walked, at most (a 4 MiB message holds about 700,000)

_ID_TYPES = {dict: "an object", list: "an array", bool: "a boolean", float: "a number with a fraction or an exponent"}


def loaded(message: bytes) -> Any:
    """The message's JSON value, or None when the standard library cannot read it either."""
    try:
        return json.loads(message)
    except (ValueError, RecursionError):
        return None


def usable_id(request_id: Any) -> str | int | None:
    """`request_id` when JSON-RPC allows it (a string or an integer), else None."""
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def id_problem(message: bytes) -> str | None:
    """What is wrong with the id of a message that calls a method, or None: a usable id, or none at all (a
    notification), or not a single method call (a response, a batch, not JSON)."""
    data = loaded(message)
    if not isinstance(data, dict) or "id" not in data or "method" not in data or usable_id(data["id"]) is not None:
        return None
    request_id = data["id"]
    kind = "null" if request_id is None else _ID_TYPES.get(type(request_id), type(request_id).__name__)
    return f"the id is {kind}; an id is a string or an integer (a notification has no id at all)"


def surrogates_replaced(message: bytes) -> bytes | None:
    """The message with each lone surrogate escape written `\\ufffd` (U+FFFD), or None when it has none, is not JSON
    in UTF-8 without a byte-order mark (which both transports refuse), or has more than `MAX_SURROGATES` surrogate
    escapes. Whether one is lone is told by the standard library's reader, in C; only then are the escapes walked,
    and replaced where they stand, six characters for six: nothing else of the message changes, its size included."""
    if not _SURROGATE_ESCAPE.search(message) or message.startswith(b"\xef\xbb\xbf"):
        return None
    try:  # reading, then writing without escapes, fails on a lone surrogate only
        json.dumps(json.loads(message.decode("utf-8")), ensure_ascii=False).encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    except (ValueError, RecursionError):  # not UTF-8, not JSON: refused as it is
        return None
    escapes: list[tuple[int, int]] = []  # (start, code) of each surrogate escape whose backslash is not escaped
    previous = 0
    for count, escape in enumerate(_SURROGATE_ESCAPE.finditer(message)):
        if count == MAX_SURROGATES:
            return None
        start = escape.start()
        gap = message[previous:start]  # since the escape before: the gaps are disjoint, so all of this is linear
        if (len(gap) - len(gap.rstrip(b"\\"))) % 2 == 0:  # an even run of backslashes before it: not escaped
            escapes.append((start, int(escape.group(1), 16)))
        previous = escape.end()
    lone = []
    for i, (start, code) in enumerate(escapes):
        if 0xD800 <= code <= 0xDBFF:
            after = escapes[i + 1] if i + 1 < len(escapes) else None
            if after is None or after[0] != start + 6 or not 0xDC00 <= after[1] <= 0xDFFF:
                lone.append(start)
        elif not (i > 0 and escapes[i - 1][0] == start - 6 and 0xD800 <= escapes[i - 1][1] <= 0xDBFF):
            lone.append(start)  # a low surrogate after no high one
    replaced = bytearray(message)
    for start in lone:
        replaced[start : start + 6] = b"\\ufffd"
    return bytes(replaced) if lone else None
