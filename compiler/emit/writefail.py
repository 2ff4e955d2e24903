"""What the user reads when a build cannot be written: one line, naming the folder.

For a full disk (or quota) it says how much the new build had produced when the space ran out and how large
the previous build is, which together say about how much room a build needs beside it; and, when part of
the temporary folder could not be removed, which folder the next build will remove.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

from capidx.compiler.emit.manifest import file_sizes
from capidx.schema.builddir import MANIFEST

_WRITABLE = "check that the output's folder is writable and has free space"


def write_failure(
    out: Path, exc: OSError, written: int, previous: dict[str, Any] | None, left: Path | None, what: str
) -> str:
    """One line: what failed and where; for a full disk, how much the build had written (when anything) and
    how large the previous one is (about what the new one needs); a temporary folder that could not be
    removed."""
    if exc.errno in _FULL:
        size = sum((file_sizes((previous or {}).get("artifacts", ())) or {}).values()) + _manifest_size(out, previous)
        # nothing written yet: "needs more than 0 KiB" would say nothing
        sizes = [f"the new build needs more than {_size(written)}"] if written else []
        sizes += [f"the previous build is {_size(size)}"] if size else []
        needed = f" ({'; '.join(sizes)})" if sizes else ""
        message = f"{out}: no space left on device in {out.parent}{needed}; free space there and build again"
    else:
        message = f"{what}: {exc} ({_WRITABLE})"
    if left is not None:
        message += f"; {left} could not be removed entirely (the next build removes it)"
    return message


_FULL = frozenset(code for code in (errno.ENOSPC, getattr(errno, "EDQUOT", None)) if code is not None)


def _manifest_size(out: Path, previous: dict[str, Any] | None) -> int:
    try:
        return os.lstat(out / MANIFEST).st_size if previous else 0
    except OSError:
        return 0


def _size(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB" if size >= 2**20 else f"{-(-size // 1024):,} KiB"
