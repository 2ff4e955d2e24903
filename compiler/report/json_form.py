"""The JSON form of a report (`--format json`, documented in docs/report.md); the HTML template sees it too.

Keys are camelCase like the manifest's, and stable: new keys may be added, `reportFormat` changes if an
existing key changes meaning. Ratios are fractions rounded to six places.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from capidx.compiler.report.datadiff import DataDiff, DataItem
from capidx.compiler.report.model import (
    WINDOWS,
    Budget,
    BuildInfo,
    Change,
    Delta,
    Document,
    KindRow,
    Report,
    Totals,
    share,
)


def report_to_dict(report: Report) -> dict[str, Any]:
    """The documented JSON shape (docs/report.md). Ratios are fractions rounded to 6 places."""
    return {
        "reportFormat": 1,
        "ok": report.ok,
        "budgeted": report.budgeted,
        "encoding": report.encoding,
        "windows": {key: size for key, _label, size in WINDOWS},
        "build": _info_dict(report.build),
        "baseline": _info_dict(report.baseline) if report.baseline else None,
        "kinds": [_kind_dict(row, report.encoding) for row in report.kinds],
        "totals": _totals_dict(report.totals, report.encoding),
        "largest": {kind: [_document_dict(doc) for doc in docs] for kind, docs in report.largest.items()},
        "changes": {
            "added": [_change_dict(change) for change in report.added],
            "removed": [_change_dict(change) for change in report.removed],
            "changed": [_change_dict(change) for change in report.changed],
        },
        "breaches": [_budget_dict(budget) for budget in report.breaches],
        "warnings": [
            {"kind": f.kind, "reason": f.reason, "message": f.message, "section": f.section, "budget": f.budget}
            for f in report.warnings
        ],
        "overview": [_overview_dict(item.row, item.tokens) for item in report.overview],
        "data": None if report.data is None else data_dict(report.data),
        "heldToBaseline": report.held,
    }


MAX_DATA_ITEMS = 1000  # per section: a catalog of thousands of records changed keeps a readable report


def data_dict(data: DataDiff) -> dict[str, Any]:
    """The data comparison (docs/report.md, "JSON"): every section, its count and its first items."""
    return {
        "available": data.unavailable is None,
        "unavailable": data.unavailable,
        "summary": data.summary(),
        "aliasesNotCompared": data.aliases_unread,
        "sections": {
            section.key: {
                "title": section.title,
                "count": len(section.items),
                "items": [_item_dict(item) for item in section.items[:MAX_DATA_ITEMS]],
                "more": max(0, len(section.items) - MAX_DATA_ITEMS),
            }
            for section in data.sections
        },
    }


def _item_dict(item: DataItem) -> dict[str, Any]:
    """Every field of the item, by its own name (the documented JSON form is the dataclass)."""
    return {**dataclasses.asdict(item), "fields": list(item.fields)}


def _ratio(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _shares(tokens: int) -> dict[str, float]:
    return {key: _ratio(share(tokens, size)) for key, _label, size in WINDOWS}


def _info_dict(info: BuildInfo) -> dict[str, Any]:
    return {
        "manifest": str(info.manifest),
        "capidx": info.capidx,
        "inputDigest": info.input_digest,
        "encodings": list(info.encodings),
        "uriPrefix": info.uri_prefix,
        "catalog": {"agents": info.agents, "capabilities": info.capabilities, "categories": info.categories},
    }


def _delta_dict(delta: Delta | None) -> dict[str, Any] | None:
    if delta is None:
        return None
    return {"before": delta.before, "after": delta.after, "tokens": delta.tokens, "relative": _ratio(delta.relative)}


def _budget_dict(budget: Budget) -> dict[str, Any]:
    return {
        "kind": budget.kind,
        "budget": budget.budget,
        "tokens": budget.tokens,
        "uri": budget.uri,
        "ok": budget.ok,
        "use": _ratio(budget.use),
        "over": max(0, budget.tokens - budget.budget),
        **({"heldToBaseline": True, "ownBudget": budget.own} if budget.held else {}),
        **({"baselineTokens": budget.base} if budget.base is not None else {}),
    }


def _overview_dict(row: Mapping[str, Any], tokens: int) -> dict[str, Any]:
    """A manifest `overview` row with its tokens; held to the baseline's budget, with the build's own."""
    own = {"heldToBaseline": True, "ownBudget": row["held"]} if "held" in row else {}
    return {**{key: value for key, value in row.items() if key != "held"}, **own, "tokens": tokens}


def _kind_dict(row: KindRow, encoding: str) -> dict[str, Any]:
    return {
        "kind": row.kind,
        "status": row.status,
        "documents": row.documents,
        "tokens": dict(row.tokens),
        "largest": dict(row.largest),
        "largestUri": row.largest_uri,
        "bytes": row.bytes,
        "budget": _budget_dict(row.budget) if row.budget else None,
        "share": _shares(row.largest.get(encoding, 0)),
        "delta": None
        if row.total_delta is None
        else {
            "tokens": _delta_dict(row.total_delta),
            "largest": _delta_dict(row.largest_delta),
            "documents": _delta_dict(row.documents_delta),
        },
    }


def _totals_dict(totals: Totals, encoding: str) -> dict[str, Any]:
    return {
        "documents": totals.documents,
        "tokens": dict(totals.tokens),
        "bytes": totals.bytes,
        "share": _shares(totals.tokens.get(encoding, 0)),
        "delta": _delta_dict(totals.delta),
    }


def _document_dict(doc: Document) -> dict[str, Any]:
    return {"uri": doc.uri, "path": doc.path, "title": doc.title, "tokens": doc.tokens, "share": _shares(doc.tokens)}


def _change_dict(change: Change) -> dict[str, Any]:
    return {
        "kind": change.kind,
        "uri": change.uri,
        "path": change.path,
        "before": change.before,
        "after": change.after,
        "delta": change.delta,
    }
