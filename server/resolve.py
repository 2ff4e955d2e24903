"""Capability resolution: what the user typed -> a capability slug.

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

from collections.abc import Mapping, Sequence

from rapidfuzz import fuzz

from capidx.server.matchindex import RESOLUTION_META, Candidate, MatchIndex, Resolution
from capidx.server.names import SUGGESTIONS, TYPO_RATIO, resolve_agent, resolve_category
from capidx.server.query import Query, analyse

# The decision rule (fitted on the query sets of benchmarks/resolution; calibration table in
# benchmarks/resolution/RESULTS.md): a ranked winner resolves when its confidence reaches the first value and it
# leads the runner-up by the second; a winner the asked agent lacks ("no") needs the third value instead of the
# first (at least 0.1 more, by design). Anything else comes back as candidates.
DECISION_RULE: tuple[float, float, float] = (0.26, 0.16, 0.36)
# An unresolved answer offers up to this many ranked candidates, down to this confidence; below half the
# rule's confidence nothing matched ("unknown") and the closest names fill the list.
SHOWN_CANDIDATES = 5
SHOWN_FLOOR = 0.02


# An identifier found in another agent's record weighs this share of the same in the asked agent's; a query of
# identifiers resolves by identifier when the best capability's evidence reaches IDENTIFIER_MIN and leads by
# IDENTIFIER_LEAD (a field or an agent apart).
OTHER_AGENT_IDENTIFIER = 0.4
IDENTIFIER_MIN = 0.6
IDENTIFIER_LEAD = 0.15

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


__all__ = [
    "DECISION_RULE",
    "RESOLUTION_META",
    "Candidate",
    "MatchIndex",
    "Resolution",
    "decide",
    "resolve_agent",
    "resolve_capability",
    "resolve_category",
    "score_capabilities",
]
