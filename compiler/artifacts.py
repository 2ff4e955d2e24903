"""Artifacts: one file of the build directory, before (`Artifact`) and after (`Measured`) measuring.

The path, URI and params of every kind follow docs/build-directory.md ("Layout"); this is the one
module that spells them.
"""

from __future__ import annotations

import hashlib
import json.encoder as json_encoder
from dataclasses import dataclass, field
from typing import Any

from capidx.compiler.emit.packs import pack_path
from capidx.schema.text import canonical_json

# A string as `canonical_json` writes it (the function json.dumps uses for strings with ensure_ascii=False),
# called directly: the manifest quotes hundreds of thousands of strings.
_json_string = json_encoder.encode_basestring


def _flat_json(mapping: dict[str, Any]) -> str:
    """`canonical_json` of a flat object of strings and integers (params, token counts), without the
    encoder's per-call cost; anything else goes to `canonical_json`."""
    items = []
    for key in sorted(mapping):
        value = mapping[key]
        if type(value) is str:
            items.append(f"{_json_string(key)}:{_json_string(value)}")
        elif type(value) is int:
            items.append(f"{_json_string(key)}:{value}")
        else:
            return canonical_json(mapping)
    return "{" + ",".join(items) + "}"


MIME_BY_SUFFIX = {
    ".md": "text/markdown",
    ".json": "application/json",
    ".txt": "text/plain",  # site/llms.txt
    ".html": "text/html",  # site/index.html and the site's script and style sheet
    ".js": "text/javascript",
    ".css": "text/css",
}

# Kinds the server may expose as MCP resources, in display order; the rest are internal tool documents.
RESOURCE_KINDS = ("summary", "full", "stats", "agent", "capability", "category")
TOOL_KINDS = ("lookup", "compare", "list", "sources", "snippet", "index")
# The site's files (compiler/render/site.py): ordinary artifacts, never MCP resources (HTTP serves them as
# files).
SITE_KINDS = (
    "llms",
    "llms-full",
    "site-page",
    "site-script",
    "site-style",
    "site-markdown",
    "site-index",
    "site-agents",
    "site-capabilities",
    "site-agent",
    "site-capability",
    "site-category",
    "site-quality",
)
# The overview fitted to a character budget (compiler/render/overview.py): the server's instructions and the
# body of a memory-file block (`capidx inject`). Never MCP resources: they reach the model by other routes.
OVERVIEW_KINDS = ("instructions", "memory")
ALL_KINDS = RESOURCE_KINDS + OVERVIEW_KINDS + TOOL_KINDS + SITE_KINDS
# Kinds of which a build has exactly one document: "largest" says nothing about them.
SINGLE_KINDS = frozenset(
    {"summary", "full", "stats", "index", "instructions", "memory"}
    | {"llms", "llms-full", "site-page", "site-script", "site-style", "site-index", "site-agents"}
    | {"site-capabilities", "site-quality"}
)
ALL = "_all"  # path segment meaning "every agent" / "every category"
# Context windows the share of an artifact is given against (stats.json, capidx report): key -> tokens.
CONTEXT_WINDOWS = {"200k": 200_000, "1m": 1_000_000}


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
    row: PendingRow | None = field(default=None, repr=False, compare=False)  # made as it was written
    offset: int | None = None  # where its bytes start in the pack `packs.pack_path(kind)`; None: a file of its own

    def manifest_entry(self, primary: str) -> tuple[dict[str, Any], str]:
        """The manifest entry (docs/build-directory.md, "manifest.json") and its canonical JSON."""
        return self.manifest_dict(primary), self.manifest_json(primary)

    def manifest_dict(self, primary: str) -> dict[str, Any]:
        """The manifest entry alone (the build keeps the entries; it writes their JSON one at a time)."""
        return self._row(primary).entry(self.tokens, primary)

    def manifest_json(self, primary: str) -> str:
        """The manifest entry's canonical JSON alone."""
        return self._row(primary).json(self.tokens, primary)

    def _row(self, primary: str) -> PendingRow:
        row = self.row
        return row or PendingRow(self.artifact, self.size, self.sha256, self.words, self.lines, primary, self.offset)


class PendingRow:
    """An artifact's manifest entry and its JSON text, made before its token counts are known.

    A large build serializes tens of thousands of entries; the build makes each as the artifact is written,
    and `json` / `entry` only add the counts. The JSON is `canonical_json(entry)` to the byte (keys in sorted
    order: bytes, description, kind, lines, mimeType, offset, params, path, sha256, title, tokens, uri,
    words; JSON escaping works character by character, so the description can be escaped in pieces).
    Until then a row keeps the JSON's pieces and the figures, not the entry as a dict too: at 20,000
    capabilities (78,000 rows) the dicts were ~60 MB of the build's peak memory, held twice with their copies.

    A packed answer (`offset` given) has `path` = its pack (`packs.pack_path`), and `offset`.
    """

    __slots__ = ("artifact", "head", "lines", "middle", "offset", "path", "sha256", "size", "tail", "words")

    def __init__(
        self, artifact: Artifact, size: int, sha256: str, words: int, lines: int, primary: str, offset: int | None
    ) -> None:
        path = artifact.path if offset is None else pack_path(artifact.kind)
        assert path is not None, f"{artifact.kind} is not packed"
        self.artifact, self.path, self.size, self.sha256 = artifact, path, size, sha256
        self.words, self.lines, self.offset = words, lines, offset
        quote = _json_string
        placed = "" if offset is None else f'"offset":{offset},'
        self.head = f'{{"bytes":{size},"description":{quote(artifact.blurb + " ")[:-1]}'
        self.middle = (
            f'{quote(f" tokens ({primary}).")[1:]},"kind":{quote(artifact.kind)},"lines":{lines},'
            f'"mimeType":{quote(artifact.mime_type)},{placed}'
            f'"params":{_flat_json(dict(artifact.params))},"path":{quote(path)},"sha256":{quote(sha256)},'
            f'"title":{quote(artifact.title)},"tokens":'
        )
        self.tail = f',"uri":{quote(artifact.uri)},"words":{words}}}'

    def json(self, tokens: dict[str, int], primary: str) -> str:
        """`canonical_json` of the entry, from the pieces."""
        return f"{self.head}{tokens[primary]:,}{self.middle}{_flat_json(_ordered(tokens))}{self.tail}"

    def entry(self, tokens: dict[str, int], primary: str) -> dict[str, Any]:
        artifact = self.artifact
        entry: dict[str, Any] = {
            "kind": artifact.kind,
            "uri": artifact.uri,
            "path": self.path,
            "mimeType": artifact.mime_type,
            "title": artifact.title,
            "bytes": self.size,
            "sha256": self.sha256,
            "words": self.words,
            "lines": self.lines,
            "params": dict(artifact.params),
        }
        if self.offset is not None:
            entry["offset"] = self.offset
        entry["description"] = f"{artifact.blurb} {tokens[primary]:,} tokens ({primary})."
        entry["tokens"] = _ordered(tokens)
        return entry


def _ordered(tokens: dict[str, int]) -> dict[str, int]:
    return tokens if len(tokens) == 1 else dict(sorted(tokens.items()))


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


def short_uri(uri: str, prefix: str) -> str:
    """`capability-index://agents/x` → `agents/x`, for tables and messages: the build's and the report's words for a
    document (most are no MCP resource, and the build's files are named so too)."""
    return uri[len(prefix) :] if uri.startswith(prefix) else uri
