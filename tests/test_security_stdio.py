"""`capidx serve` over stdio under lines nobody should send, and what errors echo (issue #14, finding 9).

The subprocess tests write raw lines and read raw replies: an SDK client would refuse to send most of
them. Every read has a deadline; nothing asserts how long something took.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import select
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED
from server_support import (
    PREFIX,
    capidx_command,
    connect,
    serving_stdio,
)

from capidx.server import logs
from capidx.server.jsonrpc_id import MAX_SURROGATES, surrogates_replaced
from capidx.server.logs import write_all
from capidx.server.stdio import (
    CHUNK_BYTES,
    MAX_IN_FLIGHT,
    PENDING_REPLIES,
    LineSplitter,
    Oversized,
    Reply,
    _read_chunk,
    parse_line,
    stdio_transport,
)

PING = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n'
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


class Stdio:
    """A `capidx serve` subprocess: write raw bytes, read its stdout one JSON line at a time."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self, timeout: float = 60) -> dict[str, Any]:
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout} s") from None

    def peak_rss_kib(self) -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


@contextmanager
def stdio_server(build: Path, env: dict[str, str] | None = None, *, initialize: bool = True) -> Iterator[Stdio]:
    with serving_stdio(build, "--no-reload", env={**os.environ, **(env or {})}) as proc:
        server = Stdio(proc)
        if initialize:
            server.send(json.dumps(INITIALIZE).encode() + b"\n")
            assert server.reply()["id"] == 0
        yield server


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "set_blocking"), reason="needs a non-blocking pipe")
def test_a_non_blocking_stdin_is_waited_on_not_taken_for_its_end(hand_build: Path) -> None:
    """A parent may leave stdin O_NONBLOCK: a read with nothing to read yet fails with EAGAIN, which used to
    end the server (exit 0) before the first message."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    with serving_stdio(hand_build, "--no-reload", stdin=read_end) as proc:
        os.close(read_end)
        server = Stdio(proc)
        os.write(write_end, json.dumps(INITIALIZE).encode() + b"\n")
        assert server.reply()["id"] == 0
        os.write(write_end, PING % 1)
        assert server.reply() == {"jsonrpc": "2.0", "id": 1, "result": {}}
        os.close(write_end)
        assert proc.wait(timeout=60) == 0  # its real end still ends it


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "set_blocking"), reason="needs a non-blocking pipe")
def test_a_non_blocking_stdout_is_waited_on_when_full_not_taken_for_closed(hand_build: Path) -> None:
    """A parent may leave stdout O_NONBLOCK too: a reply larger than what the pipe holds gets EAGAIN once the pipe
    is full, which used to be taken for a closed stdout: the reply was cut after what fitted and every later
    answer dropped. The reply to a ping echoes its id, so an id of 200,000 characters makes one bigger than a pipe
    holds; the client reads only once the pipe is full."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    big = "x" * 200_000
    with serving_stdio(hand_build, "--no-reload", stdout=write_end) as proc:
        os.close(write_end)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": big, "method": "ping"}).encode() + b"\n")
        proc.stdin.write(PING % 2)
        proc.stdin.flush()
        _wait_until_full(read_end)
        lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=_lines, args=(read_end, lines), daemon=True).start()
        try:
            got = [json.loads(lines.get(timeout=30)) for _ in range(3)]
        except queue.Empty:
            raise AssertionError("answers were dropped") from None
        assert [reply["id"] for reply in got] == [0, big, 2]
        assert got[1:] == [{"jsonrpc": "2.0", "id": big, "result": {}}, {"jsonrpc": "2.0", "id": 2, "result": {}}]
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


def _lines(fd: int, lines: queue.Queue[bytes]) -> None:
    """Every line read from `fd`, until its end (the server is killed at the latest when the test ends)."""
    with os.fdopen(fd, "rb") as replies:
        for line in replies:
            lines.put(line)


def _wait_until_full(fd: int, timeout: float = 60) -> None:
    """Wait, reading nothing, until the pipe at `fd` holds at least a page and has stopped filling: the server's
    next write finds it full."""
    deadline = time.monotonic() + timeout
    last, steady = -1, 0
    while steady < 10:
        assert time.monotonic() < deadline, "the server never filled the pipe"
        buffer = bytearray(4)
        fcntl.ioctl(fd, termios.FIONREAD, buffer)
        held = int.from_bytes(buffer, sys.byteorder)
        steady = steady + 1 if held == last and held >= 4096 else 0
        last = held
        time.sleep(0.05)


PAST_FD_SETSIZE = 1100  # select() takes descriptors below FD_SETSIZE (1024) only


