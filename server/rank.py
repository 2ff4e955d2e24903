"""One ranking model for what the exact tiers do not answer: BM25F over Snowball roots of a capability's name, its
wordings and aliases, category, descriptions and the rest of its records. Confidence: the share of the query's idf
explained (0..1); an alternative of a query unit (server/query.py) earns `EXPANSION` of the credit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from capidx.schema.text import terms
from capidx.server.query import Unit, root

# Fitted on benchmarks/resolution (its RESULTS.md); an alternative (an abbreviation read either way) earns EXPANSION.
FIELD_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"name": 3.0, "terminology": 2.0, "category": 1.0, "description": 1.0, "detail": 0.5}
)
K1, B, EXPANSION = 1.2, 0.5, 0.8


@dataclass(frozen=True)
class Ranker:
    """A build's BM25F statistics, per root so that a query visits only the capabilities with its words."""

    postings: Mapping[str, Mapping[str, float]]  # root -> slug -> weighted, length-normalized frequency
    idf: Mapping[str, float]
    unknown: float  # what a word no capability has weighs: the rarest root's idf

    @classmethod
    def build(cls, rows: Iterable[Mapping[str, Any]], wordings: Mapping[str, Iterable[str]]) -> Ranker:
        """From match.json's capability rows and, per slug, the aliases and wordings that name it (linear)."""
        counted: dict[str, dict[str, Counter[str]]] = {}  # slug -> field -> root -> count
        for row in rows:
            texts = {"name": [row["name"]], "terminology": wordings[row["slug"]], "category": [row["category"]]}
            fields = {field: _roots((t, 1) for text in group for t in terms(text)) for field, group in texts.items()}
            described = row.get("description", row["terms"])  # older builds: everything counts as description
            fields["description"] = _roots(described.items())
            rest = ((t, n - described.get(t, 0) - fields["name"].get(root(t), 0)) for t, n in row["terms"].items())
            fields["detail"] = _roots((t, n) for t, n in rest if n > 0)
            counted[row["slug"]] = fields
        averages = {f: sum(c[f].total() for c in counted.values()) / max(1, len(counted)) or 1.0 for f in FIELD_WEIGHTS}
        postings: dict[str, Counter[str]] = {}
        for slug, fields in counted.items():
            for field, counts in fields.items():
                factor = FIELD_WEIGHTS[field] / (1 - B + B * counts.total() / averages[field])
                for key, count in counts.items():
                    postings.setdefault(key, Counter())[slug] += factor * count
        idf = {key: math.log(1 + (len(counted) - len(df) + 0.5) / (len(df) + 0.5)) for key, df in postings.items()}
        frozen = MappingProxyType({key: MappingProxyType(dict(held)) for key, held in postings.items()})
        return cls(frozen, MappingProxyType(idf), unknown=max(idf.values(), default=1.0))

    def rank(self, units: Sequence[Unit]) -> dict[str, float]:
        """Capability -> confidence: per unit the best of its words and alternatives, weighted by the unit's idf."""
        weights = [sum(self.idf.get(w, self.unknown) for w in unit.words) for unit in units]
        total = sum(weights) or 1.0
        scores: dict[str, float] = {}
        for unit, weight in zip(units, weights, strict=True):
            best = self._shares(unit.words)
            for alternative in unit.alternatives:
                for slug, share in self._shares(alternative).items():
                    best[slug] = max(best.get(slug, 0.0), EXPANSION * share)
            for slug, share in best.items():
                scores[slug] = scores.get(slug, 0.0) + weight * unit.trust * share
        return {slug: round(min(1.0, score / total), 3) for slug, score in scores.items() if score}

    def _shares(self, words: Sequence[str]) -> dict[str, float]:
        """Capability -> its match of a run of roots, as a share of a perfect one (every root saturated)."""
        got: dict[str, float] = {}
        ideal = 0.0
        for word in words:
            idf = self.idf.get(word, self.unknown)
            for slug, tf in self.postings.get(word, {}).items():
                got[slug] = got.get(slug, 0.0) + idf * tf * (K1 + 1) / (tf + K1)
            ideal += idf * (K1 + 1)
        return {slug: value / ideal for slug, value in got.items()} if ideal else {}


def _roots(counts: Iterable[tuple[str, int]]) -> Counter[str]:
    found: Counter[str] = Counter()
    for term, count in counts:
        found[root(term)] += count
    return found
