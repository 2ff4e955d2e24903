"""JSON Schema checking whose messages say what is wrong, where, and what to write instead.

jsonschema's own messages repeat the whole offending value and stop at "is not one of [...]"; here each
error becomes a `Diagnostic` at the value's line:col with a hint: the closest allowed value, the unknown
key's likely spelling, the expected date format.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.fastschema import compile_check, compile_schema
from capidx.compiler.load import SourceFile, load_file

CAPABILITY_SCHEMA = "capability-schema.json"
ALIASES_SCHEMA = "aliases-schema.json"
CONFIG_SCHEMA = "config-schema.json"

_FORMAT_HINTS = {
    "date": "write the date as YYYY-MM-DD",
    "date-time": "write an RFC 3339 date-time such as 2026-01-31T09:00:00Z",
    "uri": "write an absolute URI such as https://example.com/docs",
    "email": "write an address such as name@example.com",
}
_MAX_LISTED = 25


def import_jsonschema(*, with_iri: bool = False) -> ModuleType:
    """Import jsonschema without the one optional dependency that makes it slow.

    With the `format-nongpl` extra, jsonschema imports `rfc3987_syntax` to check the `iri` and
    `iri-reference` formats; that import builds a Lark grammar and costs about 1.3 s, ten times everything
    else `capidx validate` does. Hiding it while jsonschema is imported makes jsonschema skip exactly
    those two checkers (no bundled schema uses them). A user schema that does asks for them.
    """
    if with_iri or "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        import jsonschema

        return jsonschema
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # None makes the import fail
    try:
        import jsonschema
    finally:
        del sys.modules["rfc3987_syntax"]
    return jsonschema


@cache
def bundled_schema(name: str) -> dict[str, Any]:
    return json.loads(resources.files("capidx.schema").joinpath(name).read_text("utf-8"))


@cache
def bundled_validator(name: str) -> Any:
    return LazyValidator(bundled_schema(name))


class LazyValidator:
    """A bundled schema's jsonschema validator, made on first use (anything else is delegated to it).

    Importing jsonschema costs about 0.1 s, more than a no-op `capidx build` needs in all: a document
    the fast check (`fastschema.compile_schema`, formats by its own conservative rules) proves valid
    never needs it. A document that check does not vouch for (a `mailto:` URI, say) gets the exact
    fast check, made with jsonschema's format checker (`fastschema.compile_check`), before jsonschema
    itself is asked to describe its errors.
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator: Any = None
        self._own: Callable[[Any], bool] | None = compile_schema(schema)
        self._exact: Callable[[Any], bool] | None = None
        self._exact_ready = False

    @property
    def jsonschema_validator(self) -> Any:
        if self._validator is None:
            self._validator = make_validator(self.schema)
        return self._validator

    def iter_errors(self, instance: Any) -> Any:
        return self.jsonschema_validator.iter_errors(instance)

    def fast_check(self) -> Callable[[Any], bool] | None:
        """The first fast check tried: the one without jsonschema when the schema allows it."""
        return self._own or self._exact_check()

    def certainly_valid(self, instance: Any) -> bool:
        if self._own is not None and self._own(instance):
            return True
        exact = self._exact_check()
        return exact is not None and exact is not self._own and exact(instance)

    def _exact_check(self) -> Callable[[Any], bool] | None:
        if not self._exact_ready:
            self._exact, self._exact_ready = compile_check(self.jsonschema_validator), True
        return self._exact

    def __getattr__(self, name: str) -> Any:
        return getattr(self.jsonschema_validator, name)


