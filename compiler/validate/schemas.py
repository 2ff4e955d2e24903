"""JSON Schema checking whose messages say what is wrong, where, and what to write instead.

jsonschema's own messages repeat the whole offending value and stop at "is not one of [...]"; here each
error becomes a `Diagnostic` at the value's line:col with a hint: the closest allowed value, the unknown
key's likely spelling, the expected date format.
"""

from __future__ import annotations

import calendar
import decimal
import difflib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate.fastschema import compile_check
from capidx.compiler.validate.keys import EXTENSION_PREFIX, suggest, suggest_also_given, unknown_key
from capidx.compiler.validate.load import SourceFile, file_problem, load_file
from capidx.compiler.validate.schemacost import Budget, TooCostly, counted, json_identity

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
_EXTENSIONS = f"^{EXTENSION_PREFIX}"  # the `patternProperties` of capidx's own schemas that lets extension keys in
# How to write a value of each JSON type, for "expected boolean, received string".
_TYPE_HINTS = {
    "boolean": "write true or false, without quotes",
    "number": "write a number without quotes, such as 0.5",
    "integer": "write a whole number without quotes, such as 30",
    "string": "write text in quotes",
    "array": 'write a list: ["first", "second"], or in YAML one \'- item\' per line',
    "object": 'write keys and values: {"key": "value"}, or in YAML \'key: value\' lines indented below',
    "null": "write null",
}
_MONTHS = "January February March April May June July August September October November December".split()
_DATE_PARTS = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)


@cache
def bundled_schema(name: str) -> dict[str, Any]:
    return json.loads(resources.files("capidx.schema").joinpath(name).read_text("utf-8"))


@cache
def bundled_validator(name: str) -> LazyValidator:
    return LazyValidator(bundled_schema(name), ours=True)


class LazyValidator:
    """A schema's jsonschema validator, made on first use (anything else is delegated to it), with its fast check.

    Only capidx's own schemas (`ours`) have a fast check (`fastschema`); a user's is checked by jsonschema alone.
    Importing jsonschema costs 0.1-0.15 s, more than a no-op `capidx build` needs in all: a valid document is
    proved so by the fast check alone (its formats by `formats`, jsonschema's rules without jsonschema), and
    jsonschema is imported only to describe the errors of a document not proved valid.
    """

    def __init__(
        self, schema: dict[str, Any], registry: Any = None, *, ours: bool = False, path: Path | None = None
    ) -> None:
        self.schema = schema
        self.registry = registry  # of the local schemas its `$ref`s may name (schemarefs); None: the bundled ones
        self.ours = ours
        self.path = path  # a user's schema file, blamed when applying the schema recurses without end
        self.budget = None if ours else Budget()  # a user's schema may ask for unbounded work (schemacost)

    def recurses(self, instance: Any) -> bool:
        """Whether checking `instance` ends in a RecursionError."""
        try:
            for _ in self.iter_errors(instance):
                pass
        except RecursionError:
            return True
        except TooCostly:  # the schema's fault too: said as such by the caller
            raise
        except Exception:  # another failure of the schema: said when a document meets it
            return False
        return False

    @cached_property
    def jsonschema_validator(self) -> Any:
        return make_validator(self.schema, self.registry, self.budget)

    def iter_errors(self, instance: Any) -> Any:
        """The errors of `instance`; TooCostly (schemacost) when finding them takes too much work."""
        validator = self.jsonschema_validator
        if self.budget is not None:
            self.budget.start()
        return validator.iter_errors(instance)

    @cached_property
    def fast_check(self) -> Callable[[Any], bool] | None:
        """The fast check of one of capidx's own schemas (made without jsonschema), or None."""
        return compile_check(self.schema) if self.ours else None

    def certainly_valid(self, instance: Any) -> bool:
        """True when the fast check proves `instance` valid; errors are always left to jsonschema."""
        check = self.fast_check
        try:
            return check is not None and check(instance)
        except Exception:  # e.g. RecursionError on absurd nesting: jsonschema decides, and reports it
            return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.jsonschema_validator, name)


def make_validator(schema: dict[str, Any], registry: Any = None, budget: Budget | None = None) -> Any:
    """A validator for the schema's own draft (2020-12 when it names none), with format checking on, whose
    `$ref`s resolve in `registry` (default: the bundled schemas; else one `check_references` crawled, holding the
    schema) and never over the network; its keyword checks spend from `budget` when one is given."""
    import jsonschema

    from capidx.compiler.validate.schemarefs import offline_registry, root_resolver

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    if budget is not None:
        cls = counted(cls, budget)
    if registry is None:
        return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=offline_registry())
    # `_resolver` is not public, but every jsonschema pyproject.toml allows (4.18 to 4.x) takes it; without it each
    # anchor a document meets crawls the whole schema again (`root_resolver`).
    return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=registry, _resolver=root_resolver(registry, schema))


