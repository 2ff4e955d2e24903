"""`index/match.json` parsed once per build (`MatchIndex`), and the answer types of name resolution: the lookup
tables and ranking model are built once, linear in the catalog, so that each request is lookups.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from capidx.schema.text import normalize, terms
from capidx.server.listings import Listings
from capidx.server.query import QUESTION_WORDS, Query, Vocabulary, root
from capidx.server.rank import Ranker
from capidx.server.semantic import Meanings
from capidx.server.suggest import Injection

RESOLUTION_META = "capidx/resolution"  # the `_meta` key of `Resolution.describe`
# How strongly an identifier in each field of a record points to its capability: a name names it, a note mentions it.
IDENTIFIER_EVIDENCE: Mapping[str, float] = MappingProxyType(
    {"name": 1.0, "terminology": 1.0, "alias": 0.9, "description": 0.8, "detail": 0.6, "source": 0.5}
)
TRIGGERS_INDEXED = 2  # the index version from which the agents rows carry trigger phrases
K, V = TypeVar("K"), TypeVar("V")


@dataclass(frozen=True, slots=True)
class Candidate:
    """One possible answer, with how sure we are (0..1)."""

    value: str  # agent id, capability slug or category
    label: str  # display name
    confidence: float


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a name was resolved: `candidates` the top matches or suggestions, `ranked` all that ranked, best first."""

    query: str
    status: Literal["resolved", "ambiguous", "unknown"]
    value: str | None = None
    resolved_by: str | None = None
    confidence: float = 0.0
    candidates: tuple[Candidate, ...] = ()
    ranked: tuple[Candidate, ...] = field(default=(), compare=False, repr=False)
    scored: bool = field(default=False, compare=False, repr=False)  # decided by ranking, not by a lookup
    analysed: Query | None = field(default=None, compare=False, repr=False)  # as the ranking read it, for notes

    @property
    def ok(self) -> bool:
        return self.status == "resolved"

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"input": self.query, "status": self.status}
        if self.value is not None:
            described |= {"value": self.value, "resolvedBy": self.resolved_by, "matchConfidence": self.confidence}
        if self.candidates:
            described["candidates"] = [
                {"value": c.value, "label": c.label, "matchConfidence": c.confidence} for c in self.candidates
            ]
        return described


@dataclass(frozen=True, slots=True)
class CapabilityEntry:
    slug: str
    name: str
    category: str
    agents: Mapping[str, Mapping[str, Any]]
    names: tuple[str, ...]  # normalized name, slug, aliases and wordings: what a mistyped name is held up to
    similar: tuple[tuple[str, float], ...]  # `similarTo`: (slug, score), best first

    def available_to(self, agent: str) -> bool:
        return bool(self.agents.get(agent, {}).get("available", False))


@dataclass(frozen=True, slots=True)
class NameTable:
    """Spellings of a few short names (agents, categories) and each value's words, also run together ('vscode')."""

    spellings: Mapping[str, tuple[str, ...]]  # normalized spelling -> values
    words: Mapping[str, frozenset[str]]
    # the first two or more words of a spelling of three or more -> the words that follow them in some spelling, and
    # the values of those spellings: a name that stops inside one ('visual studio' of 'visual studio code') may be
    # another product (server/names.py)
    continuations: Mapping[tuple[str, ...], tuple[frozenset[str], frozenset[str]]]
    every_word: frozenset[str]  # every word of every spelling: where a name may begin or end in a longer text
    second_words: Mapping[str, frozenset[str]]  # a spelling's first word -> the second words of those it begins

    @classmethod
    def build(cls, spellings: Mapping[str, tuple[str, ...]]) -> NameTable:
        words: dict[str, set[str]] = {}
        going_on: dict[tuple[str, ...], tuple[set[str], set[str]]] = {}
        seconds: dict[str, set[str]] = {}
        for spelling, values in spellings.items():
            parts = spelling.split()
            if len(parts) > 1:
                seconds.setdefault(parts[0], set()).add(parts[1])
            for value in values:
                words.setdefault(value, set()).update(parts, ["".join(parts)], map("".join, itertools.pairwise(parts)))
            for end in range(2, len(parts)):
                following, owners = going_on.setdefault(tuple(parts[:end]), (set(), set()))
                following.add(parts[end])
                owners.update(values)
        return cls(
            MappingProxyType(dict(spellings)),
            MappingProxyType({k: frozenset(v) for k, v in words.items()}),
            MappingProxyType({k: (frozenset(f), frozenset(o)) for k, (f, o) in going_on.items()}),
            frozenset(word for spelling in spellings for word in spelling.split()),
            MappingProxyType({k: frozenset(v) for k, v in seconds.items()}),
        )


