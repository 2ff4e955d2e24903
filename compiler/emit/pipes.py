"""The build's helper processes' pipes: larger ones, so that the renderer rarely waits for them, and
the last line a helper wrote on stderr, which says why it stopped.

A pipe holds 64 KiB by default on Linux: a few artifacts. When a helper (the file writer, the token
counter) is briefly descheduled, the build's main thread blocks in `write` after a few artifacts, though
it could go on rendering. Linux lets a process raise a pipe's capacity up to `/proc/sys/fs/pipe-max-size`
(1 MiB by default) without privileges; elsewhere this does nothing.
"""

from __future__ import annotations

import os
from typing import IO

PIPE_SIZE = 1 << 20
_SET_PIPE_SIZE = 1031  # F_SETPIPE_SZ (Linux); Python 3.11's fcntl names it only on some builds


def enlarge(stream: IO[bytes] | None, size: int = PIPE_SIZE) -> None:
    """Ask for a `size`-byte pipe behind `stream`, or the largest allowed; silently keep it otherwise."""
    if stream is None or not hasattr(os, "sched_getaffinity"):  # not Linux
        return
    try:
        import fcntl
    except ImportError:
        return
    setting = getattr(fcntl, "F_SETPIPE_SZ", _SET_PIPE_SIZE)
    for wanted in (size, _max_size()):
        try:
            fcntl.fcntl(stream.fileno(), setting, wanted)
            return
        except (OSError, ValueError):
            continue


def _max_size() -> int:
    try:
        with open("/proc/sys/fs/pipe-max-size", encoding="ascii") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 0


def last_line(errors: bytes) -> str | None:
    """The last line a helper process wrote on stderr (why it stopped), or None when it wrote nothing."""
    lines = errors.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else None