@contextmanager
def _renumbered_past_fd_setsize(fd: int) -> Iterator[int]:
    """`fd` moved to a free number of PAST_FD_SETSIZE or more (the open-files limit raised for it if need be, and put
    back after); skips the test when the limit cannot be raised that far."""
    resource = pytest.importorskip("resource", reason="raises the open-files limit with the resource module")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    high = next(number for number in range(PAST_FD_SETSIZE, PAST_FD_SETSIZE + 1000) if not _is_open(number))
    if soft != resource.RLIM_INFINITY and soft <= high:
        if hard != resource.RLIM_INFINITY and hard <= high:
            pytest.skip(f"the open-files limit ({hard}) does not allow descriptor {high}")
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (high + 1, hard))
        except (OSError, ValueError) as error:
            pytest.skip(f"cannot raise the open-files limit past {high}: {error}")
    try:
        os.dup2(fd, high, inheritable=False)
        os.close(fd)
        yield high
    finally:
        with suppress(OSError):
            os.close(high)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _is_open(fd: int) -> bool:
    try:
        fcntl.fcntl(fd, fcntl.F_GETFD)
    except OSError:
        return False
    return True


@pytest.fixture(params=[True, False], ids=["poll", "no-poll"])
def waiting(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways `wait_until_ready` waits: with poll, and as where poll cannot be trusted (macOS)."""
    if request.param and not hasattr(select, "poll"):
        pytest.skip("no select.poll here")
    monkeypatch.setattr(logs, "_POLL_WORKS", request.param)


@pytest.mark.skipif(not hasattr(os, "set_blocking"), reason="needs a non-blocking pipe")
@pytest.mark.usefixtures("waiting")
def test_a_non_blocking_stdin_numbered_past_fd_setsize_is_waited_on() -> None:
    """select() refuses a descriptor numbered 1024 (FD_SETSIZE) or more with ValueError: a non-blocking stdin so
    numbered ended the reader thread at its first wait, and the server took it for the end of stdin. The read starts
    on an empty pipe; the bytes are written a moment later."""
    read_end, write_end = os.pipe()
    with _renumbered_past_fd_setsize(read_end) as fd:
        os.set_blocking(fd, False)
        read: queue.Queue[bytes | BaseException] = queue.Queue()

        def reader() -> None:
            try:
                read.put(_read_chunk(fd))
            except BaseException as error:  # handed to the test, which says what it was
                read.put(error)

        threading.Thread(target=reader, daemon=True).start()
        time.sleep(0.2)  # the reader finds the pipe empty (EAGAIN) and waits
        os.write(write_end, b"late bytes")
        try:
            got = read.get(timeout=30)
        finally:
            os.close(write_end)  # ends a reader still waiting, whatever happened
        assert got == b"late bytes"


@pytest.mark.skipif(not hasattr(os, "set_blocking"), reason="needs a non-blocking pipe")
@pytest.mark.usefixtures("waiting")
def test_a_full_non_blocking_stdout_numbered_past_fd_setsize_is_waited_on() -> None:
    """The same for the writer of replies and log lines (`write_all`): its wait on a full pipe raised ValueError, and
    the reply was dropped. The pipe is full before the write starts; it is read a moment later."""
    read_end, write_end = os.pipe()
    with _renumbered_past_fd_setsize(write_end) as fd:
        os.set_blocking(fd, False)
        with suppress(BlockingIOError):
            while True:  # fill the pipe: the first write of `write_all` fails with EAGAIN
                os.write(fd, b"f" * 4096)
        done: queue.Queue[BaseException | None] = queue.Queue()

        def writer() -> None:
            try:
                write_all(fd, b"reply\n")
                done.put(None)
            except BaseException as error:  # handed to the test, which says what it was
                done.put(error)

        drained = bytearray()

        def drain() -> None:
            with os.fdopen(read_end, "rb") as replies:
                drained.extend(replies.read())  # to the end of the pipe

        threading.Thread(target=writer, daemon=True).start()
        time.sleep(0.2)
        draining = threading.Thread(target=drain, daemon=True)
        draining.start()
        outcome = done.get(timeout=30)
    draining.join(30)  # the write end closed with the block: the drain has its end
    assert outcome is None
    assert drained.lstrip(b"f") == b"reply\n"


@pytest.mark.slow
def test_requests_still_being_handled_when_stdin_ends_are_answered(hand_build: Path) -> None:
    """End of input closes the message stream, on which the SDK cancels the handlers still running: their
    requests used to go unanswered. Everything is written at once, then stdin is closed."""
    call = (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
        b'"params":{"name":"compare_capability","arguments":{"capability":"mcp"}}}\n'
    )
    initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    data = json.dumps(INITIALIZE).encode() + b"\n" + initialized + b"".join(call % n for n in range(1, 7)) + PING % 7
    command = capidx_command("serve", "--build", str(hand_build), "--no-reload")
    done = subprocess.run(command, cwd=hand_build.parent, input=data, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(reply["id"] for reply in replies) == list(range(8))  # initialize is id 0 here
    assert all("result" in reply for reply in replies)


def _pipe_held(fd: int) -> int:
    """How many bytes the pipe at `fd` (either end) holds."""
    buffer = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buffer)
    return int.from_bytes(buffer, sys.byteorder)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads how full a pipe is (Linux ioctl)")
def test_a_flood_of_requests_is_read_only_as_fast_as_it_is_answered(hand_build: Path) -> None:
    """The SDK starts a task for every request it is given, and a reply waits in its task until it is written: a
    client that sent pings faster than they were answered, or read no reply, grew the server by 10 KB or more a request
    without end. Ten times `MAX_IN_FLIGHT` pings of 4,000 bytes (each reply as long: the pipes fill) are sent without
    reading stdout: the server stops reading stdin, holding no more than its bound, and once the client reads, every
    ping is answered, in order."""
    count = MAX_IN_FLIGHT * 10
    ids = [f"{n:04d}" + "." * 3940 for n in range(1, count + 1)]
    lines = [b'{"jsonrpc":"2.0","id":"%s","method":"ping"}\n' % request_id.encode() for request_id in ids]
    with serving_stdio(hand_build, "--no-reload") as proc:
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin.fileno(), proc.stdout.fileno()
        write_all(stdin, json.dumps(INITIALIZE).encode() + b"\n")
        assert json.loads(proc.stdout.readline())["id"] == 0
        sent: list[int] = []  # the length of each line written whole

        def write_lines() -> None:
            for line in lines:
                write_all(stdin, line)
                sent.append(len(line))

        flood = threading.Thread(target=write_lines, daemon=True)
        flood.start()
        _wait_until_full(stdin)  # the server has stopped reading stdin
        assert flood.is_alive(), "the whole flood was read while no reply was"
        taken = (sum(sent) - _pipe_held(stdin)) // len(lines[0])  # lines the server took from stdin
        written = _pipe_held(stdout) // len(lines[0])  # replies it wrote, waiting in the pipe
        # what the reader holds: its chunk and the next; the requests in flight; the replies queued for the writer
        bound = 2 * (CHUNK_BYTES // len(lines[0]) + 1) + MAX_IN_FLIGHT + PENDING_REPLIES + 2
        assert taken - written <= bound, f"{taken - written} requests held (bound {bound})"
        replies = [json.loads(proc.stdout.readline()) for _ in range(count)]
        assert [reply["id"] for reply in replies] == ids
        assert all(reply["result"] == {} for reply in replies)
        flood.join(60)
        assert not flood.is_alive()
        write_all(stdin, PING % 1)
        assert json.loads(proc.stdout.readline()) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


# `capidx serve` with every lookup held for ever once it has started, resolved off the event loop
HELD_LOOKUP = (
    "import threading\n"
    "from capidx.server import app, tools\n"
    "app.INLINE_CAPABILITIES = 0\n"
    "tools.call_tool = lambda *args: threading.Event().wait()\n"
    "from capidx.cli import main\n"
    "main()\n"
)


LOOKUP = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
    b'"params":{"name":"lookup_capability","arguments":{"agent":"claude","capability":"hooks"}}}\n'
)


@contextmanager
def held_lookups(build: Path) -> Iterator[Stdio]:
    """An initialized `capidx serve --no-reload` over stdio (HELD_LOOKUP), its stderr dropped; killed after."""
    command = [sys.executable, "-c", HELD_LOOKUP, "serve", "--build", str(build), "--no-reload"]
    pipes: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    with subprocess.Popen(command, cwd=build.parent, **pipes) as proc:
        try:
            server = Stdio(proc)
            server.send(json.dumps(INITIALIZE).encode() + b"\n")
            assert server.reply()["id"] == 0
            yield server
        finally:
            proc.kill()


@pytest.mark.slow
def test_a_cancelled_request_frees_its_place(hand_build: Path) -> None:
    """The server answers nothing to a request the client cancelled: its place among the `MAX_IN_FLIGHT` is freed
    all the same, so a client that sends and cancels twice as many lookups as that, each held for ever, is still
    read, and its ping answered; the cancelled lookups are not."""
    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}\n'
    with held_lookups(hand_build) as server:
        server.send(b"".join(LOOKUP % n + cancel % n for n in range(1, 2 * MAX_IN_FLIGHT + 1)))
        server.send(PING % 1000)
        assert server.reply() == {"jsonrpc": "2.0", "id": 1000, "result": {}}


@pytest.mark.slow
@pytest.mark.anyio
async def test_open_listens_hold_no_place(hand_build: Path) -> None:
    """A `subscriptions/listen` lasts until the client ends it, with `notifications/cancelled`. Counted among the
    `MAX_IN_FLIGHT`, one listen more than that was never read (nor anything after it, a cancel included) and the
    client waited for ever. Listens now hold no place: a real client opens one more than the bound, is answered
    after them, and ends them all."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command, *args = capidx_command("serve", "--build", str(hand_build), "--no-reload")
    server = StdioServerParameters(command=command, args=args, cwd=hand_build.parent)
    async with Client(server, mode="auto", cache=None) as client, AsyncExitStack() as listens:
        with anyio.fail_after(60):
            for _ in range(MAX_IN_FLIGHT + 1):
                subscription = await listens.enter_async_context(client.listen(tools_list_changed=True))
                assert subscription.honored is not None
            assert (await client.list_tools()).tools
            await listens.aclose()
            assert (await client.list_tools()).tools


# `capidx serve` that would wait an hour for requests still in flight at the end of stdin
LONG_GRACE = "from capidx.server import stdio\nstdio.EOF_GRACE_SECONDS = 3600\nfrom capidx.cli import main\nmain()\n"
META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.mark.slow
def test_an_open_listen_does_not_keep_a_server_whose_stdin_ended(hand_build: Path) -> None:
    """Only the client or the end of the session ends a `subscriptions/listen`: waited for like any request in
    flight, an open one kept a server whose client had closed stdin running for the whole end-of-stdin grace. With
    the grace an hour long, the server still ends at once, and answers the listen that the session ended."""
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META_2026}}
    notifications = {"toolsListChanged": True}
    listen = {"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen"}
    listen["params"] = {"notifications": notifications, "_meta": META_2026}
    data = b"".join(json.dumps(message).encode() + b"\n" for message in (discover, listen))
    command = [sys.executable, "-c", LONG_GRACE, "serve", "--build", str(hand_build), "--no-reload"]
    done = subprocess.run(command, cwd=hand_build.parent, input=data, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply.get("id") for reply in replies if "id" in reply] == [1, 2]
    assert replies[-1]["error"]["code"] == CONNECTION_CLOSED


