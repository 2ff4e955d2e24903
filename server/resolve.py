"""Name resolution: what the user typed -> an agent id, a capability slug or a category.

Pure functions over `index/match.json` (docs/build-directory.md, "index/match.json"); the index is
computed at build time and the server only looks it up and scores. Order for capabilities:

1. exact: the normalized canonical name or slug;
2. alias: the alias table and each capability's own aliases;
3. terminology: an agent's own word for it (the asked agent's wording wins);
4. lexical: BM25 over the index's terms (idf/avgLength from the build), each query term corrected
   to the closest index term within a small edit distance, combined with a whole-string similarity
   (rapidfuzz) against names, aliases and terminology for typos;
5. when the best candidate is not clearly ahead, the top three come back with `matchConfidence`
   instead of a guess; when nothing scores at all, the closest names come back as suggestions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from capidx.server.text import normalize, terms

Status = Literal["resolved", "ambiguous", "unknown"]

# BM25 parameters (the usual defaults).
K1 = 1.2
B = 0.75
# A lexical winner must reach this confidence and lead the runner-up by this margin.
MIN_CONFIDENCE = 0.6
MIN_MARGIN = 0.15
# Below this, a candidate is noise: with no candidate above it, nothing matched.
FLOOR = 0.3
# Whole-string similarity (0-100) that counts as "the same words, mistyped".
TYPO_RATIO = 82
SUGGESTIONS = 3


@dataclass(frozen=True, slots=True)
class Candidate:
    """One possible answer, with how sure we are (0..1)."""

    value: str  # agent id, capability slug or category
    label: str  # display name
    confidence: float


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a name was resolved. `candidates` holds the top matches (ambiguous) or suggestions (unknown)."""

    query: str
    status: Status
    value: str | None = None
    resolved_by: str | None = None
    confidence: float = 0.0
    candidates: tuple[Candidate, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "resolved"

    def describe(self) -> dict[str, Any]:
        """Resolution metadata for a response's `_meta`."""
        described: dict[str, Any] = {"input": self.query, "status": self.status}
        if self.value is not None:
            described |= {"value": self.value, "resolvedBy": self.resolved_by, "matchConfidence": self.confidence}
        if self.candidates:
            described["candidates"] = [
                {"value": c.value, "label": c.label, "matchConfidence": c.confidence} for c in self.candidates
            ]
        return described


@dataclass(frozen=True, slots=True)
class AgentEntry:
    id: str
    name: str
    vendor: str


@dataclass(frozen=True, slots=True)
class CapabilityEntry:
    slug: str
    name: str
    category: str
    key: str
    agents: Mapping[str, Mapping[str, Any]]
    terms: Mapping[str, int]
    length: float
    # Normalized strings naming this capability (name, slug, aliases, terminology): typo matching.
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class MatchIndex:
    """`index/match.json`, parsed once per build and never mutated."""

    agents: Mapping[str, AgentEntry]
    agent_names: Mapping[str, tuple[str, ...]]
    capabilities: Mapping[str, CapabilityEntry]
    keys: Mapping[str, str]  # normalized name or slug -> slug
    aliases: Mapping[str, str]
    terminology: Mapping[str, tuple[tuple[str, str], ...]]  # wording -> ((agent, slug), ...)
    idf: Mapping[str, float]
    avg_length: float
    categories: tuple[str, ...]
    _compact_agents: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchIndex:
        agents = {row["id"]: AgentEntry(row["id"], row["name"], row.get("vendor", "")) for row in data["agents"]}
        agent_names = {normalize(k): tuple(v) for k, v in data["agentNames"].items()}
        for agent in agents.values():  # ids and names always resolve, even if the index left them out
            for spelling in (agent.id, agent.name):
                agent_names.setdefault(normalize(spelling), (agent.id,))
        aliases = {normalize(k): v for k, v in data["aliases"].items()}
        terminology = {
            normalize(k): tuple((use["agent"], use["capability"]) for use in v) for k, v in data["terminology"].items()
        }
        capabilities = {}
        for row in data["capabilities"]:
            names = {row["key"], normalize(row["name"]), normalize(row["slug"])}
            names |= {alias for alias, slug in aliases.items() if slug == row["slug"]}
            names |= {normalize(info["terminology"]) for info in row["agents"].values() if info.get("terminology")}
            capabilities[row["slug"]] = CapabilityEntry(
                slug=row["slug"],
                name=row["name"],
                category=row["category"],
                key=row["key"],
                agents=MappingProxyType({k: MappingProxyType(dict(v)) for k, v in row["agents"].items()}),
                terms=MappingProxyType(dict(row["terms"])),
                length=float(row["length"]),
                names=tuple(sorted(n for n in names if n)),
            )
        keys: dict[str, str] = {}
        for entry in capabilities.values():
            keys[entry.key] = entry.slug
            keys[normalize(entry.name)] = entry.slug
            keys[normalize(entry.slug)] = entry.slug
        compact: dict[str, set[str]] = {}
        for spelling, ids in agent_names.items():
            compact.setdefault(spelling.replace(" ", ""), set()).update(ids)
        return cls(
            agents=MappingProxyType(agents),
            agent_names=MappingProxyType(agent_names),
            capabilities=MappingProxyType(capabilities),
            keys=MappingProxyType(keys),
            aliases=MappingProxyType(aliases),
            terminology=MappingProxyType(terminology),
            idf=MappingProxyType({k: float(v) for k, v in data["idf"].items()}),
            avg_length=float(data["avgLength"]) or 1.0,
            categories=tuple(data["categories"]),
            _compact_agents=MappingProxyType({k: tuple(sorted(v)) for k, v in compact.items()}),
        )

    def agent_label(self, agent_id: str) -> str:
        agent = self.agents.get(agent_id)
        return agent.name if agent else agent_id


# --- agents -----------------------------------------------------------------------------------------


def resolve_agent(index: MatchIndex, query: str) -> Resolution:
    """An agent id from its id, name or nickname ('Claude Code', 'claude', 'gemini')."""
    n = normalize(query)
    if not n:
        return Resolution(query, "unknown", candidates=_agent_suggestions(index, n))
    ids = index.agent_names.get(n) or index._compact_agents.get(n.replace(" ", ""))
    if ids:
        if len(ids) > 1:
            share = round(1 / len(ids), 3)
            return Resolution(query, "ambiguous", candidates=tuple(_agent(index, i, share) for i in sorted(ids)))
        by = "exact" if n == normalize(ids[0]) else "name"
        return Resolution(query, "resolved", ids[0], by, 1.0)
    words = set(n.split())
    containing = sorted(
        {i for spelling, ids in index.agent_names.items() if words <= set(spelling.split()) for i in ids}
    )
    if len(containing) == 1:  # every word of the query names this agent ('github copilot cli')
        return Resolution(query, "resolved", containing[0], "name", 1.0)
    if containing:  # 'github copilot': both Copilots
        share = round(1 / len(containing), 3)
        return Resolution(query, "ambiguous", candidates=tuple(_agent(index, i, share) for i in containing))
    scored = _best_per_value(
        (ids, fuzz.ratio(n, spelling)) for spelling, ids in index.agent_names.items() if abs(len(spelling) - len(n)) < 5
    )
    ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
    if ranked and ranked[0][1] >= TYPO_RATIO and (len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= 5):
        return Resolution(query, "resolved", ranked[0][0], "fuzzy", round(ranked[0][1] / 100, 3))
    return Resolution(query, "unknown", candidates=_agent_suggestions(index, n))


def _agent(index: MatchIndex, agent_id: str, confidence: float) -> Candidate:
    return Candidate(agent_id, index.agent_label(agent_id), confidence)


def _agent_suggestions(index: MatchIndex, n: str) -> tuple[Candidate, ...]:
    scored = _best_per_value((ids, fuzz.WRatio(n, spelling)) for spelling, ids in index.agent_names.items())
    ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:SUGGESTIONS]
    return tuple(_agent(index, value, round(score / 100, 3)) for value, score in ranked)


