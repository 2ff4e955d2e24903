"""Writing the build directory atomically.

Everything is written into a sibling temporary directory (`<parent>/.capidx-build-<random>`), then
swapped in. On Linux the two names are exchanged in one step (`exchange`: renameat2 with RENAME_EXCHANGE),
so `out` never stops existing, and the old build, now under the temporary name, is removed. Where that
call is missing or the file system refuses it, the swap takes two renames: the old build →
`<parent>/.capidx-old-<out's name>-<random>` (`old_name`), the new one → `out`. A reader that opens `out`
between them gets "not found" and retries (the server keeps serving the build it loaded); a build killed
between them leaves no `out`, and the next build puts the old one back from the folder that names it
(`capidx.compiler.emit.outdir.restore_interrupted`) before anything else but checking where `out` is. A failed
or killed build therefore never loses the previous one.

Leftovers of killed builds (`.capidx-build-*`, `.capidx-old-*`) are removed by the next build, but
not the temporary directory of a build still running beside it (two builds into sibling folders, e.g.
two `--out` in one parent): a build holds an exclusive `flock` on its temporary directory until the
swap, and a directory that cannot be locked is in use. (Where `flock` does not exist, every leftover is
removed, as before.) Nor the previous build of a folder that is missing: that one is put back.

Only what is provably ours is ever removed: a temporary directory is made under a staging name
(`.capidx-new-<random>`), locked and marked there, and only then renamed to `.capidx-build-<random>`, so
a `.capidx-build-*` directory of ours holds the marker file (`MARKER`) from its first moment until it is
gone (the marker is removed from the new build just before the swap, and from an old one last, after
everything else is gone). A build killed while staging leaves an empty folder, or one holding nothing
but the marker or a part of it; `capidx.compiler.emit.outdir` decides which folder `--out` may replace
and which leftovers are ours.

Every byte goes through `_write_all` (one `os.write` loop), and a failed write names its file: a full
disk ends the build with one message, and `abort` removes the temporary directory even then.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import os
import secrets
import shutil
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from capidx.compiler.errors import UsageError

_T = TypeVar("_T")

TEMP_PREFIX = ".capidx-build-"
OLD_PREFIX = ".capidx-old-"
NEW_PREFIX = ".capidx-new-"  # a temporary directory while it is made and marked (see the module's docstring)
# Test-only hook (documented in docs/build-directory.md): when set to a file path, the build creates
# that file once every artifact is written to the temporary directory, then sleeps before the swap,
# so a test can kill the process at a known point. Never set it in normal use.
PAUSE_ENV = "CAPIDX_TEST_PAUSE_BEFORE_SWAP"


MARKER = ".capidx-temporary"  # in a temporary or old build directory: "made by capidx, safe to remove"
MARKER_TEXT = b"capidx: a temporary build directory; the next capidx build removes it\n"


def remove_ours(directory: Path, made: os.stat_result | None = None) -> bool:
    """Remove a temporary or old build directory, its marker last, so that a removal cut short (kill -9, a
    file that cannot be removed) still leaves a directory the next build recognizes as ours. Whether the
    directory is gone.

    Never through a link: `directory` is opened without following one, and what it holds is removed by name
    inside it (links removed, never followed), so a link put in its place, whenever that happens, is left as
    it is and so is what it leads to. `made`: the directory as it was made (`os.lstat`); another one by that
    name is left alone (after a swap, the temporary name holds the previous build, or whatever took its place)."""
    try:
        folder = _open_folder(directory)
    except FileNotFoundError:
        return True
    except OSError:  # a link, not a directory, or unreadable: nothing of it is ours to remove
        return False
    try:
        if made is not None and not os.path.samestat(made, _folder_stat(directory, folder)):
            return False
        for name in _entries(directory, folder) or ():
            path = _inside_folder(directory, folder, name)
            try:
                if stat.S_ISDIR(os.lstat(path, dir_fd=folder).st_mode):
                    shutil.rmtree(path, ignore_errors=True, dir_fd=folder)
                else:
                    os.unlink(path, dir_fd=folder)
            except OSError:
                pass
        if _entries(directory, folder) != []:  # something stayed (or cannot be listed): keep the marker
            return False
        with contextlib.suppress(OSError):
            os.unlink(_inside_folder(directory, folder, MARKER), dir_fd=folder)
    finally:
        if folder is not None:
            os.close(folder)
    with contextlib.suppress(OSError):
        os.rmdir(directory)  # a link by that name now is not removed: rmdir refuses anything but a directory
    return not os.path.lexists(directory)


# Removing and marking work through a descriptor of the directory opened without following a link, and names
# inside it (shutil.rmtree with dir_fd resists links swapped in meanwhile). Where the OS cannot (no O_NOFOLLOW,
# no *at calls), a path is used once lstat has found a directory there, not a link.
_BY_DESCRIPTOR = (
    hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
    and {os.open, os.stat, os.unlink} <= os.supports_dir_fd
    and os.scandir in os.supports_fd
    and shutil.rmtree.avoids_symlink_attacks
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _open_folder(directory: Path) -> int | None:
    """A descriptor of `directory`, opened without following a link; None where the OS cannot remove through
    one (`_BY_DESCRIPTOR`), once lstat has found a directory. OSError for a link or anything but a directory."""
    if not _BY_DESCRIPTOR:
        if not stat.S_ISDIR(os.lstat(directory).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory (a link is never followed)", os.fspath(directory))
        return None
    return os.open(directory, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0))


def _folder_stat(directory: Path, folder: int | None) -> os.stat_result:
    return os.fstat(folder) if folder is not None else os.lstat(directory)


def _inside_folder(directory: Path, folder: int | None, name: str) -> str:
    """How to name `name` in `directory` to calls given `dir_fd=folder`: the name alone, or the whole path."""
    return name if folder is not None else os.path.join(directory, name)


def _entries(directory: Path, folder: int | None) -> list[str] | None:
    """The names in `directory` (read through `folder` when given) but the marker; None when it cannot be
    listed ([] once it is gone)."""
    try:
        with os.scandir(directory if folder is None else folder) as entries:
            return [entry.name for entry in entries if entry.name != MARKER]
    except FileNotFoundError:
        return []
    except OSError:
        return None


class SetAsideKept(UsageError):
    """The swap moved aside something that is not provably the previous build (`out` was replaced between the
    last check and the swap, by a link or by a folder capidx may not remove): it is left where the swap put it,
    the new build is in `out`, and the build fails (exit 2) with a message naming both."""


class TreeWriter:
    """Writes a new build into a temporary sibling of `out`, in this process, then swaps it into place.

    `add` writes one file; `append` adds one answer to a pack (a file holding many answers back to back:
    docs/build-directory.md, "Packs") and returns its offset. `finish` closes the packs, pauses for tests,
    calls `before_swap` and swaps; `abort` (called by `finish` on failure, harmless after it) removes the
    temporary directory, and only the directory it made (after an exchange, its name holds something else).
    Nothing is linked or shared with the current build: a build writes few files. A failed write raises the
    OSError with the file's path; `written` counts the bytes written so far.
    """

    def __init__(
        self,
        out: Path,
        before_swap: Callable[[], None] | None = None,
        may_remove: Callable[[Path], str | None] | None = None,
    ) -> None:
        """`before_swap`: called just before the swap; it raises to keep `out` as it is. `may_remove(folder)`:
        asked of what the swap moved out of `out`'s place (a directory, not a link: `_refusal` has looked)
        before it is marked and removed; None when it may be, else why not, and it is then left there."""
        out.parent.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.temp, self._lock = _make_temporary(out.parent)
        self._made = os.lstat(self.temp)  # which directory `abort` may remove
        self._before_swap = before_swap
        self._may_remove = may_remove
        self._folders: set[str] = {""}
        self._packs: dict[str, _Pack] = {}
        self._done = self._ended = False
        self._left: Path | None = None
        self.files = 0
        self.written = 0

    def add(self, relative: str, data: bytes | Iterable[bytes]) -> None:
        """One file of the new build (a POSIX path relative to it): its bytes, or its bytes in pieces."""
        target = self._target(relative)
        if isinstance(data, bytes):
            self.written += _write_file(target, data)
            return
        pack = _Pack(target)
        try:
            for piece in data:
                self.written += pack.write(piece)
        finally:
            pack.close()

    def append(self, relative: str, data: bytes) -> int:
        """Append `data` to the pack at `relative` (created by its first answer); returns where it starts."""
        pack = self._packs.get(relative)
        if pack is None:
            pack = self._packs[relative] = _Pack(self._target(relative))
        offset = pack.size
        self.written += pack.write(data)
        return offset

    def finish(self) -> None:
        """Close the packs, then swap the new build in. `SetAsideKept` when what the swap moved aside was not
        the previous build and was left where it is (the new build is in `out` then)."""
        kept = None
        try:
            self._close_packs()
            _pause_for_tests(self.temp)
            if self._before_swap is not None:
                self._before_swap()
            os.unlink(self.temp / MARKER)  # the build is complete: from now on it is provably ours by its manifest
            kept = _swap(self.temp, self.out, self._may_remove)
            self._done = True
        finally:
            self.abort()
        if kept is not None:
            where, reason = kept
            raise SetAsideKept(
                f"{self.out}: was replaced while the build ran, by something capidx may not remove ({reason});"
                f" the new build took its place, and that is left as it is in {where}"
            )

    def abort(self) -> Path | None:
        """Remove the temporary directory (nothing to do once `finish` has swapped), even after a failed
        write; returns it when some of it could not be removed (it keeps its marker: the next build tries)."""
        if self._ended:
            return self._left
        self._ended = True
        with contextlib.suppress(OSError):  # a write that failed fails again here: it was reported already
            self._close_packs()
        self._left = None if self._done or remove_ours(self.temp, self._made) else self.temp
        _release(self._lock)
        self._lock = None
        return self._left

    def _target(self, relative: str) -> str:
        if not _inside(relative):  # defense in depth: validation refuses the names that could form one
            raise OSError(f"refused to write {relative!r}: not a path inside the build")
        folder = relative.rpartition("/")[0]
        if folder not in self._folders:
            path = os.path.join(self.temp, folder)
            _named(os.makedirs, path, path, exist_ok=True)
            self._folders.add(folder)
        self.files += 1
        return os.path.join(self.temp, relative)

    def _close_packs(self) -> None:
        """Close every pack (each one's descriptor even when its last bytes cannot be written); the first
        failure is raised once all are closed."""
        packs, self._packs = self._packs, {}
        failure: OSError | None = None
        for pack in packs.values():
            try:
                pack.close()
            except OSError as exc:
                failure = failure or exc
        if failure is not None:
            raise failure


class _Pack:
    """A file written in pieces through `_write_all`, buffered (a pack gets thousands of small answers)."""

    _FLUSH_AT = 1 << 20

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = _named(os.open, path, path, _CREATE, 0o666)
        self._buffer = bytearray()
        self.size = 0

    def write(self, data: bytes) -> int:
        self._buffer += data
        self.size += len(data)
        if len(self._buffer) >= self._FLUSH_AT:
            self._flush()
        return len(data)

    def close(self) -> None:
        fd = self._fd
        if fd is None:
            return
        try:
            self._flush()
        finally:
            self._fd = None
            os.close(fd)

    def _flush(self) -> None:
        data, self._buffer = self._buffer, bytearray()  # handed over, not copied
        if data:
            _named(_write_all, self.path, self._fd, data)


def _inside(relative: str) -> bool:
    """Whether `relative` names a file below the build folder: no `..`, `.` or empty part, not absolute."""
    parts = relative.split("/")
    return "\\" not in relative and all(part not in ("", ".", "..") for part in parts) and "\0" not in relative


# What `open(path, "wb")` does, without its buffering layer and its extra system calls (fstat, ioctl).
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def _write_file(path: str, data: bytes) -> int:
    """Write `data` as the file `path` (created or truncated); its size."""
    fd = _named(os.open, path, path, _CREATE, 0o666)  # the umask applies, as with open()
    try:
        _named(_write_all, path, fd, data)
    finally:
        os.close(fd)
    return len(data)


def _write_all(fd: int, data: bytes | bytearray) -> None:
    """The one place where the build's bytes meet the disk."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _named(call: Callable[..., _T], path: str, *args: Any, **kwargs: Any) -> _T:
    """`call(*args)`, whose OSError names `path` (os.write's own says only "No space left on device")."""
    try:
        return call(*args, **kwargs)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = path
        raise


def _make_temporary(parent: Path) -> tuple[Path, int | None]:
    """A new, locked temporary directory beside the output, with default permissions (mkdtemp would make
    it 0700, unreadable by a web server), and the lock (see `_lock`). It is made as `.capidx-new-<random>`,
    locked and marked, then renamed: no `.capidx-build-*` directory of ours is ever without its marker."""
    while True:
        token = secrets.token_hex(6)
        staging, path = parent / f"{NEW_PREFIX}{token}", parent / f"{TEMP_PREFIX}{token}"
        if os.path.lexists(path):
            continue
        try:
            staging.mkdir()
        except FileExistsError:
            continue
        try:
            lock = _lock(staging)
        except (FileNotFoundError, BlockingIOError):  # another build is removing it as a leftover: leave it
            continue
        except OSError:
            with contextlib.suppress(OSError):
                os.rmdir(staging)
            raise
        try:
            _write_file(os.fspath(staging / MARKER), MARKER_TEXT)
            os.rename(staging, path)  # the lock stays with the directory
        except FileNotFoundError:  # removed by another build between mkdir and lock: start again
            _release(lock)
            continue
        except OSError:
            _release(lock)
            remove_ours(staging)
            raise
        return path, lock


def _lock(directory: Path) -> int | None:
    """An exclusive lock on `directory` (a file descriptor to close), so that no other build removes it as a
    leftover; None where `flock` does not exist or the file system refuses it (the lock is then a courtesy
    nobody can offer). BlockingIOError when another process holds it."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return None
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise BlockingIOError(f"{directory} is locked by another process") from None
    except OSError:  # ENOLCK, EOPNOTSUPP (some network file systems): no lock, rather than never a folder
        os.close(fd)
        return None
    return fd


def _release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


@contextlib.contextmanager
def held(directory: Path) -> Iterator[bool]:
    """Whether `directory` is free (no running build holds it, see `_lock`), holding it meanwhile so that no
    build starts using it while the caller removes it; True where `flock` does not exist."""
    try:
        fd = _lock(directory)
    except OSError:
        yield False
        return
    try:
        yield True
    finally:
        _release(fd)


def _swap(temp: Path, out: Path, may_remove: Callable[[Path], str | None] | None = None) -> tuple[Path, str] | None:
    """Put the new build in `temp` in place of `out`, then remove the old one. In one step where the OS can
    exchange two names (`out` never missing); else in two renames, undone when the second fails, with the
    old build under a name that says whose it is, so that a build killed in between loses nothing.

    The swap moves whatever is at `out` at that moment, which need not be what was checked: it is marked and
    removed only when `_refusal` finds nothing against it, else left where the swap put it and returned with
    the reason (where, why)."""
    if not os.path.lexists(out):
        os.rename(temp, out)
        return None
    old: Path | None = None
    kept: tuple[Path, str] | None = None
    try:
        with signals_held():  # without an exchange `out` is missing between the renames: a Ctrl-C waits
            if exchange(temp, out):  # `temp` holds what was at `out` now
                if (reason := _refusal(temp, may_remove)) is None:
                    old = temp
                    _mark(old)
                else:
                    kept = temp, reason
            else:
                old, kept = _rename_twice(temp, out, may_remove)
    finally:
        if old is not None:  # also when a held Ctrl-C is acted on as the block ends; never when the swap failed
            remove_ours(old)
    return kept


def _rename_twice(
    temp: Path, out: Path, may_remove: Callable[[Path], str | None] | None
) -> tuple[Path | None, tuple[Path, str] | None]:
    """The swap without an exchange: `out` aside (see `old_name`), `temp` in its place. When the second rename
    fails, the first is undone: `out` stays missing only when the process is killed between them, and the
    next build then puts it back. Returns where the old build is, to be removed, or (where, why) it was kept."""
    old = old_name(out)
    os.rename(out, old)
    reason = _refusal(old, may_remove)
    if reason is None:
        _mark(old)  # killed from now on, the next build restores it (or, once `out` exists again, removes it)
    try:
        os.rename(temp, out)
    except OSError:
        with contextlib.suppress(OSError):  # else it stays aside (marked if ours), and the next build puts it back
            if reason is None:
                put_back(old, out)
            else:
                os.rename(old, out)  # untouched: back as it was
        raise
    return (old, None) if reason is None else (None, (old, reason))


def _refusal(aside: Path, may_remove: Callable[[Path], str | None] | None) -> str | None:
    """Why what the swap has just moved out of `out`'s place may be neither marked nor removed; None when it may.
    `out` can be replaced between the last check and the swap, which then moves whatever took its place: a link,
    through which the marker would be written into its target and the target's contents removed, or a folder
    of someone else's. It is looked at by `lstat` (a link is never followed), then asked of `may_remove`."""
    try:
        mode = os.lstat(aside).st_mode
    except FileNotFoundError:
        return None  # gone already: nothing is removed
    except OSError as exc:
        return f"it cannot be examined: {exc.strerror or exc}"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if not stat.S_ISDIR(mode):
        return "not a directory"
    return None if may_remove is None else may_remove(aside)


def put_back(old: Path, out: Path) -> None:
    """Rename a previous build set aside by the swap back to `out`, its marker removed first (the marker is no
    file of the build: left in, it would make the next build refuse `out`). OSError when either step fails."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(old / MARKER)
    os.rename(old, out)


def _mark(old: Path) -> None:
    """Give a previous build our marker before it is removed, so that a removal cut short leaves a folder the
    next build recognizes (the build without it is provably ours too, by its manifest, until removal starts).
    Never through a link, whether in place of the folder or of the marker."""
    with contextlib.suppress(OSError):
        folder = _open_folder(old)
        try:
            fd = os.open(_inside_folder(old, folder, MARKER), _CREATE | _NOFOLLOW, 0o666, dir_fd=folder)
            try:
                _write_all(fd, MARKER_TEXT)
            finally:
                os.close(fd)
        finally:
            if folder is not None:
                os.close(folder)


def old_name(out: Path) -> Path:
    """A fresh name beside `out` for its previous build while the new one moves in:
    `.capidx-old-<tag>-<12 hex digits>`, where the tag (`owner_tag`) is `out`'s name. The name says whose previous
    build a leftover is: the next build of `out` restores it, a build of a sibling folder leaves it alone."""
    return out.parent / f"{OLD_PREFIX}{owner_tag(out.name)}-{secrets.token_hex(6)}"


def owner_tag(name: str) -> str:
    """How `old_name` names the folder `name`: the name itself, or its sha256 when too long for a file name."""
    if len(os.fsencode(name)) <= _LONGEST_TAG:
        return name
    return hashlib.sha256(os.fsencode(name)).hexdigest()[:32]


_LONGEST_TAG = 200  # + `.capidx-old-` and `-<12 hex digits>`: within the 255 bytes of a file name


def owner_of(leftover: str) -> str | None:
    """The tag (`owner_tag`) of the folder whose previous build the leftover named `leftover` is; None for a
    name `old_name` does not make (a `.capidx-old-<12 hex digits>` of a capidx that did not name the owner)."""
    if not leftover.startswith(OLD_PREFIX):
        return None
    tag, dash, token = leftover[len(OLD_PREFIX) :].rpartition("-")
    if not (dash and tag and len(token) == 12 and all(c in "0123456789abcdef" for c in token)):
        return None
    return tag


# renameat2's flag that swaps the two names (linux/fs.h), and its "relative to the working folder".
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
# What renameat2 answers when it cannot exchange here: no such system call (an old kernel, a seccomp filter
# answering ENOSYS or EPERM), or a file system that does not support the flag (EINVAL; some say EOPNOTSUPP).
# Falling back is harmless even when the reason was another: the plain renames then report it themselves.
_NOT_HERE = frozenset({errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM})


def exchange(first: Path, second: Path) -> bool:
    """Exchange the names of two existing entries in one atomic step (Linux renameat2 with RENAME_EXCHANGE),
    so that neither name is missing at any moment. False, with nothing changed, where that is unavailable:
    another OS, a C library without renameat2, a kernel or file system that refuses the flag. Any other
    failure is the OSError."""
    call = _renameat2()
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NOT_HERE:
        return False
    raise OSError(code, os.strerror(code), os.fspath(first), None, os.fspath(second))


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """The C library's renameat2 (glibc 2.28+, musl 1.2.1+), or None where there is none to call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    call.restype = ctypes.c_int
    return call


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM received inside are acted on when it ends (as Ctrl-C or termination), not halfway.

    A Python handler that only records them stands in meanwhile (handlers can be set in the main thread only;
    elsewhere nothing is held)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    held = (signal.SIGTERM, signal.SIGINT)  # restored in this order: SIGINT's handler is the last to go back
    previous = {number: signal.signal(number, lambda number, _frame: received.append(number)) for number in held}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        for number in (number for number in held if number in received):  # termination first: it ends it all
            signal.raise_signal(number)  # now handled as it would have been: the end, or KeyboardInterrupt


def _pause_for_tests(temp: Path) -> None:
    signal_file = os.environ.get(PAUSE_ENV)
    if signal_file:  # written whole, then renamed: a test polling for the file never reads it half written
        Path(signal_file + ".part").write_text(str(temp), encoding="utf-8")
        os.replace(signal_file + ".part", signal_file)
        time.sleep(60)
