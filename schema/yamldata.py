"""YAML read as JSON data, with a map of where every value and key sits: one reading for compiler and server.

capidx.yaml is read by `capidx validate` / `build` (the compiler) and by `capidx serve` (the server), and
the server may not import the compiler. Both must read the same file the same way, or one command accepts
what another refuses: dates stay strings (as JSON would have them, and as the schemas expect), a duplicate
key is found rather than silently collapsed to its last value, a recursive or exploding alias is refused
before it is expanded, and a problem is placed at the same line:col under the same JSON path. So the
parsing and the position walk live here. Standard library only at import time; PyYAML is imported when a
document is parsed.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import Any

Part = str | int
Parts = tuple[Part, ...]
Position = tuple[int, int]

# Limits every data file is read within, by validate, build and serve alike.
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_NESTING = 64  # levels of objects and lists a data file may nest (`too_deep`)

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
# A YAML document whose aliases expand past this many values, or this many characters of text (twice what a file
# may hold), is refused (a "billion laughs" guard: every later check reads the expanded data).
MAX_YAML_VALUES = 1_000_000
MAX_YAML_CHARACTERS = 2 * MAX_FILE_BYTES
# Python reads or prints no integer of over 4,300 decimal digits (`sys.get_int_max_str_digits`): an integer literal
# of more characters than this, in any base (3,000 hex digits are 3,612 decimal ones), is refused. No data needs one.
MAX_INT_LITERAL = 3000
_YAML_TAG = "tag:yaml.org,2002:"
_INT_TAG = "tag:yaml.org,2002:int"
# The largest whole number every JSON reader holds exactly (RFC 8259, section 6), and so the largest a float may stand
# for as an integer setting (`whole_numbers`); no integer setting of config-schema.json may be larger.
MAX_EXACT_INTEGER = 2**53 - 1
_MERGE_TAG = "tag:yaml.org,2002:merge"
# Scalars the loader converts, and what each must be: text tagged so that is not one raises a bare Python error there.
_KINDS = {"int": "whole number", "bool": "boolean (true or false)", "float": "number"}
_READ_TAGS = frozenset(f"tag:yaml.org,2002:{kind}" for kind in _KINDS)
# The YAML types that are JSON's (dates are read as strings): a set, binary data or an ordered map would reach the
# artifacts as a Python repr, a set's in an order that changes from run to run.
_JSON_TAGS = frozenset(
    f"tag:yaml.org,2002:{kind}" for kind in "str int float bool null seq map merge timestamp".split()
)


@dataclass(frozen=True)
class Duplicate:
    """A key that appears twice in one object (`position`: the later one, whose value the parser keeps)."""

    parts: Parts
    position: Position
    first: Position


@dataclass(frozen=True)
class AliasUse:
    """A YAML value used where it is not written: through an alias (`key: *name`) or merged (`<<: *name`)."""

    position: Position  # of the alias, where the value is used
    anchor: str
    # The path under which the positions inside the value are recorded (where it is first written or used), when
    # they are: None for a scalar, and for a value whose insides have no place of their own.
    origin: Parts | None
    merged: bool = False  # a member a mapping gets from a merge key (its position: the alias after `<<:`)


# Of an anchor's name a message shows this many characters and '…' (a name is the data's, of any length).
SHOWN_ANCHOR = 40

# A member a mapping gets from a merge key: where its key and its value are written, the id of its value's node (for
# where that value's insides are recorded, `SourceMap.places`), and the alias it comes through when the merged
# mapping is an item of a merged list written after `<<:` (`<<: [*a, *b]`). None for a member two merged mappings
# both hold.
_Member = tuple[Position, Position, int, tuple[Position, str] | None]
# A mapping's merged members: by name, and the alias its merged mapping comes through (`<<: *name`), if any.
_Merged = tuple[dict[str, _Member | None], tuple[Position, str] | None]


@dataclass(frozen=True)
class SourceMap:
    values: dict[Parts, Position] = field(default_factory=dict)
    keys: dict[Parts, Position] = field(default_factory=dict)
    duplicates: tuple[Duplicate, ...] = ()
    bad_literals: tuple[tuple[Position, str], ...] = ()
    aliases: dict[Parts, AliasUse] = field(default_factory=dict)  # by the path where the value is used
    # By a mapping's path, the members it gets from merge keys, found when asked for: a mapping merged in many
    # places is read once, not once for each place (see `_record_merged`).
    merged: dict[Parts, _Merged] = field(default_factory=dict)
    places: dict[int, Parts] = field(default_factory=dict)  # node id -> where its insides' positions are recorded
    # Whether an alias is written: the values it stands for are placed where it stands, out of reading order.
    aliased: bool = False

    def locate(self, parts: Parts, *, key: bool = False) -> Position | None:
        """Position of the value at `parts` (or of its key) where it is written, in the anchored value for a path
        that goes through an alias; the nearest ancestor when it is absent."""
        parts = self._written(parts)[0] if self.aliases or self.merged else parts
        if key and (found := self._position(parts, key=True)) is not None:
            return found
        while (found := self._position(parts)) is None:
            if not parts:
                return None
            parts = parts[:-1]
        return found

    def _position(self, parts: Parts, *, key: bool = False) -> Position | None:
        """Where the value at `parts` (or its key) is written, `parts` naming it where it is recorded."""
        found = (self.keys if key else self.values).get(parts)
        if found is None and (member := self._member(parts)) is not None:
            return member[0] if key else member[1]
        return found

    def _member(self, parts: Parts) -> tuple[Position, Position, AliasUse | None] | None:
        """A member the mapping holding `parts` gets from a merge key (not one it writes itself): where its key and
        value are written, and the alias it comes through."""
        if not self.merged or not parts or not isinstance(parts[-1], str) or parts in self.keys:
            return None
        members, through = self.merged.get(parts[:-1], ({}, None))
        member = members.get(parts[-1])
        if member is None:
            return None
        key_at, value_at, value_id, item_use = member
        use = through or item_use
        return key_at, value_at, None if use is None else AliasUse(*use, self.places.get(value_id), merged=True)

    def _alias(self, parts: Parts) -> AliasUse | None:
        """The alias the value at `parts` is used through, where it is used (a merged member: its merge's alias)."""
        found = self.aliases.get(parts)
        if found is None and (member := self._member(parts)) is not None:
            return member[2]
        return found

    def alias_use(self, parts: Parts, *, key: bool = False) -> AliasUse | None:
        """The first alias on the way to the value at `parts`, or None when the path goes through none. With `key`,
        on the way to its key: written before an alias (`key: *name`), but merged with its value (`<<: *name`)."""
        if not self.aliases and not self.merged:
            return None
        if not key or not parts:
            return self._written(parts)[1]
        member = self._alias(parts)
        return self._written(parts[:-1])[1] or (member if member is not None and member.merged else None)

    def place(self, parts: Parts, *, key: bool = False) -> tuple[Position | None, str]:
        """Where a problem with the value at `parts` (or its key) is shown, and what its message adds.

        A value used through an alias is shown where it is used, the place the JSON path names (the schema may
        refuse it there and nowhere else), and the message says where it is written: the anchored value, where
        every use of it changes. Anywhere else: where the value is written, and nothing added."""
        written = self.locate(parts, key=key)
        use = self.alias_use(parts, key=key)
        if use is None:
            return written, ""
        name = use.anchor if len(use.anchor) <= SHOWN_ANCHOR else use.anchor[: SHOWN_ANCHOR - 1] + "…"
        how = "merged here by <<" if use.merged else "used here"
        where = f"written at line {written[0]}, column {written[1]}, " if written is not None else ""
        return use.position, f"; {where}{how} through the alias *{name}"

    def _written(self, parts: Parts) -> tuple[Parts, AliasUse | None]:
        """`parts` as the path under which the positions of its value are recorded, into anchored values for the
        aliases on the way, and the first alias on the way (`parts` itself included)."""
        first: AliasUse | None = None
        at, steps = 1, 0
        while at <= len(parts) and steps <= 4 * MAX_NESTING:  # each step goes to an alias written earlier
            use = self._alias(parts[:at])
            if use is not None:
                first = first or use
                if at < len(parts) and use.origin is not None and use.origin != parts[:at]:
                    parts, at, steps = (*use.origin, *parts[at:]), len(use.origin), steps + 1
            at += 1
        return parts, first


# Of a longer key a path shows this many characters and '…': a key is the data's, of any length (one of 100,000
# characters made every message naming it 100 KB long); the line and column still point at it.
SHOWN_KEY = 60


def shown_key(key: object) -> str:
    """A key as a message shows it: cut to `SHOWN_KEY` characters and '…' (a key is the data's, of any length)."""
    text = str(key)
    return text if len(text) <= SHOWN_KEY else text[: SHOWN_KEY - 1] + "…"


def json_path(parts: Parts) -> str:
    """`$.capabilities[3].category`; keys that are not identifiers in brackets: `$.aliases['mcp server']`."""
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        part = shown_key(part)
        if _IDENTIFIER.fullmatch(part):
            text += f".{part}"
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            text += f"['{escaped}']"
    return text


class YamlShapeError(Exception):
    """The YAML is well-formed but cannot be treated as JSON data (recursive alias, too many values)."""

    def __init__(self, message: str, position: Position) -> None:
        super().__init__(message)
        self.position = position


class YamlTooDeep(YamlShapeError):
    """A value written nested deeper than `MAX_NESTING` (`parts`: the JSON path there), found while the document is
    composed, before the composer's recursion can go deep enough to fail with no place to show."""

    def __init__(self, message: str, parts: Parts, position: Position) -> None:
        super().__init__(message, position)
        self.parts = parts


@dataclass(frozen=True)
class Unusable:
    """A value JSON cannot hold (a tag with no JSON form, `.nan`, text tagged as a number, an integer too long to
    read): where it is written, the JSON path of its first place (None for one in a key, which has none), and what
    is wrong. One document may hold many: each is said, not only the first."""

    position: Position
    parts: Parts | None
    message: str


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML document: its data, where each value sits, and the keys that are not strings.

    `unusable`: the values JSON cannot hold, in the order they are written; the data holds null in their place,
    at the paths `nulled` (every place each is used, through aliases and merges too), so that a reader may check
    the rest of the document and say nothing of those nulls. A reader that uses the data must refuse it when
    `unusable` is not empty."""

    data: Any
    source_map: SourceMap
    non_string_keys: list[tuple[Parts, Position, str]]
    unusable: tuple[Unusable, ...] = ()
    nulled: tuple[Parts, ...] = ()

    def unsaid_keys(self) -> list[tuple[Parts, Position, str]]:
        """The keys that are not strings, but for those that are values JSON cannot hold (`? !!set {a}`, `.nan:`):
        each is said once, as such a value (`unusable`), not also as a key named '?'. Any key that is not a string
        still makes the data unusable (`non_string_keys`)."""
        said = {found.position for found in self.unusable}
        return [key for key in self.non_string_keys if key[1] not in said]


def parse_yaml(text: str) -> YamlDocument:
    """Parse one YAML document as JSON data (safe types only, dates as strings), walking its nodes first.

    Raises what PyYAML raises for text that is not YAML (`yaml.YAMLError`, with a mark when it has a
    position), `YamlTooDeep` for nesting past `MAX_NESTING` where it is written, `YamlShapeError` for aliases
    that cannot be JSON data (they are about the whole document: the first found stops the reading), and
    `RecursionError` should anything else recurse too deep; callers word each for their users. Values JSON cannot
    hold are not raised but listed, every one (`YamlDocument.unusable`).
    """
    try:
        return _parse(text)
    except yaml_error() as error:
        # libyaml's scanner looks up to 1,024 characters ahead for a key, so flow nesting written compactly
        # (`[[[[...`) fails there near 1,000 levels, before the composer's guard sees level 65: the text before
        # the error, composed once more, is stopped by the guard where it passes the limit, as deeper text is.
        mark = getattr(error, "problem_mark", None)
        if mark is None or not 0 < mark.index <= len(text) or not _flow_opens_before(text, mark.index):
            raise
        try:
            _parse(text[: mark.index])
        except YamlTooDeep as deep:
            raise deep from None
        except Exception:  # anything else: the error as first found
            pass
        raise


# How far before an error `_flow_opens_before` looks: 1,000 levels written `{a: ` take 4,000 characters.
FLOW_WINDOW = 8192


def _flow_opens_before(text: str, end: int) -> bool:
    """Whether flow collections opened and not closed just before `end` pass `MAX_NESTING`: only then can composing
    the text once more place an error (any other error is not read twice)."""
    window = text[max(0, end - FLOW_WINDOW) : end]
    return window.count("[") + window.count("{") - window.count("]") - window.count("}") > MAX_NESTING


# Line breaks to PyYAML (and libyaml) that are none to an editor, nor to JSON's positions: a value after one was
# placed a line too far, at a column counted from it. (A lone CR ends a line to PyYAML and to editors alike.)
_OTHER_BREAKS = re.compile("[\x85\u2028\u2029]")
_LINE_END = re.compile("\r\n|\r|\n")


class EditorLines:
    """Line and column (1-based) of a character offset as an editor shows them: lines end at `\n`, `\r\n` or `\r`."""

    def __init__(self, text: str) -> None:
        self._starts = [0, *(match.end() for match in _LINE_END.finditer(text))]

    def position(self, index: int) -> Position:
        line = bisect.bisect_right(self._starts, index)
        return line, index - self._starts[line - 1] + 1


def editor_position(text: str, index: int) -> Position:
    """A YAML mark's place in `text` (its `index` counts characters) as an editor shows it; see `_OTHER_BREAKS`.
    (The character after it is looked at: a mark at the `\n` of a `\r\n` is on the line that pair ends.)"""
    return EditorLines(text[: index + 1]).position(index)


def editor_lines(text: str) -> list[str]:
    """`text`'s lines as an editor shows them, and as `SourceMap` positions count them (`str.splitlines` also breaks
    at U+2028, U+0085, form feeds and more)."""
    return _LINE_END.split(text)


# The lines of the text being parsed when it holds a break only PyYAML counts (`_mark`); None: the marks are right.
_LINES: ContextVar[EditorLines | None] = ContextVar("_LINES", default=None)


def _parse(text: str) -> YamlDocument:
    token = _LINES.set(EditorLines(text) if _OTHER_BREAKS.search(text) else None)
    try:
        return _parse_placed(text)
    finally:
        _LINES.reset(token)


def _parse_placed(text: str) -> YamlDocument:
    loader = yaml_loader()(text)
    try:
        node = loader.get_single_node()
        walk = _YamlWalk(loader.uses)
        source_map, non_string_keys = _walked(node, walk)
        for found in walk.unusable.values():  # read as `_Unreadable`, not by a constructor that fails on it
            found.node.tag = _UNUSABLE_TAG
            if isinstance(found.node.value, list):  # a `!!set` merged by `<<` gives no members
                found.node.value = []
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    if not walk.unusable:
        return YamlDocument(data, source_map, non_string_keys)
    data, nulled = _nulled(data)
    for node_id, paths in nulled.items():  # one met only in a merge is named where the merge puts it
        found = walk.unusable[node_id]
        found.parts = found.parts if found.parts is not None else paths[0]
    unusable = tuple(found.said() for found in walk.unusable.values())
    every = tuple(sorted((parts for paths in nulled.values() for parts in paths), key=_path_order))
    return YamlDocument(data, source_map, non_string_keys, unusable, every)


@dataclass(frozen=True)
class _Unreadable:
    """What the loader reads a value JSON cannot hold as (`node`: the id of its node), until `_nulled` puts null in
    its place. Values used through aliases are one object, as the loader reads every alias."""

    node: int


_UNUSABLE_TAG = "tag:capidx,2026:unusable"  # not a tag a document can write: YAML's own are `tag:yaml.org,2002:`


def _nulled(data: Any) -> tuple[Any, dict[int, list[Parts]]]:
    """`data` with null in place of every value JSON cannot hold, and by node id the paths where each was, sorted
    (through aliases, one value may stand in many places: all are found before any is replaced).
    Iterative; the data's size is bounded by `MAX_YAML_VALUES` already. A key is left as it is: a document with a
    key JSON cannot hold is not checked."""
    if isinstance(data, _Unreadable):
        return None, {data.node: [()]}
    found: list[tuple[dict[Any, Any] | list[Any], Any, Parts, int]] = []
    stack: list[tuple[Parts, Any]] = [((), data)]
    while stack:
        parts, value = stack.pop()
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        for part, item in items:
            if isinstance(item, _Unreadable):
                found.append((value, part, (*parts, part), item.node))
            elif isinstance(item, dict | list):
                stack.append(((*parts, part), item))
    paths: dict[int, list[Parts]] = {}
    for container, part, parts, node in sorted(found, key=lambda each: _path_order(each[2])):
        container[part] = None
        paths.setdefault(node, []).append(parts)
    return data, paths


def _path_order(parts: Parts) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, part) if isinstance(part, int) else (1, part) for part in parts)


def yaml_error() -> type[Exception]:
    """PyYAML's error class, imported when YAML is read (the module stays cheap to import)."""
    import yaml

    return yaml.YAMLError


