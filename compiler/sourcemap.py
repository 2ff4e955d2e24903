"""Where every value of a data file sits in its text: JSON path parts -> (line, column), both 1-based.

The json module gives no positions, so `scan_json` walks the (already successfully parsed) text once
more with a one-regex tokenizer and a small stack machine. YAML positions come from `yaml.compose`
node marks (`walk_yaml`). Both also find duplicate keys, which the parsers silently collapse (the last
value wins), and which `capidx validate` reports as errors.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Part = str | int
Parts = tuple[Part, ...]
Position = tuple[int, int]

# Whitespace, then one token: a string, a punctuation character, or a bare literal (number, true, ...).
_TOKEN = re.compile(r'[ \t\n\r]*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([{}\[\],:])|([^ \t\n\r{}\[\],:"]+))', re.DOTALL)
_JSON_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
# A YAML document whose aliases expand past this many values is refused (a "billion laughs" guard).
MAX_YAML_VALUES = 1_000_000


@dataclass(frozen=True)
class Duplicate:
    """A key that appears twice in one object (`position`: the later one, whose value the parser keeps)."""

    parts: Parts
    position: Position
    first: Position


@dataclass(frozen=True)
class SourceMap:
    values: dict[Parts, Position] = field(default_factory=dict)
    keys: dict[Parts, Position] = field(default_factory=dict)
    duplicates: tuple[Duplicate, ...] = ()
    bad_literals: tuple[tuple[Position, str], ...] = ()

    def locate(self, parts: Parts, *, key: bool = False) -> Position | None:
        """Position of the value at `parts` (or of its key); the nearest ancestor when it is absent."""
        if key and parts in self.keys:
            return self.keys[parts]
        while parts not in self.values:
            if not parts:
                return None
            parts = parts[:-1]
        return self.values[parts]


def json_path(parts: Parts) -> str:
    """`$.capabilities[3].category`; keys that are not identifiers in brackets: `$.aliases['mcp server']`."""
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            text += f".{part}"
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            text += f"['{escaped}']"
    return text


class _LineIndex:
    def __init__(self, text: str) -> None:
        self._starts = [0, *(match.end() for match in re.finditer("\n", text))]

    def position(self, offset: int) -> Position:
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


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
            top.key = json.loads(string) if "\\" in string else string[1:-1]
            if top.key in top.seen:
                duplicates.append(Duplicate(top.child(), position, top.seen[top.key]))
            top.seen[top.key] = keys[top.child()] = position
            continue
        start = match.start(1) if string is not None else match.start(3)
        values[top.child() if top else ()] = lines.position(start)
        if literal is not None and not _JSON_LITERAL.fullmatch(literal):
            bad.append((lines.position(start), literal))
    return SourceMap(values, keys, tuple(duplicates), tuple(bad))


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_MEMBER = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")[ \t\n\r]*:[ \t\n\r]*', re.DOTALL)
_SEPARATOR = re.compile(r"[ \t\n\r]*,?[ \t\n\r]*")  # after a value: to the next one, or to the closing bracket
_scan_value = json.JSONDecoder().scan_once  # the C scanner: (value, end) of the JSON value at an offset


def _skip(text: str, at: int) -> int:
    """The offset of the first non-whitespace character at or after `at`."""
    return _WHITESPACE.match(text, at).end()  # type: ignore[union-attr]  # `*` always matches


class JsonPositions:
    """Positions in a JSON text that `json.loads` accepted without oddities, found on demand.

    `scan_json` tokenizes the whole text in Python; this walks only the containers on the way to the
    positions asked for, and each of them only as far as needed, skipping over child values with the
    C scanner: locating a few values costs little, and locating one in every record of a large file a
    fraction of a full scan. Same answers as `scan_json(text).locate` for a text without duplicate
    keys or non-JSON literals; such a text needs `scan_json`, which reports them (`duplicates` and
    `bad_literals` are empty here).
    """

    duplicates: tuple[Duplicate, ...] = ()
    bad_literals: tuple[tuple[Position, str], ...] = ()

    def __init__(self, text: str) -> None:
        self._text = text
        self._root = _skip(text, 0)
        self._containers: dict[int, _Container | None] = {}  # by offset of the opening bracket
        self._lines: _LineIndex | None = None

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

    def _position(self, offset: int) -> Position:
        if self._lines is None:
            self._lines = _LineIndex(self._text)
        return self._lines.position(offset)


class _Container:
    """An object or array of a JSON text, its children's offsets read as far as asked for so far."""

    __slots__ = ("is_object", "items", "members", "resume", "text")

    def __init__(self, text: str, is_object: bool, start: int) -> None:
        self.text = text
        self.is_object = is_object
        self.members: dict[str, tuple[int, int]] = {}  # key -> (key offset, value offset)
        self.items: list[int] = []  # value offsets
        self.resume = start  # where the next child starts; -1 once every child is read

    @classmethod
    def at(cls, text: str, offset: int) -> _Container | None:
        opening = text[offset]
        return cls(text, opening == "{", _skip(text, offset + 1)) if opening in "{[" else None

    def find(self, part: Part) -> tuple[int | None, int] | None:
        """(key offset or None, value offset) of the child `part`, or None when there is no such child."""
        if self.is_object:
            if not isinstance(part, str):
                return None
            while part not in self.members and self.resume >= 0:
                self._read_next()
            return self.members.get(part)
        if type(part) is not int or part < 0:
            return None
        while len(self.items) <= part and self.resume >= 0:
            self._read_next()
        return (None, self.items[part]) if part < len(self.items) else None

    def _read_next(self) -> None:
        text, at = self.text, self.resume
        if text[at] in "}]":
            self.resume = -1
            return
        if self.is_object:
            member = _MEMBER.match(text, at)  # "key" : (and the whitespace around)
            assert member is not None  # json.loads accepted the text
            name = member.group(1)
            self.members[json.loads(name) if "\\" in name else name[1:-1]] = (at, member.end())
            at = member.end()
        else:
            self.items.append(at)
        self.resume = _SEPARATOR.match(text, _scan_value(text, at)[1]).end()  # type: ignore[union-attr]


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


