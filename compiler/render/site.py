"""The build's `site/` (issue 17): the JSON API, llms.txt / llms-full.txt and the page, as ordinary artifacts.

Each file is one artifact, listed in the manifest, measured, budgeted and written atomically with the rest.
Three steps, because later files quote earlier files' measured sizes:

1. `with_markdown_copies` passes the Markdown artifacts through and adds their copies under `site/`
   (`site/md/...`, and `site/llms-full.txt` = full.md): the site is uploaded on its own (GitHub Pages uploads
   `build/site`), so what llms.txt links to must be inside it. Same text, rendered once.
2. `site_artifacts`: the API documents, the page, its assets and llms.txt (which states each linked
   document's tokens).
3. `api_index_artifact`: `site/api/index.json`, which lists every other site file with its URL, media type,
   size and tokens (it cannot list its own: its figures are in manifest.json).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from capidx.compiler.artifacts import Artifact, Measured, make_artifact
from capidx.compiler.catalog import Catalog
from capidx.compiler.diagnostics import plural
from capidx.compiler.render import site_data, site_page
from capidx.compiler.render.site_llms import llms_txt
from capidx.schema.text import canonical_json

SITE = "site/"
API = SITE + "api/"
INDEX_PATH = API + "index.json"
LLMS_PATH, LLMS_FULL_PATH, PAGE_PATH = SITE + "llms.txt", SITE + "llms-full.txt", SITE + "index.html"
API_FORMAT = 1

_COPIED_KINDS = frozenset(site_data.MARKDOWN_DIRS)  # agent, capability, category: each kind's parameter has its name


@dataclass(frozen=True)
class SiteSettings:
    prefix: str  # the MCP URI prefix (the API links each document to its MCP equivalent)
    title: str
    version: str
    input_digest: str
    old_days: int  # staleness.old_days: when a source counts as stale
    encodings: tuple[str, ...]  # the first is the primary one (llms.txt states its counts)


def with_markdown_copies(artifacts: Iterable[Artifact], prefix: str) -> Iterator[Artifact]:
    """The artifacts, each per-agent / per-capability / per-category document followed by its site copy,
    and full.md by `site/llms-full.txt`."""
    for artifact in artifacts:
        yield artifact
        if artifact.kind == "full":
            yield make_artifact(
                "llms-full",
                LLMS_FULL_PATH,
                prefix,
                "llms-full.txt",
                "The full index in one Markdown file (llms.txt convention), the text of full.md.",
                artifact.text,
            )
        elif artifact.kind in _COPIED_KINDS:
            parameter = artifact.kind
            value = dict(artifact.params)[parameter]
            yield make_artifact(
                "site-markdown",
                SITE + site_data.markdown_url(artifact.kind, value),
                prefix,
                artifact.title,
                f"Site copy of {artifact.path} (linked from llms.txt).",
                artifact.text,
                **{parameter: value},
            )


def site_artifacts(catalog: Catalog, settings: SiteSettings, measured: Sequence[Measured]) -> Iterator[Artifact]:
    """The API documents, the page and its assets, then llms.txt (from `measured`: the copies' tokens)."""
    prefix = settings.prefix
    yield _json(
        "site-agents", API + "agents.json", prefix, "Agents (JSON)", "Every agent.", site_data.agents_document(catalog)
    )
    yield _json(
        "site-capabilities",
        API + "capabilities.json",
        prefix,
        "Capabilities (JSON)",
        "Every canonical capability with its row of the matrix.",
        site_data.capabilities_document(catalog),
    )
    rows, agents = [], []
    names = {capability.slug: capability.name for capability in catalog.capabilities}
    for agent in catalog.agents:
        document = site_data.agent_document(agent, names)
        url = site_data.api_url("agent", agent.id)
        agents.append(site_page.agent_view(document, url, site_data.markdown_url("agent", agent.id)))
        yield _json(
            "site-agent",
            API + url,
            prefix,
            f"{agent.name} (JSON)",
            f"Every capability of {agent.name} with numbered sources.",
            document,
            agent=agent.id,
        )
    for capability in catalog.capabilities:
        document = site_data.capability_document(catalog, capability)
        url = site_data.api_url("capability", capability.slug)
        # every record's aliases, not only the shared ones: a search finds a capability by any agent's word for it
        vocabulary = list(
            dict.fromkeys([*capability.table_aliases, *(a for r in capability.records for a in r.aliases)])
        )
        rows.append(
            site_page.page_row(document, url, site_data.markdown_url("capability", capability.slug), vocabulary)
        )
        yield _json(
            "site-capability",
            API + url,
            prefix,
            f"{capability.name} across agents (JSON)",
            f"{capability.name} compared across agents, with numbered sources.",
            document,
            capability=capability.slug,
        )
    for category, capabilities in catalog.by_category().items():
        yield _json(
            "site-category",
            API + site_data.api_url("category", category),
            prefix,
            f"{category} (JSON)",
            f"The matrix of the {category} category.",
            site_data.category_document(catalog, category, capabilities),
            category=category,
        )
    quality = site_data.source_quality(catalog, settings.old_days)
    yield _json(
        "site-quality",
        API + "quality.json",
        prefix,
        "Source quality (JSON)",
        "Freshness and status of every cited URL.",
        site_data.quality_document(catalog, settings.old_days, quality),
    )
    page = site_page.render_page(
        catalog,
        title=settings.title,
        version=settings.version,
        old_days=settings.old_days,
        quality=quality,
        rows=rows,
        agents=agents,
    )
    yield make_artifact("site-page", PAGE_PATH, prefix, "Site page", "The page for people.", page)
    yield make_artifact(
        "site-script",
        SITE + "script.js",
        prefix,
        "Site script",
        "Filters and views of the page.",
        site_page.asset_text("script.js"),
    )
    yield make_artifact(
        "site-style",
        SITE + "style.css",
        prefix,
        "Site style sheet",
        "The page's style sheet.",
        site_page.asset_text("style.css"),
    )
    yield make_artifact(
        "llms",
        LLMS_PATH,
        prefix,
        "llms.txt",
        "Links to the site's Markdown (llms.txt convention).",
        llms_txt(catalog, settings.title, _tokens_by_path(measured, settings.encodings[0])),
    )


def _json(kind: str, path: str, prefix: str, title: str, blurb: str, value: Any, **params: str) -> Artifact:
    return make_artifact(kind, path, prefix, title, blurb, canonical_json(value) + "\n", **params)


def _tokens_by_path(measured: Sequence[Measured], primary: str) -> dict[str, int]:
    return {item.artifact.path: item.tokens[primary] for item in measured if item.artifact.path.startswith(SITE)}


# name, kind, URL template relative to api/ ({parameter} when per item), parameter, MCP equivalent, description
_ENDPOINTS: tuple[tuple[str, str, str, str | None, str, str], ...] = (
    (
        "agents",
        "site-agents",
        "agents.json",
        None,
        "resource {prefix}summary",
        "Every agent: identity, documentation links, counts, and the URL of its document.",
    ),
    (
        "capabilities",
        "site-capabilities",
        "capabilities.json",
        None,
        "resource {prefix}summary",
        "Every canonical capability with one cell per agent (the comparison matrix).",
    ),
    (
        "agent",
        "site-agent",
        "agents/{agent}.json",
        "agent",
        "resource {prefix}agents/{agent}",
        "One agent's capabilities with details and numbered sources.",
    ),
    (
        "capability",
        "site-capability",
        "capabilities/{capability}.json",
        "capability",
        "resource {prefix}capabilities/{capability}; tool compare_capability",
        "One capability compared across agents: each agent's record and the numbered sources.",
    ),
    (
        "category",
        "site-category",
        "categories/{category}.json",
        "category",
        "resource {prefix}categories/{category}",
        "One category's matrix.",
    ),
    (
        "quality",
        "site-quality",
        "quality.json",
        None,
        "resource {prefix}stats",
        "Freshness and status of every cited URL (what `capidx verify --write` recorded).",
    ),
    (
        "llms.txt",
        "llms",
        "../llms.txt",
        None,
        "resource {prefix}summary",
        "llms.txt: links to one Markdown document per agent, capability and category.",
    ),
    (
        "llms-full.txt",
        "llms-full",
        "../llms-full.txt",
        None,
        "resource {prefix}full",
        "The full index in one Markdown file.",
    ),
    (
        "markdown agent",
        "site-markdown",
        "../md/agents/{agent}.md",
        "agent",
        "resource {prefix}agents/{agent}",
        "One agent's Markdown document.",
    ),
    (
        "markdown capability",
        "site-markdown",
        "../md/capabilities/{capability}.md",
        "capability",
        "resource {prefix}capabilities/{capability}",
        "One capability's Markdown document.",
    ),
    (
        "markdown category",
        "site-markdown",
        "../md/categories/{category}.md",
        "category",
        "resource {prefix}categories/{category}",
        "One category's Markdown document.",
    ),
    ("page", "site-page", "../index.html", None, "", "The page for people."),
    ("script", "site-script", "../script.js", None, "", "The page's script."),
    ("style", "site-style", "../style.css", None, "", "The page's style sheet."),
)


def api_index(catalog: Catalog, settings: SiteSettings, measured: Sequence[Measured]) -> dict[str, Any]:
    """index.json: every endpoint with its URL template, media type and each document's size and tokens."""
    by_kind: dict[str, list[Measured]] = {}
    for item in measured:
        if item.artifact.path.startswith(SITE):
            by_kind.setdefault(item.artifact.kind, []).append(item)
    endpoints = []
    for name, kind, template, parameter, mcp, description in _ENDPOINTS:
        items = [item for item in by_kind.get(kind, ()) if parameter is None or parameter in dict(item.artifact.params)]
        documents = []
        for item in sorted(items, key=lambda item: item.artifact.path):
            row: dict[str, Any] = dict(item.artifact.params)
            row.update(url=_relative_to_api(item.artifact.path), bytes=item.size, tokens=item.tokens)
            documents.append(row)
        endpoint: dict[str, Any] = {
            "name": name,
            "urlTemplate": template,
            "mediaType": items[0].artifact.mime_type if items else "",
            "description": description,
            "documents": documents,
        }
        if parameter:
            endpoint["parameter"] = parameter
        if mcp:
            endpoint["mcp"] = mcp.format(
                prefix=settings.prefix, agent="{agent}", capability="{capability}", category="{category}"
            )
        endpoints.append(endpoint)
    return {
        "format": API_FORMAT,
        "title": settings.title,
        "description": (
            f"{settings.title}: {plural(len(catalog.agents), 'agent')}, "
            f"{plural(len(catalog.capabilities), 'capability', 'capabilities')}. "
            "Self-describing: each endpoint lists its documents with their URL (relative to this file), size in "
            "bytes and token counts. The same build is served over MCP by `capidx serve` (see `mcp`)."
        ),
        "capidx": settings.version,
        "inputDigest": settings.input_digest,
        "encodings": list(settings.encodings),
        "mcp": {
            "uriPrefix": settings.prefix,
            "tools": ["lookup_capability", "compare_capability", "list_capabilities", "get_sources"],
        },
        "endpoints": endpoints,
    }


def _relative_to_api(path: str) -> str:
    return path[len(API) :] if path.startswith(API) else "../" + path[len(SITE) :]


def api_index_artifact(catalog: Catalog, settings: SiteSettings, measured: Sequence[Measured]) -> Artifact:
    return _json(
        "site-index",
        INDEX_PATH,
        settings.prefix,
        "Site API index",
        "Self-describing entry point of the site's JSON API.",
        api_index(catalog, settings, measured),
    )
