"""Resources: what is listed and what may be read, for one snapshot and one exposure.

Pure functions. A URI is answered by looking a document up in the manifest, either by its exact URI
or, for a templated kind, by resolving the template value as a name (the same resolution as the
tools), then finding the document by `(kind, params)`. No file path is ever built from a URI.
What the exposure does not list can be neither listed nor read: both raise the same error, so a
hidden resource is indistinguishable from a missing one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import mcp_types as types

from capidx.schema.text import normalize
from capidx.server.agent_args import covered, several_agents
from capidx.server.limits import clip
from capidx.server.matchindex import RESOLUTION_META, MatchIndex, Resolution
from capidx.server.names import category_named, resolve_agent, resolve_category
from capidx.server.readings import nothing_in
from capidx.server.resolve import resolve_capability
from capidx.server.snapshot import RESOURCE_KINDS, TEMPLATE_KINDS, VARIANT_KINDS, Artifact, Snapshot
from capidx.server.unresolved import category_answered

TOKENS_META = "capidx/tokens"
SHA_META = "capidx/sha256"
# How much a client should want each resource in context (MCP annotations.priority, 0..1).
PRIORITY = {"summary": 1.0, "stats": 0.5, "full": 0.1, "agent": 0.5, "capability": 0.5, "category": 0.5}
MAX_VALUE_LENGTH = 200
# Template values are names, never paths: anything path-like is rejected before resolution.
_PATHLIKE = re.compile(r"[/\\?#]|\.\.|%2e|%2f|%5c|%00|^[.~]", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

CATALOG_KEYS = {"agent": "agents", "capability": "capabilities", "category": "categories"}
RESOLVERS: dict[str, Callable[[MatchIndex, str], Resolution]] = {
    "agent": resolve_agent,
    "capability": resolve_capability,
    "category": resolve_category,
}


class ResourceNotFound(Exception):
    """Maps to JSON-RPC -32602 (INVALID_PARAMS) with the URI in `data`."""

    def __init__(self, uri: str, message: str, candidates: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.uri = clip(uri, escape=False)  # what is echoed of the client's URI as data (JSON carries any character)
        self.message = message
        self.candidates = tuple(candidates)

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"uri": self.uri}
        if self.candidates:
            data["candidates"] = list(self.candidates)
        return data


@dataclass(frozen=True, slots=True)
class Read:
    artifact: Artifact
    resolution: Resolution | None = None  # set when a template value was resolved as a name


def _meta(artifact: Artifact) -> dict[str, Any]:
    return {TOKENS_META: dict(artifact.tokens), SHA_META: artifact.sha256}


def _annotations(kind: str) -> types.Annotations:
    return types.Annotations(audience=["assistant"], priority=PRIORITY[kind])


def list_resources(snapshot: Snapshot, kinds: frozenset[str]) -> list[types.Resource]:
    """The exposed variants (summary, stats, full) with size, token counts and priority."""
    listed = []
    for kind in VARIANT_KINDS:
        artifact = snapshot.variant(kind)
        if artifact is None or kind not in kinds:
            continue
        listed.append(
            types.Resource(
                uri=artifact.uri,
                name=kind,
                title=artifact.title,
                description=artifact.description,
                mime_type=artifact.mime_type,
                size=artifact.size,
                annotations=_annotations(kind),
                _meta=_meta(artifact),
            )
        )
    return listed


def list_templates(snapshot: Snapshot, kinds: frozenset[str]) -> list[types.ResourceTemplate]:
    return [
        types.ResourceTemplate(
            uri_template=template.uri_template,
            name=template.name,
            title=template.title,
            description=template.description,
            mime_type=template.mime_type,
            annotations=_annotations(kind),
        )
        for kind in TEMPLATE_KINDS
        if kind in kinds and (template := snapshot.templates.get(kind)) is not None
    ]


def readable(snapshot: Snapshot, kinds: frozenset[str]) -> tuple[list[str], list[str]]:
    """Exposed concrete URIs and URI templates, for error messages."""
    uris = [r.uri for r in list_resources(snapshot, kinds)]
    templates = [t.uri_template for t in list_templates(snapshot, kinds)]
    return uris, templates


def read_resource(snapshot: Snapshot, kinds: frozenset[str], uri: str) -> Read:
    """The document behind `uri`, or `ResourceNotFound` (unknown, hidden, ambiguous or path-like)."""
    artifact = snapshot.artifacts.get(uri)
    if artifact is not None and artifact.kind in RESOURCE_KINDS and artifact.kind in kinds:
        return Read(artifact)
    for kind in TEMPLATE_KINDS:
        template = snapshot.templates.get(kind)
        if template is None or kind not in kinds or not uri.startswith(template.uri_base):
            continue
        value = _template_value(snapshot, kinds, uri, uri[len(template.uri_base) :], kind)
        resolution = RESOLVERS[kind](snapshot.index, value)
        if resolution.status == "ambiguous":
            options = [template.uri_base + c.value for c in resolution.candidates]
            said = (
                f"Resource not found: {clip(uri)}{_ambiguous(snapshot, kinds, resolution, kind)} {', '.join(options)}"
            )
            raise ResourceNotFound(uri, said, options)
        found = snapshot.find(kind, **{template.parameter: resolution.value}) if resolution.ok else None
        if found is None and kind == "agent" and resolution.status == "unknown":  # said as the tools say it
            if (several := _named_several(snapshot, uri, value, template.uri_base)) is not None:
                raise several
            message = (
                f"Resource not found: {clip(uri)}: unknown agent '{clip(value)}': {covered(snapshot, [resolution])}"
            )
            raise ResourceNotFound(uri, message)
        if found is None and (category := _empty_category(snapshot, resolution, kind)):
            named = "" if normalize(category) == normalize(value) else f", {category},"
            said = f"{clip(value)!r} is a category{named} and {nothing_in(category, snapshot.index.listings)}"
            others = [template.uri_base + c.value for c in resolution.candidates] if kind == "capability" else []
            these = "of another category" if len(others) == 1 else "of other categories"  # as the tools' hint says it
            words = f" ({these}, sharing words with it: {', '.join(others)})" if others else ""
            raise ResourceNotFound(uri, f"Resource not found: {clip(uri)}: {said}{words}", others)
        if found is None:
            closest = [template.uri_base + c.value for c in resolution.candidates]
            hint = f" (closest: {', '.join(closest)})" if closest else ""
            named = normalize(value)
            if kind == "category" and (slug := snapshot.index.keys.get(named) or snapshot.index.aliases.get(named)):
                hint = f": {value!r} is a capability ({_where(snapshot, kinds, 'capability', slug)})"
                closest = []  # the categories merely spelled like it are not what was meant
            raise ResourceNotFound(uri, f"Resource not found: {clip(uri)}: {_no_match(kind, value)}{hint}", closest)
        return Read(found, resolution)
    raise _not_found(snapshot, kinds, uri)


def _empty_category(snapshot: Snapshot, resolution: Resolution, kind: str) -> str:
    """The category a category value (mistyped or not, as list_capabilities reads it), or a capability value that is
    a category's name, names when the catalog records no capability in it ('debugging'); "" for any other."""
    category = resolution.value if kind == "category" else category_answered(snapshot, resolution)
    return category if category in snapshot.index.empty_categories else ""


