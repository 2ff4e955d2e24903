"""The stdio transport of `capidx serve`, in place of the SDK's `mcp.server.stdio.stdio_server`.

Why our own (checked against mcp 2.3): the SDK reads stdin through a text wrapper's line iterator, so
one line is held whole however long it is (a 400 MiB line took 882 MiB), and a line that is not a
JSON-RPC message becomes an exception that the dispatcher logs at debug level and drops, so the
client never hears back and waits forever (issue #14, finding 9).

Here stdin is read in chunks and cut into lines by `LineSplitter`, which keeps at most
`max_line_bytes` of one line and counts the rest as it streams past. Every line gets an answer:

- longer than the bound: discarded, JSON-RPC error -32600 (invalid request) with id null, saying
  how long it was and what the bound is;
- not JSON (or not UTF-8): -32700 (parse error), id null; a lone surrogate escape ('\\ud83d', valid JSON the
  SDK's parser refuses) is read as U+FFFD and the request served;
- JSON but not a JSON-RPC 2.0 message: -32600, with the message's id when it has a usable one;
- a request whose id is not a string or an integer (an object, an array, null, true, 1.5): -32600,
  id null. The SDK's message model reads such a line as a notification, which gets no answer;
- an integer longer than the JSON parser takes (4,300 digits), or arrays and objects nested deeper than
  it takes (about 200 levels; the standard library reads them): -32600 saying so, not "not JSON".

Blank lines are skipped. The server then goes on reading. Like the SDK's transport, this one points
fd 1 at stderr while it runs and writes the protocol to a private duplicate, so stray output from
anything in the process cannot corrupt the channel; fd 1 is restored on exit.

What a client can make it hold is bounded too. The SDK starts a task for every request it is given, and a
reply waits in its task until it is written, so requests sent faster than they are answered (or by a client
that reads no reply) would each cost memory, without end. At most `MAX_IN_FLIGHT` requests are passed to
the server and not yet answered, of at most `MAX_IN_FLIGHT_BYTES` together (one request is passed whatever its size):
with that many, the reader reads no more of stdin until one is answered or cancelled, and the client's writes wait on
the full pipe. The bytes are bounded too because a request is held parsed until it is answered, and parsed JSON takes
up to some 25 times its bytes: 32 requests of 4 MiB of `[]` from a client that read no reply held 3.4 GB. Replies
handed to the writer thread and not yet written are at most `PENDING_REPLIES` more. A `subscriptions/listen`, which
lasts until the client cancels it, takes no place among the `MAX_IN_FLIGHT` (`HOLD_NO_PLACE`): the SDK bounds open
listens itself, and the server the size of each (`app.MAX_LISTEN_PARAMS_BYTES`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import select
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from anyio.lowlevel import EventLoopToken
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from pydantic import ValidationError

from capidx.server.jsonrpc_id import id_problem, loaded, surrogates_replaced, usable_id
from capidx.server.logs import wait_until_ready, write_all

logger = logging.getLogger("capidx.server")

CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line that was longer than the bound; only its length was kept."""

    size: int


class LineSplitter:
    """Cuts a byte stream into lines (without the newline), holding at most `limit` bytes of one line."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._line = bytearray()
        self._skipped = 0  # > 0 while the current line is over the limit: its length so far

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The lines that `chunk` completes."""
        done: list[bytes | Oversized] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._take(chunk[start:end])
            done.append(self._finish())
            start = end + 1
        self._take(chunk[start:])
        return done

    def end(self) -> bytes | Oversized | None:
        """At end of input: the last line if it had no newline."""
        if not self._line and not self._skipped:
            return None
        return self._finish()

    def _take(self, piece: bytes) -> None:
        if self._skipped:
            self._skipped += len(piece)
        elif len(self._line) + len(piece) > self.limit:
            self._skipped = len(self._line) + len(piece)
            self._line = bytearray()  # release what was held, not just empty it
        else:
            self._line += piece

    def _finish(self) -> bytes | Oversized:
        if self._skipped:
            size, self._skipped = self._skipped, 0
            return Oversized(size)
        line, self._line = bytes(self._line), bytearray()
        return line


@dataclass(frozen=True, slots=True)
class Reply:
    """The error to answer an unreadable line with (it never reaches the server)."""

    error: types.JSONRPCError


