"""inputDigest: one sha256 over everything that determines the build's bytes.

Covered: every data file (by path relative to the catalog root, and bytes), the alias table, the
capability schema, every template the loader resolves (user overrides included), the effective
config values that affect output, and the capidx version with the compiler's own source, so a
changed compiler never mistakes an old build for a current one. Absolute paths, the cwd, the
locale and the clock are not inputs: the digest is the same on every machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from capidx.compiler.validate.discover import catalog_documents
from capidx.schema.text import canonical_json


def input_digest(parts: Iterable[tuple[str, bytes]]) -> str:
    """`sha256:<hex>` over (label, bytes) pairs, sorted by label; lengths are framed so parts cannot blur."""
    digest = hashlib.sha256()
    for label, data in sorted(parts):
        name = label.encode("utf-8")
        digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big"))
        digest.update(data)
    return f"sha256:{digest.hexdigest()}"


def settings_bytes(settings: Mapping[str, Any]) -> bytes:
    return canonical_json(settings).encode("utf-8")


_SHARED_SERVER_MODULES = frozenset({"text.py", "suggest.py", "lexicon.py"})


@cache
def compiler_fingerprint() -> bytes:
    """The bytes of the code that shapes the output: the compiler package and the server modules it uses
    (`text` for normalization, `suggest` for the injection overhead written into match.json)."""
    digest = hashlib.sha256()
    for package in ("capidx.compiler", "capidx.server"):
        root = resources.files(package)
        for entry in sorted(root.iterdir(), key=lambda item: item.name):
            if entry.name.endswith(".py") and (package == "capidx.compiler" or entry.name in _SHARED_SERVER_MODULES):
                digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return digest.digest()


def catalog_files(root: Path) -> list[Path]:
    """`discover.catalog_documents` that are regular files: the digest reads each one, so a broken link
    or a folder named `current.json` is left out (the digests then differ, and validation reports it)."""
    return [path for path in catalog_documents(root) if path.is_file()]


def relative_label(path: Path, root: Path, fallback: str) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return fallback
