"""The build's site/ served as it is (issue 17, item 2): by a static host (`python -m http.server` on `build/site`,
as GitHub Pages serves the uploaded folder) and by `capidx serve --transport http` under `/site/`. Every URL
the API index lists resolves, and so does every relative link of the page."""

from __future__ import annotations

import hashlib
import http.client
import json
import posixpath
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from server_support import capidx_command, running

pytestmark = pytest.mark.slow
DOCS = Path(__file__).resolve().parents[1] / "docs"


@contextmanager
def _process(
    command: list[str], log: Path, pattern: str, cwd: Path, env: dict[str, str] | None = None
) -> Iterator[int]:
    """Run `command` with its output in `log` (and `env` added to the environment); yield the port `pattern` finds
    there; stop it after."""
    with running(command, log, pattern, cwd=cwd, env=env, stdout_too=True) as (_, found):
        yield int(found.group(1))


@pytest.fixture(scope="module", name="static_port")
def fixture_static_port(bundled_build: Path) -> Iterator[int]:
    command = [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory"]
    with _process([*command, str(bundled_build / "site")], bundled_build.parent / "static.log", r"port (\d+)",
                  bundled_build.parent) as port:  # fmt: skip
        yield port


@pytest.fixture(scope="module", name="serve_port")
def fixture_serve_port(bundled_build: Path) -> Iterator[int]:
    command = capidx_command("serve", "--build", str(bundled_build), "--transport", "http", "--port", "0")
    with _process(command, bundled_build.parent / "serve.log", r"listening on http://\S+:(\d+)/mcp",
                  bundled_build.parent) as port:  # fmt: skip
        yield port


def _request(port: int, path: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def _index_urls(index: dict) -> list[tuple[str, dict, str]]:
    """(URL relative to the site root, the listed document, its media type) for every document of every endpoint."""
    return [
        (posixpath.normpath(posixpath.join("api", document["url"])), document, endpoint["mediaType"])
        for endpoint in index["endpoints"]
        for document in endpoint["documents"]
    ]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value and not re.match(r"[a-z]+:|#", value):
                self.links.append(value)


def _relative_links(page: bytes) -> list[str]:
    parser = _Links()
    parser.feed(page.decode("utf-8"))
    return sorted(set(parser.links))


def test_every_url_the_api_index_lists_resolves_on_a_static_host(static_port: int, bundled_build: Path) -> None:
    status, _headers, body = _request(static_port, "/api/index.json")
    assert status == 200
    index = json.loads(body)
    urls = _index_urls(index)
    assert len(urls) == len(list((bundled_build / "site").rglob("*.*"))) - 1  # everything but index.json itself
    for url, document, media_type in urls:
        status, _headers, body = _request(static_port, "/" + url)
        assert status == 200, url
        assert len(body) == document["bytes"], url
        if media_type == "application/json":
            json.loads(body)


def test_every_relative_link_of_the_page_resolves_on_a_static_host(static_port: int) -> None:
    status, _headers, page = _request(static_port, "/")
    assert status == 200
    links = _relative_links(page)
    assert {"style.css", "script.js", "api/index.json", "llms.txt", "llms-full.txt"} <= set(links)
    for link in links:
        assert _request(static_port, "/" + link)[0] == 200, link


def test_capidx_serve_answers_the_site_under_site_with_its_media_types(serve_port: int, bundled_build: Path) -> None:
    status, headers, body = _request(serve_port, "/site/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert body == (bundled_build / "site" / "index.html").read_bytes()
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    status, headers, _body = _request(serve_port, "/site")
    assert status == 308 and headers["location"] == "/site/"
    status, headers, _body = _request(serve_port, "/")  # a browser pointed at the server finds the page
    assert status == 307 and headers["location"] == "/site/"
    assert _request(serve_port, "/", "POST")[0] != 307  # only a page request is sent there
    manifest = json.loads((bundled_build / "manifest.json").read_bytes())
    for row in manifest["artifacts"]:
        if not row["path"].startswith("site/"):
            continue
        status, headers, body = _request(serve_port, "/" + row["path"])
        assert status == 200, row["path"]
        assert headers["content-type"] == f"{row['mimeType']}; charset=utf-8", row["path"]
        assert hashlib.sha256(body).hexdigest() == row["sha256"], row["path"]
        head = _request(serve_port, "/" + row["path"], "HEAD")
        assert head[0] == 200 and head[2] == b"" and head[1]["content-length"] == str(row["bytes"])


def test_capidx_serve_refuses_what_the_site_is_not(serve_port: int) -> None:
    assert _request(serve_port, "/site/nothing.html")[0] == 404
    assert _request(serve_port, "/site/manifest.json")[0] == 404
    assert _request(serve_port, "/site/../manifest.json")[0] == 404  # paths are looked up, never joined
    assert _request(serve_port, "/site/%2e%2e/manifest.json")[0] == 404
    assert _request(serve_port, "/site/api/")[0] == 404  # no listings
    status, headers, _body = _request(serve_port, "/site/llms.txt", "POST")
    assert status == 405 and headers["allow"] == "GET, HEAD"
    assert _request(serve_port, "/site/", headers={"Origin": "http://evil.example"})[0] == 403
    assert _request(serve_port, "/site/", headers={"Host": "evil.example"})[0] == 421
    assert _request(serve_port, "/site/", headers={"Origin": f"http://127.0.0.1:{serve_port}"})[0] == 200


def test_a_build_without_a_site_answers_404_under_site(hand_build: Path, tmp_path: Path) -> None:
    """A build made before the site existed (or with --no-site) is still served; /site/ has nothing."""
    command = capidx_command("serve", "--build", str(hand_build), "--transport", "http", "--port", "0")
    with _process(command, tmp_path / "serve.log", r"listening on http://\S+:(\d+)/mcp", tmp_path) as port:
        assert _request(port, "/site/")[0] == 404
        assert _request(port, "/")[0] == 404  # no page to send a browser to
        assert _request(port, "/site/llms.txt")[0] == 404
        assert _request(port, "/mcp")[0] != 404  # the MCP endpoint is there (what it answers a GET is the SDK's)


def test_a_site_file_changed_after_the_start_is_answered_503_never_served(catalog_build: Path, tmp_path: Path) -> None:
    """Site files are read when asked for and checked against the manifest each time (not held in memory)."""
    build = tmp_path / "build"
    shutil.copytree(catalog_build, build, symlinks=True)
    command = capidx_command("serve", "--build", str(build), "--transport", "http", "--port", "0", "--no-reload")
    with _process(command, tmp_path / "serve.log", r"listening on http://\S+:(\d+)/mcp", tmp_path) as port:
        target = build / "site" / "llms.txt"
        original = target.read_bytes()
        assert _request(port, "/site/llms.txt")[2] == original
        target.write_bytes(original.replace(b"#", b"%", 1))  # same size, other bytes
        status, _headers, body = _request(port, "/site/llms.txt")
        assert status == 503 and original not in body and b"%" not in body
        assert _request(port, "/site/")[0] == 200  # the others are still served
        target.write_bytes(original)
        assert _request(port, "/site/llms.txt")[0:3:2] == (200, original)


# Run before the CLI: opening the file CAPIDX_TEST_DENIED names fails as a mode of 000 makes it fail (root
# opens any file).
_DENY_OPENING = """
import errno, os
_denied, _open = os.environ["CAPIDX_TEST_DENIED"], os.open
def _guarded(path, *args, **kwargs):
    if isinstance(path, (str, os.PathLike)) and os.path.abspath(path) == _denied:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
    return _open(path, *args, **kwargs)
os.open = _guarded
"""


def test_a_site_file_the_server_may_not_read_is_answered_so_not_as_changed(catalog_build: Path, tmp_path: Path) -> None:
    """A site file this user may not read was answered 503 "the build changed on disk; it is served once reloaded",
    when the log said permission denied: a reload reads it with the same permission. The body says it cannot be
    read (and names no path of the machine); the log, the permission needed."""
    build = tmp_path / "build"
    shutil.copytree(catalog_build, build, symlinks=True)
    target = build.resolve() / "site" / "llms.txt"
    serve = capidx_command("serve", "--build", str(build), "--transport", "http", "--port", "0", "--no-reload")
    command = [*serve[:2], _DENY_OPENING + serve[2], *serve[3:]]
    log = tmp_path / "serve.log"
    with _process(
        command, log, r"listening on http://\S+:(\d+)/mcp", tmp_path, {"CAPIDX_TEST_DENIED": str(target)}
    ) as port:
        status, _headers, body = _request(port, "/site/llms.txt")
        assert _request(port, "/site/")[0] == 200  # the others are still served
    assert status == 503
    assert b"may not read this file of the build (permission denied)" in body and b"changed" not in body
    assert str(tmp_path).encode() not in body
    assert "llms.txt: cannot read: Permission denied; the user running `capidx serve` needs read" in log.read_text()


def test_the_pages_example_publishes_the_site_folder() -> None:
    workflow = yaml.safe_load((DOCS / "examples" / "pages-site.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["deploy"]["steps"]
    assert any("capidx build" in step.get("run", "") for step in steps)
    upload = next(step for step in steps if str(step.get("uses", "")).startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "build/site"
    assert any(str(step.get("uses", "")).startswith("actions/deploy-pages") for step in steps)
    assert "examples/pages-site.yml" in (DOCS / "build-directory.md").read_text(encoding="utf-8")


@pytest.mark.anyio
async def test_site_files_are_read_a_few_at_a_time(catalog_build: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each read of a site file holds it about three times over (bytes, text, body), and AnyIO's 40 worker threads
    read as many at once: 16 clients asking for a 50 MB page at once took 1.3 GB. At most `CONCURRENT_READS` are read
    at once now; every request is still answered."""
    import threading
    import time

    import anyio

    from capidx.server import site_files
    from capidx.server.snapshot import load_snapshot

    snapshot = load_snapshot(catalog_build)
    lock = threading.Lock()
    reading = [0, 0]  # now, at most

    def slow_body(artifact: object) -> bytes:
        with lock:
            reading[0] += 1
            reading[1] = max(reading)
        time.sleep(0.05)
        with lock:
            reading[0] -= 1
        return b"page"

    monkeypatch.setattr(site_files, "_body", slow_body)
    app = site_files.SiteFiles(None, lambda: snapshot, ())
    statuses: list[int] = []

    async def get() -> None:
        scope = {"type": "http", "method": "GET", "path": "/site/index.html", "headers": []}

        async def receive() -> dict[str, object]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, object]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(int(message["status"]))  # type: ignore[call-overload]

        await app(scope, receive, send)

    async with anyio.create_task_group() as group:
        for _ in range(20):
            group.start_soon(get)
    assert statuses == [200] * 20
    assert reading[1] <= site_files.CONCURRENT_READS, f"{reading[1]} site files read at once"