def load_schema_file(path: Path) -> tuple[LazyValidator | None, list[Diagnostic]]:
    """A validator for a user's schema file; problems with the file itself carry the code `schema-file` (exit 2)."""
    source, problems = load_file(path)
    problems = [replace(problem, code="schema-file") for problem in problems if problem.is_error]
    if source is None or problems:
        return None, problems
    schema = source.data
    if not isinstance(schema, dict):
        return None, [source.diagnostic((), "error", "a JSON Schema must be an object", code="schema-file")]
    import jsonschema

    cls, warnings = _draft(source, jsonschema.Draft202012Validator, "checked as JSON Schema draft 2020-12")
    errors = [problem for problem in warnings if problem.is_error] or _meta_schema_errors(source, cls)
    if errors:
        return None, errors
    from capidx.compiler.validate.schemarefs import check_references

    try:
        registry, errors, referenced = check_references(source, lambda file: _local_file_errors(file, cls))
        risky = (problem for schema_file in (source, *referenced) for problem in _risky_patterns(schema_file))
        errors += dict.fromkeys(risky)  # a file reached by several references is checked, and said, once
    except RecursionError:
        return None, [source.diagnostic((), "error", "the schema is nested too deeply to check", code="schema-file")]
    # jsonschema applies a referenced file naming no draft it knows with the draft of the schema referring to it
    said = list(dict.fromkeys(problem for file in referenced for problem in _draft(file, cls, _REFERRER_DRAFT)[1]))
    errors += [problem for problem in said if problem.is_error]
    if errors:
        return None, errors
    return LazyValidator(schema, registry, path=source.path), warnings + said


_REFERRER_DRAFT = "checked as the draft of the schema referring to it"


def _draft(source: SourceFile, default: Any, fallback: str) -> tuple[Any, list[Diagnostic]]:
    """The validator class of the draft the schema in `source` names by `$schema` (`default` when it names none, or
    one jsonschema does not know: a warning whose hint is `fallback`); an error when `$schema` is no string, which
    jsonschema and referencing cannot read (they fail with an AttributeError)."""
    import jsonschema

    data = source.data if isinstance(source.data, dict) else {}  # a file's `true`: no draft named
    declared = data.get("$schema", "")
    if not isinstance(declared, str):
        message = f"not a valid schema: $schema must be a draft's URI, a string; received {json_type(declared)}"
        hint = 'write it in quotes, such as "https://json-schema.org/draft/2020-12/schema", or leave $schema out'
        return default, [source.diagnostic(("$schema",), "error", message, hint, "schema-file")]
    cls = jsonschema.validators.validator_for(data, default=None)
    if cls is not None or "$schema" not in data:
        return cls or default, []
    return default, [
        source.diagnostic(("$schema",), "warning", f"unknown $schema {declared!r}", fallback, "schema-file")
    ]


def _meta_schema_errors(source: SourceFile, cls: Any) -> list[Diagnostic]:
    """The errors of the schema in `source` against the meta-schema of its draft (`cls`)."""
    # Formats on, as jsonschema's own check_schema does: the meta-schema's `regex` format is what finds
    # a `pattern` that does not compile, here with its position instead of failing later on every document.
    meta = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    return [
        source.diagnostic(
            tuple(error.absolute_path),
            "error",
            f"not a valid schema: {_short_message(error.message)}",
            code="schema-file",
        )
        for error in meta.iter_errors(source.data)
    ]


def _local_file_errors(source: SourceFile, default: Any) -> list[Diagnostic]:
    """What is wrong with a local schema file a schema refers to (`default`: the draft of that schema), said when
    referencing cannot read the file: only then, as a file is used in parts and jsonschema never checks it whole."""
    cls, said = _draft(source, default, "")
    return [problem for problem in said if problem.is_error] or _meta_schema_errors(source, cls)


