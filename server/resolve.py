"""Name resolution: what the user typed -> an agent id, a capability slug or a category.

Pure functions over `index/match.json` (docs/build-directory.md, "index/match.json" and "The enhanced
index"); the index is computed at build time and the server only looks it up and scores. Whatever a
build leaves out (older builds have no `verbs`, `triggerPhrases`, `useWhen`, ...) simply contributes
nothing. Order for capabilities:

1. exact: the normalized canonical name or slug;
2. alias: the alias table and each capability's own aliases;
3. terminology: an agent's own word for it (the asked agent's wording wins);
4. trigger: an explicit trigger phrase, as written;
5. stemmed: the same tiers compared on `terms()` keys (plurals, verb forms and stop words ignored:
   'the release notes' is the alias 'release note'), then once more after correcting typos term by
   term ('brekpoints' -> 'breakpoint', the name of Breakpoints), which resolves as `fuzzy`;
6. scored: every capability gets a confidence from independent signals -- field-weighted BM25
   (BM25F: a term in a name, alias, an agent's wording or a trigger counts far more than one in a
   description), a whole name, alias or trigger phrase contained in the query, the capability's
   `useWhen` patterns (compiled once per build, each worth its stated confidence), whole-string
   typo similarity, a verb only a few capabilities do (`actionTriggers`) -- the strongest signal
   plus half of the next one times what is left;
7. when the best candidate is not clearly ahead, the top three come back with `matchConfidence`
   instead of a guess; when nothing scores at all, the closest names come back as suggestions.
"""

from __future__ import annotations

import itertools
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import regex
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from capidx.server.text import STOP_WORDS, normalize, terms

Status = Literal["resolved", "ambiguous", "unknown"]

# BM25 parameters (the usual defaults).
K1 = 1.2
B = 0.75
# A scored winner must reach this confidence and lead the runner-up by this margin.
MIN_CONFIDENCE = 0.6
MIN_MARGIN = 0.15
# Below this, a candidate is noise: with no candidate above it, nothing matched.
FLOOR = 0.3
# Whole-string similarity (0-100) that counts as "the same words, mistyped".
TYPO_RATIO = 82
SUGGESTIONS = 3

# BM25F: a query term found in one of these fields counts as this many extra occurrences; a term found
# only in descriptions counts as itself. Names and aliases are what people call a capability.
FIELD_WEIGHTS: Mapping[str, float] = MappingProxyType({"name": 4.0, "alias": 3.0, "terminology": 3.0, "trigger": 2.0})
# Coverage (the share of the query a capability explains): a term found only in descriptions explains
# this much of itself (a description mentions many things); one matched through another form of the
# same verb ('approval' ~ 'approve') this much of that.
DESCRIPTION_ONLY = 0.6
VERB_FORM = 0.8
# A whole name, alias, wording or trigger phrase found inside a longer query: a base, plus shares for
# how specific the phrase is (its idf against the rarest term's) and how much of the query it covers.
# Trigger phrases count a little less.
CONTAINED_BASE = 0.3
CONTAINED_SPECIFICITY = 0.3
CONTAINED_TRIGGER = 0.9
# How much of the second-strongest signal is added on top of the strongest (agreeing evidence).
AGREEMENT = 0.5
# A verb pointing to at most this many capabilities (`actionTriggers`) is evidence for them.
SPECIFIC_VERB = 3
VERB_EVIDENCE = 0.45
# Typo correction: an unknown term of at least this many letters is replaced by the closest index term
# within edit distance 1 (up to 5 letters) or 2; the correction weighs as much as it is similar.
MIN_CORRECTABLE = 4


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
    """A `useWhen` rule: the regular expression (compiled once per build) and its confidence.

    Compiled with the `regex` package, not `re`: patterns come from catalog data (a fork's pull request
    may write them), and only `regex` can stop a match that backtracks catastrophically (`timeout=`).
    `regex.V0` keeps `re`'s semantics, the ones `capidx validate` checks the patterns against.
    """

    pattern: regex.Pattern[str]
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
    # Stemmed term sequences of names, aliases and wordings (False) and trigger phrases (True).
    phrases: tuple[tuple[tuple[str, ...], bool], ...] = ()
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
        capabilities = {row["slug"]: _capability_entry(row, aliases, terminology) for row in data["capabilities"]}
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


