"""The site's data (issue 17): the JSON API documents and the page's rows, from the catalog views (pure).

No second source of truth: a record is described by `derive.record_fields` (what the MCP lookup and compare
documents say), its matrix cell by `views.mark` and its traits by `views.record_traits` (what the Markdown
shows), its sources numbered by `views.References` (the numbers the Markdown documents cite). The page is
rendered from these same values (compiler/render/site_page.py), so JSON, Markdown and HTML cannot disagree.

URLs are relative: `api/...` documents link to each other relative to `api/`, so the site works from any
sub-path (a GitHub Pages project site) and from a folder opened in a browser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capidx.compiler.catalog import Agent, CanonicalCapability, Capability, Catalog, Source
from capidx.compiler.derive import tool_documents as derive
from capidx.compiler.derive.stats import calendar_date, catalog_counts, description_semantics, reference_date
from capidx.compiler.render import views

TIERS = tuple(views.TIER_MARKS)  # free, pro, business, enterprise: the schema's order
# The source status `capidx verify --write` sets when a page no longer supports its claim (verdicts.py). Not
# `unknown`: verify sets it for a page that is gone, but it is also what unchecked data says (the bundled catalog).
FLAGGED_STATUSES = ("modified",)
# Source statuses, most severe first: a URL's row shows the worst status among its newest verifications (flagged,
# then gone or unchecked, then deprecated), so that one record's bad news is not hidden by another's; no status last.
STATUS_SEVERITY = ("modified", "unknown", "deprecated", "active")

# Where the Markdown copies live inside the site (llms.txt links to them; the site is uploaded on its own).
MARKDOWN_DIRS = {"agent": "md/agents", "capability": "md/capabilities", "category": "md/categories"}


def api_url(kind: str, value: str) -> str:
    """The URL of a per-item API document relative to `api/` (e.g. `agents/claude-code.json`)."""
    return f"{_PLURAL[kind]}/{value}.json"


def markdown_url(kind: str, value: str) -> str:
    """The URL of a per-item Markdown copy relative to the site root (e.g. `md/agents/claude-code.md`)."""
    return f"{MARKDOWN_DIRS[kind]}/{value}.md"


_PLURAL = {"agent": "agents", "capability": "capabilities", "category": "categories"}


def cell(record: Capability | None) -> dict[str, Any]:
    """A matrix cell as data: the Markdown's mark (`✓p`), and the facts it abbreviates, spelled out."""
    value: dict[str, Any] = {"mark": views.mark(record), "recorded": record is not None}
    if record is not None:
        value["available"] = record.available
        if record.tier:
            value["tier"] = record.tier
        if record.deprecated:
            value["deprecated"] = True
    return value


def record_view(record: Capability, refs: views.References) -> dict[str, Any]:
    """One agent's record: `derive.record_fields` with its sources replaced by their citation labels
    (`1`, `2a`: the numbers of the document's `sources`), plus limitations, requirements and traits."""
    fields = derive.record_fields(record)
    fields.pop("sources", None)
    fields["mark"] = views.mark(record)
    fields["traits"] = views.record_traits(record)
    if record.limitations:
        fields["limitations"] = list(record.limitations)
    if record.requirements:
        fields["requirements"] = list(record.requirements)
    fields["cites"] = [refs.cite(source) for source in record.sources]
    return fields


def references_view(refs: views.References) -> list[dict[str, Any]]:
    """The numbered sources of a document: one row per URL and variant, labelled as the Markdown cites them."""
    rows = []
    for entry in refs.entries:
        for label, source in entry.variants:
            row = {"cite": f"{entry.number}{label}", "number": entry.number}
            row.update(derive.source_fields(source, excerpt=True))
            rows.append(row)
    return rows


def agent_identity(agent: Agent) -> dict[str, Any]:
    value: dict[str, Any] = {
        "id": agent.id,
        "name": agent.name,
        "vendor": agent.vendor,
        "version": agent.version,
        "lastUpdated": agent.last_updated,
    }
    if agent.documentation:
        value["documentation"] = dict(agent.documentation)
    return value


def agents_document(catalog: Catalog) -> dict[str, Any]:
    rows = []
    for agent in catalog.agents:
        row = agent_identity(agent)
        row["capabilities"] = len(agent.capabilities)
        row["available"] = sum(record.available for record in agent.capabilities)
        row["url"] = api_url("agent", agent.id)
        row["markdown"] = "../" + markdown_url("agent", agent.id)
        rows.append(row)
    return {"agents": rows}


