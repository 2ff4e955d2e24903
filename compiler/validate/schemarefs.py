"""`$ref`s resolve against local schema files only: nothing is ever fetched.

A schema given by `--schema` or `paths.schema` may come from a fork's pull request, and jsonschema (like
fastjsonschema) fetches a remote `$ref` over the network by default: a request per document, and a hang
on a server that never answers. Here a reference may point to
- a place in the schema itself (`#/$defs/x`, an anchor);
- a schema file (JSON or YAML) inside the schema's folder: by relative path (`defs.json#/x`), `file:` URI,
  a URI under the folder the schema's own `$id` names, or the `$id` the file declares;
- a bundled capidx schema or a JSON Schema meta-schema, by its `$id`.
Anything else is an error at the `$ref`'s line (code `schema-file`: exit 2), found before any document is
checked (`check_references`); and the registry handed to jsonschema retrieves nothing else either, so a
reference the check did not see cannot reach the network.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.request import url2pathname

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate.load import SourceFile, load_file
from capidx.schema.realpath import resolve
from capidx.schema.wording import json_type

if TYPE_CHECKING:  # imported where used: `referenced_files` serves a no-op build, which must stay quick
    from referencing import Registry, Resolver, Resource, Specification

SCHEMA_SUFFIXES = (".json", ".yaml", ".yml")
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
_NOT_SCHEMAS = frozenset({"enum", "const", "examples", "default"})  # values, not subschemas
# Keywords whose value maps names to subschemas: a name there may be spelled like a keyword of `_NOT_SCHEMAS`.
_NAMED_SCHEMAS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
_MAX_SCANNED = 500  # schema files read to find a declared `$id` (a schema folder holds a handful)
_CODE = "schema-file"


class NonLocalReference(Exception):
    """A reference to something that is not a local schema file (so it would have to be fetched)."""


@dataclass(frozen=True)
class NoSchemaThere:
    """Why a reference that resolves is refused: it names a value that is no schema (`#/required/0`, a string), on
    which jsonschema failed every document with an AttributeError. Returned by `_resolve`, never raised."""

    kind: str  # the value's JSON type


class MalformedUri(Exception):
    """A `$id` (`id`) or reference that urllib cannot read as a URI (`http://[::1/s.json`, a host that opens a bracket
    and never closes it): `urljoin`, and with it referencing and jsonschema, fail on it with a ValueError."""

    def __init__(self, parts: tuple[Any, ...], value: str, why: str) -> None:
        super().__init__(why)
        self.parts, self.value, self.why = parts, value, why


class UnreadableSchema(Exception):
    """A schema that referencing cannot read (a `$schema` or `$id` that is no string, in a subschema a meta-schema
    did not check): jsonschema would fail on it with whatever Python error follows."""


_NEVER_FETCHED = "capidx never fetches schemas"


@cache
def offline_registry() -> Registry:
    """The bundled schemas by `$id`, retrieving nothing: for the bundled validators."""
    from referencing import Registry

    return Registry(retrieve=_refuse).with_resources(_bundled_resources())


@cache
def _bundled_resources() -> tuple[tuple[str, Resource], ...]:
    found = []
    for entry in resources.files("capidx.schema").iterdir():
        if entry.name.endswith(".json"):
            schema = json.loads(entry.read_text("utf-8"))
            if isinstance(schema, dict) and isinstance(schema.get("$id"), str):
                found.append((schema["$id"], _resource(schema)))
    return tuple(found)


def _refuse(uri: str) -> Resource:
    raise NonLocalReference(_NEVER_FETCHED)


class _LocalFiles:
    """A registry's `retrieve`: schema files inside one folder, nothing else; remembers what it read."""

    def __init__(
        self,
        folder: Path,
        root_id: str | None,
        file_errors: Callable[[SourceFile], list[Diagnostic]] | None = None,
        draft: Specification | None = None,
    ) -> None:
        self.folder = resolve(folder)
        self.draft = draft  # of a file naming none: the schema's, as jsonschema applies such a file
        # The folder stands for the directory of the schema's own `$id`: `https://x/s/cap.json` -> `https://x/s/`.
        self.id_folder = root_id.rsplit("/", 1)[0] + "/" if root_id and _scheme(root_id) else None
        self.loaded: dict[str, SourceFile] = {}
        self.crawled: dict[str, Registry] = {}  # each file of `loaded` as a registry of its resources and anchors
        self.problems: list[Diagnostic] = []
        self.file_errors = file_errors or (lambda source: [])
        self._declared: dict[str, Path] | None = None
        self._refused: dict[str, tuple[type[Exception], str]] = {}  # URI -> why it cannot be used, found once

    def __call__(self, uri: str) -> Resource:
        # A lookup that fails is not remembered by the registry: a file named by many references is read once.
        if uri in self._refused:
            kind, why = self._refused[uri]
            raise kind(why)
        try:
            return self._read(uri)
        except (NonLocalReference, UnreadableSchema) as exc:
            self._refused[uri] = (type(exc), str(exc))
            raise

    def _read(self, uri: str) -> Resource:
        path = self.path(uri)
        source, problems = load_file(path)
        if source is None or any(problem.is_error for problem in problems):
            self.problems += [problem for problem in problems if problem.is_error]
            raise NonLocalReference(f"{path} cannot be read")
        if malformed := malformed_uris(source, self.draft):  # referencing would fail on it as it reads the file
            self.problems += malformed
            raise UnreadableSchema(malformed[0].message)
        try:
            _, self.crawled[uri] = _crawled(source.data, uri, self.draft)
        except UnreadableSchema as exc:  # said once, with where in the file when its meta-schema can tell
            self.problems += self.file_errors(source) or [_unreadable(source, exc)]
            raise
        self.loaded[uri] = source
        return self.crawled[uri][uri]

    def path(self, uri: str) -> Path:
        """The local schema file `uri` names; NonLocalReference when there is none."""
        try:
            relative = self._relative(uri)
        except ValueError as exc:  # no URI: `malformed_uris` said where, when a schema file wrote it
            raise NonLocalReference(f"not a URI ({exc})") from None
        if relative is not None:
            try:
                path = resolve(self.folder / relative)
            except OSError as exc:  # a link loop, or a chain of more links than the kernel follows
                raise NonLocalReference(f"{relative}: {exc.strerror or exc}") from None
            if path.is_relative_to(self.folder) and path.is_file():
                return path
            raise NonLocalReference(f"no such schema file inside {self.folder}")
        declared = self._declared_ids().get(uri)
        if declared is None:
            raise NonLocalReference(_NEVER_FETCHED)
        return declared

    def _relative(self, uri: str) -> str | None:
        """The path `uri` names inside the schema's folder (a relative path, a `file:` URI, a URI under the folder of
        the schema's own `$id`); None when it names none; ValueError when it is no URI."""
        parts = urlsplit(uri)
        if parts.scheme in ("", "file") and not parts.netloc:
            return url2pathname(parts.path)
        if self.id_folder and uri.startswith(self.id_folder):
            return url2pathname(urlsplit(uri[len(self.id_folder) :]).path)
        return None

    def _declared_ids(self) -> dict[str, Path]:
        """`$id` (`id` in drafts 3 and 4) -> file, for the schema files of the folder (read once, when a reference
        needs it)."""
        if self._declared is None:
            self._declared = {}
            files = sorted(path for path in self.folder.iterdir() if path.suffix in SCHEMA_SUFFIXES)
            for path in files[:_MAX_SCANNED]:
                source, _ = load_file(path) if path.is_file() else (None, [])
                declared = _root_id(source.data, self.draft) if source is not None else None
                if declared is not None:
                    self._declared.setdefault(declared.rstrip("#"), path)
        return self._declared