def _capability_entry(
    row: Mapping[str, Any], aliases: Mapping[str, str], terminology: Mapping[str, tuple[tuple[str, str], ...]]
) -> CapabilityEntry:
    slug = row["slug"]
    own_aliases = [normalize(a) for a in row.get("aliases", ())]
    own_aliases += [a for a, s in aliases.items() if s == slug and a not in own_aliases]  # the alias table
    wordings = [w for w, uses in terminology.items() if any(s == slug for _, s in uses)]
    triggers = [normalize(t) for t in row.get("triggers", ())]
    named = {"name": [row["name"], slug, row["key"]], "alias": own_aliases, "terminology": wordings}
    fields: dict[str, float] = {}
    phrases: dict[tuple[str, ...], bool] = {}
    for kind, texts in (*named.items(), ("trigger", triggers)):
        for text in texts:
            words = tuple(terms(text))
            for term in words:
                fields[term] = max(fields.get(term, 0.0), FIELD_WEIGHTS[kind])
            if words:
                phrases[words] = phrases.get(words, True) and kind == "trigger"
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
        phrases=tuple(sorted(phrases.items())),
        use_when=tuple(_use_when(row.get("useWhen", ()))),
        similar=tuple(
            (item["capability"], float(item.get("score", 0.0)))
            for item in row.get("similarTo", ())
            if isinstance(item, Mapping) and "capability" in item
        ),
    )


def _use_when(rules: Iterable[Mapping[str, Any]]) -> Iterable[UseWhen]:
    for rule in rules:
        try:
            pattern = regex.compile(rule["pattern"], regex.V0 | regex.IGNORECASE)
        except (regex.error, KeyError, TypeError):  # validated at build time; never fail a whole build on one
            continue
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
    slugs = [s for s in index.trigger_phrases.get(n, ()) if s in index.capabilities]
    if len(slugs) == 1:
        return Resolution(query, "resolved", slugs[0], "trigger", 1.0)
    raw = terms(query)
    if (resolved := _by_stemmed_key(index, query, " ".join(raw), agent, "stemmed", 1.0)) is not None:
        return resolved
    corrected = _correct_terms(index, raw)
    if corrected.changed:
        key = " ".join(corrected.terms)
        resolved = _by_stemmed_key(index, query, key, agent, "fuzzy", round(corrected.similarity, 3))
        if resolved is not None:
            return resolved
    return _scored(index, query, n, corrected)


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

    @property
    def changed(self) -> bool:
        return any(w < 1.0 for w in self.weights)

    @property
    def similarity(self) -> float:
        product = 1.0
        for weight in self.weights:
            product *= weight
        return product


def _correct_terms(index: MatchIndex, raw: Sequence[str]) -> Corrected:
    """Replace each unknown term by the most similar index term within a small edit distance.

    Known words are left alone: index terms, and the forms of the curated action verbs ('track' is a
    verb, not a typo of 'trace'). Among several terms at the allowed distance the most similar one
    (rapidfuzz ratio: a missing or swapped letter beats a different letter) wins.
    """
    result: dict[str, float] = {}
    for term in dict.fromkeys(raw):  # unique, in order
        if term in index.idf or term in index.verbs or len(term) < MIN_CORRECTABLE:
            result.setdefault(term, 1.0)
            continue
        limit = 1 if len(term) <= 5 else 2
        within = process.extract(term, index.idf.keys(), scorer=Levenshtein.distance, score_cutoff=limit, limit=None)
        close = [match for match in within if len(match[0]) >= MIN_CORRECTABLE]
        if not close:
            result.setdefault(term, 1.0)
            continue
        best = max(close, key=lambda match: (fuzz.ratio(term, match[0]), -match[1], match[0]))[0]
        weight = round(fuzz.ratio(term, best) / 100, 3)
        result[best] = max(result.get(best, 0.0), weight)
    return Corrected(tuple(result), tuple(result.values()))


