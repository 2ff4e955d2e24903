"""A short page for a browser that opens the MCP endpoint (`capidx serve --transport http`).

A browser's GET /mcp (Accept: text/html, no text/event-stream, no MCP headers) used to get the SDK's event
stream, which never sends anything: the tab spins forever. Such a request is answered with one small HTML page
that says what the endpoint is and, when the build has a site, links to `/site/`. A request an MCP client makes
(it accepts text/event-stream, or carries an MCP header) passes through untouched.
"""

from __future__ import annotations

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
    if scope["type"] != "http" or scope["method"] != "GET" or scope.get("path") not in MCP_PATHS:
        return False
    headers = scope["headers"]
    if any(name in _MCP_HEADERS for name, _value in headers):
        return False
    accept = b",".join(value for name, value in headers if name == b"accept").lower()
    return b"text/html" in accept and b"text/event-stream" not in accept


class BrowserPage:
    """ASGI middleware: a browser's GET of the MCP endpoint gets `page`; everything else goes to `app`."""

    def __init__(self, app: Any, has_site: Callable[[], bool]) -> None:
        self.app = app
        self.has_site = has_site

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not is_browser_request(scope):
            await self.app(scope, receive, send)
            return
        body = page(self.has_site())
        headers = [*_HEADERS, (b"content-length", str(len(body)).encode())]
        await send_response(send, 200, headers, body)
