"""A fast yes/no answer to "is this document valid?", from fastjsonschema, for capidx's plain schemas.

jsonschema walks a document through generic machinery (a validator object per subschema, an error
object per failure): about a millisecond per capability record, the largest cost of validating a large
catalog. Almost every document is valid, and a valid document has no errors to describe, so the
schema is compiled once with fastjsonschema (which generates Python code for it, ten or more times
faster) to answer only that question.

It is an accelerator, never a second opinion: True means "valid" for certain, and anything else is
answered by jsonschema itself, which also describes the errors. fastjsonschema follows draft 2019-09
semantics and differs from jsonschema in corners (Python's `1 == True` in `enum`, `$ref` beside other
keywords in older drafts), so a schema is compiled only when every keyword in it is one whose meaning
both libraries share exactly (`_SUPPORTED`), enums hold only strings, and formats are checked by
jsonschema's own format checker; any other schema gets no fast check (`None`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

# Keywords without any effect on validity (annotations), and the containers `$ref` points into.
_IGNORED = frozenset(
    {"title", "description", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly",
     "$schema", "$defs", "definitions"}
)
_SUPPORTED = frozenset(
    {"type", "enum", "required", "properties", "additionalProperties", "propertyNames", "items", "minItems",
     "maxItems", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
     "pattern", "format", "uniqueItems", "$ref"}
)
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")
_SUBSCHEMAS = ("additionalProperties", "propertyNames", "items")
_DRAFTS = frozenset({"Draft202012Validator", "Draft201909Validator"})
_DRAFT_URIS = tuple(
    f"https://json-schema.org/draft/{draft}/schema{end}" for draft in ("2020-12", "2019-09") for end in ("", "#")
)


def compile_check(validator: Any) -> Check | None:
    """A function telling whether an instance is valid under (jsonschema) `validator`'s schema, or None.

    The function answers True only when jsonschema would report no error; False means "maybe
    invalid: ask jsonschema".
    """
    if type(validator).__name__ not in _DRAFTS:
        return None
    return _compile(validator.schema, getattr(validator, "format_checker", None))


def compile_schema(schema: Any) -> Check | None:
    """Like `compile_check`, from the schema alone (jsonschema need not be imported), for a schema
    without `format` (checking formats takes jsonschema's format checker) of draft 2020-12 or 2019-09."""
    declared = schema.get("$schema", _DRAFT_URIS[0]) if isinstance(schema, dict) else None
    if declared not in _DRAFT_URIS:
        return None
    return _compile(schema, None)


def _compile(schema: Any, format_checker: Any) -> Check | None:
    """The check, or None; formats in the schema are checked by `format_checker` (None: no fast check)."""
    formats: set[str] = set()
    root = {key: value for key, value in schema.items() if key != "$id"} if isinstance(schema, dict) else schema
    if not _shared_semantics(root, formats) or (formats and format_checker is None):
        return None
    import fastjsonschema

    conforms = {name: _format_function(format_checker, name) for name in formats}
    try:
        # A deep copy because fastjsonschema rewrites the `$ref`s of the schema it is given (and the same
        # dict serves jsonschema); use_default=False, or it writes `default` values into documents.
        # `_NO_FETCHING`: only local `$ref`s get here (`_shared_semantics`), and should one not be, fastjsonschema
        # must not fetch it (its default for a scheme without a handler is urllib).
        validate = fastjsonschema.compile(
            copy.deepcopy(schema), handlers=_NO_FETCHING, formats=conforms, use_default=False
        )
    except Exception:  # a bad `$ref` or regex, deep nesting: no fast check, and jsonschema reports the problem
        return None

    def check(instance: Any) -> bool:
        try:
            validate(instance)
        except fastjsonschema.JsonSchemaValueException:
            return False
        return True

    return check


class _Refusing(dict):  # type: ignore[type-arg]
    """fastjsonschema's `handlers`: one for every URI scheme, refusing to fetch."""

    def __contains__(self, scheme: object) -> bool:
        return True

    def __missing__(self, scheme: str) -> Callable[[str], Any]:
        return _refuse


def _refuse(uri: str) -> Any:
    raise ValueError(f"not fetched: {uri} (capidx never fetches schemas)")


_NO_FETCHING = _Refusing()


def _format_function(format_checker: Any, name: str) -> Callable[[Any], bool]:
    return lambda value: format_checker.conforms(value, name)


def _shared_semantics(schema: Any, formats: set[str]) -> bool:
    """True when every keyword below `schema` means the same to fastjsonschema and jsonschema.

    `$id` is accepted at the root only (the caller strips it): a nested one would move the base URI
    of the references below it.
    """
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    keywords = set(schema) - _IGNORED
    if not keywords <= _SUPPORTED:
        return False
    ref = schema.get("$ref")
    if ref is not None and (not isinstance(ref, str) or not ref.startswith("#") or keywords != {"$ref"}):
        return False  # only local references, and none with siblings (their meaning changed across drafts)
    enum = schema.get("enum")
    if enum is not None and not (isinstance(enum, list) and all(isinstance(value, str) for value in enum)):
        return False  # Python's 1 == True == 1.0 would make a non-string enum looser than jsonschema's
    if "format" in schema:
        if not isinstance(schema["format"], str):
            return False
        formats.add(schema["format"])
    for key in _SUBSCHEMA_MAPS:
        if key in schema and not (
            isinstance(schema[key], dict) and all(_shared_semantics(sub, formats) for sub in schema[key].values())
        ):
            return False
    return all(_shared_semantics(schema[key], formats) for key in _SUBSCHEMAS if key in schema)
