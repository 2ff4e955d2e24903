"""Validation in a child process while the build goes on, speculatively.

Validating a catalog is Python work (schema, lint, source positions) during which the build could already
be rendering: on a machine with two CPUs, the token counter's CPU is mostly idle then. So the build loads
the documents itself (`load_unchecked`), starts `capidx validate`'s checks in a child process
(`BackgroundValidation`) and goes on. Nothing it makes is kept unless the child says the data is valid:
before the new build is swapped in, the build waits for the verdict (`settle`), prints the child's report
exactly as an in-process validation would have, and fails with exit 1, leaving the previous build
untouched, when there is any error. A build step that fails on data the child finds invalid is reported
as the validation errors, not as a crash. The child also returns the sha256 of every file it read, so a
file edited during the build cannot slip through: the build stops and says so.

The child is a fork of the build where that is safe (`can_fork`: POSIX but not macOS, and only one
thread): it starts in about a millisecond with every module already imported, so every catalog, however
small, is validated this way. Elsewhere it is a new Python, which costs an interpreter start and the
imports of validation (~0.1 s): only catalogs above `LARGE_INPUT` are worth it then, and smaller ones are
validated in-process first.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import IO, Any

from capidx.compiler.config import Config
from capidx.compiler.diagnostics import exit_code_for
from capidx.compiler.emit import pipes
from capidx.compiler.errors import InvalidError
from capidx.compiler.validate import discover
from capidx.compiler.validate.load import load_file
from capidx.compiler.validate.run import LoadedDocument, ValidationResult, collector_paused, document_order

LARGE_INPUT = 4 << 20  # bytes of capability documents: the least worth a new Python (not a fork)
_CHILD = "from capidx.compiler.emit.background import child_main; child_main()"


@dataclass(frozen=True)
class Verdict:
    """What the child found: what to print, whether the build may go on, and what it validated."""

    ok: bool
    errors: int
    exit_code: int  # as `capidx validate` would exit: 2 when a file could not be read at all
    report: str  # the text reporter's output ('' when there is nothing to say)
    digests: dict[str, str]  # str(path) -> sha256 of every document and alias table validated


class ValidationChanged(InvalidError):
    """The files the child validated are not the files the build read."""


def can_fork() -> bool:
    """Whether the check may run in a fork of this process. Not on macOS, where a forked child of a process
    that touched system frameworks can crash (Python's own multiprocessing stopped forking there), and not
    with a second thread alive: a fork copies the calling thread only, so a lock another thread held would
    stay locked in the child forever."""
    return hasattr(os, "fork") and sys.platform != "darwin" and threading.active_count() == 1


def load_unchecked(config: Config, fork: bool) -> ValidationResult | None:
    """What `validate_project` loads (documents sorted by agent id, the first alias table), without any
    check; None when a new Python would cost more than it saves (`fork` False and the catalog not above
    `LARGE_INPUT`), or when anything cannot be found, read or parsed (then an in-process validation
    reports it, as before)."""
    inputs = discover.collect(config, ())
    if inputs.problems or (not fork and sum(_size(path) for path in inputs.documents) <= LARGE_INPUT):
        return None
    with collector_paused():  # parsed JSON holds no cycles (see validate.collector_paused)
        return _load(inputs)


def _load(inputs: discover.Inputs) -> ValidationResult | None:
    documents = []
    for path in inputs.documents:
        source, problems = load_file(path)
        if source is None or problems:
            return None
        documents.append(LoadedDocument(path, discover.agent_id(path), source.data, source.raw))
    aliases = None
    for path in inputs.aliases[:1]:
        source, problems = load_file(path)
        if source is None or problems:
            return None
        aliases = LoadedDocument(path, None, source.data, source.raw)
    documents.sort(key=document_order)
    return ValidationResult(tuple(documents), aliases, (), inputs.checked)


def _size(path: Any) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class BackgroundValidation:
    """`validate_project(config, strict=strict)` and its text report, in a child process: a fork of this one
    when `fork` is true (see `can_fork`), a new Python otherwise. OSError when it cannot be started."""

    def __init__(self, config: Config, strict: bool, verbosity: int, fork: bool) -> None:
        self._child = _ForkedChild(config, strict, verbosity) if fork else _PythonChild(config, strict, verbosity)

    def verdict(self, loaded: ValidationResult) -> Verdict:
        """Wait for the child's verdict on the files `loaded` holds (ValidationChanged if they differ)."""
        out, why = self._child.result()
        try:
            verdict = pickle.loads(out) if why is None else None
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
            verdict = None
        if not isinstance(verdict, Verdict):
            raise OSError(f"the validation process stopped: {why or 'it sent no verdict'}")
        if verdict.ok and verdict.digests != _digests(loaded):
            raise ValidationChanged("the catalog changed while it was being built; run capidx build again")
        return verdict

    def close(self) -> None:
        self._child.stop()


class _ForkedChild:
    """The check in a fork of this process: the verdict comes back pickled through a pipe.

    The child never returns into the caller's code (nor runs its `finally` blocks, exit handlers or buffered
    output): whatever happens, it leaves through `os._exit`. A failure in it is sent as text instead of a
    verdict, with exit status 1."""

    def __init__(self, config: Config, strict: bool, verbosity: int) -> None:
        read, write = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered may be written twice (by the child too)
            with contextlib.suppress(AttributeError, OSError, ValueError):
                stream.flush()
        try:
            pid = os.fork()
        except BaseException:
            os.close(read)
            os.close(write)
            raise
        if pid == 0:
            os.close(read)
            _forked_child_main(write, config, strict, verbosity)  # never returns
        os.close(write)
        self._pid: int | None = pid
        self._read: int | None = read
        self._status = 0

    def result(self) -> tuple[bytes, str | None]:
        """(what the child sent, None) once it exited successfully; else (b"", why it failed)."""
        assert self._read is not None
        chunks = []
        while chunk := os.read(self._read, 1 << 20):
            chunks.append(chunk)
        self._reap()
        out = b"".join(chunks)
        if self._status == 0:
            return out, None
        return b"", out.decode("utf-8", "replace").strip() or f"exit status {self._status}"

    def stop(self) -> None:
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError):  # a child that exited stays until reaped anyway
                os.kill(self._pid, signal.SIGKILL)
            self._reap()
        if self._read is not None:
            os.close(self._read)
            self._read = None

    def _reap(self) -> None:
        if self._pid is not None:
            _, status = os.waitpid(self._pid, 0)
            self._pid = None
            self._status = os.waitstatus_to_exitcode(status)


