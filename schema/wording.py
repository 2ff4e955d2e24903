"""How a problem of a capidx schema is worded: one wording for `capidx validate` and `build` (the compiler) and
`capidx serve` (the server), which may not import each other.

The server checks capidx.yaml against the same config schema as validate; with its own wording the same
misspelled key read `unknown key 'sumary' (did you mean 'summary'?)` there and `'sumary' is not a known key: did
you mean 'summary'?` in validate. Each side places a `Problem` in its own way (the compiler as a `Diagnostic`,
the server as a line of text); what it says is made here. Standard library only: the errors described are
jsonschema's, but this module needs only their attributes.

- Unknown keys: which known key a misspelled one meant (`suggest`), in the words `unknown_key` gives.
- Files: `shown` names a file as validate's reports name it, relative to the working folder.
- Schema errors: `describe` turns one jsonschema error into the problems it stands for, each with the value's
  place, a message and a hint of what to write instead (the closest allowed value, the unknown key's likely
  spelling, the expected date format). A hint that matches the schema's regexes against the data (whether a key is
  named by `patternProperties`, whether a value fits its pattern in lower case) matches with `search`, which for a
  user's schema is the compiler's, with a time limit; the server describes only capidx's own schemas.
"""

from __future__ import annotations

import calendar
import decimal
import difflib
import json
import os
import re
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from capidx.schema.printable import unlike_command
from capidx.schema.yamldata import editor_position, shown_key, yaml_loader

Parts = tuple[Any, ...]
Written = Callable[[Parts, Any], "str | None"]  # a value's text as the file has it, when known
Search = Callable[[str, str], Any]  # whether a regex matches in a text, as `re.search` says (truthy or not)


@dataclass(frozen=True)
class Problem:
    """One problem of a value: where (`parts`; `key`: at the key itself, not its value), what, and what to do."""

    parts: Parts
    message: str
    hint: str | None = None
    key: bool = False


