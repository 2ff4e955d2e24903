"""Fetch source pages safely: bounded, polite, and never into a private network unless asked.

Catalogs arrive in pull requests, so every URL is untrusted. The rules, each enforced per hop (a
redirect is a new request to a new address and is checked like the first):

- only `http` and `https`; no credentials in the URL, no cookies, no proxy from the environment;
- the host is resolved once and *every* address it resolves to is checked: loopback, private,
  link-local, multicast, reserved and unspecified addresses are refused (outcome `blocked`, no
  connection made) unless `allow_private`; the connection then goes to the checked address, so a
  second, different DNS answer cannot slip past the check (DNS rebinding);
- redirects are followed by hand (at most `max_redirects`, loops detected);
- timeouts on connecting and on every read, plus a deadline for the whole fetch of one URL, which a
  page sent a byte at a time cannot outlast (its connection is shut down when the deadline passes);
- bodies are read up to `max_bytes` (a larger `Content-Length` is refused before reading; compressed
  bodies are inflated up to the same limit);
- a per-host rate limit and a bounded thread pool.

The standard library does the HTTP (`http.client`, threads from `concurrent.futures`): the compiler
must not depend on the MCP server's HTTP stack, and `http.client` lets the connection be pinned to
the checked address, which `urllib` (proxies, its own redirect handling, its own DNS lookup) does not.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from functools import cache
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from capidx.compiler import __version__

USER_AGENT = f"capidx/{__version__} (+source verification)"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PERMANENT_REDIRECTS = frozenset({301, 308})
# HEAD answers that say nothing about the page: some servers refuse or mishandle HEAD, so GET decides.
_ASK_AGAIN_WITH_GET = 400
_URL_SAFE = "/%:@!$&'()*+,;=-._~?"


@dataclass(frozen=True)
class FetchSettings:
    timeout: float = 10.0  # seconds, for connecting and for each read
    max_bytes: int = 5 * 1024 * 1024
    max_redirects: int = 10
    concurrency: int = 8
    per_host_interval: float = 1.0  # seconds between two requests to one host (0: no limit)
    allow_private: bool = False
    user_agent: str = USER_AGENT

    @property
    def deadline(self) -> float:
        """Seconds for the whole fetch of one URL, every hop and both methods included."""
        return self.timeout * 6


@dataclass(frozen=True)
class Hop:
    url: str
    status: int
    method: str


@dataclass(frozen=True)
class FetchResult:
    """What fetching one URL (without its fragment) found.

    `outcome` is `ok` (a 2xx answer), `http-error` (a 4xx/5xx answer: see `status`), or a failure to
    get an answer at all: `blocked`, `invalid-url`, `timeout`, `tls-error`, `refused`, `unresolved`,
    `network-error`, `too-large`, `redirect-loop`, `too-many-redirects`.
    """

    url: str
    outcome: str
    status: int | None = None
    final_url: str | None = None
    hops: tuple[Hop, ...] = ()  # every redirect answer, in order
    body: bytes | None = None
    content_type: str = ""
    detail: str = ""

    @property
    def redirected(self) -> bool:
        return bool(self.hops)

    @property
    def permanent(self) -> bool:
        """Every hop was a permanent redirect (301/308): the source may be rewritten to `final_url`."""
        return bool(self.hops) and all(hop.status in PERMANENT_REDIRECTS for hop in self.hops)


class FetchFailure(Exception):
    """A fetch that got no usable answer; `outcome` as in `FetchResult`."""

    def __init__(self, outcome: str, detail: str) -> None:
        super().__init__(detail)
        self.outcome = outcome
        self.detail = detail


# --- address policy ---------------------------------------------------------------------------------


def check_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL capidx may fetch, else `FetchFailure("invalid-url")`."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise FetchFailure("invalid-url", f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchFailure("invalid-url", f"only http and https URLs are fetched, not {scheme or 'a relative URL'}")
    if parts.username is not None or parts.password is not None:
        raise FetchFailure("blocked", "the URL carries credentials; capidx never sends any")
    if not parts.hostname:
        raise FetchFailure("invalid-url", "the URL has no host")
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80)


def refused_reason(address: str) -> str | None:
    """Why an IP address must not be contacted without `--allow-private`, or None when it may."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for flag, what in (
        ("is_loopback", "loopback"),
        ("is_link_local", "link-local"),
        ("is_multicast", "multicast"),
        ("is_unspecified", "unspecified"),
        ("is_reserved", "reserved"),
        ("is_private", "private"),
    ):
        if getattr(ip, flag):
            return f"{address} is a {what} address"
    if not ip.is_global:  # shared (carrier-grade NAT), documentation and other special-purpose ranges
        return f"{address} is not a public address"
    return None


