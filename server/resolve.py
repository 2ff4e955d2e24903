"""Name resolution: what the user typed -> an agent id, a capability slug or a category.

Pure functions over `index/match.json` (docs/build-directory.md); the index is computed at build time, and
the server analyses each query once (`capidx.server.query.analyse`) and looks it up. Capabilities, in order:

1. exact tiers, as written: the normalized name or slug; a query of identifiers (`/compact`, `CLAUDE.md`)
   -> the capability whose records quote them most directly (match.json `identifiers`); an alias; an
   agent's own wording (the asked agent's wins); then the same keys compared on `terms()` (plurals, verb
   forms and stop words ignored: `stemmed`), and once more after typo correction (`fuzzy`);
2. everything else is ranked by one model (`capidx.server.rank`, BM25F) and one rule decides (`decide`,
   `DECISION_RULE`): resolve the winner, or offer the top candidates (labelled suggestions);
3. never a confident wrong "no": a winner the asked agent lacks needs the rule's stricter confidence.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from rapidfuzz import fuzz

from capidx.schema.text import STOP_WORDS, normalize, terms
from capidx.server.query import Query, Vocabulary, analyse, root
from capidx.server.rank import Document, Ranker

Status = Literal["resolved", "ambiguous", "unknown"]

# The decision rule (fitted on the query sets of benchmarks/resolution; calibration table in
# benchmarks/resolution/RESULTS.md): a ranked winner resolves when its confidence reaches the first value and it
# leads the runner-up by the second; a winner the asked agent lacks ("no") needs the third value instead of the
# first (at least 0.1 more, by design). Anything else comes back as candidates.
DECISION_RULE: tuple[float, float, float] = (0.26, 0.16, 0.36)
# Whole-string similarity (0-100) that counts as "the same words, mistyped" (agent and category names).
TYPO_RATIO = 82
SUGGESTIONS = 3
# An unresolved answer offers up to this many ranked candidates, down to this confidence; below half the
# rule's confidence nothing matched ("unknown") and the closest names fill the list.
SHOWN_CANDIDATES = 5
SHOWN_FLOOR = 0.02


@dataclass(frozen=True, slots=True)
class Candidate:
    """One possible answer, with how sure we are (0..1)."""

    value: str  # agent id, capability slug or category
    label: str  # display name
    confidence: float


# The `_meta` key under which resources and tools say how each name was resolved (`Resolution.describe`).
RESOLUTION_META = "capidx/resolution"


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a name was resolved. `candidates` holds the top matches (ambiguous) or suggestions (unknown);
    `ranked` every ranked candidate, best first (for budgeted suggestions)."""

    query: str
    status: Status
    value: str | None = None
    resolved_by: str | None = None
    confidence: float = 0.0
    candidates: tuple[Candidate, ...] = ()
    ranked: tuple[Candidate, ...] = field(default=(), compare=False, repr=False)
    scored: bool = field(default=False, compare=False, repr=False)  # decided by ranking, not by a lookup

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
    # Normalized strings naming this capability (name, slug, aliases, terminology): suggestions for unknown names.
    names: tuple[str, ...] = ()
    similar: tuple[tuple[str, float], ...] = ()  # `similarTo`: (slug, score), best first


@dataclass(frozen=True, slots=True)
class Injection:
    """match.json `injection`: the budget for suggestions (None: the server's defaults)."""

    max_tokens: int | None = None
    max_snippets: int | None = None
    labels: tuple[tuple[str, float], ...] = ()
    overhead_tokens: int | None = None


