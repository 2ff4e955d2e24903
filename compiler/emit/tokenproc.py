"""Token counting in a second process, so that it never competes with rendering for the interpreter.

A build's main thread renders artifacts in Python; tokenizing their text is about as much work again.
tiktoken releases the GIL while it encodes, but loading an encoding, cutting texts into pieces and
looking pieces up are Python work, and on a machine with two CPUs every bit of it done in the build's
process is time the renderer waits. `TokenProcess` keeps `tokens.TokenCounter`'s interface and runs a
`TokenCounter` in a child Python: `submit` writes the text's UTF-8 bytes to the child's pipe and returns;
`wait` asks for every count not collected yet and blocks until they come. Asking and reading can also be
apart: `request` asks for the counts of what was sent so far and returns at once; the child answers
requests in order, and `wait_for` reads answers only until the texts it names are known. A build asks
early for the few texts it needs before rendering and reads the answer when it needs it, so it does not
stop while a cold child still loads its encoding.

A cold build (no previous counts at all: every artifact will need counting) starts the child with
`preload`, so the encodings load while the catalog is validated. Otherwise an encoding loads when the
first text that needs it arrives, as in-process: a rebuild whose artifacts did not change loads none.

Errors cross the pipe: an encoding that cannot be loaded stops the child, which writes the
`EncodingUnavailable` message and exit code as one JSON line on its stderr (a temporary file, so that
nothing the child prints can fill a pipe nobody reads), and the parent raises the same error.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from capidx.compiler.diagnostics import ExitCode
from capidx.compiler.emit import pipes
from capidx.compiler.emit.tokens import CountsBySha, EncodingUnavailable, TokenCounter, bundled

# Frames sent to the child: kind, payload size; a text's payload is an encoding mask, its sha256, its bytes.
_FRAME = struct.Struct("<BQ")
_TEXT, _SYNC = 1, 2
_TEXT_HEAD = struct.Struct("<B32s")
# The child's answer to a sync: loaded-encodings mask, texts counted so far, number of rows; then the rows.
_REPLY = struct.Struct("<BQQ")
_ROW = struct.Struct("<32sBQ")
_CHILD = "from capidx.compiler.emit.tokenproc import child_main; child_main()"
_FAILED = 3  # the child's exit status when it reports an error on stderr


class TokenProcess(CountsBySha):
    """`TokenCounter`'s interface, counting in a child process (see the module docstring)."""

    def __init__(
        self, encodings: Sequence[str], known: Mapping[str, Mapping[str, int]] | None = None, preload: bool = False
    ) -> None:
        if len(encodings) > 8:
            raise ValueError("at most 8 encodings")  # they travel as a one-byte mask
        self.encodings = tuple(encodings)
        self._known: dict[str, dict[str, int]] = {sha: dict(counts) for sha, counts in (known or {}).items()}
        self._sent: set[str] = set()  # sent, and no answer read for it yet
        self._unrequested = False  # texts sent since the last request
        self._requests = 0  # requests whose answer is not read yet
        self._loaded_mask = 0
        self.encoded_texts = 0
        self._errors: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the child; see close
        try:
            self._child: subprocess.Popen[bytes] = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD, "1" if preload else "0", *self.encodings],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                bufsize=1 << 20,
            )
        except BaseException:
            self._errors.close()
            raise
        pipes.enlarge(self._child.stdin)

    @property
    def loaded(self) -> tuple[str, ...]:
        return tuple(name for index, name in enumerate(self.encodings) if self._loaded_mask & (1 << index))

    def submit(self, sha: str, text: str, data: bytes | None = None) -> None:
        """Send `text` (whose UTF-8 bytes, `data` if given, have this sha256) to be counted in the encodings
        it is not known in."""
        known = self._known.get(sha, {})
        mask = sum(1 << index for index, name in enumerate(self.encodings) if name not in known)
        if not mask or sha in self._sent:
            return
        self._sent.add(sha)
        data = text.encode("utf-8") if data is None else data
        self._write(_FRAME.pack(_TEXT, _TEXT_HEAD.size + len(data)) + _TEXT_HEAD.pack(mask, bytes.fromhex(sha)), data)
        self._unrequested = True

    def request(self) -> None:
        """Ask the child for the counts of every text sent so far; its answer waits in the pipe until read."""
        if self._unrequested:
            self._write(_FRAME.pack(_SYNC, 0), flush=True)
            self._unrequested = False
            self._requests += 1

    def wait(self, progress: Callable[[int], None] | None = None) -> None:
        """Collect the counts of every text sent; nothing to do (no round trip) when nothing was sent."""
        self.request()
        while self._requests:
            self._read_answer(progress)

    def wait_for(self, shas: Iterable[str]) -> None:
        """Read the child's answers, in order, until none of `shas` (texts sent) is waiting for one."""
        waiting = [sha for sha in shas if sha in self._sent]
        while any(sha in self._sent for sha in waiting):
            if not self._requests:  # sent after the last request: ask now
                self.request()
            self._read_answer()

    def _read_answer(self, progress: Callable[[int], None] | None = None) -> None:
        assert self._child.stdout is not None
        head = self._child.stdout.read(_REPLY.size)
        if len(head) != _REPLY.size:
            self._fail()
        self._loaded_mask, self.encoded_texts, rows = _REPLY.unpack(head)
        body = self._child.stdout.read(rows * _ROW.size)
        if len(body) != rows * _ROW.size:
            self._fail()
        for raw, index, tokens in _ROW.iter_unpack(body):
            sha = raw.hex()
            self._known.setdefault(sha, {})[self.encodings[index]] = tokens
            self._sent.discard(sha)
        self._requests -= 1
        if progress:
            progress(rows)

    def close(self) -> None:
        """Stop the child (at once: anything it still counts is not needed any more); harmless twice."""
        if self._errors.closed:
            return
        if self._child.poll() is None:
            self._child.kill()
        self._child.communicate()
        self._errors.close()

    def _write(self, *chunks: bytes, flush: bool = False) -> None:
        assert self._child.stdin is not None
        try:
            for chunk in chunks:
                self._child.stdin.write(chunk)
            if flush:
                self._child.stdin.flush()
        except OSError:  # the child stopped: say why
            self._fail()

    def _fail(self) -> NoReturn:
        """The child stopped or broke the protocol: raise its error, or say that it stopped."""
        if self._child.poll() is None:
            self._child.kill()
        self._child.wait()
        self._errors.seek(0)
        last = pipes.last_line(self._errors.read())
        if self._child.returncode == _FAILED and last:
            try:
                report = json.loads(last)
                raise EncodingUnavailable(report["message"], ExitCode(report["exit_code"]))
            except (ValueError, KeyError, TypeError):
                pass
        detail = last or f"exit status {self._child.returncode}"
        raise OSError(f"the token-counting process stopped: {detail}")


