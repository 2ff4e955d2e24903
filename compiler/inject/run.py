"""`capidx inject`, run: read the build's memory artifact, check every file named, then write or report.

Every file is read and checked before any is written, so a bad one (markers that do not pair, a path out of
the project, bytes that are not UTF-8) leaves all of them untouched; and every new text is written to a
temporary file before any is renamed into place, so one that cannot be written (a full disk) leaves all of
them untouched too. A file already current is not written.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capidx.compiler.diagnostics import ExitCode
from capidx.compiler.inject import block
from capidx.compiler.inject.target import InjectError, Target, open_target, write_all
from capidx.compiler.report.manifest_reader import load_manifest
from capidx.schema import builddir

MEMORY_KIND = "memory"


@dataclass(frozen=True)
class InjectOptions:
    """Parsed `capidx inject` options."""

    files: tuple[Path, ...]
    build: Path  # the build directory (or its manifest.json)
    project: Path  # the folder of the capidx.yaml in force, else the working directory
    cwd: Path
    check: bool = False
    project_out: Path | None = None  # the project's own build directory (paths.out), never written either
    # What the project's build reads, each with what to call it: ("the catalog folder", agents/), never written.
    inputs: tuple[tuple[str, Path], ...] = ()
    # The options given (`--build`, `--config`), repeated in the commands `--check` suggests; each as written.
    given_build: str | None = None
    given_config: str | None = None


@dataclass(frozen=True)
class Memory:
    text: str
    sha256: str


@dataclass(frozen=True)
class Plan:
    """One file: what it should hold, why it is not current (None: it is) and what writing it does."""

    target: Target
    new: str
    stale: str | None
    done: str


def _command(*words: str) -> str:
    return " ".join(["capidx", *map(shlex.quote, words)])


def execute(options: InjectOptions, echo: Callable[[str], Any] = print) -> int:
    """Check (with `check`) or update every file; return the exit code. `InjectError` (exit 2) names every bad
    input at once, before anything is written."""
    memory = load_memory(options.build)
    plans = _plan_all(options, memory)
    if options.check:
        for plan in plans:
            echo(f"{plan.target.shown}: {plan.stale or 'current'}")
        stale = [plan.target.shown for plan in plans if plan.stale]
        if stale:
            config = ("--config", options.given_config) if options.given_config else ()
            out, build = (("--out", given), ("--build", given)) if (given := options.given_build) else ((), ())
            again = _command("build", *out, *config), _command("inject", *build, *config, *stale)
            echo(f"to update: {again[0]} (if the catalog changed), then {again[1]}")
            return int(ExitCode.INVALID)
        return int(ExitCode.OK)
    write_all([(plan.target, plan.new.encode("utf-8")) for plan in plans if plan.stale is not None])
    for plan in plans:
        echo(f"{plan.target.shown}: {plan.done}")
    out = options.project_out
    if out is not None and not (options.cwd / out).is_dir():  # the block sends a model to files not there yet
        shown = out.relative_to(options.project) if out.is_relative_to(options.project) else out
        echo(f"note: the block points at {shown.as_posix()}/ (paths.out), which does not exist yet: run `capidx build`")
    return int(ExitCode.OK)


def _plan_all(options: InjectOptions, memory: Memory) -> list[Plan]:
    plans: dict[Path, Plan] = {}
    problems = []
    for name in options.files:
        try:
            target = open_target(name, options.project, options.cwd, options.build, options.project_out, options.inputs)
            if target.path not in plans:  # the same file twice (or through a link) is done once
                plans[target.path] = _plan(target, memory)
        except InjectError as error:
            problems.append(error.message)
        except block.MarkerError as error:
            problems.append(f"{name}: {error}")
    if problems:
        raise InjectError("\n".join([*problems, "nothing written"]))
    return list(plans.values())


def _plan(target: Target, memory: Memory) -> Plan:
    found = block.find_block(target.text) if target.text else None  # the file's markers, read once
    rendered = block.expected_block(target.text, memory.text, memory.sha256)
    stale = block.staleness(target.text, found, rendered, memory.sha256)
    if stale is None:
        return Plan(target, "", None, "unchanged (the block is current)")
    done = "created" if target.text is None else "block updated" if found else "block added"
    return Plan(target, block.splice(target.text, found, rendered), stale, done)


def load_memory(location: Path) -> Memory:
    """The build's memory artifact, checked against its sha256 in the manifest."""
    manifest = load_manifest(location)
    row = _memory_row(manifest.artifacts)
    if row is None:
        raise InjectError(
            f"{manifest.path}: the build has no {MEMORY_KIND} artifact (made by an older capidx?): run `capidx build`"
        )
    path = manifest.path.parent / row["path"]
    data = _artifact_bytes(path, row)
    if hashlib.sha256(data).hexdigest() != row["sha256"]:
        raise InjectError(f"{path}: does not match its sha256 in {builddir.MANIFEST}; {builddir.REBUILD}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InjectError(f"{path}: not UTF-8; {builddir.REBUILD}") from None
    if line := block.marker_line(text):  # it would end the block early on the next run: the catalog's text is refused
        raise InjectError(f"{path}:{line}: a line starting with a capidx marker; remove it from the catalog")
    return Memory(text, row["sha256"])


def _memory_row(rows: Any) -> Mapping[str, Any] | None:
    return next((row for row in rows if row["kind"] == MEMORY_KIND), None)


def _artifact_bytes(path: Path, row: Mapping[str, Any]) -> bytes:
    """The artifact's bytes, no more than the manifest says (its file, or its slice of a pack)."""
    offset = row.get("offset", 0)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe would block
            raise InjectError(f"{path}: not a regular file; {builddir.REBUILD}")
        with open(path, "rb") as stream:
            stream.seek(offset)
            return stream.read(row["bytes"])
    except OSError as exc:
        raise InjectError(f"{path}: cannot read it: {exc.strerror or exc}; {builddir.REBUILD}") from None