# Where the composer saw each alias written (its position and anchor's name), by the alias's slot (`_nesting_guard`).
Uses = dict[tuple[int, int, bool], tuple[Position, str]]

# Levels a document may be written nested, merge keys (`<<`) and complex keys included, which add none to the
# data's nesting (`MAX_NESTING`): past this the composer is stopped too, where its recursion is still shallow.
MAX_WRITTEN_NESTING = 2 * MAX_NESTING


@cache
def yaml_loader() -> type:
    """A safe YAML loader that keeps dates as strings, as JSON would (the schema's `format: date` checks them).

    It pairs libyaml's event parser (fast, iterative) with PyYAML's Python composer: libyaml's own
    composer recurses in C and crashes the interpreter on deeply nested input, where the Python one
    stops at `MAX_NESTING` levels (`_nesting_guard`), with the place and the JSON path where it did.
    """
    import yaml
    from yaml.composer import Composer
    from yaml.constructor import SafeConstructor
    from yaml.resolver import Resolver

    guard = _nesting_guard(Composer)
    try:
        from yaml._yaml import CParser
    except ImportError:  # PyYAML built without libyaml

        class Loader(guard, yaml.SafeLoader):  # type: ignore[valid-type,misc]
            def __init__(self, stream: str) -> None:
                yaml.SafeLoader.__init__(self, stream)
                guard.__init__(self)

    else:

        class Loader(guard, CParser, SafeConstructor, Resolver):  # type: ignore[no-redef,valid-type,misc]
            def __init__(self, stream: str) -> None:
                CParser.__init__(self, stream)
                guard.__init__(self)
                SafeConstructor.__init__(self)
                Resolver.__init__(self)

    Loader.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)
    Loader.add_constructor(_UNUSABLE_TAG, lambda _loader, node: _Unreadable(id(node)))
    return Loader


