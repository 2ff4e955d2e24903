"""Rules for the characters and length of every text in a data file, and for quoting data in messages.

Catalog text ends up in `summary.md`, which is injected into every conversation of every agent that
connects, and in file names and URIs. So, checked at validate time (the build validates first, so it
enforces the same rules), with the file, line, column and JSON path of the offending value:

- **single-line fields** (names, ids, vendors, versions, terminology, aliases, triggers, models,
  integrations, alias-table phrases and targets, every object key): no control characters (Unicode
  category Cc: newline, tab, ESC, BEL, DEL, C1), no format characters (Cf: bidi embeddings and overrides
  U+202A-202E, isolates U+2066-2069, zero-width space/joiners, the BOM, soft hyphen), no line or paragraph
  separators (U+2028/2029); free text among them (not URLs, dates, enumerations) at most `SINGLE_LINE_MAX`
  characters, and a warning for white space at its ends (`surrounding-space`);
- **multi-line text** (descriptions, limitations, requirements, notes, excerpts, and any field capidx does
  not know): no control characters other than newline and tab, no bidi controls (`_BIDI`);
- **every string and key**: no lone surrogate (a `\\ud800` escape without its pair), which is not Unicode
  text and cannot be written as UTF-8;
- a capability name must give a slug (its URI and file names): letters or digits, at most `SLUG_MAX` long;
  a category, used in file names as it is, must be a slug (a schema given by `--schema` may allow others).

Lint rather than JSON Schema `pattern`s: the message can name the character, its code point and where it
is, and the rules hold even when `--schema` replaces the bundled schema.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from capidx.compiler.diagnostics import Diagnostic, visible
from capidx.compiler.validate.load import SourceFile
from capidx.schema.text import slugify

SINGLE_LINE_MAX = 200  # a name, version or phrase; room for long product names, not for a paragraph
SLUG_MAX = 200  # keeps `tools/lookup/<agent>/<slug>.json` and friends well under the 255-byte file-name limit
QUOTE_MAX = 60  # characters of a data value quoted in a message

_ANY = "*"  # matches any array index or object key in a field path below
_LIMITED = (
    ("agent", "name"),
    ("agent", "vendor"),
    ("agent", "version"),
    ("agent", "aliases", _ANY),
    ("capabilities", _ANY, "name"),
    ("capabilities", _ANY, "terminology"),
    ("capabilities", _ANY, "introducedIn"),
    ("capabilities", _ANY, "supersededBy"),
    ("capabilities", _ANY, "aliases", _ANY),
    ("capabilities", _ANY, "triggers", _ANY),
    ("capabilities", _ANY, "implementationNotes", "configFile"),
    ("integrations", _ANY, "platform"),
    ("integrations", _ANY, "features", _ANY),
    ("models", _ANY, "name"),
    ("models", _ANY, "provider"),
    ("models", _ANY, "tier"),
    ("models", _ANY, "note"),
)
# Single-line too, without a length limit here: enumerations and dates (the schema bounds them), URLs (a long
# one breaks nothing), a useWhen pattern (the regex rule in lint.py limits its length).
_UNLIMITED = (
    ("agent", "lastUpdated"),
    ("capabilities", _ANY, "category"),
    ("capabilities", _ANY, "tier"),
    ("capabilities", _ANY, "maturityLevel"),
    ("capabilities", _ANY, "status"),
    ("capabilities", _ANY, "deprecatedDate"),
    ("capabilities", _ANY, "useWhen", _ANY, "pattern"),
    ("capabilities", _ANY, "implementationNotes", "startUrl"),
    ("capabilities", _ANY, "sources", _ANY, "url"),
    ("capabilities", _ANY, "sources", _ANY, "supersededBy"),
    ("capabilities", _ANY, "sources", _ANY, "sourceGranularity"),
    ("capabilities", _ANY, "sources", _ANY, "status"),
    ("capabilities", _ANY, "sources", _ANY, "verifiedDate"),
    ("capabilities", _ANY, "sources", _ANY, "publishedDate"),
    ("documentation", _ANY),
)
# The alias table: phrase -> capability name, both single-line (the schema also limits the phrase's characters).
_ALIAS_LIMITED = (("aliases", _ANY),)

_LINE_BREAKS = {"Zl", "Zp"}  # U+2028, U+2029: line breaks to some readers, invisible to others
_LEAF = object()  # in a field tree: the key under which a single-line field's length limit is kept


def items(container: Any, key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, item) for the object items of `container[key]`, skipping whatever is not an object: the rules read
    data the schema may have refused, so they skip what they cannot read."""
    found = container.get(key) if isinstance(container, dict) else None
    if isinstance(found, list):
        yield from ((index, item) for index, item in enumerate(found) if isinstance(item, dict))


