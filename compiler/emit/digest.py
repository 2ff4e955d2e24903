"""inputDigest: one sha256 over everything that determines the build's bytes.

Covered: every data file (by path relative to the catalog root, and bytes), the alias table, the
capability schema, every template the loader resolves (user overrides included), the effective
config values that affect output, and the capidx version with the compiler's own source, so a
changed compiler never mistakes an old build for a current one. Absolute paths, the cwd, the
locale and the clock are not inputs: the digest is the same on every machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from capidx.schema.realpath import resolve
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


# The code that shapes build output: the compiler and the contract it shares with the server (text
# normalization, the lexicon, the suggestion label line). The server shapes none of it.
FINGERPRINTED_PACKAGES = ("capidx.compiler", "capidx.schema")


@cache
def compiler_fingerprint() -> bytes:
    """The bytes of every module of `FINGERPRINTED_PACKAGES`, subpackages included, in a fixed order: a code
    change anywhere in them makes the next build a full one."""
    digest = hashlib.sha256()
    for package in FINGERPRINTED_PACKAGES:
        for name, data in _python_files(resources.files(package), ""):
            digest.update(f"{package}/{name}".encode() + b"\0" + data)
    return digest.digest()


def _python_files(folder: Traversable, prefix: str) -> Iterator[tuple[str, bytes]]:
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.is_dir() and entry.name != "__pycache__":
            yield from _python_files(entry, f"{prefix}{entry.name}/")
        elif entry.name.endswith(".py"):
            yield f"{prefix}{entry.name}", entry.read_bytes()


def relative_label(path: Path, root: Path, fallback: str) -> str:
    try:
        return resolve(path).relative_to(resolve(root)).as_posix()
    except ValueError:
        return fallback
