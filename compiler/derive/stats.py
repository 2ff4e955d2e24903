"""stats.json: the catalog's counts a model can use, and the description figures of quality.json (pure).

stats.json is a resource listed by default, so it holds only what helps a model answer: agents, records per
agent, category, tier, maturity and status, and source freshness. Build metadata (every artifact's size and
tokens, budgets) is in manifest.json and `capidx report`, not here.

No wall clock: a source is *stale* when it was verified more than `staleness.old_days` days before
the catalog's reference date, the newest date in the data (agents' lastUpdated, sources'
verifiedDate). The same data therefore always gives the same stats, whenever it is built.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from capidx.compiler.catalog import Catalog, Source
from capidx.compiler.derive.semantics import description_stats
from capidx.compiler.validate.formats import conforms

LOWEST_DESCRIPTIONS = 5  # how many of the least informative descriptions quality.json names
UNSPECIFIED = "unspecified"
NOTE = (  # what a model would otherwise guess: which figures count records, and which date "stale" is against
    "capabilities and the by* counts count records (one per agent and capability), canonicalCapabilities the "
    "distinct capabilities; a source is stale when verified more than staleAfterDays days before referenceDate, "
    "the newest date in the catalog (not the build date)."
)


def reference_date(catalog: Catalog) -> str | None:
    """The newest date in the data (`calendar_date`s only), or None when it holds none."""
    dates = [agent.last_updated[:10] for agent in catalog.agents]
    dates += [source.verified_date for source in _citations(catalog) if source.verified_date]
    dates = [day for day in dates if calendar_date(day) is not None]
    return max(dates) if dates else None


def calendar_date(text: str | None) -> date | None:
    """`text` as a date when it is one written YYYY-MM-DD (the `date` format, `formats.conforms`), else None.

    The bundled schema makes every `verifiedDate` (and the start of every `lastUpdated`) such a date, but a schema
    given by --schema or paths.schema may allow any text, and validate then passes: a date that is none
    (`2024-13-45`) is read as no date (no age, never stale, not the reference date) rather than ending the build
    in a traceback, so that the build passes where validate does. The text itself is still shown as written."""
    return date.fromisoformat(text) if text and conforms(text, "date") else None


def _citations(catalog: Catalog) -> Iterable[Source]:
    for agent in catalog.agents:
        for record in agent.capabilities:
            yield from record.sources


def catalog_counts(catalog: Catalog, old_days: int) -> dict[str, Any]:
    records = [record for agent in catalog.agents for record in agent.capabilities]
    return {
        "agents": len(catalog.agents),
        "capabilities": len(records),
        "available": sum(record.available for record in records),
        "canonicalCapabilities": len(catalog.capabilities),
        "categories": len(catalog.categories),
        "aliases": len(catalog.alias_table),
        "byAgent": {
            agent.id: {
                "capabilities": len(agent.capabilities),
                "available": sum(record.available for record in agent.capabilities),
            }
            for agent in catalog.agents
        },
        "byCategory": _count(record.category for record in records),
        "byTier": _count(record.tier or UNSPECIFIED for record in records),
        "byMaturity": _count(record.maturity or UNSPECIFIED for record in records),
        "byStatus": _count(record.status or UNSPECIFIED for record in records),
        "sources": _source_counts(catalog, old_days),
    }


def _count(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def _days_before(reference: str, days: int) -> str:
    """The ISO date `days` before `reference`; the first date there is when that is before year 1 (a catalog dated
    '0001-02-01': nothing is older than its reference by that much)."""
    try:
        return (date.fromisoformat(reference) - timedelta(days=days)).isoformat()
    except OverflowError:
        return date.min.isoformat()


def _source_counts(catalog: Catalog, old_days: int) -> dict[str, Any]:
    citations = list(_citations(catalog))
    reference = reference_date(catalog)
    cutoff = _days_before(reference, old_days) if reference else None
    verified = [source.verified_date for source in citations if source.verified_date]
    return {
        "citations": len(citations),
        "unique": len({source.url for source in citations}),
        "unverified": len(citations) - len(verified),
        "stale": sum(1 for day in verified if cutoff and calendar_date(day) and day < cutoff),
        "staleAfterDays": old_days,
        "referenceDate": reference,
    }


def description_semantics(catalog: Catalog) -> dict[str, Any]:
    """Term entropy (bits) of every record's description: mean, min and the least informative ones.

    `lowest` names the `LOWEST_DESCRIPTIONS` records with the lowest entropy (ties: by slug, then agent),
    the ones `capidx validate` warns about first (lint.min_description_entropy).
    """
    rows = sorted(
        (description_stats(record.description).entropy, record.slug, record.agent)
        for agent in catalog.agents
        for record in agent.capabilities
    )
    return {
        "descriptions": len(rows),
        "meanEntropy": round(sum(row[0] for row in rows) / len(rows), 3) if rows else 0.0,
        "minEntropy": rows[0][0] if rows else 0.0,
        "lowest": [
            {"capability": slug, "agent": agent, "entropy": entropy}
            for entropy, slug, agent in rows[:LOWEST_DESCRIPTIONS]
        ],
    }


def stats_document(catalog: Catalog, old_days: int) -> dict[str, Any]:
    return {"catalog": catalog_counts(catalog, old_days), "note": NOTE}
