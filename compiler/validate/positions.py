"""Where every value of a JSON text sits: JSON path parts -> (line, column), both 1-based.

The json module gives no positions, so `scan_json` walks the (already successfully parsed) text once
more with a one-regex tokenizer and a small stack machine. It also finds duplicate keys, which the parser
silently collapses (the last value wins), and which `capidx validate` reports as errors. YAML positions
come from `yaml.compose` node marks, in `capidx.schema.yamldata` (`walk_yaml`), because the server reads
capidx.yaml too and must read it as validate does; the `SourceMap` and path types are shared from there.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from functools import cache

from capidx.schema.yamldata import Duplicate, Part, Parts, Position, SourceMap

# Whitespace, then one token: a string, a punctuation character, or a bare literal (number, true, ...).
_TOKEN = re.compile(r'[ \t\n\r]*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([{}\[\],:])|([^ \t\n\r{}\[\],:"]+))', re.DOTALL)
_JSON_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


class _LineIndex:
    """Line and column of any offset, from the start of every line (for `scan_json`, which asks for all)."""

    def __init__(self, text: str) -> None:
        self._starts = [0, *(match.end() for match in re.finditer("\n", text))]

    def position(self, offset: int) -> Position:
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


class _LineCounter:
    """Line and column of offsets asked for one by one, counting newlines from the nearest one answered.

    `JsonPositions` is asked for a few offsets of a text, or for many in reading order (the lint walks a
    document front to back): counting the newlines between neighbouring answers (in C, `str.count`)
    reads the text about once, where finding every line start first costs a Python object per line.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        # Offsets answered so far, ascending, with their line and the offset where that line starts.
        self._offsets = [0]
        self._lines = [1]
        self._starts = [0]

    def position(self, offset: int) -> Position:
        offsets = self._offsets
        at = bisect.bisect_right(offsets, offset) - 1
        known = offsets[at]
        newlines = self._text.count("\n", known, offset)
        line = self._lines[at] + newlines
        start = self._text.rfind("\n", known, offset) + 1 if newlines else self._starts[at]
        if known != offset:
            offsets.insert(at + 1, offset)
            self._lines.insert(at + 1, line)
            self._starts.insert(at + 1, start)
        return line, offset - start + 1


@dataclass
class _Frame:
    is_object: bool
    parts: Parts
    index: int = 0
    key: str = ""
    expect_key: bool = True
    seen: dict[str, Position] = field(default_factory=dict)

    def child(self) -> Parts:
        return (*self.parts, self.key if self.is_object else self.index)


def scan_json(text: str) -> SourceMap:
    """Positions of every value and key of a JSON text that `json.loads` accepted."""
    lines = _LineIndex(text)
    values: dict[Parts, Position] = {}
    keys: dict[Parts, Position] = {}
    duplicates: list[Duplicate] = []
    bad: list[tuple[Position, str]] = []
    stack: list[_Frame] = []
    for match in _TOKEN.finditer(text):
        string, punct, literal = match.groups()
        if punct is not None:
            _punctuation(punct, stack, values, lines.position(match.start(2)))
            continue
        top = stack[-1] if stack else None
        if string is not None and top is not None and top.is_object and top.expect_key:
            position = lines.position(match.start(1))
            top.key = _key(string)
            if top.key in top.seen:
                duplicates.append(Duplicate(top.child(), position, top.seen[top.key]))
            top.seen[top.key] = keys[top.child()] = position
            continue
        start = match.start(1) if string is not None else match.start(3)
        values[top.child() if top else ()] = lines.position(start)
        if literal is not None and not _JSON_LITERAL.fullmatch(literal):
            bad.append((lines.position(start), literal))
    return SourceMap(values, keys, tuple(duplicates), tuple(bad))


# `first_too_deep`'s regexes. Their repetitions sit in atomic groups (`(?>(?:...)*)`), never in a possessive
# repetition of a group (`(?:...)*+`), which Python 3.11.2 gets wrong: an iteration that fails halfway is kept as
# if it had matched. A greedy repetition in an atomic group stops at the first iteration that fails and is never
# entered again, so a match, failed or not, reads each character once.
_ATOMIC_STRING = r'(?>"[^"\\]*(?:\\.[^"\\]*)*")'
_ATOMIC_SPACE = r"(?>[ \t\n\r]*)"
# Levels of the containers `first_too_deep` passes whole, without a Python step per bracket, while they cannot
# reach the limit. Measured on 9 MB texts of a million items each, the worst case from 4.3 s (no container passed
# whole) to 4.0 s with 1; more levels make the regex slower on every item (4.6 s with 5, on a list of `[]`).
_SKIPPED_LEVELS = 1


