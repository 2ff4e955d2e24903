"""Rules for the characters and length of every text in a data file, and for quoting data in messages.

Catalog text ends up in `summary.md`, which is injected into every conversation of every agent that
connects, and in file names and URIs. So, checked at validate time (the build validates first, so it
enforces the same rules), with the file, line, column and JSON path of the offending value:

- **single-line fields** (names, ids, vendors, versions, terminology, aliases, triggers, models,
  integrations, alias-table phrases and targets, every object key): no control characters (Unicode
  category Cc: newline, tab, ESC, BEL, DEL, C1), no format characters (Cf: bidi embeddings and overrides
  U+202A-202E, isolates U+2066-2069, zero-width space/joiners, the BOM, soft hyphen), no line or paragraph
  separators (U+2028/2029), and at most `SINGLE_LINE_MAX` characters (URLs: `URL_MAX`);
- **multi-line text** (descriptions, limitations, requirements, notes, excerpts, and any field capidx does
  not know): no control characters other than newline and tab;
- **every string and key**: no lone surrogate (a `\\ud800` escape without its pair), which is not Unicode
  text and cannot be written as UTF-8;
- a capability name must give a slug (its URI and file names): letters or digits, at most `SLUG_MAX` long.

Lint rather than JSON Schema `pattern`s: the message can name the character, its code point and where it
is, and the rules hold even when `--schema` replaces the bundled schema.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

from capidx.compiler.diagnostics import Diagnostic, visible
from capidx.compiler.load import SourceFile
from capidx.server.text import slugify

SINGLE_LINE_MAX = 200  # a name, version or phrase; room for long product names, not for a paragraph
URL_MAX = 2000  # the de-facto limit of browsers and servers
SLUG_MAX = 200  # keeps `tools/lookup/<agent>/<slug>.json` and friends well under the 255-byte file-name limit
QUOTE_MAX = 60  # characters of a data value quoted in a message

_ANY = "*"  # matches any array index or object key in a field path below
# Paths (array indexes and free keys as _ANY) of the capability document's single-line fields.
_SINGLE_LINE = {
    ("agent", "name"),
    ("agent", "vendor"),
    ("agent", "version"),
    ("agent", "lastUpdated"),
    ("capabilities", _ANY, "name"),
    ("capabilities", _ANY, "category"),
    ("capabilities", _ANY, "terminology"),
    ("capabilities", _ANY, "tier"),
    ("capabilities", _ANY, "introducedIn"),
    ("capabilities", _ANY, "maturityLevel"),
    ("capabilities", _ANY, "status"),
    ("capabilities", _ANY, "deprecatedDate"),
    ("capabilities", _ANY, "supersededBy"),
    ("capabilities", _ANY, "aliases", _ANY),
    ("capabilities", _ANY, "triggers", _ANY),
    ("capabilities", _ANY, "useWhen", _ANY, "pattern"),  # its length is the regex rule's (lint.py)
    ("capabilities", _ANY, "implementationNotes", "configFile"),
    ("capabilities", _ANY, "sources", _ANY, "sourceGranularity"),
    ("capabilities", _ANY, "sources", _ANY, "status"),
    ("capabilities", _ANY, "sources", _ANY, "verifiedDate"),
    ("capabilities", _ANY, "sources", _ANY, "publishedDate"),
    ("integrations", _ANY, "platform"),
    ("integrations", _ANY, "features", _ANY),
    ("models", _ANY, "name"),
    ("models", _ANY, "provider"),
    ("models", _ANY, "tier"),
}
_URLS = {
    ("capabilities", _ANY, "sources", _ANY, "url"),
    ("capabilities", _ANY, "sources", _ANY, "supersededBy"),
    ("capabilities", _ANY, "implementationNotes", "startUrl"),
    ("documentation", _ANY),
}
_UNBOUNDED = {("capabilities", _ANY, "useWhen", _ANY, "pattern")}
# The alias table: phrase -> capability name, both single-line.
_ALIAS_SINGLE_LINE = {("aliases", _ANY)}

_LINE_BREAKS = {"Zl", "Zp"}  # U+2028, U+2029: line breaks to some readers, invisible to others


def check_document_text(source: SourceFile) -> list[Diagnostic]:
    """Character and length rules for a capability document, and the slug rule for capability names."""
    problems = list(_check_strings(source, _SINGLE_LINE, _URLS))
    capabilities = source.data.get("capabilities") if isinstance(source.data, dict) else None
    for index, capability in enumerate(capabilities if isinstance(capabilities, list) else ()):
        name = capability.get("name") if isinstance(capability, dict) else None
        if isinstance(name, str) and name:
            problems += _slug_problems(source, ("capabilities", index, "name"), name)
    return problems


def check_alias_text(source: SourceFile) -> list[Diagnostic]:
    """Character and length rules for the alias table (its phrases are also limited by the schema)."""
    return list(_check_strings(source, _ALIAS_SINGLE_LINE, set()))


def quote(value: object, limit: int = QUOTE_MAX) -> str:
    """`value` for a message: in quotes, invisible and control characters escaped, cut to `limit` characters."""
    text = visible(value if isinstance(value, str) else str(value))
    if len(text) > limit:
        text = f"{text[: limit - 1]}…"
    return f"'{text}'"


def _check_strings(
    source: SourceFile, single: set[tuple[Any, ...]], urls: set[tuple[Any, ...]]
) -> Iterator[Diagnostic]:
    for parts, text, is_key in _strings(source.data, ()):
        if _isplain(text) and len(text) <= SINGLE_LINE_MAX:
            continue  # the common case, decided without classifying the field
        kind = "single" if is_key else _kind(parts, single, urls)
        found = _character_problem(text, single_line=kind != "multi") or _length_problem(text, kind)
        if found:
            message, hint, code = found
            yield source.diagnostic(parts, "error", message, hint, code, key=is_key)


def _isplain(text: str) -> bool:
    """Printable (no control, format, separator or surrogate character but the space): nothing to check."""
    return text.isprintable()


def _kind(parts: tuple[Any, ...], single: set[tuple[Any, ...]], urls: set[tuple[Any, ...]]) -> str:
    """"single", "url", "pattern" (single-line, length checked elsewhere) or "multi" for the field at `parts`."""
    shape = tuple(_ANY if isinstance(part, int) else part for part in parts)
    for candidate in (shape, (*shape[:-1], _ANY)):
        if candidate in _UNBOUNDED:
            return "pattern"
        if candidate in single:
            return "single"
        if candidate in urls:
            return "url"
    return "multi"


def _strings(value: Any, parts: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str, bool]]:
    """(path, text, is_key) for every string value and every object key below `value`."""
    if isinstance(value, str):
        yield parts, value, False
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield (*parts, key), key, True
            yield from _strings(item, (*parts, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*parts, index))


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


def _length_problem(text: str, kind: str) -> tuple[str, str, str] | None:
    limit = {"single": SINGLE_LINE_MAX, "url": URL_MAX}.get(kind)
    if limit is None or len(text) <= limit:
        return None
    what = "URL" if kind == "url" else "single-line field"
    return f"{len(text):,} characters long (at most {limit:,} in a {what})", _LENGTH_HINT, "too-long"


_LENGTH_HINT = "shorten it; details belong in the description"


def _slug_problems(source: SourceFile, parts: tuple[Any, ...], name: str) -> list[Diagnostic]:
    """The build names a capability's URI and files by its slug: a name must give one, of bounded length."""
    slug = slugify(name)
    if not slug:
        message = f"capability name {quote(name)} has no letters or digits (a-z, 0-9) to form a slug"
        hint = "the slug names the capability's URI and files; add a letter or digit"
    elif len(slug) > SLUG_MAX and len(name) <= SINGLE_LINE_MAX:  # (a longer name is reported as too long)
        message = f"capability name gives a slug of {len(slug):,} characters (at most {SLUG_MAX})"
        hint = "shorten the name; the slug names the capability's URI and files"
    else:
        return []
    return [source.diagnostic(parts, "error", message, hint, "name-slug")]