def _risky_patterns(source: SourceFile) -> list[Diagnostic]:
    """An error for each `pattern` / `patternProperties` regex of a user schema that could backtrack
    catastrophically (regexrisk): jsonschema and fastjsonschema run them with Python's `re`, on every
    string of every document, without a time limit, so one such pattern in a fork's schema would hang
    `capidx validate` in CI. The same structural check refuses such `useWhen` patterns in catalog data."""
    from capidx.compiler.validate.regexrisk import backtracking_risk

    found: list[Diagnostic] = []
    pending: list[tuple[Any, tuple[Any, ...]]] = [(source.data, ())]
    while pending:
        node, parts = pending.pop()
        if isinstance(node, list):
            pending += [(item, (*parts, index)) for index, item in enumerate(node)]
            continue
        if not isinstance(node, dict):
            continue
        # Every object may be used as a schema (`{"$ref": "#/$defs"}` makes a map of names one): its regexes run
        regexes = [(("pattern",), node["pattern"])] if isinstance(node.get("pattern"), str) else []
        if isinstance(node.get("patternProperties"), dict):
            regexes += [(("patternProperties", key), key) for key in node["patternProperties"]]
        for where, pattern in regexes:
            risk = backtracking_risk(pattern)
            if risk is not None:
                what, fix = risk
                message = f"regex {_short(pattern)}: {what}"
                found.append(source.diagnostic((*parts, *where), "error", message, fix, "schema-file"))
        # value keywords too: `$ref` may point into `examples` or `default`, and jsonschema runs what it finds there
        pending += [(value, (*parts, key)) for key, value in node.items()]
    return found


def _shown_pattern(pattern: Any) -> Any:
    """A pattern as a message shows it: without the bundled schemas' `(?!\\n)` before a final `$`, which only keeps
    Python's `re` from letting `$` match before a final line break (JSON Schema's `$` is the string's end)."""
    return pattern.replace("(?!\\n)$", "$") if isinstance(pattern, str) else pattern


def schema_diagnostics(validator: LazyValidator, source: SourceFile, code: str = "schema") -> list[Diagnostic]:
    """Every schema error of the file, deduplicated, as positioned diagnostics."""
    if validator.certainly_valid(source.data):
        return []
    found: dict[Diagnostic, None] = {}
    try:
        errors = list(validator.iter_errors(source.data))
        # A value of the wrong type also fails its enum (`tier: null`): one error, the type's, which says how to
        # write the value.
        mistyped = {tuple(error.absolute_path) for error in errors if error.validator == "type"}
        for error in errors:
            if error.validator == "enum" and tuple(error.absolute_path) in mistyped:
                continue
            for diagnostic in _describe(error, source, code):
                found.setdefault(diagnostic)
    except RecursionError:
        found.setdefault(_recursed(validator, source))
    except TooCostly as exc:  # the schema's fault far more often than the document's: said once (run.py)
        found.setdefault(_too_costly(validator, source, exc))
    except Exception as exc:  # a user schema can fail inside jsonschema in many ways (bad $ref, bad regex)
        message = f"the schema cannot be applied: {type(exc).__name__}: {_short_message(str(exc))}"
        hint = "fix the schema given by --schema or paths.schema (e.g. a bad $ref or pattern)"
        found.setdefault(file_problem(source.path, message, hint, "schema-file"))
    return list(found)


def _too_costly(validator: LazyValidator, source: SourceFile, cause: TooCostly) -> Diagnostic:
    message = f"checking a document takes too much work ({cause}): the schema's alternatives multiply it"
    hint = (
        "anyOf, oneOf or allOf nested in each other try every branch at every level: make the branches exclusive"
        " (a `type` or `required` each) or the nesting shallower"
    )
    return file_problem(validator.path or source.path, message, hint, "schema-file")


_SHALLOW = 8  # levels of a document kept to tell a schema that loops from a document nested too deeply


def _recursed(validator: LazyValidator, source: SourceFile) -> Diagnostic:
    """What to say of a document whose check ended in a RecursionError. When the same document cut to its first
    levels recurses too, the data's depth is not the cause: the schema applies itself to the same value without end
    (`a` refers to `b`, which refers back to `a`), an error of the schema file, the same for every document."""
    try:
        loops = validator.path is not None and validator.recurses(_cut(source.data, _SHALLOW))
    except TooCostly as exc:  # the document cut short takes too long too: the schema is to blame, for that
        return _too_costly(validator, source, exc)
    if loops:
        message = "checking a document does not end: the schema's references loop without going into the data"
        hint = (
            "a schema may refer back to itself only below a keyword that goes into the value, such as properties "
            "or items"
        )
        return file_problem(validator.path, message, hint, "schema-file")
    return file_problem(source.path, "nested too deeply to check", code="parse")


