"""Token budgets per artifact kind (primary encoding); for per-item kinds the largest document must fit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capidx.compiler.artifacts import SINGLE_KINDS, Measured


@dataclass(frozen=True)
class BudgetResult:
    kind: str
    budget: int
    tokens: int  # of the largest artifact of the kind (0 when the build has none)
    uri: str  # the artifact that set `tokens` ("" when the build has none)

    @property
    def ok(self) -> bool:
        return self.tokens <= self.budget

    def breach_text(self) -> str:
        """`summary: 1,234 tokens > budget 1,000 (+23.4%)`"""
        over = 100 * (self.tokens - self.budget) / self.budget
        where = f" (largest: {self.uri})" if self.kind not in SINGLE_KINDS and self.uri else ""
        return f"{self.kind}: {self.tokens:,} tokens > budget {self.budget:,} (+{over:.1f}%){where}"

    def as_manifest_row(self) -> dict[str, Any]:
        return {"kind": self.kind, "budget": self.budget, "tokens": self.tokens, "uri": self.uri, "ok": self.ok}


def check_budgets(budgets: Mapping[str, int], measured: Sequence[Measured], primary: str) -> tuple[BudgetResult, ...]:
    largest: dict[str, Measured] = {}
    for item in measured:
        current = largest.get(item.artifact.kind)
        if current is None or (item.tokens[primary], current.artifact.path) > (
            current.tokens[primary],
            item.artifact.path,
        ):
            largest[item.artifact.kind] = item
    results = []
    for kind, budget in sorted(budgets.items()):
        top = largest.get(kind)
        results.append(BudgetResult(kind, budget, top.tokens[primary] if top else 0, top.artifact.uri if top else ""))
    return tuple(results)