class YamlShapeError(Exception):
    """The YAML is well-formed but cannot be treated as JSON data (recursive alias, too many values)."""

    def __init__(self, message: str, position: Position) -> None:
        super().__init__(message)
        self.position = position


@dataclass
class _YamlWalk:
    values: dict[Parts, Position] = field(default_factory=dict)
    keys: dict[Parts, Position] = field(default_factory=dict)
    duplicates: list[Duplicate] = field(default_factory=list)
    non_string_keys: list[tuple[Parts, Position, str]] = field(default_factory=list)
    sizes: dict[int, int] = field(default_factory=dict)  # node id -> values once aliases are expanded


def walk_yaml(root: Any) -> tuple[SourceMap, list[tuple[Parts, Position, str]]]:
    """Positions of a composed YAML node tree, plus keys that are not strings (JSON allows only strings).

    Each node is walked once: values reached through an alias are located at the anchored original.
    Raises `YamlShapeError` for a recursive alias, or when aliases expand the data past
    `MAX_YAML_VALUES` (a "billion laughs" document would otherwise hang the schema check).
    Run it before constructing the data: construction flattens merge keys (`<<`) in place.
    """
    walk = _YamlWalk()
    if root is not None:
        _walk_node(root, (), walk, set())
    return SourceMap(walk.values, walk.keys, tuple(walk.duplicates)), walk.non_string_keys


def _mark(node: Any) -> Position:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _walk_node(node: Any, parts: Parts, walk: _YamlWalk, ancestors: set[int]) -> int:
    """Record positions below `node`; returns how many values it stands for once aliases are expanded."""
    walk.values[parts] = _mark(node)
    if not isinstance(node.value, list):  # a scalar
        return 1
    if id(node) in ancestors:
        raise YamlShapeError("recursive alias: a value contains itself", _mark(node))
    if id(node) in walk.sizes:  # an alias of a node walked before
        return walk.sizes[id(node)]
    ancestors.add(id(node))
    size = 1 + sum(
        _walk_node(child, child_parts, walk, ancestors) for child_parts, child in _children(node, parts, walk)
    )
    ancestors.discard(id(node))
    walk.sizes[id(node)] = size
    if size > MAX_YAML_VALUES:
        raise YamlShapeError(f"aliases expand to more than {MAX_YAML_VALUES:,} values", _mark(node))
    return size


def _children(node: Any, parts: Parts, walk: _YamlWalk) -> Iterator[tuple[Parts, Any]]:
    if node.id == "sequence":
        for index, item in enumerate(node.value):
            yield (*parts, index), item
        return
    seen: dict[str, Position] = {}
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # merged values keep the position of the enclosing mapping
        key = key_node.value if isinstance(key_node.value, str) else "?"
        child_parts, position = (*parts, key), _mark(key_node)
        if key_node.tag != "tag:yaml.org,2002:str":
            walk.non_string_keys.append((child_parts, position, key))
        if key in seen:
            walk.duplicates.append(Duplicate(child_parts, position, seen[key]))
        seen[key] = walk.keys[child_parts] = position
        yield child_parts, value_node