def parse_line(line: bytes | Oversized, limit: int) -> types.JSONRPCMessage | Reply | None:
    """The message on one line, the error to answer it with, or None for a blank line."""
    if isinstance(line, Oversized):
        return _error(None, types.INVALID_REQUEST, f"Message too large: {line.size} bytes (limit {limit}); discarded")
    if not line.strip():
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as error:
        if any(item["type"] == "json_invalid" for item in error.errors()):
            replaced = surrogates_replaced(line)  # holds no lone surrogate: parsed once more at most
            return parse_line(replaced, limit) if replaced is not None else _unparsed(line)
        return _error(_request_id(line), types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
    except ValueError:  # e.g. not UTF-8
        return _error(None, types.PARSE_ERROR, NOT_JSON)
    if isinstance(message, types.JSONRPCNotification) and (problem := id_problem(line)):
        return _error(None, types.INVALID_REQUEST, f"Invalid Request: {problem}")
    return message


NOT_JSON = "Parse error: the line is not valid JSON"
INT_DIGITS = 4300  # the longest integer the JSON parser takes (Python's default for int(), which pydantic matches)


@dataclass(frozen=True, slots=True)
class _TooLong:
    """Stands for an integer too long to read, in a second, slower parse: how many digits it has."""

    digits: int


def _unparsed(line: bytes) -> Reply:
    """The answer to a line the JSON parser refused: -32700, unless the line is JSON whose only fault is an
    integer too long to read or a nesting too deep to read, which is an invalid request (valid JSON) and is
    named, with the request's id."""
    too_long: list[_TooLong] = []
    constants: list[str] = []

    def read_int(text: str) -> int | _TooLong:
        if len(text) <= INT_DIGITS:
            return int(text)
        too_long.append(_TooLong(len(text.lstrip("-"))))
        return too_long[-1]

    try:
        data = json.loads(line, parse_int=read_int, parse_constant=constants.append)
    except (ValueError, RecursionError):
        return _error(None, types.PARSE_ERROR, NOT_JSON)
    request_id = data.get("id") if isinstance(data, dict) else None
    if isinstance(request_id, _TooLong):
        problem = f"the id is an integer of {request_id.digits} digits; an id is a string or an integer of at most"
        return _error(None, types.INVALID_REQUEST, f"Invalid Request: {problem} {INT_DIGITS} digits")
    usable = usable_id(request_id)
    if too_long:
        longest = max(number.digits for number in too_long)
        problem = f"a number of {longest} digits is too long to read (at most {INT_DIGITS} digits)"
        return _error(usable, types.INVALID_REQUEST, f"Invalid Request: {problem}")
    if not constants and (depth := _depth(data)) >= DEEP:
        problem = f"the message is nested too deeply ({depth} levels) to read"
        return _error(usable, types.INVALID_REQUEST, f"Invalid Request: {problem}")
    return _error(None, types.PARSE_ERROR, NOT_JSON)  # valid to the standard library only: not JSON


DEEP = 100  # the protocol's parser stops near 200 levels; JSON it refused that is this deep was refused for that


def _depth(data: object) -> int:
    """How deeply arrays and objects nest in `data` (a loop: the value may be nested past the recursion limit)."""
    deepest, pending = 0, [(data, 1)]
    while pending:
        value, level = pending.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, level)
            pending += [(item, level + 1) for item in (value.values() if isinstance(value, dict) else value)]
    return deepest


def _error(request_id: Any, code: int, message: str) -> Reply:
    return Reply(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)))


def _request_id(line: bytes) -> str | int | None:
    """The id of an invalid request when it has a valid one, so the client can match the error."""
    data = loaded(line)
    return usable_id(data.get("id")) if isinstance(data, dict) else None


@asynccontextmanager
async def stdio_transport(
    max_line_bytes: int, stdin_fd: int = 0, stdout_fd: int = 1
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]]:
    """(read stream, write stream) for `Server.run`, over the process's stdin and stdout."""
    out, restore = _claim_stdout(stdout_fd)
    writer = _Writer(out, anyio.lowlevel.current_token())
    in_flight = _InFlight(MAX_IN_FLIGHT, MAX_IN_FLIGHT_BYTES)
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage | Reply](0)
    try:
        async with anyio.create_task_group() as tg:
            reading = anyio.CancelScope()
            tg.start_soon(_read, reading, stdin_fd, max_line_bytes, read_send, write_send.clone(), in_flight)
            tg.start_soon(_write, write_recv, writer, in_flight)
            try:
                yield read_recv, write_send
            finally:
                reading.cancel()  # the server is done: stop reading; the writer drains what is queued
                write_send.close()
    finally:
        restore()
        if out != stdout_fd and writer.finished:  # our duplicate; a writer stuck on a full pipe keeps it
            os.close(out)


