"""Read a JSON or YAML data file defensively and keep a map of where each value is.

Every failure becomes a `Diagnostic` naming the file (and line:col where there is one) and what to do:
a missing file, a directory, a symbolic-link loop, a file over the size limit (refused before it is read),
bytes that are not UTF-8, an empty file, a syntax error. Nothing here raises for bad input.

Problems that stop a file from being read at all get the code `io` (exit 2); problems with what was read
get `parse` (exit 1).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from capidx.compiler.diagnostics import Diagnostic, Severity
from capidx.compiler.files import read_at_most
from capidx.compiler.validate.positions import JsonPositions, first_too_deep, scan_json
from capidx.schema.homepath import unreadable
from capidx.schema.pathkind import FILE_PERMISSION
from capidx.schema.wording import UTF8_HINT, not_utf8, yaml_problem
from capidx.schema.yamldata import (
    MAX_FILE_BYTES,
    MAX_NESTING,
    Duplicate,
    Parts,
    Position,
    SourceMap,
    Unusable,
    YamlShapeError,
    YamlTooDeep,
    editor_lines,
    json_path,
    parse_yaml,
    shown_key,
    too_deep,
    written_scalar,
    yaml_scalar,
)

YAML_SUFFIXES = frozenset({".yaml", ".yml"})
# Python reads no JSON integer of more digits (`sys.get_int_max_str_digits`).
PYTHON_INT_DIGITS = 4300
# JSON strings (skipped) and the runs of digits between them: one pass, whatever the file holds.
_STRING_OR_NUMBER = re.compile(r'"(?:[^"\\\n]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')

# Hints for the json module's terse messages (its wording has been stable since Python 3.5).
_JSON_HINTS = {
    "Expecting property name enclosed in double quotes": "a trailing comma, or a key in single quotes?",
    "Expecting value": "a trailing comma, a missing value, or a comment? JSON allows none of these",
    "Extra data": "a JSON file holds exactly one value; is a comma or bracket missing before this?",
    "Invalid control character at": "write line breaks and tabs inside strings as \\n and \\t",
}
# Messages that end on the position the parser appends (`... at: line 5 column 82`): said in full.
_JSON_MESSAGES = {
    "Invalid control character at": "a line break, tab or other control character inside a string",
    "Unterminated string starting at": "a string that is never closed",
}
_JSON_LITERALS = ("true", "false", "null")
_TRAILING_COMMA = ("invalid JSON: a trailing comma", "remove the comma after the last item: JSON allows none")


def _json_problem(exc: json.JSONDecodeError, text: str) -> tuple[int, int, str, str | None]:
    """Where and what, with what usually causes it: a file that ends too soon, a comment, single quotes, a trailing
    comma (placed at the comma, not at the bracket after it), a comma missing at the end of the line before (the
    parser notices only at the next value), a string left open (a word follows it), or one of `_JSON_HINTS`."""
    line, col, ahead = exc.lineno, exc.colno, text[exc.pos :]
    said = next((words for prefix, words in _JSON_MESSAGES.items() if exc.msg.startswith(prefix)), exc.msg)
    if exc.msg.startswith("Unterminated string"):  # no closing quote up to the end
        return line, col, f"invalid JSON: {said}", 'was the file cut short, or is a " missing?'
    if not ahead.strip():
        return line, col, "invalid JSON: the file ends inside a value", "was it cut short? a } or ] is missing"
    if ahead.startswith(("//", "/*")):
        return line, col, "invalid JSON: a comment", "JSON allows no comments: remove it"
    if ahead.startswith("'"):
        return line, col, f"invalid JSON: {said}", "strings and keys take double quotes in JSON, not single ones"
    before = text[: exc.pos].rstrip()
    if exc.msg.startswith("Illegal trailing comma"):  # Python 3.13 on: said so, and placed at the comma already
        return line, col, *_TRAILING_COMMA
    trailing = exc.msg.startswith(("Expecting value", "Expecting property name")) and before.endswith(",")
    if trailing and ahead[:1] in "]}":  # up to Python 3.12: "Expecting ..." at the bracket after the comma
        line, col = before.count("\n") + 1, len(before) - 1 - before.rfind("\n")
        return line, col, *_TRAILING_COMMA
    if exc.msg.startswith("Expecting ',' delimiter"):
        if "\n" in text[len(before) : exc.pos]:
            hint = f"is a comma missing at the end of line {before.count(chr(10)) + 1}?"
        elif text[exc.pos - 1 : exc.pos] == '"' and ahead[:1].isalpha() and not ahead.startswith(_JSON_LITERALS):
            hint = "a word right after a string: is a string before it not closed?"
        else:
            hint = "two values in a row: a comma is missing between them"
        return line, col, f"invalid JSON: {said}", hint
    if exc.msg.startswith("Invalid control character") and ahead.startswith(("\n", "\r")):
        return line, col, f"invalid JSON: {said}", 'a string runs to the end of the line: is its closing " missing?'
    hint = next((hint for prefix, hint in _JSON_HINTS.items() if exc.msg.startswith(prefix)), None)
    return line, col, f"invalid JSON: {said}", hint


class SourceFile:
    """A parsed data file: its bytes, text, data, and (computed on first use for JSON) its source map."""

    def __init__(
        self,
        path: Path,
        raw: bytes,
        text: str,
        data: Any,
        source_map: SourceMap | None = None,
        nulled: Mapping[str, Position | None] | None = None,
    ) -> None:
        self.path = path
        self.raw = raw
        self.text = text
        self.data = data
        # The JSON paths where the data holds null for a YAML value JSON cannot hold (`load_file(partial=True)`), and
        # where a problem with the value there is shown: said where it is written, nothing else is said of the null
        # (what is said of its key, written as it is, stands).
        self.nulled: Mapping[str, Position | None] = nulled or {}
        self._map: SourceMap | JsonPositions | None = source_map
        self._yaml = path.suffix.lower() in YAML_SUFFIXES
        self._lines: list[str] | None = None
        # How many warnings of one rule `validate` says of a file (`run.MAX_SAID_WARNINGS`), set by it; None: no bound.
        self.warning_cap: int | None = None
        self.unmade = 0  # warnings counted by `past_cap`, never made
        self._made: dict[str, int] = {}
        self._capped_at: dict[str, Position] = {}  # in a file writing an alias: the last place of a rule's first made

    @property
    def source_map(self) -> SourceMap | JsonPositions:
        if self._map is None:  # JSON positions are only needed when there is something to report
            self._map = JsonPositions(self.text)
        return self._map

    def written(self, parts: Parts, value: Any) -> str | None:
        """A scalar's text as the file has it (`0.190`, not the 0.19 it parses to), when the text there reads back
        as `value` (not an anchor or a tag written before it); else None."""
        if self._lines is None:  # split once: lines as the source map counts them (JSON: "\n"; YAML: as editors)
            self._lines = editor_lines(self.text) if self._yaml else self.text.split("\n")
        read = yaml_scalar if self._yaml else json.loads
        return written_scalar(self._lines, self.source_map.locate(tuple(parts)), value, read)

    def is_nulled(self, parts: Parts) -> bool:
        """Whether the value at `parts` is a null put for a YAML value JSON cannot hold: no rule reads it as null."""
        return bool(self.nulled) and json_path(tuple(parts)) in self.nulled

    def past_cap(self, rule: str, parts: Parts) -> bool:
        """Whether `rule`'s next warning of this file, at `parts`, is only counted (`unmade`), not made. A rule asks
        before each warning when it makes its warnings in reading order: past `warning_cap` of them, each follows that
        many of the file's warnings, so it is never said (`run._within_warning_cap`), only counted. Making it cost its
        place in the file, its message and its sort: a 9 MB document of one alias written 500,000 times took 19 s and
        460 MB to make 500,000 `alias-repeated` warnings, of which 1,000 are said. In a YAML file that writes an
        alias, the values it stands for are all placed where it stands, sorted there by their messages, not in the
        rule's order: one placed no later than the last of the rule's first `warning_cap` is still made (their places
        only are found: the `warning_cap`th is not always the last, as a value under a key written twice is placed
        through an alias of the value not kept), and one placed after it counted, so an alias written in each of many
        records does not make them all (900 records each writing a list of 900 phrases through one alias: 810,000
        warnings, 40 s and 1.4 GB)."""
        made = self._made[rule] = self._made.get(rule, 0) + 1
        if self.warning_cap is None:
            return False
        if not (isinstance(self._map, SourceMap) and self._map.aliased):
            if made <= self.warning_cap:
                return False
        else:
            at = self._map.place(tuple(parts))[0] or (0, 0)  # no place: said first (`run._reading_order`)
            if made <= self.warning_cap:
                self._capped_at[rule] = max(at, self._capped_at.get(rule, at))
                return False
            if at <= self._capped_at[rule]:
                return False
        self.unmade += 1
        return True

    def diagnostic(
        self,
        parts: Parts,
        severity: Severity,
        message: str,
        hint: str | None = None,
        code: str = "schema",
        *,
        key: bool = False,
    ) -> Diagnostic:
        """A problem at the value (or, with `key`, the key) at `parts`: where the JSON path says, which for a YAML
        value used through an alias is where the alias stands, the message adding where the value is written."""
        at, written = self.source_map.place(tuple(parts), key=key)
        line, col = at or (None, None)
        return Diagnostic(str(self.path), line, col, json_path(tuple(parts)), severity, message + written, hint, code)


def file_problem(path: Path, message: str, hint: str | None = None, code: str = "io") -> Diagnostic:
    return Diagnostic(str(path), None, None, "", "error", message, hint, code)


def load_file(
    path: Path, *, allow_empty: bool = False, partial: bool = False
) -> tuple[SourceFile | None, list[Diagnostic]]:
    """Read, decode and parse one data file; `(None, problems)` when it cannot be used at all.

    An empty file is a problem unless `allow_empty` (an empty capidx.yaml means "all defaults"). YAML values JSON
    cannot hold are each a problem; with `partial` the file is still returned, null in their place
    (`SourceFile.nulled`), so that validate checks the rest of it in the same run: its every other caller uses the
    data, and gets none.
    """
    raw, problem = read_limited(path)
    if problem is not None:
        return None, [problem]
    assert raw is not None
    text, problem = _decode(path, raw)
    if problem is not None:
        return None, [problem]
    if not text.strip() and allow_empty:
        return SourceFile(path, raw, text, None, SourceMap()), []
    if not text.strip():
        what = "mapping" if path.suffix.lower() in YAML_SUFFIXES else "JSON object"
        return None, [Diagnostic(str(path), 1, 1, "", "error", "file is empty", f"expected a {what}", "parse")]
    source, problems = _parse_yaml(path, raw, text, partial) if _is_yaml(path, text) else _parse_json(path, raw, text)
    if source is not None and (deep := too_deep(source.data)) is not None:
        return None, [source.diagnostic(deep, "error", *TOO_DEEP, "parse")]
    return source, problems


# What a value nested past `MAX_NESTING` is told, whichever reader stops it: the same words at the same place.
TOO_DEEP = (f"nested more than {MAX_NESTING} levels deep", "no capidx data nests this deep")


def read_limited(path: Path) -> tuple[bytes | None, Diagnostic | None]:
    """The file's bytes, or why they cannot be had. Checks the size before reading anything."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return None, _stat_problem(path, exc)
    if stat.S_ISDIR(info.st_mode):
        return None, file_problem(path, "is a directory, expected a file")
    if not stat.S_ISREG(info.st_mode):
        return None, file_problem(path, "is not a regular file (a device, socket or pipe?)")
    if info.st_size > MAX_FILE_BYTES:
        return None, _too_large(path, info.st_size, MAX_FILE_BYTES)
    try:
        raw = read_at_most(path, MAX_FILE_BYTES)  # the file may have grown since stat
    except PermissionError:
        return None, file_problem(path, "permission denied", FILE_PERMISSION)
    except OSError as exc:
        return None, file_problem(path, f"cannot read: {exc.strerror or exc}")
    if raw is None:
        return None, _too_large(path, MAX_FILE_BYTES + 1, MAX_FILE_BYTES)
    return raw, None


