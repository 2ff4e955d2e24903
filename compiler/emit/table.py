"""The table `capidx build` prints: per artifact kind, docs, tokens, largest, budget and status.

Its columns are named and ordered as the first ones of `capidx report`'s table (compiler/report/formats.py),
which the quick start prints right after it: the same figure has the same name in both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from capidx.compiler.artifacts import ALL_KINDS, SINGLE_KINDS
from capidx.compiler.diagnostics import visible
from capidx.compiler.report.model import Budget

_HEADER = ("kind", "docs", "tokens", "largest", "budget", "status")
# A kind's budget status in words, here and in `capidx report`'s tables.
STATUS_TEXT = {"breach": "BREACH", "near": "near", "ok": "ok", "unbudgeted": "-"}


def kind_table(sizes: Iterable[tuple[str, int]], budgets: Iterable[Mapping[str, Any]]) -> str:
    """`sizes`: (kind, primary tokens) per artifact; `budgets`: manifest budget rows."""
    totals: dict[str, list[int]] = {}
    for kind, tokens in sizes:
        totals.setdefault(kind, []).append(tokens)
    by_kind = {row["kind"]: row for row in budgets}
    order = [kind for kind in ALL_KINDS if kind in totals] + sorted(set(totals) - set(ALL_KINDS))
    rows = [_HEADER]
    for kind in order:
        values = totals[kind]
        budget = by_kind.get(kind)
        rows.append(
            (
                visible(kind),  # a manifest's, written by hand in an up-to-date build
                f"{len(values):,}",
                f"{sum(values):,}",
                "" if kind in SINGLE_KINDS else f"{max(values):,}",  # one document: its tokens say it
                f"{budget['budget']:,}" if budget else "-",
                _status(budget) if budget else "-",
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(_HEADER))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _status(row: Mapping[str, Any]) -> str:
    """As `capidx report` says it (BREACH, near, ok), by its own rule, so the two tables never disagree."""
    budget = Budget(row["kind"], row["budget"], row["tokens"], row["uri"], row["ok"])
    return STATUS_TEXT["breach" if not budget.ok else "near" if budget.near else "ok"]


def overview_text(row: Mapping[str, Any]) -> str:
    """A manifest `overview` row as the build prints it: `instructions: matrix form, 1,716 of 2,048 characters`."""
    names = "" if row.get("namesEveryCapability") else "; capabilities are not named (only categories)"
    return f"{row['kind']}: {row['form']} form, {row['characters']:,} of {row['budget']:,} characters{names}"


def overview_breach(row: Mapping[str, Any]) -> str:
    """`instructions: 2,300 characters > budget 2,048 in its shortest form (total)`."""
    return (
        f"{row['kind']}: {row['characters']:,} characters > budget {row['budget']:,} in its shortest form "
        f"({row['form']}): raise character_budgets.{row['kind']} in capidx.yaml or shorten the title"
    )