def _container_pattern(levels: int) -> str:
    """An object or array of at most `levels` levels of brackets, in a valid JSON text (a regex, uncompiled)."""
    inside = rf'(?>(?:[^\[\]{{}}"]+|{_ATOMIC_STRING})*)'
    for _ in range(levels - 1):
        inside = rf'(?>(?:[^\[\]{{}}"]+|{_ATOMIC_STRING}|[\[{{]{inside}[\]}}])*)'
    return rf"[\[{{]{inside}[\]}}]"


@cache
def _to_bracket(skipping: bool) -> re.Pattern[str]:
    """Past strings and other text (and, `skipping`, whole shallow containers) to the next bracket (group 1)."""
    shallow = f"|{_container_pattern(_SKIPPED_LEVELS)}" if skipping else ""
    return re.compile(rf'(?>(?:[^"\[\]{{}}]+|{_ATOMIC_STRING}{shallow})*)([\[\]{{}}])', re.DOTALL)


@cache
def _siblings(limit: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Up to and with the next comma of a container (siblings of up to `limit` levels passed whole), and a key."""
    member = rf'(?>(?:[^,"\[\]{{}}]+|{_ATOMIC_STRING}|{_container_pattern(limit)})*),'
    return re.compile(member, re.DOTALL), re.compile(rf"(?>(?:{member})*){_ATOMIC_SPACE}({_ATOMIC_STRING})", re.DOTALL)


def first_too_deep(text: str, limit: int) -> tuple[Parts, Position] | None:
    """Where the first value of a JSON text nested deeper than `limit` starts: its path (of `limit` + 1 parts) and
    position; None when no value is that deep.

    For a text the json module refused with RecursionError (its C parser stops near 1,000 levels and says nowhere
    where): the text is valid up to there. This reads it once, without recursion, and only as far as the first
    value past `limit`, keeping the offsets of the open brackets (at most `limit` + 1 of them): a Python step per
    bracket, strings and other text passed by a regex, and containers a few levels deep passed whole while they
    cannot reach the limit. Then it names the path: each open container's text before the child on the path is
    read once more, by a regex, to count its items or find the child's key.
    """
    opened: list[int] = []
    at = 0
    while (step := _to_bracket(len(opened) + _SKIPPED_LEVELS <= limit).match(text, at)) is not None:
        bracket, at = step.start(1), step.end()
        if text[bracket] in "]}":
            if not opened:  # not JSON after all: nothing is placed past this point
                return None
            opened.pop()
            continue
        opened.append(bracket)
        if len(opened) > limit and (value := _first_child(text, at, text[bracket] == "{")) is not None:
            return _path_to(text, opened, value), _LineCounter(text).position(value)
    return None


def _first_child(text: str, at: int, is_object: bool) -> int | None:
    """Where the first value of the container opened just before `at` starts; None when it is empty."""
    at = _skip(text, at)
    if text[at : at + 1] in ("]", "}", ""):
        return None
    member = _MEMBER.match(text, at) if is_object else None
    return member.end() if member is not None else at


def _path_to(text: str, opened: list[int], value: int) -> Parts:
    """The path to the value at offset `value`, inside the containers opened at `opened` (outermost first)."""
    to_comma, key = _siblings(len(opened))
    parts: list[Part] = []
    for container, child in zip(opened, [*opened[1:], value], strict=True):
        if text[container] == "[":  # the child's index: the commas between the earlier items
            parts.append(to_comma.subn("", text[container + 1 : child])[1])
        else:  # the key after the earlier members
            found = key.match(text, container + 1, child)
            assert found is not None  # a member's key comes before its value
            parts.append(_key(found.group(1)))
    return tuple(parts)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_MEMBER = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")[ \t\n\r]*:[ \t\n\r]*', re.DOTALL)
_scan_value = json.JSONDecoder().scan_once  # the C scanner: (value, end) of the JSON value at an offset

# Building blocks of the regexes that step over values without building them (possessive: no backtracking).
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_WS = r"[ \t\n\r]*+"


def _value_pattern(depth: int) -> str:
    """A value of a valid JSON text with at most `depth` levels of brackets (a regex, uncompiled).

    Skipping a value only needs its end: in a valid text that is where its brackets balance, so a regex
    (strings matched whole, for the brackets inside them; `[` and `{` alike) finds it in C without
    building the value, as the C scanner would. `re` has no recursion, so the nesting is spelled out to
    `depth` levels (the pattern grows linearly); possessive quantifiers keep a failed match linear.
    """
    inside = rf'(?:[^\[\]{{}}"]++|{_STRING})*+'  # no brackets: strings, literals, commas, colons, whitespace
    for _ in range(depth - 1):
        inside = rf'(?:[^\[\]{{}}"]++|{_STRING}|[\[{{]{inside}[\]}}])*+'
    return rf'(?:{_STRING}|[\[{{]{inside}[\]}}]|[^ \t\n\r{{}}\[\],:"]++)'


# Values nested deeper than this (rare in capability documents) are skipped by the C scanner instead.
_DEPTH = 24
# After a value: its separator, then the next member's key and colon (group 1; None at the closing brace).
_NEXT_KEY = rf"{_WS},?{_WS}(?:({_STRING}){_WS}:{_WS})?"
_NEXT_KEY_ONLY = re.compile(_NEXT_KEY, re.DOTALL)
_NEXT_ITEM = re.compile(rf"{_WS},?{_WS}")


@cache
def _after_member() -> re.Pattern[str]:
    """One step of a walk over an object: past a value, its separator, and the next key and colon.

    Compiled on first use (a few milliseconds, which commands that locate nothing need not pay).
    """
    return re.compile(_value_pattern(_DEPTH) + _NEXT_KEY, re.DOTALL)


# A key asked for this often gets a regex of its own that finds it among the members in one call.
_SEARCH_AFTER = 16
_MAX_SEARCHES = 64  # keys, over the process's life: each pattern costs about 2 ms to compile
_searches: dict[str, re.Pattern[str]] = {}
_asked: dict[str, int] = {}


def _member_search(key: str) -> re.Pattern[str] | None:
    """The regex finding member `key` of an object from its first member, once `key` is asked for often.

    A walk takes a Python step per member before the one asked for (the `sources` of a capability
    comes after nine others); this regex passes them all in one call: lazily repeated whole members
    (`key: value,`), then `key` itself, spelled as `json.dumps` writes it. It fails (and the walk,
    which decodes every key, answers) when the key is absent, written with other escapes, or behind
    a value nested too deeply. A key is found this way only after it has been asked for
    `_SEARCH_AFTER` times: the keys of an alias table, each asked for once, never cost a compilation.
    """
    if key in _searches:
        return _searches[key]
    count = _asked[key] = _asked.get(key, 0) + 1
    if count < _SEARCH_AFTER or len(_searches) >= _MAX_SEARCHES:
        if len(_asked) > 100_000:  # keys asked for rarely: forget them rather than grow forever
            _asked.clear()
        return None
    literal = re.escape(json.dumps(key, ensure_ascii=False))
    member = rf"{_STRING}{_WS}:{_WS}{_value_pattern(_DEPTH)}{_WS},{_WS}"
    pattern = _searches[key] = re.compile(rf"(?>{member})*?({literal}){_WS}:{_WS}", re.DOTALL)
    return pattern


def _skip(text: str, at: int) -> int:
    """The offset of the first non-whitespace character at or after `at`."""
    return _WHITESPACE.match(text, at).end()  # type: ignore[union-attr]  # `*` always matches


class JsonPositions:
    """Positions in a JSON text that `json.loads` accepted without oddities, found on demand.

    `scan_json` tokenizes the whole text in Python; this walks only the containers on the way to the
    positions asked for, and each of them only as far as needed, stepping over child values in C (a
    regex, or the C scanner): locating a few values costs little, and locating one in every record of
    a large file a fraction of a full scan. Lines are counted the same way, between the offsets asked
    for (`_LineCounter`). Same answers as `scan_json(text).locate` for a text without duplicate
    keys or non-JSON literals; such a text needs `scan_json`, which reports them (`duplicates` and
    `bad_literals` are empty here).
    """

    duplicates: tuple[Duplicate, ...] = ()
    bad_literals: tuple[tuple[Position, str], ...] = ()

    def __init__(self, text: str) -> None:
        self._text = text
        self._root = _skip(text, 0)
        self._containers: dict[int, _Container | None] = {}  # by offset of the opening bracket
        self._lines: _LineCounter | None = None

    def locate(self, parts: Parts, *, key: bool = False) -> Position | None:
        """Position of the value at `parts` (or of its key); the nearest ancestor when it is absent."""
        if self._root >= len(self._text):
            return None
        offset, key_offset = self._root, None
        for part in parts:
            if offset in self._containers:
                container = self._containers[offset]
            else:
                container = self._containers[offset] = _Container.at(self._text, offset)
            found = container.find(part) if container is not None else None
            if found is None:
                break
            key_offset, offset = found
        else:
            if key and key_offset is not None:
                return self._position(key_offset)
        return self._position(offset)

    def place(self, parts: Parts, *, key: bool = False) -> tuple[Position | None, str]:
        """As `SourceMap.place`: JSON has no aliases, so a value is shown where it is written, nothing added."""
        return self.locate(parts, key=key), ""

    def _position(self, offset: int) -> Position:
        if self._lines is None:
            self._lines = _LineCounter(self._text)
        return self._lines.position(offset)


class _Container:
    """An object or array of a JSON text, its children's offsets read as far as asked for so far.

    A step over an object reads past the value of the member read last and up to the next member's
    value in one regex call (a key asked for often is searched for in one call, `_member_search`); a
    step over an array passes an item with the C scanner. The value of the child read last is passed
    only when a later child is wanted: the child asked for is often the last one needed (`capabilities`
    of the root), and passing it would cost a scan of all of it.
    """

    __slots__ = ("is_object", "items", "members", "pending", "start", "text")

    def __init__(self, text: str, is_object: bool, start: int) -> None:
        self.text = text
        self.start = start  # of the first child, or of the closing bracket
        self.is_object = is_object
        self.members: dict[str, tuple[int, int]] = {}  # key -> (key offset, value offset)
        self.items: list[int] = []  # value offsets
        self.pending = -1  # the value offset of the child read last; -1 once every child is read
        if text[start] in "}]":
            return
        if is_object:
            member = _MEMBER.match(text, start)  # "key" : (and the whitespace around)
            assert member is not None  # json.loads accepted the text
            self.members[_key(member.group(1))] = (start, member.end())
            self.pending = member.end()
        else:
            self.items.append(start)
            self.pending = start

    @classmethod
    def at(cls, text: str, offset: int) -> _Container | None:
        opening = text[offset]
        return cls(text, opening == "{", _skip(text, offset + 1)) if opening in "{[" else None

    def find(self, part: Part) -> tuple[int | None, int] | None:
        """(key offset or None, value offset) of the child `part`, or None when there is no such child."""
        if self.is_object:
            if not isinstance(part, str):
                return None
            members = self.members
            if part not in members and self.pending >= 0 and (search := _member_search(part)) is not None:
                found = search.match(self.text, self.start)
                if found is not None:
                    members[part] = (found.start(1), found.end())
            while part not in members and self.pending >= 0:
                self._read_member()
            return members.get(part)
        if type(part) is not int or part < 0:
            return None
        items = self.items
        while len(items) <= part and self.pending >= 0:
            self._read_item()
        return (None, items[part]) if part < len(items) else None

    def _read_member(self) -> None:
        text = self.text
        step = _after_member().match(text, self.pending)
        if step is None:  # nested too deeply for the regex
            step = _NEXT_KEY_ONLY.match(text, _scan_value(text, self.pending)[1])
            assert step is not None  # it matches the empty string
        name = step.group(1)
        if name is None:  # the closing brace
            self.pending = -1
            return
        self.members[_key(name)] = (step.start(1), step.end())
        self.pending = step.end()

    def _read_item(self) -> None:
        # Items (whole capabilities, say) are passed by the C scanner: faster than the regex on large
        # values, though it builds them (cheap while `validate_project` holds the garbage collector).
        text = self.text
        at = _NEXT_ITEM.match(text, _scan_value(text, self.pending)[1]).end()  # type: ignore[union-attr]
        if text[at] in "}]":
            self.pending = -1
        else:
            self.items.append(at)
            self.pending = at


def _key(literal: str) -> str:
    """The key a JSON string literal spells (decoded only when it holds an escape)."""
    return json.loads(literal) if "\\" in literal else literal[1:-1]


def _punctuation(char: str, stack: list[_Frame], values: dict[Parts, Position], position: Position) -> None:
    if char in "{[":
        parts = stack[-1].child() if stack else ()
        values[parts] = position
        stack.append(_Frame(is_object=char == "{", parts=parts))
    elif char in "}]":
        stack.pop()
    elif char == ",":
        top = stack[-1]
        top.expect_key = top.is_object
        top.index += not top.is_object
    else:  # ":"
        stack[-1].expect_key = False