@dataclass(frozen=True)
class MatchIndex:
    """`index/match.json`, parsed once per build and never mutated."""

    agents: Mapping[str, str]  # id -> name
    vendors: Mapping[str, str]  # id -> vendor, when the build says it
    agent_names: NameTable  # -> agent ids
    listings: Listings  # what each agent's file lists (platforms, models), for the notes that say it
    capabilities: Mapping[str, CapabilityEntry]
    keys: Mapping[str, str]  # normalized name or slug -> slug
    aliases: Mapping[str, str]
    own_aliases: Mapping[tuple[str, str], str]  # (agent, an alias its record gives) -> slug: the asked agent's first
    terminology: Mapping[str, tuple[tuple[str, str], ...]]  # wording -> ((agent, slug), ...)
    stemmed: Mapping[str, str]  # `terms()` of a name or alias naming one capability ('tool approval') -> slug
    # Identifier token ('/compact') -> ((slug, agent or None, evidence), ...): where it occurs literally.
    identifiers: Mapping[str, tuple[tuple[str, str | None, float], ...]]
    categories: tuple[str, ...]  # those some capability is in
    empty_categories: tuple[str, ...]  # those the schema defines and no capability is in ('debugging')
    category_names: NameTable  # both
    names: tuple[str, ...]  # every capability's `names`, each once: whole-string similarity is one C loop over them
    name_owners: tuple[frozenset[str], ...]  # per name: the capabilities that have it
    ranker: Ranker
    vocabulary: Vocabulary
    meanings: Meanings
    injection: Injection | None
    triggers_indexed: bool = False  # the rows carry triggers (version 2): a word of no text is known absent

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchIndex:
        agents = {row["id"]: row["name"] for row in data["agents"]}
        empty = data.get("emptyCategories", ())  # older builds: none
        agent_names = {normalize(k): _names(v) for k, v in data["agentNames"].items()}
        for agent_id, name in agents.items():  # ids and names always resolve, even if the index left them out
            for spelling in (agent_id, name):
                agent_names.setdefault(normalize(spelling), (agent_id,))
        aliases = {normalize(k): v for k, v in data["aliases"].items()}
        terminology = {
            normalize(k): tuple((use["agent"], use["capability"]) for use in v) for k, v in data["terminology"].items()
        }
        rows = data["capabilities"]
        # Each capability's aliases, then the alias-table phrases and agents' wordings that name it, inverted once.
        named = {row["slug"]: dict.fromkeys(map(normalize, row.get("aliases", ()))) for row in rows}
        wordings = ((wording, slug) for wording, uses in terminology.items() for _, slug in uses)
        for phrase, slug in itertools.chain(aliases.items(), wordings):
            named.setdefault(slug, {})[phrase] = None
        ranker = Ranker.build(rows, named)
        capabilities = MappingProxyType({row["slug"]: _capability_entry(row, named[row["slug"]]) for row in rows})
        owners = _grouped((name, slug) for slug, entry in capabilities.items() for name in entry.names)
        spelled = [(text, row["slug"]) for row in rows for text in (row["name"], row["slug"])]
        keys = {normalize(text): slug for text, slug in spelled}
        # a key chord ('Cmd+I') has no words: 'cmd' alone does not name Inline Chat
        chords = {normalize(alias) for row in rows for alias in row.get("aliases", ()) if not terms(alias)}
        named_as = [*spelled, *((alias, slug) for alias, slug in aliases.items() if alias not in chords)]
        stemmed = _grouped((" ".join(terms(text)), slug) for text, slug in named_as)
        name_roots = MappingProxyType({row["slug"]: frozenset(map(root, terms(row["name"]))) for row in rows})
        identifiers = {
            token: tuple((row["capability"], row.get("agent"), IDENTIFIER_EVIDENCE[row["field"]]) for row in found)
            for token, found in data.get("identifiers", {}).items()
        }
        vendors = {row["id"]: row["vendor"] for row in data["agents"] if isinstance(row.get("vendor"), str)}
        return cls(
            agents=MappingProxyType(agents),
            vendors=MappingProxyType(vendors),
            listings=Listings.from_json(data["agents"], agent_names),
            agent_names=NameTable.build(agent_names),
            capabilities=capabilities,
            keys=MappingProxyType(keys),
            aliases=MappingProxyType(aliases),
            own_aliases=_own_aliases(capabilities),
            terminology=MappingProxyType(terminology),
            stemmed=MappingProxyType({key: min(s) for key, s in stemmed.items() if key and len(s) == 1}),
            identifiers=MappingProxyType(identifiers),
            categories=tuple(data["categories"]),
            empty_categories=tuple(empty),
            category_names=NameTable.build({normalize(c): (c,) for c in (*empty, *data["categories"])}),
            names=tuple(owners),
            name_owners=tuple(owners.values()),
            ranker=ranker,
            vocabulary=Vocabulary(
                terms=frozenset(t for row in rows for t in row["terms"]),
                roots=frozenset(ranker.idf),
                names=_grouped((word, slug) for slug, roots in name_roots.items() for word in roots),
                name_roots=name_roots,
                named=_grouped(
                    (word, held)
                    for held in map(frozenset, map(terms, itertools.chain(keys, *named.values())))
                    for word in held & QUESTION_WORDS
                ),
            ),
            meanings=Meanings.of(rows),
            injection=Injection.from_json(data.get("injection")),
            triggers_indexed=_version(data) >= TRIGGERS_INDEXED,
        )

    def agent_label(self, agent_id: str) -> str:
        return self.agents.get(agent_id, agent_id)

    def identifier_holders(self, token: str, slug: str) -> frozenset[str | None]:
        """The agents whose records of `slug` hold the identifier (None: the alias table)."""
        return frozenset(who for found, who, _ in self.identifiers.get(token, ()) if found == slug)


