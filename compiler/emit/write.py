"""Writing the build directory atomically.

Everything is written into a sibling temporary directory (`<parent>/.capidx-build-<random>`), then
swapped in with two renames: the old build → `<parent>/.capidx-old-<random>`, the new one → `out`;
then the old one is removed. A failed or killed build therefore never touches the previous one. On
POSIX there is a window of two syscalls between the renames where `out` does not exist; a reader
that opens `out` then gets "not found" and retries (the server keeps serving the build it loaded).
Leftovers of killed builds (`.capidx-build-*`, `.capidx-old-*`) are removed by the next build, but
not the temporary directory of a build still running beside it (two builds into sibling folders, e.g.
two `--out` in one parent): a build holds an exclusive `flock` on its temporary directory until the
swap, and a directory that cannot be locked is in use. (Where `flock` does not exist, every leftover is
removed, as before.)

Only what is provably ours is ever removed: the temporary and old directories hold a marker file
(`MARKER`) from the moment they are ours until they are gone (the marker is removed from the new build
just before the swap, and from an old one last), and `capidx.compiler.emit.outdir` decides which folder
`--out` may replace and which leftovers are ours.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

TEMP_PREFIX = ".capidx-build-"
OLD_PREFIX = ".capidx-old-"
# Test-only hook (documented in docs/build-directory.md): when set to a file path, the build creates
# that file once every artifact is written to the temporary directory, then sleeps before the swap,
# so a test can kill the process at a known point. Never set it in normal use.
PAUSE_ENV = "CAPIDX_TEST_PAUSE_BEFORE_SWAP"


MARKER = ".capidx-temporary"  # in a temporary or old build directory: "made by capidx, safe to remove"
MARKER_TEXT = b"capidx: a temporary build directory; the next capidx build removes it\n"


def remove_ours(directory: Path) -> None:
    """Remove a temporary or old build directory, its marker last, so that a removal cut short (kill -9)
    still leaves a directory the next build recognizes as ours. Links inside are removed, never followed."""
    try:
        with os.scandir(directory) as entries:
            names = [entry.name for entry in entries if entry.name != MARKER]
    except OSError:
        return
    for name in names:
        path = directory / name
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass
    with contextlib.suppress(OSError):
        os.unlink(directory / MARKER)
    with contextlib.suppress(OSError):
        os.rmdir(directory)


class TreeWriter:
    """Writes a new build into a temporary sibling of `out`, in this process, then swaps it into place.

    `add` writes one file; `append` adds one answer to a pack (a file holding many answers back to back:
    docs/build-directory.md, "Packs") and returns its offset. `finish` closes the packs, pauses for tests,
    calls `before_swap` and swaps; `abort` (called by `finish` on failure, harmless after it) removes the
    temporary directory. Nothing is linked or shared with the current build: a build writes few files.
    """

    def __init__(self, out: Path, before_swap: Callable[[], None] | None = None) -> None:
        """`before_swap`: called just before the swap; it raises to keep `out` as it is."""
        out.parent.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.temp = _make_sibling(out.parent, TEMP_PREFIX)
        self._lock = _hold(self.temp)
        self._before_swap = before_swap
        self._folders: set[str] = {""}
        self._packs: dict[str, tuple[BinaryIO, list[int]]] = {}  # path -> (open file, [bytes written])
        self._done = False
        self.files = 0

    def add(self, relative: str, data: bytes | Iterable[bytes]) -> None:
        """One file of the new build (a POSIX path relative to it): its bytes, or its bytes in pieces."""
        target = self._target(relative)
        if isinstance(data, bytes):
            _write_file(target, data)
            return
        with open(target, "wb") as handle:
            handle.writelines(data)

    def append(self, relative: str, data: bytes) -> int:
        """Append `data` to the pack at `relative` (created by its first answer); returns where it starts."""
        pack = self._packs.get(relative)
        if pack is None:
            pack = self._packs[relative] = (open(self._target(relative), "wb"), [0])  # noqa: SIM115 - see finish
        handle, written = pack
        offset = written[0]
        handle.write(data)
        written[0] = offset + len(data)
        return offset

    def finish(self) -> None:
        """Close the packs, then swap the new build in."""
        try:
            self._close_packs()
            _pause_for_tests(self.temp)
            if self._before_swap is not None:
                self._before_swap()
            os.unlink(self.temp / MARKER)  # the build is complete: from now on it is provably ours by its manifest
            _swap(self.temp, self.out)
            self._done = True
        finally:
            self.abort()

    def abort(self) -> None:
        """Remove the temporary directory (nothing to do once `finish` has swapped)."""
        self._close_packs()
        if not self._done:
            remove_ours(self.temp)
        _release(self._lock)
        self._lock = None

    def _target(self, relative: str) -> str:
        if not _inside(relative):  # defense in depth: validation refuses the names that could form one
            raise OSError(f"refused to write {relative!r}: not a path inside the build")
        folder = relative.rpartition("/")[0]
        if folder not in self._folders:
            os.makedirs(os.path.join(self.temp, folder), exist_ok=True)
            self._folders.add(folder)
        self.files += 1
        return os.path.join(self.temp, relative)

    def _close_packs(self) -> None:
        packs, self._packs = self._packs, {}
        for handle, _ in packs.values():
            handle.close()


def _inside(relative: str) -> bool:
    """Whether `relative` names a file below the build folder: no `..`, `.` or empty part, not absolute."""
    parts = relative.split("/")
    return "\\" not in relative and all(part not in ("", ".", "..") for part in parts) and "\0" not in relative


# What `open(path, "wb")` does, without its buffering layer and its extra system calls (fstat, ioctl).
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def _write_file(path: str, data: bytes) -> None:
    fd = os.open(path, _CREATE, 0o666)  # the umask applies, as with open()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _make_sibling(parent: Path, prefix: str) -> Path:
    """A new directory with default permissions (mkdtemp would make it 0700, unreadable by a web server),
    marked as ours."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        try:
            _write_file(os.fspath(path / MARKER), MARKER_TEXT)
        except OSError:
            os.rmdir(path)
            raise
        return path


def _hold(directory: Path) -> int | None:
    """An exclusive lock on `directory` (a file descriptor to close), so that no other build removes it as a
    leftover; None where `flock` does not exist."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return None
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a new directory nobody else knows yet: cannot happen; the lock is a courtesy anyway
        os.close(fd)
        return None
    return fd


def _release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def in_use(directory: Path) -> bool:
    """Whether a running build holds `directory` (see `_hold`)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing also drops a lock taken here
    return False


def _swap(temp: Path, out: Path) -> None:
    if not out.exists():
        os.rename(temp, out)
        return
    old = out.parent / f"{OLD_PREFIX}{secrets.token_hex(6)}"
    os.rename(out, old)
    with contextlib.suppress(OSError):  # killed from now on, the next build removes it (its manifest proves it too)
        _write_file(os.fspath(old / MARKER), MARKER_TEXT)
    os.rename(temp, out)
    remove_ours(old)


def _pause_for_tests(temp: Path) -> None:
    signal_file = os.environ.get(PAUSE_ENV)
    if signal_file:  # written whole, then renamed: a test polling for the file never reads it half written
        Path(signal_file + ".part").write_text(str(temp), encoding="utf-8")
        os.replace(signal_file + ".part", signal_file)
        time.sleep(60)
