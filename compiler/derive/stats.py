"""stats.json: catalog counts and the measured size of every other artifact (pure).

No wall clock: a source is *stale* when it was verified more than `staleness.old_days` days before
the catalog's reference date, the newest date in the data (agents' lastUpdated, sources'
verifiedDate). The same data therefore always gives the same stats, whenever it is built.

stats.json cannot contain its own size: it lists every other artifact kind and the totals over
them; its own figures are in manifest.json like every artifact's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from typing import Any

from capidx.compiler.artifacts import CONTEXT_WINDOWS, Measured
from capidx.compiler.catalog import Catalog, Source
from capidx.compiler.derive.semantics import description_stats

LOWEST_DESCRIPTIONS = 5  # how many of the least informative descriptions stats.json names
UNSPECIFIED = "unspecified"


def reference_date(catalog: Catalog) -> str | None:
    dates = [agent.last_updated[:10] for agent in catalog.agents]
    dates += [source.verified_date for source in _citations(catalog) if source.verified_date]
    return max(dates) if dates else None


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


def _source_counts(catalog: Catalog, old_days: int) -> dict[str, Any]:
    citations = list(_citations(catalog))
    reference = reference_date(catalog)
    cutoff = (date.fromisoformat(reference) - timedelta(days=old_days)).isoformat() if reference else None
    verified = [source.verified_date for source in citations if source.verified_date]
    return {
        "citations": len(citations),
        "unique": len({source.url for source in citations}),
        "unverified": len(citations) - len(verified),
        "stale": sum(1 for day in verified if cutoff and day < cutoff),
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


def artifact_figures(measured: Sequence[Measured], encodings: Sequence[str]) -> dict[str, Any]:
    """Per artifact kind (and in total): count, bytes, words, lines, tokens, largest, context share.

    The total adds up the kinds' figures (one pass over the artifacts, not two): its largest artifact is the
    largest of the kinds' largest.
    """
    primary = encodings[0]
    kinds: dict[str, list[Measured]] = {}
    for item in measured:
        kinds.setdefault(item.artifact.kind, []).append(item)
    sums = {kind: _sums(items, encodings) for kind, items in sorted(kinds.items())}
    figures = {kind: _figures(*parts, primary) for kind, parts in sums.items()}
    largest = max((parts[1] for parts in sums.values()), key=lambda item: _size_key(item, primary), default=None)
    total = {
        "count": sum(parts[0]["count"] for parts in sums.values()),
        "bytes": sum(parts[0]["bytes"] for parts in sums.values()),
        "words": sum(parts[0]["words"] for parts in sums.values()),
        "lines": sum(parts[0]["lines"] for parts in sums.values()),
        "tokens": {name: sum(parts[0]["tokens"][name] for parts in sums.values()) for name in encodings},
    }
    return {"byKind": figures, "total": _figures(total, largest, primary)}


def _size_key(item: Measured, primary: str) -> tuple[int, str]:
    return item.tokens[primary], item.artifact.path


def _sums(items: Sequence[Measured], encodings: Sequence[str]) -> tuple[dict[str, Any], Measured | None]:
    """The counts of some artifacts, and the largest of them (most tokens; ties: the alphabetically last path)."""
    primary = encodings[0]
    counts = {
        "count": len(items),
        "bytes": sum(item.size for item in items),
        "words": sum(item.words for item in items),
        "lines": sum(item.lines for item in items),
        "tokens": {name: sum(item.tokens[name] for item in items) for name in encodings},
    }
    return counts, max(items, key=lambda item: _size_key(item, primary)) if items else None


def _figures(counts: dict[str, Any], largest: Measured | None, primary: str) -> dict[str, Any]:
    tokens = counts["tokens"]
    return {
        **counts,
        "largest": {"uri": largest.artifact.uri, "tokens": largest.tokens} if largest else None,
        "contextShare": {
            "total": _share(tokens[primary]),
            "largest": _share(largest.tokens[primary] if largest else 0),
        },
    }


def _share(tokens: int) -> dict[str, float]:
    """Percent of a context window, 3 decimals (e.g. 0.406 means 0.406 %)."""
    return {name: round(100 * tokens / size, 3) for name, size in CONTEXT_WINDOWS.items()}


def stats_document(catalog: Catalog, measured: Sequence[Measured], encodings: Sequence[str], old_days: int) -> dict:
    return {
        "catalog": catalog_counts(catalog, old_days),
        "artifacts": artifact_figures(measured, encodings),
        "semantics": description_semantics(catalog),
        "encodings": list(encodings),
        "note": "Figures cover every artifact except stats.json itself, whose size is in manifest.json.",
    }
