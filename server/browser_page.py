"""What the MCP endpoint answers itself (`capidx serve --transport http`): a page for a browser's GET, 405 for every
other method but POST.

The server is stateless, so the event stream the SDK opens for a GET on the 2025-11-25 revision never carries
anything: a browser's tab spun forever, and each such GET (a health check, `curl`) held a connection until the client
gave up, so that a few of them kept every other client out under `max_connections`. A browser's GET (Accept:
text/html, no text/event-stream, no MCP headers) gets one small HTML page that says what the endpoint is and, when the
build has a site, links to `/site/`; any other GET is answered 405, as the SDK answers it on 2026-07-28 and as the
specification lets a server that offers no such stream answer. So is HEAD, PUT, OPTIONS or PATCH, which the SDK
answered 405 saying `Allow: GET, POST, DELETE`: every 405 here says `Allow: POST`, in the SDK's JSON-RPC form. So
is DELETE, in the SDK's words (a stateless server ends no session): the SDK's 405 for it had no `Allow` at all, which
a 405 must have. POST passes through.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from capidx.server.http import send_response

MCP_PATHS = ("/mcp", "/mcp/")
_MCP_HEADERS = (b"mcp-session-id", b"mcp-protocol-version", b"last-event-id")
_HEAD = (
    '<!doctype html>\n<html lang="en">\n<meta charset="utf-8">\n<title>capidx MCP endpoint</title>\n'
    "<h1>capidx: MCP endpoint</h1>\n"
    "<p>This address is for MCP clients (streamable HTTP), not for a browser: add it to an MCP client as a "
    "server of type <code>http</code> with this URL.</p>\n"
)
NO_STREAM = "Method Not Allowed: this MCP endpoint is stateless and opens no event stream; POST JSON-RPC requests here"
_PASSED_ON = ("POST",)
# What the SDK says of a DELETE, which ends a session: a stateless server has none.
NO_SESSION = "Method Not Allowed: Session termination not supported"
_SITE = '<p>The capability index for people: <a href="/site/">/site/</a>.</p>\n'
_HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", b"default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    (b"cache-control", b"no-cache"),
]


def page(has_site: bool) -> bytes:
    return (_HEAD + (_SITE if has_site else "")).encode("utf-8")


def is_browser_request(scope: Any) -> bool:
    """A plain GET of the endpoint by a browser: wants HTML, not an event stream, and sends no MCP header."""
    if not is_endpoint_get(scope):
        return False
    headers = scope["headers"]
    if any(name in _MCP_HEADERS for name, _value in headers):
        return False
    accept = b",".join(value for name, value in headers if name == b"accept").lower()
    return b"text/html" in accept and b"text/event-stream" not in accept


def is_endpoint_get(scope: Any) -> bool:
    return scope["type"] == "http" and scope["method"] == "GET" and scope.get("path") in MCP_PATHS


def refused(method: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The 405 of a method the endpoint does not serve: JSON-RPC's invalid request, as the SDK words its own, with
    `Allow: POST`; no body for HEAD."""
    message = NO_SESSION if method == "DELETE" else NO_STREAM
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    body = json.dumps(error, separators=(",", ":")).encode()
    body = b"" if method == "HEAD" else body
    headers = [
        (b"content-type", b"application/json"),
        (b"allow", b"POST"),
        (b"content-length", str(len(body)).encode()),
    ]
    return headers, body


class BrowserPage:
    """ASGI middleware: a browser's GET of the MCP endpoint gets `page`, every other method but POST 405; the rest
    goes to `app`."""

    def __init__(self, app: Any, has_site: Callable[[], bool]) -> None:
        self.app = app
        self.has_site = has_site

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        endpoint = scope["type"] == "http" and scope.get("path") in MCP_PATHS
        if not endpoint or scope["method"] in _PASSED_ON:
            await self.app(scope, receive, send)
            return
        if not is_browser_request(scope):
            await send_response(send, 405, *refused(scope["method"]))
            return
        body = page(self.has_site())
        headers = [*_HEADERS, (b"content-length", str(len(body)).encode())]
        await send_response(send, 200, headers, body)
