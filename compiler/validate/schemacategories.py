"""The categories a capability schema defines, whether or not a capability uses them.

Why: a catalog files its capabilities under the categories its schema enumerates, and uses only some (the bundled
schema has 21, the bundled catalog 15). Asked about one it does not use ('debugging'), the server must say that the
catalog records nothing in it (no data, not a no), not that no such category exists, nor answer with a capability
of another category whose record happens to say the word. The build records them (match.json `emptyCategories`).
Only an enumeration the schema writes at `capabilities` -> `items` -> `category`, through `#/...` references within
the schema, is read; a schema that leaves the category free, or defines it another way, defines none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capidx.compiler.validate.textrules import is_category

# References followed, at most: a schema whose references loop is refused by validation, and must not hang this.
MAX_REFERENCES = 32
_PATH = (("properties", "capabilities"), ("items",), ("properties", "category"))


def defined_categories(schema: Any) -> tuple[str, ...]:
    """The slugs a schema enumerates for a capability's `category`, sorted; () when it enumerates none."""
    node: Any = schema
    for step in _PATH:
        node = _dereferenced(schema, node)
        for key in step:
            node = node.get(key) if isinstance(node, Mapping) else None
    node = _dereferenced(schema, node)
    values = node.get("enum") if isinstance(node, Mapping) else None
    if not isinstance(values, list):
        return ()
    return tuple(sorted({value for value in values if isinstance(value, str) and is_category(value)}))


def _dereferenced(schema: Any, node: Any) -> Any:
    """`node` with its local `$ref`s ('#/$defs/category') followed; None where one leads elsewhere or nowhere."""
    for _ in range(MAX_REFERENCES):
        reference = node.get("$ref") if isinstance(node, Mapping) else None
        if reference is None:
            return node
        if not isinstance(reference, str) or not reference.startswith("#"):
            return None
        node = schema
        for part in filter(None, reference[1:].split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            node = node.get(key) if isinstance(node, Mapping) else None
    return None
