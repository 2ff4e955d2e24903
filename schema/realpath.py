"""A path with its symbolic links followed, without recursion: `os.path.realpath` and `Path.resolve` for paths a
pull request can hold.

Python 3.11's `os.path.realpath` and `Path.resolve` recurse once per link they follow, and follow any number: a
chain of some 1,000 links (`l1000 -> l999 -> ... -> f`, which git stores as readily as a file) ended every command
that resolved it in a RecursionError traceback. Catching that error instead would still leave the answer to
depend on how deep the caller's stack already is (a chain of 900 links resolved in one command and crashed in
another), and would resolve chains no kernel opens. So this module resolves one link at a time, in a loop, and
follows at most `MAX_LINKS` of them in all, as the kernel does for one path: more is a link loop, and a path this
module cannot resolve is one that opening would fail on with ELOOP as well. A chain that long is treated as each
caller already treats a loop:

- `real_path` (for `os.path.realpath`): without `strict`, the path is returned resolved as far as the last link it
  followed, the rest unresolved (where realpath leaves a loop); with `strict`, OSError(ELOOP), as realpath raises. That
  unresolved answer is for comparing, not for opening: opened on its own, it starts the kernel's count anew at a
  link of the chain and may reach its end, where the path it came from (or any path through it) fails with ELOOP.
- `resolve` (for `Path.resolve`): a loop or an over-long chain is OSError(ELOOP) also without `strict` (where
  Python 3.11 raised RuntimeError), and a missing path is kept as written unless `strict`.

Forty is Linux's limit, and no smaller than other systems' (32 on macOS and the BSDs): a path a kernel opens is
one this module resolves to its end, so a caller confining reads to a folder by the resolved path (the server's
build directory) lets nothing past it by an unresolved answer. Standard library only: the compiler and the server
both use it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# Links followed in one path at most, as Linux follows (MAXSYMLINKS): one more is a loop.
MAX_LINKS = 40


def real_path(path: str | os.PathLike[str], *, strict: bool = False) -> str:
    """`os.path.realpath(path, strict=strict)`, following at most `MAX_LINKS` links (see the module's docstring)."""
    name = os.fspath(path)
    if os.name != "posix":  # Windows' realpath asks the system for the final path: no recursion to bound
        return os.path.realpath(name, strict=strict)
    found, ended = _walk(name, strict)
    if not ended and strict:
        raise _loop_error(name)
    return found


def resolve(path: Path, *, strict: bool = False) -> Path:
    """`path.resolve(strict=strict)`, following at most `MAX_LINKS` links; a loop raises OSError(ELOOP) in both
    modes, where Python 3.11 raised RuntimeError (a caller catches one error for every way the path is broken)."""
    if os.name != "posix":
        try:
            return path.resolve(strict=strict)
        except RuntimeError as error:  # Python 3.11's word for a loop
            raise _loop_error(os.fspath(path)) from error
    found, ended = _walk(os.fspath(path), strict)
    if not ended:
        raise _loop_error(os.fspath(path))
    return Path(found)


def _walk(name: str, strict: bool) -> tuple[str, bool]:
    """The absolute, normalized `name` with every link followed, and True; at a loop (a link past `MAX_LINKS`), the
    path resolved up to that link with the rest as written, and False. posixpath's algorithm, with a stack of the
    parts still to resolve in place of recursion. A part that is not there is kept as written, unless `strict`."""
    resolved = "/" if name.startswith("/") else os.getcwd()
    pending = name.split("/")[::-1]  # the next part last
    followed = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, part)
        try:
            is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
            target = os.readlink(candidate) if is_link else ""
        except OSError:
            if strict:
                raise
            is_link = False
        if not is_link:
            resolved = candidate
            continue
        followed += 1
        if followed > MAX_LINKS:
            return os.path.normpath(os.path.join(candidate, *reversed(pending))), False
        if target.startswith("/"):
            resolved = "/"
        pending += target.split("/")[::-1]
    return resolved, True


def _loop_error(name: str) -> OSError:
    return OSError(errno.ELOOP, os.strerror(errno.ELOOP), name)


def leads_out(path: Path) -> tuple[str, str] | None:
    """(where `path` leads, its folder's real path) when a symbolic link takes it out of the folder it is found in;
    None when it stays there. For the `capidx.yaml` a command finds in its working folder: a pull request may
    commit one that is a link to any file of the machine, whose keys the check of capidx.yaml then quotes."""
    folder, real = real_path(path.parent), real_path(path)
    return None if os.path.commonpath((folder, real)) == folder else (real, folder)