Resolver = Callable[[str, int], list[str]]
# Why an address must not be contacted (None: it may be). Injectable so tests can trust their own server.
Policy = Callable[[str], str | None]


def default_policy(settings: FetchSettings) -> Policy:
    return (lambda _: None) if settings.allow_private else refused_reason


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (IPv4 and IPv6)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchFailure("unresolved", f"cannot resolve {host}: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def checked_address(host: str, port: int, resolver: Resolver, policy: Policy) -> str:
    """The address to connect to, after checking every address the host resolves to (one bad address
    is enough to refuse: which one a later lookup would give is not ours to choose)."""
    addresses = resolver(host, port)
    if not addresses:
        raise FetchFailure("unresolved", f"{host} resolves to no address")
    for address in addresses:
        reason = policy(address)
        if reason is not None:
            raise FetchFailure("blocked", f"{host}: {reason} (refused; --allow-private allows it)")
    return addresses[0]


# --- rate limit --------------------------------------------------------------------------------------


class RateLimiter:
    """At most one request start per `interval` seconds per host, across threads; a host that did not resolve
    (`unresolved`) is neither waited for nor asked again in the run: offline, 33 pages on one host took 33 s of
    waiting to fail one by one."""

    def __init__(
        self,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._interval = interval
        self._clock = clock
        self._sleep = sleep
        self._next: dict[str, float] = {}
        self._failed: dict[str, FetchFailure] = {}
        self._lock = threading.Lock()

    def wait(self, host: str) -> None:
        """Return when a request to `host` may start; raise its failure if it did not resolve (before or while
        this request waited)."""
        with self._lock:  # reserve a slot, then sleep outside the lock
            self._raise_if_failed(host)
            if self._interval <= 0:
                return
            now = self._clock()
            slot = max(now, self._next.get(host, now))
            self._next[host] = slot + self._interval
        if slot > now:
            self._sleep(slot - now)
            with self._lock:
                self._raise_if_failed(host)

    def unresolved(self, host: str, failure: FetchFailure) -> None:
        """Record that `host` did not resolve: its other requests in this run fail the same way, at once."""
        with self._lock:
            self._failed.setdefault(host, failure)

    def _raise_if_failed(self, host: str) -> None:
        if (failure := self._failed.get(host)) is not None:
            raise FetchFailure(failure.outcome, failure.detail)


# --- one request -------------------------------------------------------------------------------------


class _PinnedConnection(http.client.HTTPConnection):
    """Connects to the address that was checked, whatever DNS would answer now; `cut` ends it at the deadline."""

    pinned_address = ""
    expired = False

    def connect(self) -> None:
        self.sock = socket.create_connection((self.pinned_address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.expired:  # `cut` ran before the socket was there to shut down
            self.cut()

    def cut(self) -> None:
        """Shut the socket down, from another thread, so that the read under way ends at once.

        The socket timeout bounds each read, not a response: `http.client` reads a header line, or the body's next
        64 KiB, until it has it, and a server that sends one byte within every timeout kept one fetch going for
        days (64 KiB at 10 s a byte), past the deadline `_read_body` checks only between two such reads."""
        self.expired = True
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # closed already: nothing to end
                # the socket's own shutdown, also under TLS: SSLSocket.shutdown would unwrap it under the reader
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _PinnedTLSConnection(http.client.HTTPSConnection, _PinnedConnection):
    """TLS over the pinned socket; the certificate is checked against the host name, as usual."""


@dataclass(frozen=True)
class _Answer:
    status: int
    location: str | None
    body: bytes | None
    content_type: str


@cache
def _tls_context() -> ssl.SSLContext:
    """One verifying context for every connection (loading the CA store once; it is thread-safe)."""
    return ssl.create_default_context()


@dataclass(frozen=True)
class _Context:
    settings: FetchSettings
    limiter: RateLimiter
    resolver: Resolver
    policy: Policy
    deadline: float


def _request(url: str, method: str, context: _Context) -> _Answer:
    settings, deadline = context.settings, context.deadline
    scheme, host, port = check_url(url)
    address = checked_address(host, port, context.resolver, context.policy)
    timeout = min(settings.timeout, max(deadline - time.monotonic(), 0.001))
    connection: http.client.HTTPConnection
    if scheme == "https":
        connection = _PinnedTLSConnection(host, port, timeout=timeout, context=_tls_context())
    else:
        connection = _PinnedConnection(host, port, timeout=timeout)
    connection.pinned_address = address  # type: ignore[attr-defined]
    parts = urlsplit(url)
    # Spaces and non-ASCII characters percent-encoded (http.client refuses them); existing escapes kept.
    target = urlunsplit(("", "", quote(parts.path or "/", safe=_URL_SAFE), quote(parts.query, safe=_URL_SAFE), ""))
    headers = {
        "User-Agent": settings.user_agent,
        "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
        "Accept-Encoding": "gzip, deflate",
    }
    cutoff = threading.Timer(max(deadline - time.monotonic(), 0.0), connection.cut)  # type: ignore[attr-defined]
    cutoff.daemon = True
    cutoff.start()
    try:
        connection.request(method, target, headers=headers)
        response = connection.getresponse()
        location = response.getheader("Location")
        content_type = response.getheader("Content-Type", "")
        body = None
        if method == "GET" and 200 <= response.status < 300:
            body = _read_body(response, settings, deadline)
        return _Answer(response.status, location, body, content_type)
    finally:
        cutoff.cancel()
        connection.close()


def _read_body(response: http.client.HTTPResponse, settings: FetchSettings, deadline: float) -> bytes:
    limit = settings.max_bytes
    declared = response.getheader("Content-Length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise FetchFailure("too-large", f"the page is {int(declared):,} bytes, over the {limit:,}-byte limit")
    encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
    inflater = _inflater(encoding)
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read(64 * 1024):
        if time.monotonic() > deadline:
            raise FetchFailure("timeout", "the page took too long to arrive")
        if inflater is not None:
            chunk = inflater.decompress(chunk, limit + 1 - size)
        size += len(chunk)
        if size > limit:
            raise FetchFailure("too-large", f"the page is over the {limit:,}-byte limit")
        chunks.append(chunk)
    if inflater is not None:
        rest = inflater.flush()
        if size + len(rest) > limit:
            raise FetchFailure("too-large", f"the page is over the {limit:,}-byte limit")
        chunks.append(rest)
    return b"".join(chunks)


def _inflater(encoding: str) -> zlib._Decompress | None:  # type: ignore[name-defined]
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise FetchFailure("network-error", f"unsupported Content-Encoding {encoding!r}")


# --- one URL, redirects followed -------------------------------------------------------------------


def fetch(
    url: str,
    settings: FetchSettings,
    *,
    need_body: bool = True,
    limiter: RateLimiter | None = None,
    resolver: Resolver = resolve,
    policy: Policy | None = None,
) -> FetchResult:
    """Fetch one URL: HEAD first (status and redirects), then GET when the page's text is needed or
    the HEAD answer was an error (servers that mishandle HEAD must not make a page look broken)."""
    context = _Context(
        settings,
        limiter or RateLimiter(0),
        resolver,
        policy or default_policy(settings),
        time.monotonic() + settings.deadline,
    )
    try:
        result = _follow(url, "HEAD", context)
        if result.outcome == "ok" and not need_body:
            return result
        if result.outcome == "ok" or (result.status or 0) >= _ASK_AGAIN_WITH_GET:
            start = result.final_url if result.outcome == "ok" and result.final_url else url
            after = _follow(start, "GET", context)
            return replace(after, url=url, hops=_merge_hops(result, after))
        return result
    except FetchFailure as failure:
        return FetchResult(url, failure.outcome, detail=failure.detail)


def _merge_hops(head: FetchResult, get: FetchResult) -> tuple[Hop, ...]:
    """The redirects of HEAD (when GET started from its target) followed by GET's own."""
    return head.hops + get.hops if head.outcome == "ok" else get.hops


def _follow(url: str, method: str, context: _Context) -> FetchResult:
    settings = context.settings
    hops: list[Hop] = []
    current = url
    seen = {url}
    while True:
        host = check_url(current)[1]
        context.limiter.wait(host)
        try:
            answer = _guarded(current, method, context)
        except FetchFailure as failure:
            if failure.outcome == "unresolved":
                context.limiter.unresolved(host, failure)
            raise
        if answer.status in REDIRECT_STATUSES and answer.location:
            hops.append(Hop(current, answer.status, method))
            target = urljoin(current, answer.location)
            if target in seen:
                raise FetchFailure("redirect-loop", f"redirect loop: {current} -> {target}")
            if len(hops) > settings.max_redirects:
                raise FetchFailure("too-many-redirects", f"more than {settings.max_redirects} redirects")
            seen.add(target)
            current = target
            continue
        outcome = "ok" if 200 <= answer.status < 300 else "http-error"
        return FetchResult(url, outcome, answer.status, current, tuple(hops), answer.body, answer.content_type)


def _guarded(url: str, method: str, context: _Context) -> _Answer:
    """`_request` with every network failure turned into a `FetchFailure` of the right kind; any failure once the
    deadline has passed is its timeout (the connection cut then, `_PinnedConnection.cut`, fails the read under way
    as an end of stream would, a TLS one with an SSL error)."""
    settings = context.settings
    if time.monotonic() > context.deadline:
        raise FetchFailure("timeout", f"no answer within {settings.deadline:g} s")
    try:
        return _request(url, method, context)
    except FetchFailure:
        raise
    except (ssl.SSLError, http.client.HTTPException, OSError, zlib.error, ValueError) as exc:
        if time.monotonic() >= context.deadline:
            raise FetchFailure("timeout", f"no answer within {settings.deadline:g} s") from None
        raise _failure(exc, settings) from None


def _failure(exc: Exception, settings: FetchSettings) -> FetchFailure:
    """The `FetchFailure` a network error of one request is."""
    if isinstance(exc, TimeoutError):
        return FetchFailure("timeout", f"no answer within {settings.timeout:g} s")
    if isinstance(exc, ssl.SSLError):  # a certificate rejected too (ssl.CertificateError is one), as before
        return FetchFailure("tls-error", f"TLS failed: {exc.reason or exc}")
    if isinstance(exc, ConnectionRefusedError):
        return FetchFailure("refused", "the connection was refused")
    if isinstance(exc, http.client.InvalidURL):
        return FetchFailure("invalid-url", f"not a valid URL: {exc}")
    return FetchFailure("network-error", f"{type(exc).__name__}: {exc}")


# --- many URLs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchJob:
    url: str
    need_body: bool = True


@dataclass
class FetchRun:
    """Fetches many URLs with bounded concurrency; `on_done` is called (in the caller's thread) per URL."""

    settings: FetchSettings
    resolver: Resolver = resolve
    limiter: RateLimiter | None = None
    policy: Policy | None = None
    results: dict[str, FetchResult] = field(default_factory=dict)

    def run(self, jobs: Iterable[FetchJob], on_done: Callable[[FetchResult], None] = lambda _: None) -> None:
        limiter = self.limiter or RateLimiter(self.settings.per_host_interval)
        jobs = list(jobs)
        if not jobs:
            return
        workers = max(1, min(self.settings.concurrency, len(jobs)))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="capidx-verify")
        try:
            futures = [
                pool.submit(
                    fetch,
                    job.url,
                    self.settings,
                    need_body=job.need_body,
                    limiter=limiter,
                    resolver=self.resolver,
                    policy=self.policy,
                )
                for job in jobs
            ]
            for future in as_completed(futures):
                result = future.result()
                self.results[result.url] = result
                on_done(result)
        finally:  # on Ctrl-C, pages not yet started are not fetched
            pool.shutdown(wait=True, cancel_futures=True)
