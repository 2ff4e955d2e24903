"""`capidx verify`'s HTTP layer against a local server: redirects, limits, timeouts and the address policy."""

from __future__ import annotations

import gzip
import socket
from collections.abc import Iterator

import pytest
from verify_support import PageServer, Route, default_routes, serving

from capidx.compiler import __version__
from capidx.compiler.verify.fetch import (
    FetchFailure,
    FetchJob,
    FetchRun,
    FetchSettings,
    RateLimiter,
    fetch,
    refused_reason,
)

SETTINGS = FetchSettings(timeout=0.5, max_bytes=16384, per_host_interval=0, allow_private=True)


@pytest.fixture(scope="module")
def server() -> Iterator[PageServer]:
    routes = default_routes()
    routes["/set-cookie"] = Route(status=302, headers={"Location": "/good", "Set-Cookie": "session=secret"})
    routes["/bomb"] = Route(
        body=gzip.compress(b"a" * 1_000_000), headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}
    )
    routes["/to-metadata"] = Route(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"})
    routes["/to-file"] = Route(status=301, headers={"Location": "file:///etc/passwd"})
    routes["/drip"] = Route(body=b"<p>" + b"x" * 100 + b"</p>", headers={"Content-Type": "text/html"}, drip=0.1)
    with serving(routes) as running:
        yield running


def _methods(server: PageServer, path: str) -> list[str]:
    return [method for method, _, _ in server.seen(path)]


def test_head_then_get_with_user_agent_and_nothing_private(server: PageServer) -> None:
    result = fetch(server.url("/good"), SETTINGS)
    assert result.outcome == "ok" and result.status == 200 and b"Hooks reference" in (result.body or b"")
    assert _methods(server, "/good")[:2] == ["HEAD", "GET"]
    for _, _, headers in server.seen("/good"):
        assert headers["User-Agent"] == f"capidx/{__version__} (+source verification)"
        assert not {"Cookie", "Authorization"} & set(headers)


def test_head_alone_when_no_content_is_needed(server: PageServer) -> None:
    before = len(server.seen("/plain"))
    assert fetch(server.url("/plain"), SETTINGS, need_body=False).outcome == "ok"
    assert _methods(server, "/plain")[before:] == ["HEAD"]


def test_a_server_refusing_head_is_asked_with_get(server: PageServer) -> None:
    result = fetch(server.url("/no-head"), SETTINGS)
    assert result.outcome == "ok" and result.status == 200 and result.body


def test_cookies_are_never_sent_back(server: PageServer) -> None:
    assert fetch(server.url("/set-cookie"), SETTINGS).outcome == "ok"
    assert all("Cookie" not in headers for _, _, headers in server.seen())


@pytest.mark.parametrize(
    ("path", "statuses", "permanent"),
    [
        ("/moved", [301], True),
        ("/moved-308", [308], True),
        ("/temporary", [302], False),
        ("/chain", [301, 308], True),
    ],
)
def test_redirects_are_followed_and_reported(
    server: PageServer, path: str, statuses: list[int], permanent: bool
) -> None:
    result = fetch(server.url(path), SETTINGS)
    assert result.outcome == "ok" and result.final_url == server.url("/good")
    assert [hop.status for hop in result.hops] == statuses
    assert result.permanent is permanent


def test_redirect_loop_and_too_many_redirects(server: PageServer) -> None:
    assert fetch(server.url("/loop-a"), SETTINGS).outcome == "redirect-loop"
    few = FetchSettings(timeout=0.5, per_host_interval=0, allow_private=True, max_redirects=1)
    assert fetch(server.url("/chain"), few).outcome == "too-many-redirects"


@pytest.mark.parametrize(("path", "status"), [("/missing", 404), ("/broken", 500)])
def test_http_errors(server: PageServer, path: str, status: int) -> None:
    result = fetch(server.url(path), SETTINGS)
    assert (result.outcome, result.status, result.body) == ("http-error", status, None)


def test_error_after_a_redirect_keeps_the_final_address(server: PageServer) -> None:
    result = fetch(server.url("/gone-after-redirect"), SETTINGS)
    assert result.status == 404 and result.final_url == server.url("/missing") and result.redirected


def test_slow_page_times_out(server: PageServer) -> None:
    result = fetch(server.url("/slow"), FetchSettings(timeout=0.3, per_host_interval=0, allow_private=True))
    assert result.outcome == "timeout" and result.detail


def test_a_page_sent_a_byte_at_a_time_ends_at_the_deadline(server: PageServer) -> None:
    """Each byte came within the read timeout, so no read timed out: http.client read on until it had a header line or
    the body's next 64 KiB, and the deadline was looked at only between two such reads (this page, 0.3 s timeout,
    1.8 s deadline: 17 s; 64 KiB at 10 s a byte with the defaults, days). The connection is now cut at the deadline,
    however the head or the body trickles in."""
    settings = FetchSettings(timeout=0.3, per_host_interval=0, allow_private=True)

    result = fetch(server.url("/drip"), settings)

    assert result.outcome == "timeout" and f"within {settings.deadline:g} s" in result.detail
    assert "/drip" not in server.dripped  # ended before the page had come whole (some 20 s of bytes)


@pytest.mark.parametrize("path", ["/huge", "/huge-unannounced", "/bomb"])
def test_oversized_bodies_are_refused(server: PageServer, path: str) -> None:
    assert fetch(server.url(path), SETTINGS).outcome == "too-large"


def test_compressed_page_is_inflated(server: PageServer) -> None:
    result = fetch(server.url("/gzip"), SETTINGS)
    assert result.outcome == "ok" and (result.body or b"").startswith(b"<!doctype html>")


def test_loopback_is_refused_without_a_connection() -> None:
    with serving() as quiet:
        result = fetch(quiet.url("/good"), FetchSettings(timeout=0.5, per_host_interval=0))
        assert result.outcome == "blocked" and "loopback" in result.detail
        assert quiet.seen() == []


def _only_this_server(address: str) -> str | None:
    """A policy trusting 127.0.0.1 (the test server) and refusing what the default policy refuses."""
    return None if address == "127.0.0.1" else refused_reason(address)


@pytest.mark.parametrize(
    ("target", "reason"),
    [("/to-metadata", "link-local"), ("http://127.0.0.2:{port}/good", "loopback")],
)
def test_every_redirect_hop_is_checked_again(server: PageServer, target: str, reason: str) -> None:
    url = server.url(target) if target.startswith("/") else target.format(port=server.httpd.server_address[1])
    if not target.startswith("/"):
        server.routes["/to-other-loopback"] = Route(status=301, headers={"Location": url})
        url = server.url("/to-other-loopback")
    result = fetch(url, FetchSettings(timeout=0.5, per_host_interval=0), policy=_only_this_server)
    assert result.outcome == "blocked" and reason in result.detail


def test_a_host_with_one_private_address_among_public_ones_is_refused() -> None:
    def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.1.2.3"]

    result = fetch("https://docs.example.test/page", FetchSettings(), resolver=resolver)
    assert result.outcome == "blocked" and "10.1.2.3" in result.detail


@pytest.mark.parametrize(
    ("url", "outcome"),
    [
        ("ftp://example.com/file", "invalid-url"),
        ("file:///etc/passwd", "invalid-url"),
        ("https://user:secret@example.com/", "blocked"),
        ("https:///no-host", "invalid-url"),
        ("http://example.com:99999/", "invalid-url"),
    ],
)
def test_only_plain_http_urls(url: str, outcome: str) -> None:
    assert fetch(url, FetchSettings(allow_private=True)).outcome == outcome


def test_redirect_to_another_scheme_is_refused(server: PageServer) -> None:
    assert fetch(server.url("/to-file"), SETTINGS).outcome == "invalid-url"


def test_connection_refused() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert fetch(f"http://127.0.0.1:{port}/", SETTINGS).outcome == "refused"


def test_tls_failure(server: PageServer) -> None:
    result = fetch(server.url("/good").replace("http://", "https://"), SETTINGS)
    assert result.outcome == "tls-error"


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "::1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "fe80::1%eth0",
        "224.0.0.1", "ff02::1", "0.0.0.0", "240.0.0.1", "::ffff:127.0.0.1", "fc00::1", "100.64.0.1", "192.0.2.1",
    ],
)  # fmt: skip
def test_non_public_addresses(address: str) -> None:
    assert refused_reason(address)


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1::1"])
def test_public_addresses(address: str) -> None:
    assert refused_reason(address) is None


