"""Reading artifacts a build's manifest lists, for `capidx report --against` (the I/O edge of `datadiff`).

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


def read_artifacts(manifest: Manifest, kind: str) -> dict[str, bytes]:
    """The bytes of every artifact of `kind`, by URI, each checked against its row (see the module's docstring).
    Rows sharing a file (a pack) are read through one open file, in offset order."""
    folder = Path(real_path(manifest.path)).parent  # `--against base.json`, a link: the build is where it leads
    by_path: dict[str, list[Mapping[str, Any]]] = {}
    for row in manifest.artifacts:
        if row["kind"] == kind:
            by_path.setdefault(row["path"], []).append(row)
    total = sum(row["bytes"] for rows in by_path.values() for row in rows)
    if total > MAX_ARTIFACT_BYTES:
        raise ArtifactUnreadable(
            f"its {kind} documents in {builddir.MANIFEST} add up to {total:,} bytes, over the"
            f" {MAX_ARTIFACT_BYTES:,} read at most"
        )
    found: dict[str, bytes] = {}
    for relative, rows in sorted(by_path.items()):
        found.update(_read_file(folder, relative, rows))
    return found


def _read_file(folder: Path, relative: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    path = folder / relative
    shown = f"{relative} in {folder}"
    real = Path(real_path(path))
    if folder != real and folder not in real.parents:
        raise ArtifactUnreadable(f"{shown}: leads out of the build directory")
    found: dict[str, bytes] = {}
    try:
        if not stat.S_ISREG(os.stat(real).st_mode):  # a pipe would block
            raise ArtifactUnreadable(f"{shown}: not a regular file")
        with open(real, "rb") as stream:
            for row in sorted(rows, key=lambda item: item.get("offset", 0)):
                stream.seek(row.get("offset", 0))
                data = stream.read(row["bytes"])
                if hashlib.sha256(data).hexdigest() != row["sha256"]:
                    raise ArtifactUnreadable(f"{shown}: {row['uri']} does not match its sha256 in {builddir.MANIFEST}")
                found[row["uri"]] = data
    except OSError as exc:
        raise ArtifactUnreadable(f"{shown}: cannot read it: {exc.strerror or exc}") from None
    return found
