"""Token budgets per artifact kind (primary encoding); for per-item kinds the largest document must fit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capidx.compiler.artifacts import SINGLE_KINDS, Measured, short_uri


@dataclass(frozen=True)
class BudgetResult:
    kind: str
    budget: int
    tokens: int  # of the largest artifact of the kind (0 when the build has none)
    uri: str  # the artifact that set `tokens` ("" when the build has none)

    @property
    def ok(self) -> bool:
        return self.tokens <= self.budget

    def breach_text(self, prefix: str) -> str:
        """`summary: 1,234 tokens > budget 1,000 (+23.4%)`; a per-item kind names its largest document as `capidx
        report` does (`agent: … (largest: agents/claude-code)`), without the URI `prefix`."""
        over = 100 * (self.tokens - self.budget) / self.budget
        where = f" (largest: {short_uri(self.uri, prefix)})" if self.kind not in SINGLE_KINDS and self.uri else ""
        return f"{self.kind}: {self.tokens:,} tokens > budget {self.budget:,} (+{over:.1f}%){where}"

    def as_manifest_row(self) -> dict[str, Any]:
        return {"kind": self.kind, "budget": self.budget, "tokens": self.tokens, "uri": self.uri, "ok": self.ok}


# How to size every budget at once, named wherever a breach is (`budget_remedy`): a catalog far larger than the one
# its budgets were set for breaches them all, and raising them one key at a time is guesswork.
PROPOSE = "`capidx report --propose-budgets` prints them sized from this build"
# The overviews whose size is the catalog's shape, a row per capability and a cell per agent, more than its text: a new
# agent or capability breaches them, and shortening descriptions does not bring them back.
_GRIDS = ("summary", "instructions", "memory")


def budget_remedy(breached: Sequence[tuple[str, str]], config_file: str | None) -> str:
    """The one line saying what to do about token budgets breached, shared by `capidx build` and `capidx report`:
    `breached` is (kind, its largest document) per breach, `config_file` the capidx.yaml that set the budgets as
    the command names it (None when it cannot know, as `capidx report --build DIR`)."""
    keys = _series([f"budgets.{kind}" for kind, _ in breached])
    documents = _series([document for _, document in breached])
    where = config_file or "the capidx.yaml the build used"
    line = f"to fit: raise {keys} in {where} ({PROPOSE}), or shorten the catalog text behind {documents}"
    if grids := [kind for kind, _ in breached if kind in _GRIDS]:
        grows = "grows" if len(grids) == 1 else "grow"
        line += f" ({_series(grids)} {grows} with every agent and capability: shorter text frees little there)"
    return line


def _series(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


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
