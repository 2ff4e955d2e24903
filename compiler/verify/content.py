"""What a page says: its visible text and its anchors, and the searches verify makes in them.

HTML is read with the standard library's `html.parser` (maintained with Python, tolerant of broken
markup, and no new dependency for the compiler); text that is not HTML is taken as it is. Scripts,
styles, templates and other invisible content are dropped. Both the page and the text searched for are
normalized the same way (`normalize`), so typography, entities and line wrapping never hide a match.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import unquote

# Elements whose content is never shown as text.
_INVISIBLE = frozenset({"script", "style", "template", "noscript", "svg", "head", "iframe", "object"})
# Void elements never get an end tag: they must not be pushed on the invisible stack.
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
# Typographic characters written differently in a page and in a catalog.
_TRANSLATION = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "`": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
        "\u00ad": None, "\u200b": None, "\u200c": None, "\u200d": None, "\ufeff": None,
    }
)  # fmt: skip
_SPACES = re.compile(r"\s+")
_SPACE_AROUND_PUNCTUATION = re.compile(r"\s+(?=[.,;:!?)\]])|(?<=[(\[])\s+")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…|\[\.\.\.\]|\[…\])\s*")
_TERM_SEPARATORS = re.compile(r"[,;()/]|\bor\b")
_MIN_TERM_LENGTH = 3


@dataclass(frozen=True)
class Page:
    """A page's visible text (normalized) and the anchor names it defines (`id=`, `<a name=>`)."""

    text: str
    anchors: frozenset[str]


def normalize(text: str) -> str:
    """Compatibility-normalized, case-folded, straight quotes and hyphens, one space between words."""
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATION).casefold()
    text = _SPACES.sub(" ", text).strip()
    return _SPACE_AROUND_PUNCTUATION.sub("", text)


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.anchors: set[str] = set()
        self._hidden: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name == "id" or (name == "name" and tag == "a")):
                self.anchors.add(value)
        if tag in _INVISIBLE and tag not in _VOID:
            self._hidden.append(tag)
        self.parts.append(" ")  # a tag separates words (block or not: a space is harmless)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name == "id" or (name == "name" and tag == "a")):
                self.anchors.add(value)
        self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._hidden:
            while self._hidden and self._hidden.pop() != tag:
                pass
        self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)

    def parse_marked_section(self, i: int, report: int = 1) -> int:
        """A marked section Python's parser does not know (`<![x`, `<![<![`) read as HTML reads it, a bogus comment
        to the next `>`: Python 3.11's `_markupbase` raised AssertionError on it, out of `feed`, and one page holding
        it ended `capidx verify` with a traceback, every other source unchecked."""
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            end = self.rawdata.find(">", i + 3)
            return -1 if end < 0 else end + 1

    def close(self) -> None:
        """Drop what is left unparsed after the whole page was fed when it is a construct the page never ends (a tag,
        comment or declaration still open at its end; `rawdata` then starts with its `<`), as HTML drops or closes
        one, none of it text. Python 3.11's `close` read it as text instead, restarting its scan at each `<` of it:
        quadratic, so a page of 100,000 `<a` (200 KB) took 45 s, and one of the 5 MB `--max-bytes` allows hours."""
        if self.rawdata.startswith("<"):
            self.rawdata = ""
        super().close()


def parse_page(body: bytes, content_type: str) -> Page:
    """The page behind a fetched body; HTML when the Content-Type says so or the body looks like it."""
    text = _decoded(body, _charset(body, content_type))
    media = content_type.split(";", 1)[0].strip().lower()
    looks_html = media in ("text/html", "application/xhtml+xml") or (
        not media and text.lstrip()[:100].lower().startswith(("<!doctype html", "<html"))
    )
    if not looks_html:
        return Page(normalize(text), frozenset())
    parser = _TextParser()
    parser.feed(text)
    parser.close()
    return Page(normalize("".join(parser.parts)), frozenset(parser.anchors))


_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def _charset(body: bytes, content_type: str) -> str:
    match = re.search(r"charset=[\"']?([A-Za-z0-9_.:-]+)", content_type, re.IGNORECASE)
    candidate = match.group(1) if match else None
    if candidate is None and (meta := _META_CHARSET.search(body[:4096])):
        candidate = meta.group(1).decode("ascii")
    try:
        return "utf-8" if candidate is None else _known(candidate)
    except LookupError:
        return "utf-8"


def _decoded(body: bytes, charset: str) -> str:
    """The body as text in `charset`, else as UTF-8. The charset is the page's to name (its Content-Type, a `<meta>`),
    and Python knows codecs that are no text encoding (`base64`, `zlib`, `rot13`: LookupError from `decode`) or that
    refuse the `replace` handler (`idna`, `undefined`: UnicodeError): either ended the whole run with a traceback."""
    try:
        return body.decode(charset, errors="replace")
    except (LookupError, UnicodeError):
        return body.decode("utf-8", errors="replace")


def _known(name: str) -> str:
    import codecs

    return codecs.lookup(name).name


def find_excerpt(page: Page, excerpt: str) -> bool:
    """The excerpt appears in the page's text; an ellipsis (`...`, `…`) in it stands for omitted words,
    so its pieces must appear in order."""
    pieces = [normalize(piece) for piece in _ELLIPSIS.split(excerpt)]
    start = 0
    for piece in filter(None, pieces):
        found = page.text.find(piece, start)
        if found < 0:
            return False
        start = found + len(piece)
    return True


def has_anchor(page: Page, fragment: str) -> bool:
    """The page defines the anchor a URL's `#fragment` points at.

    GitHub prefixes the ids it renders with `user-content-` and lets a script resolve the bare name,
    so both spellings count.
    """
    name = unquote(fragment)
    return bool({name, fragment, f"user-content-{name}"} & page.anchors)


def mentions(page: Page, names: list[str]) -> str | None:
    """The first of `names` (a capability's name, aliases, terminology) the page mentions, or None.

    A terminology such as "file edit tools (Edit, Write)" is also tried piece by piece.
    """
    for term in search_terms(names):
        if re.search(rf"(?<!\w){re.escape(term)}(?!\w)", page.text):
            return term
    return None


def search_terms(names: list[str]) -> list[str]:
    terms: list[str] = []
    for name in names:
        whole = normalize(name)
        pieces = [normalize(piece) for piece in _TERM_SEPARATORS.split(name)]
        for term in (whole, *pieces):
            if len(term) >= _MIN_TERM_LENGTH and term not in terms:
                terms.append(term)
    return terms
