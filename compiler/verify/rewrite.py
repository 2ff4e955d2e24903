"""Write what verification earned into the data files, changing nothing else.

A file is edited as text, never re-serialized: each change replaces one scalar value at the offsets
the parser knows (JSON: the positions `capidx.compiler.validate.positions.scan_json` finds, the value's end
from the C scanner; YAML: the node marks PyYAML's composer records, as `capidx validate` uses them),
or inserts one member after the object's last one, in the object's own style (separator, indentation,
quotes, line endings). Every byte outside the edited values stays as it was. Before anything is
written, the new text is parsed again and must hold exactly the old data with the intended changes;
otherwise the file is left alone and the problem reported.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from capidx.compiler.files import write_whole
from capidx.compiler.validate.load import YAML_SUFFIXES, SourceFile
from capidx.compiler.validate.positions import Parts, scan_json
from capidx.compiler.verify.verdicts import Verdict
from capidx.schema.realpath import resolve

_scan_value = json.JSONDecoder().scan_once
_BOM = b"\xef\xbb\xbf"


class RewriteError(Exception):
    """A file that cannot be edited safely (its problem is reported; the file is left alone)."""


@dataclass(frozen=True)
class Change:
    """Set `key` of the object at `parts` to `value` (a string), adding the key when it is absent."""

    parts: Parts
    key: str
    value: str


@dataclass(frozen=True)
class FileEdit:
    path: Path
    old: str
    new: str
    changes: tuple[Change, ...]

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self, label: str) -> str:
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True), self.new.splitlines(keepends=True), f"a/{label}", f"b/{label}"
            )
        )


def changes_for(verdict: Verdict, today: date, *, fix_redirects: bool) -> list[Change]:
    """What `--write` records for one verdict: a date only for a verified source, never for a failed one."""
    parts = verdict.source.parts
    changes = []
    if verdict.passed:
        changes.append(Change(parts, "verifiedDate", today.isoformat()))
    if verdict.new_status is not None and verdict.new_status != verdict.source.status:
        changes.append(Change(parts, "status", verdict.new_status))
    if fix_redirects and verdict.new_url:
        changes.append(Change(parts, "url", verdict.new_url))
    return changes


def edit_file(source: SourceFile, changes: Iterable[Change]) -> FileEdit:
    """The file's text with `changes` applied (not written); `RewriteError` when that cannot be done safely."""
    changes = tuple(_effective(source.data, changes))
    if not changes:
        return FileEdit(source.path, source.text, source.text, ())
    editor = _YamlEditor(source.text) if _is_yaml(source) else _JsonEditor(source.text, source.data)
    by_object: dict[Parts, list[Change]] = {}
    for change in changes:
        by_object.setdefault(change.parts, []).append(change)
    edits: list[tuple[int, int, str]] = []
    for parts, group in by_object.items():
        obj = _at(source.data, parts)
        new_members = [change for change in group if change.key not in obj]
        edits += [editor.replace(parts, change) for change in group if change.key in obj]
        if new_members:
            edits.append(editor.insert(parts, list(obj), new_members))
    new = _apply(source.text, edits)
    _check(source, new, changes)
    return FileEdit(source.path, source.text, new, changes)


def write_file(source: SourceFile, edit: FileEdit) -> None:
    """Replace the file atomically, keeping its mode and byte-order mark; refuse if it changed since read.

    A symbolic link stays a link: its target is replaced."""
    try:
        path = resolve(source.path)
        current = path.read_bytes()
    except OSError as exc:
        raise RewriteError(f"cannot read it again: {exc.strerror or exc}") from None
    if current != source.raw:
        raise RewriteError("it changed while capidx verify ran; run verify again")
    data = (_BOM if source.raw.startswith(_BOM) else b"") + edit.new.encode("utf-8")
    try:
        write_whole(path, data, os.stat(path).st_mode & 0o7777, make_folder=False)
    except OSError as exc:
        raise RewriteError(f"cannot write it: {exc.strerror or exc}") from None


def _effective(data: Any, changes: Iterable[Change]) -> Iterable[Change]:
    """Changes that change something (setting a value to what it already is is no edit)."""
    for change in changes:
        obj = _at(data, change.parts)
        if not isinstance(obj, dict):
            raise RewriteError(f"no object at {change.parts}")
        if obj.get(change.key) != change.value:
            yield change


def _at(data: Any, parts: Parts) -> Any:
    for part in parts:
        data = data[part]
    return data