def _best_per_value(pairs: Iterable[tuple[Iterable[str], float]]) -> dict[str, float]:
    best: dict[str, float] = {}
    for values, score in pairs:
        for value in values:
            best[value] = max(best.get(value, 0.0), score)
    return best


# --- capabilities -----------------------------------------------------------------------------------


def resolve_capability(index: MatchIndex, query: str, agent: str | None = None) -> Resolution:
    """A capability slug; `agent` (an id) makes that agent's own terminology win."""
    n = normalize(query)
    if not n:
        return Resolution(query, "unknown", candidates=_capability_suggestions(index, n))
    if (slug := index.keys.get(n)) is not None:
        return Resolution(query, "resolved", slug, "exact", 1.0)
    if (slug := index.aliases.get(n)) is not None and slug in index.capabilities:
        return Resolution(query, "resolved", slug, "alias", 1.0)
    if (uses := index.terminology.get(n)) is not None:
        resolved = _by_terminology(index, query, uses, agent)
        if resolved is not None:
            return resolved
    return _lexical(index, query, n)


def _by_terminology(
    index: MatchIndex, query: str, uses: tuple[tuple[str, str], ...], agent: str | None
) -> Resolution | None:
    own = sorted({slug for who, slug in uses if who == agent and slug in index.capabilities})
    anyone = sorted({slug for _, slug in uses if slug in index.capabilities})
    slugs = own or anyone
    if len(slugs) == 1:
        return Resolution(query, "resolved", slugs[0], "terminology", 1.0)
    if slugs:  # several agents use this word for different capabilities
        share = round(1 / len(slugs), 3)
        return Resolution(query, "ambiguous", candidates=tuple(_capability(index, s, share) for s in slugs))
    return None


