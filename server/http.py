"""Bounds for `capidx serve --transport http` (issue #14, findings 8 and 9).

uvicorn alone does not bound what idle clients hold: its `limit_concurrency` answers a *request* 503
but still accepts and keeps every connection, and its keep-alive timer starts only after a first
response, so a connection that never sends a request (or sends its head one byte at a time) is
held forever. About 20,000 such loopback connections exhausted the process's file descriptors.
`bounded_protocol` returns uvicorn's h11 protocol with two additions:

- at most `max_connections` open connections: one more is answered `503` and closed as soon as it
  is accepted, so its descriptor is released at once;
- a connection with no request in progress is closed after `idle_timeout` seconds, counted from
  the connect or from the end of the previous response, however slowly bytes trickle in; so is one whose
  request head has arrived but not yet its whole body `idle_timeout` seconds after the head (answered `408` when
  nothing was answered yet): a head followed by a body that stalls held the connection for ever, and
  `max_connections` of them shut every other client out;
- a connection whose client reads nothing of an answer for `idle_timeout` seconds (the answer waits, its
  writing paused by flow control) is dropped, and so is one the idle timeout closed while what it was
  sent still waits to be read: a client that pipelined requests and never read the answers held its
  connection for ever, a request being in progress;
- a request head larger than `MAX_HEADER_BYTES` is answered `400` and the connection closed, however it
  arrives. h11's `max_incomplete_event_size` bounds only a head still incomplete: one read holding a whole
  head of 60 KB (or of 10,000 headers) was served.

`HostGuard` checks the Host header of every request, on every path, before routing: a missing or
empty Host is `400`, one that matches no allowed pattern is `421`; case does not count (Host and Origin are passed
on in lower case, the patterns are kept so). The SDK makes the same check only
inside its /mcp handler, so Starlette's redirect of `/mcp/` would otherwise answer (and echo) any Host.
Patterns are the SDK's (`TransportSecuritySettings`): an exact value or `HOST:*` for any port;
settings.py refuses anything else at start-up.

`WholeBody` reads a request's body before the SDK sees it (issue #31, item 2): a client that hung up
half-way through its body made the SDK log a full `ClientDisconnect` traceback at error level; now it
is one info line, and the SDK never hears of the request. A request whose id JSON-RPC does not allow (an
object, an array, null, a boolean, a fraction) is answered `400` with `-32600` naming the id, the answer stdio
gives it, in place of the SDK's `202` with nothing in it (on the 2025-11-25 revision the SDK reads such a
request as a notification); a lone surrogate escape is read as U+FFFD, as stdio reads it (the SDK answered it 400 on
2025-11-25); every other answer is the SDK's own.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

import h11
from mcp_types import INVALID_REQUEST
from uvicorn.protocols.http.h11_impl import H11Protocol

from capidx.server.jsonrpc_id import id_problem, surrogates_replaced
from capidx.server.limits import clip

logger = logging.getLogger("capidx.server")

MAX_HEADER_BYTES = 16 * 1024  # h11's own default, stated: a request head larger than this is a 400, blank line included
DESCRIPTOR_MARGIN = 64  # descriptors besides connections: std streams, listening sockets, reloads
# A body the SDK may answer 202 (taken for a notification) is kept up to this size until that answer, to check its
# id then; a larger one is checked before the SDK reads it.
ID_CHECK_BYTES = 64 * 1024


def _closing_response(status: str, text: str) -> bytes:
    """A whole plain-text HTTP/1.1 response that closes the connection, written to the transport as it is: answered
    where no request cycle of uvicorn's can answer (a connection refused, a body that never came)."""
    body = text.encode("ascii")
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class HeadBound(h11.Connection):
    """h11's server connection, with its bound on a request head (`max_incomplete_event_size`) applied to a head
    that arrives whole as well: h11 checks it only while it waits for more of a head.

    The head's size is what it took from the receive buffer, the bytes h11's own check counts (a head padded with
    spaces counts them). Refused as h11 refuses an incomplete one, with `RemoteProtocolError`, which uvicorn answers
    `400` before closing the connection. The buffer is measured through `trailing_data`, h11's public copy of it
    (its private `_receive_buffer` could change with any release), and only before a request head: it then holds
    the head and at most what arrived with it."""

    def __init__(self, max_head_bytes: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_head_bytes)
        self.max_head_bytes = max_head_bytes

    def next_event(self) -> Any:
        if self.their_state is not h11.IDLE:  # the next event, if any, is no request head
            return super().next_event()
        before = len(self.trailing_data[0])
        event = super().next_event()
        if isinstance(event, h11.Request) and before - len(self.trailing_data[0]) > self.max_head_bytes:
            raise h11.RemoteProtocolError("Request head too large", error_status_hint=431)
        return event