def _named_several(snapshot: Snapshot, uri: str, value: str, base: str) -> ResourceNotFound | None:
    """An agent value that joins several agents' names ('claude vs gemini', 'claude, copilot'), read as the tools read
    it: each agent has its own resource, and the error names each one's URI (with what to say of a name among them
    that is no agent). None when the value stands for one agent at most."""
    if (several := several_agents(snapshot, value)) is None:
        return None
    ids, problem = several.ids, several.problem or several.unknown or None  # a resource is one agent's: said all
    uris = [base + agent for agent in ids]
    if problem is None:
        said = f"{clip(value)!r} names {len(ids)} agents, a resource each: {', '.join(uris)}"
    else:
        others = f" The others' resources: {', '.join(uris)}" if uris else ""
        said = f"{problem[:1].lower()}{problem[1:]}{others}"
    return ResourceNotFound(uri, f"Resource not found: {clip(uri)}: {said}", uris)


def _no_match(kind: str, value: str) -> str:
    """'no category matches 'x''; for a capability, what the server knows: none matches it closely enough to answer,
    which is not a no (the catalog may record it in other words)."""
    if kind != "capability":
        return f"no {kind} matches {value!r}"
    return (
        f"no capability matches {value!r} closely enough to answer, which is not a no: the catalog may word it "
        "otherwise"
    )