def shown(path: str | Path, cwd: str | Path | None = None) -> str:
    """`path` as validate's reporters show a file (`Reporter.display_path` is this): relative to the working directory
    (`cwd`, else the process's) when it is an absolute path below it, else as given, so that a path a message names
    reads as the file it is said of. build, inject and serve hold the configured paths as absolute ones, so a file
    that validate named `capidx.yaml` or `agents/x`, they named by its whole path. A name that starts a line of the
    reports must not be read as a workflow command on a GitHub runner: `./::error…` (`printable.unlike_command`)."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return unlike_command(text)
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError:  # the working folder was removed: nothing is below it
            return text
    return unlike_command(str(Path(text).relative_to(cwd))) if Path(text).is_relative_to(cwd) else text


def said(message: str, hint: str | None) -> str:
    """`message (hint)`: how a problem reads on one line, in validate's reports as in serve's errors."""
    return f"{message} ({hint})" if hint else message


def describe(error: Any, written: Written = lambda parts, value: None, search: Search | None = None) -> list[Problem]:
    """The problems one jsonschema error stands for (an unknown-key error names each unknown key), each placed at
    its value or key, in validate's words; the schema's regexes matched with `search` (default `re.search`)."""
    search = search or re.search
    if error.validator in ("anyOf", "oneOf") and error.context:
        from jsonschema.exceptions import best_match

        return describe(best_match(error.context), written, search)
    parts = tuple(error.absolute_path)
    if "propertyNames" in error.relative_schema_path:
        key = error.instance
        message = (
            f"key {short(key)} does not match the pattern {_shown_pattern(error.validator_value)}"
            if error.validator == "pattern"
            else f"key {short(key)}: {_message(error, parts)}"
        )
        hint = _fitting_key(key, error.validator_value, search) if error.validator == "pattern" else None
        return [Problem((*parts, key), message, hint, key=True)]
    if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(error.instance, dict):
        return _unknown_keys(error, parts, search)
    if error.validator == "required" and isinstance(error.instance, dict):
        return _missing_keys(error, parts, search)
    hint = _hint(error, lambda: written(parts, error.instance))
    return [Problem(parts, _message(error, parts), hint)]


def without_shadowed(errors: Iterable[Any]) -> Iterator[Any]:
    """The errors worth saying: a value of the wrong type also fails its enum (`tier: null`), and only the type's
    error is said, which says how to write the value."""
    errors = list(errors)
    mistyped = {tuple(error.absolute_path) for error in errors if error.validator == "type"}
    return (e for e in errors if not (e.validator == "enum" and tuple(e.absolute_path) in mistyped))


# --- keys ------------------------------------------------------------------------------------------------


EXTENSION_PREFIX = "x-"
_MAX_KEY_CHARS = 200  # longer keys are not compared: bounded work on hostile input
_LONG_KEY = 8  # characters from which two edits still make a likely typo (`implemntaton`)


_EXTENSIONS = f"^{EXTENSION_PREFIX}"  # the `patternProperties` of capidx's own schemas that lets extension keys in


def suggest(key: str, known: Iterable[str], *, loose: bool = True, present: Container[str] = ()) -> str | None:
    """The known key `key` most likely meant: the same in another case, one edit away (an insertion, a
    deletion, a substitution or two neighbours swapped), its singular or plural in '-ies' (`capabilities` for the
    budget `capability`, as the catalog's words are plural), or with `loose` and a long key (`_LONG_KEY`), two.
    Nothing looser: `tags` is not `status`, nor `src` `sources`. A key the object already has (`present`) is
    returned only in another case (`unknown_key` then says it is already there), never as a spelling."""
    folded = key.casefold()
    known = [name for name in known if name != key and (name not in present or name.casefold() == folded)]
    if len(key) > _MAX_KEY_CHARS or not known:
        return None
    tests = [
        lambda name: name.casefold() == folded,
        lambda name: one_edit(folded, name.casefold()),
        lambda name: _ies_plural(folded, name.casefold()) or _ies_plural(name.casefold(), folded),
    ]
    if loose and len(key) >= _LONG_KEY:
        tests.append(lambda name: within_edits(folded, name.casefold(), 2))
    for test in tests:
        found = next((name for name in known if test(name)), None)
        if found is not None:
            return found
    return None


def _ies_plural(plural: str, singular: str) -> bool:
    """'capabilities' / 'capability', 'categories' / 'category': three edits apart, one word (a plural in '-s' is
    one edit from its singular already)."""
    return len(singular) > 1 and singular.endswith("y") and plural == singular[:-1] + "ies"


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
    """Whether `a` and `b` differ by exactly one insertion, deletion, substitution or transposition.

    What `within_edits(a, b, 1)` says of two different strings, found by comparing slices after the first place they
    differ rather than by filling the band of an alignment cell by cell: the near-miss check of capability names
    makes this comparison for every pair of names that share an end (`across._ends`), and at 200 characters the
    alignment took half a millisecond each."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    at = _first_difference(a, b)
    if len(a) > len(b):
        return a[at + 1 :] == b[at:]
    if len(a) < len(b):
        return a[at:] == b[at + 1 :]
    swapped = a[at : at + 1] == b[at + 1 : at + 2] and a[at + 1 : at + 2] == b[at : at + 1]
    return a[at + 1 :] == b[at + 1 :] or (swapped and a[at + 2 :] == b[at + 2 :])


def _first_difference(a: str, b: str) -> int:
    """The length of the longest common prefix of `a` and `b` (slices compared by halves: no loop per character)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


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


# --- schema errors ---------------------------------------------------------------------------------------


_FORMAT_HINTS = {
    "date": "write the date as YYYY-MM-DD",
    "date-time": "write an RFC 3339 date-time such as 2026-01-31T09:00:00Z",
    "uri": "write an absolute URI, starting with https:// (or http://)",
    "email": "write an address such as name@example.com",
}
_MAX_LISTED = 25
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
# How JSON writes a boolean; YAML 1.1 reads `yes`, `no`, `on` and `off` (in any of three cases) as booleans too.
_JSON_BOOLEANS = ("true", "false")
_MONTHS = "January February March April May June July August September October November December".split()
_DATE_PARTS = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
# Vendors' words for a maturity that the schema names otherwise (docs/data-format.md, "Conventions").
_VENDOR_WORDS = {"preview": "beta", "public preview": "beta"}
_SHOWN_DATE_TIME = 40  # characters of a date-time a hint repeats (one with a fraction of a second is 26 or so)
_HINTED_KEY = 100  # characters of a key the lower-case hint tries its pattern on


# Unknown keys of one object said one by one; keys past them are counted. Fewer than the schema errors a file says
# (validate/schemas.py, 1,000): at 1,000, one object's keys filled that bound, so that the count of the rest was cut
# off with every other error of the file. And keys of an object compared with the keys it misses, as their possible
# misspellings: an object of 500,000 keys took 40 s to be said, 2 s for each key it misses.
_MAX_SAID_KEYS = 100
_MAX_COMPARED_KEYS = 1_000


def _unknown_keys(error: Any, parts: Parts, search: Search) -> list[Problem]:
    extra = [key for key in error.instance if not _named(error.schema, key, search)]
    unsaid, extra = len(extra) - len(extra[:_MAX_SAID_KEYS]), extra[:_MAX_SAID_KEYS]
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
        problems.append(Problem((*parts, key), message, hint, key=True))
    if unsaid:
        message = f"{unsaid:,} more unknown keys than the first {_MAX_SAID_KEYS:,}, which are said"
        problems.append(Problem(parts, message))
    return problems or [Problem(parts, short_message(error.message))]


def _missing_keys(error: Any, parts: Parts, search: Search) -> list[Problem]:
    """One error per missing key, at the present key that looks like its misspelling when there is one.

    When the schema also rejects that key as unknown, its unknown-key error already says "did you mean"
    and that the key is required: one error for one typo.
    """
    known = list(error.schema.get("properties", {}))
    strangers = [key for key in islice(error.instance, _MAX_COMPARED_KEYS) if key not in known]
    closed = error.schema.get("additionalProperties") is False
    problems = []
    required = _listing("required here", [name for name in error.validator_value if isinstance(name, str)])
    for key in (name for name in error.validator_value if name not in error.instance):
        typo = next((stranger for stranger in strangers if suggest(stranger, [key]) == key), None)
        if typo is None:  # what else the object needs is said with it: one run finds every missing key
            problems.append(Problem(parts, f"missing required key '{key}'", required))
        elif not (closed and not _named(error.schema, typo, search) and suggest(typo, known) == key):
            hint = f"{short(typo)} is present: did you mean '{key}'?"
            problems.append(Problem((*parts, typo), f"missing required key '{key}'", hint, key=True))
    return problems


def _shown_pattern(pattern: Any) -> Any:
    """A pattern as a message shows it: without the bundled schemas' `(?!\\n)` before a final `$`, which only keeps
    Python's `re` from letting `$` match before a final line break (JSON Schema's `$` is the string's end)."""
    return pattern.replace("(?!\\n)$", "$") if isinstance(pattern, str) else pattern


def _fitting_key(key: Any, pattern: Any, search: Search) -> str | None:
    """'use lower case: 'yolo mode'' when that is all that keeps a key from its pattern (the alias table's); else
    'write 'hooks' instead' when the key lower-cased and without its punctuation fits ('Hooks!', '@workspace')."""
    if not isinstance(key, str) or not isinstance(pattern, str) or len(key) > _HINTED_KEY:
        return None  # a longer key is no alias phrase, and a schema's pattern runs here where jsonschema did not
    plain = " ".join(_PUNCTUATION.sub(" ", key.lower()).split())
    try:
        if key != key.lower() and search(pattern, key.lower()):
            return f"use lower case: {short(key.lower())}"
        fits = plain not in ("", key) and bool(search(pattern, plain))
    except re.error:
        return None
    return f"write {short(plain)} instead" if fits else None


# What `_fitting_key` takes out of a key: anything but letters, digits and the marks alias phrases keep ('c++', 'c#',
# 'ci/cd', 'node.js', 'auto-approve').
_PUNCTUATION = re.compile(r"[^\w .+#/-]+")


def _named(schema: dict[str, Any], key: str, search: Search) -> bool:
    """Whether `properties` or `patternProperties` of `schema` name `key`."""
    if key in schema.get("properties", {}):
        return True
    return any(search(pattern, key) for pattern in schema.get("patternProperties", {}))


def _message(error: Any, parts: tuple[Any, ...]) -> str:
    kind, value, expected = error.validator, error.instance, error.validator_value
    if kind == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {wanted}, received {json_type(value)}"
    if kind == "enum":
        return f"{short(value)} is not a valid {_subject(parts)}"
    if kind == "const":
        return f"must be {short(expected)}"
    if kind == "format":
        return f"{short(value)} is not a valid {expected}"
    if kind == "minLength" and isinstance(value, str):
        return "must not be empty" if expected == 1 else f"is too short ({len(value)} characters, at least {expected})"
    if kind == "maxLength" and isinstance(value, str):
        return f"is too long ({len(value)} characters, at most {expected})"
    if kind == "pattern":
        return f"{short(value)} does not match the pattern {_shown_pattern(expected)}"
    if kind in ("minItems", "maxItems") and isinstance(value, list):
        bound = "at least" if kind == "minItems" else "at most"
        return f"has {len(value)} items, expected {bound} {expected}"
    if kind == "uniqueItems":
        return "items must be unique"
    return short_message(error.message)


def _hint(error: Any, written: Callable[[], str | None] = lambda: None) -> str | None:
    """`written`: the value's text in the file, read only for a number or a boolean that should have been a string."""
    kind, value, expected = error.validator, error.instance, error.validator_value
    if kind == "enum":
        allowed = [str(item) for item in expected]
        # 'instructions: off', refused by the enum: no `in` test, which takes false for an enum's 0
        if yaml_boolean := _yaml_boolean(value, written):
            return f"{yaml_boolean}; {_listing('allowed values', allowed)}"
        usual = _VENDOR_WORDS.get(value.strip().casefold()) if isinstance(value, str) else None
        if usual in allowed:
            return f"record a vendor's '{value}' as '{usual}' and repeat its word in limitations (docs/data-format.md)"
        close = _closest(value, allowed) if isinstance(value, str) else None
        return f"did you mean '{close}'?" if close else _listing("allowed values", allowed)
    if kind == "type":
        return _type_hint(expected, value, written)
    if kind == "format":
        impossible = _impossible_date(value) if expected in ("date", "date-time") else None
        return (
            impossible
            or _no_offset(value, expected)
            or _no_scheme(value, expected)
            or _unencoded(value, expected)
            or _FORMAT_HINTS.get(expected)
        )
    if kind == "pattern" and isinstance(value, str) and not value.isprintable():  # the pattern alone says little
        return "it holds a line break, a tab or another character that cannot be shown: write it on one line"
    if kind == "uniqueItems" and isinstance(value, list):
        seen: set[Any] = set()  # JSON Schema's equality (`true` is not 1), in linear time: not Python's `in`
        for item in value:
            if (frozen := json_identity(item)) in seen:
                return f"{short(item)} appears more than once"
            seen.add(frozen)
    return None


# A number written with a thousands separator: a first group of one to three digits, then groups of three.
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:[,_]\d{3})+(?:\.\d+)?")


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
        grouped = text.replace(",", "").replace("_", "")  # '1,000' (YAML reads '1_000' as a number already)
        # digits in threes after the first group: '1,5' and '1,2,3' are no thousands ('write 15' read a decimal comma)
        in_threes = _THOUSANDS.fullmatch(text) is not None
        if kind in ("number", "integer") and in_threes and json_type(_number(grouped)) in {kind, "integer"}:
            return f"write {grouped}, without quotes or a thousands separator"
    if kind == "string" and (yaml_boolean := _yaml_boolean(value, written)):
        return f'{yaml_boolean}: write "{written()}" in quotes'
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return f'write it in quotes: "{written() or value}"'
    return _TYPE_HINTS.get(kind)