def _is_yaml(source: SourceFile) -> bool:
    suffix = source.path.suffix.lower()
    return suffix in YAML_SUFFIXES or (suffix != ".json" and not source.text.lstrip().startswith(("{", "[")))


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, replacement in sorted(edits, key=lambda edit: edit[0], reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _check(source: SourceFile, new: str, changes: tuple[Change, ...]) -> None:
    expected = copy.deepcopy(source.data)
    for change in changes:
        _at(expected, change.parts)[change.key] = change.value
    try:
        actual = _load_yaml(new) if _is_yaml(source) else json.loads(new)
    except Exception as exc:
        raise RewriteError(f"the edited text would not parse ({type(exc).__name__}); nothing written") from None
    if actual != expected:
        raise RewriteError("the edited text would not hold the intended data; nothing written")


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


# --- JSON --------------------------------------------------------------------------------------------


class _JsonEditor:
    def __init__(self, text: str, data: Any) -> None:
        self.text = text
        self.map = scan_json(text)
        if self.map.duplicates:
            raise RewriteError("the file has duplicate keys; fix them first (capidx validate shows them)")
        self._starts = [0, *(match.end() for match in re.finditer("\n", text))]

    def _offset(self, parts: Parts, *, key: bool = False) -> int:
        table = self.map.keys if key else self.map.values
        line, col = table[parts]
        return self._starts[line - 1] + col - 1

    def _end(self, start: int) -> int:
        return _scan_value(self.text, start)[1]

    def replace(self, parts: Parts, change: Change) -> tuple[int, int, str]:
        start = self._offset((*parts, change.key))
        return start, self._end(start), json.dumps(change.value, ensure_ascii=False)

    def insert(self, parts: Parts, keys: list[str], members: list[Change]) -> tuple[int, int, str]:
        """New members after the last one, separated and indented like the last one from its neighbour."""
        if not keys:
            raise RewriteError("cannot add a member to an empty object")
        last = (*parts, keys[-1])
        key_start = self._offset(last, key=True)
        value_start = self._offset(last)
        value_end = self._end(value_start)
        colon = self.text[self._end(key_start) : value_start]  # ": " as the file writes it
        if len(keys) >= 2:
            separator = self.text[self._end(self._offset((*parts, keys[-2]))) : key_start]
        else:
            separator = "," + self.text[self._offset(parts) + 1 : key_start]
        text = "".join(
            f"{separator}{json.dumps(member.key)}{colon}{json.dumps(member.value, ensure_ascii=False)}"
            for member in members
        )
        return value_end, value_end, text


# --- YAML --------------------------------------------------------------------------------------------


@cache
def _loader() -> type:
    """PyYAML's pure-Python safe loader (its marks count characters), dates kept as strings like capidx's."""
    import yaml
    from yaml.constructor import SafeConstructor

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)
    return Loader


def _load_yaml(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=_loader())


class _YamlEditor:
    def __init__(self, text: str) -> None:
        import yaml

        self.text = text
        try:
            self.root = yaml.compose(text, Loader=_loader())
        except yaml.YAMLError as exc:
            raise RewriteError(f"cannot read the YAML again: {exc}") from None

    def _node(self, parts: Parts) -> Any:
        node = self.root
        for part in parts:
            if node.id == "sequence":
                node = node.value[part]
            else:
                node = next(value for key, value in reversed(node.value) if key.value == part)
        return node

    def _key_node(self, parts: Parts, key: str) -> Any:
        return next(k for k, _ in reversed(self._node(parts).value) if k.value == key)

    def replace(self, parts: Parts, change: Change) -> tuple[int, int, str]:
        node = self._node((*parts, change.key))
        if node.id != "scalar":
            raise RewriteError(f"{change.key} is not a single value")
        start, end = node.start_mark.index, node.end_mark.index
        replacement = _scalar(change.value, node.style)
        if node.style in ("|", ">"):  # keep the line breaks a block scalar ends with
            original = self.text[start:end]
            replacement += original[len(original.rstrip()) :]
        return start, end, replacement

    def insert(self, parts: Parts, keys: list[str], members: list[Change]) -> tuple[int, int, str]:
        mapping = self._node(parts)
        if mapping.id != "mapping" or not mapping.value:
            raise RewriteError("cannot add a member to an empty or non-mapping object")
        style = self._sibling_style(mapping)
        last_value = mapping.value[-1][1]
        end = last_value.end_mark.index
        if mapping.flow_style:
            text = "".join(f", {member.key}: {_scalar(member.value, style)}" for member in members)
            return end, end, text
        indent = " " * mapping.value[0][0].start_mark.column
        newline = _newline(self.text)
        lines = [f"{indent}{member.key}: {_scalar(member.value, style)}" for member in members]
        if end > 0 and self.text[end - 1] == "\n":  # the last value (a block) ends at a line start
            return end, end, "".join(line + newline for line in lines)
        line_end = self.text.find("\n", end)
        line_end = len(self.text) if line_end < 0 else line_end
        if self.text[line_end - 1 : line_end] == "\r":
            line_end -= 1
        return line_end, line_end, "".join(newline + line for line in lines)

    @staticmethod
    def _sibling_style(mapping: Any) -> str | None:
        """New values are quoted like the object's url (plain, '...' or "...")."""
        for key, value in mapping.value:
            if key.value == "url" and value.id == "scalar":
                return value.style if value.style in ("'", '"') else None
        return None


def _scalar(value: str, style: str | None) -> str:
    """`value` as a one-line YAML scalar, in `style` when it allows it, else double-quoted."""
    if style == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    if style != '"' and _plain_ok(value):
        return value
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _plain_ok(value: str) -> bool:
    if not value or value != value.strip() or "\n" in value or ": " in value or " #" in value:
        return False
    try:
        return _load_yaml(f"k: {value}\n") == {"k": value}
    except Exception:
        return False
