"""The categories a capability schema defines, whether or not a capability uses them.

Why: a catalog files its capabilities under the categories its schema enumerates, and uses only some (the bundled
schema has 21, the bundled catalog 15). Asked about one it does not use ('debugging'), the server must say that the
catalog records nothing in it (no data, not a no), not that no such category exists, nor answer with a capability
of another category whose record happens to say the word. The build records them (match.json `emptyCategories`).
Only an enumeration the schema writes at `capabilities` -> `items` -> `category`, through `#/...` references within
the schema, is read; a schema that leaves the category free, or defines it another way, defines none. Every
subschema that applies there counts, as validation applies it: a `$ref` and the keywords beside it, each of an
`allOf`; a category is defined when every `enum` (or `const`) among them allows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from capidx.compiler.validate.textrules import is_category

# References and `allOf`s followed, at most: a schema whose references loop is refused by validation, and must not
# hang this.
MAX_REFERENCES = 32
_PATH = (("properties", "capabilities"), ("items",), ("properties", "category"))
# What makes a subschema's values depend on more than its enumerations: a schema so written defines none here.
_ALTERNATIVES = ("anyOf", "oneOf", "not", "if")
_LISTS = ("enum", "const")  # the keywords that list a category's values; every one that applies must allow it


class _Unread(Exception):
    """A subschema applies that is not read here (a reference elsewhere, too many references)."""


def defined_categories(schema: Any) -> tuple[str, ...]:
    """The slugs a schema enumerates for a capability's `category`, sorted; () when it enumerates none."""
    budget = [MAX_REFERENCES]
    try:
        nodes = _applying(schema, [schema], budget)
        for step in _PATH:
            nodes = _applying(schema, [_child(node, step) for node in nodes], budget)
    except _Unread:
        return ()
    allowed = [_values(node[key] if key == "enum" else [node[key]]) for node in nodes for key in _LISTS if key in node]
    if not allowed:
        return ()
    return tuple(sorted(value for value in set.intersection(*allowed) if is_category(value)))


def _values(values: Any) -> set[str]:
    return {value for value in values if isinstance(value, str)} if isinstance(values, list) else set()


def _child(node: Mapping[str, Any], step: tuple[str, ...]) -> Any:
    for key in step:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _applying(schema: Any, nodes: list[Any], budget: list[int]) -> list[Mapping[str, Any]]:
    """`nodes` and every subschema their local `$ref`s ('#/$defs/category') and `allOf`s apply, objects only;
    `_Unread` when one of them holds an alternative (`_ALTERNATIVES`), whose branches this does not read."""
    found: list[Mapping[str, Any]] = []
    pending = list(nodes)
    while pending:
        node = pending.pop()
        if not isinstance(node, Mapping):
            continue
        if any(key in node for key in _ALTERNATIVES):
            raise _Unread
        found.append(node)
        more = list(node.get("allOf")) if isinstance(node.get("allOf"), list) else []
        if "$ref" in node:
            more.append(_referenced(schema, node["$ref"]))
        budget[0] -= len(more)
        if budget[0] < 0:
            raise _Unread
        pending += more
    return found


def _referenced(schema: Any, reference: Any) -> Any:
    """The subschema a local reference ('#/$defs/category', a JSON pointer, percent-encoded) points to; `_Unread`
    for another file's or an anchor's ('#category')."""
    if not isinstance(reference, str) or not reference.startswith("#"):
        raise _Unread
    pointer = unquote(reference[1:])
    if pointer and not pointer.startswith("/"):
        raise _Unread
    node = schema
    for part in pointer.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        node = node.get(key) if isinstance(node, Mapping) else None
    return node