def check_references(
    source: SourceFile, file_errors: Callable[[SourceFile], list[Diagnostic]]
) -> tuple[Registry, list[Diagnostic], list[SourceFile]]:
    """The registry to validate with (crawled, retrieving nothing), an error for each `$ref` of the schema in
    `source` (and of the local schema files it refers to) that is not local or points to nothing, and those local
    files (their patterns run as the schema's do). A file that referencing cannot read is an error too, said by
    `file_errors` (its `$schema`, its meta-schema's errors)."""
    from jsonschema_specifications import REGISTRY as SPECIFICATIONS  # the meta-schemas, shipped offline
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    schema = source.data
    draft = _named_draft(schema, DRAFT202012)
    files = _LocalFiles(source.path.parent, _root_id(schema, draft), file_errors, draft)
    registry = Registry(retrieve=files).with_resources(_bundled_resources())
    if malformed := malformed_uris(source, draft):  # before referencing reads a URI, which would fail on it
        return registry, malformed, []
    try:
        root_uri, root = _crawled(schema)
    except UnreadableSchema as exc:
        return registry, [_unreadable(source, exc)], []
    # Every resource crawled once, a local file when it is read: a resolver on a registry left uncrawled (as
    # `resolver_with_root` leaves it) crawls every resource again to look up each anchor it has not seen, and
    # forgets a file it retrieves, so checking a schema cost the square of its `$anchor`s.
    known = SPECIFICATIONS.combine(registry, root).crawl()
    combined = 0  # of the local files read
    problems: list[Diagnostic] = []
    pending, seen = [(source, "")], set()
    while pending:
        current, base = pending.pop()
        for parts, reference in _references(current.data, base, (), _id_rules(current.data, draft)):
            if len(files.crawled) > combined:
                known = known.combine(*list(files.crawled.values())[combined:])
                combined = len(files.crawled)
            cause = _resolve(known.resolver(root_uri), reference)
            if isinstance(cause, NonLocalReference):
                problems.append(_not_local(current, parts, cause, source.path.parent))
            elif cause is not None:
                problems.append(_nowhere(current, parts, cause))
        for uri, loaded in files.loaded.items():
            if uri not in seen:
                seen.add(uri)
                pending.append((loaded, uri))
    problems += dict.fromkeys(files.problems)  # a file found by two URIs (`defs.json`, `file:…/defs.json`): said once
    # jsonschema validates with every resource and anchor found here: on a registry left to it uncrawled, each anchor
    # a document meets crawled every resource again (its resolver keeps nothing it crawls), per document.
    known = known.combine(*list(files.crawled.values())[combined:])
    return known, problems, list(files.loaded.values())


