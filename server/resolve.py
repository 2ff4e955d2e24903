"""Name resolution: what the user typed -> an agent id, a capability slug or a category.

Pure functions over `index/match.json` (docs/build-directory.md, "index/match.json" and "The enhanced
index"); the index is computed at build time and the server only looks it up and scores. Whatever a
build leaves out (older builds have no `verbs`, `triggerPhrases`, `useWhen`, ...) simply contributes
nothing. Order for capabilities:

1. exact: the normalized canonical name or slug;
1b. identifier: a query made of identifiers (`/compact`, `CLAUDE.md`, `--yolo`:
   `capidx.schema.lexicon.identifiers`) resolves to the capability whose records quote them most
   directly (match.json `identifiers`), before any normalized lookup turns '/memory' into 'memory';
2. alias: the alias table and each capability's own aliases;
3. terminology: an agent's own word for it (the asked agent's wording wins);
4. trigger: an explicit trigger phrase, as written;
5. stemmed: the same tiers compared on `terms()` keys (plurals, verb forms and stop words ignored:
   'the release notes' is the alias 'release note'), then once more after correcting typos term by
   term ('brekpoints' -> 'breakpoint', the name of Breakpoints), which resolves as `fuzzy`;
6. scored: every capability gets a confidence from independent signals -- field-weighted BM25
   (BM25F: a term in a name, alias, an agent's wording or a trigger counts far more than one in a
   description; in coverage a term only an alias or trigger gives counts `HINT_TERM`), a whole name, alias
   or trigger phrase contained in the query, the capability's
   `useWhen` patterns (compiled once per build, on first use; each worth its stated confidence times how much
   of the query the match explains), whole-string
   typo similarity, a verb only a few capabilities do (`actionTriggers`), identifiers quoted in the
   capability's records -- the strongest signal plus half of the next one times what is left. Query
   words are slots whose alternatives include verb forms and the lexicon's expansions of
   abbreviations ('PR' -> 'pull request', `capidx.schema.lexicon.ABBREVIATIONS`) and, weaker, index
   terms of the same Snowball root and related wordings of the same idea (`capidx.server.concepts`);
   neighbouring query words found together in a name or description (match.json `bigrams`) count like
   a name match;
7. when the best candidate is not clearly ahead (`decide`, calibrated on the blind benchmark), the
   top three come back with `matchConfidence` instead of a guess; when nothing scores at all, what
   scored a little and the closest names come back as suggestions;
8. never a confident wrong "no" (`_guarded`): a loose answer that the asked agent lacks the
   capability, while a close candidate is one it has, comes back as candidates.
"""

from __future__ import annotations

import itertools
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from capidx.schema.lexicon import IDENTIFIER_PATTERN, expansions, identifiers
from capidx.schema.text import STOP_WORDS, normalize, terms
from capidx.server.concepts import families, related, related_phrase, root

if TYPE_CHECKING:  # imported where the patterns are compiled: on the first request that needs them
    import regex

Status = Literal["resolved", "ambiguous", "unknown"]

# BM25 parameters (the usual defaults).
K1 = 1.2
B = 0.75
# A scored winner resolves when it is confident with a modest lead over the runner-up, less confident with a
# large one, or weaker still but nearly alone: a lead is a share of the winner's own confidence (`decide`;
# calibrated on the blind benchmark: docs/benchmarks.md, "Lookup quality and latency"). Looser cells fitted the
# tuning sets but were wrong on the held-out set: a wrong answer costs more than a list of candidates with the
# right one first.
DECISION_RULE: tuple[tuple[float, float], ...] = ((0.7, 0.15), (0.6, 0.5), (0.45, 0.65))  # (min confidence, lead)
# A scored "the asked agent lacks it" needs the stricter cells only (the worst answer is a confident
# wrong "no"): a weak, lone winner the agent lacks comes back as a candidate.
NO_RULE: tuple[tuple[float, float], ...] = ((0.7, 0.15), (0.6, 0.5))
# At or above this confidence a scored answer may say the asked agent lacks the capability even when a
# close candidate (one the winner leads by less than CLOSE_LEAD of its confidence) is one it has
# (`_guarded`); below it, the candidates come back instead.
HIGH_CONFIDENCE = 0.9
CLOSE_LEAD = 0.5
# Below this, a candidate is noise: with no candidate above it, nothing matched.
FLOOR = 0.3
# Whole-string similarity (0-100) that counts as "the same words, mistyped".
TYPO_RATIO = 82
SUGGESTIONS = 3
# When nothing is resolved, the scorer's candidates offered: up to this many, down to this confidence. A
# "not resolved, here are the candidates" answer that holds the right capability is far better than one that
# lacks it, and a descriptive sentence's right capability is often ranked 4th or 5th at a low confidence. Five
# short rows cost about 50 tokens more than three; the snippets answering the question stay the top three
# (server/tools.py).
SHOWN_CANDIDATES = 5
SHOWN_FLOOR = 0.05