def _nesting_guard(composer: type) -> type:
    """PyYAML's composer, counting levels as it descends: a value past `MAX_NESTING` levels of the data (the
    nesting `too_deep` refuses after parsing) or past `MAX_WRITTEN_NESTING` levels as written raises `YamlTooDeep`.

    The composer recurses once per level, and near 1,000 levels fails with a RecursionError that says nowhere
    where: a document nested 100,000 deep was refused with the file's name only. Counting as it goes costs a
    step per node and stops it at the first value too deep, whose place the parser's event still holds.
    """
    from yaml.events import AliasEvent
    from yaml.nodes import MappingNode, SequenceNode

    class NestingGuard(composer):  # type: ignore[valid-type,misc]
        def __init__(self) -> None:
            composer.__init__(self)
            # One entry per level being composed: its JSON path part (None for a key, which has none), and whether
            # it is a level of the data (a merge's value, or a mapping in a merged list, stands in for its mapping).
            self.trail: list[tuple[Part | None, bool]] = []
            self.depth = 0  # levels of the data in `trail`
            # Where each alias is written, and its anchor's name, by its slot: the parent node's id, the item's (or
            # key and value pair's) index in it, whether it is the key. The node an alias names is the anchored
            # node itself: this is all that is left of where it was used.
            self.uses: Uses = {}

        def compose_node(self, parent: Any, index: Any) -> Any:
            if parent is None:  # the root
                return super().compose_node(parent, index)
            if self.check_event(AliasEvent):  # it nests nothing where it stands: where it stands is kept
                event = self.peek_event()
                is_key = isinstance(parent, MappingNode) and index is None
                self.uses[(id(parent), len(parent.value), is_key)] = (_mark(event), event.anchor)
                return super().compose_node(parent, index)
            part, counts = self.step(parent, index)
            self.trail.append((part, counts))
            self.depth += counts
            try:
                if self.depth > MAX_NESTING or len(self.trail) > MAX_WRITTEN_NESTING:
                    raise YamlTooDeep(self.too_deep(), self.path(), _mark(self.peek_event()))
                return super().compose_node(parent, index)
            finally:
                self.trail.pop()
                self.depth -= counts

        def step(self, parent: Any, index: Any) -> tuple[Part | None, bool]:
            if isinstance(parent, SequenceNode):  # an item; in a merged list, a mapping merged in its parent's place
                merged = bool(self.trail) and self.trail[-1] == ("<<", False)  # (`MAX_WRITTEN_NESTING` bounds these)
                return ("<<", False) if merged else (index, True)
            assert isinstance(parent, MappingNode)
            if index is None:  # a key
                return None, True
            if index.tag == _MERGE_TAG:  # merged members sit at the mapping's level
                return "<<", False
            return (index.value if isinstance(index.value, str) else "?"), True

        def path(self) -> Parts:
            """The JSON path of the node being composed (merges skipped; inside a key, its mapping's path)."""
            parts: list[Part] = []
            for part, counts in self.trail:
                if part is None:
                    break
                if counts:
                    parts.append(part)
            return tuple(parts)

        def too_deep(self) -> str:
            if self.depth > MAX_NESTING:
                return f"nested more than {MAX_NESTING} levels deep"
            return f"written nested more than {MAX_WRITTEN_NESTING} levels deep, merge keys (<<) and keys included"

    return NestingGuard