def _stat_problem(path: Path, exc: OSError) -> Diagnostic:
    return file_problem(path, *unreadable(path, exc))


def _too_large(path: Path, size: int, limit: int) -> Diagnostic:
    return file_problem(
        path,
        f"file is {size / 1024 / 1024:.1f} MB, over the {limit // 1024 // 1024} MB limit for data files",
        "a capability document or alias table takes kilobytes (and capidx.yaml less): is it the file meant?",
    )


def _decode(path: Path, raw: bytes) -> tuple[str, Diagnostic | None]:
    try:
        return raw.decode("utf-8-sig"), None  # a leading BOM is tolerated and not counted as a column
    except UnicodeDecodeError as exc:
        line, col, message = not_utf8(raw, exc)
        return "", Diagnostic(str(path), line, col, "", "error", message, UTF8_HINT, "parse")


def _is_yaml(path: Path, text: str) -> bool:
    suffix = path.suffix.lower()
    if suffix in YAML_SUFFIXES:
        return True
    return suffix != ".json" and not text.lstrip().startswith(("{", "["))


def _parse_json(path: Path, raw: bytes, text: str) -> tuple[SourceFile | None, list[Diagnostic]]:
    suspicious: list[bool] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        mapping = dict(pairs)
        if len(mapping) != len(pairs):
            suspicious.append(True)
        return mapping

    def constant_hook(name: str) -> float:
        suspicious.append(True)
        return float(name)

    overflowed: list[str] = []

    def float_hook(literal: str) -> float:
        value = float(literal)
        if value in (math.inf, -math.inf):  # 1e999: every JSON reader takes it for infinity, which JSON cannot hold
            overflowed.append(literal)
        return value

    try:
        data = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=constant_hook, parse_float=float_hook)
    except json.JSONDecodeError as exc:
        line, col, message, hint = _json_problem(exc, text)
        return None, [Diagnostic(str(path), line, col, "", "error", message, hint, "parse")]
    except RecursionError:
        return None, [_nested_too_deep(path, text)]
    except ValueError:  # an integer of more digits than Python reads
        line, col = _first_number(text, _too_long)
        message = f"invalid JSON: a number of over {PYTHON_INT_DIGITS:,} digits"
        return None, [Diagnostic(str(path), line, col, "", "error", message, "no capability value is so long", "parse")]
    if overflowed:
        line, col = _first_number(text, overflowed[0].__eq__)
        message = f"invalid JSON: {overflowed[0][:40]} is beyond a number's range (read as infinity)"
        return None, [
            Diagnostic(str(path), line, col, "", "error", message, "write a number of at most about 1.8e308", "parse")
        ]
    if not suspicious:
        return SourceFile(path, raw, text, data), []
    # Duplicate keys or NaN-like literals: the full scan finds and places them.
    source = SourceFile(path, raw, text, data, scan_json(text))
    return source, _json_oddities(source)