# BM25F: a query term found in one of these fields counts as this many extra occurrences; a term found
# only in descriptions counts as itself. Names and aliases are what people call a capability.
FIELD_WEIGHTS: Mapping[str, float] = MappingProxyType({"name": 4.0, "alias": 3.0, "terminology": 3.0, "trigger": 2.0})
# Coverage (the share of the query a capability explains): a term found only in descriptions explains
# this much of itself (a description mentions many things); one matched through another form of the
# same verb ('approval' ~ 'approve') this much of that.
DESCRIPTION_ONLY = 0.8
# A term that only an alias or a trigger phrase gives a capability (`CapabilityEntry.hinted`) explains this much
# of itself: a maintainer's hint on one word is no better evidence of what a sentence asks than a description's
# word (a hint that IS the query still resolves as `alias` or `trigger` before scoring).
HINT_TERM = 0.9
VERB_FORM = 0.8
# A query word may also stand for another index term of the same Snowball root ('approval' ~ 'approve':
# `capidx.server.concepts.root`) and, weaker, for a related wording of the same idea ('remember' ~ 'memory':
# `capidx.server.concepts.CONCEPTS`); a match through one counts this share.
ROOT_FORM = 0.9
RELATED = 0.7
# A whole name, alias, wording or trigger phrase found inside a longer query: a base, plus shares for
# how specific the phrase is (its idf against the rarest term's) and how much of the query it covers.
# Trigger phrases count a little less.
CONTAINED_BASE = 0.1
CONTAINED_SPECIFICITY = 0.3
CONTAINED_TRIGGER = 0.9
# How much of the second-strongest signal is added on top of the strongest (agreeing evidence).
AGREEMENT = 0.5
# A verb pointing to at most this many capabilities (`actionTriggers`) is evidence for them.
SPECIFIC_VERB = 3
VERB_EVIDENCE = 0.45
# ... times the verb's share of the query's idf, at least this much (a verb among several words still says
# what the user wants done, but 'deploy to Kubernetes' is as much about Kubernetes).
VERB_MIN_SHARE = 0.5
# Identifiers ('/compact', 'CLAUDE.md'): a word that is only part of one weighs this much (the identifier
# is the evidence); an identifier found in another agent's record weighs this share of the same in the
# asked agent's; an identifier-only query resolves by identifier when the best capability's evidence
# reaches IDENTIFIER_MIN and leads by IDENTIFIER_LEAD; otherwise the evidence is a scoring signal of
# this strength.
IDENTIFIER_PART = 0.3
OTHER_AGENT_IDENTIFIER = 0.4
IDENTIFIER_MIN = 0.6
IDENTIFIER_LEAD = 0.15
IDENTIFIER_SIGNAL = 0.9
# A query word no capability's text has weighs this share of the rarest known term's idf in the query's
# total: it lowers coverage (the query asks about something not described), but a sentence's incidental
# words ('go back to how it was three turns ago') should not drown the words that match.
UNKNOWN_WEIGHT = 0.5
# ... except in a short query (at most this many words about the capability), where every word was chosen:
# an unknown word there ('voice input', 'deploy to Kubernetes') names something the catalog does not
# describe and weighs fully.
SHORT_QUERY = 3
# Typo correction: an unknown term of at least this many letters is replaced by the closest index term one
# typing error away (two from a word of at least LONG_TYPO letters), a plausible one (`_plausible_typo`: in a
# word of up to SHORT_TYPO letters only a missing or swapped letter); the correction weighs as much as it is
# similar.
MIN_CORRECTABLE = 4
SHORT_TYPO = 5
LONG_TYPO = 9


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
    `ranked` every scored candidate, best first (for budgeted suggestions)."""

    query: str
    status: Status
    value: str | None = None
    resolved_by: str | None = None
    confidence: float = 0.0
    candidates: tuple[Candidate, ...] = ()
    ranked: tuple[Candidate, ...] = field(default=(), compare=False, repr=False)
    scored: bool = field(default=False, compare=False, repr=False)  # decided by scoring, not by a lookup

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
class UseWhen:
    """A `useWhen` rule: the regular expression as written and its confidence (`MatchIndex.use_when_rules`
    compiles it)."""

    pattern: str
    confidence: float


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
    # Term -> the BM25F weight of the strongest field it occurs in (name, alias, terminology, trigger).
    fields: Mapping[str, float] = field(default_factory=dict)
    # Terms of `fields` that only a maintainer's hint (an alias or a trigger phrase) has, not a name or a wording:
    # in coverage they explain `HINT_TERM` of themselves.
    hinted: frozenset[str] = frozenset()
    # Stemmed term sequences of names, aliases and wordings (False) and trigger phrases (True).
    phrases: tuple[tuple[tuple[str, ...], bool], ...] = ()
    # match.json `bigrams` ("a b": consecutive terms of its name, wordings and descriptions), as stored: a
    # query pair is looked up through its words' families (`_pair_keys`), so loading costs no stemming.
    pairs: frozenset[str] = frozenset()
    use_when: tuple[UseWhen, ...] = ()
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
    idf: Mapping[str, float]
    avg_length: float
    categories: tuple[str, ...]
    trigger_phrases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    verbs: Mapping[str, str] = field(default_factory=dict)  # stemmed surface form -> verb
    action_triggers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # verb -> slugs
    injection: Injection | None = None
    # Stemmed key ('tool approval') -> ((slug, agent or None, source), ...); source: name/alias/terminology/trigger.
    stemmed: Mapping[str, tuple[tuple[str, str | None, str], ...]] = field(default_factory=dict)
    verb_stems: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # verb -> its stemmed forms
    agent_words: frozenset[str] = frozenset()  # words naming an agent ('gemini'): not about a capability
    max_idf: float = 1.0  # the rarest term's idf (what an unknown term weighs)
    # Identifier token ('/compact') -> ((slug, agent or None, evidence), ...): where it occurs literally.
    identifiers: Mapping[str, tuple[tuple[str, str | None, float], ...]] = field(default_factory=dict)
    _compact_agents: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _agent_words: Mapping[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _category_keys: Mapping[str, str] = field(default_factory=dict, repr=False)  # normalized spelling -> slug
    # Inverted once per build, so scoring visits only the capabilities a query can touch: term -> slugs whose
    # texts have it, and phrase -> ((slug, is_trigger), ...) of names, aliases, wordings and triggers.
    _postings: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _phrases: Mapping[tuple[str, ...], tuple[tuple[str, bool], ...]] = field(default_factory=dict, repr=False)
    # Snowball root -> the index terms with it (`capidx.server.concepts.families`).
    _families: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

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
        # (building the index stays linear in the catalog).
        alias_of: dict[str, list[str]] = {}
        for alias, slug in aliases.items():
            alias_of.setdefault(slug, []).append(alias)
        wording_of: dict[str, list[str]] = {}
        for wording, uses in terminology.items():
            for slug in dict.fromkeys(slug for _, slug in uses):
                wording_of.setdefault(slug, []).append(wording)
        capabilities = {
            row["slug"]: _capability_entry(row, alias_of.get(row["slug"], ()), wording_of.get(row["slug"], ()))
            for row in data["capabilities"]
        }
        keys: dict[str, str] = {}
        for entry in capabilities.values():
            keys[entry.key] = entry.slug
            keys[normalize(entry.name)] = entry.slug
            keys[normalize(entry.slug)] = entry.slug
        phrases: dict[str, set[str]] = {}
        for phrase, slugs in data.get("triggerPhrases", {}).items():
            phrases.setdefault(normalize(phrase), set()).update(slugs)
        for row in data["capabilities"]:  # the same from each capability's own list (older builds)
            for phrase in row.get("triggers", ()):
                phrases.setdefault(normalize(phrase), set()).add(row["slug"])
        triggers = {phrase: tuple(sorted(slugs)) for phrase, slugs in phrases.items() if phrase}
        verbs = {str(k): str(v) for k, v in data.get("verbs", {}).items()}
        verb_stems: dict[str, set[str]] = {}
        for form, verb in verbs.items():
            verb_stems.setdefault(verb, set()).add(form)
        idf = {k: float(v) for k, v in data["idf"].items()}
        return cls(
            agents=MappingProxyType(agents),
            agent_names=MappingProxyType(agent_names),
            capabilities=MappingProxyType(capabilities),
            keys=MappingProxyType(keys),
            aliases=MappingProxyType(aliases),
            terminology=MappingProxyType(terminology),
            idf=MappingProxyType(idf),
            avg_length=float(data["avgLength"]) or 1.0,
            categories=tuple(data["categories"]),
            trigger_phrases=MappingProxyType(triggers),
            verbs=MappingProxyType(verbs),
            action_triggers=MappingProxyType({k: tuple(v) for k, v in data.get("actionTriggers", {}).items()}),
            injection=_injection(data.get("injection")),
            stemmed=MappingProxyType(_stemmed_keys(capabilities, aliases, terminology, triggers)),
            verb_stems=MappingProxyType({verb: tuple(sorted(forms)) for verb, forms in verb_stems.items()}),
            agent_words=frozenset(_agent_words(agent_names)),
            max_idf=max(idf.values(), default=1.0) or 1.0,
            identifiers=MappingProxyType(_identifier_places(data.get("identifiers", {}))),
            _compact_agents=MappingProxyType(_compact(agent_names)),
            _agent_words=MappingProxyType(_words_per_agent(agent_names)),
            _category_keys=MappingProxyType({normalize(category): category for category in data["categories"]}),
            _postings=MappingProxyType(_postings(capabilities)),
            _phrases=MappingProxyType(_phrase_owners(capabilities)),
            _families=MappingProxyType(families(idf)),
        )

    @cached_property
    def use_when_rules(self) -> Mapping[str, tuple[tuple[regex.Pattern[str], float], ...]]:
        """Slug -> its `useWhen` rules compiled (pattern, confidence); a pattern that does not compile is left out.

        Compiled with the `regex` package, not `re`: patterns come from catalog data (a fork's pull request
        may write them), and only `regex` can stop a match that backtracks catastrophically (`timeout=`).
        `regex.V0` keeps `re`'s semantics, the ones `capidx validate` checks the patterns against.
        Compiled once per build on first use, not at load: importing `regex` and compiling the bundled
        catalog's patterns is ~0.05-0.09 s that `initialize` need not wait for; the first request that
        scores pays it, before its time budget for the patterns starts (`_patterns`).
        """
        import regex

        compiled: dict[str, tuple[tuple[regex.Pattern[str], float], ...]] = {}
        for slug, entry in self.capabilities.items():
            rules = []
            for rule in entry.use_when:
                try:
                    rules.append((regex.compile(rule.pattern, regex.V0 | regex.IGNORECASE), rule.confidence))
                except regex.error:  # validated at build time; never fail a whole build on one
                    continue
            if rules:
                compiled[slug] = tuple(rules)
        return MappingProxyType(compiled)

    def agent_label(self, agent_id: str) -> str:
        agent = self.agents.get(agent_id)
        return agent.name if agent else agent_id


def stem_key(text: str) -> str:
    """The key two phrasings share when they differ only in plurals, verb forms or stop words."""
    return " ".join(terms(text))


def _postings(capabilities: Mapping[str, CapabilityEntry]) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for slug, entry in capabilities.items():
        for term in dict.fromkeys((*entry.terms, *entry.fields)):
            found.setdefault(term, []).append(slug)
    return {term: tuple(slugs) for term, slugs in found.items()}


def _phrase_owners(capabilities: Mapping[str, CapabilityEntry]) -> dict[tuple[str, ...], tuple[tuple[str, bool], ...]]:
    found: dict[tuple[str, ...], list[tuple[str, bool]]] = {}
    for slug, entry in capabilities.items():
        for phrase, is_trigger in entry.phrases:
            found.setdefault(phrase, []).append((slug, is_trigger))
    return {phrase: tuple(owners) for phrase, owners in found.items()}


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


def _capability_entry(row: Mapping[str, Any], table_aliases: Iterable[str], wordings: Iterable[str]) -> CapabilityEntry:
    """One capability; `table_aliases` and `wordings` are the normalized alias-table phrases and agents'
    wordings that name it (inverted once by the caller)."""
    slug = row["slug"]
    own_aliases = [normalize(a) for a in row.get("aliases", ())]
    own_aliases += [a for a in table_aliases if a not in own_aliases]  # the alias table
    wordings = list(wordings)
    triggers = [normalize(t) for t in row.get("triggers", ())]
    named = {"name": [row["name"], slug, row["key"]], "alias": own_aliases, "terminology": wordings}
    fields: dict[str, float] = {}
    naming: set[str] = set()  # terms of a name or an agent's wording
    phrases: dict[tuple[str, ...], bool] = {}
    for kind, texts in (*named.items(), ("trigger", triggers)):
        for text in texts:
            words = tuple(terms(text))
            for term in words:
                fields[term] = max(fields.get(term, 0.0), FIELD_WEIGHTS[kind])
            if kind in ("name", "terminology"):
                naming.update(words)
            if words:
                phrases[words] = phrases.get(words, True) and kind == "trigger"
    # Identifiers in a name, alias or an agent's wording (as written: normalization would drop '/' or '.').
    raw_names = [row["name"], *row.get("aliases", ())]
    raw_names += [str(use.get("terminology", "")) for use in row["agents"].values() if isinstance(use, Mapping)]
    for text in raw_names:
        for token in identifiers(text):
            fields[token] = max(fields.get(token, 0.0), FIELD_WEIGHTS["alias"])
    naming.update(token for text in (row["name"], *wordings) for token in identifiers(text))
    names = {row["key"], normalize(row["name"]), normalize(slug), *own_aliases, *wordings}
    return CapabilityEntry(
        slug=slug,
        name=row["name"],
        category=row["category"],
        key=row["key"],
        agents=MappingProxyType({k: MappingProxyType(dict(v)) for k, v in row["agents"].items()}),
        terms=MappingProxyType(dict(row["terms"])),
        length=float(row["length"]),
        names=tuple(sorted(n for n in names if n)),
        fields=MappingProxyType(fields),
        hinted=frozenset(fields) - naming,
        phrases=tuple(sorted(phrases.items())),
        pairs=frozenset(row.get("bigrams", ())),
        use_when=tuple(_use_when(row.get("useWhen", ()))),
        similar=tuple(
            (item["capability"], float(item.get("score", 0.0)))
            for item in row.get("similarTo", ())
            if isinstance(item, Mapping) and "capability" in item
        ),
    )


def _use_when(rules: Iterable[Mapping[str, Any]]) -> Iterable[UseWhen]:
    for rule in rules:
        pattern = rule.get("pattern") if isinstance(rule, Mapping) else None
        if isinstance(pattern, str):  # validated at build time; never fail a whole build on one
            yield UseWhen(pattern, min(1.0, max(0.0, float(rule.get("confidence", 0.0)))))


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
    triggers: Mapping[str, tuple[str, ...]],
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
    for phrase, slugs in triggers.items():
        for slug in slugs:
            add(phrase, slug, None, "trigger")
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
    a loose match from saying the agent lacks something when a close candidate is one it has."""
    n = normalize(query)
    if not n:
        return Resolution(query, "unknown", candidates=_capability_suggestions(index, n))
    if (slug := index.keys.get(n)) is not None:
        return Resolution(query, "resolved", slug, "exact", 1.0)
    literal = identifiers(query)
    evidence = _identifier_evidence(index, literal, agent)
    if literal and evidence:  # '/memory' is not the word 'memory': identifiers decide before normalized forms
        resolved = _by_identifier(index, query, evidence, terms(_without_identifiers(query)))
        if resolved is not None:
            return _guarded(index, resolved, agent)
        return _scored(index, query, n, _correct_terms(index, terms(query), query), agent)
    if (slug := index.aliases.get(n)) is not None and slug in index.capabilities:
        return Resolution(query, "resolved", slug, "alias", 1.0)
    if (uses := index.terminology.get(n)) is not None:
        resolved = _by_terminology(index, query, uses, agent)
        if resolved is not None:
            return resolved
    slugs = [s for s in index.trigger_phrases.get(n, ()) if s in index.capabilities]
    if len(slugs) == 1:
        return Resolution(query, "resolved", slugs[0], "trigger", 1.0)
    raw = terms(query)
    if (resolved := _by_stemmed_key(index, query, " ".join(raw), agent, "stemmed", 1.0)) is not None:
        return resolved
    corrected = _correct_terms(index, raw, query)
    if corrected.changed:
        key = " ".join(corrected.terms)
        resolved = _by_stemmed_key(index, query, key, agent, "fuzzy", round(corrected.similarity, 3))
        if resolved is not None:
            return resolved
    return _scored(index, query, n, corrected, agent)