def _yaml_boolean(value: Any, written: Callable[[], str | None]) -> str | None:
    """How YAML read a boolean written as YAML 1.1's `yes`, `no`, `on` or `off` ('off' is read as false)."""
    if isinstance(value, bool) and (text := written()) and text.casefold() not in _JSON_BOOLEANS:
        return f"'{text}' is read as {json.dumps(value)} in YAML"
    return None


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


def _no_offset(value: Any, expected: str) -> str | None:
    """For a date-time that is one but for its offset from UTC (`2026-01-15T09:00:00`, which RFC 3339 does not allow:
    without it the moment is not known), how to add it."""
    if expected != "date-time" or not isinstance(value, str) or len(value) > _SHOWN_DATE_TIME:
        return None
    from rfc3339_validator import validate_rfc3339  # what the schema check applies (`validate.formats`)

    if not validate_rfc3339(value.upper() + "Z"):
        return None
    return f"the offset from UTC is missing: write {value}Z for UTC, or an offset such as {value}+02:00"


# An address written without its scheme ('docs.vendor.dev/cli/hooks'): a host of dotted labels ending in a top-level
# domain of letters, then a path. Not a file name ('README.md', 'cli.md#hooks') nor a version ('1.5', 'v1.2.3').
_HOST_AND_PATH = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.([A-Za-z]{2,})(?:[/?#]\S*)?", re.ASCII)
_FILE_SUFFIXES = frozenset("md markdown html htm json yaml yml txt rst toml xml pdf py js ts".split())
_SHOWN_ADDRESS = 200  # characters of an address a hint repeats (a single-line field's length)


def _no_scheme(value: Any, expected: str) -> str | None:
    """For an address that is one but for its scheme, that address with it: the generic hint's example domain would
    be copied, and is itself a placeholder validate warns about."""
    if expected != "uri" or not isinstance(value, str) or len(value) > _SHOWN_ADDRESS:
        return None
    found = _HOST_AND_PATH.fullmatch(value)
    if found is None or found.group(1).lower() in _FILE_SUFFIXES:
        return None
    return f"the scheme is missing: write https://{value}"


def _unencoded(value: Any, expected: str) -> str | None:
    """For an address that has its scheme but characters a URI cannot hold as they are (a space, a quote, '<'), which
    ones: 'write an absolute URI, starting with https://' sent its writer looking at the start of it."""
    if expected != "uri" or not isinstance(value, str):
        return None
    if value != value.strip() and value.strip().lower().startswith(("https://", "http://")):
        return "take out the space at its start or end"
    if not value.lower().startswith(("https://", "http://")):
        return None
    found = sorted({char for char in value[: _SHOWN_ADDRESS * 4] if char in _NOT_IN_URIS or not char.isprintable()})
    if not found:
        return None
    shown = ", ".join("a space" if char == " " else repr(char) for char in found)
    return f"percent-encode what a URI cannot hold as it is: {shown} (a space is %20)"


# Characters RFC 3986 never allows as they are (ASCII only: an address in another script is an IRI, left alone).
_NOT_IN_URIS = frozenset(' "<>\\^`{|}')


def _closest(value: str, allowed: list[str]) -> str | None:
    """The allowed value a typo most likely meant: similar spelling, or the only one containing it ('chat')."""
    if close := close_match(value, allowed):
        return close
    if len(allowed) > _CONTAINED_IN:  # each test reads the whole value: a schema's enum of thousands, a long value
        return None
    containing = [item for item in allowed if value.strip() and value.strip().casefold() in item.casefold()]
    return containing[0] if len(containing) == 1 else None


# The work of one `close_match`, in characters: each candidate looked at costs its length, each compared letter by
# letter (`SequenceMatcher.ratio`) the product of both lengths, which is its worst case. A schema's `category` enum
# of 5,000 values of 60 letters took 3.8 s per value it refused (77 s for 20; its 1,000 errors an hour), and a
# supersededBy naming no capability was compared with every name of the catalog (2,000 records: 78 s). The bundled
# schema's 21 categories cost a few thousand.
CLOSE_MATCH_WORK = 50_000
_CUTOFF = 0.6  # get_close_matches' default
_CONTAINED_IN = 1_000  # allowed values the "only one containing it" test reads at most


def close_match(word: str, candidates: Iterable[str], budget: int = CLOSE_MATCH_WORK) -> str | None:
    """`difflib.get_close_matches(word, candidates, n=1)[0]` (None when it finds none) within `budget`
    (`CLOSE_MATCH_WORK`): the candidates past it are not looked at, so a long list may go without its suggestion.
    A word longer than the budget is compared with nothing (no candidate's ratio fits in it), so it is not indexed
    either: `set_seq2` lists every position of every character, some 40 bytes each, and a template's 20-million
    character key (`catalog['a' * 20000000]`) took 2 s and 800 MB for no suggestion."""
    if len(word) > budget:
        return None
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    best: tuple[float, str] | None = None
    work = 0
    for candidate in candidates:
        work += len(candidate) + 1
        if work > budget:
            break
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() < _CUTOFF or matcher.quick_ratio() < _CUTOFF:
            continue
        work += len(candidate) * len(word)
        if work > budget:
            break
        if (score := matcher.ratio()) >= _CUTOFF and (best is None or (score, candidate) > best):
            best = (score, candidate)
    return best[1] if best else None


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


def short(value: Any, limit: int = 60) -> str:
    text = f"'{value}'" if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 2] + "…" + text[-1]


def short_message(message: str, limit: int = 200) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"


def json_identity(value: Any) -> Any:
    """A hashable stand-in for a JSON value, equal where JSON Schema counts values equal: 1 and 1.0 are, `true` and 1
    are not, an object's keys have no order. (jsonschema's own search sorts the items and compares neighbours, which
    `[[1], [true], [1]]` escapes: this one follows the specification.)"""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list | tuple):
        return ("array", tuple(map(json_identity, value)))
    if isinstance(value, dict):
        return ("object", frozenset((key, json_identity(item)) for key, item in value.items()))
    return ("number", value)  # and null