def _nested_too_deep(path: Path, text: str) -> Diagnostic:
    """The json module's parser recursed too deep (near 1,000 levels) and says nowhere where: the problem is put
    where the text first passes capidx's own limit, as it is for a file the parser reads (`too_deep`)."""
    found = first_too_deep(text, MAX_NESTING)
    if found is None:  # the interpreter's stack was short already: nothing in the text to point at
        return Diagnostic(str(path), None, None, "", "error", "invalid JSON: nested too deeply", None, "parse")
    parts, (line, col) = found
    return Diagnostic(str(path), line, col, json_path(parts), "error", *TOO_DEEP, "parse")


def _first_number(text: str, wanted: Callable[[str], bool]) -> tuple[int | None, int | None]:
    """Where the first number, written as `wanted` takes it, starts (line, column), outside strings."""
    for found in _STRING_OR_NUMBER.finditer(text):
        token = found.group()
        if not token.startswith('"') and wanted(token):
            start = found.start()
            return text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)
    return None, None


def _too_long(token: str) -> bool:
    """An integer of more than `PYTHON_INT_DIGITS` digits (a fraction or an exponent makes a float: no digit limit)."""
    digits = token.lstrip("-")
    return digits.isdigit() and len(digits) > PYTHON_INT_DIGITS