def _without_identifiers(query: str) -> str:
    return IDENTIFIER_PATTERN.sub(" ", query)


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


@dataclass(frozen=True, slots=True)
class Corrected:
    """Query terms after typo correction, each with how much it is trusted (1.0: typed as is)."""

    terms: tuple[str, ...]
    weights: tuple[float, ...]
    # Terms beyond the first of each hyphenated word ('fine-tune', 'drag-and-drop'): one word of the query, one
    # idea, when counting whether the query is short (`_unknown_idf`).
    compounded: int = 0

    @property
    def changed(self) -> bool:
        return any(w < 1.0 for w in self.weights)

    @property
    def similarity(self) -> float:
        product = 1.0
        for weight in self.weights:
            product *= weight
        return product


def _correct_terms(index: MatchIndex, raw: Sequence[str], query: str = "") -> Corrected:
    """Replace each unknown term by the most similar index term that one typing error away explains.

    Known words are left alone: index terms, the forms of the curated action verbs ('track' is a
    verb, not a typo of 'trace') and the lexicon's abbreviations ('repo' is not a typo of 'report').
    A typing error is one missing, extra, wrong or swapped letter (optimal string alignment distance 1;
    two in a long word), and only a plausible one counts (`_plausible_typo`). Among several terms the
    most similar one (rapidfuzz ratio: a missing letter beats a different letter) wins.
    """
    result: dict[str, float] = {}
    for term in dict.fromkeys(raw):  # unique, in order
        if term in index.idf or term in index.verbs or expansions(term) or len(term) < MIN_CORRECTABLE:
            result.setdefault(term, 1.0)
            continue
        limit = 2 if len(term) >= LONG_TYPO else 1
        within = process.extract(term, index.idf.keys(), scorer=OSA.distance, score_cutoff=limit, limit=None)
        close = [match for match in within if len(match[0]) >= MIN_CORRECTABLE and _plausible_typo(term, match[0])]
        if not close:
            result.setdefault(term, 1.0)
            continue
        best = max(close, key=lambda match: (fuzz.ratio(term, match[0]), -match[1], match[0]))[0]
        weight = round(fuzz.ratio(term, best) / 100, 3)
        result[best] = max(result.get(best, 0.0), weight)
    return Corrected(tuple(result), tuple(result.values()), _compounded(query))