async def _read(
    scope: anyio.CancelScope,
    fd: int,
    limit: int,
    messages: MemoryObjectSendStream[SessionMessage | Exception],
    replies: MemoryObjectSendStream[SessionMessage | Reply],
    in_flight: _InFlight,
) -> None:
    splitter = LineSplitter(limit)
    chunks_in, chunks = anyio.create_memory_object_stream[bytes](0)
    token = anyio.lowlevel.current_token()
    threading.Thread(target=_pump, args=(fd, chunks_in, token), name="capidx-stdin", daemon=True).start()
    room = partial(_wait_for_room, in_flight, fd)
    with scope:
        async with messages, replies, chunks:
            async for chunk in chunks:  # ends when the pump closes its end
                for line in splitter.feed(chunk):
                    await _deliver(parse_line(line, limit), _size(line), messages, replies, in_flight, room)
            if (last := splitter.end()) is not None:
                await _deliver(parse_line(last, limit), _size(last), messages, replies, in_flight, room)
            # Closing the stream makes the SDK cancel the handlers still running: wait for them first
            await in_flight.settled()


def _pump(fd: int, chunks: MemoryObjectSendStream[bytes], token: EventLoopToken) -> None:
    """Read stdin in a daemon thread and hand each chunk to the event loop. However reading ends, the
    stream is closed: that is how the reader learns that stdin has ended.

    Not an AnyIO worker thread: a read blocked on a terminal or an idle pipe cannot be interrupted,
    and the interpreter waits for every non-daemon thread at exit, so a stopped server used to wait
    for one more line (Enter) before it ended. A daemon thread ends with the process."""
    try:
        while chunk := _read_chunk(fd):
            anyio.from_thread.run(chunks.send, chunk, token=token)
    except Exception:  # the server has stopped reading (stream closed, event loop gone): nobody to hand it to
        return
    finally:
        _in_loop(chunks.close, token)


def _read_chunk(fd: int) -> bytes:
    """The next bytes of stdin; b"" at its end, or when it cannot be read at all (closed, not readable).

    A stdin left non-blocking by the parent (O_NONBLOCK is shared with it, so it is not changed here) has
    no bytes yet rather than no more: wait until it is readable, then read again."""
    while True:
        try:
            return os.read(fd, CHUNK_BYTES)
        except BlockingIOError:
            wait_until_ready(fd)
        except OSError as error:
            logger.warning("stdin cannot be read (%s): stopping", error.strerror or error)
            return b""


def _size(line: bytes | Oversized) -> int:
    """The bytes of a line passed on (an oversized one is answered by the reader: none)."""
    return 0 if isinstance(line, Oversized) else len(line)


async def _deliver(
    parsed: types.JSONRPCMessage | Reply | None,
    size: int,
    messages: MemoryObjectSendStream[SessionMessage | Exception],
    replies: MemoryObjectSendStream[SessionMessage | Reply],
    in_flight: _InFlight,
    room: Callable[[int], Awaitable[bool]],
) -> None:
    if isinstance(parsed, Reply):
        logger.warning("stdin: %s", parsed.error.error.message)
        await replies.send(parsed)
    elif isinstance(parsed, types.JSONRPCRequest) and parsed.method not in HOLD_NO_PLACE:
        # stdin is not read meanwhile: the client's writes wait on the full pipe
        if not await room(size):
            await replies.send(_error(parsed.id, types.CONNECTION_CLOSED, ENDED))
            return
        # The SDK answers nothing to a request the client cancelled, and says so through this hook
        unanswered = ServerMessageMetadata(on_request_unanswered=in_flight.sent(parsed.id, size))
        await messages.send(SessionMessage(parsed, metadata=unanswered))
    elif parsed is not None:
        await messages.send(SessionMessage(parsed))


EOF_GRACE_SECONDS = 5  # at the end of stdin, how long requests still being handled may take to be answered
HANG_UP_CHECK_SECONDS = 0.5  # while the reader waits for room: how often it looks whether stdin was closed
# Requests passed to the server and not answered yet; stdin is not read beyond that. Fixed, not `max_connections`
# (HTTP's, whose minimum is 1): one stdio client.
MAX_IN_FLIGHT = 32
# The bytes of the requests passed to the server and not answered yet, at most (a request is passed whatever its size
# when none is in flight): held parsed until answered, JSON takes up to some 25 times its bytes (4 MiB of `[]`, 100 MB).
MAX_IN_FLIGHT_BYTES = 4 * 1024 * 1024
# Requests that last until the client ends them, and hold no place among `MAX_IN_FLIGHT`: the client ends one with
# notifications/cancelled, which a reader waiting for room would never read; nor are they waited for at the end of
# stdin. Bounded by the SDK instead (its ListenHandler's max_subscriptions, 1024: one more is refused).
HOLD_NO_PLACE = frozenset({"subscriptions/listen"})