def make_validator(schema: dict[str, Any], *, with_iri: bool = False) -> Any:
    """A validator for the schema's own draft (2020-12 when it names none), with format checking on."""
    jsonschema = import_jsonschema(with_iri=with_iri)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def load_schema_file(path: Path) -> tuple[Any | None, list[Diagnostic]]:
    """A validator for a user's schema file; problems with the file itself carry the code `schema-file` (exit 2)."""
    source, problems = load_file(path)
    problems = [replace(problem, code="schema-file") for problem in problems if problem.is_error]
    if source is None or problems:
        return None, problems
    schema = source.data
    if not isinstance(schema, dict):
        return None, [source.diagnostic((), "error", "a JSON Schema must be an object", code="schema-file")]
    jsonschema = import_jsonschema(with_iri="iri" in source.text)
    declared = schema.get("$schema")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    known = jsonschema.validators.validator_for(schema, default=None) is not None
    warnings = []
    if "$schema" in schema and not known:
        warnings.append(
            source.diagnostic(
                ("$schema",),
                "warning",
                f"unknown $schema {declared!r}",
                "checked as JSON Schema draft 2020-12",
                "schema-file",
            )
        )
    meta = cls(cls.META_SCHEMA)
    errors = [
        source.diagnostic(
            tuple(error.absolute_path),
            "error",
            f"not a valid schema: {_short_message(error.message)}",
            code="schema-file",
        )
        for error in meta.iter_errors(schema)
    ]
    if errors:
        return None, errors
    return make_validator(schema, with_iri="iri" in source.text), warnings


def schema_diagnostics(validator: Any, source: SourceFile, code: str = "schema") -> list[Diagnostic]:
    """Every schema error of the file, deduplicated, as positioned diagnostics."""
    if _certainly_valid(validator, source.data):
        return []
    found: dict[Diagnostic, None] = {}
    try:
        for error in validator.iter_errors(source.data):
            for diagnostic in _describe(error, source, code):
                found.setdefault(diagnostic)
    except RecursionError:
        found.setdefault(
            Diagnostic(str(source.path), None, None, "", "error", "nested too deeply to check", None, "parse")
        )
    except Exception as exc:  # a user schema can fail inside jsonschema in many ways (bad $ref, bad regex)
        message = f"the schema cannot be applied: {type(exc).__name__}: {_short_message(str(exc))}"
        found.setdefault(Diagnostic(str(source.path), None, None, "", "error", message, None, "schema-file"))
    return list(found)


# Fast checks by validator (a few live at a time: the bundled ones and the user's schema of this run).
_FAST_CHECKS: dict[int, tuple[Any, Callable[[Any], bool] | None]] = {}
_MAX_FAST_CHECKS = 16


def _certainly_valid(validator: Any, data: Any) -> bool:
    """True when the fast check (`fastschema`) proves `data` valid; errors are always left to jsonschema."""
    check: Callable[[Any], bool] | None
    if isinstance(validator, LazyValidator):
        check = validator.certainly_valid
    else:
        entry = _FAST_CHECKS.get(id(validator))
        if entry is None or entry[0] is not validator:
            if len(_FAST_CHECKS) >= _MAX_FAST_CHECKS:
                _FAST_CHECKS.clear()
            entry = _FAST_CHECKS[id(validator)] = (validator, compile_check(validator))
        check = entry[1]
    if check is None:
        return False
    try:
        return check(data)
    except Exception:  # e.g. RecursionError on absurd nesting: jsonschema decides, and reports it
        return False


def _describe(error: Any, source: SourceFile, code: str) -> list[Diagnostic]:
    if error.validator in ("anyOf", "oneOf") and error.context:
        from jsonschema.exceptions import best_match

        return _describe(best_match(error.context), source, code)
    parts = tuple(error.absolute_path)
    if "propertyNames" in error.relative_schema_path:
        key = error.instance
        message = (
            f"key {_short(key)} does not match the pattern {error.validator_value}"
            if error.validator == "pattern"
            else f"key {_short(key)}: {_message(error, parts)}"
        )
        return [source.diagnostic((*parts, key), "error", message, code=code, key=True)]
    if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(error.instance, dict):
        return _unknown_keys(error, parts, source, code)
    if error.validator == "required" and isinstance(error.instance, dict):
        return _missing_keys(error, parts, source, code)
    return [source.diagnostic(parts, "error", _message(error, parts), _hint(error), code)]