def _compounded(query: str) -> int:
    """How many terms the query's hyphenated words add beyond one each ('fine-tune a model' -> 1)."""
    words = (word for word in _without_identifiers(query).split() if "-" in word.strip("-"))
    return sum(max(0, len(terms(word)) - 1) for word in words)


def _plausible_typo(typed: str, known: str) -> bool:
    """Whether `known` may be what was meant by `typed`, rather than `typed` being another word.

    Misspellings keep their first letter in the great majority of cases (Pollock and Zamora, 1984), so a
    word differing in its first letter is another word ('fine' is not 'line'). In a short word a wrong or
    extra letter usually makes another real word ('spot' / 'shot', 'time' / 'tide', 'short' / 'shot'),
    while a missing letter or two swapped ones rarely does ('hoks', 'mdoe', 'swich'): up to
    `SHORT_TYPO` letters only those count.
    """
    if typed[:1] != known[:1]:
        return False
    if len(typed) > SHORT_TYPO:
        return True
    missing = len(known) == len(typed) + 1
    swapped = len(known) == len(typed) and sorted(known) == sorted(typed)
    return missing or swapped


def _scored(index: MatchIndex, query: str, n: str, corrected: Corrected, agent: str | None) -> Resolution:
    confidence, typo = score_capabilities(index, query, corrected, agent)
    ranked = sorted(confidence.items(), key=lambda item: (-item[1], item[0]))
    best_slug, best = ranked[0] if ranked else ("", 0.0)
    everything = tuple(_capability(index, s, c) for s, c in ranked if c >= FLOOR / 2)
    shown = tuple(_capability(index, s, c) for s, c in ranked[:SHOWN_CANDIDATES] if c >= SHOWN_FLOOR)
    if best < FLOOR:  # nothing scores: what scored a little first, then the closest names
        # A name that merely looks like the query is weaker evidence than words that scored: its similarity
        # (another scale, up to 1.0) is scaled below every scored candidate, so no suggestion of an unknown
        # name claims a confidence a resolved answer would have, and the list stays in order.
        fill = tuple(
            Candidate(c.value, c.label, round(c.confidence * FLOOR / 2, 3))
            for c in _capability_suggestions(index, n)
            if c.value not in {s.value for s in shown}
        )
        suggestions = shown + fill[: max(0, SUGGESTIONS - len(shown))]
        return Resolution(query, "unknown", candidates=suggestions, ranked=everything, scored=True)
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    if decide(best, runner_up):
        how = "fuzzy" if typo[best_slug] else "lexical"
        resolved = Resolution(query, "resolved", best_slug, how, best, ranked=everything, scored=True)
        return _guarded(index, resolved, agent, shown)
    return Resolution(query, "ambiguous", candidates=shown, ranked=everything, scored=True)


