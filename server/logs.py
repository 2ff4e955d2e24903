"""Logging for `capidx serve`: to stderr, rate-limited, and never able to stall the server.

Two failures (issue #14, finding 8) shape this module:

- A storm of identical records (a traceback per failed `accept()` once descriptors ran out, a
  warning per rejected request) wrote 46 MB to stderr in 25 s. `RepeatLimiter` lets the first
  `burst` records from one call site through per `interval` seconds, drops the rest and says how
  many it dropped with the next record from that site. Records are keyed by call site, not by text,
  because the noisy ones embed what varies (a Host header, an address).
- With stderr a pipe nobody reads, one blocking write froze the event loop for good. Records are
  formatted where they are logged, then handed to a bounded queue that a daemon thread writes to
  stderr. A blocked stderr blocks that thread only: the queue fills, further lines are dropped and
  counted (the count is written once stderr drains), and the server keeps answering.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import selectors
import sys
import threading
import time
from collections.abc import Callable, Hashable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, TextIO

from capidx.schema.printable import visible

PREFIX = "capidx serve: "
FORMAT = PREFIX + "%(levelname)s: %(message)s"
BURST = 10  # records per call site per interval
INTERVAL = 60.0  # seconds
QUEUE_LINES = 1000  # formatted records waiting for stderr at most
STOP_WAIT = 2.0  # seconds to let the writer drain at exit (it may be stuck on a full pipe)


@dataclass
class _Window:
    start: float
    admitted: int = 1
    suppressed: int = 0


@dataclass
class RepeatLimiter:
    """Admit at most `burst` records per key per `interval` seconds; count the rest. Not thread-safe
    (a `logging.Handler` calls it under its own lock)."""

    burst: int = BURST
    interval: float = INTERVAL
    clock: Callable[[], float] = time.monotonic
    _windows: dict[Hashable, _Window] = field(default_factory=dict)

    def admit(self, key: Hashable) -> tuple[bool, int]:
        """(emit this record?, how many records of `key` were suppressed before it, to report first)."""
        now = self.clock()
        window = self._windows.get(key)
        if window is None or now - window.start >= self.interval:
            self._windows[key] = _Window(now)
            return True, window.suppressed if window else 0
        if window.admitted < self.burst:
            window.admitted += 1
            return True, 0
        window.suppressed += 1
        return False, 0


class PrintableFormatter(logging.Formatter):
    """`FORMAT`, printed as the compiler prints what it quotes (`visible`): a log line quotes paths, a reload's
    error, a client's Host header, and a line break there would start a forged line (a GitHub workflow command
    `::error …` where the server runs in CI), an escape sequence reach the terminal. A record is one line; a traceback
    keeps its lines, each `visible` and starting `capidx serve: ` as the records do, so none of them can be taken
    for a line of its own."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return visible(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        return _prefixed(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        return _prefixed(super().formatStack(stack_info))


def _prefixed(text: str) -> str:
    return "\n".join(f"{PREFIX}{visible(line)}" for line in text.split("\n"))


def call_site(record: logging.LogRecord) -> Hashable:
    return record.name, record.levelno, record.pathname, record.lineno


class QueueingHandler(logging.Handler):
    """Rate-limits records, formats them, and queues the text for `writer` without ever blocking."""

    def __init__(self, lines: queue.Queue[str | None], limiter: RepeatLimiter) -> None:
        super().__init__()
        self.lines = lines
        self.limiter = limiter
        self.dropped = 0  # lines lost to a full queue since the last one that got through

    def emit(self, record: logging.LogRecord) -> None:
        admitted, suppressed = self.limiter.admit(call_site(record))
        if not admitted:
            return
        if suppressed:
            self._put(
                f"capidx serve: {record.levelname}: {suppressed} more like the next one suppressed "
                f"(at most {self.limiter.burst} per {self.limiter.interval:g} s from one place)"
            )
        try:
            text = self.format(record)
        except Exception:  # a broken record must not take the server down
            text = f"capidx serve: {record.levelname}: (unformattable log record from {record.name})"
        self._put(text)

    def _put(self, text: str) -> None:
        if self.dropped and self._offer(f"capidx serve: WARNING: {self.dropped} log line(s) dropped: stderr was full"):
            self.dropped = 0
        if not self._offer(text):
            self.dropped += 1

    def _offer(self, text: str) -> bool:
        try:
            self.lines.put_nowait(text)
        except queue.Full:
            return False
        return True