@pytest.mark.slow
def test_stdin_closing_ends_a_server_that_has_stopped_reading_it(hand_build: Path) -> None:
    """With `MAX_IN_FLIGHT` requests not answered the server reads no more of stdin, so it would not see its end:
    twice as many lookups, each held for ever, and a ping, then stdin closed. The server still ends, once the lookups
    in flight have had their grace, and says the session ended to every request, read or not (an error, as at any
    end of stdin): those it had not read yet, the ping among them, used to get no answer at all."""
    with held_lookups(hand_build) as server:
        server.send(b"".join(LOOKUP % n for n in range(1, 2 * MAX_IN_FLIGHT + 1)) + PING % 1000)
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        assert server.proc.wait(timeout=60) == 0
        replies = [server.reply() for _ in range(2 * MAX_IN_FLIGHT + 1)]
    assert sorted(reply["id"] for reply in replies) == [*range(1, 2 * MAX_IN_FLIGHT + 1), 1000]
    assert all("error" in reply for reply in replies)


LIMIT = 65536  # the smallest message limit there is: every check below runs against the same server


@pytest.fixture(scope="module")
def server(hand_build: Path) -> Iterator[Stdio]:
    """One stdio server for the checks below (each starts with the server answering, and leaves it answering)."""
    with stdio_server(hand_build, {"CAPIDX_MAX_MESSAGE_BYTES": str(LIMIT)}) as started:
        yield started