def decide(best: float, runner_up: float, rule: tuple[tuple[float, float], ...] = DECISION_RULE) -> bool:
    """Whether a scored winner is clear enough to resolve (`DECISION_RULE`, calibrated on the blind benchmark,
    docs/benchmarks.md, "Lookup quality and latency"). The lead is relative to the winner's confidence: 0.40
    against 0.10 is as clear an order as 0.80 against 0.20, but a weak winner needs the larger lead."""
    lead = (best - runner_up) / best if best > 0 else 0.0
    return any(best >= confidence and lead >= needed for confidence, needed in rule)


def _guarded(
    index: MatchIndex, resolution: Resolution, agent: str | None, offered: tuple[Candidate, ...] | None = None
) -> Resolution:
    """Never a confident wrong "no": a loose match (scored or by identifier, below `HIGH_CONFIDENCE`) to a
    capability the asked agent lacks comes back as candidates when a close candidate is one it has, or when a
    scored winner passed only the looser cell of `DECISION_RULE`, not `NO_RULE`. A candidate is close when it
    reaches `FLOOR` and the winner leads it by less than `CLOSE_LEAD` of its own confidence. The candidates are
    `offered` (the scorer's list as an unresolved answer shows it), else the first of `ranked`."""
    if agent is None or not resolution.ok or resolution.confidence >= HIGH_CONFIDENCE or not resolution.scored:
        return resolution
    if _has(index, resolution.value or "", agent):
        return resolution
    runner_up = resolution.ranked[1].confidence if len(resolution.ranked) > 1 else 0.0
    weak = resolution.resolved_by != "identifier" and not decide(resolution.confidence, runner_up, NO_RULE)
    near = max(FLOOR, resolution.confidence * (1.0 - CLOSE_LEAD))
    close = [c for c in resolution.ranked[1:] if c.confidence >= near and _has(index, c.value, agent)]
    if not close and not weak:
        return resolution
    return Resolution(
        resolution.query,
        "ambiguous",
        candidates=offered if offered is not None else resolution.ranked[:SHOWN_CANDIDATES],
        ranked=resolution.ranked,
        scored=True,
    )


def _has(index: MatchIndex, slug: str, agent: str) -> bool:
    entry = index.capabilities.get(slug)
    return entry is not None and bool(entry.agents.get(agent, {}).get("available", False))


