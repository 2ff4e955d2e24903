"""The site's page for people: index.html rendered from the API documents, plus its script and style sheet.

The page's rows are the very documents `site/api/capabilities/<slug>.json` holds (compiler/render/site_data.py),
with display labels added, so the page cannot say something the JSON does not. Rendered with autoescape on
in Jinja's immutable sandbox: every string from the data is escaped. A source or documentation address becomes
a link only when it is an absolute http(s) URL (`markup.web_address`): `capidx validate` refuses any other, and
this holds should one reach the page anyway (defense in depth: a `javascript:` href is script injection). The
template is bundled (not overridable): what it escapes is a security property, not a matter of taste.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from capidx.compiler.catalog import Catalog
from capidx.compiler.derive.stats import reference_date
from capidx.compiler.diagnostics import plural
from capidx.compiler.markup import web_address
from capidx.compiler.render import site_data
from capidx.compiler.render.phrases import join_phrases

PACKAGE, FOLDER = "capidx.templates", "site"
PAGE_TEMPLATE = "index.html.j2"
# Up to this many records (agent x capability) the page embeds every record's details (description,
# limitations, setup, sources); above it, the matrix keeps its cells and each row and card links to the
# capability's JSON and Markdown documents instead. Measured: at 20,000 records the details made a 45 MB
# page of 11 M tokens that dominated the build's memory and time and the server's start
# (docs/benchmarks.md, "Build"); a page of that size is of no use to a person anyway.
DETAIL_RECORDS = 2_000
ASSETS = ("script.js", "style.css")  # copied verbatim next to index.html


@cache
def _environment() -> jinja2.Environment:
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.PackageLoader(PACKAGE, FOLDER),
        autoescape=True,
        # The documents leave optional members out (as derive does): a missing one renders as nothing.
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters["phrases"] = join_phrases  # list items as one line of prose, as in the Markdown
    env.filters["counted"] = plural  # 1 capability, 2 capabilities, as in the Markdown
    return env


def asset_text(name: str) -> str:
    return resources.files(PACKAGE).joinpath(FOLDER, name).read_text(encoding="utf-8")


def site_inputs() -> list[tuple[str, bytes]]:
    """(name, bytes) of the page's template and assets: inputs of the build's digest."""
    folder = resources.files(PACKAGE).joinpath(FOLDER)
    return [(f"site/{name}", folder.joinpath(name).read_bytes()) for name in (PAGE_TEMPLATE, *ASSETS)]


def safe_href(url: str) -> str:
    """The URL when a browser may follow it (an absolute http or https URL), else "" (shown as text, not linked)."""
    return url if web_address(url) else ""


def _label(cell: Mapping[str, Any]) -> tuple[str, str]:
    """(text, css class) of a matrix cell: the Markdown's mark with the tier spelled out."""
    if not cell.get("recorded"):
        return "– not recorded", "unknown"
    if not cell.get("available"):
        return "✗ no", "no"
    deprecated = "deprecated" in (cell.get("status"), cell.get("maturityLevel"))  # a record's API fields
    return f"✓ {cell.get('tier') or 'yes'}" + (", deprecated" if deprecated else ""), "yes"


def _words(key: str) -> str:
    """A documentation key as a link's text: 'officialDocs' -> 'official docs'."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).lower()


def _source_rows(sources: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for source in sources:
        traits = [source["sourceGranularity"]]
        traits.append(f"verified {source['verifiedDate']}" if source.get("verifiedDate") else "unverified")
        if source.get("status"):
            traits.append(source["status"])
        rows.append({**source, "href": safe_href(source["url"]), "traits": traits})
    return rows


def _search_text(document: Mapping[str, Any], extra: Sequence[str], *, descriptions: bool = True) -> str:
    capability = document["capability"]
    parts = [capability["name"], capability["slug"], capability["category"], *extra]
    for entry in document["agents"]:
        parts.append(entry.get("terminology") or "")
        if descriptions:
            parts.append(entry.get("description") or "")
    return " ".join(part for part in parts if part).lower()


def page_row(document: Mapping[str, Any], api: str, markdown: str, vocabulary: Sequence[str]) -> dict[str, Any]:
    """A matrix row from a capability's API document (`site_data.capability_document`)."""
    agents = []
    for entry in document["agents"]:
        label, css = _label(entry)
        agents.append({**entry, "label": label, "css": css})
    tiers = sorted({entry["tier"] for entry in document["agents"] if entry.get("available") and entry.get("tier")})
    return {
        "capability": document["capability"],
        "agents": agents,
        "sources": _source_rows(document["sources"]),
        "tiers": tiers,
        "text": _search_text(document, vocabulary),
        "terms": _search_text(document, vocabulary, descriptions=False),  # what a page without details searches
        "api": api,
        "markdown": markdown,
    }


def agent_view(document: Mapping[str, Any], api: str, markdown: str) -> dict[str, Any]:
    """An agent's cards from its API document (`site_data.agent_document`)."""
    sources = {source["cite"]: source for source in _source_rows(document["sources"])}
    cards = []
    for entry in document["capabilities"]:
        label, _ = _label({"recorded": True, **entry})
        cards.append({**entry, "label": label, "sources": [sources[cite] for cite in entry["cites"]]})
    documentation = document["agent"].get("documentation", {})
    return {
        "agent": document["agent"],
        "links": [(_words(key), href) for key, url in documentation.items() if (href := safe_href(url))],
        "integrations": document.get("integrations", []),
        "models": document.get("models", []),
        "capabilities": cards,
        "available": sum(1 for card in cards if card["available"]),
        "api": api,
        "markdown": markdown,
    }


def render_page(
    catalog: Catalog,
    *,
    title: str,
    version: str,
    old_days: int,
    quality: Sequence[site_data.SourceQuality],
    rows: Sequence[dict[str, Any]],
    agents: Sequence[dict[str, Any]],
) -> str:
    template = _environment().get_template(PAGE_TEMPLATE)
    counts = site_data.page_counts(catalog, quality)
    return (
        template.render(
            details=counts["records"] <= DETAIL_RECORDS,
            title=title,
            version=version,
            counts=counts,
            stale_days=old_days,
            reference_date=reference_date(catalog),
            categories=catalog.categories,
            tiers=[tier for tier in site_data.TIERS if any(tier in row["tiers"] for row in rows)],
            rows=rows,
            agents=agents,
        ).rstrip()
        + "\n"
    )