@dataclass
class _YamlWalk:
    uses: Uses
    values: dict[Parts, Position] = field(default_factory=dict)
    keys: dict[Parts, Position] = field(default_factory=dict)
    duplicates: list[Duplicate] = field(default_factory=list)
    non_string_keys: list[tuple[Parts, Position, str]] = field(default_factory=list)
    sizes: dict[int, tuple[int, int]] = field(default_factory=dict)  # node id -> values, characters once expanded
    # Node id -> the path its insides' positions are recorded under (not for a node met only in merges and keys).
    places: dict[int, Parts] = field(default_factory=dict)
    aliases: dict[Parts, AliasUse] = field(default_factory=dict)
    merged: dict[Parts, _Merged] = field(default_factory=dict)
    # Merged value's node id -> its members (`_merged_members`), None when they are not placed: read once each.
    merge_tables: dict[int, dict[str, _Member | None] | None] = field(default_factory=dict)
    unusable: dict[int, _UnusableNode] = field(default_factory=dict)  # node id -> a value JSON cannot hold


@dataclass
class _UnusableNode:
    """A value JSON cannot hold as the walk finds it: its node (retagged before the data is read), its first path."""

    node: Any
    parts: Parts | None
    message: str

    def said(self) -> Unusable:
        return Unusable(_mark(self.node), self.parts, self.message)