def score_capabilities(
    index: MatchIndex, query: str, corrected: Corrected | None = None, agent: str | None = None
) -> tuple[dict[str, float], dict[str, bool]]:
    """Every capability's confidence (0..1) for a free-text query, and whether it needed a typo fix."""
    if corrected is None:
        corrected = _correct_terms(index, terms(query), query)
    n = normalize(query)
    literal = identifiers(query)
    signals = {slug: [0.0] * 6 for slug in index.capabilities}  # lexical, contained, pattern, string, verb, identifier
    lexical, needed_fix = _lexical(index, _slots(index, query, corrected, literal))
    for slug, value in lexical.items():
        signals[slug][0] = value
    for slug, value in _contained(index, corrected, _identifier_parts(query, literal)).items():
        signals[slug][1] = value
    for slug, value in _patterns(index, query, n).items():
        signals[slug][2] = value
    for slug, value in _similar_strings(index, n).items():
        signals[slug][3] = value
    for slug, value in _verbs(index, corrected).items():
        signals[slug][4] = value
    for slug, value in _identifier_evidence(index, literal, agent).items():
        signals[slug][5] = IDENTIFIER_SIGNAL * value
    confidence: dict[str, float] = {}
    typo: dict[str, bool] = {}
    for slug, values in signals.items():
        first, second = sorted(values, reverse=True)[:2]
        confidence[slug] = round(min(1.0, first + (1.0 - first) * AGREEMENT * second), 3)
        typo[slug] = (values[3] >= first > 0 and values[3] > values[0]) or (needed_fix.get(slug, False) and first > 0)
    return confidence, typo


# One way a query word may occur in a capability's texts: the run of terms, how much a match through it
# counts, and whether it is loose (another root form or a related wording: the whole run must occur, a
# match in a name counts as one in a description, and its presence counts, not how often it occurs).
Alternative = tuple[tuple[str, ...], float, bool]


@dataclass(frozen=True, slots=True)
class Slot:
    """One meaningful unit of a query for BM25F: a word, an abbreviation or an identifier.

    `alternatives` are what may stand for it in a capability's text, each a run of terms with how much a
    match through it counts: the word itself (1.0), another form of the same verb (`VERB_FORM`), an
    abbreviation's expansions from the lexicon (`capidx.schema.lexicon`: 'pr' -> 'pull request', 1.0).
    `weight` is how much the slot is trusted: a typo fix's similarity, `IDENTIFIER_PART` for a word that is
    only part of an identifier ('memory' in '/memory': the identifier itself is the evidence).
    """

    alternatives: tuple[Alternative, ...]
    weight: float
    idf: float  # what the slot weighs in the query's total: its best-known alternative's mean idf
    about_agent: bool  # a word naming an agent ('gemini'): not about the capability
    literal: bool = False  # an identifier: found literally, in any field, it counts fully
    part: bool = False  # only part of an identifier: the identifier's slot carries its weight in the total
    fixed: bool = False  # a typo correction
    term: str = ""  # the word as typed (not an identifier): consecutive words are looked up as pairs


def _identifier_parts(query: str, literal: Sequence[str]) -> frozenset[str]:
    """Terms of the query that only occur inside its identifiers ('memory' in '/memory', not in '/memory file')."""
    if not literal:
        return frozenset()
    inside = {t for token in literal for t in terms(token)}
    return frozenset(inside - set(terms(_without_identifiers(query))))


def _slots(index: MatchIndex, query: str, corrected: Corrected, literal: Sequence[str]) -> list[Slot]:
    parts = _identifier_parts(query, literal)
    unknown = _unknown_idf(index, corrected.terms, corrected.compounded)
    slots = []
    phrased = _phrase_alternatives(corrected.terms)
    for position, (term, trust) in enumerate(zip(corrected.terms, corrected.weights, strict=True)):
        alternatives: list[Alternative] = [((term,), 1.0, False)]
        alternatives += [((form,), VERB_FORM, False) for form in _term_forms(index, term)[1:]]
        for expansion in expansions(term):
            if words := tuple(terms(expansion)):
                alternatives.append((words, 1.0, False))
        direct = len(alternatives)
        alternatives += [((form,), ROOT_FORM, True) for form in _family(index, term)]
        for words in related(term):
            alternatives.append((words, RELATED, True))
            if len(words) == 1:
                alternatives += [((form,), RELATED, True) for form in _family(index, words[0])]
        alternatives += [(words, RELATED, True) for words in phrased.get(position, ())]
        part = term in parts
        weight = trust * (IDENTIFIER_PART if part else 1.0)
        own = alternatives[:direct] if _known(index, alternatives[:direct]) else alternatives
        idf = _slot_idf(index, own, unknown)
        about_agent = term in index.agent_words
        slots.append(Slot(tuple(alternatives), weight, idf, about_agent, part=part, fixed=trust < 1.0, term=term))
    for token in dict.fromkeys(literal):
        slots.append(Slot((((token,), 1.0, False),), 1.0, index.idf.get(token, index.max_idf), False, literal=True))
    return slots


def _phrase_alternatives(query: Sequence[str]) -> dict[int, list[tuple[str, ...]]]:
    """Position of a query term -> the related wordings of a phrase it starts or ends with its neighbour ('walk
    through' -> 'explain', 'roll back' -> 'undo': `capidx.server.concepts.related_phrase`); both words get them."""
    found: dict[int, list[tuple[str, ...]]] = {}
    for i in range(len(query) - 1):
        for words in related_phrase((query[i], query[i + 1])):
            found.setdefault(i, []).append(words)
            found.setdefault(i + 1, []).append(words)
    return found


def _slot_idf(index: MatchIndex, alternatives: Sequence[Alternative], unknown: float) -> float:
    """The idf of the best-known alternative (all its terms in the index), averaged over its terms; an
    unknown word weighs like the rarest known term: it matched nothing, so coverage drops."""
    known = [
        sum(index.idf[t] for t in words) / len(words)
        for words, _, _ in alternatives
        if all(t in index.idf for t in words)
    ]
    return max(known, default=unknown)


def _pair_keys(index: MatchIndex, first: str, second: str) -> frozenset[str]:
    """The `bigrams` keys two neighbouring query words may have in a capability's texts: each word or another
    index term of its Snowball root ('summarizing history' finds "summarizes history"), an abbreviation by
    its expansion's adjacent word ('PR review' finds "request review")."""
    lefts = (first, *_family(index, first), *(words[-1] for e in expansions(first) if (words := terms(e))))
    rights = (second, *_family(index, second), *(words[0] for e in expansions(second) if (words := terms(e))))
    return frozenset(f"{a} {b}" for a in lefts for b in rights)