def _json_oddities(source: SourceFile) -> list[Diagnostic]:
    problems = _duplicate_keys(source, source.source_map.duplicates)
    for (line, col), literal in source.source_map.bad_literals:
        problems.append(
            Diagnostic(
                str(source.path),
                line,
                col,
                "",
                "error",
                f"invalid JSON: {literal} is not a JSON value",
                "use null or a string",
                "parse",
            )
        )
    return problems


# Duplicate keys said of one file, one by one; the rest are counted. 500,000 of them in a 3 MB file were as many
# lines: 67 MB of output, 15 s and 480 MB of memory.
MAX_SAID_DUPLICATES = 1_000


def _duplicate_keys(source: SourceFile, duplicates: tuple[Duplicate, ...]) -> list[Diagnostic]:
    more = len(duplicates) - MAX_SAID_DUPLICATES
    said = [
        source.diagnostic(
            dup.parts,
            "error",
            f"duplicate key '{shown_key(dup.parts[-1])}'",
            _first_at(dup.first),
            "duplicate-key",
            key=True,
        )
        for dup in duplicates[:MAX_SAID_DUPLICATES]
    ]
    if more > 0:
        message = f"{more:,} more duplicate keys than the first {MAX_SAID_DUPLICATES:,}, which are said"
        said.append(file_problem(source.path, message, "fix those and validate again", "duplicate-key"))
    return said