@pytest.mark.slow
def test_unreadable_lines_get_json_rpc_errors_and_the_server_keeps_serving(server: Stdio) -> None:
    server.send(b"garbage\n")
    assert server.reply() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": _any()}}
    server.send(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    assert server.reply()["error"]["code"] == -32700
    server.send(b'{"jsonrpc": "2.0", "id": 7}\n')  # JSON, but neither a request nor a response
    assert (reply := server.reply())["id"] == 7 and reply["error"]["code"] == -32600
    server.send(b"\xff\xfe not utf-8\n")
    assert server.reply()["error"]["code"] == -32700
    server.send(b"\n   \n" + PING % 2)  # blank lines are skipped, not answered
    assert server.reply() == {"jsonrpc": "2.0", "id": 2, "result": {}}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("request_id", "named"),
    [
        ("{}", "object"),
        ('{"a": 1}', "object"),
        ("[1]", "array"),
        ("null", "null"),
        ("true", "boolean"),
        ("1.5", "a fraction"),
        ("1e2", "an exponent"),
        ("9" * 5000, "5000 digits"),
        ("-" + "9" * 4301, "4301 digits"),
    ],
)
def test_a_request_with_an_unusable_id_is_answered_invalid_request(server: Stdio, request_id: str, named: str) -> None:
    """JSON-RPC 2.0: an id that is not a string or a number makes the request invalid: -32600 with id null.
    The SDK's model used to read such a line as a notification, which nobody answers."""
    server.send(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % request_id.encode())
    reply = server.reply()
    assert reply["id"] is None and reply["error"]["code"] == -32600
    assert "id" in reply["error"]["message"] and named in reply["error"]["message"]
    server.send(PING % 4)
    assert server.reply() == {"jsonrpc": "2.0", "id": 4, "result": {}}


