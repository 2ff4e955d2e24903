"""Agent and category names: what the user typed -> an agent id or a category slug.

Why: agents and categories have few, short names (match.json `agentNames`, `categories`), so they resolve by
exact spelling, by the words of their names and by typo tolerance alone; capabilities need the ranking
model (`capidx.server.resolve`).
"""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz import fuzz

from capidx.schema.text import STOP_WORDS, normalize
from capidx.server.matchindex import Candidate, MatchIndex, Resolution

# Whole-string similarity (0-100) that counts as "the same words, mistyped" (agent and category names).
TYPO_RATIO = 82
SUGGESTIONS = 3


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
