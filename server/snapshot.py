"""Load one build directory into an immutable, verified `Snapshot`.

The build directory is the server's only input (docs/build-directory.md). Loading reads
`manifest.json`, checks it against the bundled manifest schema, then reads every file the
manifest lists -- and nothing else -- checks each artifact's size and sha256, and keeps the text in
memory. A packed artifact (a tool answer: a row with `offset`) is its own bytes of a pack file; the
rows of a pack must cover it exactly, without gap or overlap, so an answer is never served with a
neighbour's bytes, and every answer's sha256 is checked like a file's. The files of `site/` (served
over HTTP only; at 20,000 capabilities 42 % of the build's bytes) are checked to be there at load and
read from disk when asked for, each time checked against their size and sha256 before they are served
(`Artifact.text`).
Requests are answered from the snapshot; apart from `site/` files, the disk is never touched again
until a reload builds a new snapshot beside the old one. Loading is constant work per artifact
(issue 13): the manifest is checked by hand (jsonschema only explains a refusal), paths are checked as
strings, JSON documents are parsed when used.

Security (defense in depth): the schema already forbids absolute paths and `.`/`..` segments, but
every path is checked again here as a string, joined to the build directory resolved once, and must
stay inside it: each folder is resolved once per load, a file whenever it is a symlink (`safe_path`).
Resolution of user input never builds a path: documents are found by `(kind, params)` in
`Snapshot.documents`.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from capidx.schema import builddir
from capidx.schema.homepath import dead_link_on
from capidx.schema.realpath import real_path, resolve
from capidx.server.limits import clip
from capidx.server.matchindex import MatchIndex

MANIFEST_NAME = builddir.MANIFEST
RESOURCE_KINDS = ("summary", "full", "stats", "agent", "capability", "category")
VARIANT_KINDS = ("summary", "full", "stats")
TEMPLATE_KINDS = ("agent", "capability", "category")
JSON_MIME = "application/json"
SITE_DIR = "site/"  # files read when asked for (`Artifact.text`), not at load

DocumentKey = tuple[str, tuple[tuple[str, str], ...]]


_REBUILD = builddir.REBUILD
_DAMAGED = builddir.REBUILD_DAMAGED


class BuildError(Exception):
    """The build directory cannot be served. The message names the file and says what to do."""


class NoBuildError(BuildError):
    """There is no build at the given path at all. `where` says where none is (`no build at …`) when nothing of a build
    is there either, a folder that is nothing or holds no sign of one: a caller that knows where the build is may put
    its own advice after it (`capidx serve` run from a subfolder of a project names the project's)."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where


class BuildDenied(BuildError):
    """Part of the build this user may not read: a permission to give, not a build that changed or is damaged."""


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
    loaded: str | None  # the verified text, held since the load; None for a file read on use (`on_disk`)
    on_disk: Path | None = None  # the resolved build root a `site/` file is read from on each use

    @property
    def text(self) -> str:
        """The artifact's text, verbatim. A `site/` file is read now: found as at load (`safe_path`), a
        regular file opened without blocking, at most its manifest size plus one byte read, and served only
        if its size and sha256 match the manifest; otherwise `BuildError` (the build changed on disk), or
        `BuildDenied` when this user may not read it."""
        if self.loaded is not None:
            return self.loaded
        assert self.on_disk is not None
        return _verified_text(self.on_disk, self.path, self.size, self.sha256, self.mime_type)

    @property
    def value(self) -> Any:
        """The parsed document of a JSON artifact (tool documents, stats, the index), parsed anew on each use;
        `None` for other kinds, or for a JSON artifact that does not parse (its text is still served verbatim).

        Parsed on use, not at load: 53,000 tool documents at 20,000 capabilities took 2.3 s to parse and held
        a few hundred MiB as Python objects, for the few a session ever asks for (each is a few KiB: a parse
        costs microseconds). The sha256 check at load proves the bytes are the ones the build wrote.
        """
        if self.mime_type != JSON_MIME:
            return None
        try:
            return json.loads(self.text)
        except (ValueError, RecursionError):  # not JSON, or a number of over 4,300 digits
            return None


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
    # The token budgets the build breached ('summary 700 > 600'): `capidx build` writes such a build for inspection
    # and exits 1; the server serves it as built, and says so.
    over_budget: tuple[str, ...] = ()
    # `build_signature` of the directory, taken before its manifest was read: what the reloader compares with.
    signature: tuple[int, ...] | None = None

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


manifest_schema = builddir.manifest_schema


@cache
def manifest_validator() -> Any:
    """A `jsonschema` Draft 2020-12 validator for the manifest (imported here, not at module import)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(manifest_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def build_signature(directory: Path) -> tuple[int, ...] | None:
    """Cheap identity of the build at `directory`: the folder's inode plus the manifest's inode, size and mtime
    (None when either is missing). `capidx build` swaps in a new folder, so a rebuild changes it."""
    try:
        folder = os.stat(directory)
        manifest = os.stat(directory / MANIFEST_NAME)
    except OSError:
        return None
    return folder.st_ino, manifest.st_ino, manifest.st_size, manifest.st_mtime_ns


def load_snapshot(directory: Path) -> Snapshot:
    """Read, validate and verify the build in `directory`. Raises `BuildError` naming the problem.

    The snapshot keeps the directory's `build_signature` taken before anything is read, so that a build swapped in
    while it loads (or before the reloader starts watching) differs from it and is loaded in turn."""
    signature = build_signature(directory)
    root = _build_root(directory)
    manifest_bytes = _read_manifest(root)
    manifest = _parse_manifest(root, manifest_bytes)
    rows = manifest["artifacts"]
    files = _read_files(root, rows)
    artifacts = tuple(_load_artifact(root, entry, files[entry["path"]]) for entry in rows)
    by_uri = _unique(root, artifacts, lambda artifact: artifact.uri, "URI")
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
        over_budget=tuple(
            f"{clip(r['kind'])} {r['tokens']:,} > {r['budget']:,}" for r in manifest["budgets"] if not r["ok"]
        ),
        signature=signature,
    )


def _build_root(directory: Path) -> Path:
    """The resolved build folder, once it holds a manifest.json that is a regular file (or a link to one).

    Looked at with `os.stat`, not `Path.is_dir`/`is_file`, so that a folder this user may not read is told apart
    from one without a build: Python 3.11's `Path.is_file` raises the PermissionError (a traceback, exit 1), and
    where it answers False instead (as `os.path.isfile` does) the folder read as one whose manifest.json is missing,
    with advice to run `capidx build` that cannot help. An error other than absence is said as it is (`_unreadable`)."""
    try:
        if not _is(stat.S_ISDIR, directory):
            if dead := dead_link_on(directory):  # it, or a folder above it, is a link that leads nowhere
                link, problem = dead
                raise BuildError(f"{link}: {problem}: point it at a build folder, or pass --build DIR")
            exists = os.path.exists(directory)
            if exists and Path(directory).name == MANIFEST_NAME:  # `capidx report` takes it for its folder
                folder = Path(directory).parent
                said = f"if it is a build's {MANIFEST_NAME}, serve its folder, {folder}"
                raise NoBuildError(f"{directory} is a file: {said}")
            where = f"{directory} is not a directory" if exists else f"no build at {directory}"
            raise NoBuildError(f"{where}: run `capidx build` first, or pass --build DIR", None if exists else where)
        root = resolve(directory, strict=True)
        manifest = root / MANIFEST_NAME
        if not _is(stat.S_ISREG, manifest):
            if os.path.lexists(manifest):  # a pipe would block, a device never end
                raise BuildError(f"{manifest}: not a regular file (a link loop, a pipe or a device?); {_DAMAGED}")
            where = f"no build at {directory} ({MANIFEST_NAME} is missing)"
            nothing = builddir.build_remains(root) in ("empty", "nothing of a build")
            raise NoBuildError(f"{where}: {builddir.make_build(root)}", where if nothing else None)
    except OSError as error:
        raise _unreadable(directory, error) from None
    return root


_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)  # nothing there to read (or a link loop, a dangling link)


def _is(kind: Callable[[int], bool], path: Path) -> bool:
    """Whether `path` (links followed) is there and of `kind`; an OSError other than its absence is raised."""
    try:
        return kind(os.stat(path).st_mode)
    except OSError as error:
        if error.errno in _ABSENT:
            return False
        raise


def _unreadable(directory: Path, error: OSError) -> BuildError:
    """A build folder (or a folder above it, or its manifest) this user cannot look into: not a missing build."""
    where = f"{error.filename}: " if error.filename and Path(error.filename) != directory else ""
    return _refused(error)(f"cannot read the build at {directory}: {where}{error.strerror or error}{_advice(error)}")


_PERMISSION = builddir.read_permission("serve")


def _advice(error: OSError) -> str:
    return f"; {_PERMISSION}" if isinstance(error, PermissionError) else ""


def _refused(error: OSError) -> type[BuildError]:
    """The error for a part of the build that `error` kept from being read: a permission to give, or not."""
    return BuildDenied if isinstance(error, PermissionError) else BuildError


def _listed_but_unreadable(path: Path, error: OSError) -> BuildError:
    """An artifact that cannot be looked at: missing, or there but not readable by this user (said so, with why)."""
    if error.errno in _ABSENT:
        return BuildError(f"{path}: listed in {MANIFEST_NAME} but missing; {_REBUILD}")
    reason = error.strerror or error
    return _refused(error)(f"{path}: listed in {MANIFEST_NAME} but cannot be read: {reason}{_advice(error)}")


# A manifest larger than this is not one capidx wrote: the contract's bound, shared with `capidx report`.
MAX_MANIFEST_BYTES = builddir.MAX_MANIFEST_BYTES


def _read_manifest(root: Path) -> bytes:
    """The manifest's bytes, through the contract's reader: a regular file only, and one over
    MAX_MANIFEST_BYTES refused before it is read. One this user may not read is `BuildDenied`, as any other part
    of the build is: what a caller branches on to tell a permission to give from a build to make again."""
    try:
        return builddir.read_manifest(root / MANIFEST_NAME, limit=MAX_MANIFEST_BYTES)
    except builddir.ManifestUnreadable as error:
        if error.denied:  # not a damaged build: deleting and rebuilding it is not the way
            raise BuildDenied(f"{error}; {_PERMISSION}") from None
        raise BuildError(f"{error}; {_DAMAGED}") from None


def _parse_manifest(root: Path, data: bytes) -> dict[str, Any]:
    where = root / MANIFEST_NAME
    try:
        manifest = builddir.parse_manifest(where, data)
    except builddir.ManifestUnreadable as error:
        raise BuildError(f"{error}; {_DAMAGED}") from None
    if newer := builddir.newer_format(manifest):
        raise BuildError(f"{where}: {newer}")
    _check_manifest(where, manifest)
    return manifest


def _check_manifest(where: Path, manifest: Any) -> None:
    """Refuse a manifest that does not match the bundled schema, naming the JSON path of the first problem.

    Checked by hand (`_header_ok`, `_artifact_row_ok`: written from the schema, reading its patterns, enums
    and key lists from it, and tested to give jsonschema's verdict); jsonschema is imported only to explain
    a refusal, with the same message and JSON path a whole-document validation gives. Why: at 20,000
    capabilities the manifest has 75,000 artifact rows and jsonschema took 13.6 s over them (a validator
    object per keyword per row), and importing it costs ~0.1 s of every start, a tenth of the SDK's own
    start. The build wrote the manifest and the sha256s prove the artifacts' bytes: the check is there to
    refuse a damaged or foreign manifest clearly, not to re-prove the build.
    """
    artifacts = manifest.get("artifacts") if isinstance(manifest, dict) else None
    if not isinstance(artifacts, list):  # not a manifest at all: the schema says what is wrong
        _refuse_if_invalid(where, manifest_validator(), manifest, ())
        raise BuildError(f"{where}: not a build manifest; {_DAMAGED}")
    if not _header_ok(manifest):
        _refuse_if_invalid(where, manifest_validator(), {**manifest, "artifacts": []}, ())
        raise BuildError(f"{where}: not a valid build manifest header; {_DAMAGED}")
    for number, row in enumerate(artifacts):
        if not _artifact_row_ok(row):
            _refuse_if_invalid(where, artifact_validator(), row, ("artifacts", number))
            raise BuildError(f"{where}: /artifacts/{number}: not a valid artifact row; {_DAMAGED}")


def _header_ok(manifest: dict[str, Any]) -> bool:
    """Whether everything but the artifact rows satisfies the schema: the same verdict as jsonschema."""
    schema = manifest_schema()
    top = schema["properties"]
    slug = _row_rule().slug
    if not set(schema["required"]) <= manifest.keys() <= top.keys():
        return False
    if not isinstance(manifest.get("$schema", ""), str) or not isinstance(manifest["capidx"], str):
        return False
    if isinstance(manifest["format"], bool) or manifest["format"] not in top["format"]["enum"]:
        return False
    for name in ("inputDigest", "uriPrefix"):
        if not isinstance(manifest[name], str) or not re.search(top[name]["pattern"], manifest[name]):
            return False
    encodings, catalog = manifest["encodings"], manifest["catalog"]
    if not isinstance(encodings, list) or not encodings or not all(isinstance(e, str) for e in encodings):
        return False
    if not isinstance(catalog, dict) or catalog.keys() != set(top["catalog"]["required"]):
        return False
    for names in catalog.values():
        if not isinstance(names, list) or not all(isinstance(n, str) and slug.search(n) for n in names):
            return False
    templates = top["resourceTemplates"]["items"]
    if not _rows_ok(manifest["resourceTemplates"], templates, lambda row: _template_ok(row, templates)):
        return False
    if "overview" in manifest and not _rows_ok(manifest["overview"], top["overview"]["items"], _overview_ok):
        return False
    return _rows_ok(manifest["budgets"], top["budgets"]["items"], _budget_ok)


def _rows_ok(rows: Any, rule: Mapping[str, Any], fields_ok: Any) -> bool:
    """A list of objects with exactly `rule`'s required keys, each passing `fields_ok`."""
    keys = set(rule["required"])
    return isinstance(rows, list) and all(isinstance(r, dict) and r.keys() == keys and fields_ok(r) for r in rows)


def _template_ok(row: dict[str, Any], rule: Mapping[str, Any]) -> bool:
    enums = {name: spec["enum"] for name, spec in rule["properties"].items() if "enum" in spec}
    if not all(isinstance(row[name], str) and row[name] in values for name, values in enums.items()):
        return False
    return all(isinstance(value, str) for value in row.values())


def _budget_ok(row: dict[str, Any]) -> bool:
    counts_ok = _is_count(row["budget"]) and row["budget"] >= 1 and _is_count(row["tokens"])
    return counts_ok and isinstance(row["kind"], str) and isinstance(row["uri"], str) and isinstance(row["ok"], bool)


def _overview_ok(row: dict[str, Any]) -> bool:
    """A row of `overview` (absent in builds made before the overview artifacts existed)."""
    properties = manifest_schema()["properties"]["overview"]["items"]["properties"]
    enums_ok = all(row[name] in properties[name]["enum"] for name in ("kind", "form"))
    counts_ok = _is_count(row["characters"]) and _is_count(row["budget"]) and row["budget"] >= 1
    flags_ok = isinstance(row["ok"], bool) and isinstance(row["namesEveryCapability"], bool)
    return enums_ok and counts_ok and flags_ok and isinstance(row["uri"], str)


def _refuse_if_invalid(where: Path, validator: Any, instance: Any, prefix: tuple[str | int, ...]) -> None:
    from jsonschema.exceptions import best_match

    try:
        error = best_match(validator.iter_errors(instance))
        message = None if error is None else _short(error.message)
    except RecursionError:
        raise BuildError(f"{where}: nested too deeply to be a build manifest; {_DAMAGED}") from None
    if error is not None:
        pointer = "/" + "/".join(str(part) for part in (*prefix, *error.absolute_path))
        raise BuildError(f"{where}: {pointer}: {message} (see schema/build-manifest.schema.json); {_DAMAGED}")


@cache
def artifact_validator() -> Any:
    """jsonschema's validator for one artifact row (`$defs/artifact`): it explains a row the hand check refused."""
    from jsonschema import Draft202012Validator

    schema = manifest_schema()
    row_schema = {"$schema": schema["$schema"], "$ref": "#/$defs/artifact", "$defs": schema["$defs"]}
    return Draft202012Validator(row_schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


@dataclass(frozen=True, slots=True)
class _RowRule:
    """What `$defs/artifact` of the manifest schema asks of a row, read from the schema itself."""

    keys: frozenset[str]  # required
    optional: frozenset[str]  # allowed besides (additionalProperties: false)
    kinds: frozenset[str]
    strings: tuple[str, ...]
    counts: tuple[str, ...]  # integers >= 0
    patterns: tuple[tuple[str, re.Pattern[str]], ...]
    param_keys: frozenset[str]
    slug: re.Pattern[str]


@cache
def _row_rule() -> _RowRule:
    schema = manifest_schema()
    row = schema["$defs"]["artifact"]
    properties = row["properties"]
    return _RowRule(
        keys=frozenset(row["required"]),
        optional=frozenset(properties.keys() - set(row["required"])),
        kinds=frozenset(properties["kind"]["enum"]),
        strings=tuple(name for name, rule in properties.items() if rule.get("type") == "string"),
        counts=tuple(name for name, rule in properties.items() if rule.get("type") == "integer"),
        patterns=tuple((name, re.compile(rule["pattern"])) for name, rule in properties.items() if "pattern" in rule),
        param_keys=frozenset(properties["params"]["properties"]),
        slug=re.compile(schema["$defs"]["slug"]["pattern"]),
    )


def _is_count(value: Any) -> bool:
    """A JSON Schema `integer` (1.0 is one, True is not) that is `minimum: 0`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return (isinstance(value, int) or value.is_integer()) and value >= 0


def _artifact_row_ok(row: Any) -> bool:
    """Whether `row` satisfies `$defs/artifact`: the same verdict as jsonschema, in a few microseconds."""
    rule = _row_rule()
    if not isinstance(row, dict) or not rule.keys <= row.keys() <= rule.keys | rule.optional:
        return False
    if not isinstance(row["kind"], str) or row["kind"] not in rule.kinds:
        return False
    if not all(isinstance(row[name], str) for name in rule.strings):
        return False
    if not all(_is_count(row[name]) for name in rule.counts if name in row):
        return False
    if not all(pattern.search(row[name]) for name, pattern in rule.patterns):
        return False
    tokens, params = row["tokens"], row["params"]
    if not isinstance(tokens, dict) or not all(_is_count(value) for value in tokens.values()):
        return False
    if not isinstance(params, dict) or not params.keys() <= rule.param_keys:
        return False
    return all(isinstance(value, str) and rule.slug.search(value) for value in params.values())


def _short(message: str, limit: int = 200) -> str:
    """jsonschema messages quote the offending value, which may be a whole object: keep them readable."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def safe_path(root: Path, relative: str, checked_dirs: dict[str, bool] | None = None) -> Path:
    """The artifact at `relative` inside the resolved build root `root`, refusing anything that could escape it.

    Defense in depth: the manifest schema forbids these forms already; this guard holds even if a manifest
    were crafted to pass the schema, and it catches symlinks that lead out of the build.

    Constant work per artifact: `root` was resolved once (`_build_root`), `relative` is checked as a string
    (relative, no empty, `.` or `..` segment), and the file is `lstat`ed. Only a symlink costs a resolution:
    a linked file is resolved where it is found, and each folder's chain is resolved once per load (a build
    has a few dozen folders and 75,000 files at 20,000 capabilities), cached in `checked_dirs`. Resolving
    every path with `Path.resolve(strict=True)` took 8.8 s there. Opening each component with `O_NOFOLLOW`
    would also be correct, but costs a syscall per component per file and would refuse the links inside the
    build that resolution accepts; `lstat` + cached folder resolution gives the same verdicts as before.
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
    if len(parts) > 1:
        _check_folder(root, "/".join(parts[:-1]), checked_dirs if checked_dirs is not None else {})
    try:
        mode = os.lstat(candidate).st_mode
    except OSError as error:
        raise _listed_but_unreadable(candidate, error) from error
    if stat.S_ISLNK(mode):
        return _followed(root, candidate)
    if not stat.S_ISREG(mode):
        raise BuildError(f"{candidate}: listed in {MANIFEST_NAME} but is not a regular file; {_REBUILD}")
    return candidate


def _check_folder(root: Path, folder: str, checked: dict[str, bool]) -> None:
    """Refuse `folder` (relative to `root`) if it resolves outside the build: once per folder per load."""
    if checked.get(folder):
        return
    path = root / folder
    resolved = Path(real_path(path))
    if not resolved.is_relative_to(root):
        raise BuildError(f"{path}: resolves outside the build directory (to {resolved}); refusing to serve it")
    checked[folder] = True


def _followed(root: Path, candidate: Path) -> Path:
    """A symlinked artifact: serve it only if it ends at a regular file inside the build."""
    try:
        resolved = resolve(candidate, strict=True)
    except OSError as error:  # a link loop (or a chain of too many links) is missing: ELOOP
        raise _listed_but_unreadable(candidate, error) from error
    if not resolved.is_relative_to(root):
        raise BuildError(f"{candidate}: resolves outside the build directory (to {resolved}); refusing to serve it")
    if not resolved.is_file():
        raise BuildError(f"{candidate}: listed in {MANIFEST_NAME} but is not a regular file; {_REBUILD}")
    return resolved


def _read_files(root: Path, rows: list[dict[str, Any]]) -> dict[str, bytes | None]:
    """The bytes of every file the manifest lists (each read once; None for a `site/` file, checked to be there
    and read on use), after checking how its rows use it: a plain file belongs to one row; a pack's rows (each
    with `offset`) tile it exactly, in offset order."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_path.setdefault(row["path"], []).append(row)
    checked_dirs: dict[str, bool] = {}
    files: dict[str, bytes | None] = {}
    for relative, users in by_path.items():
        path = safe_path(root, relative, checked_dirs)
        if _read_on_use(relative, users):
            files[relative] = None  # there, a regular file inside the build: read and verified when asked for
            continue
        packed = ["offset" in row for row in users]
        pack = any(packed)
        if pack and not all(packed):
            raise BuildError(f"{path}: listed both as a pack and as a whole artifact in {MANIFEST_NAME}; {_REBUILD}")
        if not pack and len(users) > 1:
            raise BuildError(
                f"{root / MANIFEST_NAME}: {relative} is listed for {users[0]['uri']} and {users[1]['uri']}; {_REBUILD}"
            )

        def listed_size(size: int, path: Path = path, users: list[dict[str, Any]] = users, pack: bool = pack) -> int:
            if pack:
                _check_tiling(path, users, size)
            else:
                _check_size(path, size, users[0]["bytes"], since="written")
            return size

        data = _read_bounded(path, listed_size)
        if pack:
            _check_tiling(path, users, len(data))  # it grew between the size check and the read
        files[relative] = data
    return files


def _read_bounded(path: Path, listed_size: Callable[[int], int]) -> bytes:
    """The bytes of the regular file at `path`, read only once `listed_size(its size on disk)` accepted that size
    (it raises otherwise), and never more than one byte past it: a sparse file of gigabytes, or a size of 2**62 in
    the manifest, costs a `stat`, not a read. A link put there since `safe_path` is not followed, and a pipe or a
    device does not block the open."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except PermissionError as error:  # not a damaged build when this user may not read it: rebuilding would not help
        raise BuildDenied(f"{path}: cannot read: {error.strerror or error}{_advice(error)}") from error
    except OSError as error:
        raise BuildError(f"{path}: cannot read: {error.strerror or error}; {_REBUILD}") from error
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BuildError(f"{path}: not a regular file; {_REBUILD}")
        return handle.read(listed_size(info.st_size) + 1)


def _check_size(path: Path, size: int, listed: float, *, since: str) -> None:
    if size != listed:
        raise BuildError(
            f"{path}: content does not match {MANIFEST_NAME} ({size} bytes; expected {int(listed)} bytes). The build "
            f"was modified after it was {since}: {_REBUILD}"
        )


def _read_on_use(relative: str, users: list[dict[str, Any]]) -> bool:
    """A `site/` file listed once, whole (not a pack): read when asked for, not at load."""
    return relative.startswith(SITE_DIR) and len(users) == 1 and "offset" not in users[0]


def _verified_text(root: Path, relative: str, size: int, sha256: str, mime_type: str) -> str:
    """The text of the file at `relative`, only if it still has the size and sha256 the manifest lists."""
    path = safe_path(root, relative)

    def listed_size(found: int) -> int:
        _check_size(path, found, size, since="loaded")
        return found

    data = _read_bounded(path, listed_size)
    return _checked_text(lambda: str(path), data, size, sha256, mime_type, read=" or more", since="loaded")


def _checked_text(
    where: Callable[[], str],
    data: bytes,
    size: int,
    sha256: str,
    mime_type: str,
    *,
    read: str = "",
    since: str = "written",
) -> str:
    """`data` as text, if it has the manifest's size and sha256 and is UTF-8; else the `BuildError` that says
    what differs, at `where()`. `read`: " or more" when the read stopped one byte past the size; `since`: when
    the build must have been changed (after it was written, or after this server loaded it)."""
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != size or digest != sha256:
        raise BuildError(
            f"{where()}: content does not match {MANIFEST_NAME} (sha256 {digest[:12]}…, {len(data)} bytes{read}; "
            f"expected {sha256[:12]}…, {size} bytes). The build was modified after it was {since}: {_REBUILD}"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BuildError(f"{where()}: not valid {mime_type} ({error}); {_REBUILD}") from error


def _check_tiling(path: Path, rows: list[dict[str, Any]], size: int) -> None:
    """Refuse a pack whose answers overlap, leave gaps, or do not end where the file ends."""
    end = 0
    for row in sorted(rows, key=lambda row: row["offset"]):
        if row["offset"] != end:
            what = "overlaps the answer before it" if row["offset"] < end else "leaves bytes no answer owns"
            raise BuildError(f"{path}: {row['uri']} at offset {row['offset']} {what}; {_REBUILD}")
        end += row["bytes"]
    if end != size:
        raise BuildError(
            f"{path}: {size} bytes, but its answers in {MANIFEST_NAME} end at {end}. The build was modified "
            f"after it was written: {_REBUILD}"
        )


def _load_artifact(root: Path, entry: Mapping[str, Any], file: bytes | None) -> Artifact:
    """One row's bytes (the whole file, or its slice of a pack), checked against its size and sha256; a file
    read on use (`file` None) is checked when it is read (`Artifact.text`)."""
    if file is None:
        return _artifact(entry, None, on_disk=root)
    offset = None if entry.get("offset") is None else int(entry["offset"])  # 3.0 is an integer to JSON Schema
    data = file if offset is None else file[offset : offset + int(entry["bytes"])]

    def where() -> str:  # for a message only: a `Path` made per row was a third of loading 78,000 rows
        return f"{root / entry['path']}" + ("" if offset is None else f" (offset {offset})")

    return _artifact(entry, _checked_text(where, data, entry["bytes"], entry["sha256"], entry["mimeType"]))


def _artifact(entry: Mapping[str, Any], text: str | None, on_disk: Path | None = None) -> Artifact:
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
        loaded=text,
        on_disk=on_disk,
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
        value = json.loads(indexes[0].text)
        return MatchIndex.from_json(value)
    except (
        LookupError,
        TypeError,
        ValueError,
        AttributeError,
        ArithmeticError,
        RecursionError,
    ) as error:  # a part of another shape
        raise BuildError(f"{root / indexes[0].path}: not a match index ({error!r}); {_REBUILD}") from error
