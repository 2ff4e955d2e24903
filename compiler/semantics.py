"""How much a description says: Shannon entropy of its term distribution, for the validator's lint.

The entropy is taken over the *distribution* of the description's terms (each term's count
divided by the total), not over the set of distinct terms: the latter is always log2(unique) and
would rate "test test test code" as highly as "test code". Terms come from `terms()` (stop words
removed, light stemming), so filler words neither add nor dilute information.

A description of n distinct terms, each used once, carries log2(n) bits; repeating terms lowers
that. With the default threshold of 2.5 bits a description needs about six distinct content terms.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from capidx.server.text import terms

LOW_INFORMATION_HINT = "say what the capability does, for whom, and how"


@dataclass(frozen=True)
class SemanticStats:
    """Term entropy in bits (3 decimals) and the term counts it was computed from."""

    entropy: float
    unique_terms: int
    total_terms: int


def term_entropy(items: Iterable[str]) -> float:
    """Shannon entropy in bits of the frequency distribution of `items` (0.0 when empty)."""
    counts = Counter(items)
    total = sum(counts.values())
    if not total:
        return 0.0
    # Σ -p·log2(p), computed as log2(N) - Σ c·log2(c) / N to keep the sum of like-sized terms stable.
    return max(0.0, math.log2(total) - sum(count * math.log2(count) for count in counts.values()) / total)


def description_stats(text: str) -> SemanticStats:
    """Entropy and term counts of a description."""
    found = terms(text)
    return SemanticStats(round(term_entropy(found), 3), len(set(found)), len(found))


def low_information(stats: SemanticStats, threshold: float) -> bool:
    """True when the description carries fewer bits than `threshold`."""
    return stats.entropy < threshold


def low_information_message(stats: SemanticStats, threshold: float, *, hint: bool = True) -> str:
    """The validator's message, e.g. 'description carries 1.58 bits of term entropy (threshold 2.5): say ...'.

    With `hint=False` only the measurement is returned, for a `Diagnostic` whose `hint` is
    `LOW_INFORMATION_HINT`.
    """
    message = f"description carries {stats.entropy:.2f} bits of term entropy (threshold {threshold:g})"
    return f"{message}: {LOW_INFORMATION_HINT}" if hint else message