def _cut(value: Any, levels: int) -> Any:
    """`value` with what is nested more than `levels` deep emptied (`{}`, `[]`)."""
    if isinstance(value, dict):
        return {key: _cut(item, levels - 1) for key, item in value.items()} if levels else {}
    if isinstance(value, list):
        return [_cut(item, levels - 1) for item in value] if levels else []
    return value


_HINTED_KEY = 100  # characters of a key the lower-case hint tries its pattern on


def _lower_case(key: Any, pattern: Any) -> str | None:
    """'use lower case: 'yolo mode'' when that is all that keeps a key from its pattern (the alias table's)."""
    if not isinstance(key, str) or not isinstance(pattern, str) or key == key.lower() or len(key) > _HINTED_KEY:
        return None  # a longer key is no alias phrase, and a schema's pattern runs here where jsonschema did not
    try:
        fits = re.search(pattern, key.lower()) is not None
    except re.error:
        return None
    return f"use lower case: {_short(key.lower())}" if fits else None


def _describe(error: Any, source: SourceFile, code: str) -> list[Diagnostic]:
    if error.validator in ("anyOf", "oneOf") and error.context:
        from jsonschema.exceptions import best_match

        return _describe(best_match(error.context), source, code)
    parts = tuple(error.absolute_path)
    if "propertyNames" in error.relative_schema_path:
        key = error.instance
        message = (
            f"key {_short(key)} does not match the pattern {_shown_pattern(error.validator_value)}"
            if error.validator == "pattern"
            else f"key {_short(key)}: {_message(error, parts)}"
        )
        hint = _lower_case(key, error.validator_value) if error.validator == "pattern" else None
        return [source.diagnostic((*parts, key), "error", message, hint, code=code, key=True)]
    if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(error.instance, dict):
        return _unknown_keys(error, parts, source, code)
    if error.validator == "required" and isinstance(error.instance, dict):
        return _missing_keys(error, parts, source, code)
    hint = _hint(error, lambda: source.written(parts, error.instance))
    return [source.diagnostic(parts, "error", _message(error, parts), hint, code)]


def _unknown_keys(error: Any, parts: tuple[Any, ...], source: SourceFile, code: str) -> list[Diagnostic]:
    extra = [key for key in error.instance if not _named(error.schema, key)]
    known = list(error.schema.get("properties", {}))
    missing = [key for key in error.schema.get("required", ()) if key not in error.instance]
    problems = []
    for key in extra:
        meant = suggest_also_given(key, known, error.instance)
        message = unknown_key(key, meant, error.instance)
        if meant in error.instance:
            hint = "keep one of the two"
        elif meant in missing:
            hint: str | None = f"'{meant}' is required"
        elif meant is None:
            hint = _listing("known keys", known)
            if _EXTENSIONS in error.schema.get("patternProperties", {}):
                hint = (hint + "; " if hint else "") + "an extension key starts with 'x-'"
        else:
            hint = None
        problems.append(source.diagnostic((*parts, key), "error", message, hint, code, key=True))
    return problems or [source.diagnostic(parts, "error", _short_message(error.message), None, code)]


def _missing_keys(error: Any, parts: tuple[Any, ...], source: SourceFile, code: str) -> list[Diagnostic]:
    """One error per missing key, at the present key that looks like its misspelling when there is one.

    When the schema also rejects that key as unknown, its unknown-key error already says "did you mean"
    and that the key is required: one error for one typo.
    """
    known = list(error.schema.get("properties", {}))
    strangers = [key for key in error.instance if key not in known]
    closed = error.schema.get("additionalProperties") is False
    problems = []
    for key in (name for name in error.validator_value if name not in error.instance):
        typo = next((stranger for stranger in strangers if suggest(stranger, [key]) == key), None)
        if typo is None:
            problems.append(source.diagnostic(parts, "error", f"missing required key '{key}'", None, code))
        elif not (closed and not _named(error.schema, typo) and suggest(typo, known) == key):
            hint = f"{_short(typo)} is present: did you mean '{key}'?"
            problems.append(
                source.diagnostic((*parts, typo), "error", f"missing required key '{key}'", hint, code, key=True)
            )
    return problems


def _named(schema: dict[str, Any], key: str) -> bool:
    """Whether `properties` or `patternProperties` of `schema` name `key`."""
    if key in schema.get("properties", {}):
        return True
    return any(re.search(pattern, key) for pattern in schema.get("patternProperties", {}))


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
        return f"{_short(value)} does not match the pattern {_shown_pattern(expected)}"
    if kind in ("minItems", "maxItems") and isinstance(value, list):
        bound = "at least" if kind == "minItems" else "at most"
        return f"has {len(value)} items, expected {bound} {expected}"
    if kind == "uniqueItems":
        return "items must be unique"
    return _short_message(error.message)