def child_main(argv: Sequence[str] | None = None) -> None:
    """The child: `python -P -c _CHILD PRELOAD ENCODING...`; reads frames from stdin until it closes."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    preload, names = arguments[0] == "1", arguments[1:]
    counter = TokenCounter(names)
    try:
        if preload:
            for name in names:
                counter.load(name)
        _serve(counter, names, sys.stdin.buffer, sys.stdout.buffer)
    except EncodingUnavailable as exc:
        print(json.dumps({"message": str(exc), "exit_code": int(exc.exit_code)}), file=sys.stderr)
        sys.exit(_FAILED)
    finally:
        counter.close()


def _serve(counter: TokenCounter, names: Sequence[str], stdin: IO[bytes], stdout: IO[bytes]) -> None:
    unanswered: list[tuple[str, list[str]]] = []
    while head := stdin.read(_FRAME.size):
        kind, size = _FRAME.unpack(head)
        if kind == _TEXT:
            payload = memoryview(stdin.read(size))
            mask, raw = _TEXT_HEAD.unpack(payload[: _TEXT_HEAD.size])
            wanted = [name for index, name in enumerate(names) if mask & (1 << index)]
            sha = raw.hex()
            counter.submit(sha, str(payload[_TEXT_HEAD.size :], "utf-8"), encodings=wanted)
            unanswered.append((sha, wanted))
        elif kind == _SYNC:
            counter.wait()
            rows = [
                _ROW.pack(bytes.fromhex(sha), names.index(name), counter.counted(sha, name))
                for sha, wanted in unanswered
                for name in wanted
            ]
            loaded = sum(1 << names.index(name) for name in counter.loaded)
            stdout.write(_REPLY.pack(loaded, counter.encoded_texts, len(rows)) + b"".join(rows))
            stdout.flush()
            unanswered.clear()
        else:
            raise ValueError(f"unknown frame kind {kind}")


def start_for_cold_build(encodings: Sequence[str], out: Path) -> TokenProcess | None:
    """A counter that starts loading `encodings` now, for a build that will need them: a cold one (no build at
    `out` yet, so every artifact must be counted) with bundled encodings (known to exist without importing
    tiktoken). `capidx build` starts it before importing the build's own modules, so that the child's start
    and encoding load overlap them; `build.run_build(started=...)` uses it, or closes it if the build turns
    out not to need it. None when not worth it or not possible: the build starts its counter itself."""
    from capidx.compiler.emit.write import MANIFEST  # here: the child runs this module and needs none of `write`

    if not (sys.executable and bundled(encodings)) or (out / MANIFEST).exists():
        return None
    try:
        return TokenProcess(encodings, preload=True)
    except OSError:
        return None


def start_counter(encodings: Sequence[str], known: Mapping[str, Mapping[str, int]] | None = None) -> Any:
    """The build's counter: a `TokenProcess` (preloading when nothing is known: a cold build), or an
    in-process `TokenCounter` where no child Python can be started."""
    if sys.executable:
        try:
            return TokenProcess(encodings, known, preload=not known)
        except OSError:
            pass
    return TokenCounter(encodings, known)
