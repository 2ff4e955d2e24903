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

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # where a lone one may be: a pair reads as one character
_ESCAPE = re.compile(rb"\\\\|\\u([0-9a-fA-F]{4})")  # an escaped backslash, or a \uXXXX escape (group 1)

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
    """The message with each lone surrogate escape written `\\ufffd` (U+FFFD), or None when it has none or is not
    UTF-8 text without a byte-order mark (which both transports refuse). The escapes are replaced where they stand,
    six characters for six: nothing else of the message is read again or changes, its size included."""
    if not _SURROGATE_ESCAPE.search(message) or message.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        message.decode("utf-8")  # the bytes of a surrogate, which are not UTF-8, stay refused
    except UnicodeDecodeError:
        return None
    escapes = list(_ESCAPE.finditer(message))  # an escaped backslash is a token: '\\\\ud83d' holds no escape
    lone: list[tuple[int, int]] = []
    paired = False  # the escape before was a high surrogate with its low one right after it
    for i, escape in enumerate(escapes):
        if escape.group(1) is None or paired:
            paired = False
            continue
        code = int(escape.group(1), 16)
        if 0xD800 <= code <= 0xDBFF:
            after = escapes[i + 1] if i + 1 < len(escapes) else None
            low = after is not None and after.start() == escape.end() and after.group(1) is not None
            paired = low and 0xDC00 <= int(after.group(1), 16) <= 0xDFFF  # type: ignore[union-attr]
            if not paired:
                lone.append(escape.span())
        elif 0xDC00 <= code <= 0xDFFF:
            lone.append(escape.span())
    if not lone:
        return None
    parts, start = [], 0
    for begin, end in lone:
        parts += [message[start:begin], b"\\ufffd"]
        start = end
    return b"".join([*parts, message[start:]])