def walk_yaml(root: Any, uses: Uses | None = None) -> tuple[SourceMap, list[tuple[Parts, Position, str]]]:
    """Positions of a composed YAML node tree, plus keys that are not strings (JSON allows only strings).

    Each node is walked once: the insides of a value reached through an alias are located in the anchored
    original, and the alias itself (from `uses`, the composer's record) where it is used (`SourceMap.aliases`), as
    is each member a mapping gets from a merge key. Raises `YamlShapeError` for a recursive alias, and when aliases
    expand the data past `MAX_YAML_VALUES` or `MAX_YAML_CHARACTERS` (a "billion laughs" document would otherwise
    hang the checks): both are about the whole document, and the first stops the walk. A value JSON cannot hold
    (`!!set`, `!!binary`, `.nan`, an integer Python would refuse to read, `MAX_INT_LITERAL`) is about itself: every
    one is listed (`_YamlWalk.unusable`, which `parse_yaml` reports). Run it before constructing the data:
    construction flattens merge keys (`<<`) in place.
    """
    return _walked(root, _YamlWalk(uses or {}))


def _walked(root: Any, walk: _YamlWalk) -> tuple[SourceMap, list[tuple[Parts, Position, str]]]:
    if root is not None:
        _walk_node(root, (), walk, set())
    source_map = SourceMap(
        walk.values, walk.keys, tuple(walk.duplicates), (), walk.aliases, walk.merged, walk.places, bool(walk.uses)
    )
    return source_map, walk.non_string_keys