# --- the file itself: its encoding, its YAML, its top level ---------------------------------------------------

UTF8_HINT = "save the file as UTF-8"  # the hint of a file that is not UTF-8 (the message says the byte and offset)
# UTF-16 (little and big endian; UTF-32's little-endian mark begins with UTF-16's).
_WIDE_BYTE_ORDER_MARKS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


def not_utf8(raw: bytes, error: UnicodeDecodeError) -> tuple[int, int, str]:
    """Line, column (in characters) and message of bytes that are not UTF-8: the byte and its offset, or, for a file
    that starts with UTF-16's or UTF-32's byte order mark (a Windows editor's "Unicode"), that it is one."""
    at = error.start
    line = raw.count(b"\n", 0, at) + 1
    column = len(raw[raw.rfind(b"\n", 0, at) + 1 : at].decode("utf-8", "replace")) + 1
    if raw.startswith(_WIDE_BYTE_ORDER_MARKS):
        return line, column, "not valid UTF-8: the file is UTF-16 or UTF-32 (it starts with their byte order mark)"
    return line, column, f"not valid UTF-8: byte 0x{raw[at]:02x} at offset {at}"


NOT_SETTINGS = "capidx.yaml must be a mapping of settings"  # a capidx.yaml whose top level is a list or a scalar
# A capidx.yaml found in the working folder that is a link out of it (`realpath.leads_out`): validate, build and
# serve refuse it in one wording, with the target and the folder.
LINKED_OUT = "refused: a symbolic link to {}, outside the project folder {}"
LINKED_OUT_HINT = "make capidx.yaml a file of the project, or name the file with --config"


