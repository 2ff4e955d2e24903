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
MAX_SURROGATES = 1024
_LOOKBACK = 64  # backslashes before an escape read to tell whether its own is escaped

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
    """The message with each lone surrogate escape written `\\ufffd` (U+FFFD), or None when it has none, more than
    `MAX_SURROGATES` (no client splits that many emoji), or is not UTF-8 text without a byte-order mark (which both
    transports refuse). The escapes are replaced where they stand, six characters for six: nothing else of the
    message is read again or changes, its size included. The work is a search in C and a bounded loop."""
    found = _SURROGATE_ESCAPE.findall(message, 0) if _SURROGATE_ESCAPE.search(message) else []
    if not found or len(found) > MAX_SURROGATES or message.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        message.decode("utf-8")  # the bytes of a surrogate, which are not UTF-8, stay refused
    except UnicodeDecodeError:
        return None
    escapes = []  # (start, code) of each surrogate escape: one whose backslash is not itself escaped
    for escape in _SURROGATE_ESCAPE.finditer(message):
        start = escape.start()
        before = message[max(0, start - _LOOKBACK) : start]
        run = len(before) - len(before.rstrip(b"\\"))  # the backslashes right before this one
        if run == _LOOKBACK:  # a longer run of backslashes than any message needs: not read
            return None
        if run % 2 == 0:
            escapes.append((start, int(escape.group(1), 16)))
    lone = []
    for i, (start, code) in enumerate(escapes):
        if 0xD800 <= code <= 0xDBFF:
            after = escapes[i + 1] if i + 1 < len(escapes) else None
            if after is None or after[0] != start + 6 or not 0xDC00 <= after[1] <= 0xDFFF:
                lone.append(start)
        elif not (i > 0 and escapes[i - 1][0] == start - 6 and 0xD800 <= escapes[i - 1][1] <= 0xDBFF):
            lone.append(start)  # a low surrogate after no high one
    if not lone:
        return None
    replaced = bytearray(message)
    for start in lone:
        replaced[start : start + 6] = b"\\ufffd"
    return bytes(replaced)
