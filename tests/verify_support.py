"""A local HTTP server and catalog writer for the `capidx verify` tests (nothing here touches the internet).

`PageServer` serves a fixed set of routes on 127.0.0.1 (port chosen by the OS) from a thread and
records every request it receives, so a test can assert that a refused URL caused no request at all.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

EXCERPT = "Hooks run shell commands at fixed points of a session, such as before a tool runs or after it's finished."

GOOD_PAGE = """<!doctype html>
<html><head><title>Hooks</title><style>.x { content: "not text" }</style>
<script>var hidden = "Secret Feature appears only in a script";</script></head>
<body>
<h1 id="hooks">Hooks reference</h1>
<p>Hooks run   shell commands at fixed points of a <em>session</em>,
   such as before a tool runs or after it&rsquo;s finished.</p>
<h2 id="configure-hooks">Configure hooks</h2>
<a name="legacy-anchor"></a>
<p>Write them in settings.json. Subagents are mentioned here too.</p>
</body></html>
"""

# Same site, but the passage was rewritten: the page is there, the excerpt is not.
CHANGED_PAGE = """<!doctype html><html><body>
<h1 id="hooks">Hooks reference</h1>
<p>Hooks are scripts that the agent calls; see the new lifecycle guide.</p>
</body></html>
"""

BIG = 64 * 1024  # bytes of an oversized page; the tests run with --max-bytes 16384


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    head_status: int | None = None  # a different status for HEAD
    length: bool = True  # send Content-Length
    drip: float = 0.0  # seconds between two bytes of the whole answer, head and body (a page sent a byte at a time)


def _html(text: str) -> Route:
    return Route(body=text.encode(), headers={"Content-Type": "text/html; charset=utf-8"})


def _redirect(status: int, target: str) -> Route:
    return Route(status=status, headers={"Location": target})


def default_routes() -> dict[str, Route]:
    gzipped = gzip.compress(GOOD_PAGE.encode())
    return {
        "/good": _html(GOOD_PAGE),
        "/changed": _html(CHANGED_PAGE),
        "/moved": _redirect(301, "/good"),
        "/moved-308": _redirect(308, "/good"),
        "/temporary": _redirect(302, "/good"),
        "/chain": _redirect(301, "/moved-308"),
        "/missing": Route(status=404, body=b"not here"),
        "/gone-after-redirect": _redirect(301, "/missing"),
        "/broken": Route(status=500, body=b"oops"),
        "/slow": Route(delay=3.0, body=GOOD_PAGE.encode(), headers={"Content-Type": "text/html"}),
        "/huge": Route(body=b"<p>" + b"x" * BIG + b"</p>", headers={"Content-Type": "text/html"}),
        "/huge-unannounced": Route(
            body=b"<p>" + b"x" * BIG + b"</p>", headers={"Content-Type": "text/html"}, length=False
        ),
        "/loop-a": _redirect(302, "/loop-b"),
        "/loop-b": _redirect(302, "/loop-a"),
        "/no-head": Route(body=GOOD_PAGE.encode(), headers={"Content-Type": "text/html"}, head_status=405),
        "/gzip": Route(body=gzipped, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}),
        "/pdf": Route(body=b"%PDF-1.4 binary", headers={"Content-Type": "application/pdf"}),
        "/plain": Route(body=EXCERPT.encode(), headers={"Content-Type": "text/plain"}),
    }


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops concurrent connections, which then look like timeouts
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout, too large) is expected here


class PageServer:
    def __init__(self, routes: dict[str, Route] | None = None) -> None:
        self.routes = routes or default_routes()
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, headers)
        self.stopping = threading.Event()
        self.dripped: set[str] = set()  # paths whose answer a drip sent whole
        self._lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), self._handler())

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def seen(self, path: str | None = None) -> list[tuple[str, str, dict[str, str]]]:
        with self._lock:
            return [request for request in self.requests if path is None or request[1] == path]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                self._answer(head=True)

            def do_GET(self) -> None:
                self._answer(head=False)

            def _answer(self, *, head: bool) -> None:
                with server._lock:
                    server.requests.append((self.command, self.path, dict(self.headers.items())))
                route = server.routes.get(self.path, Route(status=404, body=b"no such route"))
                if route.delay and server.stopping.wait(route.delay):
                    return
                status = route.head_status if head and route.head_status else route.status
                if route.drip:
                    self._drip(status, route, head)
                    return
                self.send_response(status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.length:
                    self.send_header("Content-Length", str(len(route.body)))
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                if not head:
                    with contextlib.suppress(OSError):  # the client gave up (too large, timeout)
                        self.wfile.write(route.body)
                if not route.length:
                    self.close_connection = True

            def _drip(self, status: int, route: Route, head: bool) -> None:
                """The answer one byte at a time, `route.drip` seconds apart, each within any read timeout."""
                lines = [f"HTTP/1.1 {status} OK", f"Content-Length: {len(route.body)}", "Connection: close"]
                lines += [f"{name}: {value}" for name, value in route.headers.items()]
                data = ("\r\n".join(lines) + "\r\n\r\n").encode() + (b"" if head else route.body)
                self.close_connection = True
                with contextlib.suppress(OSError):  # the client gave up
                    for byte in data:
                        if server.stopping.wait(route.drip):
                            return
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    with server._lock:
                        server.dripped.add(self.path)

        return Handler

    def start(self) -> None:
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, at the end of every test using the server
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def serving(routes: dict[str, Route] | None = None) -> Iterator[PageServer]:
    server = PageServer(routes)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def source(url: str, granularity: str = "excerpt", **more: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"url": url, "description": "What the page says", "sourceGranularity": granularity}
    if granularity == "excerpt":
        entry["excerpt"] = EXCERPT
    entry.update(more)
    return entry


def document(sources: list[dict[str, Any]], name: str = "Hooks", **capability: Any) -> dict[str, Any]:
    return {
        "agent": {"name": "Test Agent", "vendor": "Test", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
        "capabilities": [
            {
                "name": name,
                "category": "customization",
                "description": "Runs commands at fixed points of a session.",
                "available": True,
                "sources": sources,
                **capability,
            }
        ],
    }


def write_catalog(root: Path, documents: dict[str, dict[str, Any]]) -> Path:
    """`root/agents/<agent>/capabilities/current.json` per document (indented like the bundled catalog)."""
    for agent, data in documents.items():
        folder = root / "agents" / agent / "capabilities"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "current.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return root / "agents"