ENDED = "Connection closed: stdin was closed while the server was still busy with earlier requests"


async def _wait_for_room(in_flight: _InFlight, fd: int, size: int) -> bool:
    """Wait until the server may be given one more request, of `size` bytes: True then, False if it may not be given
    any more.

    Meanwhile stdin is not read, so its end would not be seen, and requests that are never answered (a handler
    that never returns) would hold the server after the client closed it. Whether it has is looked at every
    `HANG_UP_CHECK_SECONDS`; once it has, the requests in flight have `EOF_GRACE_SECONDS` more, as at the end of
    stdin. Past that, the session is ending: what is left of stdin (finite: the client closed it) is still read,
    and each request in it answered with an error, as the server answers those in flight once it ends."""
    while not in_flight.fits(size):
        if anyio.current_time() >= in_flight.deadline:
            return False
        with anyio.move_on_after(HANG_UP_CHECK_SECONDS):
            await in_flight.room(size)
        if not in_flight.fits(size) and _hung_up(fd):
            in_flight.end_grace(EOF_GRACE_SECONDS)
    return True


def _hung_up(fd: int) -> bool:
    """Whether the client closed its end of `fd`, though bytes may be left to read: a pipe with no writer left, a
    socket shut for writing (POLLRDHUP, Linux). False where poll cannot tell (no poll, a file, a terminal on macOS)."""
    if not hasattr(select, "poll"):
        return False
    ended = select.POLLHUP | getattr(select, "POLLRDHUP", 0)
    poller = select.poll()
    poller.register(fd, ended)
    try:
        return any(events & ended for _, events in poller.poll(0))
    except OSError:
        return False


class _InFlight:
    """The requests passed to the server that hold a place and are not answered yet, counted by id (a client may
    reuse one), with their bytes. At most `limit`, of at most `byte_limit` bytes together (one request whatever its
    size, when none is in flight): the reader waits for `room` before it passes on another. `HOLD_NO_PLACE` requests
    are not counted: only the client or the end of the session ends one, so neither `room` nor `settled` waits for
    them.

    A request is answered when its reply is handed to the writer, or when the server settles it without a reply
    (the client cancelled it); both free its place. A reply names only the id: one that ends a listen sharing its
    id with a counted request frees that request's place, once, so no place is lost or gained for good."""

    def __init__(self, limit: int, byte_limit: int = 0) -> None:
        self._limit = limit
        self._byte_limit = byte_limit  # 0: no bound on the bytes
        self._holding: dict[str | int, list[int]] = {}  # id -> the bytes of each request with it holding a place
        self._count = 0
        self._bytes = 0
        self._idle = _event(True)
        self._change = anyio.Event()  # set, and replaced, at every change
        self.deadline = math.inf  # when requests in flight stop being waited for (`end_grace`)

    def sent(self, request_id: str | int, size: int = 0) -> Callable[[], Awaitable[None]]:
        """Count one more request with this id, of `size` bytes; returns what to call if the server settles it
        without a reply."""
        self._holding.setdefault(request_id, []).append(size)
        self._count += 1
        self._bytes += size
        self._changed()

        async def unanswered() -> None:
            self.answered(request_id)

        return unanswered

    def answered(self, request_id: Any) -> None:
        """One request with this id is done (an id nobody asked with, such as a reply to a line that could not be
        read, changes nothing)."""
        sizes = self._holding.get(request_id)
        if not sizes:
            return
        self._count -= 1
        self._bytes -= sizes.pop(0)
        if not sizes:
            del self._holding[request_id]
        self._changed()

    def fits(self, size: int) -> bool:
        """Whether one more request of `size` bytes may be passed on: fewer than `limit` hold a place, and its bytes
        keep them within `byte_limit` (or none is in flight)."""
        if self._count >= self._limit:
            return False
        return not self._byte_limit or not self._count or self._bytes + size <= self._byte_limit

    async def room(self, size: int = 0) -> None:
        """Wait until one more request of `size` bytes `fits`."""
        while not self.fits(size):
            await self._change.wait()

    def end_grace(self, seconds: float) -> None:
        """The client has gone: requests in flight are waited for `seconds` more at most (no more than already)."""
        self.deadline = min(self.deadline, anyio.current_time() + seconds)

    async def settled(self) -> None:
        """At the end of stdin: wait until every request that holds a place is answered, or `EOF_GRACE_SECONDS` (one
        the server never answers must not hold it), or less if the grace began when the client was seen to go. Open
        listens are not waited for: only the client or the server's end ends one, so each kept a server that had
        nothing left to do running for the whole grace; the end of the session answers them."""
        self.end_grace(EOF_GRACE_SECONDS)
        with anyio.move_on_after(self.deadline - anyio.current_time()):
            await self._idle.wait()

    def _changed(self) -> None:
        self._idle = _event(not self._holding, self._idle)
        self._change.set()  # wakes whoever waits for room, to look again
        self._change = anyio.Event()


