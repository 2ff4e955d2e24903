"""`capidx serve --transport http` serves the build's `site/` under `/site/` (issue 17), read-only.

Like everything the server answers, the files come from the loaded snapshot: only artifacts the manifest lists
under `site/`, looked up by their manifest path (a request path is never joined to a folder, so `..` or a link
cannot reach anything else). Each is read from the build when asked for (not held in memory: the site is
the largest part of a large build), checked against the manifest's size and sha256, and answered verbatim
with the manifest's media type; a file changed since the build was loaded is answered 503, never served, and so
is one the server may not read (the body says which: a reload mends the first, only a permission the second).

Protections: the Host check (`HostGuard`) wraps this app like the MCP endpoint; a request carrying an Origin
that is not allowed is refused `403` as the SDK refuses it on /mcp; only GET and HEAD are allowed. Responses
carry `nosniff` and a content security policy that allows the page's own script and style sheet and nothing
else (no inline script, no other origin), so data in the page could not run code even if it were not escaped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio

from capidx.server.http import host_allowed, send_response, send_text
from capidx.server.snapshot import SITE_DIR, Artifact, BuildDenied, BuildError, Snapshot

logger = logging.getLogger("capidx.server")

PREFIX = "/site/"
INDEX = "index.html"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_COMMON_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode("ascii")),
    (b"cache-control", b"no-cache"),
]


# Site files read (and checked) at once, at most: each read holds the file about three times over (its bytes, its
# text, the body), and AnyIO's 40 worker threads let 16 clients asking for a 50 MB page at once take 1.3 GB (a
# 20,000-capability build's llms-full.txt is tens of MB). Others wait their turn.
CONCURRENT_READS = 4

_CHANGED = "Service Unavailable: the build changed on disk; it is served once reloaded"
# A reload reads the same file with the same permission: that is no way out.
_DENIED = "Service Unavailable: the server may not read this file of the build (permission denied); its log says why"


def site_paths(snapshot: Snapshot) -> dict[str, Artifact]:
    """The snapshot's site files by manifest path."""
    return {artifact.path: artifact for artifact in snapshot.artifacts.values() if artifact.path.startswith(SITE_DIR)}


class SiteFiles:
    """ASGI middleware: GET/HEAD under `/site/` answered from the current snapshot, anything else to `app`."""

    def __init__(self, app: Any, snapshot: Callable[[], Snapshot], origins: Sequence[str]) -> None:
        self.app = app
        self.snapshot = snapshot
        self.origins = tuple(origins)
        self._paths: tuple[Snapshot, Mapping[str, Artifact]] | None = None
        self._reads: anyio.CapacityLimiter | None = None  # made in the event loop, on the first read

    def _lookup(self, path: str) -> Artifact | None:
        snapshot = self.snapshot()
        if self._paths is None or self._paths[0] is not snapshot:  # a reload swapped the build: index it once
            self._paths = (snapshot, site_paths(snapshot))
        return self._paths[1].get(path)

    def has_page(self) -> bool:
        """Whether the current build has a site page to offer at `/site/`."""
        return self._lookup(PREFIX[1:] + INDEX) is not None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == "/" and scope["method"] in ("GET", "HEAD") and self.has_page():  # a browser pointed at the server
            await _respond(send, 307, "Temporary Redirect", [(b"location", PREFIX.encode())])
            return
        if path != PREFIX[:-1] and not path.startswith(PREFIX):
            await self.app(scope, receive, send)
            return
        origins = [value for name, value in scope["headers"] if name == b"origin"]
        if origins and not all(host_allowed(value.decode("latin-1"), self.origins) for value in origins):
            await _respond(send, 403, "Invalid Origin header")
            return
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await _respond(send, 405, "Method Not Allowed", [(b"allow", b"GET, HEAD")])
            return
        if path == PREFIX[:-1]:  # relative URLs in the page need the trailing slash
            await _respond(send, 308, "Permanent Redirect", [(b"location", PREFIX.encode())])
            return
        relative = path[1:] + INDEX if path.endswith("/") else path[1:]
        artifact = self._lookup(relative)
        if artifact is None:
            await _respond(send, 404, "Not Found")
            return
        if self._reads is None:
            self._reads = anyio.CapacityLimiter(CONCURRENT_READS)
        try:  # read and checked in a worker thread: the page may be megabytes
            body = await anyio.to_thread.run_sync(_body, artifact, limiter=self._reads)
        except BuildError as error:  # the log names the file and what it needs; the body, no path of the machine
            logger.warning("not serving %s: %s", artifact.path, error)
            await _respond(send, 503, _DENIED if isinstance(error, BuildDenied) else _CHANGED)
            return
        headers = [
            (b"content-type", f"{artifact.mime_type}; charset=utf-8".encode("latin-1")),
            (b"content-length", str(len(body)).encode()),
            (b"etag", f'"{artifact.sha256}"'.encode()),
            *_COMMON_HEADERS,
        ]
        await send_response(send, 200, headers, b"" if method == "HEAD" else body)


def _body(artifact: Artifact) -> bytes:
    return artifact.text.encode("utf-8")


async def _respond(send: Any, status: int, text: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send_text(send, status, text, [*_COMMON_HEADERS, *extra])