def _scored(index: MatchIndex, query: str, n: str, corrected: Corrected) -> Resolution:
    confidence, typo = score_capabilities(index, query, corrected)
    ranked = sorted(confidence.items(), key=lambda item: (-item[1], item[0]))
    best_slug, best = ranked[0] if ranked else ("", 0.0)
    everything = tuple(_capability(index, s, c) for s, c in ranked if c >= FLOOR / 2)
    if best < FLOOR:
        suggestions = _capability_suggestions(index, n)
        return Resolution(query, "unknown", candidates=suggestions, ranked=everything, scored=True)
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    if best >= MIN_CONFIDENCE and best - runner_up >= MIN_MARGIN:
        how = "fuzzy" if typo[best_slug] else "lexical"
        return Resolution(query, "resolved", best_slug, how, best, ranked=everything, scored=True)
    return Resolution(query, "ambiguous", candidates=everything[:SUGGESTIONS], ranked=everything, scored=True)


def score_capabilities(
    index: MatchIndex, query: str, corrected: Corrected | None = None
) -> tuple[dict[str, float], dict[str, bool]]:
    """Every capability's confidence (0..1) for a free-text query, and whether it needed a typo fix."""
    if corrected is None:
        corrected = _correct_terms(index, terms(query))
    n = normalize(query)
    signals = {slug: [0.0] * 5 for slug in index.capabilities}  # lexical, contained, pattern, string, verb
    lexical, needed_fix = _lexical(index, corrected)
    for slug, value in lexical.items():
        signals[slug][0] = value
    for slug, value in _contained(index, corrected).items():
        signals[slug][1] = value
    for slug, value in _patterns(index, query, n).items():
        signals[slug][2] = value
    for slug, value in _similar_strings(index, n).items():
        signals[slug][3] = value
    for slug, value in _verbs(index, corrected).items():
        signals[slug][4] = value
    confidence: dict[str, float] = {}
    typo: dict[str, bool] = {}
    for slug, values in signals.items():
        first, second = sorted(values, reverse=True)[:2]
        confidence[slug] = round(min(1.0, first + (1.0 - first) * AGREEMENT * second), 3)
        typo[slug] = (values[3] >= first > 0 and values[3] > values[0]) or (needed_fix.get(slug, False) and first > 0)
    return confidence, typo


def _term_forms(index: MatchIndex, term: str) -> tuple[str, ...]:
    """The term, then the other forms of the same verb ('approval' -> 'approve', 'approving', ...)."""
    verb = index.verbs.get(term)
    others = tuple(f for f in index.verb_stems.get(verb, ()) if f != term) if verb else ()
    return (term, *others)


def _lexical(index: MatchIndex, corrected: Corrected) -> tuple[dict[str, float], dict[str, bool]]:
    """Field-weighted BM25 relative to the best, times the share of the query's idf mass explained."""
    query = [(t, w, _term_forms(index, t)) for t, w in zip(corrected.terms, corrected.weights, strict=True)]
    max_idf = index.max_idf
    about = [item for item in query if item[0] not in index.agent_words] or query
    total = sum(_idf(index, forms, max_idf) for _, _, forms in about) or 1.0
    scores: dict[str, float] = {}
    explained: dict[str, float] = {}
    fixed: dict[str, bool] = {}
    for slug, entry in index.capabilities.items():
        norm = K1 * (1 - B + B * entry.length / index.avg_length)
        score = covered = 0.0
        for term, weight, forms in query:
            form = next((f for f in forms if f in entry.terms), None)
            if form is None:
                continue
            tf = entry.terms[form] + entry.fields.get(form, 0.0)
            idf = index.idf.get(form, 0.0)
            score += weight * idf * tf * (K1 + 1) / (tf + norm)
            if term in index.agent_words and about is not query:
                continue
            strength = 1.0 if form in entry.fields else DESCRIPTION_ONLY
            covered += _idf(index, forms, max_idf) * weight * strength * (1.0 if form == term else VERB_FORM)
            fixed[slug] = fixed.get(slug, False) or weight < 1.0
        if score > 0:
            scores[slug] = score
            explained[slug] = min(1.0, covered / total)
    top = max(scores.values(), default=0.0)
    return {slug: explained[slug] * score / top for slug, score in scores.items()}, fixed


def _idf(index: MatchIndex, forms: Sequence[str], default: float) -> float:
    # An unknown term weighs like the rarest known term: it matched nothing, so coverage drops.
    return max((index.idf[f] for f in forms if f in index.idf), default=default)


