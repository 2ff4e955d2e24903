"""Links in catalog text and the catalog's addresses (`capidx.compiler.markup` says why).

A warning for Markdown link or image syntax in text: the build makes such syntax inert (`![x](…)` is shown
as `![x] (…)`), so the text still reads, but the author probably meant a link; the warning says where, and
what to write instead. An error with `--strict`.

An error for an address (a source's `url` or `supersededBy`, `implementationNotes.startUrl`, a
`documentation` link) that is not an absolute http(s) URL: the schema's `uri` format lets
`javascript:alert(1)` and `file:///etc/passwd` through, and the address is served to models in tool answers
and written into llms-full.txt as it is. A lint rule rather than a schema `pattern`: the message says what is
wrong in words, and the rule holds when `--schema` replaces the bundled schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.markup import DOCUMENTATION_KEYS, URL_KEYS, link_syntax, web_address
from capidx.compiler.validate.load import SourceFile
from capidx.compiler.validate.textrules import cited_by, items, quote, strings

_HINT = "write it as plain text; put an address in `sources`, which capidx links itself"


def check_document(source: SourceFile) -> list[Diagnostic]:
    """One warning per string (value or key) that holds Markdown link or image syntax; addresses excepted."""
    if "]" not in source.text and "<" not in source.text and "\\u" not in source.text:
        return []  # (a `\\u` escape could spell a bracket the text does not show)
    problems = []
    for parts, text, is_key in strings(source.data, ()):
        if not is_key and parts and parts[-1] in URL_KEYS:
            continue
        if (found := link_syntax(text)) is not None:
            message = f"Markdown link or image syntax or HTML ({quote(found)}); the build shows it as text"
            problems.append(source.diagnostic(parts, "warning", message, _HINT, "links", key=is_key))
    return problems


_ADDRESS_HINT = "write https:// (or http://), a host without a user name, then the path: capidx links only these"


def check_addresses(source: SourceFile) -> list[Diagnostic]:
    """An error (code `url-scheme`) for each address of a capability document that is not `web_address`."""
    problems = []
    for parts, value in _addresses(source.data):
        if isinstance(value, str) and not web_address(value):
            message = f"{quote(value)} is not an absolute http(s) URL{_cited_by(source, parts)}"
            problems.append(source.diagnostic(parts, "error", message, _ADDRESS_HINT, "url-scheme"))
    return problems


# RFC 2606 and RFC 6761: names reserved for examples and tests, which no real documentation lives on.
_EXAMPLE_DOMAINS = ("example.com", "example.org", "example.net")
_EXAMPLE_TLDS = ("example", "test", "invalid", "localhost")


def placeholder_host(url: str) -> str | None:
    """The host of `url` when it is a reserved example name (`example.com` and its subdomains, RFC 2606's `.org` and
    `.net`, the `.example`, `.test`, `.invalid` and `.localhost` TLDs, `localhost`), else None."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return None
    if not host:
        return None
    if any(host == domain or host.endswith(f".{domain}") for domain in _EXAMPLE_DOMAINS):
        return host
    return host if host.rpartition(".")[2] in _EXAMPLE_TLDS else None


def check_placeholders(source: SourceFile) -> list[Diagnostic]:
    """A warning (code `placeholder-url`) for each address on a reserved example domain (`capidx init` writes
    `https://example.com/replace-with-…`): it validates as a URL, yet the page it names states nothing. A record's
    addresses of one field (`url`, `supersededBy`, `startUrl`) are found in reading order, so past a file's cap of
    them they are only counted (`SourceFile.past_cap`)."""
    problems = []
    for parts, value in _addresses(source.data):
        if not isinstance(value, str) or not web_address(value) or (host := placeholder_host(value)) is None:
            continue
        if parts[0] == "capabilities" and source.past_cap(f"placeholder-url {parts[-1]}", parts):
            continue
        message = f"placeholder URL: {quote(host)} is a domain reserved for examples{_cited_by(source, parts)}"
        if parts[-1] == "url":
            hint = "replace it with the page that states the fact"
        else:
            hint = "replace it with the real address"
        problems.append(source.diagnostic(parts, "warning", message, hint, "placeholder-url"))
    return problems


def _cited_by(source: SourceFile, parts: tuple[Any, ...]) -> str:
    """`cited_by` for an address of one of a record's sources (`url`, `supersededBy`), else ""."""
    if parts[0] == "capabilities" and parts[2] == "sources":
        return cited_by(source.data["capabilities"][parts[1]])
    return ""


def _addresses(data: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(JSON path, value) of every address field present; null and other types are the schema's to judge."""
    documentation = data.get("documentation") if isinstance(data, dict) else None
    if isinstance(documentation, dict):
        yield from ((("documentation", key), documentation[key]) for key in DOCUMENTATION_KEYS if key in documentation)
    for index, capability in items(data, "capabilities"):
        notes = capability.get("implementationNotes")
        if isinstance(notes, dict) and "startUrl" in notes:
            yield ("capabilities", index, "implementationNotes", "startUrl"), notes["startUrl"]
        for number, citation in items(capability, "sources"):
            for key in ("url", "supersededBy"):
                if key in citation:
                    yield ("capabilities", index, "sources", number, key), citation[key]