def root_resolver(registry: Registry, schema: Any) -> Resolver:
    """The resolver jsonschema starts from for `schema`, in the `registry` check_references returned (which holds it
    crawled). jsonschema's own (`resolver_with_root`) adds the schema to the registry again, uncrawled, and each
    lookup it does not find there (an anchor of the dynamic scope, at every `$dynamicRef` a document meets) crawled
    the whole schema again: checking a document cost the size of the schema times its dynamic references."""
    return registry.resolver(_resource(schema).id() or "")


def referenced_files(path: Path) -> list[Path]:
    """The local schema files the schema at `path` refers to, directly or not, for the build's input digest
    (editing one must make the next build validate again). Never raises: what cannot be read is left out."""
    source, _ = load_file(path)
    if source is None or not isinstance(source.data, dict):
        return []
    from referencing.jsonschema import DRAFT202012

    draft = _named_draft(source.data, DRAFT202012)
    files = _LocalFiles(path.parent, _root_id(source.data, draft), draft=draft)
    found: dict[str, Path] = {}
    pending: list[tuple[Any, str]] = [(source.data, "")]
    try:
        while pending:
            data, base = pending.pop()
            for _, reference in _references(data, base, (), _id_rules(data, draft)):
                document = urldefrag(reference).url
                if document and document not in found:
                    _follow(document, files, found, pending)
    except (RecursionError, MalformedUri):  # a schema nested too deeply, or an `$id` no URI: validation says so
        pass
    return sorted(set(found.values()) - {resolve(path)})


def _follow(document: str, files: _LocalFiles, found: dict[str, Path], pending: list[tuple[Any, str]]) -> None:
    try:
        found[document] = files.path(document)
    except (NonLocalReference, OSError):
        return
    loaded, _ = load_file(found[document])
    if loaded is not None:
        pending.append((loaded.data, document))


def malformed_uris(source: SourceFile, draft: Specification | None) -> list[Diagnostic]:
    """An error at the first `$id` (`id` in drafts 3 and 4) or reference of the schema file in `source` that is no
    URI urllib can read (`MalformedUri`), said at its place like the schema's other problems, where referencing
    and jsonschema would end in a ValueError's traceback (`draft`: the one it is read in when it names none)."""
    try:
        for _ in _references(source.data, "", (), _id_rules(source.data, draft)):
            pass
    except MalformedUri as exc:
        message = f"{exc.parts[-1]} {json.dumps(exc.value, ensure_ascii=False)[:200]} is not a URI ({exc.why})"
        hint = "write a URI such as https://example.com/schemas/capability.json; an IPv6 host closes its bracket: [::1]"
        return [source.diagnostic(exc.parts, "error", message, hint, _CODE)]
    return []


def _scheme(uri: str) -> str:
    """`uri`'s scheme; "" when it has none or is no URI (`malformed_uris` says so)."""
    try:
        return urlsplit(uri).scheme
    except ValueError:
        return ""


