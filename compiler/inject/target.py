"""The memory files `capidx inject` may read and write: inside the project, regular, UTF-8, bounded; written
atomically.

Defense in depth, because the file names come from the command line, a pre-commit configuration or a CI
script, and the files (or links) may come from a pull request: a path is refused when it, or a symbolic link
on the way, leads out of the project (the folder of the capidx.yaml in force, else the working directory);
a link is followed to its target, which is what gets written (the link stays a link). Nothing but regular
files is read (a pipe would block, a device never end), and nothing larger than `MAX_BYTES`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from capidx.compiler.errors import UsageError
from capidx.compiler.files import read_at_most, write_beside

# A memory file is read whole by an agent at start: one of 4 MiB is not one, whatever it claims.
MAX_BYTES = 4 * 1024 * 1024
TEMP_SUFFIX = ".capidx-inject.tmp"  # a temporary file beside its target: `.<name>.<random>.capidx-inject.tmp`


class InjectError(UsageError):
    """A memory file that may not or cannot be read or written (exit 2; the message names it)."""


@dataclass(frozen=True)
class Target:
    """One memory file: as the user named it, where it really is, and what it holds (None: not there yet)."""

    shown: str
    path: Path  # links resolved: the file written
    text: str | None
    raw: bytes | None
    mode: int | None


def open_target(name: Path, project: Path, cwd: Path, build: Path, project_out: Path | None = None) -> Target:
    """Read the memory file `name` (relative to `cwd`) or learn that it is missing; `InjectError` when it may
    not be used. `build` is the build directory read (`--build`, or its manifest.json) and `project_out` the
    project's own (`paths.out`): neither is ever written."""
    shown = str(name)
    given = Path(os.path.abspath(cwd / name))
    root = _resolve(project, shown)
    path = _resolve(given, shown)
    if not path.is_relative_to(root):
        inside = given.is_relative_to(root) or given.is_relative_to(project)
        how = "a symbolic link on the way leads out of" if inside else "it is outside"
        raise InjectError(f"{shown}: {how} the project ({project}); name a file inside it")
    build = _resolve(Path(os.path.abspath(cwd / build)), shown)
    builds = [build if build.is_dir() else build.parent]
    if project_out is not None:  # a folder by configuration, whether built yet or not
        builds.append(_resolve(Path(os.path.abspath(cwd / project_out)), shown))
    _refuse_special_folders(path, root, builds, shown)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.lexists(given):
            raise InjectError(f"{shown}: a symbolic link to a missing file ({path}); fix or remove the link") from None
        _check_folder(path.parent, root, shown)
        return Target(shown, path, None, None, None)
    except OSError as exc:
        raise InjectError(f"{shown}: cannot read it: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InjectError(f"{shown}: not a regular file (a folder, a pipe or a device?)")
    raw = _read(path, shown)
    return Target(shown, path, _decode(raw, shown), raw, stat.S_IMODE(info.st_mode))


def _refuse_special_folders(path: Path, root: Path, builds: Sequence[Path], shown: str) -> None:
    """Not git's own files (a hook is a program: text written into it would run) and not a build (the one
    read, or the project's own when `--build` names another), which the next `capidx build` replaces (and
    whose memory.md would no longer match its manifest)."""
    if ".git" in path.relative_to(root).parts:
        raise InjectError(f"{shown}: inside .git; name a memory file of the working tree")
    if any(path.is_relative_to(build) for build in builds):
        raise InjectError(f"{shown}: inside the build directory, which capidx build replaces")


def _resolve(path: Path, shown: str) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop: RuntimeError before Python 3.13, OSError since
        raise InjectError(f"{shown}: cannot follow its symbolic links ({exc})") from None


def _check_folder(folder: Path, root: Path, shown: str) -> None:
    """The nearest existing folder above a missing file must be a folder (the rest is created)."""
    while not os.path.lexists(folder) and folder != root:
        folder = folder.parent
    if not folder.is_dir():
        raise InjectError(f"{shown}: {folder} is not a folder")


def _read(path: Path, shown: str) -> bytes:
    try:
        raw = read_at_most(path, MAX_BYTES)
    except OSError as exc:
        raise InjectError(f"{shown}: cannot read it: {exc.strerror or exc}") from None
    if raw is None:
        raise InjectError(f"{shown}: larger than {MAX_BYTES >> 20} MiB, not a memory file an agent reads")
    return raw


def _decode(raw: bytes, shown: str) -> str:
    try:
        return raw.decode("utf-8")  # a byte-order mark stays in the text: it is outside the block
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InjectError(f"{shown}: not UTF-8 ({exc.reason} at byte {exc.start}, line {line})") from None


def write_all(writes: Sequence[tuple[Target, bytes]]) -> None:
    """Replace (or create) every file, all or none: each is first written whole to a temporary file in its
    own folder (given the file's mode; a new file gets the umask's), and only when every one is written are
    they renamed over their targets (a rename needs no space), so a full disk fails before any file changes.
    Refused when a file changed since it was read. On any failure no temporary file is left, nor a folder this
    run created for a new file (`.github/`) that is still empty."""
    staged: list[tuple[Target, Path]] = []
    created: list[Path] = []
    try:
        for target, data in writes:
            created += _missing_folders(target.path.parent)
            staged.append((target, _stage(target, data)))
        while staged:
            target, temporary = staged[0]
            try:
                os.replace(temporary, target.path)
            except OSError as exc:
                raise InjectError(f"{target.shown}: cannot write it: {exc.strerror or exc}") from None
            staged.pop(0)
        created.clear()  # every file is in place: its folders stay
    finally:
        for _target, temporary in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        for folder in sorted(created, key=lambda path: len(path.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only an empty folder goes: one a file was renamed into, or another writer used, stays


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet: what writing a file into it creates."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _stage(target: Target, data: bytes) -> Path:
    """`data` in a new temporary file beside the target, with the target's mode; `InjectError` (and nothing
    left) when it cannot be written."""
    if _current_bytes(target) != target.raw:
        raise InjectError(f"{target.shown}: it changed while capidx inject ran; nothing written to it, run again")
    try:
        return write_beside(target.path, data, target.mode, TEMP_SUFFIX)
    except OSError as exc:
        raise InjectError(f"{target.shown}: cannot write it: {exc.strerror or exc}") from None


def _current_bytes(target: Target) -> bytes | None:
    try:
        with open(target.path, "rb") as stream:
            return stream.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InjectError(f"{target.shown}: cannot read it again: {exc.strerror or exc}") from None
