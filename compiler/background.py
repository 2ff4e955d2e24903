"""Validation in a second process while a large build goes on, speculatively.

Validating a large catalog takes seconds of Python (schema, lint, source positions) during which the
build could already be rendering: on a machine with two CPUs, the token counter's CPU is idle then.
For a catalog of more than `LARGE_INPUT` bytes, the build loads the documents itself (`load_unchecked`),
starts `capidx validate`'s checks in a child Python (`BackgroundValidation`) and goes on. Nothing it
makes is kept unless the child says the data is valid: before the new build is swapped in, the build
waits for the verdict (`settle`), prints the child's report exactly as an in-process validation would
have, and fails with exit 1, leaving the previous build untouched, when there is any error. A build
step that fails on data the child finds invalid is reported as the validation errors, not as a crash.
The child also returns the sha256 of every file it read, so a file edited during the build cannot slip
through: the build stops and says so.

Small catalogs are validated in-process first, as before: starting a second Python costs more than it
saves there.
"""

from __future__ import annotations

import hashlib
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import IO, Any

from capidx.compiler import discover, pipes
from capidx.compiler.config import Config
from capidx.compiler.load import load_file
from capidx.compiler.validate import LoadedDocument, ValidationResult, collector_paused, document_order

LARGE_INPUT = 4 << 20  # bytes of capability documents
_CHILD = "from capidx.compiler.background import child_main; child_main()"


@dataclass(frozen=True)
class Verdict:
    """What the child found: what to print, whether the build may go on, and what it validated."""

    ok: bool
    errors: int
    report: str  # the text reporter's output ('' when there is nothing to say)
    digests: dict[str, str]  # str(path) -> sha256 of every document and alias table validated


class ValidationChanged(Exception):
    """The files the child validated are not the files the build read."""


def load_unchecked(config: Config) -> ValidationResult | None:
    """What `validate_project` loads (documents sorted by agent id, the first alias table), without any
    check; None when the catalog is small, or when anything cannot be found, read or parsed (then an
    in-process validation reports it, as before)."""
    inputs = discover.collect(config, ())
    if inputs.problems or sum(_size(path) for path in inputs.documents) <= LARGE_INPUT:
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
    """`validate_project(config, strict=strict)` and its text report, in a child Python."""

    def __init__(self, config: Config, strict: bool, verbosity: int) -> None:
        self._errors: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the child
        try:
            self._child = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
            )
        except BaseException:
            self._errors.close()
            raise
        assert self._child.stdin is not None
        try:
            self._child.stdin.write(pickle.dumps((config, strict, verbosity)))
            self._child.stdin.close()
        except OSError:
            pass  # it stopped at once: `verdict` says why

    def verdict(self, loaded: ValidationResult) -> Verdict:
        """Wait for the child's verdict on the files `loaded` holds (ValidationChanged if they differ)."""
        assert self._child.stdout is not None
        out = self._child.stdout.read()
        self._child.wait()
        try:
            verdict = pickle.loads(out) if self._child.returncode == 0 else None
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
            verdict = None
        if not isinstance(verdict, Verdict):
            self._errors.seek(0)
            why = pipes.last_line(self._errors.read()) or f"exit status {self._child.returncode}"
            raise OSError(f"the validation process stopped: {why}")
        if verdict.ok and verdict.digests != _digests(loaded):
            raise ValidationChanged("the catalog changed while it was being built; run capidx build again")
        return verdict

    def close(self) -> None:
        if self._child.poll() is None:
            self._child.kill()
        self._child.wait()
        assert self._child.stdout is not None
        self._child.stdout.close()
        self._errors.close()


def _digests(result: ValidationResult) -> dict[str, str]:
    docs = [*result.documents, *([result.aliases] if result.aliases else [])]
    return {str(doc.path): hashlib.sha256(doc.raw).hexdigest() for doc in docs}


def child_main() -> None:
    """The child: read (config, strict, verbosity) from stdin, validate, write the pickled Verdict."""
    from capidx.compiler.reporters import REPORTER_BY_NAME
    from capidx.compiler.validate import validate_project

    config, strict, verbosity = pickle.load(sys.stdin.buffer)
    result = validate_project(config, strict=strict)
    report = REPORTER_BY_NAME["text"](verbosity=verbosity).render(result) if result.diagnostics else ""
    verdict = Verdict(result.ok, len(result.errors), report or "", _digests(result))
    sys.stdout.buffer.write(pickle.dumps(verdict))