# A line indented as no key above it (less than its mapping's keys, or as a list's '- ' without one).
OUT_OF_LINE = (
    "this line is indented as no key above it: indent it as the keys it belongs with, a list item's after '- '"
)
# The same errors where the line's indentation is not the mistake: text after a value that ended on that line
# (`description: "Runs commands" at events`), or a list item written among a mapping's keys.
TEXT_AFTER_VALUE = "text after a value that ended before it (a closing quote or bracket): quote the whole value"
LIST_AMONG_KEYS = "a list item among keys: a list goes under a key of its own, its '- ' items below it"


def yaml_problem(error: Any, text: str) -> tuple[tuple[int | None, int | None], str, str | None]:
    """PyYAML's `MarkedYAMLError` (by its attributes) as ((line, column), message, hint), where the mistake most
    likely is: a quote left open is placed where it opens (the parser notices at the end of the file, or of the
    document at a `---`), a bracket's problem says where it opens; a tab and a ': ' inside a plain value are said,
    and a line indented under a plain value, which is read as its rest. Shared so that serve's check of capidx.yaml
    says a syntax error as validate does, at the same place."""
    mark = error.problem_mark or error.context_mark
    problem = error.problem or ""
    hint = None
    opened, context = error.context_mark, error.context or ""
    unclosed = "end of stream" in problem or "unexpected document" in problem  # libyaml: indicator; PyYAML: separator
    if opened is not None and context.startswith("while scanning a quoted scalar") and unclosed:
        mark, hint = opened, "it is never closed: is a closing quote missing?"
    elif opened is not None and context.startswith("while parsing a flow"):
        if context.startswith("while parsing a flow node"):  # its mark is where the node was due, not a bracket
            opened = _open_bracket(text) or opened
        where = "line {}, column {}".format(*_placed(opened, text))
        hint = f"is the bracket opened at {where} closed, and a comma between its items?"
    elif mark is not None and text[mark.index : mark.index + 1] == "\t":  # the mark's index counts characters
        hint = "a tab: YAML indents with spaces only"  # the parser's message does not say which character it was
    elif problem.startswith("mapping values are not allowed") and mark is not None:
        hint = _colon_hint(text, mark.index)
    elif problem in ("did not find expected key", "did not find expected '-' indicator") and mark is not None:
        hint = _out_of_line_hint(text, mark.index, problem)
    at: tuple[int | None, int | None] = _placed(mark, text) if mark else (None, None)
    # PyYAML reads context first: "while parsing a block mapping, did not find expected key".
    return at, "invalid YAML: " + ", ".join(part for part in (error.context, problem) if part), hint


