"""Which build folders this user's capidx wrote: only such a build is taken as up to date, or its counts reused.

`capidx build` leaves a build alone when its inputs' digest matches the manifest's and every listed file has its
listed size. Both are in the folder: a pull request that commits `build/` (its manifest copied from a build of the
same inputs, its files edited at the same sizes) made the build say "up to date" and keep text no validation, no
escaping and no template ever produced, which `serve` then served and `inject` wrote into memory files; and a token
count the manifest gave a text's sha256 was reused for that text, so a budget could pass unmeasured. So after a
build is written, a fingerprint of it is recorded in capidx's cache folder for this user (`usercache`), one entry per
build folder (`build-<sha256 of the folder's real path>`): the sha256 of its manifest and, of the manifest and each
file it lists, the size, modification time and inode number (one stat each, which also checks each file's listed
size). A previous build is trusted only while it has that fingerprint: one without a record (another machine's, a
fresh CI runner's, a checkout's, or with no usable cache folder) or changed since (a file written again, even at its
size) is built again. The manifest is read once, for the fingerprint and for the build (`previous_build`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from capidx.compiler.emit.manifest import file_sizes
from capidx.compiler.usercache import owned, private_cache_dir
from capidx.schema import builddir
from capidx.schema.builddir import READABLE_FORMATS
from capidx.schema.realpath import real_path

PREFIX = "build-"
_RECORD_BYTES = 64  # a sha256 in hex
# The fingerprints kept: one per build folder, and a folder that is gone (a temporary one, a deleted checkout) leaves
# its entry behind, which nothing could tell apart from a live one's (the name is a hash of the path). Past this many,
# the least recently written or trusted are removed; a build whose entry went is built whole next time, nothing worse.
MAX_RECORDS = 1000
_ENTRY = re.compile(rf"{PREFIX}[0-9a-f]{{64}}")


def _read(out: Path) -> tuple[bytes, Any] | None:
    """The manifest in `out`, as bytes and parsed; None when it cannot be read."""
    try:
        data = builddir.read_manifest(out / builddir.MANIFEST)
        return data, json.loads(data)
    except (builddir.ManifestUnreadable, OSError, ValueError, RecursionError):
        return None


def _fingerprint(out: Path, data: bytes, manifest: Any) -> str | None:
    """The sha256 of the manifest `data` and of the size, modification time and inode of it and of every file it
    lists; None when any of them cannot be read, or a file has not the size the manifest gives it (what
    `manifest.is_intact` checks, here in the same stat)."""
    sizes = file_sizes(manifest.get("artifacts", ())) if isinstance(manifest, dict) else None
    if sizes is None:
        return None
    digest = hashlib.sha256(data)
    for path in (builddir.MANIFEST, *sorted(sizes)):
        try:
            info = os.lstat(out / path)
        except (OSError, ValueError):
            return None
        if path in sizes and info.st_size != sizes[path]:
            return None
        digest.update(f"\0{path}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}".encode())
    return digest.hexdigest()


def _entry(folder: Path, out: Path) -> Path | None:
    try:
        return folder / (PREFIX + hashlib.sha256(os.fsencode(real_path(out))).hexdigest())
    except (OSError, ValueError):
        return None


def previous_build(out: Path) -> dict[str, Any] | None:
    """The manifest of the build in `out` when that build is, as far as its fingerprint tells, the one this user's
    capidx last wrote there, whole (every listed file at its size) and of a format this capidx reads; else None.
    The manifest is read and parsed once, for the fingerprint and for the caller."""
    folder = private_cache_dir()
    entry = _entry(folder, out) if folder is not None else None
    if entry is None:
        return None
    try:
        with open(entry, "rb") as handle:
            if not owned(handle.fileno()):
                return None
            recorded = handle.read(_RECORD_BYTES + 1)
    except OSError:
        return None
    read = _read(out)
    if read is None or (found := _fingerprint(out, *read)) is None or recorded != found.encode():
        return None
    manifest = read[1]
    if not isinstance(manifest, dict) or manifest.get("format") not in READABLE_FORMATS:
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # trusted now: among the last to be pruned
    return manifest


def remember(out: Path) -> None:
    """Record the build just written in `out` (atomically; a cache that cannot be written records nothing, and
    the next build is a whole one)."""
    folder = private_cache_dir()
    entry = _entry(folder, out) if folder is not None else None
    read = _read(out)
    found = _fingerprint(out, *read) if read is not None else None
    if entry is None or found is None:
        return
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{PREFIX}", suffix=".part")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(found.encode())
        os.replace(temporary, entry)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return
    _prune(folder)


def _prune(folder: Path) -> None:
    """Remove the least recently used fingerprints past `MAX_RECORDS`: only entries of ours (a `build-<sha256>` name, a
    regular file this user owns, not a link), so that a cache folder shared with nothing else stays bounded."""
    try:
        with os.scandir(folder) as found:
            names = [entry for entry in found if _ENTRY.fullmatch(entry.name)]
        user = os.getuid()
    except (OSError, AttributeError):  # AttributeError: no getuid
        return
    if len(names) <= MAX_RECORDS:
        return
    dated = []
    for entry in names:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:  # gone meanwhile (another build pruned it): nothing to weigh
            continue
        if stat.S_ISREG(info.st_mode) and info.st_uid == user:
            dated.append((info.st_mtime_ns, entry.name))
    for _, name in sorted(dated)[: max(0, len(dated) - MAX_RECORDS)]:
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