@dataclass(frozen=True)
class MatchIndex:
    """`index/match.json`, parsed once per build and never mutated."""

    agents: Mapping[str, AgentEntry]
    agent_names: Mapping[str, tuple[str, ...]]
    capabilities: Mapping[str, CapabilityEntry]
    keys: Mapping[str, str]  # normalized name or slug -> slug
    aliases: Mapping[str, str]
    terminology: Mapping[str, tuple[tuple[str, str], ...]]  # wording -> ((agent, slug), ...)
    categories: tuple[str, ...]
    ranker: Ranker
    vocabulary: Vocabulary
    injection: Injection | None = None
    # Stemmed key ('tool approval') -> ((slug, agent or None, source), ...); source: name/alias/terminology.
    stemmed: Mapping[str, tuple[tuple[str, str | None, str], ...]] = field(default_factory=dict)
    agent_words: frozenset[str] = frozenset()  # words naming an agent ('gemini'): not about a capability
    # Identifier token ('/compact') -> ((slug, agent or None, evidence), ...): where it occurs literally.
    identifiers: Mapping[str, tuple[tuple[str, str | None, float], ...]] = field(default_factory=dict)
    _compact_agents: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _agent_words: Mapping[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _category_keys: Mapping[str, str] = field(default_factory=dict, repr=False)  # normalized spelling -> slug

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
        # Inverted once, so each capability finds its aliases and wordings without scanning the whole tables
        # (loading stays linear in the catalog).
        named: dict[str, list[str]] = {}
        for alias, slug in aliases.items():
            named.setdefault(slug, []).append(alias)
        for wording, uses in terminology.items():
            for slug in dict.fromkeys(slug for _, slug in uses):
                named.setdefault(slug, []).append(wording)
        rows = data["capabilities"]
        capabilities = {row["slug"]: _capability_entry(row, named.get(row["slug"], ())) for row in rows}
        keys: dict[str, str] = {}
        for entry in capabilities.values():
            for spelling in (entry.key, normalize(entry.name), normalize(entry.slug)):
                keys[spelling] = entry.slug
        ranker = Ranker.build(
            Document(
                row["slug"],
                row["name"],
                [*row.get("aliases", ()), *named.get(row["slug"], ())],
                row["category"],
                row.get("description", row["terms"]),  # older builds: everything counts as description
                row["terms"],
            )
            for row in rows
        )
        words = frozenset(_agent_words(agent_names))
        names = tuple(frozenset(root(t) for t in terms(entry.name)) for entry in capabilities.values())
        vocabulary = Vocabulary(
            terms=frozenset(data["idf"]),
            roots=frozenset(ranker.idf),
            choices=tuple(sorted(data["idf"])),
            known=frozenset(str(k) for k in data.get("verbs", {})),
            names=names,
            named=frozenset().union(*names),
            agent_words=words,
        )
        return cls(
            agents=MappingProxyType(agents),
            agent_names=MappingProxyType(agent_names),
            capabilities=MappingProxyType(capabilities),
            keys=MappingProxyType(keys),
            aliases=MappingProxyType(aliases),
            terminology=MappingProxyType(terminology),
            categories=tuple(data["categories"]),
            ranker=ranker,
            vocabulary=vocabulary,
            injection=_injection(data.get("injection")),
            stemmed=MappingProxyType(_stemmed_keys(capabilities, aliases, terminology)),
            agent_words=words,
            identifiers=MappingProxyType(_identifier_places(data.get("identifiers", {}))),
            _compact_agents=MappingProxyType(_compact(agent_names)),
            _agent_words=MappingProxyType(_words_per_agent(agent_names)),
            _category_keys=MappingProxyType({normalize(category): category for category in data["categories"]}),
        )

    def agent_label(self, agent_id: str) -> str:
        agent = self.agents.get(agent_id)
        return agent.name if agent else agent_id


def stem_key(text: str) -> str:
    """The key two phrasings share when they differ only in plurals, verb forms or stop words."""
    return " ".join(terms(text))


# An identifier found in another agent's record weighs this share of the same in the asked agent's; a query of
# identifiers resolves by identifier when the best capability's evidence reaches IDENTIFIER_MIN and leads by
# IDENTIFIER_LEAD (a field or an agent apart).
OTHER_AGENT_IDENTIFIER = 0.4
IDENTIFIER_MIN = 0.6
IDENTIFIER_LEAD = 0.15
# How strongly a literal identifier in each field of a record points to its capability (match.json
# `identifiers`): a name or an agent's wording names it, a description or note only mentions it.
IDENTIFIER_EVIDENCE: Mapping[str, float] = MappingProxyType(
    {"name": 1.0, "terminology": 1.0, "alias": 0.9, "description": 0.8, "detail": 0.6, "source": 0.5}
)


def _identifier_places(data: Any) -> dict[str, tuple[tuple[str, str | None, float], ...]]:
    places: dict[str, tuple[tuple[str, str | None, float], ...]] = {}
    if not isinstance(data, Mapping):
        return places
    for token, rows in data.items():
        found = tuple(
            (str(row["capability"]), row.get("agent"), IDENTIFIER_EVIDENCE.get(str(row.get("field")), 0.5))
            for row in rows
            if isinstance(row, Mapping) and "capability" in row
        )
        if found:
            places[str(token)] = found
    return places


def _capability_entry(row: Mapping[str, Any], named: Iterable[str]) -> CapabilityEntry:
    """One capability; `named` are the normalized alias-table phrases and agents' wordings that name it."""
    slug = row["slug"]
    names = {
        row["key"],
        normalize(row["name"]),
        normalize(slug),
        *(normalize(a) for a in row.get("aliases", ())),
        *named,
    }
    return CapabilityEntry(
        slug=slug,
        name=row["name"],
        category=row["category"],
        key=row["key"],
        agents=MappingProxyType({k: MappingProxyType(dict(v)) for k, v in row["agents"].items()}),
        names=tuple(sorted(n for n in names if n)),
        similar=tuple(
            (item["capability"], float(item.get("score", 0.0)))
            for item in row.get("similarTo", ())
            if isinstance(item, Mapping) and "capability" in item
        ),
    )


def _injection(data: Any) -> Injection | None:
    if not isinstance(data, Mapping):
        return None
    labels = tuple(
        (str(item["label"]), float(item["minConfidence"]))
        for item in data.get("labels", ())
        if isinstance(item, Mapping) and "label" in item and "minConfidence" in item
    )
    return Injection(data.get("maxTokens"), data.get("maxSnippets"), labels, data.get("overheadTokens"))


def _stemmed_keys(
    capabilities: Mapping[str, CapabilityEntry],
    aliases: Mapping[str, str],
    terminology: Mapping[str, tuple[tuple[str, str], ...]],
) -> dict[str, tuple[tuple[str, str | None, str], ...]]:
    found: dict[str, set[tuple[str, str | None, str]]] = {}

    def add(text: str, slug: str, agent: str | None, source: str) -> None:
        if slug in capabilities and (key := stem_key(text)):
            found.setdefault(key, set()).add((slug, agent, source))

    for entry in capabilities.values():
        for text in (entry.name, entry.slug, entry.key):
            add(text, entry.slug, None, "name")
    for alias, slug in aliases.items():
        add(alias, slug, None, "alias")
    for wording, uses in terminology.items():
        for agent, slug in uses:
            add(wording, slug, agent, "terminology")
    return {key: tuple(sorted(values, key=lambda v: (v[0], v[1] or "", v[2]))) for key, values in found.items()}


def _compact(agent_names: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    compact: dict[str, set[str]] = {}
    for spelling, ids in agent_names.items():
        compact.setdefault(spelling.replace(" ", ""), set()).update(ids)
    return {k: tuple(sorted(v)) for k, v in compact.items()}


def _words_per_agent(agent_names: Mapping[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    """Every word any of an agent's names uses, with the two-word names also written as one word
    ('vs code' gives 'vs', 'code' and 'vscode')."""
    words: dict[str, set[str]] = {}
    for spelling, ids in agent_names.items():
        parts = spelling.split()
        joined = {a + b for a, b in itertools.pairwise(parts)}
        for agent_id in ids:
            words.setdefault(agent_id, set()).update(parts, joined)
    return {agent_id: frozenset(w) for agent_id, w in words.items()}


def _agent_words(agent_names: Mapping[str, tuple[str, ...]]) -> set[str]:
    return {spelling for spelling in agent_names if " " not in spelling and spelling not in STOP_WORDS}


# --- agents -----------------------------------------------------------------------------------------


def resolve_agent(index: MatchIndex, query: str) -> Resolution:
    """An agent id from its id, name or nickname ('Claude Code', 'claude', 'gemini', 'Copilot in VS Code')."""
    n = normalize(query)
    if not n:
        return Resolution(query, "unknown", candidates=_agent_suggestions(index, n))
    ids = index.agent_names.get(n) or index._compact_agents.get(n.replace(" ", ""))
    if ids:
        if len(ids) > 1:
            return _ambiguous_agents(index, query, ids)
        by = "exact" if n == normalize(ids[0]) else "name"
        return Resolution(query, "resolved", ids[0], by, 1.0)
    words = set(n.split())
    containing = sorted(
        {i for spelling, ids in index.agent_names.items() if words <= set(spelling.split()) for i in ids}
    )
    if not containing:
        # Every meaningful word of the query names one agent, possibly in different names of it:
        # 'copilot in vs code' uses 'copilot', 'vs code'; 'google gemini cli' the vendor and the name.
        meaningful = (words - STOP_WORDS) or words
        containing = sorted(agent for agent, known in index._agent_words.items() if meaningful <= known)
    if len(containing) == 1:  # every word of the query names this agent ('github copilot cli')
        return Resolution(query, "resolved", containing[0], "name", 1.0)
    if containing:  # 'github copilot': both Copilots
        return _ambiguous_agents(index, query, containing)
    scored = _best_per_value(
        (ids, fuzz.ratio(n, spelling)) for spelling, ids in index.agent_names.items() if abs(len(spelling) - len(n)) < 5
    )
    ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
    if ranked and ranked[0][1] >= TYPO_RATIO and (len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= 5):
        return Resolution(query, "resolved", ranked[0][0], "fuzzy", round(ranked[0][1] / 100, 3))
    return Resolution(query, "unknown", candidates=_agent_suggestions(index, n))


def _ambiguous_agents(index: MatchIndex, query: str, ids: Iterable[str]) -> Resolution:
    ordered = sorted(ids)
    share = round(1 / len(ordered), 3)
    return Resolution(query, "ambiguous", candidates=tuple(_agent(index, i, share) for i in ordered))


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
    """A capability slug; `agent` (an id) makes that agent's own terminology and identifiers win, and keeps
    a loose match from saying the agent lacks something."""
    q = analyse(query, index.vocabulary)
    n = q.normalized
    if not n:
        return Resolution(query, "unknown", candidates=_capability_suggestions(index, n))
    if (slug := index.keys.get(n)) is not None:
        return Resolution(query, "resolved", slug, "exact", 1.0)
    evidence = _identifier_evidence(index, q.identifiers, agent)
    if evidence:  # '/memory' is not the word 'memory': identifiers decide before normalized forms
        resolved = _by_identifier(index, query, evidence, q.rest)
        if resolved is not None:
            runner_up = resolved.ranked[1].confidence if len(resolved.ranked) > 1 else 0.0
            return _no_rule(index, resolved, agent, resolved.ranked[:SHOWN_CANDIDATES], runner_up)
        return _by_ranking(index, q, agent)
    if (slug := index.aliases.get(n)) is not None and slug in index.capabilities:
        return Resolution(query, "resolved", slug, "alias", 1.0)
    if (uses := index.terminology.get(n)) is not None:
        resolved = _by_terminology(index, query, uses, agent)
        if resolved is not None:
            return resolved
    if (resolved := _by_stemmed_key(index, query, q.key, agent, "stemmed", 1.0)) is not None:
        return resolved
    if q.corrected_key:
        resolved = _by_stemmed_key(index, query, q.corrected_key, agent, "fuzzy", q.similarity)
        if resolved is not None:
            return resolved
    if q.mistyped and (resolved := _by_similar_name(index, query, n)) is not None:
        return resolved
    return _by_ranking(index, q, agent)


def _by_similar_name(index: MatchIndex, query: str, n: str) -> Resolution | None:
    """A whole name, alias or wording mistyped ('hoks', 'mcp srvers'): the one clearly most similar string, at
    least `TYPO_RATIO` similar, resolves as `fuzzy`."""
    scored = sorted(
        ((max(fuzz.ratio(n, name) for name in entry.names), slug) for slug, entry in index.capabilities.items()),
        reverse=True,
    )
    if scored and scored[0][0] >= TYPO_RATIO and (len(scored) == 1 or scored[0][0] - scored[1][0] >= 5):
        return Resolution(query, "resolved", scored[0][1], "fuzzy", round(scored[0][0] / 100, 3))
    return None


def _identifier_evidence(index: MatchIndex, literal: Sequence[str], agent: str | None) -> dict[str, float]:
    """Capability -> how strongly the query's identifiers point to it: per identifier the strongest place it
    occurs (`IDENTIFIER_EVIDENCE`; in another agent's record `OTHER_AGENT_IDENTIFIER` of that), summed over
    the identifiers and divided by their number (an identifier nothing mentions lowers every score)."""
    if not literal:
        return {}
    tokens = list(dict.fromkeys(literal))
    found: dict[str, float] = {}
    for token in tokens:
        best: dict[str, float] = {}
        for slug, who, weight in index.identifiers.get(token, ()):
            if slug in index.capabilities:
                value = weight if who is None or agent is None or who == agent else weight * OTHER_AGENT_IDENTIFIER
                best[slug] = max(best.get(slug, 0.0), value)
        for slug, value in best.items():
            found[slug] = found.get(slug, 0.0) + value / len(tokens)
    return found


def _by_identifier(
    index: MatchIndex, query: str, evidence: Mapping[str, float], rest: Sequence[str]
) -> Resolution | None:
    """A query that is only identifiers ('/compact', 'CLAUDE.md') resolves to the capability whose records
    name them most directly, when it leads the next one by `IDENTIFIER_LEAD` (a field or an agent apart)."""
    if any(term not in index.agent_words for term in rest):
        return None  # words besides the identifiers: scoring weighs both
    ranked = sorted(evidence.items(), key=lambda item: (-item[1], item[0]))
    best_slug, best = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    if best >= IDENTIFIER_MIN and best - runner_up >= IDENTIFIER_LEAD:
        everything = tuple(_capability(index, s, round(c, 3)) for s, c in ranked)
        return Resolution(query, "resolved", best_slug, "identifier", round(best, 3), ranked=everything, scored=True)
    return None


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


def _by_stemmed_key(
    index: MatchIndex, query: str, key: str, agent: str | None, how: str, confidence: float
) -> Resolution | None:
    """Names and aliases first, then the asked agent's wording, anyone's wording, trigger phrases:
    the first group naming exactly one capability wins; a group naming several is left to scoring."""
    entries = index.stemmed.get(key, ()) if key else ()
    groups = (
        {slug for slug, _, source in entries if source in ("name", "alias")},
        {slug for slug, who, source in entries if source == "terminology" and who == agent},
        {slug for slug, _, source in entries if source == "terminology"},
        {slug for slug, _, source in entries if source == "trigger"},
    )
    for slugs in groups:
        if len(slugs) == 1:
            return Resolution(query, "resolved", slugs.pop(), how, confidence)
        if slugs:
            return None
    return None


def score_capabilities(index: MatchIndex, query: str | Query) -> dict[str, float]:
    """Every capability's ranked confidence (0..1) for a free-text query."""
    q = query if isinstance(query, Query) else analyse(query, index.vocabulary)
    return index.ranker.rank(q.units)


def _by_ranking(index: MatchIndex, q: Query, agent: str | None) -> Resolution:
    """The ranking model's answer, as `decide` rules: the winner, or the top candidates."""
    ordered = [_capability(index, s, c) for s, c in sorted(score_capabilities(index, q).items(), key=_best_first)]
    floor = DECISION_RULE[0] / 2  # below it a candidate is noise: suggestions' snippets skip it
    everything = tuple(c for c in ordered if c.confidence >= floor)
    shown = tuple(c for c in ordered[:SHOWN_CANDIDATES] if c.confidence >= SHOWN_FLOOR)
    best = ordered[0].confidence if ordered else 0.0
    if best < floor:  # nothing matched: what ranked a little first, then the closest names
        # A name that merely looks like the query is weaker evidence than words that ranked: its similarity is
        # scaled below, so no suggestion of an unknown name claims a confidence a resolved answer would have.
        fill = tuple(
            Candidate(c.value, c.label, round(c.confidence * DECISION_RULE[0] / 4, 3))
            for c in _capability_suggestions(index, q.normalized)
            if c.value not in {s.value for s in shown}
        )
        suggestions = shown + fill[: max(0, SUGGESTIONS - len(shown))]
        return Resolution(q.text, "unknown", candidates=suggestions, ranked=everything, scored=True)
    runner_up = ordered[1].confidence if len(ordered) > 1 else 0.0
    if decide(best, runner_up):
        how = "fuzzy" if q.corrected_key else "lexical"
        winner = Resolution(q.text, "resolved", ordered[0].value, how, best, ranked=everything, scored=True)
        return _no_rule(index, winner, agent, shown, runner_up)
    return Resolution(q.text, "ambiguous", candidates=shown, ranked=everything, scored=True)


def _best_first(item: tuple[str, float]) -> tuple[float, str]:
    return (-item[1], item[0])


def decide(best: float, runner_up: float, lacks: bool = False, rule: tuple[float, float, float] | None = None) -> bool:
    """Whether a ranked winner is clear enough to resolve: confident enough (more so for a winner the asked agent
    lacks) and ahead of the runner-up by the rule's lead (confidences are shares of the query explained)."""
    confidence, lead, no = rule or DECISION_RULE
    return best >= (no if lacks else confidence) and best - runner_up >= lead


def _no_rule(
    index: MatchIndex, resolution: Resolution, agent: str | None, offered: tuple[Candidate, ...], runner_up: float
) -> Resolution:
    """Never a confident wrong "no": a ranked or identifier answer that the asked agent lacks the capability
    stands only at the rule's stricter confidence; below it, the candidates come back instead."""
    if agent is None or not resolution.ok or _has(index, resolution.value or "", agent):
        return resolution
    if decide(resolution.confidence, runner_up, lacks=True):
        return resolution
    return Resolution(resolution.query, "ambiguous", candidates=offered, ranked=resolution.ranked, scored=True)


def _has(index: MatchIndex, slug: str, agent: str) -> bool:
    entry = index.capabilities.get(slug)
    return entry is not None and bool(entry.agents.get(agent, {}).get("available", False))


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
    spelled = index._category_keys
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
    "DECISION_RULE",
    "Candidate",
    "Injection",
    "MatchIndex",
    "Resolution",
    "decide",
    "resolve_agent",
    "resolve_capability",
    "resolve_category",
    "score_capabilities",
    "stem_key",
]
