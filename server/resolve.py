"""Capability resolution: what the user typed -> a capability slug.

Exact tiers answer what the index spells (a name, identifiers, an alias, an agent's wording, a name in other forms, a
whole name mistyped); the ranking model (server/rank.py) and one decision rule answer the rest. A loose match never
says that the asked agent lacks something.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from functools import lru_cache

from rapidfuzz import fuzz, process

from capidx.schema.text import PROPER_NAMES, bind_negation, normalize, terms
from capidx.server.matchindex import Candidate, MatchIndex, Resolution
from capidx.server.names import SUGGESTIONS, TYPO_FLOOR, ambiguous, best_first, category_named, closest, typo_winner
from capidx.server.query import NEGATIONS, QUESTION_WORDS, Query, analyse
from capidx.server.semantic import WEIGHT

# The decision rule (fitted on benchmarks/resolution; calibration table in its RESULTS.md): a ranked winner resolves
# at the first confidence and the second lead over the runner-up; one the asked agent lacks needs the third instead
# (at least 0.1 more, by design: a wrong "no" is the worst answer).
DECISION_RULE: tuple[float, float, float] = (0.3, 0.16, 0.4)
# Unresolved: up to SHOWN_CANDIDATES ranked candidates down to SHOWN_FLOOR; when none reaches half the rule's confidence
# the closest capabilities fill the list, at FILL_SCALE at most: by meaning from SENTENCE words, else by spelling.
SHOWN_CANDIDATES, SHOWN_FLOOR, FILL_SCALE, SENTENCE = 5, 0.02, DECISION_RULE[0] / 4, 3
# Words beside an operating system's name that ask whether an agent is on it, as `terms()` gives them ('which agents run
# on Windows', 'does it work on macOS'): no capability's words.
ON_A_PLATFORM = frozenset(("agent", "run", "work", "install"))
# An identifier in another agent's record weighs this share; the evidence and lead an identifier answer needs.
OTHER_AGENT_IDENTIFIER, IDENTIFIER_MIN, IDENTIFIER_LEAD = 0.4, 0.6, 0.15


def resolve_capability(index: MatchIndex, query: str, agent: str | None = None) -> Resolution:
    """A capability slug; `agent` (an id) makes that agent's own wording and identifiers win."""
    q = analyse(query, index.vocabulary)
    n = q.normalized
    if (slug := index.keys.get(n)) is not None:
        return Resolution(query, "resolved", slug, "exact", 1.0)
    if evidence := _identifier_evidence(index, q, agent):  # '/memory' is not the word 'memory'
        if found := _by_identifier(index, q, evidence, agent):
            return found
        # Identifiers and words spelled as a name of a capability whose records hold the identifiers ('/compact,
        # auto-compact') are that name; identifiers alone are never read as their words.
        named = _named_exactly(index, query, n, agent) if q.rest else None
        if named and all(index.identifier_holders(t, named.value or "") for t in q.identifiers):
            return named
        return _by_ranking(index, q, agent)
    if found := _named_exactly(index, query, n, agent):
        return found
    if (slug := index.stemmed.get(q.key)) is not None:  # a name or alias in other forms ('the release notes')
        return Resolution(query, "resolved", slug, "stemmed", 1.0)
    # A whole name, alias or wording mistyped ('hoks', 'mcp srvers'), read before a category's ('debug lgging').
    typo = typo_winner(query, _similarity(index, n, fuzz.ratio, TYPO_FLOOR, typo=True) if q.mistyped else {})
    # 'does it have security features?' names the category as 'security' does: stop words and words asking about a
    # record are no part of a name
    asked = " ".join(word for word in n.split() if set(terms(word)) - QUESTION_WORDS)  # as records._naming reads
    category = category_named(index, asked or n, mistyped=typo is None)
    return _in_category(index, q, category, typo or _by_ranking(index, q, agent), agent)


def _named_exactly(index: MatchIndex, query: str, n: str, agent: str | None) -> Resolution | None:
    """An alias, else an agent's wording, the asked agent's own first (one wording of several: ambiguous)."""
    if (slug := index.own_aliases.get((agent or "", n)) or index.aliases.get(n)) is not None:
        return Resolution(query, "resolved", slug, "alias", 1.0)
    if uses := index.terminology.get(n):
        slugs = sorted({slug for who, slug in uses if who == agent}) or sorted({slug for _, slug in uses})
        if len(slugs) > 1:
            return ambiguous(query, slugs, lambda slug: index.capabilities[slug].name)
        return Resolution(query, "resolved", slugs[0], "terminology", 1.0)
    return None


