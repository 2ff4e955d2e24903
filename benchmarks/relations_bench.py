"""How `similar_edges` scales: time per catalog size, doubling ratios, and an all-pairs baseline.

Synthetic keyword sets with a realistic vocabulary: each capability draws 15-40 distinct terms from
a Zipf-like distribution (weight 1/rank) over 5,000 words, so a few words are everywhere and most
are rare, as in real descriptions. Set construction is not timed; only the edge computation is, in
CPU seconds (`time.process_time`) so other work on a shared machine does not skew the ratios.

    python benchmarks/relations_bench.py [--sizes 1000 2000 ...] [--naive-up-to 2000] [--seed 7]

A ratio time(2n)/time(n) near 2 means linear scaling; quadratic would be near 4. `recall` is the
share of the exact (all-pairs) edges that the inverted index finds (the common-term cap makes it
an approximation; see `capidx.compiler.derive.relations`).
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable
from itertools import accumulate

from capidx.compiler.derive.relations import (
    COMMON_TERM_FLOOR,
    Edges,
    common_term_cap,
    exact_similar_edges,
    similar_edges,
)

VOCABULARY = 5_000
MIN_TERMS, MAX_TERMS = 15, 40


def synthetic_sets(n: int, seed: int) -> dict[str, frozenset[str]]:
    rng = random.Random(seed)
    words = [f"w{rank}" for rank in range(1, VOCABULARY + 1)]
    cumulative = list(accumulate(1 / rank for rank in range(1, VOCABULARY + 1)))
    sets = {}
    for index in range(n):
        size = rng.randint(MIN_TERMS, MAX_TERMS)
        chosen: set[str] = set()
        while len(chosen) < size:
            chosen.update(rng.choices(words, cum_weights=cumulative, k=size - len(chosen)))
        sets[f"cap-{index:05d}"] = frozenset(chosen)
    return sets


def cap_for(sets: dict[str, frozenset[str]], rule: str) -> int:
    """The common-term cap: the default work budget, or the "max(50, 10% of n)" rule for comparison."""
    if rule == "fraction":
        return max(COMMON_TERM_FLOOR, len(sets) // 10)
    frequencies = Counter(term for terms in sets.values() for term in terms)
    return common_term_cap(frequencies.values(), len(sets))


def timed(function: Callable[[], Edges]) -> tuple[float, Edges]:
    start = time.process_time()
    edges = function()
    return time.process_time() - start, edges


def recall(found: Edges, exact: Edges) -> float:
    expected = {(key, edge.target) for key, edges in exact.items() for edge in edges}
    got = {(key, edge.target) for key, edges in found.items() for edge in edges}
    return len(expected & got) / len(expected) if expected else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 2_000, 5_000, 10_000, 20_000])
    parser.add_argument("--naive-up-to", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--cap-rule",
        choices=["budget", "fraction"],
        default="budget",
        help="budget: the default (common_term_cap); fraction: max(50, 10%% of n), for comparison",
    )
    args = parser.parse_args()

    print(
        f"vocabulary {VOCABULARY} Zipf words, {MIN_TERMS}-{MAX_TERMS} terms each, threshold 0.15, k 5, "
        f"cap rule {args.cap_rule}"
    )
    print(
        f"{'n':>7} {'cap':>6} {'index s':>9} {'ratio':>6} {'edges':>7} {'naive s':>9} {'ratio':>6} "
        f"{'speedup':>8} {'recall':>7}"
    )
    previous: tuple[int, float, float | None] | None = None
    for n in args.sizes:
        sets = synthetic_sets(n, args.seed)
        cap = cap_for(sets, args.cap_rule)  # computed again inside similar_edges for the default rule
        seconds, edges = timed(lambda sets=sets, cap=cap: similar_edges(sets, max_df=cap))
        naive_seconds: float | None = None
        row_recall = ""
        if n <= args.naive_up_to:
            naive_seconds, exact = timed(lambda sets=sets: exact_similar_edges(sets))
            row_recall = f"{recall(edges, exact):.3f}"
        ratio = naive_ratio = ""
        if previous and n == 2 * previous[0]:
            ratio = f"{seconds / previous[1]:.2f}"
            if naive_seconds is not None and previous[2] is not None:
                naive_ratio = f"{naive_seconds / previous[2]:.2f}"
        count = sum(len(value) for value in edges.values())
        naive_text = f"{naive_seconds:.3f}" if naive_seconds is not None else ""
        speedup = f"{naive_seconds / seconds:.1f}x" if naive_seconds is not None else ""
        print(
            f"{n:>7} {cap:>6} {seconds:>9.3f} {ratio:>6} {count:>7} {naive_text:>9} "
            f"{naive_ratio:>6} {speedup:>8} {row_recall:>7}"
        )
        previous = (n, seconds, naive_seconds)


if __name__ == "__main__":
    main()