def _ambiguous(snapshot: Snapshot, kinds: frozenset[str], resolution: Resolution, kind: str) -> str:
    """Why a template value names no one document, as the tools would say it: several documents by one name; none
    clearly, by its words (the closest follow); or a category's name (its capabilities follow)."""
    if resolution.resolved_by == "category" and (category := category_named(snapshot.index, resolution.query)):
        shown, total = len(resolution.candidates), len(resolution.ranked)
        some = f"its first {shown} of {total} capabilities" if total > shown else "its capabilities"
        return f" is a category ({_where(snapshot, kinds, 'category', category)}); {some}:"
    if resolution.scored:  # which is not a no, as when nothing matches (`_no_match`)
        no = ", which is not a no (the catalog may word it otherwise)" if kind == "capability" else ""
        return f": no {kind} clearly matches {clip(resolution.query)!r}{no}; the closest:"
    return f" matches more than one {kind}:"


def _where(snapshot: Snapshot, kinds: frozenset[str], kind: str, value: str) -> str:
    """Where to read a document of `kind`: its resource when exposed, else the tool that answers it."""
    template = snapshot.templates.get(kind)
    if template is not None and kind in kinds:
        return f"read {template.uri_base}{value}"
    return "list_capabilities answers it" if kind == "category" else "lookup_capability answers it"


def _template_value(snapshot: Snapshot, kinds: frozenset[str], uri: str, raw: str, kind: str) -> str:
    """The template value as a name; path-like values (traversal, encoded separators) are refused."""
    if not raw or len(raw) > MAX_VALUE_LENGTH or _PATHLIKE.search(raw) or _CONTROL.search(raw):
        raise _not_found(snapshot, kinds, uri, f"not a valid {kind} name")
    try:
        value = unquote(raw, errors="strict") if "%" in raw else raw
    except UnicodeDecodeError:
        raise _not_found(snapshot, kinds, uri, f"not a valid {kind} name") from None
    if _PATHLIKE.search(value) or _CONTROL.search(value) or not value.strip():
        raise _not_found(snapshot, kinds, uri, f"not a valid {kind} name")
    return value


def _not_found(snapshot: Snapshot, kinds: frozenset[str], uri: str, reason: str = "") -> ResourceNotFound:
    uris, templates = readable(snapshot, kinds)
    readable_text = ", ".join(uris) or "none"
    template_text = ", ".join(templates) or "none"
    why = f" ({reason})" if reason else ""
    return ResourceNotFound(
        uri, f"Resource not found: {clip(uri)}{why}. Readable: {readable_text}; templates: {template_text}"
    )


def read_result(read: Read, ttl_ms: int) -> types.ReadResourceResult:
    artifact = read.artifact
    meta = {RESOLUTION_META: read.resolution.describe()} if read.resolution is not None else None
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=artifact.uri, mime_type=artifact.mime_type, text=artifact.text, _meta=_meta(artifact)
            )
        ],
        ttl_ms=ttl_ms,
        cache_scope="public",
        _meta=meta,
    )


def complete(snapshot: Snapshot, kinds: frozenset[str], template_uri: str, prefix: str) -> list[str]:
    """Every value for an exposed template's parameter that starts with `prefix` (completion/complete sends the first
    hundred, with how many there are)."""
    for kind in TEMPLATE_KINDS:
        template = snapshot.templates.get(kind)
        if template is not None and kind in kinds and template.uri_template == template_uri:
            values = snapshot.catalog.get(CATALOG_KEYS[kind], ())
            wanted = prefix.casefold()
            return [value for value in values if value.startswith(wanted)]
    return []
