"""Reading artifacts a build's manifest lists, for `capidx report --against` (the I/O edge of `datadiff`) and for
`capidx inject`, which reads the build's memory document (`read_listed`).

Only files the manifest lists are read, each inside the build directory (a path or link that leads out of it is
refused, as the server refuses it), each no more than its row's `bytes` from its `offset`, and each checked
against its `sha256`: a baseline may come from anywhere (a build committed in a pull request). What the rows
list adds up to no more than `MAX_ARTIFACT_BYTES`, however many rows name the same bytes. Nothing is
raised for the report's sake: a build that cannot give the documents gives a reason, and the report says the
data comparison is unavailable.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from capidx.compiler.report.manifest_reader import Manifest
from capidx.schema import builddir
from capidx.schema.realpath import real_path

# Bytes read of one kind, at most: as much as a manifest may hold, which lists far more than the documents of one kind
# take (a build of 1,000 capabilities by 5 agents: a 10 MB manifest, 4 MB of compare documents).
MAX_ARTIFACT_BYTES = builddir.MAX_MANIFEST_BYTES


class ArtifactUnreadable(Exception):
    """An artifact the manifest lists cannot be read as listed; `str()` says which and why."""


def read_artifacts(manifest: Manifest, kind: str, limit: int | None = None) -> dict[str, bytes]:
    """The bytes of every artifact of `kind`, by URI, each checked against its row (see the module's docstring), at
    most `limit` bytes in all (`MAX_ARTIFACT_BYTES` when None). Rows sharing a file (a pack) are read through one open
    file, in offset order."""
    limit = MAX_ARTIFACT_BYTES if limit is None else limit
    folder = Path(real_path(manifest.path)).parent  # `--against base.json`, a link: the build is where it leads
    by_path: dict[str, list[Mapping[str, Any]]] = {}
    for row in manifest.artifacts:
        if row["kind"] == kind:
            by_path.setdefault(row["path"], []).append(row)
    total = sum(row["bytes"] for rows in by_path.values() for row in rows)
    if total > limit:
        raise ArtifactUnreadable(
            f"its {kind} documents in {builddir.MANIFEST} add up to {total:,} bytes, over the {limit:,} read at most"
        )
    found: dict[str, bytes] = {}
    for relative, rows in sorted(by_path.items()):
        found.update(_read_file(folder, relative, rows))
    return found


def _read_file(folder: Path, relative: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    ordered = sorted(rows, key=lambda item: item.get("offset", 0))
    shown = f"{relative} in {folder}"
    found: dict[str, bytes] = {}
    for row, data in zip(ordered, read_listed(folder / relative, folder, ordered, shown), strict=True):
        if hashlib.sha256(data).hexdigest() != row["sha256"]:
            raise ArtifactUnreadable(f"{shown}: {row['uri']} does not match its sha256 in {builddir.MANIFEST}")
        found[row["uri"]] = data
    return found


def read_listed(path: Path, folder: Path, rows: Sequence[Mapping[str, Any]], shown: str) -> list[bytes]:
    """The bytes each row lists of the file at `path` (its `offset`, its `bytes`), in the rows' order, unchecked
    against their sha256, which the caller words; `folder` is the build's real path, `shown` how messages name the
    file. The file must be a regular one inside `folder` (a link out of it is refused unread), opened without waiting
    (a pipe put there is refused by the check of the open file), and hold every byte the rows ask for: a row's
    `bytes` of 2**53 asked `read` for that much memory at once, a link to a large file was read whole."""
    real = Path(real_path(path))
    if folder != real and folder not in real.parents:
        raise ArtifactUnreadable(f"{shown}: leads out of the build directory")
    try:
        with os.fdopen(os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode):  # a pipe would block, a device never end
                raise ArtifactUnreadable(f"{shown}: not a regular file")
            needed = max((row.get("offset", 0) + row["bytes"] for row in rows), default=0)
            if needed > info.st_size:
                raise ArtifactUnreadable(
                    f"{shown}: {info.st_size:,} bytes, fewer than the {needed:,} its row in {builddir.MANIFEST} needs"
                )
            found = []
            for row in rows:
                stream.seek(row.get("offset", 0))
                found.append(stream.read(row["bytes"]))
            return found
    except OSError as exc:
        raise ArtifactUnreadable(f"{shown}: cannot read it: {exc.strerror or exc}") from None
