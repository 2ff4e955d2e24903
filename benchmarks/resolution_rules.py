"""Cross-catalog check of the scored decision rule: fit it on one blind catalog, count it on the other.

`resolution_bench.py --cross-validate` hands this module every scored answer (the winner's confidence,
its lead over the runner-up, whether it is the expected capability) of the ablated bundled catalog and of
catalog2. For each catalog in turn, the rule that maximizes "right resolved - PENALTY x wrong resolved"
on it (one cell "confidence >= c and lead >= l", or two such cells, either resolving) is chosen and then
counted on the other catalog, which took no part in the choice. A rule that only fits one catalog shows
up as wrong answers on the other. The server's rule (`DECISION_RULE`) is printed alongside.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Protocol

# A wrong resolution costs this many right ones (the targets: >= 90 % right, <= 1 % wrong).
PENALTY = 5.0
CONFIDENCES = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8)
LEADS = (0.0, 0.15, 0.25, 0.35, 0.5, 0.65, 0.8)

Rule = tuple[tuple[float, float], ...]
LABEL_WIDTH = 68


class Point(Protocol):
    run: str
    best: float
    lead: float
    right: bool


def resolves(rule: Rule, point: Point) -> bool:
    return any(point.best >= c and point.lead >= lead for c, lead in rule)


def count(rule: Rule, points: Iterable[Point]) -> tuple[int, int]:
    """(right, wrong) among the answers the rule resolves."""
    chosen = [p for p in points if resolves(rule, p)]
    right = sum(p.right for p in chosen)
    return right, len(chosen) - right


def candidate_rules(most_cells: int = 2) -> list[Rule]:
    """Rules of one to `most_cells` cells, each looser in confidence than the one before and asking a larger lead.

    The cells are listed by falling confidence: `itertools.combinations` keeps that order, so a combination whose
    confidences fall and leads rise is a rule whose cells are not redundant (listed by rising confidence, no
    combination would qualify)."""
    cells = sorted(((c, lead) for c in CONFIDENCES for lead in LEADS), key=lambda cell: (-cell[0], cell[1]))
    return [
        combo
        for size in range(1, most_cells + 1)
        for combo in itertools.combinations(cells, size)
        if all(a[0] > b[0] and a[1] < b[1] for a, b in itertools.pairwise(combo))
    ]


def fit(points: Sequence[Point], penalty: float = PENALTY, most_cells: int = 2) -> Rule:
    """The rule with the best "right - penalty x wrong" on these points (fewer cells, then stricter, on ties)."""

    def value(rule: Rule) -> tuple[float, int, Rule]:
        right, wrong = count(rule, points)
        return (right - penalty * wrong, -len(rule), rule)

    return max(candidate_rules(most_cells), key=value)


def describe(rule: Rule) -> str:
    return " or ".join(f"c >= {c:g} and lead >= {lead:g}" for c, lead in rule)


def print_cross_validation(points: Sequence[Point], current: Rule) -> None:
    runs = sorted({p.run for p in points})
    print(f"\n## cross-catalog check of the decision rule (penalty {PENALTY:g} per wrong resolution)")
    print("right / wrong among the scored answers each rule resolves, per run (n = scored answers)\n")
    sizes = {run: sum(p.run == run for p in points) for run in runs}
    print(f"{'rule':<{LABEL_WIDTH}}" + "".join(f"{f'{run} (n={sizes[run]})':>26}" for run in runs))
    rows: list[tuple[str, Rule]] = [(f"server: {describe(current)}", current)]
    for run in runs:
        rows.append((f"fit on {run}: {describe(fit([p for p in points if p.run == run]))}", ()))
    for label, rule in rows:
        if not rule:
            rule = fit([p for p in points if p.run == label.split(":")[0].removeprefix("fit on ")])
        cells = []
        for run in runs:
            right, wrong = count(rule, [p for p in points if p.run == run])
            cells.append(f"{right:>4} right {wrong:>3} wrong")
        print(f"{label:<{LABEL_WIDTH}}" + "".join(f"{cell:>26}" for cell in cells))