def _unknown_idf(index: MatchIndex, query_terms: Sequence[str], compounded: int = 0) -> float:
    """What a query word no text has weighs: the rarest term's idf in a short query, `UNKNOWN_WEIGHT` of it
    in a longer one (a hyphenated word counts as one word: `Corrected.compounded`)."""
    about = [t for t in dict.fromkeys(query_terms) if t not in index.agent_words]
    return index.max_idf * (1.0 if len(about) - compounded <= SHORT_QUERY else UNKNOWN_WEIGHT)


def _known(index: MatchIndex, alternatives: Sequence[Alternative]) -> bool:
    return any(all(t in index.idf for t in words) for words, _, _ in alternatives)


def _family(index: MatchIndex, term: str) -> tuple[str, ...]:
    """The other index terms with the term's Snowball root ('approval' -> 'approve', 'approving'), or with the
    root of the term plus 'e': the light stem drops '-ing' / '-ed' without giving a final 'e' back
    ('writing' -> 'writ', 'summarizing' -> 'summariz', while 'writes' -> 'write')."""
    roots = dict.fromkeys((root(term), root(term + "e")))
    return tuple(dict.fromkeys(t for key in roots for t in index._families.get(key, ()) if t != term))


def _term_forms(index: MatchIndex, term: str) -> tuple[str, ...]:
    """The term, then the other forms of the same verb ('approval' -> 'approve', 'approving', ...)."""
    verb = index.verbs.get(term)
    others = tuple(f for f in index.verb_stems.get(verb, ()) if f != term) if verb else ()
    return (term, *others)


def _lexical(index: MatchIndex, slots: Sequence[Slot]) -> tuple[dict[str, float], dict[str, bool]]:
    """Field-weighted BM25 relative to the best, times the share of the query's idf mass explained."""
    about = [slot for slot in slots if not slot.about_agent] or list(slots)
    total = sum(slot.idf for slot in about if not slot.part) or 1.0
    scores: dict[str, float] = {}
    explained: dict[str, float] = {}
    fixed: dict[str, bool] = {}
    # slug -> position of a slot -> the slot's alternatives with a word in that capability's texts: each
    # capability then weighs only what it may match (a query has many alternatives, a capability few of them).
    touched: dict[str, dict[int, list[Alternative]]] = {}
    for position, slot in enumerate(slots):
        for alternative in slot.alternatives:
            for slug in dict.fromkeys(s for t in alternative[0] for s in index._postings.get(t, ())):
                touched.setdefault(slug, {}).setdefault(position, []).append(alternative)
    pairs = [
        (i, _pair_keys(index, first.term, second.term))
        for i, (first, second) in enumerate(itertools.pairwise(slots))
        if first.term and second.term
    ]
    for slug in sorted(touched):
        entry = index.capabilities[slug]
        norm = K1 * (1 - B + B * entry.length / index.avg_length)
        score = covered = 0.0
        together = {j for i, keys in pairs if not keys.isdisjoint(entry.pairs) for j in (i, i + 1)}
        for position, alternatives in sorted(touched[slug].items()):
            slot = slots[position]
            best_score = best_cover = 0.0
            for words, factor, loose in alternatives:
                present = [t for t in words if t in entry.terms]
                if not present or (loose and len(present) < len(words)):
                    continue
                value = 0.0
                for t in present:
                    tf = 1.0 if loose else entry.terms[t] + entry.fields.get(t, 0.0)
                    value += index.idf.get(t, 0.0) * tf * (K1 + 1) / (tf + norm)
                named = slot.literal or (not loose and all(t in entry.fields for t in present))
                hinted = named and not slot.literal and any(t in entry.hinted for t in present)
                share = len(present) / len(words)
                cover = slot.idf * share * factor * (HINT_TERM if hinted else 1.0 if named else DESCRIPTION_ONLY)
                if (cover, value) > (best_cover, best_score):
                    best_score, best_cover = value * factor / len(words), cover
            if not best_score:
                continue
            if position in together:  # found next to the query's neighbouring word: as telling as a name
                best_cover = max(best_cover, slot.idf)
            score += slot.weight * best_score
            if slot.about_agent and about is not slots:
                continue
            covered += slot.weight * best_cover
            fixed[slug] = fixed.get(slug, False) or slot.fixed
        if score > 0:
            scores[slug] = score
            explained[slug] = min(1.0, covered / total)
    top = max(scores.values(), default=0.0)
    return {slug: explained[slug] * score / top for slug, score in scores.items()}, fixed


def _contained(index: MatchIndex, corrected: Corrected, parts: frozenset[str] = frozenset()) -> dict[str, float]:
    """A whole name, alias, wording or trigger phrase found inside the query, as consecutive terms (a word
    that is only part of an identifier, `parts`, is trusted `IDENTIFIER_PART`)."""
    query = corrected.terms
    trust = dict(zip(query, corrected.weights, strict=True))
    trust |= {t: trust[t] * IDENTIFIER_PART for t in parts if t in trust}
    max_idf = index.max_idf
    unknown = _unknown_idf(index, query, corrected.compounded)
    total = sum(index.idf.get(t, unknown) for t in query if t not in index.agent_words) or 1.0
    # Every run of consecutive query terms, once: a phrase occurs when it is one of them (a set lookup per
    # phrase instead of sliding it along the query).
    runs = {query[i:j] for i in range(len(query)) for j in range(i + 1, len(query) + 1)}
    found: dict[str, float] = {}
    for phrase in runs:
        for slug, is_trigger in index._phrases.get(phrase, ()):
            weight = sum(index.idf.get(t, 0.0) for t in set(phrase))
            specificity = min(1.0, weight / max_idf)
            share = min(1.0, sum(index.idf.get(t, 0.0) for t in set(phrase) if t not in index.agent_words) / total)
            value = (
                CONTAINED_BASE
                + CONTAINED_SPECIFICITY * specificity
                + (1.0 - CONTAINED_BASE - CONTAINED_SPECIFICITY) * share
            )
            value *= min(trust[t] for t in phrase) * (CONTAINED_TRIGGER if is_trigger else 1.0)
            if value > found.get(slug, 0.0):
                found[slug] = value
    return found