def _mark(node: Any) -> Position:
    """Where `node` (or an event) starts, as an editor shows it (`_OTHER_BREAKS`)."""
    mark = node.start_mark
    lines = _LINES.get()
    return lines.position(mark.index) if lines is not None else (mark.line + 1, mark.column + 1)


def _walk_node(node: Any, parts: Parts | None, walk: _YamlWalk, ancestors: set[int]) -> tuple[int, int]:
    """Record positions below `node` (none for `parts` None: a key's or a merge's content); returns how many values
    and characters of text it stands for once aliases are expanded, keys and merged mappings included."""
    if parts is not None:
        walk.values[parts] = _mark(node)
    if id(node) in walk.unusable:  # said once, under the first path it has
        found = walk.unusable[id(node)]
        found.parts = found.parts if found.parts is not None else parts
        return walk.sizes[id(node)]
    if not isinstance(node.value, list) and id(node) in walk.sizes:  # a scalar, read once however many aliases use it
        return walk.sizes[id(node)]
    if problem := _no_json_form(node):
        walk.unusable[id(node)] = _UnusableNode(node, parts, problem)  # its insides, if any, are not read
        walk.sizes[id(node)] = 1, 0 if isinstance(node.value, list) else len(node.value)
        return walk.sizes[id(node)]
    if not isinstance(node.value, list):
        walk.sizes[id(node)] = 1, len(node.value)
        return walk.sizes[id(node)]
    if id(node) in ancestors:
        raise YamlShapeError("recursive alias: a value contains itself", _mark(node))
    if id(node) in walk.sizes and (parts is None or id(node) in walk.places):  # an alias of a node walked before
        return walk.sizes[id(node)]
    if id(node) in walk.sizes and parts is not None and len(parts) > MAX_NESTING:
        # Walked again for its positions, through aliases past the nesting `too_deep` refuses: none is needed down
        # there, and anchors first met in merges, each aliasing the last, would recurse as deep as they expand.
        return walk.sizes[id(node)]
    if parts is not None:  # a node first met inside a merge is walked again, once, where it has a place
        walk.places[id(node)] = parts
    ancestors.add(id(node))
    values, characters = 1, 0
    for child_parts, child, is_key, use in _children(node, parts, walk):
        more, text = _walk_node(child, child_parts, walk, ancestors)
        values, characters = values + (0 if is_key else more), characters + text
        if use is not None and child_parts is not None:
            walk.aliases[child_parts] = AliasUse(*use, walk.places.get(id(child)))
        _check_expansion(node, values, characters)  # as it grows: a merged mapping is read again for each use
    ancestors.discard(id(node))
    walk.sizes[id(node)] = values, characters
    if parts is not None and node.id == "mapping":
        _record_merged(node, parts, walk)
    return values, characters