def _first_at(position: Position) -> str:
    return f"first at line {position[0]}, column {position[1]}; parsers keep only the last value"


def _parse_yaml(path: Path, raw: bytes, text: str, partial: bool) -> tuple[SourceFile | None, list[Diagnostic]]:
    import yaml

    try:
        document = parse_yaml(text)  # the reading `capidx serve` gives capidx.yaml too
    except yaml.MarkedYAMLError as exc:
        return None, [_yaml_problem(path, exc, text)]
    except yaml.YAMLError as exc:
        message = " ".join(str(exc).split())
        return None, [Diagnostic(str(path), None, None, "", "error", f"invalid YAML: {message}", None, "parse")]
    except YamlTooDeep as exc:  # as `too_deep` would say it of the parsed data
        (line, col), where = exc.position, json_path(exc.parts)
        return None, [Diagnostic(str(path), line, col, where, "error", str(exc), TOO_DEEP[1], "parse")]
    except YamlShapeError as exc:
        line, col = exc.position
        return None, [Diagnostic(str(path), line, col, "", "error", f"unusable YAML: {exc}", None, "parse")]
    except RecursionError:
        return None, [Diagnostic(str(path), None, None, "", "error", "invalid YAML: nested too deeply", None, "parse")]
    source_map, non_string_keys = document.source_map, document.non_string_keys
    nulled = {json_path(parts): source_map.place(parts)[0] for parts in document.nulled}
    # A key that is not a string ('on:', 'yes:', '2:' are read as true and 2) is said below and left out, so that the
    # rest of the document is still checked: every problem in one run, not one at a time.
    data = _string_keys_only(document.data) if non_string_keys else document.data
    source = SourceFile(path, raw, text, data, source_map, nulled)
    problems = [_unusable(path, found) for found in document.unusable]
    problems += _duplicate_keys(source, source_map.duplicates)
    problems += [
        source.diagnostic(
            parts,
            "error",
            f"key {key!r} is not a string",
            "quote it: JSON data allows only string keys",
            "parse",
            key=True,
        )
        for parts, _, key in document.unsaid_keys()
    ]
    problems.sort(key=lambda problem: (problem.line or 0, problem.col or 0))
    return (source if partial or not document.unusable else None), problems


def _string_keys_only(value: Any) -> Any:
    """The data without its non-string keys (each said where it is written): JSON data, which the schema can check.
    Recursion is bounded by the parse's depth limit (`YamlTooDeep`)."""
    if isinstance(value, dict):
        return {key: _string_keys_only(item) for key, item in value.items() if isinstance(key, str)}
    if isinstance(value, list):
        return [_string_keys_only(item) for item in value]
    return value


def _unusable(path: Path, found: Unusable) -> Diagnostic:
    """A value JSON cannot hold, where it is written (under the first JSON path it has; none for one in a key)."""
    (line, col), where = found.position, "" if found.parts is None else json_path(found.parts)
    return Diagnostic(str(path), line, col, where, "error", f"unusable YAML: {found.message}", None, "parse")


def _yaml_problem(path: Path, exc: Any, text: str) -> Diagnostic:
    """PyYAML's error as a diagnostic, placed and worded by `wording.yaml_problem` (which `capidx serve` uses too)."""
    (line, col), message, hint = yaml_problem(exc, text)
    return Diagnostic(str(path), line, col, "", "error", message, hint, "parse")
