"""Near misses that an open schema lets through: keys one edit from a known one.

capidx's own schemas are closed, so an unknown key there is an error (`schemas`), with the key it most
likely meant (`capidx.schema.wording.suggest`, shared with `capidx serve`, which checks capidx.yaml itself).
A user's schema (`--schema`) may leave objects open; a key one edit (or a change of case) away from a known
one is then still most likely a typo whose value the build drops without a word, so it gets a warning. The
keys known at a place are the user's schema's and the bundled schema's (what the build reads). Keys starting
with `x-` are extension fields: never reported. The schema's `patternProperties` are matched with the `search`
given: the time-limited one of the user's schema (schemacost), since the keys come from the data.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate.load import SourceFile
from capidx.schema.wording import EXTENSION_PREFIX, Search, suggest, unknown_key

CODE = "unknown-key-typo"
_MAX_DEPTH = 64  # document levels followed
_MAX_SUBSCHEMAS = 1000  # subschemas applying to one value (a hostile schema could name thousands)
_COMBINATORS = ("allOf", "anyOf", "oneOf", "then", "else")


def near_misses(
    source: SourceFile, schema: dict[str, Any], also: Sequence[dict[str, Any]] = (), search: Search = re.search
) -> list[Diagnostic]:
    """A warning for each key of `source` that neither `schema` nor the `also` schemas name, one edit or a
    case change from one that they do. Objects `schema` closes (`additionalProperties: false`) are left
    alone: the schema check reports their unknown keys itself, as it reports a required key that is missing
    (at the key that looks like its misspelling).
    """
    found = []
    top = [_Place(schema, schema), *(_Place(other, other, closes=False) for other in also)]
    for parts, value, shape in _objects(source.data, top, search):
        if shape.closed or not shape.known:
            continue
        for key in (key for key in value if isinstance(key, str) and key not in shape.known):
            if key.startswith(EXTENSION_PREFIX) or shape.matches_pattern(key, search):
                continue
            meant = suggest(key, shape.known, loose=False, present=value)
            if meant is not None and not (meant in shape.required and meant not in value):
                hint = "the schema lets it through; an extension key starts with 'x-'"
                message = unknown_key(key, meant, value)
                found.append(source.diagnostic((*parts, key), "warning", message, hint, CODE, key=True))
    return found


@dataclass(frozen=True)
class _Place:
    """A subschema, with the schema document its local `$ref`s resolve in; only the checked schema's
    (`closes`) can close an object, the others only name keys."""

    schema: Any
    root: dict[str, Any]
    closes: bool = True


@dataclass(frozen=True)
class _Shape:
    """What the subschemas applying to one object say about its keys."""

    known: frozenset[str]
    patterns: tuple[str, ...]
    closed: bool
    required: frozenset[str]  # by the checked schema, whose check reports them missing
    places: tuple[_Place, ...]

    @classmethod
    def of(cls, places: Sequence[_Place]) -> _Shape:
        known: set[str] = set()
        patterns: list[str] = []
        closed = False
        required: set[str] = set()
        for place in places:
            schema = place.schema
            known.update(schema.get("properties", {}) if isinstance(schema.get("properties"), dict) else ())
            if isinstance(schema.get("patternProperties"), dict):
                patterns += [p for p in schema["patternProperties"] if isinstance(p, str)]
            if place.closes:
                closed = closed or False in (schema.get("additionalProperties"), schema.get("unevaluatedProperties"))
                required.update(key for key in schema.get("required", ()) if isinstance(key, str))
        return cls(frozenset(known), tuple(patterns), closed, frozenset(required), tuple(places))

    def matches_pattern(self, key: str, search: Search) -> bool:
        # The patterns of a user's schema passed `regexrisk` when it was loaded (`load_schema_file`).
        return any(_searches(pattern, key, search) for pattern in self.patterns)

    def below(self, key: str, search: Search) -> list[_Place]:
        """The subschemas that apply to the value of `key`."""
        out = []
        for place in self.places:
            schema = place.schema
            properties = schema.get("properties")
            if isinstance(properties, dict) and key in properties:
                out.append(replace(place, schema=properties[key]))
                continue
            pattern_properties = schema.get("patternProperties")
            matched = [
                replace(place, schema=sub)
                for pattern, sub in (pattern_properties.items() if isinstance(pattern_properties, dict) else ())
                if _searches(pattern, key, search)
            ]
            if matched:
                out += matched
            elif isinstance(schema.get("additionalProperties"), dict):
                out.append(replace(place, schema=schema["additionalProperties"]))
        return out


def _searches(pattern: str, key: str, search: Search) -> bool:
    try:
        return bool(search(pattern, key))
    except re.error:
        return False


def _objects(
    value: Any, places: list[_Place], search: Search, parts: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], dict[str, Any], _Shape]]:
    """(parts, object, the shape its subschemas give it) for every object of the document a schema describes."""
    if len(parts) > _MAX_DEPTH:
        return
    places = [expanded for place in places for expanded in _expand(place)]
    if not places:
        return
    if isinstance(value, dict):
        shape = _Shape.of(places)
        yield parts, value, shape
        for key, child in value.items():
            yield from _objects(child, shape.below(key, search), search, (*parts, key))
    elif isinstance(value, list):
        items = [replace(p, schema=p.schema["items"]) for p in places if isinstance(p.schema.get("items"), dict)]
        for index, item in enumerate(value):
            below = list(items)  # every element's, then the element's own `prefixItems` entry
            for place in places:
                prefix = place.schema.get("prefixItems")
                if isinstance(prefix, list) and index < len(prefix) and isinstance(prefix[index], dict):
                    below.append(replace(place, schema=prefix[index]))
            yield from _objects(item, below, search, (*parts, index))


def _expand(place: _Place) -> list[_Place]:
    """The subschema and those it brings in (local `$ref`s, combinators), each once; `true` says nothing."""
    out: list[_Place] = []
    seen: set[int] = set()
    pending = [place]
    while pending and len(out) < _MAX_SUBSCHEMAS:
        current = pending.pop()
        schema = current.schema
        if not isinstance(schema, dict) or id(schema) in seen:
            continue
        seen.add(id(schema))
        out.append(current)
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            pending.append(replace(current, schema=_resolve(current.root, ref[1:])))
        for word in _COMBINATORS:
            subs = schema.get(word)
            subs = subs if isinstance(subs, list) else [subs]
            pending += [replace(current, schema=sub) for sub in subs if isinstance(sub, dict)]
    return out


def _resolve(root: dict[str, Any], pointer: str) -> Any:
    """The value at a JSON pointer (`/$defs/capability`) of `root`, or None."""
    node: Any = root
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node
