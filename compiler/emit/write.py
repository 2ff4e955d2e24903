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
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NoReturn

TEMP_PREFIX = ".capidx-build-"
OLD_PREFIX = ".capidx-old-"
MANIFEST = "manifest.json"
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
    """Writes a new build into a temporary sibling of `out`, file by file while the build goes on
    rendering, then swaps it into place atomically.

    A file whose path and sha256 equal the current build's is hard-linked from it when its bytes are
    indeed equal: creating a file costs far more than linking one on many file systems (~1 ms against
    ~0.05 ms on a virtualized ext4), and files of a build are never modified in place, so sharing them
    is safe.

    Creating tens of thousands of small files is kernel work (from 0.02 to 1 ms a file, depending on
    the file system) that another CPU can do meanwhile: past the first `HELPER_AFTER` files, a helper
    process (this module, run by a second, isolated Python) creates them in the temporary directory
    as `add` sends them through a pipe. `finish` waits for it, writes what it kept itself, then
    pauses for tests and swaps; `abort` (called by `finish` on failure, and
    harmless after it) stops the helper and removes the temporary directory. Small builds, or
    where no helper can be started, are written by `finish` alone.
    """

    HELPER_AFTER = 1000  # files; below this, starting a second Python costs more than it saves

    def __init__(
        self,
        out: Path,
        previous: Mapping[str, str] | None = None,
        before_swap: Callable[[], None] | None = None,
    ) -> None:
        """`previous`: path -> sha256 of the current build's files (candidates for hard links).
        `before_swap`: called just before the swap; it raises to keep `out` as it is."""
        out.parent.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.temp = _make_sibling(out.parent, TEMP_PREFIX)
        self._lock = _hold(self.temp)
        self._before_swap = before_swap
        self.files = 0
        self._previous = previous or {}
        self._kept: list[tuple[str, bytes, bool]] = []
        self._done = False
        self._helper: subprocess.Popen[bytes] | None = None
        self._may_start = bool(sys.executable) and os.path.isfile(__file__)

    def add(self, relative: str, data: bytes, sha256: str | None = None) -> None:
        """One file of the new build (a POSIX path relative to it); linked when the current one has the same sha256."""
        if not _inside(relative):  # defense in depth: validation refuses the names that could form one
            raise OSError(f"refused to write {relative!r}: not a path inside the build")
        link = sha256 is not None and self._previous.get(relative) == sha256
        self.files += 1
        if self._helper is not None:
            self._send(relative, data, link)
            return
        self._kept.append((relative, data, link))
        if self._may_start and len(self._kept) >= self.HELPER_AFTER:
            self._start_helper()

    def _send(self, relative: str, data: bytes, link: bool) -> None:
        assert self._helper is not None
        name = relative.encode("utf-8")
        try:
            assert self._helper.stdin is not None
            self._helper.stdin.write(_HEADER.pack(len(name), len(data), link) + name)
            self._helper.stdin.write(data)
        except OSError:  # the helper stopped: say why
            self._fail()

    def finish(self, progress: Callable[[int], None] | None = None) -> int:
        """Wait until every file is written, then swap the new build in; returns how many files were linked."""
        try:
            tree = _Tree(os.fspath(self.temp), os.fspath(self.out))
            for relative, data, link in self._kept:  # the files kept when there is no helper
                tree.add(relative, data, link)
            self._kept, linked = [], tree.linked
            if self._helper is not None:
                report, errors = self._helper.communicate()  # closes its input: the end
                if self._helper.returncode != 0:
                    raise self._failure(errors)
                linked += int(report)
            if progress:
                progress(self.files)
            _pause_for_tests(self.temp)
            if self._before_swap is not None:
                self._before_swap()
            os.unlink(self.temp / MARKER)  # the build is complete: from now on it is provably ours by its manifest
            _swap(self.temp, self.out)
            self._done = True
            return linked
        finally:
            self.abort()

    def abort(self) -> None:
        """Stop the helper and remove the temporary directory (nothing to do once `finish` has swapped)."""
        if self._helper is not None and self._helper.poll() is None:
            self._helper.kill()
            self._helper.communicate()
        if not self._done:
            remove_ours(self.temp)
        _release(self._lock)
        self._lock = None

    def _start_helper(self) -> None:
        self._may_start = False
        try:
            self._helper = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _HELPER, __file__, os.fspath(self.temp), os.fspath(self.out)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=1 << 20,
            )
        except OSError:
            return  # written by `finish`, then
        from capidx.compiler.emit import pipes  # here: the helper runs this module alone, without capidx

        pipes.enlarge(self._helper.stdin)
        kept, self._kept = self._kept, []
        for relative, data, link in kept:
            self._send(relative, data, link)

    def _fail(self) -> NoReturn:
        """The helper stopped while files were sent to it."""
        assert self._helper is not None
        if self._helper.poll() is None:
            self._helper.kill()
        _, errors = self._helper.communicate()
        raise self._failure(errors)

    def _failure(self, errors: bytes) -> OSError:
        from capidx.compiler.emit import pipes  # here: the helper runs this module alone, without capidx

        return OSError(f"writing {self.temp} failed: {pipes.last_line(errors) or 'the helper process stopped'}")


def _inside(relative: str) -> bool:
    """Whether `relative` names a file below the build folder: no `..`, `.` or empty part, not absolute."""
    parts = relative.split("/")
    return "\\" not in relative and all(part not in ("", ".", "..") for part in parts) and "\0" not in relative


class _Tree:
    """Creates files below `root`, making folders once, hard-linking unchanged files from `current`."""

    def __init__(self, root: str, current: str) -> None:
        self.root = root
        self.current = current
        self.made: set[str] = {""}
        self.linked = 0

    def add(self, relative: str, data: bytes, link: bool) -> None:
        folder = relative.rpartition("/")[0]
        if folder not in self.made:
            os.makedirs(os.path.join(self.root, folder), exist_ok=True)
            self.made.add(folder)
        target = os.path.join(self.root, relative)
        if link and _link_if_equal(os.path.join(self.current, relative), target, data):
            self.linked += 1
        else:
            _write_file(target, data)


# The helper's messages: path length, data length, "link if equal" flag; then the path and the data.
_HEADER = struct.Struct("<IQ?")
# Run by `python -I -S -c _HELPER <this file> <temporary directory> <current build>`: this module alone
# (standard library only), whatever `sys.path` the build had.
_HELPER = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='capidx_write_helper')['helper_main'](sys.argv[2:])"


def helper_main(argv: list[str]) -> None:
    """The helper process: write the files read from stdin, then print how many were linked."""
    tree = _Tree(argv[0], argv[1])
    stream = sys.stdin.buffer
    try:
        while header := stream.read(_HEADER.size):
            name_size, data_size, link = _HEADER.unpack(header)
            relative = stream.read(name_size).decode("utf-8")
            data = stream.read(data_size)
            if len(data) != data_size:
                raise EOFError("input ended in the middle of a file")
            tree.add(relative, data, link)
    except (OSError, EOFError, struct.error) as exc:
        sys.exit(f"{type(exc).__name__}: {exc}")
    print(tree.linked)


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


def _link_if_equal(current: str, target: str, data: bytes) -> bool:
    try:
        info = os.lstat(current)
        if stat.S_ISLNK(info.st_mode) or info.st_size != len(data):
            return False
        with open(current, "rb") as handle:
            if handle.read() != data:
                return False
        os.link(current, target)
    except OSError:  # no such file, or a file system without hard links: write it instead
        return False
    return True


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