def test_rate_limit_spaces_requests_per_host() -> None:
    now = [100.0]
    slept: list[float] = []
    limiter = RateLimiter(1.0, clock=lambda: now[0], sleep=slept.append)
    for host in ("a.test", "a.test", "b.test", "a.test"):
        limiter.wait(host)
    assert slept == [1.0, 2.0]


def test_a_host_that_did_not_resolve_fails_at_once_even_for_a_request_already_waiting() -> None:
    now = [100.0]
    slept: list[float] = []
    limiter = RateLimiter(1.0, clock=lambda: now[0], sleep=slept.append)
    limiter.wait("a.test")
    limiter.unresolved("b.test", FetchFailure("unresolved", "cannot resolve b.test"))
    with pytest.raises(FetchFailure, match=r"cannot resolve b\.test"):
        limiter.wait("b.test")
    assert slept == []  # not waited for
    waiting = RateLimiter(1.0, clock=lambda: now[0], sleep=lambda _: waiting.unresolved("a.test", failure))
    failure = FetchFailure("unresolved", "cannot resolve a.test")
    waiting.wait("a.test")
    with pytest.raises(FetchFailure, match=r"cannot resolve a\.test"):  # it failed while this one waited
        waiting.wait("a.test")
    limiter.wait("a.test")  # other hosts keep their pace
    assert slept == [1.0]


def test_many_urls_fetched_once_each(server: PageServer) -> None:
    urls = [server.url(path) for path in ("/good", "/missing", "/moved", "/plain")]
    done: list[str] = []
    run = FetchRun(FetchSettings(timeout=0.5, per_host_interval=0, allow_private=True, concurrency=3))
    run.run([FetchJob(url) for url in urls], lambda result: done.append(result.url))
    assert sorted(done) == sorted(urls) and set(run.results) == set(urls)


def test_spaces_and_non_ascii_in_a_path_are_escaped(server: PageServer) -> None:
    server.routes["/d%C3%A9j%C3%A0%20vu?q=a%20b"] = Route(body=b"ok", headers={"Content-Type": "text/plain"})
    assert fetch(server.url("/déjà vu?q=a b"), SETTINGS).outcome == "ok"
    assert fetch(server.url("/d%C3%A9j%C3%A0%20vu?q=a%20b"), SETTINGS).outcome == "ok"