def _version(data: Mapping[str, Any]) -> int:
    version = data.get("version", 1)
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def _own_aliases(capabilities: Mapping[str, CapabilityEntry]) -> Mapping[tuple[str, str], str]:
    """(agent, alias) -> slug from each record: a phrase two records claim is the asked agent's own first."""
    found: dict[tuple[str, str], str] = {}
    for slug, entry in capabilities.items():
        for agent, record in entry.agents.items():
            aliases = record.get("aliases")
            for alias in aliases if isinstance(aliases, list) else ():
                if isinstance(alias, str):
                    found.setdefault((agent, normalize(alias)), slug)
    return MappingProxyType(found)


def _capability_entry(row: Mapping[str, Any], named: Iterable[str]) -> CapabilityEntry:
    names = {normalize(text) for text in (row["name"], row["slug"], *named)}
    return CapabilityEntry(
        slug=row["slug"],
        name=row["name"],
        category=row["category"],
        agents=MappingProxyType({k: MappingProxyType(dict(v)) for k, v in row["agents"].items()}),
        names=tuple(sorted(n for n in names if n)),
        similar=tuple((str(item["capability"]), _score(item["score"])) for item in row.get("similarTo", ())),
    )


def _names(value: Any) -> tuple[str, ...]:
    """A spelling's agent ids as the build writes them (a forged index is refused at load, not failed per lookup)."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"an agentNames entry must be a list of agent ids, not {value!r:.40}")
    return tuple(value)


def _score(value: Any) -> float:
    """A similarity score as the build writes it: a finite number (not a string, a boolean or 1e400)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"a similarity score must be a finite number, not {value!r:.40}")
    return float(value)


def _grouped(pairs: Iterable[tuple[K, V]]) -> Mapping[K, frozenset[V]]:
    found: dict[K, set[V]] = {}
    for key, value in pairs:
        found.setdefault(key, set()).add(value)
    return MappingProxyType({key: frozenset(values) for key, values in found.items()})