def capabilities_document(catalog: Catalog) -> dict[str, Any]:
    """Every canonical capability with its matrix row: the comparison at a glance."""
    rows = []
    for capability in catalog.capabilities:
        row = derive.identity(capability)
        row["availableFor"] = list(capability.available_for)
        row["cells"] = {agent.id: cell(record) for agent, record in views.agent_records(capability, catalog.agents)}
        row["url"] = api_url("capability", capability.slug)
        row["markdown"] = "../" + markdown_url("capability", capability.slug)
        rows.append(row)
    legend = LEGEND | DEPRECATED_LEGEND if views.any_deprecated(catalog.capabilities) else LEGEND
    return {"agents": list(catalog.agent_ids), "capabilities": rows, "legend": legend}


LEGEND = {
    views.AVAILABLE: "available (tier not stated)",
    **{views.AVAILABLE + mark: f"available on the {tier} tier" for tier, mark in views.TIER_MARKS.items()},
    views.UNAVAILABLE: "not available",
    views.NOT_RECORDED: "not recorded",
}
DEPRECATED_LEGEND = {views.DEPRECATED: "deprecated (after an available mark)"}


def capability_document(catalog: Catalog, capability: CanonicalCapability) -> dict[str, Any]:
    """One capability across agents: each agent's record (or `recorded: false`) and the numbered sources."""
    refs = views.References(capability.records)
    agents = []
    for agent, record in views.agent_records(capability, catalog.agents):
        row: dict[str, Any] = {"agent": agent.id, "name": agent.name}
        row.update(record_view(record, refs) | {"recorded": True} if record else cell(None))
        agents.append(row)
    return {
        "capability": derive.identity(capability) | {"availableFor": list(capability.available_for)},
        "agents": agents,
        "sources": references_view(refs),
        "markdown": "../../" + markdown_url("capability", capability.slug),
    }


def agent_document(agent: Agent, names: Mapping[str, str]) -> dict[str, Any]:
    """One agent's records and numbered sources; each record named as the catalog spells its capability (`names`,
    slug -> name), which a record may spell otherwise ('Plan mode')."""
    refs = views.References(agent.capabilities)
    rows = [
        _record_identity(record, names)
        | record_view(record, refs)
        | {"url": "../" + api_url("capability", record.slug)}
        for record in agent.capabilities
    ]
    document: dict[str, Any] = {"agent": agent_identity(agent)}
    if agent.integrations:  # what the Markdown's "Integrations:" line says, as data
        document["integrations"] = [
            _present(platform=i.platform, supported=i.supported, features=list(i.features)) for i in agent.integrations
        ]
    if agent.models:
        document["models"] = [
            _present(name=m.name, provider=m.provider, available=m.available, tier=m.tier, note=m.note)
            for m in agent.models
        ]
    return document | {
        "capabilities": rows,
        "sources": references_view(refs),
        "markdown": "../../" + markdown_url("agent", agent.id),
    }


def _present(**fields: Any) -> dict[str, Any]:
    """The fields the data states (None and empty lists left out, as everywhere in the API)."""
    return {key: value for key, value in fields.items() if value is not None and value != []}


def _record_identity(record: Capability, names: Mapping[str, str]) -> dict[str, Any]:
    return {"name": names.get(record.slug, record.name), "slug": record.slug, "category": record.category}


def category_document(catalog: Catalog, category: str, capabilities: Sequence[CanonicalCapability]) -> dict[str, Any]:
    rows = [
        derive.identity(capability)
        | {
            "cells": {agent.id: cell(record) for agent, record in views.agent_records(capability, catalog.agents)},
            "url": "../" + api_url("capability", capability.slug),
        }
        for capability in capabilities
    ]
    return {
        "category": category,
        "agents": list(catalog.agent_ids),
        "capabilities": rows,
        "markdown": "../../" + markdown_url("category", category),
    }


@dataclass(frozen=True)
class SourceQuality:
    """One cited URL's freshness: its newest verification, age against the catalog's reference date, status."""

    url: str
    verified_date: str | None
    age_days: int | None
    stale: bool
    status: str | None
    cited_by: tuple[tuple[str, str], ...]  # (agent, capability slug)

    @property
    def flagged(self) -> bool:
        return self.status in FLAGGED_STATUSES

    def as_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"url": self.url, "stale": self.stale, "flagged": self.flagged}
        if self.verified_date:
            row["verifiedDate"] = self.verified_date
            row["ageDays"] = self.age_days
        if self.status:
            row["status"] = self.status
        row["citedBy"] = [{"agent": agent, "capability": slug} for agent, slug in self.cited_by]
        return row


