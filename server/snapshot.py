"""Load one build directory into an immutable, verified `Snapshot`.

The build directory is the server's only input (docs/build-directory.md). Loading reads
`manifest.json`, validates it against the bundled manifest schema, then reads every artifact the
manifest lists -- and nothing else -- checks its size and sha256, and keeps the bytes in memory.
Requests are answered from the snapshot; the disk is never touched again until a reload builds a
new snapshot beside the old one.

Security (defense in depth): the schema already forbids absolute paths and `.`/`..` segments, but
every path is checked again here and then resolved, following symlinks, and must stay inside the
resolved build directory. Resolution of user input never builds a path: documents are found by
`(kind, params)` in `Snapshot.documents`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from capidx.server.resolve import MatchIndex

MANIFEST_NAME = "manifest.json"
RESOURCE_KINDS = ("summary", "full", "stats", "agent", "capability", "category")
VARIANT_KINDS = ("summary", "full", "stats")
TEMPLATE_KINDS = ("agent", "capability", "category")
JSON_MIME = "application/json"

DocumentKey = tuple[str, tuple[tuple[str, str], ...]]


_REBUILD = "rebuild with `capidx build`"


class BuildError(Exception):
    """The build directory cannot be served. The message names the file and says what to do."""


class NoBuildError(BuildError):
    """There is no build at the given path at all."""


@dataclass(frozen=True, slots=True)
class Artifact:
    """One file of the build, as listed by the manifest, with its verified content."""

    kind: str
    uri: str
    path: str
    mime_type: str
    title: str
    description: str
    size: int
    sha256: str
    tokens: Mapping[str, int]
    words: int
    lines: int
    params: Mapping[str, str]
    text: str
    # The parsed document for JSON artifacts (tool documents, stats, the index); never mutate it.
    value: Any = None


@dataclass(frozen=True, slots=True)
class Template:
    """A templated resource kind from the manifest's `resourceTemplates`."""

    kind: str
    uri_template: str
    name: str
    title: str
    description: str
    mime_type: str
    parameter: str

    @property
    def uri_base(self) -> str:
        """The literal part before the single `{parameter}`: `capability-index://agents/`."""
        return self.uri_template[: -len(self.parameter) - 2]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An immutable view of one verified build. Swapped as a whole on reload."""

    directory: Path
    digest: str  # sha256 of manifest.json: identifies the build
    uri_prefix: str
    capidx_version: str
    encodings: tuple[str, ...]
    catalog: Mapping[str, tuple[str, ...]]
    artifacts: Mapping[str, Artifact]  # by URI
    documents: Mapping[DocumentKey, Artifact]  # by (kind, sorted params)
    templates: Mapping[str, Template]  # by kind
    index: MatchIndex
    kinds: frozenset[str] = frozenset()  # every artifact kind present

    def find(self, kind: str, **params: str | None) -> Artifact | None:
        """The document answering `kind` for `params`; a `None` or absent param means 'all'."""
        return self.documents.get(document_key(kind, params))

    def variant(self, kind: str) -> Artifact | None:
        return self.find(kind)

    def has_kind(self, kind: str) -> bool:
        """Whether the build has any document of `kind` (older builds have no snippets)."""
        return kind in self.kinds


def document_key(kind: str, params: Mapping[str, str | None]) -> DocumentKey:
    return kind, tuple(sorted((key, value) for key, value in params.items() if value is not None))


@cache
def manifest_schema() -> dict[str, Any]:
    text = resources.files("capidx.schema").joinpath("build-manifest.schema.json").read_text("utf-8")
    return json.loads(text)


@cache
def manifest_validator() -> Any:
    """A `jsonschema` Draft 2020-12 validator for the manifest (imported here, not at module import)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(manifest_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def load_snapshot(directory: Path) -> Snapshot:
    """Read, validate and verify the build in `directory`. Raises `BuildError` naming the problem."""
    root = _build_root(directory)
    manifest_bytes = _read_manifest(root)
    manifest = _parse_manifest(root, manifest_bytes)
    artifacts = tuple(_load_artifact(root, entry) for entry in manifest["artifacts"])
    by_uri = _unique(root, artifacts, lambda artifact: artifact.uri, "URI")
    _unique(root, artifacts, lambda artifact: artifact.path, "path")
    documents = _unique(root, artifacts, lambda artifact: document_key(artifact.kind, artifact.params), "document")
    return Snapshot(
        directory=root,
        digest=hashlib.sha256(manifest_bytes).hexdigest(),
        uri_prefix=manifest["uriPrefix"],
        capidx_version=manifest["capidx"],
        encodings=tuple(manifest["encodings"]),
        catalog=MappingProxyType({key: tuple(value) for key, value in manifest["catalog"].items()}),
        artifacts=MappingProxyType(by_uri),
        documents=MappingProxyType(documents),
        templates=MappingProxyType(_templates(root, manifest)),
        index=_match_index(root, artifacts),
        kinds=frozenset(artifact.kind for artifact in artifacts),
    )


def _build_root(directory: Path) -> Path:
    if not directory.is_dir():
        where = f"{directory} is not a directory" if directory.exists() else f"no build at {directory}"
        raise NoBuildError(f"{where}: run `capidx build` first, or pass --build DIR")
    root = directory.resolve(strict=True)
    manifest = root / MANIFEST_NAME
    if os.path.lexists(manifest) and not manifest.is_file():  # a pipe would block, a device never end
        raise BuildError(f"{manifest}: not a regular file (a link loop, a pipe or a device?); {_REBUILD}")
    if not manifest.is_file():
        raise NoBuildError(f"no build at {directory} ({MANIFEST_NAME} is missing): run `capidx build` first")
    return root


# A manifest larger than this is not one capidx wrote (20,000 capabilities make one of ~50 MB); the same
# bound as `capidx report`'s reader (the server imports nothing from the compiler, hence the copy).
MAX_MANIFEST_BYTES = 512 * 1024 * 1024


def _read_manifest(root: Path) -> bytes:
    """The manifest's bytes; one over MAX_MANIFEST_BYTES is refused before it is read (`_root` made sure it
    is a regular file)."""
    path = root / MANIFEST_NAME
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise BuildError(f"{path}: over {MAX_MANIFEST_BYTES >> 20} MiB, not a build manifest; {_REBUILD}")
        return path.read_bytes()
    except OSError as error:
        raise BuildError(f"{path}: cannot read: {error.strerror}") from error


def _parse_manifest(root: Path, data: bytes) -> dict[str, Any]:
    where = root / MANIFEST_NAME
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BuildError(f"{where}: not valid JSON ({error}); rebuild with `capidx build`") from error
    except RecursionError:  # the parser's guard against a stack overflow: no manifest capidx writes is that deep
        raise BuildError(f"{where}: nested too deeply to be a build manifest; {_REBUILD}") from None
    from jsonschema.exceptions import best_match

    try:
        error = best_match(manifest_validator().iter_errors(manifest))
        message = None if error is None else _short(error.message)
    except RecursionError:
        raise BuildError(f"{where}: nested too deeply to be a build manifest; {_REBUILD}") from None
    if error is not None:
        pointer = "/" + "/".join(str(part) for part in error.absolute_path)
        raise BuildError(
            f"{where}: {pointer}: {message} (see schema/build-manifest.schema.json); "
            "rebuild with `capidx build`"
        )
    return manifest


def _short(message: str, limit: int = 200) -> str:
    """jsonschema messages quote the offending value, which may be a whole object: keep them readable."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def safe_path(root: Path, relative: str) -> Path:
    """Resolve a manifest path inside `root`, refusing anything that could escape it.

    Defense in depth: the manifest schema forbids these forms already; this guard holds even if a
    manifest were crafted to pass the schema, and it catches symlinks pointing outside the build.
    """
    parts = relative.split("/")
    if (
        not relative
        or relative.startswith("/")
        or "\\" in relative
        or "\x00" in relative
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise BuildError(f"{root / MANIFEST_NAME}: artifact path {relative!r} is not a plain relative path; {_REBUILD}")
    candidate = root.joinpath(*parts)
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise BuildError(f"{candidate}: listed in {MANIFEST_NAME} but missing; rebuild with `capidx build`") from error
    if not resolved.is_relative_to(root):
        raise BuildError(f"{candidate}: resolves outside the build directory (to {resolved}); refusing to serve it")
    if not resolved.is_file():
        raise BuildError(f"{candidate}: listed in {MANIFEST_NAME} but is not a regular file; {_REBUILD}")
    return resolved


def _load_artifact(root: Path, entry: Mapping[str, Any]) -> Artifact:
    path = safe_path(root, entry["path"])
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BuildError(f"{path}: cannot read: {error.strerror}") from error
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != entry["bytes"] or digest != entry["sha256"]:
        raise BuildError(
            f"{path}: content does not match {MANIFEST_NAME} (sha256 {digest[:12]}…, {len(data)} bytes; "
            f"expected {entry['sha256'][:12]}…, {entry['bytes']} bytes). The build was modified after it "
            "was written: rebuild with `capidx build`"
        )
    try:
        text = data.decode("utf-8")
        value = json.loads(text) if entry["mimeType"] == JSON_MIME else None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BuildError(f"{path}: not valid {entry['mimeType']} ({error}); {_REBUILD}") from error
    except RecursionError:
        raise BuildError(f"{path}: nested too deeply for a document capidx writes; {_REBUILD}") from None
    return Artifact(
        kind=entry["kind"],
        uri=entry["uri"],
        path=entry["path"],
        mime_type=entry["mimeType"],
        title=entry["title"],
        description=entry["description"],
        size=entry["bytes"],
        sha256=entry["sha256"],
        tokens=MappingProxyType(dict(entry["tokens"])),
        words=entry["words"],
        lines=entry["lines"],
        params=MappingProxyType(dict(entry["params"])),
        text=text,
        value=value,
    )


def _unique(root: Path, artifacts: tuple[Artifact, ...], key: Any, what: str) -> dict[Any, Artifact]:
    found: dict[Any, Artifact] = {}
    for artifact in artifacts:
        k = key(artifact)
        if k in found:
            raise BuildError(
                f"{root / MANIFEST_NAME}: {found[k].path} and {artifact.path} have the same {what}; "
                "rebuild with `capidx build`"
            )
        found[k] = artifact
    return found


def _templates(root: Path, manifest: Mapping[str, Any]) -> dict[str, Template]:
    templates: dict[str, Template] = {}
    for row in manifest["resourceTemplates"]:
        template = Template(
            kind=row["kind"],
            uri_template=row["uriTemplate"],
            name=row["name"],
            title=row["title"],
            description=row["description"],
            mime_type=row["mimeType"],
            parameter=row["parameter"],
        )
        placeholder = "{" + template.parameter + "}"
        if not template.uri_template.endswith(placeholder) or template.uri_template.count("{") != 1:
            raise BuildError(
                f"{root / MANIFEST_NAME}: resource template {template.uri_template!r} must end in {placeholder} "
                f"and have no other expression; {_REBUILD}"
            )
        templates[template.kind] = template
    return templates


def _match_index(root: Path, artifacts: tuple[Artifact, ...]) -> MatchIndex:
    indexes = [artifact for artifact in artifacts if artifact.kind == "index"]
    if len(indexes) != 1:
        found = len(indexes)
        raise BuildError(f"{root / MANIFEST_NAME}: expected one artifact of kind 'index', found {found}; {_REBUILD}")
    try:
        return MatchIndex.from_json(indexes[0].value)
    except (KeyError, TypeError, ValueError, RecursionError) as error:
        raise BuildError(f"{root / indexes[0].path}: not a match index ({error!r}); {_REBUILD}") from error