def _cancel(timer: asyncio.TimerHandle | None) -> None:
    if timer is not None:
        timer.cancel()


def bounded_protocol(max_connections: int, idle_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, refusing connections over `max_connections`, closing idle ones and refusing a request
    head over `MAX_HEADER_BYTES`."""

    class BoundedH11Protocol(H11Protocol):
        _refused = False
        _idle: asyncio.TimerHandle | None = None
        _stalled: asyncio.TimerHandle | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.conn = HeadBound(MAX_HEADER_BYTES)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.server_state.connections) >= max_connections:
                self._refused = True
                transport.write(_closing_response("503 Service Unavailable", "Too many open connections"))
                transport.close()
                logger.warning("refused a connection: %d open (max_connections)", max_connections)
                return
            super().connection_made(transport)
            self._arm_idle()

        def data_received(self, data: bytes) -> None:
            if not self._refused:
                super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return  # never registered with uvicorn
            self._disarm_idle()
            self._disarm_stalled()
            super().connection_lost(exc)

        def pause_writing(self) -> None:
            super().pause_writing()
            self._arm_stalled()

        def resume_writing(self) -> None:
            self._disarm_stalled()
            super().resume_writing()

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before and self.cycle is not None and self.cycle.more_body:
                # A request head came, its body still to come: the body has idle_timeout from its head, not what
                # was left of the idle time (a head 4.9 s into it had 0.1 s, and a body 0.3 s behind it got 408).
                self._arm_idle()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm_idle()

        def _arm_idle(self) -> None:
            self._disarm_idle()
            self._idle = self.loop.call_later(idle_timeout, self._idle_expired)

        def _disarm_idle(self) -> None:
            _cancel(self._idle)
            self._idle = None

        def _arm_stalled(self) -> None:
            """The client must take what waits to be written within `idle_timeout`: a request whose answer cannot
            be written is in progress for ever, and `close()` waits for the answer to be read first."""
            if self._stalled is None:
                self._stalled = self.loop.call_later(idle_timeout, self._stalled_expired)

        def _disarm_stalled(self) -> None:
            _cancel(self._stalled)
            self._stalled = None

        def _stalled_expired(self) -> None:
            self._stalled = None
            logger.warning("dropped a connection whose client read nothing of its answer for %g s", idle_timeout)
            self.transport.abort()

        def _idle_expired(self) -> None:
            self._idle = None
            if self.transport.is_closing():
                return
            cycle = self.cycle
            if cycle is not None and not cycle.response_complete:
                if not cycle.more_body:
                    return  # a request is in progress; the timer starts again when its response ends
                # Its body is still arriving, idle_timeout after its head: a client that stops sending it would
                # hold the connection (and one of max_connections) for ever.
                logger.warning("closed a connection whose request body did not arrive within %g s", idle_timeout)
                if not cycle.response_started:
                    self.transport.write(_closing_response("408 Request Timeout", "Request body not received in time"))
            self.transport.close()
            if self.transport.get_write_buffer_size():  # written only once the client reads it
                self._arm_stalled()

    return BoundedH11Protocol


def ensure_descriptors(max_connections: int) -> None:
    """Raise the soft open-file limit to fit `max_connections` (plus room for the build's files and
    the listening sockets) when the hard limit allows; otherwise say that accept() may fail first."""
    try:
        import resource
    except ImportError:  # not POSIX
        return
    needed = max_connections + DESCRIPTOR_MARGIN
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        target = soft
    if target < needed:
        logger.warning(
            "max_connections %d needs about %d open files, the limit is %d: connections may fail before it",
            max_connections,
            needed,
            target,
        )


def host_allowed(host: str, patterns: Sequence[str]) -> bool:
    """The SDK's matching (exact, or `HOST:*` = HOST and a port), with the port required to be digits."""
    if host in patterns:
        return True
    for pattern in patterns:
        if pattern.endswith(":*"):
            base = pattern[:-1]  # "HOST:"
            port = host[len(base) :]
            if host.startswith(base) and port.isdigit() and port.isascii():
                return True
    return False


class HostGuard:
    """ASGI middleware: every HTTP request needs a Host header matching one of `patterns`."""

    def __init__(self, app: Any, patterns: Sequence[str]) -> None:
        self.app = app
        self.patterns = tuple(patterns)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            # A host name is read without regard to case (RFC 9110), so Host and Origin reach the SDK's own check,
            # and its patterns (`Settings.security_hosts`), in lower case: 'MyHost.example' in --allowed-host
            # refused every client, whose URL parser sends 'myhost.example'.
            headers = [(n, v.lower() if n in (b"host", b"origin") else v) for n, v in scope["headers"]]
            scope = {**scope, "headers": headers}
            hosts = [value for name, value in headers if name == b"host"]
            host = hosts[0].decode("latin-1").strip() if len(hosts) == 1 else ""
            if not host:
                await send_text(send, 400, "Missing or empty Host header")
                return
            if not host_allowed(host, self.patterns):
                logger.warning("rejected a request for Host %r (not in allowed_hosts)", clip(host, 100, escape=False))
                await send_text(send, 421, "Invalid Host header")
                return
        await self.app(scope, receive, send)


async def send_response(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    """The two ASGI messages of a whole response, for every middleware that answers a request itself: each such
    answer is small or already read whole, so it is never streamed. Headers go out in the order given."""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def send_text(send: Any, status: int, text: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A short plain-text answer (a refusal, a redirect); `extra` headers follow its type and length."""
    body = text.encode("ascii")
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    await send_response(send, status, headers, body)


async def send_invalid_request(send: Any, problem: str) -> None:
    """A JSON-RPC `-32600` error with id null, in the status and body the SDK gives its own invalid requests."""
    error = {"code": INVALID_REQUEST, "message": f"Invalid Request: {problem}"}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send_response(send, 400, headers, body)


class WholeBody:
    """ASGI middleware: the app gets a request once its whole body has arrived, up to `limit` bytes.

    The SDK reads the body whole anyway (and answers 413 above its limit), so holding it here costs no
    more memory; a body announced or found to be larger than `limit` is handed on as it comes, for the
    SDK to refuse."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        announced = _content_length(scope) if scope["type"] == "http" else None
        if scope["type"] != "http" or (announced or 0) > self.limit:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more and size <= self.limit:
            message = await receive()
            if message["type"] == "http.disconnect":
                expected = f"of {announced} " if announced is not None else ""
                logger.info("a client hung up after %d %sbytes of its request body: nothing to answer", size, expected)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        body = b"".join(chunks)
        del chunks
        if not more and size <= self.limit:  # a whole body within the limit: a lone surrogate read as U+FFFD, as
            body = surrogates_replaced(body) or body  # stdio reads it (the SDK refuses it); a larger one gets its 413
        first: list[dict[str, Any]] = [{"type": "http.request", "body": body, "more_body": more}]
        # The id matters only if the SDK answers 202: a small body is kept until the first answer and read then;
        # a larger one (no notification is that large) is read now, and only what is wrong with its id is kept.
        small: bytes | None = body if len(body) <= ID_CHECK_BYTES else None
        problem = None if small is not None else id_problem(body)
        del body
        replaced = False

        async def replay() -> Any:
            return first.pop() if first else await receive()

        async def answer(message: dict[str, Any]) -> None:
            """The SDK's answers, but for its `202` to a request it took for a notification because of an id
            JSON-RPC does not allow: that request gets the -32600 stdio gives it instead (the SDK's own checks
            of path, Origin, headers and JSON have run by then)."""
            nonlocal small, problem, replaced
            if message["type"] == "http.response.start":
                accepted = message["status"] == 202
                problem = (id_problem(small) if small is not None else problem) if accepted else None
                small = None
                if problem:
                    replaced = True
                    await send_invalid_request(send, problem)
            if not replaced:
                await send(message)

        await self.app(scope, replay, answer)


def _content_length(scope: Any) -> int | None:
    values = [value for name, value in scope["headers"] if name == b"content-length"]
    if len(values) != 1 or not values[0].isdigit() or len(values[0]) > 18:
        return None  # absent, repeated or malformed: h11 has refused the request already, or the body is chunked
    return int(values[0])
