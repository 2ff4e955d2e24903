"""Reading a file whose size nobody vouches for: at most a limit, decided by what was read, not by `stat`.

Why: catalogs, templates and memory files may come from a pull request; a file can grow between `stat` and
`read`, and a pipe or device has no size, so every reader takes one byte more than its limit and checks.
"""

from __future__ import annotations

from pathlib import Path


def read_at_most(path: str | Path, limit: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `limit` bytes; an unreadable file raises `OSError`."""
    with open(path, "rb") as stream:
        data = stream.read(limit + 1)
    return None if len(data) > limit else data