def _no_json_form(node: Any) -> str:
    """What makes a value one JSON cannot hold, else "": a tag JSON has no type for, an integer literal too long for
    Python to read, a number or boolean that is not one (`_unreadable`)."""
    if node.tag not in _JSON_TAGS:
        tag = node.tag[:SHOWN_ANCHOR]  # a local tag (`!thing`) is the data's, of any length
        kind = f"!!{tag[len(_YAML_TAG) :]}" if tag.startswith(_YAML_TAG) else tag
        return f"a value tagged {kind} has no JSON form: write a string, number, list or object"
    if isinstance(node.value, list):
        return ""
    digits = node.value.replace("_", "").lstrip("+-")
    if node.tag == _INT_TAG and len(digits) > MAX_INT_LITERAL:
        return f"an integer of over {MAX_INT_LITERAL:,} digits"
    return _unreadable(node) if node.tag in _READ_TAGS else ""


def _check_expansion(node: Any, values: int, characters: int) -> None:
    if values > MAX_YAML_VALUES:
        raise YamlShapeError(f"aliases expand to more than {MAX_YAML_VALUES:,} values", _mark(node))
    if characters > MAX_YAML_CHARACTERS:
        raise YamlShapeError(f"aliases expand to more than {MAX_YAML_CHARACTERS:,} characters of text", _mark(node))


def _record_merged(node: Any, parts: Parts, walk: _YamlWalk) -> None:
    """The members a mapping gets from merge keys (`<<: *defaults`, `<<: [*a, *b]`): where each is written, in the
    merged mapping, and the alias it comes through (none for a mapping written after `<<:`).

    A member two merged mappings both hold is left out, and so is every member when a merged mapping merges in
    turn: which one the loader keeps has changed between PyYAML versions. A problem with such a member stays
    placed at the mapping, as the JSON path says. Each merged value is read for its members once, however many
    mappings merge it (`_merged_members`): what is kept for a mapping is a reference to that reading, and its
    members are found when a problem names one (`SourceMap`). A mapping with more than one merge key has its own
    reading, of no more than its expansion is charged (`_check_expansion`)."""
    slots = [(slot, value) for slot, (key, value) in enumerate(node.value) if key.tag == _MERGE_TAG]
    tables: list[_Merged] = []
    for slot, value in slots:
        table = _merged_members(value, walk)
        if table is None:
            return
        # The alias after `<<:` is where the members are used, for a list of mappings too (`<<: *list`): the aliases
        # inside the list stand where the list is written, the same place for every mapping that merges it.
        tables.append((table, walk.uses.get((id(node), slot, False))))
    if len(tables) == 1:
        walk.merged[parts] = tables[0]
    elif tables:
        members: dict[str, _Member | None] = {}
        for table, through in tables:
            for name, member in table.items():
                if member is not None and through is not None:
                    member = (*member[:3], through)
                members[name] = None if name in members else member
        walk.merged[parts] = members, None


def _merged_members(value: Any, walk: _YamlWalk) -> dict[str, _Member | None] | None:
    """The members merging `value` (a mapping, or a list of them) gives, by name (None for one two mappings hold);
    None when they are not placed (not mappings, or one merges in turn). Read once for each value."""
    if id(value) in walk.merge_tables:
        return walk.merge_tables[id(value)]
    if value.id == "sequence":
        sources = [(item, walk.uses.get((id(value), index, False))) for index, item in enumerate(value.value)]
    else:  # a mapping (a scalar: the loader refuses it)
        sources = [(value, None)]
    members: dict[str, _Member | None] | None = {}
    for source, use in sources:
        if source.id != "mapping" or any(key.tag == _MERGE_TAG for key, _ in source.value):
            members = None
            break
        for key_node, value_node in source.value:
            if isinstance(key_node.value, str) and members is not None:
                name = key_node.value
                members[name] = None if name in members else (_mark(key_node), _mark(value_node), id(value_node), use)
    walk.merge_tables[id(value)] = members
    return members


def _unreadable(node: Any) -> str:
    """What is wrong with a number or boolean scalar as the loader will read it, else "": a float that is not a
    finite number ('.nan', '!!float .na_n', '1.0e+999', a base-60 float past a double's range), or text tagged as
    a number or a boolean ('!!float abc', '!!int ""', '!!bool maybe'), which the loader reads with a traceback."""
    from yaml.constructor import ConstructorError

    kind = node.tag.removeprefix("tag:yaml.org,2002:")
    try:
        value = getattr(_scalar_reader(), f"construct_yaml_{kind}")(node)
    except ConstructorError:  # the loader says so itself, at its place
        return ""
    except (OverflowError, ValueError, IndexError, KeyError):
        value = None
    if value is not None and (kind != "float" or math.isfinite(value)):
        return ""
    what = "a number JSON can hold: write a finite number" if kind == "float" else f"a {_KINDS[kind]}"
    return f"{node.value[:40]!r} is not {what}"


@cache
def _scalar_reader() -> Any:
    from yaml.constructor import SafeConstructor

    return SafeConstructor()