def _in_category(index: MatchIndex, q: Query, category: str | None, found: Resolution, agent: str | None) -> Resolution:
    """A category's name ('security') answers with its capabilities, best ranked first, unless its words found one the
    asked agent has a record of (any one, if none): 'security review' is not the category. A category nothing is in
    ('debugging') resolves nothing: what the words found is offered."""
    if category is None:
        return found
    scores = index.ranker.rank(q.units)
    inside = [s for s, c in index.capabilities.items() if c.category == category]
    members = sorted(inside, key=lambda s: (-scores.get(s, 0.0), s))
    if not members:
        value = found.value
        winner = (Candidate(value, index.capabilities[value].name, found.confidence),) if value else ()
        offered = found.candidates or found.ranked[:SHOWN_CANDIDATES] or winner
        return Resolution(q.text, "unknown", None, "category", candidates=() if found.status == "unknown" else offered)
    recorded = [slug for slug in members if agent is None or agent in index.capabilities[slug].agents]
    if found.value in (recorded or members):
        return found
    share = round(1 / len(members), 3)
    listed = tuple(Candidate(slug, index.capabilities[slug].name, share) for slug in members)
    return Resolution(
        q.text, "ambiguous", None, "category", candidates=listed[:SHOWN_CANDIDATES], ranked=listed, scored=True
    )


def _identifier_evidence(index: MatchIndex, q: Query, agent: str | None) -> Counter[str]:
    """Capability -> the mean over the query's identifiers of the strongest place each occurs."""
    found: Counter[str] = Counter()
    for token in q.identifiers:
        best: dict[str, float] = {}
        for slug, who, weight in index.identifiers.get(token, ()):
            share = 1.0 if who is None or agent is None or who == agent else OTHER_AGENT_IDENTIFIER
            best[slug] = max(best.get(slug, 0.0), weight * share / len(q.identifiers))
        found.update(best)
    return found


def _by_identifier(index: MatchIndex, q: Query, evidence: Mapping[str, float], agent: str | None) -> Resolution | None:
    """Identifiers alone ('/compact') resolve to the capability whose records name them most directly, if clearly."""
    ranked = best_first(evidence)
    (best_slug, best), runner_up = ranked[0], (ranked[1][1] if len(ranked) > 1 else 0.0)
    if q.rest or best < IDENTIFIER_MIN or best - runner_up < IDENTIFIER_LEAD:
        return None
    everything = tuple(Candidate(s, index.capabilities[s].name, round(c, 3)) for s, c in ranked)
    resolved = Resolution(q.text, "resolved", best_slug, "identifier", round(best, 3), ranked=everything, scored=True)
    return _no_rule(index, resolved, agent, everything[:SHOWN_CANDIDATES], round(runner_up, 3))


def _by_ranking(index: MatchIndex, q: Query, agent: str | None) -> Resolution:
    """The ranking model's winner as `decide` rules, or candidates in the order of words and meaning together."""
    ordered = [Candidate(s, index.capabilities[s].name, c) for s, c in best_first(index.ranker.rank(q.units))]
    best, runner_up, *_ = [c.confidence for c in ordered[:2]] + [0.0, 0.0]
    floor = DECISION_RULE[0] / 2  # below it a candidate is noise: suggestions' snippets skip it
    above = tuple(c for c in ordered if c.confidence >= floor)
    pool = [c for c in ordered if c.confidence >= SHOWN_FLOOR]
    named = _named(index, q, {c.value for c in pool})
    if (
        decide(best, runner_up)
        and named in (None, ordered[0].value)
        and not _guessed(q)
        and _names_it(index, q, ordered[0].value)
    ):
        how = "fuzzy" if q.corrected else "lexical"
        winner = Resolution(q.text, "resolved", ordered[0].value, how, best, ranked=above, scored=True, analysed=q)
        return _no_rule(index, winner, agent, tuple(pool[:SHOWN_CANDIDATES]), runner_up)
    # Meaning orders what ranked and fills a sentence's list; a name nothing ranked for needs neither (nor the model).
    close = index.meanings.closeness(q.text) if pool or len(q.normalized.split()) >= SENTENCE else None
    offered = _by_meaning(q, pool, named, close or {})
    shown = tuple(offered[:SHOWN_CANDIDATES])
    if best >= floor:
        kept = {c.value for c in above}
        ranked = tuple(c for c in offered if c.value in kept or c.confidence >= floor)
        return Resolution(q.text, "ambiguous", candidates=shown, ranked=ranked, scored=True, analysed=q)
    # Nothing matched: what ranked a little, then the closest capabilities, below it (weaker evidence than words).
    similar = _closest(index, q, close) if len(shown) < SUGGESTIONS else {}
    low = shown[-1].confidence if shown else FILL_SCALE
    fill = tuple(
        Candidate(c.value, c.label, round(min(low, c.confidence * FILL_SCALE), 3))
        for c in closest(similar, lambda slug: index.capabilities[slug].name)
        if c.value not in {s.value for s in shown}
    )
    return Resolution(q.text, "unknown", candidates=shown + fill[: SUGGESTIONS - len(shown)], scored=True)


def _guessed(q: Query) -> bool:
    """One word the catalog lacks as typed, read as a typo or as two words ('compaction', 'autocomplete'): offered,
    never resolved (it answered Editor Bridge ✗ and History Condensing ✓)."""
    return " " not in q.normalized and (q.corrected or len(q.units) > 1)