def _write_lines(lines: queue.Queue[str | None], stream: TextIO) -> None:
    while (text := lines.get()) is not None:
        with suppress(OSError, ValueError):  # stderr closed: nothing left to tell
            _write_line(stream, text + "\n")


def _write_line(stream: TextIO, text: str) -> None:
    """Write `text` to `stream`, waiting while a stderr the parent left non-blocking is full (`write_all`).
    Through the text layer a write failing with EAGAIN loses what the layer held, and was taken for a closed stderr:
    every line that did not fit was dropped, uncounted. So a non-blocking stderr is written to its descriptor, after
    what the stream holds; a blocking one (or a stream without a descriptor) as before."""
    fd = _non_blocking_descriptor(stream)
    if fd is None:
        stream.write(text)
        stream.flush()
        return
    while True:  # what the stream holds (anything else written to it) first; a full buffer keeps it on EAGAIN
        try:
            stream.flush()
            break
        except BlockingIOError:
            wait_until_ready(fd, writable=True)
    write_all(fd, text.encode(stream.encoding or "utf-8", stream.errors or "strict"))


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd`. A descriptor the parent left non-blocking (O_NONBLOCK is shared with it, so it
    is not changed here) is full for now, not closed, when a write fails with EAGAIN: wait until it is writable, then
    write the rest. The stdout writer (server/stdio.py) and the log writer share it."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            wait_until_ready(fd, writable=True)


# Whether `select.poll` waits on every kind of descriptor: macOS's answers a terminal or another device with POLLNVAL
# at once (its manual: "does not support devices"), so a wait there would return at once, again and again.
_POLL_WORKS = hasattr(select, "poll") and sys.platform != "darwin"


def wait_until_ready(fd: int, *, writable: bool = False) -> None:
    """Wait until `fd` (left non-blocking by the parent) can be read, or with `writable` written; also when it is
    closed or fails, so that the read or write that follows returns its end or its error.

    `select.select` alone refused a descriptor numbered FD_SETSIZE (1024) or more with ValueError, and a process may
    hold that many (a parent passing a high-numbered stdio, a server with many files open). `poll` has no such limit
    and needs no descriptor of its own (it still waits when descriptors have run out). Where poll cannot be trusted
    (`_POLL_WORKS`) select is kept for the descriptors it takes, and the platform's selector (kqueue) waits on the
    others."""
    if _POLL_WORKS:
        waiting = select.poll()
        waiting.register(fd, select.POLLOUT if writable else select.POLLIN)
        waiting.poll()
        return
    readers, writers = ([], [fd]) if writable else ([fd], [])
    try:
        select.select(readers, writers, [])
    except ValueError:  # numbered FD_SETSIZE or more
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_WRITE if writable else selectors.EVENT_READ)
            selector.select()


def _non_blocking_descriptor(stream: TextIO) -> int | None:
    """`stream`'s file descriptor when it is non-blocking; None when it blocks or there is none to ask."""
    try:
        fd = stream.fileno()
        return None if os.get_blocking(fd) else fd
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's stream), closed, or no os.get_blocking
        return None


def start(stream: TextIO, limiter: RepeatLimiter | None = None) -> tuple[QueueingHandler, Callable[[], None]]:
    """A handler writing to `stream` through a daemon thread, and the function that stops it."""
    lines: queue.Queue[str | None] = queue.Queue(QUEUE_LINES)
    handler = QueueingHandler(lines, limiter or RepeatLimiter())
    handler.setFormatter(PrintableFormatter(FORMAT))
    writer = threading.Thread(target=_write_lines, args=(lines, stream), name="capidx-log", daemon=True)
    writer.start()

    def stop() -> None:
        try:
            lines.put(None, timeout=STOP_WAIT)
        except queue.Full:
            return  # stderr is stuck: the daemon thread dies with the process
        writer.join(STOP_WAIT)

    return handler, stop


def configure_logging() -> Callable[[], None]:
    """Log to stderr through `start`; returns the function that flushes and stops it. Leaves the root
    logger alone when something (pytest, an embedding app) already configured it."""
    logging.getLogger("capidx.server").setLevel(logging.INFO)
    root = logging.getLogger()
    if root.handlers:
        return lambda: None
    handler, stop = start(sys.stderr)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)

    def unconfigure() -> None:
        root.removeHandler(handler)
        stop()

    return unconfigure
