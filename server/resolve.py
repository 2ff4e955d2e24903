"""Capability resolution: what the user typed -> a capability slug.

Why: exact tiers answer what is spelled as the index has it (a name, identifiers, an alias, an agent's wording,
a name or alias in other forms, a whole name mistyped); the ranking model (server/rank.py) and one decision rule
answer the rest, and never say with a loose match that the asked agent lacks something.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from functools import lru_cache

from rapidfuzz import fuzz, process

from capidx.schema.text import bind_negation, normalize, terms
from capidx.server.matchindex import Candidate, MatchIndex, Resolution
from capidx.server.names import SUGGESTIONS, TYPO_FLOOR, ambiguous, best_first, category_named, closest, typo_winner
from capidx.server.query import Query, analyse
from capidx.server.semantic import WEIGHT

# The decision rule (fitted on the query sets of benchmarks/resolution; calibration table in
# benchmarks/resolution/RESULTS.md): a ranked winner resolves when its confidence reaches the first value and it
# leads the runner-up by the second; a winner the asked agent lacks ("no") needs the third value instead of the
# first (at least 0.1 more, by design). Anything else comes back as candidates.
DECISION_RULE: tuple[float, float, float] = (0.3, 0.16, 0.4)
# An unresolved answer offers up to this many ranked candidates, down to this confidence; below half the rule's
# confidence nothing matched ("unknown"): the closest capabilities fill the list, their closeness (0..1) scaled by
# FILL_SCALE at most, by meaning for a query of SENTENCE words or more, else by the spelling of their names.
SHOWN_CANDIDATES = 5
SHOWN_FLOOR = 0.02
FILL_SCALE = DECISION_RULE[0] / 4
SENTENCE = 3
# An identifier found in another agent's record weighs this share of the same in the asked agent's; the evidence
# and the lead over the runner-up (a field or an agent apart) an identifier answer needs.
OTHER_AGENT_IDENTIFIER = 0.4
IDENTIFIER_MIN = 0.6
IDENTIFIER_LEAD = 0.15


def resolve_capability(index: MatchIndex, query: str, agent: str | None = None) -> Resolution:
    """A capability slug; `agent` (an id) makes that agent's own terminology and identifiers win, and keeps
    a loose match from saying the agent lacks something."""
    q = analyse(query, index.vocabulary)
    n = q.normalized
    if (slug := index.keys.get(n)) is not None:
        return Resolution(query, "resolved", slug, "exact", 1.0)
    if evidence := _identifier_evidence(index, q, agent):  # '/memory' is not the word 'memory'
        if found := _by_identifier(index, q, evidence, agent):
            return found
        # Identifiers and words, spelled as an alias or a wording of a capability whose records hold the identifiers
        # ('/compact, auto-compact'), are that name; identifiers alone are never read as the words normalization
        # leaves of them, nor '/init project' as another capability's alias 'init project'.
        named = _named_exactly(index, query, n, agent) if q.rest else None
        if named and all(index.identifier_holders(t, named.value or "") for t in q.identifiers):
            return named
        return _by_ranking(index, q, agent)
    if found := _named_exactly(index, query, n, agent):
        return found
    if (slug := index.stemmed.get(q.key)) is not None:  # a name or alias in other forms ('the release notes')
        return Resolution(query, "resolved", slug, "stemmed", 1.0)
    # A whole name, alias or wording mistyped ('hoks', 'mcp srvers', 'hoo ks'; not 'gpu usage metrics').
    near = _similarity(index, n, fuzz.ratio, TYPO_FLOOR, typo=True) if q.mistyped else {}
    typo = typo_winner(query, near)  # a capability's name mistyped is read before a category's ('debug lgging')
    category = category_named(index, n, mistyped=typo is None)
    return _in_category(index, q, category, typo or _by_ranking(index, q, agent), agent)


def _named_exactly(index: MatchIndex, query: str, n: str, agent: str | None) -> Resolution | None:
    """The alias and terminology tiers: an alias (the asked agent's own first), else an agent's wording (the asked
    agent's own first; several capabilities of other agents' one wording: ambiguous)."""
    if (slug := index.own_aliases.get((agent or "", n)) or index.aliases.get(n)) is not None:  # the agent's own first
        return Resolution(query, "resolved", slug, "alias", 1.0)
    if uses := index.terminology.get(n):  # an agent's wording: the asked agent's own first
        slugs = sorted({slug for who, slug in uses if who == agent}) or sorted({slug for _, slug in uses})
        if len(slugs) > 1:  # several agents use this word for different capabilities
            return ambiguous(query, slugs, lambda slug: index.capabilities[slug].name)
        return Resolution(query, "resolved", slugs[0], "terminology", 1.0)
    return None


def _in_category(index: MatchIndex, q: Query, category: str | None, found: Resolution, agent: str | None) -> Resolution:
    """A query that is a category's name ('security') answers with the category's capabilities (those its words rank
    first), `resolved_by` "category", unless its words found one of them that the asked agent has a record of (or
    any one, when the agent has a record of none): a capability of another category that shares a word ('security
    review'), or "no data" on one capability while the agent has others of the category, is not what was asked. A
    category with no capability ('debugging', which the schema defines) resolves to none: what its words found is
    offered (candidates of status "unknown"), not resolved."""
    if category is None:
        return found
    scores = index.ranker.rank(q.units)
    inside = [s for s, c in index.capabilities.items() if c.category == category]
    members = sorted(inside, key=lambda s: (-scores.get(s, 0.0), s))
    if not members:  # no capability of another category is it: what the words found is offered, not resolved
        value = found.value
        winner = (Candidate(value, index.capabilities[value].name, found.confidence),) if value else ()
        offered = found.candidates or found.ranked[:SHOWN_CANDIDATES] or winner
        return Resolution(q.text, "unknown", None, "category", candidates=() if found.status == "unknown" else offered)
    recorded = [slug for slug in members if agent is None or agent in index.capabilities[slug].agents]
    if found.value in (recorded or members):  # the words found the agent's own one: their answer stands
        return found
    share = round(1 / len(members), 3)
    listed = tuple(Candidate(slug, index.capabilities[slug].name, share) for slug in members)
    return Resolution(
        q.text, "ambiguous", None, "category", candidates=listed[:SHOWN_CANDIDATES], ranked=listed, scored=True
    )


def _identifier_evidence(index: MatchIndex, q: Query, agent: str | None) -> Counter[str]:
    """Capability -> the mean over the query's identifiers of the strongest place each occurs (in another agent's
    record at `OTHER_AGENT_IDENTIFIER`): an identifier nothing mentions lowers every score."""
    found: Counter[str] = Counter()
    for token in q.identifiers:
        best: dict[str, float] = {}
        for slug, who, weight in index.identifiers.get(token, ()):
            share = 1.0 if who is None or agent is None or who == agent else OTHER_AGENT_IDENTIFIER
            best[slug] = max(best.get(slug, 0.0), weight * share / len(q.identifiers))
        found.update(best)
    return found


def _by_identifier(index: MatchIndex, q: Query, evidence: Mapping[str, float], agent: str | None) -> Resolution | None:
    """A query that is only identifiers ('/compact', 'CLAUDE.md') resolves to the capability whose records name
    them most directly, when clearly so; words besides them are weighed by the ranking."""
    ranked = best_first(evidence)
    (best_slug, best), runner_up = ranked[0], (ranked[1][1] if len(ranked) > 1 else 0.0)
    if q.rest or best < IDENTIFIER_MIN or best - runner_up < IDENTIFIER_LEAD:
        return None
    everything = tuple(Candidate(s, index.capabilities[s].name, round(c, 3)) for s, c in ranked)
    resolved = Resolution(q.text, "resolved", best_slug, "identifier", round(best, 3), ranked=everything, scored=True)
    return _no_rule(index, resolved, agent, everything[:SHOWN_CANDIDATES], round(runner_up, 3))


def _by_ranking(index: MatchIndex, q: Query, agent: str | None) -> Resolution:
    """The ranking model's answer, as `decide` rules: the winner, or the top candidates in the order of words and
    meaning together (server/semantic.py). A query that names one capability (`_named`) resolves to no other."""
    ordered = [Candidate(s, index.capabilities[s].name, c) for s, c in best_first(index.ranker.rank(q.units))]
    best, runner_up, *_ = [c.confidence for c in ordered[:2]] + [0.0, 0.0]
    floor = DECISION_RULE[0] / 2  # below it a candidate is noise: suggestions' snippets skip it
    above = tuple(c for c in ordered if c.confidence >= floor)
    pool = [c for c in ordered if c.confidence >= SHOWN_FLOOR]
    named = _named(index, q, {c.value for c in pool})
    clear = decide(best, runner_up) and named in (None, ordered[0].value) and not _guessed(q)
    if clear and _names_it(index, q, ordered[0].value):
        how = "fuzzy" if q.corrected else "lexical"
        winner = Resolution(q.text, "resolved", ordered[0].value, how, best, ranked=above, scored=True, analysed=q)
        return _no_rule(index, winner, agent, tuple(pool[:SHOWN_CANDIDATES]), runner_up)
    # Meaning orders what ranked and fills a sentence's list; a name nothing ranked for needs neither (nor the model).
    close = index.meanings.closeness(q.text) if pool or len(q.normalized.split()) >= SENTENCE else None
    offered = _by_meaning(q, pool, named, close or {})
    shown = tuple(offered[:SHOWN_CANDIDATES])
    if best >= floor:
        kept = {c.value for c in above}
        ranked = tuple(c for c in offered if c.value in kept)
        return Resolution(q.text, "ambiguous", candidates=shown, ranked=ranked, scored=True, analysed=q)
    # Nothing matched: what ranked a little first, then the closest capabilities, scaled below what ranked (weaker
    # evidence than words), so the list stays in order and nothing merely close claims what a ranked answer would.
    similar = _closest(index, q, close) if len(shown) < SUGGESTIONS else {}
    low = shown[-1].confidence if shown else FILL_SCALE
    fill = tuple(
        Candidate(c.value, c.label, round(min(low, c.confidence * FILL_SCALE), 3))
        for c in closest(similar, lambda slug: index.capabilities[slug].name)
        if c.value not in {s.value for s in shown}
    )
    return Resolution(q.text, "unknown", candidates=shown + fill[: SUGGESTIONS - len(shown)], scored=True)


def _guessed(q: Query) -> bool:
    """Whether the query is one word the catalog does not have as typed, read as an index word it may be a typo of or
    as two words ('compaction' as 'companion', 'autocomplete' as 'auto complete'): a guess the ranking offers, never
    resolves (a mistyped name is the whole-name typo tier's); it answered Editor Bridge ✗ and History Condensing ✓."""
    return " " not in q.normalized and (q.corrected or len(q.units) > 1)


def _names_it(index: MatchIndex, q: Query, slug: str) -> bool:
    """Whether the query may resolve to `slug` by its words: a query whose every word asks about a record
    ('limitations', `Query.asks_only`) names only a capability whose name has them ('availability': Model
    Availability); else it asks what each record says, and the record that says 'limit' most is no answer. Written
    forms, not roots: the root of 'limitations' is that of Usage Limits' 'limits', of 'functionality' Function
    Calling's 'function'."""
    if not q.asks_only:
        return True
    named = _written_forms(index.capabilities[slug].name)
    return all(_written_forms(word) & named for word in q.key.split())


def _written_forms(text: str) -> set[str]:
    """`terms(text)`, each also as `terms()` gives it again ('settings' -> 'setting' -> 'set')."""
    return {form for term in terms(text) for form in (term, *terms(term))}


def _named(index: MatchIndex, q: Query, offered: set[str]) -> str | None:
    """Of the capabilities offered, the one whose whole name the query holds with at most one word more, a word no
    name has ('custom agents config', 'turn on subagents'; not 'IDE plugin'): it is offered right after the names
    that hold the query, and another capability whose record has the words does not resolve. The query's words as
    the ranking reads them (typos corrected), looked up by their roots, so a large catalog costs no more than a small
    one."""
    vocabulary, asked = index.vocabulary, {word for unit in q.units for word in unit.words}
    held = {s for r in asked for s in vocabulary.names.get(r, ()) if s in offered and vocabulary.name_roots[s] <= asked}
    if len(held) != 1:
        return None
    (slug,) = held
    extra = asked - vocabulary.name_roots[slug]
    return slug if len(extra) <= 1 and not extra & vocabulary.names.keys() else None


def _closest(index: MatchIndex, q: Query, close: Mapping[str, float] | None) -> dict[str, float]:
    """Capability -> how close it is (0-100) to a query nothing matched: a sentence ('live pair programming with a
    teammate') by meaning, a few words ('kubernets') by the spelling of its names (also without a model, and when
    the model finds nothing close in meaning: no cosine that, scaled by `FILL_SCALE`, shows above 0 (noise), or none
    at all, a query embedded as NaN)."""
    sentence = len(q.normalized.split()) >= SENTENCE
    meaning = {slug: 100 * c for slug, c in (close or {}).items() if round(c * FILL_SCALE, 3) > 0} if sentence else {}
    return meaning or _similarity(index, q.normalized, fuzz.WRatio, 0.0)


def _by_meaning(q: Query, pool: list[Candidate], named: str | None, close: Mapping[str, float]) -> list[Candidate]:
    """The candidates by confidence plus `WEIGHT` x closeness of meaning (`close`), each shown with that blend (0..1);
    first, whatever their blend, those whose name holds the query, a partial name ('permissions', 'in-editor'), then
    the one whose name the query holds."""
    weight = WEIGHT if close else 0.0  # no model, or a build without descriptions: the words' order
    blend = {c.value: (c.confidence + weight * max(0.0, close.get(c.value, 0.0))) / (1 + weight) for c in pool}
    asked = (_as_written(q.normalized), q.key)  # the query's two forms, once
    order = sorted(pool, key=lambda c: (_holds(c.label, asked), c.value != named, -blend[c.value], c.value))
    return [Candidate(c.value, c.label, round(blend[c.value], 3)) for c in order]


def _holds(name: str, asked: tuple[str, str]) -> int:
    """0: the name holds the query as written ('in-editor': In-editor Prompt, not Editor Bridge), 1: in other
    forms, `terms()` ('permission': Tool Permissions), 2: neither."""
    held = _forms(name)
    return next((i for i, (h, a) in enumerate(zip(held, asked, strict=True)) if a and f" {a} " in f" {h} "), 2)


@lru_cache(maxsize=4096)
def _forms(name: str) -> tuple[str, str]:
    """A name as written and in other forms; memoized: a catalog's names are few, and each is held up to every
    query (0.3 ms a query otherwise)."""
    return _as_written(normalize(name)), " ".join(terms(name))


def _as_written(normalized: str) -> str:
    return " ".join(bind_negation(normalized.split()))  # 'non interactive' stays one word, as in `terms()`


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
    has = agent is None or index.capabilities[resolution.value or ""].available_to(agent)
    if has or decide(resolution.confidence, runner_up, lacks=True):
        return resolution
    ranked, analysed = resolution.ranked, resolution.analysed
    return Resolution(resolution.query, "ambiguous", candidates=offered, ranked=ranked, scored=True, analysed=analysed)


def _similarity(
    index: MatchIndex, n: str, scorer: Callable[[str, str], float], cutoff: float, typo: bool = False
) -> dict[str, float]:
    """Capability -> how similar its closest name is to the normalized query (0-100), for those at `cutoff` or more
    (rapidfuzz skips the rest in C); `typo`: only names the query may be a mistyping of, those with as many words or
    at most two letters fewer."""
    words, letters = n.count(" "), len(n) - n.count(" ")
    best: dict[str, float] = {}
    for name, score, at in process.extract(n, index.names, scorer=scorer, score_cutoff=cutoff, limit=None):
        if not typo or name.count(" ") >= words or len(name) - name.count(" ") + 2 >= letters:
            for slug in index.name_owners[at]:
                best[slug] = max(best.get(slug, 0.0), score)
    return best