def _contained(index: MatchIndex, corrected: Corrected) -> dict[str, float]:
    """A whole name, alias, wording or trigger phrase found inside the query, as consecutive terms."""
    query = corrected.terms
    trust = dict(zip(query, corrected.weights, strict=True))
    max_idf = index.max_idf
    total = sum(index.idf.get(t, max_idf) for t in query if t not in index.agent_words) or 1.0
    found: dict[str, float] = {}
    for slug, entry in index.capabilities.items():
        best = 0.0
        for phrase, is_trigger in entry.phrases:
            if len(phrase) > len(query) or not _occurs(phrase, query):
                continue
            weight = sum(index.idf.get(t, 0.0) for t in set(phrase))
            specificity = min(1.0, weight / max_idf)
            share = min(1.0, sum(index.idf.get(t, 0.0) for t in set(phrase) if t not in index.agent_words) / total)
            value = (
                CONTAINED_BASE
                + CONTAINED_SPECIFICITY * specificity
                + (1.0 - CONTAINED_BASE - CONTAINED_SPECIFICITY) * share
            )
            value *= min(trust[t] for t in phrase) * (CONTAINED_TRIGGER if is_trigger else 1.0)
            best = max(best, value)
        if best:
            found[slug] = best
    return found


def _occurs(phrase: tuple[str, ...], words: tuple[str, ...]) -> bool:
    size = len(phrase)
    return any(words[i : i + size] == phrase for i in range(len(words) - size + 1))


# Bounds on the `useWhen` patterns' work per request (defense in depth: `capidx validate` refuses the patterns
# it can tell backtrack catastrophically, but not every such pattern, and a build may come from elsewhere).
PATTERN_QUERY_CHARS = 1000  # the patterns see at most this much of a query (a request, not a document)
PATTERN_TIMEOUT = 0.05  # seconds one search may take before it counts as no match
PATTERN_BUDGET = 0.25  # seconds all the patterns of one request may take together; the rest count as no match


def _patterns(index: MatchIndex, query: str, n: str) -> dict[str, float]:
    """The highest confidence of the `useWhen` rules matching the query (as typed, or normalized).

    Every search is bounded in time (`_search`), and all of them together by `PATTERN_BUDGET`: a pattern
    that backtracks catastrophically costs one request a fraction of a second, never the server minutes.
    """
    texts = {unicodedata.normalize("NFKC", query[:PATTERN_QUERY_CHARS]).casefold(), n[:PATTERN_QUERY_CHARS]}
    deadline = time.monotonic() + PATTERN_BUDGET
    found: dict[str, float] = {}
    for slug, entry in index.capabilities.items():
        best = max(
            (
                rule.confidence
                for rule in entry.use_when
                if any(_search(rule.pattern, text, deadline) for text in texts)
            ),
            default=0.0,
        )
        if best:
            found[slug] = best
    return found


def _search(pattern: regex.Pattern[str], text: str, deadline: float) -> bool:
    """Whether `pattern` occurs in `text`; a search that runs out of time (its own or the request's) is no match."""
    left = min(PATTERN_TIMEOUT, deadline - time.monotonic())
    if left <= 0:
        return False
    try:
        return pattern.search(text, timeout=left) is not None
    except TimeoutError:
        return False


def _similar_strings(index: MatchIndex, n: str) -> dict[str, float]:
    """Whole-string similarity to a name, alias or wording: typos of a name ('mcp srvers')."""
    found: dict[str, float] = {}
    for slug, entry in index.capabilities.items():
        similarity = max((fuzz.ratio(n, name) for name in entry.names), default=0.0)
        if similarity >= TYPO_RATIO:
            found[slug] = similarity / 100
    return found


def _verbs(index: MatchIndex, corrected: Corrected) -> dict[str, float]:
    """A verb of the query that only a few capabilities do (`actionTriggers`: 'rewind' -> checkpoints)."""
    found: dict[str, float] = {}
    for term in corrected.terms:
        verb = index.verbs.get(term)
        targets = index.action_triggers.get(verb, ()) if verb else ()
        if 0 < len(targets) <= SPECIFIC_VERB:
            for slug in targets:
                if slug in index.capabilities:
                    found[slug] = max(found.get(slug, 0.0), VERB_EVIDENCE / len(targets) ** 0.5)
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
