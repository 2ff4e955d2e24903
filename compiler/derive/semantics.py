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
from functools import lru_cache

from capidx.schema.text import terms


@dataclass(frozen=True)
class SemanticStats:
    """Term entropy in bits (3 decimals) and the term counts it was computed from."""

    entropy: float
    unique_terms: int
    total_terms: int


def term_entropy(items: Iterable[str]) -> float:
    """Shannon entropy in bits of the frequency distribution of `items` (0.0 when empty)."""
    return _entropy(Counter(items))


@lru_cache(maxsize=1 << 16)
def description_stats(text: str) -> SemanticStats:
    """Entropy and term counts of a description.

    Memoized (bounded): one build asks about the same description in validate's lint, the canonical
    description, the enhanced index and stats.json. The result is frozen, so sharing it is safe.
    """
    found = terms(text)
    counts = Counter(found)
    return SemanticStats(round(_entropy(counts), 3), len(counts), len(found))


# count·log2(count) of the counts terms of a description have (a lookup is cheaper than the logarithm;
# the lint computes the entropy of every description of a catalog).
_C_LOG2_C = (0.0, *(count * math.log2(count) for count in range(1, 64)))


def _entropy(counts: Counter[str]) -> float:
    total = sum(counts.values())
    if not total:
        return 0.0
    # Σ -p·log2(p), computed as log2(N) - Σ c·log2(c) / N to keep the sum of like-sized terms stable.
    if max(counts.values()) < len(_C_LOG2_C):
        weighted = sum(map(_C_LOG2_C.__getitem__, counts.values()))
    else:
        weighted = sum(count * math.log2(count) for count in counts.values())
    return max(0.0, math.log2(total) - weighted / total)


def low_information(stats: SemanticStats, threshold: float) -> bool:
    """True when the description carries fewer bits than `threshold`."""
    return stats.entropy < threshold
