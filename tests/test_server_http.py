"""`capidx serve --transport http`: streamable HTTP on an ephemeral loopback port, both revisions."""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from manifest_factory import build_text
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourcesListChanged
from server_support import (
    HEADERS,
    INITIALIZE,
    PREFIX,
    TRANSPORT_MODES,
    run_serve,
    serving_http,
    swap_in,
    write_build,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def served(catalog_build: Path) -> Iterator[tuple[str, int]]:
    with serving_http(catalog_build, "--expose", "summary,stats,full") as (_proc, url, port):
        yield url, port


@pytest.mark.parametrize("revision", sorted(TRANSPORT_MODES))
async def test_http_serves_both_revisions(served: tuple[str, int], catalog_build: Path, revision: str) -> None:
    url, _port = served
    async with Client(url, mode=TRANSPORT_MODES[revision], cache=None) as client:
        assert client.protocol_version == revision
        assert len((await client.list_resources()).resources) == 3
        full = await client.read_resource(PREFIX + "full")
        assert full.contents[0].text.encode("utf-8") == (catalog_build / "full.md").read_bytes()
        result = await client.call_tool("compare_capability", {"capability": "hooks"})
        assert result.content[0].text == build_text(catalog_build, "tools/compare/hooks.json")


def test_a_bad_host_header_is_rejected(served: tuple[str, int]) -> None:
    url, port = served
    good = httpx2.post(url, json=INITIALIZE, headers=HEADERS, timeout=10)
    assert good.status_code == 200
    evil = httpx2.post(url, json=INITIALIZE, headers={**HEADERS, "Host": f"evil.example:{port}"}, timeout=10)
    assert evil.status_code == 421
    origin = httpx2.post(url, json=INITIALIZE, headers={**HEADERS, "Origin": "http://evil.example"}, timeout=10)
    assert origin.status_code == 403
    assert httpx2.post(url, json=INITIALIZE, headers=HEADERS, timeout=10).status_code == 200  # still up


def test_oversized_and_malformed_requests_fail_while_the_server_stays_up(served: tuple[str, int]) -> None:
    url, _port = served
    huge = {**INITIALIZE, "params": {**INITIALIZE["params"], "pad": "x" * (5 * 1024 * 1024)}}
    assert httpx2.post(url, content=json.dumps(huge), headers=HEADERS, timeout=30).status_code == 413
    assert httpx2.post(url, content=b"{not json", headers=HEADERS, timeout=10).status_code == 400
    assert httpx2.post(url, json=INITIALIZE, headers=HEADERS, timeout=10).status_code == 200


async def test_stateless_needs_no_session_affinity(served: tuple[str, int]) -> None:
    url, _port = served
    async with Client(url, mode="legacy", cache=None) as first, Client(url, mode="legacy", cache=None) as second:
        assert (await first.read_resource(PREFIX + "stats")).contents == (
            await second.read_resource(PREFIX + "stats")
        ).contents


async def test_a_non_loopback_bind_accepts_the_allowed_hosts_and_the_loopback_names(catalog_build: Path) -> None:
    """Bound to every address, the server answers the names `--allowed-host` gives, and the loopback names (a health
    check on its own machine; no rebinding page sends them), and its log gives a URL that works."""
    with serving_http(catalog_build, "--host", "0.0.0.0", "--allowed-host", "capidx.test:*") as (_proc, url, port):
        local = f"http://127.0.0.1:{port}/mcp"
        assert url == local  # the URL logged, not http://0.0.0.0:…
        assert httpx2.post(local, json=INITIALIZE, headers=HEADERS, timeout=10).status_code == 200
        other = {**HEADERS, "Host": f"rebinding.test:{port}"}
        assert httpx2.post(local, json=INITIALIZE, headers=other, timeout=10).status_code == 421
        allowed = {**HEADERS, "Host": f"capidx.test:{port}"}
        assert httpx2.post(local, json=INITIALIZE, headers=allowed, timeout=10).status_code == 200
        async with (
            httpx2.AsyncClient(headers={"Host": f"capidx.test:{port}"}) as http,
            Client(streamable_http_client(local, http_client=http), mode="legacy", cache=None) as client,
        ):
            assert (await client.list_tools()).tools


def test_a_loopback_address_bound_accepts_the_url_it_logs(catalog_build: Path) -> None:
    """`--host 127.0.0.2` logged http://127.0.0.2:PORT/mcp and answered that URL 421 (only 127.0.0.1, localhost and
    [::1] were accepted)."""
    with serving_http(catalog_build, "--host", "127.0.0.2") as (_proc, url, port):
        assert url == f"http://127.0.0.2:{port}/mcp"
        assert httpx2.post(url, json=INITIALIZE, headers=HEADERS, timeout=10).status_code == 200
        origin = {**HEADERS, "Origin": f"http://127.0.0.2:{port}"}
        assert httpx2.post(url, json=INITIALIZE, headers=origin, timeout=10).status_code == 200


async def test_a_2026_listener_over_http_hears_a_reload_and_a_shutdown_ends_its_stream(tmp_path: Path) -> None:
    """One server's life: a listen stream hears the build swapped in, then SIGTERM ends it gracefully (the loop
    ends, no error) and the process exits without the stream holding its shutdown: uvicorn gives an open request
    5 seconds, then cancels it and says so."""
    build = write_build(tmp_path / "build", generation="1")
    log = tmp_path / "http.log"
    with serving_http(build, log=log) as (proc, url, _port):
        async with Client(url, mode="auto", cache=None) as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(resources_list_changed=True) as subscription:
                swap_in(write_build(tmp_path / ".capidx-build-2", generation="2"), build)
                with anyio.fail_after(15):
                    async for event in subscription:
                        assert event == ResourcesListChanged()
                        break
                assert "generation 2" in (await client.read_resource(PREFIX + "summary")).contents[0].text

                proc.send_signal(signal.SIGTERM)
                with anyio.fail_after(10):
                    async for _event in subscription:
                        pass  # a graceful close ends the loop
        assert await anyio.to_thread.run_sync(proc.wait, 10) == 143
    assert "timeout graceful shutdown exceeded" not in log.read_text()


def test_a_port_in_use_exits_2(catalog_build: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_serve(
            "--build", str(catalog_build), "--transport", "http", "--port", str(port), cwd=catalog_build.parent
        )
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in result.stderr
    assert "--port 0" in result.stderr.splitlines()[-1]  # the last line says what to do


def test_an_address_of_no_interface_says_to_check_the_host(catalog_build: Path) -> None:
    result = run_serve(
        "--build", str(catalog_build), "--transport", "http", "--host", "192.0.2.1", "--allowed-host", "a.test",
        cwd=catalog_build.parent,
    )  # fmt: skip
    assert result.returncode == 2
    assert "no interface of this machine has that address: check --host" in result.stderr.splitlines()[-1]


def test_a_host_name_that_does_not_resolve_says_to_check_the_host(catalog_build: Path) -> None:
    result = run_serve(
        "--build", str(catalog_build), "--transport", "http", "--host", "no-such-host.invalid",
        "--allowed-host", "a.test", cwd=catalog_build.parent,
    )  # fmt: skip
    assert result.returncode == 2
    assert "the host name does not resolve: check --host" in result.stderr.splitlines()[-1]


BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


async def test_a_browser_at_mcp_gets_a_page_and_mcp_clients_are_unaffected(served: tuple[str, int]) -> None:
    url, _port = served
    page = httpx2.get(url, headers={"Accept": BROWSER_ACCEPT}, timeout=10)  # it used to hang on a silent stream
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "MCP endpoint" in page.text and 'href="/site/"' in page.text
    # A GET that asks for the event stream (or carries an MCP header) never gets the page.
    for headers in ({"Accept": "text/event-stream"}, {"Accept": BROWSER_ACCEPT, "MCP-Protocol-Version": "2025-11-25"}):
        with httpx2.stream("GET", url, headers=headers, timeout=10) as response:
            assert "text/html" not in response.headers.get("content-type", ""), headers
    async with Client(url, mode="legacy", cache=None) as client:
        assert len((await client.list_resources()).resources) == 3


@pytest.mark.parametrize("revision", [None, "2025-11-25", "2026-07-28"])
def test_a_get_of_the_endpoint_is_refused_not_held_open(catalog_build: Path, revision: str | None) -> None:
    """The server is stateless: on 2025-11-25 the event stream the SDK opened for a GET never carried anything, and
    held its connection until the client gave up, so that two `curl`s of /mcp kept every other client out under
    `--max-connections 2`. Every GET but a browser's is answered 405 (Allow: POST), on either revision; with two
    connections allowed, two such GETs and then an MCP client are all served."""
    headers = {"Accept": "text/event-stream"} | ({"MCP-Protocol-Version": revision} if revision else {})
    with serving_http(catalog_build, "--max-connections", "2") as (_proc, url, _port):
        for _ in range(2):
            refused = httpx2.get(url, headers=headers, timeout=10)
            assert refused.status_code == 405 and refused.headers["allow"] == "POST"
            assert refused.json()["error"]["code"] == -32600  # in the SDK's JSON-RPC form, as its own 405s
        assert httpx2.get(url.removesuffix("mcp") + "site/", timeout=10).status_code == 200
        # the SDK's 405 for other methods said `Allow: GET, POST, DELETE`: GET is refused too, so every 405 says POST
        for method in ("HEAD", "PUT", "OPTIONS", "PATCH"):
            other = httpx2.request(method, url, headers=headers, timeout=10)
            assert (other.status_code, other.headers["allow"]) == (405, "POST"), method
        # DELETE too, in the SDK's words: the SDK's own 405 for it had no Allow, which a 405 must have
        ended = httpx2.delete(url, headers=headers, timeout=10)
        assert (ended.status_code, ended.headers.get("allow")) == (405, "POST")
        assert ended.json()["error"]["message"] == "Method Not Allowed: Session termination not supported"


def test_the_start_up_log_names_the_site_when_the_build_has_one(
    catalog_build: Path, hand_build: Path, tmp_path: Path
) -> None:
    for build, has_site in ((catalog_build, True), (hand_build, False)):
        log = tmp_path / f"{build.parent.name}.log"
        with serving_http(build, log=log) as (_proc, url, _port):
            page = httpx2.get(url, headers={"Accept": BROWSER_ACCEPT}, timeout=10)  # answered after the log lines
            assert page.status_code == 200 and ('href="/site/"' in page.text) == has_site
            text = log.read_text()
        assert (f"site for people: {url.removesuffix('/mcp')}/site/" in text) == has_site, text


async def test_a_build_holding_a_file_browser_s_metadata_is_served(catalog_build: Path, tmp_path: Path) -> None:
    """The server reads only what the manifest lists: .DS_Store and Thumbs.db beside it change nothing, and are
    not served under /site/ (only listed files are)."""
    build = tmp_path / "build"
    shutil.copytree(catalog_build, build)
    for folder in (build, build / "site", build / "site" / "api"):
        (folder / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
        (folder / "Thumbs.db").write_bytes(b"thumbnails")
    with serving_http(build, "--expose", "full") as (_proc, url, _port):
        async with Client(url, mode="legacy", cache=None) as client:
            full = await client.read_resource(PREFIX + "full")
            assert full.contents[0].text.encode("utf-8") == (build / "full.md").read_bytes()
        site = url.removesuffix("/mcp") + "/site/"
        assert httpx2.get(site, timeout=10).status_code == 200
        assert httpx2.get(site + ".DS_Store", timeout=10).status_code == 404
