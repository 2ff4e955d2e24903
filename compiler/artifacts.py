"""Artifacts: one file of the build directory, before (`Artifact`) and after (`Measured`) measuring.

The path, URI and params of every kind follow docs/build-directory.md ("Layout"); this is the one
module that spells them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

MIME_BY_SUFFIX = {".md": "text/markdown", ".json": "application/json"}

# Kinds the server may expose as MCP resources, in display order; the rest are internal tool documents.
RESOURCE_KINDS = ("summary", "full", "stats", "agent", "capability", "category")
TOOL_KINDS = ("lookup", "compare", "list", "sources", "snippet", "index")
ALL_KINDS = RESOURCE_KINDS + TOOL_KINDS
ALL = "_all"  # path segment meaning "every agent" / "every category"


@dataclass(frozen=True)
class Artifact:
    kind: str
    path: str  # POSIX, relative to the build directory
    uri: str
    title: str
    blurb: str  # what it is; the manifest description adds the measured token count
    text: str = field(repr=False)
    params: tuple[tuple[str, str], ...] = ()

    @property
    def mime_type(self) -> str:
        return MIME_BY_SUFFIX[self.path[self.path.rfind(".") :]]

    @property
    def params_dict(self) -> dict[str, str]:
        return dict(self.params)

    def without_text(self) -> Artifact:
        """The same artifact with its text dropped: a build keeps every artifact's description until the
        manifest is written, but not tens of megabytes of text. (Positional: `dataclasses.replace` costs
        ten times more, for tens of thousands of artifacts.)"""
        return Artifact(self.kind, self.path, self.uri, self.title, self.blurb, "", self.params)


@dataclass(frozen=True)
class Measured:
    artifact: Artifact  # without its text
    size: int  # bytes
    sha256: str
    tokens: dict[str, int]
    words: int
    lines: int


def make_artifact(
    kind: str, path: str, prefix: str, title: str, blurb: str, text: str, **params: str | None
) -> Artifact:
    uri = prefix + path[: path.rfind(".")]
    kept = tuple(sorted((key, value) for key, value in params.items() if value is not None))
    return Artifact(kind, path, uri, title, blurb, text, kept)


def encode(artifact: Artifact) -> tuple[bytes, str]:
    data = artifact.text.encode("utf-8")
    return data, hashlib.sha256(data).hexdigest()


def count_words(text: str) -> int:
    return len(text.split())


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def as_manifest_entry(item: Measured, primary: str) -> dict[str, Any]:
    artifact = item.artifact
    tokens = item.tokens
    return {
        "kind": artifact.kind,
        "uri": artifact.uri,
        "path": artifact.path,
        "mimeType": artifact.mime_type,
        "title": artifact.title,
        "description": f"{artifact.blurb} {tokens[primary]:,} tokens ({primary}).",
        "bytes": item.size,
        "sha256": item.sha256,
        "tokens": tokens if len(tokens) == 1 else dict(sorted(tokens.items())),
        "words": item.words,
        "lines": item.lines,
        "params": dict(artifact.params),
    }