@pytest.mark.slow
def test_a_lone_surrogate_is_read_as_a_replacement_character_and_the_request_answered(server: Stdio) -> None:
    """Half of an emoji a client split ('\\ud83d') is valid JSON that the SDK's parser refuses: it was answered
    -32700 with id null, so the client waited for its request forever. It is read as U+FFFD."""
    call = {"name": "lookup_capability", "arguments": {"agent": "claude", "capability": "hooks\\ud83d"}}
    line = json.dumps({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": call}).replace("\\\\", "\\")
    server.send(line.encode() + b"\n")
    reply = server.reply()
    assert reply["id"] == 10 and "error" not in reply and "Hooks" in json.dumps(reply)
    parsed = parse_line(line.encode(), 10**6)
    assert parsed.params["arguments"]["capability"] == "hooks\ufffd"  # type: ignore[union-attr]
    server.send(PING % 11)
    assert server.reply() == {"jsonrpc": "2.0", "id": 11, "result": {}}


def test_a_lone_surrogate_is_replaced_where_it_stands_and_nothing_else_changes() -> None:
    """Re-encoding the whole message grew it (1e9 became 1000000000.0, and 1e400 'Infinity', not JSON), so a request
    within the size limit could pass it; an escaped backslash before 'ud83d' is no escape, and a pair is a character."""
    line = b'{"n":1e9,"m":1e400,"a":"\\ud83d x \\\\ud83d \\ud83d\\ude00 \\ude00"}'
    replaced = surrogates_replaced(line)
    assert replaced == b'{"n":1e9,"m":1e400,"a":"\\ufffd x \\\\ud83d \\ud83d\\ude00 \\ufffd"}'
    assert len(replaced) == len(line)
    assert surrogates_replaced(b'{"a":"\\ud83d\\ude00 \\\\ud800"}') is None  # nothing lone
    # bounded work for a hostile message: past MAX_SURROGATES surrogate escapes it is not read
    assert surrogates_replaced(b'{"a":"' + b"\\ud800" * (MAX_SURROGATES + 1) + b'"}') is None
    # a long run of backslashes before an escape is counted, not a reason to give up ('\\' * 100 then a lone one)
    assert surrogates_replaced(b'{"a":"' + b"\\\\" * 100 + b'\\ud800"}') == b'{"a":"' + b"\\\\" * 100 + b'\\ufffd"}'
    # many whole emoji (json.dumps escapes each as a pair) and one half: only the half is replaced
    many = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"c": "\U0001f600" * 600 + "\ud83d"}})
    assert parse_line(many.encode(), 10**6).id == 7  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\xed\xa0\xbd","b":"\\ud83d"}}',  # not UTF-8
        b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping","params":{"b":"\\ud83d"}}',  # a BOM
    ],
    ids=["surrogate-bytes", "bom"],
)
def test_a_surrogate_escape_does_not_let_other_faults_through(line: bytes) -> None:
    """Reading a lone surrogate escape as U+FFFD must not read what is refused otherwise: the bytes of a surrogate
    (not UTF-8) or a byte-order mark, which the standard library's reader would take."""
    reply = parse_line(line, 10**6)
    assert isinstance(reply, Reply) and reply.error.error.code == -32700


def test_a_too_long_id_is_named_by_its_own_length_not_an_earlier_number_s() -> None:
    line = b'{"jsonrpc":"2.0","params":{"n":%s},"id":%s,"method":"ping"}' % (b"1" * 5000, b"2" * 4400)
    message = parse_line(line, 10**6).error.error.message  # type: ignore[union-attr]
    assert "the id is an integer of 4400 digits" in message