def _event(state: bool, event: anyio.Event | None = None) -> anyio.Event:
    """An event that is set while `state` holds: `event` set, or a fresh unset one in its place once it no longer
    holds (an event cannot be cleared)."""
    if event is None or (event.is_set() and not state):
        event = anyio.Event()
    if state:
        event.set()
    return event


async def _write(
    messages: MemoryObjectReceiveStream[SessionMessage | Reply], writer: _Writer, in_flight: _InFlight
) -> None:
    """Hand every reply to the writer thread, in order. A reply of the server's frees its request's place once it
    is handed over; the reader's own replies (to lines that never reached the server) hold none."""
    async with messages:
        async for item in messages:
            message = item.error if isinstance(item, Reply) else item.message
            await writer.write(message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n")
            if not isinstance(item, Reply) and isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                in_flight.answered(message.id)
    await writer.drain()


PENDING_REPLIES = 8  # replies handed to the writer thread and not yet written; the server waits beyond that


class _Writer:
    """Writes replies to stdout in a daemon thread, in order, so the event loop never waits on a blocked write.

    Why: a client that stops reading stdout fills the pipe and write() blocks. In an AnyIO worker thread
    that blocked write held a stop signal forever (cancelling waits for the thread, and the interpreter
    joins such threads at exit). The event loop waits here only on `room` and `done`, which cancellation
    interrupts, and a daemon thread ends with the process."""

    def __init__(self, fd: int, token: EventLoopToken) -> None:
        self._fd = fd
        self._token = token
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._room = anyio.Semaphore(PENDING_REPLIES)
        self._done = anyio.Event()
        self.finished = False  # True once everything handed over is written (or dropped) and the thread ended
        threading.Thread(target=self._run, name="capidx-stdout", daemon=True).start()

    async def write(self, data: bytes) -> None:
        await self._room.acquire()
        self._queue.put(data)

    async def drain(self) -> None:
        """Wait until everything handed over is written; the thread then ends."""
        self._queue.put(None)
        await self._done.wait()

    def _run(self) -> None:
        broken = False
        while (data := self._queue.get()) is not None:
            if not broken:
                try:
                    write_all(self._fd, data)
                except OSError as error:  # the client closed stdout: nobody is left to answer
                    broken = True
                    logger.warning("stdout closed (%s): answers are dropped until stdin ends", error.strerror or error)
            _in_loop(self._room.release, self._token)
        self.finished = True
        _in_loop(self._done.set, self._token)


def _in_loop(function: Callable[[], object], token: EventLoopToken) -> None:
    """Run `function` in the event loop from a thread of ours, unless the loop is gone already."""
    with suppress(Exception):
        anyio.from_thread.run_sync(function, token=token)


def _claim_stdout(fd: int) -> tuple[int, Callable[[], None]]:
    """A private duplicate of `fd` for the protocol (the caller closes it when done), with `fd` itself pointed at
    stderr meanwhile; and the function that points `fd` back."""
    try:
        private = _dup_above_std(fd)
        os.dup2(2, fd)
    except OSError:  # no descriptors to spare: write the protocol to fd itself
        return fd, lambda: None

    def restore() -> None:
        try:
            os.dup2(private, fd)
        except OSError:
            logger.debug("could not restore stdout")

    return private, restore


def _dup_above_std(fd: int) -> int:
    """A non-inheritable duplicate numbered 3 or more, so it cannot become stdin when fd 0 is closed."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return os.dup(fd)
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