def _out_of_line_hint(text: str, index: int, problem: str) -> str:
    """What a token where a key (or a list's '- ') was due most likely is: text after a value ended on its line, a
    list item among keys, else a line indented as no key above it."""
    if not 0 <= index < len(text):
        return OUT_OF_LINE
    if text[text.rfind("\n", 0, index) + 1 : index].strip():  # something before it on its line
        return TEXT_AFTER_VALUE
    if problem == "did not find expected key" and text[index] == "-":
        return LIST_AMONG_KEYS
    return OUT_OF_LINE


def _placed(mark: Any, text: str) -> tuple[int, int]:
    """A mark's line and column as an editor shows them: PyYAML counts U+2028, U+2029, U+0085 and a lone CR as line
    breaks too, and placed an error after one a line too far (JSON's positions count `\n` only)."""
    if 0 <= mark.index <= len(text):
        return editor_position(text, mark.index)
    return mark.line + 1, mark.column + 1


def _open_bracket(text: str) -> Any | None:
    """Where the innermost `[` or `{` still open when the parser fails opens (its mark), or None.

    For a flow node it did not find ("did not find expected node content", `{"agent": ` at the end of the file),
    libyaml's context mark is where the node was due, often the line after the bracket: the events before the error
    say which flow collections are open. Read once more only on that error, as validate and serve read the file."""
    import yaml
    from yaml.events import CollectionEndEvent, CollectionStartEvent

    loader = yaml_loader()(text)
    opened: list[Any] = []  # per open collection: its start event when written in brackets, else None
    try:
        while (event := loader.get_event()) is not None:
            if isinstance(event, CollectionStartEvent):
                opened.append(event if event.flow_style else None)
            elif isinstance(event, CollectionEndEvent) and opened:
                opened.pop()
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    return opened[-1].start_mark if opened and opened[-1] is not None else None


def _colon_hint(text: str, index: int) -> str:
    """What a ':' at `index` no mapping may have usually is. After a key's ': ' on its own line, a second ': ' in that
    key's plain value. Else the line is read as the rest of a plain value above it: a key indented deeper than the
    keys beside it (`name: x` then `  description: y`), or a value continued on an indented line holding ': '; told to
    quote the value, the first would still be wrong."""
    start = max(text.rfind("\n", 0, index), text.rfind("\r", 0, index)) + 1
    if re.search(r":[ \t]", text[start:index]):
        return "a ': ' inside a value: put the whole value in quotes"
    return "this line is read as the rest of the value above it: indent it as the keys beside it, or quote that value"
