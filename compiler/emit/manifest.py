"""manifest.json: the index of the build directory (schema/build-manifest.schema.json)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from capidx.compiler.artifacts import Measured
from capidx.compiler.catalog import Catalog
from capidx.compiler.emit.budgets import BudgetResult
from capidx.schema import builddir
from capidx.schema.builddir import FORMAT, READABLE_FORMATS
from capidx.schema.text import canonical_json

_TEMPLATES = {
    "agent": ("agents/{agent}", "Agent capabilities", "Every capability of one agent with details and sources."),
    "capability": (
        "capabilities/{capability}",
        "Capability across agents",
        "One capability compared across agents, with each agent's details and sources.",
    ),
    "category": ("categories/{category}", "Category", "Every capability of one category: matrix and wording."),
}


def resource_templates(prefix: str, measured: Sequence[Measured], primary: str) -> list[dict[str, Any]]:
    rows = []
    for kind, (path, title, blurb) in _TEMPLATES.items():
        sizes = [item.tokens[primary] for item in measured if item.artifact.kind == kind]
        largest = f" Largest: {max(sizes):,} tokens ({primary})." if sizes else ""
        rows.append(
            {
                "kind": kind,
                "uriTemplate": prefix + path,
                "name": kind,
                "title": title,
                "description": blurb + largest,
                "mimeType": "text/markdown",
                "parameter": kind,
            }
        )
    return rows


def manifest_document(
    *,
    version: str,
    input_digest: str,
    prefix: str,
    encodings: Sequence[str],
    catalog: Catalog,
    measured: Sequence[Measured],
    budgets: Iterable[BudgetResult],
    overview: Sequence[dict[str, Any]] = (),
) -> tuple[dict[str, Any], Iterator[str]]:
    """The manifest, and its artifact entries as canonical JSON (for `serialized`), made one at a time as
    they are written: the entries are kept as dicts (`BuildResult.manifest`), their texts are not."""
    primary = encodings[0]
    ordered = sorted(measured, key=lambda m: m.artifact.path)
    entries = [item.manifest_dict(primary) for item in ordered]
    texts = (item.manifest_json(primary) for item in ordered)
    return {
        "format": FORMAT,
        "capidx": version,
        "inputDigest": input_digest,
        "uriPrefix": prefix,
        "encodings": list(encodings),
        "catalog": {
            "agents": list(catalog.agent_ids),
            "capabilities": [capability.slug for capability in catalog.capabilities],
            "categories": list(catalog.categories),
        },
        "resourceTemplates": resource_templates(prefix, measured, primary),
        "budgets": [result.as_manifest_row() for result in budgets],
        "overview": list(overview),
        "artifacts": entries,
    }, texts


def serialized(manifest: dict[str, Any], rows: Iterable[str]) -> Iterator[bytes]:
    """Compact JSON with one artifact per line (small, and still readable in a diff or with grep), in pieces, for
    writing without holding the whole (50 MB at 20,000 capabilities) two or three times over. `rows`: the
    artifacts' entries as canonical JSON, as `manifest_document` makes them."""
    head = canonical_json({key: value for key, value in manifest.items() if key != "artifacts"})
    yield f'{head[:-1]},"artifacts":['.encode()
    separator = "\n"
    for row in rows:
        yield (separator + row).encode()
        separator = ",\n"
    yield b"\n]}\n"


def read_previous(out: Path) -> dict[str, Any] | None:
    """The manifest of the current build in `out`, or None when there is none or it is unreadable."""
    try:  # only a regular file of bounded size, as outdir.py reads it
        data = json.loads(builddir.read_manifest(out / builddir.MANIFEST))
    except (builddir.ManifestUnreadable, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and data.get("format") in READABLE_FORMATS else None


def previous_json(out: Path, previous: dict[str, Any] | None, path: str, primary: str) -> Any | None:
    """A JSON artifact (a file of its own) of the current build, parsed, when that build was measured with the
    same `primary` encoding and the file still has the sha256 its manifest lists; None otherwise (then:
    recompute)."""
    if not previous or (previous.get("encodings") or [None])[0] != primary:
        return None
    rows = (row for row in previous.get("artifacts", ()) if isinstance(row, dict))
    row = next((row for row in rows if row.get("path") == path and "offset" not in row), None)
    try:
        data = (out / path).read_bytes()
        if row is None or hashlib.sha256(data).hexdigest() != row.get("sha256"):
            return None
        return json.loads(data)
    except (OSError, ValueError):
        return None


def known_token_counts(previous: dict[str, Any] | None) -> dict[str, dict[str, int]]:
    """sha256 -> {encoding: tokens} from a previous manifest, to skip re-tokenizing unchanged bytes."""
    known: dict[str, dict[str, int]] = {}
    for row in (previous or {}).get("artifacts", ()):
        if isinstance(row, dict) and isinstance(row.get("sha256"), str) and isinstance(row.get("tokens"), dict):
            known.setdefault(row["sha256"], {}).update(
                {name: count for name, count in row["tokens"].items() if isinstance(count, int)}
            )
    return known


def is_intact(out: Path, previous: dict[str, Any]) -> bool:
    """Every file the manifest lists exists with its recorded size (a pack: the end of its last answer).

    Sizes, not hashes: this decides whether an up-to-date build may be left alone, and must stay cheap
    (a stat per file). The server verifies every sha256 when it loads.
    """
    sizes = file_sizes(previous.get("artifacts", ()))
    if sizes is None:
        return False
    for path, size in sizes.items():
        try:
            if (out / path).stat().st_size != size:
                return False
        except OSError:
            return False
    return True


def file_sizes(rows: Iterable[Any]) -> dict[str, int] | None:
    """path -> the size its file must have: its artifact's `bytes`, or for a pack the end of its last answer;
    None when a row lacks what this needs (not a manifest capidx wrote)."""
    sizes: dict[str, int] = {}
    try:
        for row in rows:
            end = row.get("offset", 0) + row["bytes"]
            sizes[row["path"]] = max(sizes.get(row["path"], 0), end)
    except (AttributeError, KeyError, TypeError):
        return None
    return sizes
