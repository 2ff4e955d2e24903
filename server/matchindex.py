"""`index/match.json` parsed once per build (`MatchIndex`), and the answer types of name resolution.

Why: every lookup reads the same build-time index (docs/build-directory.md, "index/match.json"); parsing it
once, inverting its tables once (linear in the catalog) and building the ranking model's statistics once
(`capidx.server.rank.Ranker`) keeps each request to lookups. `Resolution` and `Candidate` are what the
resolvers (`capidx.server.resolve` for capabilities, `capidx.server.names` for agents and categories) answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from capidx.schema.text import STOP_WORDS, normalize, terms
from capidx.server.query import Vocabulary, root
from capidx.server.rank import Document, Ranker

Status = Literal["resolved", "ambiguous", "unknown"]


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