@pytest.mark.slow
def test_a_number_too_long_to_read_is_named_with_the_request_s_id(server: Stdio) -> None:
    server.send(b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"n":%s}}\n' % (b"1" * 5000))
    reply = server.reply()
    assert reply["id"] == 5 and reply["error"]["code"] == -32600 and "5000 digits" in reply["error"]["message"]


@pytest.mark.slow
def test_json_nested_too_deeply_to_read_is_named_with_the_request_s_id(server: Stdio) -> None:
    """Valid JSON (the standard library reads it) that the protocol's parser refuses for its depth: not -32700."""
    server.send(b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"n":%s}}\n' % (b"[" * 500 + b"]" * 500))
    reply = server.reply()
    assert reply["id"] == 6 and reply["error"]["code"] == -32600 and "nested too deeply" in reply["error"]["message"]
    server.send(b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"n":%s}}\n' % (b"[" * 500 + b"]" * 499))
    assert server.reply() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": _any()}}
    server.send(PING % 8)
    assert server.reply() == {"jsonrpc": "2.0", "id": 8, "result": {}}


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads peak memory from /proc")
def test_an_over_long_line_is_answered_and_not_held(server: Stdio) -> None:
    server.send(PING % 1)
    assert server.reply()["id"] == 1
    before = server.peak_rss_kib()
    line = b"x" * (64 * 1024 * 1024)
    writer = threading.Thread(target=server.send, args=(line + b"\n" + PING % 2,), daemon=True)
    writer.start()
    error = server.reply()
    assert error["id"] is None and error["error"]["code"] == -32600
    assert str(len(line)) in error["error"]["message"] and str(LIMIT) in error["error"]["message"]
    assert server.reply() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    writer.join(30)
    grown_mib = (server.peak_rss_kib() - before) / 1024
    assert grown_mib < 24, f"peak memory grew by {grown_mib:.0f} MiB for a 64 MiB line"


@pytest.mark.slow
def test_a_line_at_the_limit_is_served_and_one_byte_more_is_not(server: Stdio) -> None:
    ping = (PING % 3).rstrip(b"\n")
    at_limit = ping[:-1] + b" " * (LIMIT - len(ping)) + b"}"
    assert len(at_limit) == LIMIT
    server.send(at_limit + b"\n")
    assert server.reply() == {"jsonrpc": "2.0", "id": 3, "result": {}}
    server.send(b" " + at_limit + b"\n")
    assert server.reply()["error"]["code"] == -32600


@pytest.mark.slow
def test_a_request_before_initialize_is_told_to_initialize_first(hand_build: Path) -> None:
    """Not -32602 "invalid parameters" (its parameters are fine) but -32600 naming the missing handshake;
    what the SDK decides otherwise stays: ping is answered, an unknown method is -32601, bad parameters
    -32602, and after initialize the same request is served."""
    tools_list = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n'
    with stdio_server(hand_build, initialize=False) as server:
        server.send(tools_list % 1)
        error = server.reply()
        assert error["id"] == 1 and error["error"]["code"] == -32600
        assert "not initialized" in error["error"]["message"] and "initialize first" in error["error"]["message"]
        server.send(b'{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"%s"}}\n' % PREFIX.encode())
        assert server.reply()["error"]["code"] == -32600
        server.send(PING % 3)
        assert server.reply() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        server.send(b'{"jsonrpc":"2.0","id":4,"method":"no/such/method"}\n')
        assert server.reply()["error"]["code"] == -32601
        server.send(b'{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":5}}\n')
        assert server.reply()["error"]["code"] == -32602
        server.send(json.dumps(INITIALIZE).encode() + b"\n")
        assert "result" in server.reply()
        server.send(tools_list % 6)
        assert server.reply()["result"]["tools"]


def test_line_splitter_keeps_at_most_the_limit() -> None:
    splitter = LineSplitter(4)
    assert splitter.feed(b"ab\ncdef\nghi") == [b"ab", b"cdef"]
    assert splitter.feed(b"jk") == []  # 5 bytes: over the limit, dropped as it arrives
    assert splitter._line == bytearray()
    assert splitter.feed(b"lm\n\n") == [Oversized(7), b""]
    assert splitter.feed(b"tail") == []
    assert splitter.end() == b"tail"
    assert splitter.end() is None