def _joined(base: str, reference: str, parts: tuple[Any, ...]) -> str:
    """`reference` made absolute against `base`; MalformedUri (placed at `parts`) when it is no URI. Checked alone
    first: `urljoin` returns a reference as it is, unread, when the base is empty (the schema's own `$id`)."""
    try:
        urlsplit(reference)
        return urljoin(base, reference)
    except ValueError as exc:
        raise MalformedUri(parts, reference, str(exc)) from None


def _root_id(schema: Any, draft: Specification | None) -> str | None:
    """The URI the schema file `schema` declares for itself (`draft`: the draft it is read in when it names none)."""
    declared = schema.get(_id_rules(schema, draft)[0]) if isinstance(schema, dict) else None
    return declared if isinstance(declared, str) else None


def _crawled(contents: Any, uri: str | None = None, draft: Specification | None = None) -> tuple[str, Registry]:
    """(`uri`, a registry of `contents` under `uri` (default: its own `$id`, as jsonschema reads a root schema), read
    as referencing reads a schema to resolve an anchor or a URI it does not know yet: `$schema`, `$id` and anchors
    of every subschema; in `draft` when it names none); UnreadableSchema when it cannot."""
    from referencing import Registry

    try:
        resource = _resource(contents, draft)
        uri = (resource.id() or "") if uri is None else uri
        return uri, Registry().with_resource(uri, resource).crawl()
    except RecursionError:
        raise
    except Exception as exc:  # referencing takes the types a meta-schema checks for granted
        raise UnreadableSchema(f"{type(exc).__name__}: {exc}") from None


def _unreadable(source: SourceFile, cause: UnreadableSchema) -> Diagnostic:
    return source.diagnostic(
        (),
        "error",
        f"not a schema jsonschema can read ({str(cause)[:200]})",
        "a subschema naming another draft by $schema must be valid in that draft",
        _CODE,
    )


def _resource(contents: Any, draft: Specification | None = None) -> Resource:
    """`contents` as referencing reads the schema of the draft its `$schema` names (`draft` when none, default
    2020-12, as jsonschema applies a schema naming none), except that what is no schema where a subschema may stand
    is not read as one (`_only_schemas`). A local file naming no draft must be read in the draft of the schema
    referring to it: jsonschema applies it in that draft, where (drafts 3 to 7) an `$id` beside a `$ref` is no
    `$id`, and referencing resolving its `$ref`s as 2020-12 would fail where the check of references did not."""
    from referencing.jsonschema import DRAFT202012

    return _only_schemas((draft or DRAFT202012).detect(contents)).create_resource(contents)


@cache
def _only_schemas(specification: Specification) -> Specification:
    """`specification`, its subresources without the values that are no schema. In drafts 3 to 7 `dependencies` maps
    a key to a schema or to a list of key names (draft 3: one name), and draft 3's `extends` is a schema or a list of
    them; referencing reads every value of `dependencies` as a schema when the first one is, and the keys of an
    `extends` object as schemas, so a valid schema failed to be read (an AttributeError on a list, or a string). Such
    values hold no `$id` or anchor, and jsonschema applies them as the draft says, whatever referencing reads."""
    from referencing import Specification

    def subresources_of(contents: Any) -> Iterator[Any]:
        return (each for each in specification.subresources_of(contents) if isinstance(each, dict | bool))

    return Specification(
        name=specification.name,
        id_of=specification.id_of,
        subresources_of=subresources_of,
        maybe_in_subresource=specification.maybe_in_subresource,
        anchors_in=lambda _, contents: specification.anchors_in(contents),
    )


def _resolve(resolver: Any, reference: str) -> Exception | NoSchemaThere | None:
    """None when `reference` resolves, or names a local file that cannot be read (said once, by `_LocalFiles`); else
    why not: NonLocalReference, referencing's error for a place the document lacks (`#/$defs/nope`, an anchor),
    which jsonschema would otherwise raise, and name by its private wrapper, once per document checked, or
    NoSchemaThere for a place that holds a value that is no schema (`#/required/0`)."""
    from referencing.exceptions import Unresolvable

    try:
        found = resolver.lookup(reference).contents
    except Unresolvable as exc:
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, NonLocalReference | UnreadableSchema):
                return cause if isinstance(cause, NonLocalReference) else None
            cause = cause.__cause__
        return exc
    except ValueError:  # a pointer into an array or a string by a segment that is no index ('#/type/x')
        return Unresolvable(ref=urldefrag(reference).fragment)
    if not isinstance(found, dict | bool):  # a schema is an object, or true / false
        return NoSchemaThere(json_type(found))
    return None