def _forked_child_main(pipe: int, config: Config, strict: bool, verbosity: int) -> None:
    status = 1
    try:
        try:
            payload = pickle.dumps(_verdict(config, strict, verbosity))
            status = 0
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: this process must not go on
            payload = f"{type(exc).__name__}: {exc}".encode()
        view = memoryview(payload)
        while view:
            view = view[os.write(pipe, view) :]
    finally:
        os._exit(status)


class _PythonChild:
    """The check in a new Python (`python -P -c _CHILD`), given its arguments pickled on stdin."""

    def __init__(self, config: Config, strict: bool, verbosity: int) -> None:
        self._errors: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the child
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
            )
        except BaseException:
            self._errors.close()
            raise
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(pickle.dumps((config, strict, verbosity)))
            self._process.stdin.close()
        except OSError:
            pass  # it stopped at once: `result` says why

    def result(self) -> tuple[bytes, str | None]:
        assert self._process.stdout is not None
        out = self._process.stdout.read()
        self._process.wait()
        if self._process.returncode == 0:
            return out, None
        self._errors.seek(0)
        return b"", pipes.last_line(self._errors.read()) or f"exit status {self._process.returncode}"

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        assert self._process.stdout is not None
        self._process.stdout.close()
        self._errors.close()


def _digests(result: ValidationResult) -> dict[str, str]:
    docs = [*result.documents, *([result.aliases] if result.aliases else [])]
    return {str(doc.path): hashlib.sha256(doc.raw).hexdigest() for doc in docs}


def _verdict(config: Config, strict: bool, verbosity: int) -> Verdict:
    from capidx.compiler.validate.reporters import REPORTER_BY_NAME
    from capidx.compiler.validate.run import validate_project

    result = validate_project(config, strict=strict, for_build=True)
    report = REPORTER_BY_NAME["text"](verbosity=verbosity).render(result) if result.diagnostics else ""
    code = int(exit_code_for(result.diagnostics))
    return Verdict(result.ok, len(result.errors), code, report or "", _digests(result))


def child_main() -> None:
    """The new Python's main: read (config, strict, verbosity) from stdin, write the pickled Verdict."""
    config, strict, verbosity = pickle.load(sys.stdin.buffer)
    sys.stdout.buffer.write(pickle.dumps(_verdict(config, strict, verbosity)))
