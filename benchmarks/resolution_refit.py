"""Refit the resolver's decision rule on some blind query families and count it on the others.

`resolution_bench.py --cross-validate` fits the rule on one catalog and counts it on the other, within the first
query set. This script does the same across query families: the rule ("confidence >= c and lead >= l", one to
three such cells, any resolving) that maximizes "right - PENALTY x wrong" among the scored answers of the FIT
families (`resolution_rules.fit`, up to three cells, as the server has) is counted on the CHECK families, which took
no part in the choice; the server's `DECISION_RULE` is counted alongside. Every run (ablated, with hints, catalog2)
of each family is used.

    python benchmarks/resolution_refit.py [--fit first holdout] [--check fresh blind-2026-11-25-a ...] [--penalty 5 10]

Figures: docs/benchmarks.md, "Lookup quality and latency".
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import resolution_bench as bench
import resolution_rules as rules

FAMILIES = {
    "first": "",
    "holdout": "holdout-",
    "fresh": "fresh-",
    "blind-2026-11-25-a": "blind-2026-11-25-a-",
    "blind-2026-11-25-b": "blind-2026-11-25-b-",
    "blind-2026-11-27": "blind-2026-11-27-",
    "check-2026-11-27": "check-2026-11-27-",
}
RUNS = ("bundled-ablated", "bundled-hints", "catalog2")


def scored(families: Sequence[str], workdir: Path) -> list[rules.Point]:
    points: list[rules.Point] = []
    for family in families:
        for run in RUNS:
            name = FAMILIES[family] + run
            (workdir / name).mkdir(parents=True)
            points += bench.scored_points(name, workdir / name)
    return points


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", nargs="+", choices=FAMILIES, default=["first", "holdout"])
    check = ["fresh", "blind-2026-11-25-a", "blind-2026-11-25-b"]
    parser.add_argument("--check", nargs="+", choices=FAMILIES, default=check)
    parser.add_argument("--penalty", nargs="+", type=float, default=[5.0, 10.0])
    args = parser.parse_args(argv)
    from capidx.server.resolve import DECISION_RULE

    with tempfile.TemporaryDirectory(prefix="capidx-refit-") as tmp:
        fit_points, check_points = scored(args.fit, Path(tmp) / "fit"), scored(args.check, Path(tmp) / "check")
    fit_names, check_names = " ".join(args.fit), " ".join(args.check)
    print(f"scored answers: fit ({fit_names}) {len(fit_points)}, check ({check_names}) {len(check_points)}")
    fitted = [(f"fitted, penalty {p:g}", rules.fit(fit_points, p, most_cells=3)) for p in args.penalty]
    rows = [("server", DECISION_RULE), *fitted]
    for label, rule in rows:
        (fit_right, fit_wrong), (check_right, check_wrong) = (
            rules.count(rule, fit_points),
            rules.count(rule, check_points),
        )
        print(f"{label:<20} {rules.describe(rule)}")
        print(f"{'':<20} fit: {fit_right} right, {fit_wrong} wrong; check: {check_right} right, {check_wrong} wrong")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