def _names_it(index: MatchIndex, q: Query, slug: str) -> bool:
    """A query of words asking about a record only ('limitations'), or of an operating system's name only ('Windows
    support', 'which agents run on Windows': a platform, which another agent's limitation may name), names only a
    capability whose name has them, in written forms ('availability': Model Availability; not 'limitations': Usage
    Limits)."""
    words = q.key.split()
    platform = [word for word in words if word not in ON_A_PLATFORM]
    if platform and PROPER_NAMES.issuperset(platform):
        words = platform
    elif not q.asks_only:
        return True
    named = _written_forms(index.capabilities[slug].name)
    return all(_written_forms(word) & named for word in words)


def _written_forms(text: str) -> set[str]:
    return {form for term in terms(text) for form in (term, *terms(term))}  # 'settings' -> 'setting' -> 'set'


def _named(index: MatchIndex, q: Query, offered: set[str]) -> str | None:
    """The one capability offered whose whole name the query holds, with at most one word no name has ('turn on
    subagents'; not 'IDE plugin') besides a negation ('custom agents not working' asks about it as "doesn't work",
    whose negation is a stop word): offered after the names that hold the query, and no other resolves."""
    vocabulary, asked = index.vocabulary, {word for unit in q.units for word in unit.words}
    held = {s for r in asked for s in vocabulary.names.get(r, ()) if s in offered and vocabulary.name_roots[s] <= asked}
    if len(held) != 1:
        return None
    (slug,) = held
    extra = asked - vocabulary.name_roots[slug] - NEGATIONS
    return slug if len(extra) <= 1 and not extra & vocabulary.names.keys() else None


def _closest(index: MatchIndex, q: Query, close: Mapping[str, float] | None) -> dict[str, float]:
    """Capability -> closeness (0-100) to a query nothing matched: a sentence's by meaning (cosines that show above 0
    once scaled), else, or without it, its names' spelling."""
    sentence = len(q.normalized.split()) >= SENTENCE
    meaning = {slug: 100 * c for slug, c in (close or {}).items() if round(c * FILL_SCALE, 3) > 0} if sentence else {}
    return meaning or _similarity(index, q.normalized, fuzz.WRatio, 0.0)


def _by_meaning(q: Query, pool: list[Candidate], named: str | None, close: Mapping[str, float]) -> list[Candidate]:
    """Candidates by confidence plus `WEIGHT` x closeness of meaning, shown with that blend; first those whose name
    holds the query ('permissions'), then the one whose name the query holds (`_named`)."""
    weight = WEIGHT if close else 0.0
    blend = {c.value: (c.confidence + weight * max(0.0, close.get(c.value, 0.0))) / (1 + weight) for c in pool}
    asked = (_as_written(q.normalized), q.key)
    order = sorted(pool, key=lambda c: (_holds(c.label, asked), c.value != named, -blend[c.value], c.value))
    return [Candidate(c.value, c.label, round(blend[c.value], 3)) for c in order]


def _holds(name: str, asked: tuple[str, str]) -> int:
    """0: the name holds the query as written ('in-editor'), 1: as `terms()` ('permission'), 2: neither."""
    held = _forms(name)
    return next((i for i, (h, a) in enumerate(zip(held, asked, strict=True)) if a and f" {a} " in f" {h} "), 2)


@lru_cache(maxsize=4096)  # a catalog's names are few, and each is held up to every query
def _forms(name: str) -> tuple[str, str]:
    return _as_written(normalize(name)), " ".join(terms(name))


def _as_written(normalized: str) -> str:
    return " ".join(bind_negation(normalized.split()))  # 'non interactive' stays one word, as in `terms()`


def decide(best: float, runner_up: float, lacks: bool = False, rule: tuple[float, float, float] | None = None) -> bool:
    """Whether a ranked winner (confidence: the share of the query explained) is clear enough to resolve."""
    confidence, lead, no = rule or DECISION_RULE
    return best >= (no if lacks else confidence) and best - runner_up >= lead


def _no_rule(
    index: MatchIndex, resolution: Resolution, agent: str | None, offered: tuple[Candidate, ...], runner_up: float
) -> Resolution:
    """Never a confident wrong "no": an answer the asked agent lacks stands only at the rule's stricter confidence."""
    has = agent is None or index.capabilities[resolution.value or ""].available_to(agent)
    if has or decide(resolution.confidence, runner_up, lacks=True):
        return resolution
    ranked, analysed = resolution.ranked, resolution.analysed
    return Resolution(resolution.query, "ambiguous", candidates=offered, ranked=ranked, scored=True, analysed=analysed)


def _similarity(
    index: MatchIndex, n: str, scorer: Callable[[str, str], float], cutoff: float, typo: bool = False
) -> dict[str, float]:
    """Capability -> similarity (0-100) of its closest name to the query, from `cutoff`; `typo`: only names the query
    may be a mistyping of (as many words, or at most two letters fewer)."""
    words, letters = n.count(" "), len(n) - n.count(" ")
    best: dict[str, float] = {}
    for name, score, at in process.extract(n, index.names, scorer=scorer, score_cutoff=cutoff, limit=None):
        if not typo or name.count(" ") >= words or len(name) - name.count(" ") + 2 >= letters:
            for slug in index.name_owners[at]:
                best[slug] = max(best.get(slug, 0.0), score)
    return best