def test_parse_line_answers_what_it_cannot_pass_on() -> None:
    assert parse_line(b"  ", 100) is None
    request = parse_line(PING % 1, 100)
    assert getattr(request, "method", None) == "ping"
    too_long = parse_line(Oversized(101), 100)
    assert too_long is not None and too_long.error.error.code == -32600  # type: ignore[union-attr]
    deep = b"[" * 100_000 + b"]" * 100_000
    assert parse_line(deep, 10**6).error.error.code in (-32700, -32600)  # type: ignore[union-attr]
    notification = parse_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', 100)
    assert getattr(notification, "method", None) == "notifications/initialized"  # passed on, not an error
    not_json = parse_line(b'{"jsonrpc":"2.0","id":NaN1,"method":"ping"}', 100)
    assert not_json.error.error.code == -32700  # type: ignore[union-attr]
    deep_id = b'{"jsonrpc":"2.0","id":' + b"[" * 100_000 + b"]" * 100_000 + b',"method":"ping"}'
    assert parse_line(deep_id, 10**6).error.error.code in (-32700, -32600)  # type: ignore[union-attr]


# --- what an error echoes ---------------------------------------------------------------------------------


class _Any:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str)


def _any() -> Any:
    return _Any()


@pytest.mark.anyio
@pytest.mark.parametrize("tail", ["nope-" + "x" * 1_000_000, "agents/" + "y" * 1_000_000])
async def test_a_long_uri_is_clipped_in_the_error(hand_build: Path, tail: str) -> None:
    async with connect(hand_build) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(PREFIX + tail)
    error = caught.value.error
    assert error.code == -32602
    assert len(error.message) < 5_000
    assert error.data["uri"].startswith(PREFIX + tail[:50])
    assert len(error.data["uri"]) < 600 and f"({len(PREFIX + tail)} characters)" in error.data["uri"]


@pytest.mark.anyio
async def test_a_long_tool_name_is_clipped_in_the_error(hand_build: Path) -> None:
    async with connect(hand_build) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("t" * 1_000_000, {})
    assert len(caught.value.error.message) < 5_000
    assert len(caught.value.error.data["tool"]) < 600


@pytest.mark.anyio
async def test_unseen_characters_are_echoed_as_escapes(hand_build: Path) -> None:
    """A right-to-left override or a zero-width space in a URI would make the error message show another text than
    the one sent: the message escapes them."""
    async with connect(hand_build) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(PREFIX + "agents/\u202eedualc\u200b")
    error = caught.value.error
    assert error.data["uri"] == PREFIX + "agents/\u202eedualc\u200b"  # data as sent: JSON carries any character
    assert "agents/\\u202eedualc\\u200b" in error.message
    assert "\u202e" not in error.message and "\u200b" not in error.message


# --- what a session leaves behind -------------------------------------------------------------------------


