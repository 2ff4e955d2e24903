"""What JSON-RPC 2.0 allows as a request id, and lone surrogates, for both transports (server/stdio.py,
server/http.py).

Why: the SDK's message model reads a request whose id is an object, an array, null, a boolean or a fraction
as a notification, which nobody answers, so the client waits forever; each transport answers such a request
`-32600` naming what the id is instead. A lone surrogate escape ('\\ud83d', half of an emoji a client split) is
valid JSON that the SDK's parser refuses, on stdio without the request's id: each transport reads it as U+FFFD.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # where a lone one may be: a pair reads as one character
_SURROGATE = re.compile("[\ud800-\udfff]")

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
    """The message with each lone surrogate in its strings read as U+FFFD, or None when it has none (or the
    standard library cannot read it either)."""
    if not _SURROGATE_ESCAPE.search(message) or message.startswith(b"\xef\xbb\xbf"):  # a BOM: not JSON-RPC's text
        return None
    try:  # strict UTF-8 first: json.loads would also take the bytes of a surrogate, which are not UTF-8
        text = json.dumps(json.loads(message.decode("utf-8")), ensure_ascii=False, separators=(",", ":"))
    except (ValueError, RecursionError):
        return None
    replaced, count = _SURROGATE.subn("\ufffd", text)
    return replaced.encode("utf-8") if count else None