def _id_rules(schema: Any, default: Specification | None) -> tuple[str, bool]:
    """How the schema file `schema` names a subschema's URI, in the draft it names (`default`, the draft of the
    schema referring to it, when it names none referencing knows: jsonschema applies it so): the keyword (`id` in
    drafts 3 and 4, where `$id` is no keyword; `$id` since), and whether a `$ref` beside it makes it ignored (drafts 3
    to 7: the `$ref` resolves against the base above it)."""
    from referencing.jsonschema import DRAFT3, DRAFT4, DRAFT6, DRAFT7

    draft = _named_draft(schema, default)
    return "id" if draft in (DRAFT3, DRAFT4) else "$id", draft in (DRAFT3, DRAFT4, DRAFT6, DRAFT7)


def _named_draft(schema: Any, default: Specification | None) -> Specification | None:
    """The draft the schema file `schema` names by `$schema`; `default` when it names none referencing knows."""
    from referencing.jsonschema import specification_with

    declared = schema.get("$schema") if isinstance(schema, dict) else None
    return specification_with(declared, default=default) if isinstance(declared, str) else default


def _references(
    node: Any, base: str, parts: tuple[Any, ...], rules: tuple[str, bool], *, names: bool = False
) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(JSON path of the keyword, the reference made absolute against the `$id`s above it) for every
    `$ref`, `$dynamicRef` and `$recursiveRef` below `node`; `rules`: the keyword naming a URI (`$id`, or `id`) and
    whether one beside a `$ref` is none (`_id_rules`); `names`: `node` maps names to subschemas (`properties`), so a
    `default` in it is a schema, not a value."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from _references(item, base, (*parts, index), rules)
        return
    if not isinstance(node, dict):
        return
    id_keyword, ref_hides_id = rules
    # A map of names holds no keyword: draft 3's `"dependencies": {"id": "name"}` names a key, not a URI.
    declared = None if names else node.get(id_keyword)
    if isinstance(declared, str) and not declared.startswith("#") and not (ref_hides_id and "$ref" in node):
        base = _joined(base, declared, (*parts, id_keyword))
    for keyword in () if names else _REF_KEYWORDS:
        value = node.get(keyword)
        if isinstance(value, str):
            target = _joined(base, value, (*parts, keyword))
            # A dynamic reference's fragment names an anchor found at run time: only its document must be local. A
            # JSON pointer (`$dynamicRef: "#/required/0"`) is no anchor: it resolves as a `$ref`, and is checked so.
            static = keyword == "$ref" or (keyword == "$dynamicRef" and urldefrag(target).fragment.startswith("/"))
            yield (*parts, keyword), target if static else urldefrag(target).url or base or "#"
    for key, value in node.items():
        if (names or key not in _NOT_SCHEMAS) and isinstance(value, dict | list):
            named = not names and key in _NAMED_SCHEMAS
            yield from _references(value, base, (*parts, key), rules, names=named)


def _nowhere(source: SourceFile, parts: tuple[Any, ...], cause: Exception | NoSchemaThere) -> Diagnostic:
    """A reference to a place its document does not have: named by what is missing, not by the whole document
    referencing's message repeats."""
    hint = "point it at a place the schema has: '#/$defs/<name>' for a key under $defs, or '#<name>' for an $anchor"
    if isinstance(cause, NoSchemaThere):
        message = f"{parts[-1]} {_written(source, parts)} points to a value of type {cause.kind}, which is no schema"
        return source.diagnostic(parts, "error", message, f"{hint} (a schema is an object, or true or false)", _CODE)
    anchor = getattr(cause, "anchor", None)
    missing = f"anchor {anchor!r}" if anchor is not None else repr(getattr(cause, "ref", ""))
    message = f"{parts[-1]} {_written(source, parts)} points to nothing: the schema it names has no {missing}"
    return source.diagnostic(parts, "error", message, hint, _CODE)


def _written(source: SourceFile, parts: tuple[Any, ...]) -> str:
    """The reference at `parts`, quoted as JSON (200 characters at most)."""
    data = source.data
    for part in parts:
        data = data[part]
    return json.dumps(data, ensure_ascii=False)[:200]


def _not_local(source: SourceFile, parts: tuple[Any, ...], cause: NonLocalReference, folder: Path) -> Diagnostic:
    return source.diagnostic(
        parts,
        "error",
        f"{parts[-1]} {_written(source, parts)} is not a local schema file ({cause})",
        f"copy the schema it names into {folder} and refer to it by a relative path",
        _CODE,
    )