async def _one_session() -> None:
    """One stdio session in-process over pipes: a notification, then end of input (a request nobody answers
    would hold the end of input for the transport's grace period)."""
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    try:
        os.write(stdin_write, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        os.close(stdin_write)
        async with stdio_transport(LIMIT, stdin_fd=stdin_read, stdout_fd=stdout_write) as (messages, replies):
            replies.close()
            async for _message in messages:
                pass
            messages.close()
    finally:
        for fd in (stdin_read, stdout_read, stdout_write):
            os.close(fd)


@pytest.mark.anyio
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open descriptors in /proc")
async def test_a_stdio_session_leaves_no_descriptor_open() -> None:
    """The transport writes to a private duplicate of stdout; every session used to leave one open."""
    await _one_session()  # whatever is opened once per process (the event loop's own) is opened here
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(10):
        await _one_session()
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.slow
def test_a_listen_with_large_parameters_is_refused_before_it_is_held(hand_build: Path) -> None:
    """A `subscriptions/listen` is held, with its parameters as parsed, until its client ends it. Its message is
    bounded in bytes (4 MiB), not in what it takes parsed: 4 MiB of `[]` in a key nobody reads held about 100 MB for
    as long as the client kept the listen open, and the SDK allows 1,024 listens over stdio (16 held 1.8 GB). A
    listen whose parameters pass `MAX_LISTEN_PARAMS_BYTES` is now refused `-32602` with its id, and nothing of it
    is held: twelve of 2 MiB (600 MB held before) raise the peak by a fraction of that; a small listen is still
    acknowledged."""
    from capidx.server.app import MAX_LISTEN_PARAMS_BYTES

    def listen(request_id: int, padding: int) -> bytes:
        params = {"notifications": {"toolsListChanged": True}, "_meta": META_2026, "x": []}
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params})
        cut = line.rindex("[]")
        return (line[: cut + 1] + ",".join(["[]"] * padding) + line[cut + 1 :] + "\n").encode()

    discover = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": META_2026}}
    with stdio_server(hand_build, initialize=False) as server:
        server.send(json.dumps(discover).encode() + b"\n")
        assert server.reply()["id"] == 0
        before = server.peak_rss_kib()
        for request_id in range(1, 13):
            server.send(listen(request_id, 2 * 1024 * 1024 // 3))
            reply = server.reply()
            assert reply["id"] == request_id, reply
            assert reply["error"]["code"] == -32602, reply
            assert str(MAX_LISTEN_PARAMS_BYTES) in reply["error"]["message"]
        grown_mib = (server.peak_rss_kib() - before) / 1024
        server.send(listen(100, 10))
        acknowledged = server.reply()
    assert grown_mib < 300, f"the refused listens raised the peak by {grown_mib:.0f} MiB"
    assert acknowledged.get("method") == "notifications/subscriptions/acknowledged", acknowledged


def test_larger_than_stops_once_past_its_limit() -> None:
    """`larger_than` weighs a parsed message as CPython holds it, without recursion, and stops once past the limit: a
    value nested a million levels deep, or holding a million items, costs about the limit's steps, not its size; 64
    KiB of `[]` weigh as the 1.4 MB they take, a string about its length."""
    from capidx.server.limits import larger_than

    deep: list[Any] = []
    for _ in range(1_000_000):
        deep = [deep]
    wide = {str(n): [n, "x"] for n in range(1_000_000)}
    assert larger_than(deep, 1_000) and larger_than(wide, 1_000)
    assert not larger_than({"notifications": {"toolsListChanged": True}, "_meta": META_2026}, 2_000)
    assert larger_than("x" * 1_000, 1_000) and not larger_than("x" * 900, 1_000)
    assert larger_than([[] for _ in range(21_000)], 1_000_000) and not larger_than(["x" * 60_000], 100_000)
    uris = [PREFIX + "capabilities/" + "x" * 200 for _ in range(100)]
    assert not larger_than({"notifications": {"resourceSubscriptions": uris}, "_meta": META_2026}, 64 * 1024)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads how full a pipe is (Linux ioctl)")
def test_requests_in_flight_are_bounded_in_bytes_too(hand_build: Path) -> None:
    """A request is held parsed until it is answered, and parsed JSON takes up to some 25 times its bytes: 32
    requests (`MAX_IN_FLIGHT`) of 4 MiB of `[]` in a key nobody reads, from a client that read no reply, held 3.4 GB.
    Twelve lookups of 1 MiB, each held for ever, are now taken from stdin only up to `MAX_IN_FLIGHT_BYTES` (and the
    line waiting for room, and what the reader read ahead); before, all twelve were."""
    from capidx.server.stdio import MAX_IN_FLIGHT_BYTES

    def lookup(request_id: int) -> bytes:
        line = LOOKUP % request_id
        cut = line.rindex(b"}}}")  # the padding goes in a key of params that nobody reads
        return line[:cut] + b'},"x":[' + b",".join([b"[]"] * (1024 * 1024 // 3)) + b"]}}\n"

    lines = [lookup(n) for n in range(1, 13)]
    with held_lookups(hand_build) as server:
        assert server.proc.stdin is not None
        stdin = server.proc.stdin.fileno()
        written = [0]

        def write_lines() -> None:
            with suppress(OSError):  # the server is killed, and its stdin closed, with writes still waiting
                for line in lines:
                    view = memoryview(line)
                    while view:
                        done = os.write(stdin, view)
                        written[0] += done
                        view = view[done:]

        writer = threading.Thread(target=write_lines, daemon=True)
        writer.start()
        deadline, last, steady = time.monotonic() + 60, -1, 0
        while writer.is_alive() and steady < 20:  # until the writes stop moving, or all are taken
            assert time.monotonic() < deadline, "the server never stopped reading"
            steady = steady + 1 if written[0] == last else 0
            last = written[0]
            time.sleep(0.05)
        taken = written[0] - _pipe_held(stdin)
    bound = MAX_IN_FLIGHT_BYTES + len(lines[0]) + 2 * CHUNK_BYTES
    assert taken <= bound, f"{taken:,} bytes of requests taken from stdin while none was answered (bound {bound:,})"


@pytest.mark.anyio
async def test_a_request_of_any_size_is_passed_when_none_is_in_flight() -> None:
    """The bytes in flight are bounded, but a request larger than the bound still passes alone: the bound is what
    several may hold together, not the size of a message (`max_message_bytes` is that)."""
    from capidx.server.stdio import _InFlight

    in_flight = _InFlight(3, 100)
    assert in_flight.fits(1_000)
    unanswered = in_flight.sent("a", 1_000)
    assert not in_flight.fits(1)
    await unanswered()
    in_flight.sent("b", 60)
    assert in_flight.fits(40) and not in_flight.fits(41)
    in_flight.sent("c", 1)
    in_flight.sent("d", 1)
    assert not in_flight.fits(0)  # three in flight: the count's bound
    in_flight.answered("b")
    assert in_flight.fits(98) and not in_flight.fits(99)