# Bounds on the `useWhen` patterns' work per request (defense in depth: `capidx validate` refuses the patterns
# it can tell backtrack catastrophically, but not every such pattern, and a build may come from elsewhere).
PATTERN_QUERY_CHARS = 1000  # the patterns see at most this much of a query (a request, not a document)
PATTERN_TIMEOUT = 0.05  # seconds one search may take before it counts as no match
PATTERN_BUDGET = 0.25  # seconds all the patterns of one request may take together; the rest count as no match
# How a `useWhen` match counts by the share of the query it explains (`_pattern_coverage`).
PATTERN_BASE = 0.5
PATTERN_FULL_SHARE = 0.75


def _patterns(index: MatchIndex, query: str, n: str) -> dict[str, float]:
    """The strongest `useWhen` evidence per capability: a matching rule's stated confidence times how much of
    the query the match explains (`_pattern_coverage`), against the input as typed or normalized.

    A rule states how sure it is when it fires, not how much of a long request it accounts for: 'hooks' inside
    "package my skills and hooks so my team can install them" is one word of eleven, so it counts like a name
    contained in the query does, by its share.

    Every search is bounded in time (`_search`), and all of them together by `PATTERN_BUDGET`: a pattern
    that backtracks catastrophically costs one request a fraction of a second, never the server minutes.
    """
    texts = {unicodedata.normalize("NFKC", query[:PATTERN_QUERY_CHARS]).casefold(), n[:PATTERN_QUERY_CHARS]}
    rules = index.use_when_rules  # compiled on the first request, before its budget starts
    deadline = time.monotonic() + PATTERN_BUDGET
    weights = _query_weights(index, terms(query))
    found: dict[str, float] = {}
    for slug, compiled in rules.items():
        best = 0.0
        for pattern, confidence in compiled:
            for text in texts:
                span = _search(pattern, text, deadline)
                if span is not None:
                    best = max(best, confidence * _pattern_coverage(weights, span, text))
        if best:
            found[slug] = best
    return found


def _query_weights(index: MatchIndex, query: Sequence[str]) -> dict[str, float]:
    """Each query term's idf (an unknown word as `_unknown_idf` weighs it), agent names left out: the mass a
    matched span is measured against."""
    unknown = _unknown_idf(index, query)
    return {t: index.idf.get(t, unknown) for t in query if t not in index.agent_words}


def _pattern_coverage(weights: Mapping[str, float], span: str, text: str) -> float:
    """How much of the query a `useWhen` match explains, as a factor of the rule's confidence:
    `PATTERN_BASE` plus the rest in proportion to the share it covers, full from `PATTERN_FULL_SHARE` on.

    The share is the idf mass of the query's terms inside the match (as lexical evidence is weighed), or its
    share of the characters when that is larger: a match on an identifier or a shortcut (`ctrl+i`) has no
    terms of its own."""
    total = sum(weights.values())
    inside = set(terms(span))
    by_terms = sum(w for t, w in weights.items() if t in inside) / total if total else 0.0
    by_chars = len(span.strip()) / len(text.strip()) if text.strip() else 0.0
    share = max(by_terms, by_chars)
    return min(1.0, PATTERN_BASE + (1.0 - PATTERN_BASE) * share / PATTERN_FULL_SHARE)


def _search(pattern: regex.Pattern[str], text: str, deadline: float) -> str | None:
    """The text `pattern` matches in `text`, or None; a search that runs out of time (its own or the request's)
    is no match."""
    left = min(PATTERN_TIMEOUT, deadline - time.monotonic())
    if left <= 0:
        return None
    try:
        found = pattern.search(text, timeout=left)
    except TimeoutError:
        return None
    return None if found is None else found.group(0)


def _similar_strings(index: MatchIndex, n: str) -> dict[str, float]:
    """Whole-string similarity to a name, alias or wording: typos of a name ('mcp srvers')."""
    found: dict[str, float] = {}
    for slug, entry in index.capabilities.items():
        similarity = max((fuzz.ratio(n, name) for name in entry.names), default=0.0)
        if similarity >= TYPO_RATIO:
            found[slug] = similarity / 100
    return found


def _verbs(index: MatchIndex, corrected: Corrected) -> dict[str, float]:
    """A verb of the query that only a few capabilities do (`actionTriggers`: 'rewind' -> checkpoints), worth
    `VERB_EVIDENCE` when the verb is the whole query and its share of the query's idf otherwise ('deploy to
    Kubernetes' is about Kubernetes as much as about deploying)."""
    found: dict[str, float] = {}
    unknown = _unknown_idf(index, corrected.terms, corrected.compounded)
    total = sum(index.idf.get(t, unknown) for t in corrected.terms if t not in index.agent_words) or 1.0
    for term in corrected.terms:
        verb = index.verbs.get(term)
        targets = index.action_triggers.get(verb, ()) if verb else ()
        if 0 < len(targets) <= SPECIFIC_VERB:
            share = max(VERB_MIN_SHARE, min(1.0, index.idf.get(term, unknown) / total))
            for slug in targets:
                if slug in index.capabilities:
                    found[slug] = max(found.get(slug, 0.0), VERB_EVIDENCE * share / len(targets) ** 0.5)
    return found


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
    "Candidate",
    "Injection",
    "MatchIndex",
    "Resolution",
    "resolve_agent",
    "resolve_capability",
    "resolve_category",
    "score_capabilities",
    "stem_key",
]