def _unknown_keys(error: Any, parts: tuple[Any, ...], source: SourceFile, code: str) -> list[Diagnostic]:
    known = list(error.schema.get("properties", {}))
    patterns = list(error.schema.get("patternProperties", {}))
    extra = [key for key in error.instance if key not in known and not any(re.search(p, key) for p in patterns)]
    problems = []
    for key in extra:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else _listing("valid keys", known)
        problems.append(source.diagnostic((*parts, key), "error", f"unknown key '{key}'", hint, code, key=True))
    return problems or [source.diagnostic(parts, "error", _short_message(error.message), None, code)]


def _missing_keys(error: Any, parts: tuple[Any, ...], source: SourceFile, code: str) -> list[Diagnostic]:
    known = set(error.schema.get("properties", {}))
    strangers = [key for key in error.instance if key not in known]
    problems = []
    for key in (name for name in error.validator_value if name not in error.instance):
        close = difflib.get_close_matches(key, strangers, n=1, cutoff=0.6)
        hint = f"'{close[0]}' is present: a typo for '{key}'?" if close else None
        problems.append(source.diagnostic(parts, "error", f"missing required key '{key}'", hint, code))
    return problems


def _message(error: Any, parts: tuple[Any, ...]) -> str:
    kind, value, expected = error.validator, error.instance, error.validator_value
    if kind == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {wanted}, received {json_type(value)}"
    if kind == "enum":
        return f"{_short(value)} is not a valid {_subject(parts)}"
    if kind == "const":
        return f"must be {_short(expected)}"
    if kind == "format":
        return f"{_short(value)} is not a valid {expected}"
    if kind == "minLength" and isinstance(value, str):
        return "must not be empty" if expected == 1 else f"is too short ({len(value)} characters, at least {expected})"
    if kind == "maxLength" and isinstance(value, str):
        return f"is too long ({len(value)} characters, at most {expected})"
    if kind == "pattern":
        return f"{_short(value)} does not match the pattern {expected}"
    if kind in ("minItems", "maxItems") and isinstance(value, list):
        bound = "at least" if kind == "minItems" else "at most"
        return f"has {len(value)} items, expected {bound} {expected}"
    if kind == "uniqueItems":
        return "items must be unique"
    return _short_message(error.message)


def _hint(error: Any) -> str | None:
    kind, value, expected = error.validator, error.instance, error.validator_value
    if kind == "enum":
        allowed = [str(item) for item in expected]
        close = _closest(value, allowed) if isinstance(value, str) else None
        return f"did you mean '{close}'?" if close else _listing("allowed values", allowed)
    if kind == "format":
        return _FORMAT_HINTS.get(expected)
    if kind == "uniqueItems" and isinstance(value, list):
        seen: list[Any] = []
        for item in value:
            if item in seen:
                return f"{_short(item)} appears more than once"
            seen.append(item)
    return None


def _closest(value: str, allowed: list[str]) -> str | None:
    """The allowed value a typo most likely meant: similar spelling, or the only one containing it ('chat')."""
    close = difflib.get_close_matches(value, allowed, n=1, cutoff=0.6)
    if close:
        return close[0]
    containing = [item for item in allowed if value.strip() and value.strip().casefold() in item.casefold()]
    return containing[0] if len(containing) == 1 else None


def _subject(parts: tuple[Any, ...]) -> str:
    """What the value is, for messages: the nearest key name ('category'), or 'value'."""
    return next((part for part in reversed(parts) if isinstance(part, str)), "value")


def _listing(label: str, items: Iterable[str]) -> str | None:
    items = list(items)
    if not items:
        return None
    shown = ", ".join(items[:_MAX_LISTED])
    return f"{label}: {shown}" + (f", … ({len(items) - _MAX_LISTED} more)" if len(items) > _MAX_LISTED else "")


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for python_type, name in ((int, "integer"), (float, "number"), (str, "string"), (list, "array"), (dict, "object")):
        if isinstance(value, python_type):
            return name
    return type(value).__name__


def _short(value: Any, limit: int = 60) -> str:
    text = f"'{value}'" if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 2] + "…" + text[-1]


def _short_message(message: str, limit: int = 200) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"