def source_quality(catalog: Catalog, old_days: int) -> list[SourceQuality]:
    """Per unique URL (sorted): its freshness and status are those `_newest` picks from its citations; the records
    citing it once each, in the (agent, capability) order `derive.citations_by_url` gives.

    No wall clock: ages count from the catalog's reference date (stats.py), so a build is reproducible."""
    today = calendar_date(reference_date(catalog))
    rows = []
    for citations in derive.citations_by_url(record for agent in catalog.agents for record in agent.capabilities):
        freshest = _newest([source for _, source in citations])
        verified = freshest.verified_date
        day = calendar_date(verified)  # None for text a schema of the user's let through as a date (stats.py)
        age = (today - day).days if day and today else None
        rows.append(
            SourceQuality(
                url=freshest.url,
                verified_date=verified,
                age_days=age,
                stale=age is not None and age > old_days,
                status=freshest.status,
                cited_by=tuple(dict.fromkeys((record.agent, record.slug) for record, _ in citations)),
            )
        )
    return rows


def _newest(sources: Sequence[Source]) -> Source:
    """The citation of one URL whose date and status its row shows: the newest verifiedDate and, among the
    citations of that date, the most severe status (`STATUS_SEVERITY`). Its date and status do not depend on
    the citations' order, and a URL one record reports modified is flagged even where another says active."""
    newest = max(source.verified_date or "" for source in sources)
    return min((source for source in sources if (source.verified_date or "") == newest), key=_severity)


def _severity(source: Source) -> int:
    """0 for the most severe status; no status (or one this version does not know) ranks last."""
    status = source.status
    return STATUS_SEVERITY.index(status) if status in STATUS_SEVERITY else len(STATUS_SEVERITY)


def quality_counts(rows: Sequence[SourceQuality]) -> dict[str, int]:
    """The page's and quality.json's headline figures over unique URLs."""
    return {
        "sources": len(rows),
        "verified": sum(1 for row in rows if row.verified_date and not row.stale and not row.flagged),
        "unverified": sum(1 for row in rows if not row.verified_date),
        "stale": sum(1 for row in rows if row.stale),
        "flagged": sum(1 for row in rows if row.flagged),
        # `capidx verify --write` sets `unknown` for a page that is gone (broken); unchecked data says it too.
        # The two are told apart by a verifiedDate: a page once verified and now unknown is gone.
        "statusUnknown": sum(1 for row in rows if row.status == "unknown"),
        "gone": sum(1 for row in rows if row.status == "unknown" and row.verified_date),
        "unknownUnverified": sum(1 for row in rows if row.status == "unknown" and not row.verified_date),
    }


def quality_document(catalog: Catalog, old_days: int, rows: Sequence[SourceQuality]) -> dict[str, Any]:
    """`rows`: `source_quality(catalog, old_days)` (the page shows its counts too: computed once)."""
    counts = catalog_counts(catalog, old_days)
    return {
        "referenceDate": reference_date(catalog),
        "staleAfterDays": old_days,
        "urls": quality_counts(rows),
        "citations": counts["sources"],
        "verification": (
            "`capidx verify --write` records its verdicts in the catalog: a verified source gets a verifiedDate "
            "and status active; one whose page no longer supports the claim gets status modified, one whose "
            "page is gone status unknown. `flagged` counts status modified only: unknown is also what unchecked "
            "data says, so `statusUnknown` is split into `gone` (unknown after a verification) and "
            "`unknownUnverified` (unknown and never verified)."
        ),
        "sources": [row.as_json() for row in rows],
        "descriptions": description_semantics(catalog),
    }


def page_counts(catalog: Catalog, quality: Sequence[SourceQuality]) -> dict[str, int]:
    """The page's counts: canonical capabilities, agents, records, and the sources' quality figures."""
    counts = quality_counts(quality)
    return {
        "capabilities": len(catalog.capabilities),
        "agents": len(catalog.agents),
        "records": sum(len(agent.capabilities) for agent in catalog.agents),
        **counts,
    }