def _tree(paths: tuple[tuple[str, ...], ...], limit: int | None) -> dict[Any, Any]:
    """Field paths as nested dicts (a walk visits each capability once), each with `limit` under `_LEAF`."""
    root: dict[Any, Any] = {}
    for path in paths:
        node = root
        for part in path:
            node = node.setdefault(part, {})
        node[_LEAF] = limit
    return root


def _merged(*trees: dict[Any, Any]) -> dict[Any, Any]:
    merged: dict[Any, Any] = {}
    for tree in trees:
        for key, value in tree.items():
            merged[key] = _merged(merged[key], value) if isinstance(value, dict) and key in merged else value
    return merged


# Which fields are single-line (for the characters), and which have a length limit (walked for lengths).
_DOCUMENT_LENGTHS = _tree(_LIMITED, SINGLE_LINE_MAX)
_DOCUMENT_LINES = _merged(_tree(_UNLIMITED, None), _DOCUMENT_LENGTHS)
_ALIAS_LINES = _ALIAS_LENGTHS = _tree(_ALIAS_LIMITED, SINGLE_LINE_MAX)


def check_document_text(source: SourceFile) -> list[Diagnostic]:
    """Character and length rules for a capability document, and the slug rule for capability names."""
    problems = _check(source, _DOCUMENT_LINES, _DOCUMENT_LENGTHS)
    capabilities = source.data.get("capabilities") if isinstance(source.data, dict) else None
    for index, capability in enumerate(capabilities if isinstance(capabilities, list) else ()):
        name = capability.get("name") if isinstance(capability, dict) else None
        if isinstance(name, str) and name and len(name) <= SINGLE_LINE_MAX:
            problems += _slug_problems(source, ("capabilities", index, "name"), name)
        category = capability.get("category") if isinstance(capability, dict) else None
        if isinstance(category, str) and not is_category(category):
            problems += _category_problem(source, ("capabilities", index, "category"), category)
    return problems


def check_alias_text(source: SourceFile) -> list[Diagnostic]:
    """Character and length rules for the alias table, and no blank target."""
    return _check(source, _ALIAS_LINES, _ALIAS_LENGTHS) + check_blank(source)


# In a JSON file whose text `_printable_json` passes, a blank string can only be written as quotes around spaces.
_BLANK_JSON = re.compile(r'" *"')


def check_blank(source: SourceFile) -> list[Diagnostic]:
    """An error (code `blank`) for each string value that is empty or only white space: `"limitations": [" "]`
    rendered as "- Limitations: ; " and `"introducedIn": ""` as "since ". The schema's `minLength` catches only
    some empty strings and no blank ones; this holds for every field, with any `--schema`. Values under an
    `x-` key (anything goes there) and `$comment` / `$schema` are left alone. A JSON file without a blank string
    in its text is not walked (see `_printable_json`)."""
    if _printable_json(source) and _BLANK_JSON.search(source.text) is None:
        return []
    return [
        source.diagnostic(parts, "error", "empty or only white space", _blank_hint(parts), "blank")
        for parts in _blank_values(source.data)
    ]


