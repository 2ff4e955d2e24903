"""Unknown keys: which known key a misspelled one meant, and near misses that an open schema lets through.

capidx's own schemas are closed, so an unknown key there is an error (`schemas`), with the key it most
likely meant. A user's schema (`--schema`) may leave objects open; a key one edit (or a change of case)
away from a known one is then still most likely a typo whose value the build drops without a word, so it
gets a warning. The keys known at a place are the user's schema's and the bundled schema's (what the build
reads). Keys starting with `x-` are extension fields: never reported.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate.load import SourceFile
from capidx.schema.yamldata import shown_key

EXTENSION_PREFIX = "x-"
CODE = "unknown-key-typo"
_MAX_KEY_CHARS = 200  # longer keys are not compared: bounded work on hostile input
_LONG_KEY = 8  # characters from which two edits still make a likely typo (`implemntaton`)
_MAX_DEPTH = 64  # document levels followed
_MAX_SUBSCHEMAS = 1000  # subschemas applying to one value (a hostile schema could name thousands)
_COMBINATORS = ("allOf", "anyOf", "oneOf", "then", "else")


def suggest(key: str, known: Iterable[str], *, loose: bool = True, present: Container[str] = ()) -> str | None:
    """The known key `key` most likely meant: the same in another case, one edit away (an insertion, a
    deletion, a substitution or two neighbours swapped), or with `loose` and a long key (`_LONG_KEY`), two.
    Nothing looser: `tags` is not `status`, nor `src` `sources`. A key the object already has (`present`) is
    returned only in another case (`unknown_key` then says it is already there), never as a spelling."""
    folded = key.casefold()
    known = [name for name in known if name != key and (name not in present or name.casefold() == folded)]
    if len(key) > _MAX_KEY_CHARS or not known:
        return None
    tests = [lambda name: name.casefold() == folded, lambda name: one_edit(folded, name.casefold())]
    if loose and len(key) >= _LONG_KEY:
        tests.append(lambda name: within_edits(folded, name.casefold(), 2))
    for test in tests:
        found = next((name for name in known if test(name)), None)
        if found is not None:
            return found
    return None


def suggest_also_given(key: str, known: Iterable[str], present: Container[str]) -> str | None:
    """The known key `key` most likely meant, the object's own keys included: a misspelled second copy of a key
    the object has (`stalenes` beside `staleness`) still names it, as `unknown_key` then says it is also given."""
    known = list(known)
    meant = suggest(key, known, present=present)
    return meant if meant is not None else suggest(key, [name for name in known if name in present])


def unknown_key(key: str, meant: str | None, present: Container[str] = ()) -> str:
    """The message for an unknown key (cut short when long: the key is the data's, any length); `meant`
    among the object's keys (`present`) is the same key in another case, or the key of which `key` is a
    misspelled second copy."""
    shown = shown_key(key)
    if meant is not None and meant in present:
        if meant.casefold() != key.casefold():  # a misspelled copy of a key also given (`stalenes` and `staleness`)
            return f"'{shown}' is not a known key: did you mean '{meant}'? (also given)"
        return f"'{shown}' is not a known key: '{meant}' is already there, in another case"
    return f"'{shown}' is not a known key" + (f": did you mean '{meant}'?" if meant else "")


def one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` differ by exactly one insertion, deletion, substitution or transposition."""
    return a != b and within_edits(a, b, 1)


def within_edits(a: str, b: str, limit: int) -> bool:
    """Whether `a` becomes `b` by at most `limit` insertions, deletions, substitutions or swaps of neighbours
    (optimal string alignment, computed only in the band `limit` wide around the diagonal: linear work)."""
    if abs(len(a) - len(b)) > limit:
        return False
    over = limit + 1
    before: list[int] = []
    previous = [min(j, over) for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        current = [over] * (len(b) + 1)
        current[0] = min(i, over)
        for j in range(max(1, i - limit), min(len(b), i + limit) + 1):
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                value = min(value, before[j - 2] + 1)
            current[j] = min(value, over)
        if min(current) > limit:
            return False
        before, previous = previous, current
    return previous[len(b)] <= limit


def near_misses(source: SourceFile, schema: dict[str, Any], also: Sequence[dict[str, Any]] = ()) -> list[Diagnostic]:
    """A warning for each key of `source` that neither `schema` nor the `also` schemas name, one edit or a
    case change from one that they do. Objects `schema` closes (`additionalProperties: false`) are left
    alone: the schema check reports their unknown keys itself, as it reports a required key that is missing
    (at the key that looks like its misspelling).
    """
    found = []
    top = [_Place(schema, schema), *(_Place(other, other, closes=False) for other in also)]
    for parts, value, shape in _objects(source.data, top):
        if shape.closed or not shape.known:
            continue
        for key in (key for key in value if isinstance(key, str) and key not in shape.known):
            if key.startswith(EXTENSION_PREFIX) or shape.matches_pattern(key):
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

    def matches_pattern(self, key: str) -> bool:
        # The patterns of a user's schema passed `regexrisk` when it was loaded (`load_schema_file`).
        return any(_searches(pattern, key) for pattern in self.patterns)

    def below(self, key: str) -> list[_Place]:
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
                if _searches(pattern, key)
            ]
            if matched:
                out += matched
            elif isinstance(schema.get("additionalProperties"), dict):
                out.append(replace(place, schema=schema["additionalProperties"]))
        return out


def _searches(pattern: str, key: str) -> bool:
    try:
        return re.search(pattern, key) is not None
    except re.error:
        return False


def _objects(
    value: Any, places: list[_Place], parts: tuple[Any, ...] = ()
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
            yield from _objects(child, shape.below(key), (*parts, key))
    elif isinstance(value, list):
        items = [replace(p, schema=p.schema["items"]) for p in places if isinstance(p.schema.get("items"), dict)]
        for index, item in enumerate(value):
            below = list(items)  # every element's, then the element's own `prefixItems` entry
            for place in places:
                prefix = place.schema.get("prefixItems")
                if isinstance(prefix, list) and index < len(prefix) and isinstance(prefix[index], dict):
                    below.append(replace(place, schema=prefix[index]))
            yield from _objects(item, below, (*parts, index))


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
