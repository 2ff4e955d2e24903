"""`similar-to` edges between capabilities, computed once at build time.

Two capabilities are similar when their keyword sets overlap: the score is the Jaccard index
|A ∩ B| / |A ∪ B| of the sets of `terms()` (stop words removed, light stemming) over name,
terminology, description, aliases and triggers. Each capability keeps its best `max_similar`
neighbours at or above `threshold`, with the shared terms as the reason.

Comparing every pair is quadratic, so candidates come from an inverted index (term → the
capabilities that use it), the way all-pairs similarity joins do it:

- only capabilities that share at least one *proposing* term are ever compared. A term used by
  many capabilities is too common to propose candidates (a term in `df` of them proposes
  df·(df-1)/2 pairs, most of them unrelated), but it still counts in the score of a pair found
  through another term. Which terms are too common is decided by `common_term_cap`: terms are
  admitted from the rarest up while the pairs they propose stay within `WORK_PER_CAPABILITY` per
  capability, and a term in at most `COMMON_TERM_FLOOR` (50) capabilities always proposes. The
  work is therefore linear in the size of the catalog. (A cap proportional to the catalog, such as
  "10% of the capabilities", is not: each admitted term then proposes a number of pairs that
  grows with n², and `benchmarks/relations_bench.py --cap-rule fraction` shows time ×4 per doubling.)
- **Approximation:** a pair whose shared terms are all too common is never proposed, even if its
  score would reach the threshold. A catalog small enough for every term to fit the budget (in
  particular any catalog of at most 50 capabilities) gets the exact result, the same as
  `exact_similar_edges`; on large synthetic catalogs the benchmark reports the share found.
- the size filter prunes before counting: |A ∩ B| / |A ∪ B| <= min(|A|, |B|) / max(|A|, |B|), so a
  pair can reach threshold t only if the smaller set has at least t times the size of the larger.
  Capabilities are numbered in order of set size, so the admissible partners of each one form a
  contiguous range of every posting list, found by bisection;
- shared proposing terms are counted per candidate pair with a `Counter`; the common terms two
  sets share are added with one `&` of int bit sets, which gives the exact intersection without
  intersecting whole sets, and a bound skips even that when the pair cannot reach the threshold.

Everything is deterministic: ties are broken by key, never by input order. Sources that share a key
(the same capability described by several agents) are merged into one keyword set.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import chain, combinations

from capidx.schema.text import terms

DEFAULT_THRESHOLD = 0.15
DEFAULT_MAX_SIMILAR = 5
COMMON_TERM_FLOOR = 50  # a term in at most this many capabilities always proposes candidates
WORK_PER_CAPABILITY = 500  # candidate pairs the more common terms may propose, per capability
_EPSILON = 1e-9  # 3/20 must reach a threshold of 0.15 despite binary floating point
# Words the resolver keeps ('non-interactive' is not 'interactive') but that say nothing about what a capability
# is: two descriptions that both say "does not" or "X vs Y" are not related by it.
NOT_KEYWORDS = frozenset({"not", "no", "vs", "versus"})


@dataclass(frozen=True)
class KeywordSource:
    """The text of one capability that similarity is computed from. `key` is its slug."""

    key: str
    name: str
    terminology: tuple[str, ...] = ()
    description: str = ""
    aliases: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()


@dataclass(frozen=True)
class SimilarEdge:
    """`target` is similar with Jaccard `score` (3 decimals) because of the `shared` terms (sorted)."""

    target: str
    score: float
    shared: tuple[str, ...]


Edges = dict[str, tuple[SimilarEdge, ...]]


def keyword_set(source: KeywordSource, terms_of: Callable[[str], Iterable[str]] = terms) -> frozenset[str]:
    """The stemmed, stop-word-free terms of every text field of `source`.

    `terms_of` is `terms` or a memo of it (the build analyses each distinct text once).
    """
    return _keywords(source_texts(source), terms_of)


def keyword_sets(
    sources: Iterable[KeywordSource], terms_of: Callable[[str], Iterable[str]] = terms
) -> dict[str, frozenset[str]]:
    """Keyword set per key, sorted by key. Sources sharing a key (one per agent) are merged.

    The texts of one key are gathered first, so a name or alias every agent repeats is analysed once.
    """
    texts: defaultdict[str, set[str]] = defaultdict(set)
    for source in sources:
        texts[source.key].update(source_texts(source))
    return {key: _keywords(texts[key], terms_of) for key in sorted(texts)}


def _keywords(texts: Iterable[str], terms_of: Callable[[str], Iterable[str]]) -> frozenset[str]:
    return frozenset(term for text in texts for term in terms_of(text) if term not in NOT_KEYWORDS)


def source_texts(source: KeywordSource) -> tuple[str, ...]:
    return (source.name, *source.terminology, source.description, *source.aliases, *source.triggers)


def common_term_cap(document_frequencies: Iterable[int], n: int, work_per_capability: int = WORK_PER_CAPABILITY) -> int:
    """Largest document frequency at which a term still proposes candidates.

    Terms are admitted from the rarest up while the candidate checks they cause (a term in `df`
    capabilities proposes df·(df-1)/2 pairs) stay within `work_per_capability` per capability; terms
    in at most `COMMON_TERM_FLOOR` capabilities are always admitted. The work is then linear in the
    size `n` of the catalog, and a small catalog admits every term (exact result).
    """
    budget = work_per_capability * n
    cap, work = COMMON_TERM_FLOOR, 0
    for df in sorted(document_frequencies):
        work += df * (df - 1) // 2
        if work > budget:
            break
        cap = max(cap, df)
    return cap


def similar_to(
    sources: Iterable[KeywordSource],
    threshold: float = DEFAULT_THRESHOLD,
    max_similar: int = DEFAULT_MAX_SIMILAR,
) -> Edges:
    """`similar-to` edges for every key of `sources` (sorted by key; a key without edges maps to `()`)."""
    return similar_edges(keyword_sets(sources), threshold, max_similar)


def similar_edges(
    sets: Mapping[str, frozenset[str]],
    threshold: float = DEFAULT_THRESHOLD,
    max_similar: int = DEFAULT_MAX_SIMILAR,
    max_df: int | None = None,
) -> Edges:
    """Best `max_similar` edges per key with score >= `threshold`, through the inverted index.

    `max_df` overrides `common_term_cap(...)`: terms in more capabilities than this do not
    propose candidates (see the module docstring for what that approximates).
    """
    _check_limits(threshold, max_similar)
    index = _Index.build(sets, max_df)
    best: list[list[tuple[float, int, int]]] = [[] for _ in index.docs]
    if max_similar:
        _keep_best(index, threshold, max_similar, best)
    return _edges(index.order, index.docs, best)


def exact_similar_edges(
    sets: Mapping[str, frozenset[str]],
    threshold: float = DEFAULT_THRESHOLD,
    max_similar: int = DEFAULT_MAX_SIMILAR,
) -> Edges:
    """Reference implementation comparing every pair: exact, quadratic; for tests and benchmarks."""
    _check_limits(threshold, max_similar)
    order = sorted(sets)
    docs = [sets[key] for key in order]
    best: list[list[tuple[float, int, int]]] = [[] for _ in docs]
    for i, j in combinations(range(len(docs)), 2):
        together = len(docs[i] & docs[j])
        union = len(docs[i] | docs[j])
        if max_similar and together and together >= threshold * union - _EPSILON:
            score = round(together / union, 3)
            _keep(best[i], (score, -j, j), max_similar)
            _keep(best[j], (score, -i, i), max_similar)
    return _edges(order, docs, best)


def _check_limits(threshold: float, max_similar: int) -> None:
    if not 0 < threshold <= 1:
        raise ValueError(f"similarity threshold must be in (0, 1], got {threshold}")
    if max_similar < 0:
        raise ValueError(f"max_similar must be >= 0, got {max_similar}")


@dataclass(frozen=True)
class _Index:
    """Capabilities numbered by (set size, key), with their postings and common-term bit sets."""

    order: list[str]  # position → key
    docs: list[frozenset[str]]
    sizes: list[int]
    rank: list[int]  # position → rank of the key in alphabetical order (for tie-breaking)
    postings: dict[str, list[int]]  # term → ascending positions
    common: frozenset[str]  # terms too common to propose candidates
    masks: list[int]  # position → its common terms as an int bit set: `&` and `bit_count()` intersect them
    common_sizes: list[int]

    @classmethod
    def build(cls, sets: Mapping[str, frozenset[str]], max_df: int | None) -> _Index:
        order = sorted(sets, key=lambda key: (len(sets[key]), key))  # by size: partners form a range
        docs = [sets[key] for key in order]
        postings: defaultdict[str, list[int]] = defaultdict(list)
        for position, doc in enumerate(docs):
            for term in doc:
                postings[term].append(position)
        if max_df is None:
            max_df = common_term_cap((len(keys) for keys in postings.values()), len(docs))
        common = sorted(term for term, keys in postings.items() if len(keys) > max_df)
        bits = {term: 1 << bit for bit, term in enumerate(common)}
        masks = [sum(bits.get(term, 0) for term in doc) for doc in docs]
        alphabetical = {key: rank for rank, key in enumerate(sorted(order))}
        return cls(
            order=order,
            docs=docs,
            sizes=[len(doc) for doc in docs],
            rank=[alphabetical[key] for key in order],
            postings=dict(postings),
            common=frozenset(common),
            masks=masks,
            common_sizes=[mask.bit_count() for mask in masks],
        )


def _keep_best(index: _Index, threshold: float, limit: int, best: list[list[tuple[float, int, int]]]) -> None:
    """For every proposed pair (i, j), i < j, whose Jaccard score reaches `threshold`, `_keep` the entry in
    both `best[i]` and `best[j]`.

    One loop with `_keep` inlined and the per-document values hoisted: it runs once per candidate pair,
    hundreds of thousands of times on a large catalog.
    """
    sizes, masks, common_sizes, rank, common = index.sizes, index.masks, index.common_sizes, index.rank, index.common
    push, replace = heapq.heappush, heapq.heapreplace
    for i, doc in enumerate(index.docs):
        if not doc:
            continue
        size_i, mask_i, common_i, entry_i = sizes[i], masks[i], common_sizes[i], -rank[i]
        last = bisect_right(sizes, size_i / threshold + _EPSILON)  # size filter: partners in (i, last)
        proposing = [term for term in doc if term not in common]
        for j, shared in _count_shared(i, last, proposing, index.postings).items():
            # The union is at least sizes[j] (>= sizes[i]): skip the intersection when sharing
            # every common term could not reach the threshold.
            common_j = common_sizes[j]
            if shared + (common_i if common_i < common_j else common_j) < threshold * sizes[j] - _EPSILON:
                continue
            together = shared + (mask_i & masks[j]).bit_count()
            union = size_i + sizes[j] - together
            if together < threshold * union - _EPSILON:
                continue
            score = round(together / union, 3)
            heap, entry = best[i], (score, -rank[j], j)
            if len(heap) < limit:
                push(heap, entry)
            elif entry > heap[0]:
                replace(heap, entry)
            heap, entry = best[j], (score, entry_i, i)
            if len(heap) < limit:
                push(heap, entry)
            elif entry > heap[0]:
                replace(heap, entry)


def _count_shared(i: int, last: int, proposing: list[str], postings: dict[str, list[int]]) -> Counter[int]:
    """Partners j in (i, last) with the number of proposing terms they share with document i."""
    partners = []
    for term in proposing:
        keys = postings[term]
        partners.append(keys[bisect_right(keys, i) : bisect_left(keys, last)])
    return Counter(chain.from_iterable(partners))


def _keep(heap: list[tuple[float, int, int]], entry: tuple[float, int, int], limit: int) -> None:
    """Keep the `limit` best entries; the heap's root is the worst (lowest score, then last key)."""
    if len(heap) < limit:
        heapq.heappush(heap, entry)
    elif entry > heap[0]:
        heapq.heapreplace(heap, entry)


def _edges(order: list[str], docs: list[frozenset[str]], best: list[list[tuple[float, int, int]]]) -> Edges:
    edges: Edges = {}
    for i in sorted(range(len(order)), key=order.__getitem__):
        ranked = sorted(best[i], key=lambda entry: (-entry[0], order[entry[2]]))
        edges[order[i]] = tuple(
            SimilarEdge(order[j], score, tuple(sorted(docs[i] & docs[j]))) for score, _, j in ranked
        )
    return edges