# Vendors' words for a maturity that the schema names otherwise (docs/data-format.md, "Conventions").
_VENDOR_WORDS = {"preview": "beta", "public preview": "beta"}


def _hint(error: Any, written: Callable[[], str | None] = lambda: None) -> str | None:
    """`written`: the value's text in the file, read only for a number that should have been a string."""
    kind, value, expected = error.validator, error.instance, error.validator_value
    if kind == "enum":
        allowed = [str(item) for item in expected]
        usual = _VENDOR_WORDS.get(value.strip().casefold()) if isinstance(value, str) else None
        if usual in allowed:
            return f"record a vendor's '{value}' as '{usual}' and repeat its word in limitations (docs/data-format.md)"
        close = _closest(value, allowed) if isinstance(value, str) else None
        return f"did you mean '{close}'?" if close else _listing("allowed values", allowed)
    if kind == "type":
        return _type_hint(expected, value, written)
    if kind == "format":
        impossible = _impossible_date(value) if expected in ("date", "date-time") else None
        return impossible or _FORMAT_HINTS.get(expected)
    if kind == "pattern" and isinstance(value, str) and not value.isprintable():  # the pattern alone says little
        return "it holds a line break, a tab or another character that cannot be shown: write it on one line"
    if kind == "uniqueItems" and isinstance(value, list):
        seen: set[Any] = set()  # JSON Schema's equality (`true` is not 1), in linear time: not Python's `in`
        for item in value:
            if (frozen := json_identity(item)) in seen:
                return f"{_short(item)} appears more than once"
            seen.add(frozen)
    return None


def _type_hint(expected: str | list[str], value: Any, written: Callable[[], str | None]) -> str | None:
    """How to write the expected type, naming the value itself where it only needs its quotes changed."""
    wanted = [name for name in ([expected] if isinstance(expected, str) else expected) if name != "null"]
    kind = wanted[0] if wanted else "null"
    if isinstance(value, str) and len(value) <= 40:
        text = value.strip()
        if kind == "boolean" and text.casefold() in ("true", "false"):
            return f"write {text.casefold()}, without quotes"
        number = _number(text)
        whole = isinstance(number, float) and number.is_integer()  # '1e3' is 1000: a whole number
        if kind in ("number", "integer") and (
            json_type(number) in ({kind} | {"integer"}) or (kind, whole) == ("integer", True)
        ):
            if "e" not in text.casefold():
                return f"write {text}, without quotes"
            if (plain := _written_out(text)) is not None:
                return f"write {plain}, without quotes; in YAML an exponent such as {text} is read as text"
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return f'write it in quotes: "{written() or value}"'
    return _TYPE_HINTS.get(kind)


def _written_out(text: str) -> str | None:
    """A number written with an exponent, as its exact digits (5e-7: 0.0000005, 1e30: thirty zeros); None when that
    takes more than 40 characters. The exponent is checked first: 1e-999999999 is 40 characters of text, and writing
    it out would take a gigabyte."""
    try:
        exact = decimal.Decimal(text)
    except decimal.InvalidOperation:
        return None
    if not exact.is_finite() or abs(exact.adjusted()) >= 40:
        return None
    plain = format(exact, "f")
    plain = plain.rstrip("0").rstrip(".") if "." in plain else plain
    return plain if len(plain) <= 40 else None


def _number(text: str) -> Any:
    """The JSON value `text` spells, or None; NaN and Infinity are not JSON (nor numbers the schema takes),
    so quoting them is not what is wrong."""
    try:
        return json.loads(text, parse_constant=_no_constant) if len(text) <= 40 else None
    except ValueError:
        return None


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _impossible_date(value: Any) -> str | None:
    """For a date in the right shape that is not in the calendar, what is wrong with it."""
    match = _DATE_PARTS.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    year, month, day = (int(group) for group in match.groups())
    if year == 0:
        return "there is no year 0000: write the date as YYYY-MM-DD"
    if not 1 <= month <= 12:
        return f"there is no month {month:02d}: write the date as YYYY-MM-DD"
    days = calendar.monthrange(year, month)[1]
    if not 1 <= day <= days:
        return f"that day does not exist: {_MONTHS[month - 1]} {year} has {days} days"
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
