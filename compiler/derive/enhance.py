"""The enhanced index: relationships, canonical descriptions, the injection settings.

Computed once per build from the catalog (pure apart from the token count of the label overhead) with
the already tested pure functions of `relations` and `semantics`; the documents that carry
the results (lookup, compare, full.md, capability pages, snippets, match.json, stats.json) only read
them. Shapes: docs/build-directory.md, "The enhanced index".
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from capidx.compiler.catalog import CanonicalCapability, Capability, Catalog
from capidx.compiler.config import Config, Injection, InjectionLabel, Relationships
from capidx.compiler.derive.relations import KeywordSource, SimilarEdge, keyword_sets, similar_edges, source_texts
from capidx.compiler.derive.semantics import description_stats
from capidx.compiler.errors import UsageError
from capidx.schema.labels import measure_overhead
from capidx.schema.text import terms, worded_terms

# The reason given for a similar-to edge: at most this many shared terms, the most distinctive first.
MAX_SHARED_TERMS = 4


class SettingsError(UsageError):
    """A setting the config schema lets through but the computation cannot use (exit 2)."""

    def format_message(self) -> str:
        return f"configuration: {self.message}"


@dataclass(frozen=True)
class Enhanced:
    """Everything the enhanced index adds, keyed by canonical capability slug (sorted)."""

    similar: Mapping[str, tuple[SimilarEdge, ...]]  # `shared`: at most MAX_SHARED_TERMS, rarest first
    names: Mapping[str, str]  # slug -> canonical name, to name the target of an edge
    superseded_by: Mapping[str, str]  # only capabilities whose records name a successor
    described: Mapping[str, Capability]  # slug -> the record whose description stands for the capability
    injection: Mapping[str, Any] = field(default_factory=dict)  # match.json's `injection` (empty: left out)
    # `terms()` of the catalog texts analysed here, for match.json's term counts to reuse: each distinct text
    # is analysed once per build (the server's bounded memo of `terms` cycles on a large catalog). Not data
    # of the index: left out of comparisons and repr, and dropped with the Enhanced at the end of the build.
    text_terms: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)

    def terms_of(self, text: str) -> tuple[str, ...]:
        """`terms(text)`, from `text_terms` when the text was analysed."""
        found = self.text_terms.get(text)
        return found if found is not None else tuple(terms(text))

    def similar_rows(self, slug: str) -> list[dict[str, Any]]:
        """`similarTo` rows: `{"capability", "name", "score", "shared"}`, best first."""
        return [
            {"capability": edge.target, "name": self.names[edge.target], "score": edge.score, "shared": [*edge.shared]}
            for edge in self.similar.get(slug, ())
        ]

    def relationships(self, capability: CanonicalCapability, agent: str | None = None) -> dict[str, Any]:
        """The `relationships` object of a lookup (`agent` given) or compare document; empty keys omitted.

        For one agent, `supersededBy` is that agent's record's and `sameCapability` the *other* agents
        with the capability available; for a comparison, the capability's (`canonical_superseded_by`)
        and every agent with it available.
        """
        out = self.direct_relationships(capability, agent)
        if similar := self.similar_rows(capability.slug):
            out["similarTo"] = similar
        return out

    def direct_relationships(self, capability: CanonicalCapability, agent: str | None = None) -> dict[str, Any]:
        """`relationships` without `similarTo`: the part that depends on the agent. `similarTo` is the same in
        every document of the capability, so the build serializes it once per capability."""
        same = [other for other in capability.available_for if other != agent]
        if agent is None:
            successor = self.superseded_by.get(capability.slug)
        else:
            record = capability.record(agent)
            successor = record.superseded_by if record else None
        out: dict[str, Any] = {}
        if same:
            out["sameCapability"] = same
        if successor:
            out["supersededBy"] = successor
        return out


def enhance_for_build(
    catalog: Catalog, config: Config, counter: Any, primary: str, previous_index: Mapping[str, Any] | None
) -> tuple[Enhanced, Callable[[], Enhanced]]:
    """`enhance` with the settings of `config`, first without match.json's `injection`, and a function that
    returns it with `injection`, whose label overhead is measured by `counter` (or reused from
    `previous_index`, the current build's match.json measured in the same `primary` encoding).

    Only match.json needs the overhead, and it is made last: the label lines are counted when the function is
    called."""
    labels = tuple(config.injection.labels)
    count = counter_batch(counter, primary)
    enhanced = enhance(catalog, config.relationships)

    def with_injection() -> Enhanced:
        overhead = injection_overhead(labels, count, previous_index)
        return dataclasses.replace(enhanced, injection=injection_section(config.injection, overhead))

    return enhanced, with_injection


def enhance(
    catalog: Catalog, relationships: Relationships | None = None, injection: Mapping[str, Any] | None = None
) -> Enhanced:
    """The enhanced index of `catalog` (pure); `injection` is match.json's section, as made by `injection_section`."""
    relationships = relationships or Relationships()
    text_terms = _TermTable()
    sources = list(keyword_sources(catalog))
    sets = keyword_sets(sources, text_terms.__getitem__)
    try:
        similar = similar_edges(sets, relationships.similarity_threshold, relationships.max_similar)
    except ValueError as exc:  # the config schema allows a threshold of 0, Jaccard edges need > 0
        raise SettingsError(f"relationships: {exc}") from None
    described = {capability.slug: canonical_record(capability) for capability in catalog.capabilities}
    return Enhanced(
        similar=_with_reasons(similar, sets, _written_as(sources)),
        names={capability.slug: capability.name for capability in catalog.capabilities},
        superseded_by={
            capability.slug: successor
            for capability in catalog.capabilities
            if (successor := canonical_superseded_by(capability))
        },
        described=described,
        injection=dict(injection or {}),
        text_terms=text_terms,
    )


class _TermTable(dict[str, tuple[str, ...]]):
    """`terms()` of each text, computed on first lookup (a memo scoped to one `enhance` call)."""

    def __missing__(self, text: str) -> tuple[str, ...]:
        found = self[text] = tuple(terms(text))
        return found


def _written_as(sources: Iterable[KeywordSource]) -> dict[str, dict[str, Counter[str]]]:
    """Per capability, each term -> the words its texts write it as, counted ('coordinated' and 'coordinates' for the
    term 'coordinat'): the reason for an edge names a term as the two capabilities write it."""
    written: dict[str, dict[str, Counter[str]]] = {}
    for source in sources:
        words = written.setdefault(source.key, {})
        for text in source_texts(source):
            for term, word in worded_terms(text):
                words.setdefault(term, Counter())[word] += 1
    return written


def _with_reasons(
    similar: Mapping[str, tuple[SimilarEdge, ...]],
    sets: Mapping[str, frozenset[str]],
    written: Mapping[str, Mapping[str, Counter[str]]],
) -> dict[str, tuple[SimilarEdge, ...]]:
    """Edges whose `shared` terms are cut to the `MAX_SHARED_TERMS` most distinctive ones (used by the fewest
    capabilities; ties alphabetical), in that order: "hook, lifecycle" says more than "run, tool, file"; each shown as
    the word the two capabilities write it as most often (ties: the shorter, then alphabetical), not as its stem."""
    frequency = Counter(term for terms in sets.values() for term in terms)
    # Each term's position in the (frequency, term) order, computed once: sorting the shared terms of every edge
    # by it gives the same order with a C-level key (edges share dozens of terms on a large catalog).
    position = {term: index for index, term in enumerate(sorted(frequency, key=lambda term: (frequency[term], term)))}

    def word(term: str, slug: str, target: str) -> str:
        seen = written.get(slug, {}).get(term, Counter()) + written.get(target, {}).get(term, Counter())
        return min(seen, key=lambda word: (-seen[word], len(word), word)) if seen else term

    def reason(shared: tuple[str, ...], slug: str, target: str) -> tuple[str, ...]:
        distinctive = sorted(shared, key=position.__getitem__)[:MAX_SHARED_TERMS]
        return tuple(word(term, slug, target) for term in distinctive)

    return {
        slug: tuple(SimilarEdge(edge.target, edge.score, reason(edge.shared, slug, edge.target)) for edge in edges)
        for slug, edges in similar.items()
    }


def keyword_sources(catalog: Catalog) -> Iterator[KeywordSource]:
    """One source per record (relations merges those of one slug), the alias-table phrases on the first. A record's
    own agent's name and id (also with spaces for its hyphens: 'Acme Bot' for `acme-bot`) are left out of its texts:
    "Acme Bot runs …" in two of its records relates them by the agent, not by what they do (a team catalog showed
    'Related: Hooks (defin, run, tool, bot)')."""
    # agent id -> its texts without its names (`str`, the text as it is, for a record of no agent the catalog lists)
    own = {a.id: functools.partial(_naming(a.id, a.name, a.id.replace("-", " ")).sub, " ") for a in catalog.agents}
    for capability in catalog.capabilities:
        for position, record in enumerate(capability.records):
            told: Callable[[str], str] = own.get(record.agent, str)
            yield KeywordSource(
                key=capability.slug,
                name=capability.name,
                terminology=(told(record.terminology),) if record.terminology else (),
                description=told(record.description),
                aliases=tuple(map(told, record.aliases)) + (capability.table_aliases if position == 0 else ()),
                triggers=tuple(map(told, record.triggers)),
            )


def _naming(agent_id: str, *names: str) -> re.Pattern[str]:
    """An agent's names as whole words, in any case ('Claude Code', 'claude-code'); the longest first. The id is never
    empty (a folder's name), so the pattern never matches the empty string."""
    spelled = sorted({re.escape(name.strip()) for name in (agent_id, *names) if name.strip()}, key=len, reverse=True)
    return re.compile(rf"(?<!\w)(?:{'|'.join(spelled)})(?!\w)", re.IGNORECASE)


def canonical_record(capability: CanonicalCapability) -> Capability:
    """The record whose description stands for the capability across agents: the most informative (highest term
    entropy) of the records that have it available, or of all records when none has; ties go to the first
    agent by id. The record, not its text: the snippet names whose words they are."""
    candidates = [record for record in capability.records if record.available] or list(capability.records)
    return max(candidates, key=lambda record: description_stats(record.description).entropy)  # max keeps the first


def canonical_superseded_by(capability: CanonicalCapability) -> str | None:
    """The successor every record names (the most common when they differ; ties: alphabetically first); None when a
    record names none: one agent's deprecation said of the capability read as every agent's (a comparison's entries
    say each record's own)."""
    if not capability.records or not all(record.superseded_by for record in capability.records):
        return None
    counts = Counter(record.superseded_by for record in capability.records)
    return min(counts, key=lambda value: (-counts[value], value))


# --- injection --------------------------------------------------------------------------------------


def injection_section(injection: Injection, overhead_tokens: int) -> dict[str, Any]:
    """match.json's `injection`: the capidx.yaml settings and the measured label overhead."""
    return {
        "maxTokens": injection.max_tokens,
        "maxSnippets": injection.max_snippets,
        "labels": _label_rows(injection.labels),
        "overheadTokens": overhead_tokens,
    }


def injection_overhead(
    labels: Iterable[InjectionLabel],
    count_texts: Callable[[list[str]], list[int]],
    previous: Mapping[str, Any] | None = None,
) -> int:
    """`measure_overhead` for `labels`, reused from the previous match.json's `injection` when its labels are
    the same (the caller passes `previous` only when it was measured with the same primary encoding): a
    rebuild whose artifacts did not change must not load the tokenizer for ~300 label lines.

    `count_texts` counts a batch of texts in the primary encoding (one tokenizer call, not one per line).
    """
    labels = tuple(labels)
    reused = _previous_overhead(labels, previous)
    if reused is not None:
        return reused
    unique = overhead_texts(labels)
    counts = dict(zip(unique, count_texts(unique), strict=True))
    return measure_overhead(counts.__getitem__, labels)


def overhead_texts(labels: Iterable[InjectionLabel]) -> list[str]:
    """The distinct texts `measure_overhead` counts for `labels`, in order (a first pass that only records them)."""
    texts: list[str] = []
    measure_overhead(lambda text: texts.append(text) or 0, labels)
    return list(dict.fromkeys(texts))


def _previous_overhead(labels: tuple[InjectionLabel, ...], previous: Mapping[str, Any] | None) -> int | None:
    section = (previous or {}).get("injection")
    if not isinstance(section, dict) or not isinstance(section.get("overheadTokens"), int):
        return None
    return section["overheadTokens"] if section.get("labels") == _label_rows(labels) else None


def _label_rows(labels: Iterable[InjectionLabel]) -> list[dict[str, Any]]:
    """match.json's `injection.labels`."""
    return [{"label": label.label, "minConfidence": label.min_confidence} for label in labels]


def counter_batch(counter: Any, encoding: str) -> Callable[[list[str]], list[int]]:
    """Adapt a `tokens.TokenCounter` to `injection_overhead`'s `count_texts` (counts in `encoding`)."""

    def count(texts: list[str]) -> list[int]:
        return [row[encoding] for row in counter.count(_keyed(texts))]

    return count


def _keyed(texts: list[str]) -> list[tuple[str, str]]:
    return [(hashlib.sha256(text.encode("utf-8")).hexdigest(), text) for text in texts]
