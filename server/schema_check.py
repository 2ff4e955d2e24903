"""A small, strict JSON Schema (2020-12) validator for the keywords capidx's own schemas use.

Why not `jsonschema`: importing it costs seconds at server start, because with the
`format-nongpl` extra its format module imports `rfc3987_syntax`, which compiles a Lark grammar at
import time. The server validates three things only (the build manifest, the `serve:` section of
capidx.yaml and tool arguments), all against schemas in this repository, which use a handful of
keywords. This module implements exactly those and refuses a schema using anything else, so a new
keyword fails loudly at startup instead of being skipped. tests/test_server_schema_check.py checks
it agrees with `jsonschema` on the bundled schemas.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples"})
_CHECKED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "pattern",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "$ref",
    }
)
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class UnsupportedSchema(ValueError):
    """The schema uses a keyword this validator does not implement."""


@dataclass(frozen=True)
class SchemaError:
    """One failure, shaped like `jsonschema.ValidationError` where capidx reads it."""

    path: tuple[str | int, ...]
    validator: str
    validator_value: Any
    instance: Any
    schema: Mapping[str, Any]
    message: str

    @property
    def absolute_path(self) -> tuple[str | int, ...]:
        return self.path

    @property
    def pointer(self) -> str:
        return "/" + "/".join(str(part) for part in self.path)


class Validator:
    """Validates instances against one schema document (local `$ref`s only)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.root = schema
        _check_supported(schema, schema)

    def iter_errors(self, instance: Any) -> Iterator[SchemaError]:
        yield from self._errors(self.root, instance, ())

    def errors(self, instance: Any) -> list[SchemaError]:
        return list(self.iter_errors(instance))

    def _errors(self, schema: Any, value: Any, path: tuple[str | int, ...]) -> Iterator[SchemaError]:
        if schema is True:
            return
        if schema is False:
            yield SchemaError(path, "false", False, value, {}, "no value is allowed here")
            return
        if "$ref" in schema:
            yield from self._errors(_resolve(self.root, schema["$ref"]), value, path)
        types = schema.get("type")
        if types is not None:
            allowed = [types] if isinstance(types, str) else list(types)
            if not any(_TYPES[t](value) for t in allowed):
                yield SchemaError(path, "type", types, value, schema, f"{_short(value)} is not of type {types!r}")
                return
        yield from _scalar_errors(schema, value, path)
        if isinstance(value, dict):
            yield from self._object_errors(schema, value, path)
        if isinstance(value, list):
            yield from self._array_errors(schema, value, path)

    def _object_errors(self, schema: Mapping[str, Any], value: dict[str, Any], path: tuple) -> Iterator[SchemaError]:
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                yield SchemaError(
                    path, "required", schema["required"], value, schema, f"{name!r} is a required property"
                )
        extra = schema.get("additionalProperties", True)
        unknown = [key for key in value if key not in properties]
        if extra is False and unknown:
            listed = ", ".join(repr(key) for key in unknown[:5])
            yield SchemaError(path, "additionalProperties", False, value, schema, f"unexpected properties: {listed}")
        for key, item in value.items():
            if key in properties:
                yield from self._errors(properties[key], item, (*path, key))
            elif isinstance(extra, dict):
                yield from self._errors(extra, item, (*path, key))

    def _array_errors(self, schema: Mapping[str, Any], value: list[Any], path: tuple) -> Iterator[SchemaError]:
        if "minItems" in schema and len(value) < schema["minItems"]:
            yield SchemaError(path, "minItems", schema["minItems"], value, schema, "too few items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            yield SchemaError(path, "maxItems", schema["maxItems"], value, schema, "too many items")
        if schema.get("uniqueItems") and len({_freeze(item) for item in value}) != len(value):
            yield SchemaError(path, "uniqueItems", True, value, schema, "has non-unique elements")
        if "items" in schema:
            for position, item in enumerate(value):
                yield from self._errors(schema["items"], item, (*path, position))


def _scalar_errors(schema: Mapping[str, Any], value: Any, path: tuple) -> Iterator[SchemaError]:
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        yield SchemaError(
            path, "enum", schema["enum"], value, schema, f"{_short(value)} is not one of {schema['enum']}"
        )
    if "const" in schema and not _same(value, schema["const"]):
        yield SchemaError(path, "const", schema["const"], value, schema, f"{schema['const']!r} was expected")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            yield SchemaError(path, "minLength", schema["minLength"], value, schema, f"{_short(value)} is too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            yield SchemaError(path, "maxLength", schema["maxLength"], value, schema, f"{_short(value)} is too long")
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            yield SchemaError(
                path,
                "pattern",
                schema["pattern"],
                value,
                schema,
                f"{_short(value)} does not match {schema['pattern']!r}",
            )
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            yield SchemaError(
                path, "minimum", schema["minimum"], value, schema, f"{value} is less than {schema['minimum']}"
            )
        if "maximum" in schema and value > schema["maximum"]:
            yield SchemaError(
                path, "maximum", schema["maximum"], value, schema, f"{value} is more than {schema['maximum']}"
            )


def _same(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return ("object", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("array", tuple(_freeze(v) for v in value))
    if isinstance(value, bool):
        return ("bool", value)
    return value


@lru_cache(maxsize=64)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _resolve(root: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        raise UnsupportedSchema(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _check_supported(node: Any, root: Mapping[str, Any]) -> None:
    if isinstance(node, bool):
        return
    if not isinstance(node, dict):
        raise UnsupportedSchema(f"a schema must be an object or a boolean, got {_short(node)}")
    unknown = set(node) - _ANNOTATIONS - _CHECKED
    if unknown:
        raise UnsupportedSchema(f"unsupported keyword(s) {sorted(unknown)}: extend capidx.server.schema_check")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict | bool):
            _check_supported(node[key], root)
    for child in node.get("properties", {}).values():
        _check_supported(child, root)
    for child in node.get("$defs", {}).values():
        _check_supported(child, root)
    if "$ref" in node:
        _resolve(root, node["$ref"])
    for t in [node["type"]] if isinstance(node.get("type"), str) else node.get("type", []):
        if t not in _TYPES:
            raise UnsupportedSchema(f"unknown type {t!r}")


def best_error(errors: list[SchemaError]) -> SchemaError | None:
    """The most specific error (the deepest path), like jsonschema's `best_match` in spirit."""
    return max(errors, key=lambda error: len(error.path), default=None)