def _lexical(index: MatchIndex, query: str, n: str) -> Resolution:
    query_terms, corrected = _correct_terms(index, terms(query))
    scores = _bm25(index, query_terms)
    top = max(scores.values(), default=0.0)
    total_weight = sum(index.idf.get(t, _max_idf(index)) for t in query_terms) or 1.0
    confidence: dict[str, float] = {}
    typo: dict[str, bool] = {}
    for slug, entry in index.capabilities.items():
        lexical = 0.0
        if scores.get(slug):
            coverage = sum(index.idf[t] for t in query_terms if t in entry.terms) / total_weight
            lexical = coverage * scores[slug] / top
        similarity = max((fuzz.ratio(n, name) for name in entry.names), default=0.0)
        string = similarity / 100 if similarity >= TYPO_RATIO else 0.0
        confidence[slug] = round(min(1.0, max(lexical, string)), 3)
        typo[slug] = string > lexical or (corrected and lexical > 0)
    ranked = sorted(confidence.items(), key=lambda item: (-item[1], -scores.get(item[0], 0.0), item[0]))
    best_slug, best = ranked[0] if ranked else ("", 0.0)
    if best < FLOOR:
        return Resolution(query, "unknown", candidates=_capability_suggestions(index, n))
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    if best >= MIN_CONFIDENCE and best - runner_up >= MIN_MARGIN:
        return Resolution(query, "resolved", best_slug, "fuzzy" if typo[best_slug] else "lexical", best)
    top_three = [(slug, c) for slug, c in ranked[:SUGGESTIONS] if c >= FLOOR / 2]
    return Resolution(query, "ambiguous", candidates=tuple(_capability(index, s, c) for s, c in top_three))


def _correct_terms(index: MatchIndex, raw: list[str]) -> tuple[list[str], bool]:
    """Replace each unknown term by the closest index term within a small edit distance."""
    result: list[str] = []
    corrected = False
    for term in dict.fromkeys(raw):  # unique, in order
        if term in index.idf or len(term) < 4:
            result.append(term)
            continue
        limit = 1 if len(term) <= 5 else 2
        match = process.extractOne(term, index.idf.keys(), scorer=Levenshtein.distance, score_cutoff=limit)
        if match is None:
            result.append(term)
        else:
            result.append(match[0])
            corrected = True
    return list(dict.fromkeys(result)), corrected


def _bm25(index: MatchIndex, query_terms: list[str]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for slug, entry in index.capabilities.items():
        norm = K1 * (1 - B + B * entry.length / index.avg_length)
        score = 0.0
        for term in query_terms:
            tf = entry.terms.get(term)
            if tf:
                score += index.idf.get(term, 0.0) * tf * (K1 + 1) / (tf + norm)
        if score > 0:
            scores[slug] = score
    return scores


def _max_idf(index: MatchIndex) -> float:
    # An unknown term weighs like the rarest known term: it matched nothing, so coverage drops.
    return max(index.idf.values(), default=1.0) or 1.0


def _capability(index: MatchIndex, slug: str, confidence: float) -> Candidate:
    return Candidate(slug, index.capabilities[slug].name, confidence)


def _capability_suggestions(index: MatchIndex, n: str) -> tuple[Candidate, ...]:
    scored = {
        slug: max((fuzz.WRatio(n, name) for name in entry.names), default=0.0) if n else 0.0
        for slug, entry in index.capabilities.items()
    }
    ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:SUGGESTIONS]
    return tuple(_capability(index, slug, round(score / 100, 3)) for slug, score in ranked)


# --- categories -------------------------------------------------------------------------------------


def resolve_category(index: MatchIndex, query: str) -> Resolution:
    """A category slug from its slug or words ('API integration' -> 'api-integration')."""
    n = normalize(query)
    spelled = {normalize(category): category for category in index.categories}
    if n in spelled:
        return Resolution(query, "resolved", spelled[n], "exact", 1.0)
    words = set(n.split())
    containing = sorted(category for key, category in spelled.items() if words and words <= set(key.split()))
    if len(containing) == 1:  # 'api' -> api-integration
        return Resolution(query, "resolved", containing[0], "name", 1.0)
    if containing:
        share = round(1 / len(containing), 3)
        return Resolution(query, "ambiguous", candidates=tuple(Candidate(c, c, share) for c in containing))
    ranked = sorted(
        ((category, fuzz.ratio(n, key)) for key, category in spelled.items()), key=lambda item: (-item[1], item[0])
    )
    if ranked and ranked[0][1] >= TYPO_RATIO and (len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= 5):
        return Resolution(query, "resolved", ranked[0][0], "fuzzy", round(ranked[0][1] / 100, 3))
    suggestions = sorted(
        ((category, fuzz.WRatio(n, key) if n else 0.0) for key, category in spelled.items()),
        key=lambda item: (-item[1], item[0]),
    )[:SUGGESTIONS]
    return Resolution(query, "unknown", candidates=tuple(Candidate(c, c, round(s / 100, 3)) for c, s in suggestions))


__all__ = [
    "Candidate",
    "MatchIndex",
    "Resolution",
    "resolve_agent",
    "resolve_capability",
    "resolve_category",
]
