"""Writing the build directory atomically.

Everything is written into a sibling temporary directory (`<parent>/.capidx-build-<random>`), then
swapped in with two renames: the old build → `<parent>/.capidx-old-<random>`, the new one → `out`;
then the old one is removed. A failed or killed build therefore never touches the previous one. On
POSIX there is a window of two syscalls between the renames where `out` does not exist; a reader
that opens `out` then gets "not found" and retries (the server keeps serving the build it loaded).
Leftovers of killed builds (`.capidx-build-*`, `.capidx-old-*`) are removed by the next build.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Callable, Container, Iterable
from pathlib import Path

TEMP_PREFIX = ".capidx-build-"
OLD_PREFIX = ".capidx-old-"
MANIFEST = "manifest.json"
# Test-only hook (documented in docs/build-directory.md): when set to a file path, the build creates
# that file once every artifact is written to the temporary directory, then sleeps before the swap,
# so a test can kill the process at a known point. Never set it in normal use.
PAUSE_ENV = "CAPIDX_TEST_PAUSE_BEFORE_SWAP"


class OutputError(Exception):
    """The output directory cannot be used (exit 2)."""


def check_output_dir(out: Path) -> None:
    """Refuse to replace anything that is not a capidx build: `--out .` must never delete a project."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise OutputError(f"{out}: exists and is not a directory; choose another --out")
    if out.is_dir() and not (out / MANIFEST).is_file() and any(out.iterdir()):
        raise OutputError(
            f"{out}: not empty and not a capidx build directory (no {MANIFEST}); refusing to replace it. "
            "Choose an empty or new --out directory."
        )


def remove_leftovers(parent: Path) -> list[Path]:
    """Remove temporary directories left by killed builds next to the output directory."""
    removed = []
    if parent.is_dir():
        for path in sorted(parent.iterdir()):
            if path.name.startswith((TEMP_PREFIX, OLD_PREFIX)) and path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def write_tree(
    out: Path,
    files: Iterable[tuple[str, bytes]],
    progress: Callable[[int], None] | None = None,
    unchanged: Container[str] = (),
) -> int:
    """Write `files` (relative POSIX path, bytes) as the new content of `out`, atomically.

    Paths in `unchanged` (same path and sha256 in the current build) are hard-linked from the
    current build when their bytes are indeed equal: creating a file costs far more than linking
    one on many file systems (~1 ms against ~0.05 ms on a virtualized ext4), and files of a build
    are never modified in place, so sharing them is safe. Returns how many files were linked.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = _make_sibling(out.parent, TEMP_PREFIX)
    linked = 0
    try:
        made: set[Path] = {temp}
        for relative, data in files:
            path = temp / relative
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            if relative in unchanged and _link_if_equal(out / relative, path, data):
                linked += 1
            else:
                with open(path, "wb") as handle:
                    handle.write(data)
            if progress:
                progress(1)
        _pause_for_tests(temp)
        _swap(temp, out)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return linked


def _link_if_equal(current: Path, target: Path, data: bytes) -> bool:
    try:
        if current.is_symlink() or current.stat().st_size != len(data) or current.read_bytes() != data:
            return False
        os.link(current, target)
    except OSError:  # no such file, or a file system without hard links: write it instead
        return False
    return True


def _make_sibling(parent: Path, prefix: str) -> Path:
    """A new directory with default permissions (mkdtemp would make it 0700, unreadable by a web server)."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def _swap(temp: Path, out: Path) -> None:
    if not out.exists():
        os.rename(temp, out)
        return
    old = out.parent / f"{OLD_PREFIX}{secrets.token_hex(6)}"
    os.rename(out, old)
    os.rename(temp, out)
    shutil.rmtree(old, ignore_errors=True)


def _pause_for_tests(temp: Path) -> None:
    signal_file = os.environ.get(PAUSE_ENV)
    if signal_file:
        Path(signal_file).write_text(str(temp), encoding="utf-8")
        time.sleep(60)