def _children(
    node: Any, parts: Parts | None, walk: _YamlWalk
) -> Iterator[tuple[Parts | None, Any, bool, tuple[Position, str] | None]]:
    """Each child with its parts (None where positions are not recorded), whether it is a key, and where the alias
    it is written as stands (None when it is written out)."""
    if node.id == "sequence":
        for index, item in enumerate(node.value):
            yield (None if parts is None else (*parts, index)), item, False, walk.uses.get((id(node), index, False))
        return
    seen: dict[str, Position] = {}
    for slot, (key_node, value_node) in enumerate(node.value):
        yield None, key_node, True, None  # a key is text too: an alias as a key expands like any other
        if key_node.tag == _MERGE_TAG:
            yield None, value_node, False, None  # merged members are placed with the mapping (`_record_merged`)
            continue
        if parts is None:
            yield None, value_node, False, None
            continue
        key = key_node.value if isinstance(key_node.value, str) else "?"
        child_parts, position = (*parts, key), _mark(key_node)
        if key_node.tag != "tag:yaml.org,2002:str":
            walk.non_string_keys.append((child_parts, position, key))
        if key in seen:
            walk.duplicates.append(Duplicate(child_parts, position, seen[key]))
        seen[key] = walk.keys[child_parts] = position
        yield child_parts, value_node, False, walk.uses.get((id(node), slot, False))


# A scalar as a file writes it (`0.190`, `on`), up to what ends it in JSON or YAML: read for a message that quotes it.
_WRITTEN_SCALAR = re.compile(r"[^\s,\]}#]+")
MAX_WRITTEN = 100  # characters of it read, at most: a line may be megabytes long, and no scalar a message quotes is


def written_scalar(lines: Sequence[str], at: Position | None, value: Any, read: Callable[[str], Any]) -> str | None:
    """The text of the scalar at `at` (line and column in `lines`) when `read` (the file format's reader, raising
    ValueError for text it cannot read) reads it back as `value`: the words a person wrote, `on` for a True. None
    when it does not (an anchor or a tag written before it) or it is longer than `MAX_WRITTEN`."""
    if at is None or not 0 < at[0] <= len(lines):
        return None
    start = at[1] - 1
    match = _WRITTEN_SCALAR.match(lines[at[0] - 1], start, start + MAX_WRITTEN + 1)
    if match is None or len(match.group(0)) > MAX_WRITTEN:
        return None
    try:
        found = read(match.group(0))
    except ValueError:
        return None
    return match.group(0) if found == value and type(found) is type(value) else None


def yaml_scalar(text: str) -> Any:
    """One YAML scalar as PyYAML's safe loader reads it (for `written_scalar`); ValueError for text that is not YAML."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(error) from None


def too_deep(data: Any) -> Parts | None:
    """Where the first value (in the order the file has them) sits deeper than `MAX_NESTING`, or None. A file the
    parser accepts may nest hundreds of levels (an `x-` value is any JSON), and recursive walks over it would then
    fail with a traceback: readers refuse it first. Iterative, and it stops at the limit, so its cost is bounded by
    the file's size. The first in order is the one a reader that stops on the way (`first_too_deep` in the compiler,
    the YAML composer's guard) would name: the same file gets the same answer whichever reader stops it."""
    stack: list[tuple[Parts, Any]] = [((), data)]
    while stack:
        parts, value = stack.pop()
        if len(parts) > MAX_NESTING:
            return parts
        if isinstance(value, dict):  # pushed last to first, so that the first is taken first
            stack.extend(((*parts, key), value[key]) for key in reversed(value))
        elif isinstance(value, list):
            stack.extend(((*parts, index), value[index]) for index in range(len(value) - 1, -1, -1))
    return None


def whole_numbers(value: Any, schema: Any) -> Any:
    """`value` with every float that has no fraction (`500.0`) turned into an int where `schema` says `integer`.

    JSON Schema counts 500.0 an integer, so capidx.yaml's check accepts `budgets: {full: 500.0}` as it accepts
    500 (and the server's reading of a manifest takes 3.0 as 3 likewise); carried on as a float, the setting read
    `500.0` in the manifest, `capidx report` and `serve --print-config`. Compiler and server read the checked file
    through this, so both hold the number the file means. Only a float of at most `MAX_EXACT_INTEGER` is one: past
    it a float stands for no one integer (`1.0e+300` would become 301 digits), and the schema refuses it anyway.
    Follows `properties` and `items`, the only ways config-schema.json nests; the depth is the schema's, not the
    file's."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_EXACT_INTEGER:
        types = schema.get("type")
        types = types if isinstance(types, list) else [types]
        return int(value) if "integer" in types and "number" not in types else value
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, dict):
        return {key: whole_numbers(item, properties.get(key)) for key, item in value.items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [whole_numbers(item, schema["items"]) for item in value]
    return value