def _blank_values(data: Any) -> Iterator[tuple[Any, ...]]:
    """The path of each blank string value outside extension keys, in document order (positions are then found in
    one pass through the text: in reverse order each lookup started over, quadratic in the number of blanks);
    iterative (an `x-` value may nest deeply)."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        parts, value = stack.pop()
        if isinstance(value, str):
            if not value.strip():
                yield parts
        elif isinstance(value, dict):
            stack.extend(
                reversed(
                    [
                        ((*parts, key), item)
                        for key, item in value.items()
                        if not (isinstance(key, str) and (key.startswith("x-") or key in ("$comment", "$schema")))
                    ]
                )
            )
        elif isinstance(value, list):
            stack.extend(((*parts, index), value[index]) for index in range(len(value) - 1, -1, -1))


def _blank_hint(parts: tuple[Any, ...]) -> str:
    return (
        "remove the item"
        if parts and isinstance(parts[-1], int)
        else "write the text, or leave the key out if it is optional"
    )


def quote(value: object, limit: int = QUOTE_MAX) -> str:
    """`value` for a message: in quotes, invisible and control characters escaped, cut to `limit` characters."""
    text = visible(value if isinstance(value, str) else str(value))
    if len(text) > limit:
        text = f"{text[: limit - 1]}…"
    return f"'{text}'"


def cited_by(capability: Any) -> str:
    """`, in capability 'MCP Servers'`: what a message about one of a record's sources adds, so that a reviewer reading
    a CI log knows the capability without counting `$.capabilities[7]` (quoted and escaped like every catalog text in
    a message; "" when the record has no name to give, the schema's error)."""
    name = capability.get("name") if isinstance(capability, dict) else None
    return f", in capability {quote(name)}" if isinstance(name, str) and name.strip() else ""


def _check(source: SourceFile, lines: dict[Any, Any], lengths: dict[Any, Any]) -> list[Diagnostic]:
    """Characters of every string and key (unless the file cannot hold a bad one), lengths of single-line fields."""
    problems: list[Diagnostic] = []
    seen: set[tuple[Any, ...]] = set()
    if not _printable_json(source):
        for parts, text, is_key in strings(source.data, ()):
            if text.isprintable():
                continue
            single = is_key or _limit(lines, parts) is not _MULTI
            found = _character_problem(text, single_line=single)
            if found:
                seen.add(parts)
                problems.append(source.diagnostic(parts, "error", *found, key=is_key))
    too_long: list[tuple[Any, ...]] = []
    spaced: list[tuple[tuple[Any, ...], str]] = []
    _fields(source.data, lengths, (), too_long, spaced)
    for parts, text, limit in too_long:
        if parts not in seen:
            problems.append(source.diagnostic(parts, "error", *_too_long(text, limit)))
    problems += [source.diagnostic(parts, "warning", *_spaced(text)) for parts, text in spaced if parts not in seen]
    for parts in _long_keys(source.data):  # the schema names every key but the `x-` ones, which may be any length
        if parts not in seen:
            problems.append(source.diagnostic(parts, "error", *_too_long(str(parts[-1]), SINGLE_LINE_MAX), key=True))
    problems += [source.diagnostic(parts, "error", *found) for parts, found in _long_runs(source.data)]
    return problems


# Characters in a row without white space, or of white space, in one text. The tokenizer reads such a run as one
# piece, whose encoding takes longer per character the longer it is (2 MB of `x`: 1.3 s, against 0.3 s for as many
# words), and a description is in some 20 artifacts: one of 2 MB took the build 26 s. No word or URL is that long.
# A run is sought only where one starts (the look-behinds): tried at every character, the search counted each run
# of up to 10,000 again from each of its characters, and runs of 10,000 in a 0.6 MB text took validate 15 s.
MAX_RUN = 10_000
_LONG_RUN = re.compile(rf"(?<!\S)\S{{{MAX_RUN + 1},}}|(?<!\s)\s{{{MAX_RUN + 1},}}")
_RUN_HINTS = ("break it with spaces: no word or address is that long", "remove the white space")
# What the tokenizers' pre-split cuts a run without white space at: one piece is letters, digits (a run of them in
# p50k_base and r50k_base) or punctuation and symbols (with combining marks), never two of these. Chinese and
# Japanese are written without spaces but with punctuation every few dozen characters: 2 MB of such text in one run
# is encoded at the speed of runs of 10,000 (1.06 against 0.83 us a character; 2 MB of letters without punctuation
# 4.3, of `x` 2.1), so only a run of one of these kinds is too long.
_PIECE_WORDS = {
    "L": "characters without white space or punctuation",
    "N": "digits in a row",
    "P": "punctuation or symbol characters in a row",
}


class _PieceKinds(dict[int, str]):
    """`str.translate`'s table from a character to its kind: L (a letter), N (a digit), M (a combining mark, which
    joins either: cl100k_base reads it with signs, o200k_base with letters) or P (punctuation, symbols and the
    rest). Filled as characters are met, so a text is translated at C speed once its characters are known; one table
    for one run, so that what a run of every character makes is freed with it."""

    def __missing__(self, char: int) -> str:
        category = unicodedata.category(chr(char))[0]
        kind = self[char] = category if category in "LNM" else "P"
        return kind


_PIECES = {kind: re.compile(rf"(?<![{kind}M])[{kind}M]{{{MAX_RUN + 1},}}") for kind in _PIECE_WORDS}


def _long_runs(data: Any) -> Iterator[tuple[tuple[Any, ...], tuple[str, str, str]]]:
    """(path, problem) of each string value holding a run longer than `MAX_RUN` (the first of it said; a key that
    long is an error already). Iterative, and a path is built only for what is found: this visits every string."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        parts, value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            if isinstance(item, (dict, list)):
                stack.append(((*parts, key), item))
            elif isinstance(item, str) and len(item) > MAX_RUN and (found := _too_long_run(item)) is not None:
                yield (*parts, key), found


def _too_long_run(text: str) -> tuple[str, str, str] | None:
    """The problem of the first run of `text` the tokenizer reads as one piece longer than `MAX_RUN`: white space,
    or one kind of character (`_PieceKinds`) inside a run without white space, whose longest such piece is said. Only
    runs without white space longer than that are looked into."""
    for run in _LONG_RUN.finditer(text):
        if run.group(0)[0].isspace():
            message = f"{run.end() - run.start():,} white-space characters in a row (at most {MAX_RUN:,})"
            return message, _RUN_HINTS[1], "long-run"
        kind, length = _longest_piece(run.group(0))
        if length > MAX_RUN:
            return f"{length:,} {_PIECE_WORDS[kind]} (at most {MAX_RUN:,})", _RUN_HINTS[0], "long-run"
    return None


def _longest_piece(run: str) -> tuple[str, int]:
    """A kind of character (`_PieceKinds`) and the length of the longest run of it in `run`, with the marks among it
    (0 when none is longer than `MAX_RUN`). Sought where such a run starts, so in linear time."""
    kinds = run.translate(_PieceKinds())
    found = [
        (piece.end() - piece.start(), kind) for kind, pattern in _PIECES.items() for piece in pattern.finditer(kinds)
    ]
    length, kind = max(found, default=(0, "L"))
    return kind, length


def _long_keys(data: Any) -> Iterator[tuple[Any, ...]]:
    """The path of each object key longer than `SINGLE_LINE_MAX` (a key is a single-line field); iterative, and
    only objects and lists are stacked (strings and numbers are looked at where they are)."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        parts, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and len(key) > SINGLE_LINE_MAX:
                    yield (*parts, key)
                if isinstance(item, (dict, list)):
                    stack.append(((*parts, key), item))
        elif isinstance(value, list):
            stack.extend(((*parts, index), item) for index, item in enumerate(value) if isinstance(item, (dict, list)))


# The escapes a JSON string can write a control, format or any character with.
_ESCAPES = ("\\n", "\\r", "\\t", "\\b", "\\f", "\\u")


def _printable_json(source: SourceFile) -> bool:
    """Whether no string in a JSON file can hold a character the rules look for: its text (outside strings,
    line breaks and tabs are formatting; JSON allows none inside) is printable and escapes none. Reading the
    text at C speed spares walking every string of a large catalog. YAML (block scalars, its own escapes)
    is always walked."""
    if source.path.suffix.lower() != ".json":
        return False
    text = source.text
    if not text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable():
        return False
    unescaped = text.replace("\\\\", "")  # an escaped backslash, left to right as the parser reads them
    return not any(escape in unescaped for escape in _ESCAPES)


_MULTI = object()  # `_limit` of a field that is not single-line


def _limit(tree: dict[Any, Any], parts: tuple[Any, ...]) -> Any:
    """The length limit of the single-line field at `parts` (None: unlimited), or `_MULTI`."""
    node = tree
    for part in parts:
        node = node.get(_ANY if isinstance(part, int) else part) or node.get(_ANY)
        if node is None:
            return _MULTI
    return node.get(_LEAF, _MULTI)


def _fields(
    value: Any,
    tree: dict[Any, Any],
    parts: tuple[Any, ...],
    out: list[tuple[Any, ...]],
    spaced: list[tuple[tuple[Any, ...], str]],
) -> None:
    """Append (path, text, limit) to `out` for each string field of `value` longer than the limit `tree` gives it,
    and (path, text) to `spaced` for each with white space at an end (not blank: that is `check_blank`'s error).
    Strings are checked in line and paths built only for what is found: this visits every capability."""
    if isinstance(value, dict):
        items = [(key, value[key], below) for key, below in tree.items() if key in value and key is not _ANY]
        if _ANY in tree:
            items += [(key, item, tree[_ANY]) for key, item in value.items()]
    elif isinstance(value, list) and _ANY in tree:
        items = [(index, item, tree[_ANY]) for index, item in enumerate(value)]
    else:
        return
    for key, item, below in items:
        if isinstance(item, str):
            limit = below.get(_LEAF)
            if limit is not None and len(item) > limit:
                out.append(((*parts, key), item, limit))
            elif (item[:1].isspace() or item[-1:].isspace()) and not item.isspace():
                spaced.append(((*parts, key), item))
        elif isinstance(item, (dict, list)):
            _fields(item, below, (*parts, key), out, spaced)


def _too_long(text: str, limit: int) -> tuple[str, str, str]:
    return f"{len(text):,} characters long (at most {limit:,} in a single-line field)", _LENGTH_HINT, "too-long"


_LENGTH_HINT = "shorten it; details belong in the description"


def spacing(text: str) -> list[str]:
    """The white space of `text` a reader cannot see once it is quoted: at its ends ('a space at the end'), and
    spaces in a row between its words."""
    start, end = len(text) - len(text.lstrip()), len(text) - len(text.rstrip())
    said = [f"{_spaces(text[:start])} at the start"] if start and not text.isspace() else []
    said += [f"{_spaces(text[len(text) - end :])} at the end"] if end and not text.isspace() else []
    return said + (["spaces in a row"] if "  " in text.strip() else [])


def _spaces(run: str) -> str:
    if run == " ":
        return "a space"
    return f"{len(run)} spaces" if run == " " * len(run) else "white space"


def _spaced(text: str) -> tuple[str, str, str]:
    ends = " and ".join(note for note in spacing(text) if note.endswith(("start", "end")))
    return f"{quote(text)} has {ends}", _SPACE_HINT, "surrounding-space"


# A space at an end is invisible where the text is shown, yet it is another spelling of the text, and Markdown
# emphasis does not close on it: '**MCP servers **' shows its asterisks.
_SPACE_HINT = "remove it: it cannot be seen where the text is shown, and Markdown shows '**name **' with its asterisks"


def strings(value: Any, parts: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str, bool]]:
    """(path, text, is_key) for every string value and every object key below `value`."""
    if isinstance(value, str):
        yield parts, value, False
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield (*parts, key), key, True
            yield from strings(item, (*parts, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, (*parts, index))


_NAMES = {
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
    "\t": "TAB",
    "\x00": "NUL",
    "\x07": "BELL",
    "\x08": "BACKSPACE",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
}
# Bidirectional embeddings, overrides and isolates reorder how text is displayed ("Trojan Source",
# CVE-2021-42574): refused in multi-line text too, where other format characters (a zero-width joiner in
# an emoji, a soft hyphen) are allowed.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_SINGLE_HINT = "remove it: names, ids, versions, terminology and aliases are one line of visible text"
_MULTI_HINT = "remove it: text may hold line breaks (\\n) and tabs, no other control characters"
_FORMAT_HINT = "remove it: invisible characters make text read differently from what is stored"


def _character_problem(text: str, *, single_line: bool) -> tuple[str, str, str] | None:
    """(message, hint, code) for the first character `text` may not hold, or None."""
    if text.isprintable():
        return None
    for position, ch in enumerate(text, 1):
        if ch.isprintable() or ch == " ":
            continue
        category = unicodedata.category(ch)
        at = f"{_describe(ch)} at character {position}"
        if category == "Cs":
            return f"lone surrogate {at}: not Unicode text", "remove it (a \\u escape without its pair)", "surrogate"
        if category == "Cc" and (single_line or ch not in "\n\t"):
            if ch in "\n\r" and single_line:
                return f"line break {at} in a single-line field", _SINGLE_HINT, "control-character"
            return f"control character {at}", _SINGLE_HINT if single_line else _MULTI_HINT, "control-character"
        if category == "Cf" and (single_line or ch in _BIDI):
            return f"invisible format character {at}", _FORMAT_HINT, "format-character"
        if category in _LINE_BREAKS and single_line:
            return f"line separator {at} in a single-line field", _SINGLE_HINT, "control-character"
    return None


def _describe(ch: str) -> str:
    """`U+202E (RIGHT-TO-LEFT OVERRIDE)`."""
    name = _NAMES.get(ch) or unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")


_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def is_category(category: str) -> bool:
    """Whether a category may name files and URIs as it is: a slug of at most `SLUG_MAX` characters."""
    return bool(_SLUG.match(category)) and len(category) <= SLUG_MAX


def _category_problem(source: SourceFile, parts: tuple[Any, ...], category: str) -> list[Diagnostic]:
    """A category names files and URIs as it is (`categories/<category>.md`): with a schema that allows any
    category (`--schema`), one such as `../x` would be written outside the build. The bundled schema's
    categories are all slugs."""
    message = f"category {quote(category)} is not a slug (lower-case letters, digits, single hyphens)"
    hint = f"use {quote(slugify(category))}" if slugify(category) else "use a category of the bundled schema"
    return [source.diagnostic(parts, "error", message, hint, "category-slug")]


def _slug_problems(source: SourceFile, parts: tuple[Any, ...], name: str) -> list[Diagnostic]:
    """The build names a capability's URI and files by its slug: a name must give one, of bounded length."""
    slug = slugify(name)
    if not slug:
        message = f"capability name {quote(name)} has no letters or digits (a-z, 0-9) to form a slug"
        hint = "the slug names the capability's URI and files; add a letter or digit"
    elif len(slug) > SLUG_MAX:
        message = f"capability name gives a slug of {len(slug):,} characters (at most {SLUG_MAX})"
        hint = "shorten the name; the slug names the capability's URI and files"
    else:
        return []
    return [source.diagnostic(parts, "error", message, hint, "name-slug")]
