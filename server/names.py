"""Agent and category names, and the typo and suggestion helpers every resolver shares.

Why: agents and categories have few, short names (match.json `agentNames`, `categories`), so exact spelling,
the words of their names and typo tolerance suffice; capabilities need the ranking model (server/resolve.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from rapidfuzz import fuzz

from capidx.schema.text import STOP_WORDS, normalize
from capidx.server.matchindex import Candidate, MatchIndex, Resolution

# Whole-string similarity (0-100) that counts as "the same words, mistyped", when 5 ahead of the next.
TYPO_RATIO = 82
SUGGESTIONS = 3


def resolve_agent(index: MatchIndex, query: str) -> Resolution:
    """An agent id from its id, name or nickname ('Claude Code', 'claude', 'gemini', 'Copilot in VS Code')."""
    n = normalize(query)
    if not n:
        return _unknown_agent(index, query, n)
    ids = index.agent_names.get(n) or index.compact_agent_names.get(n.replace(" ", "")) or _containing(index, n)
    if len(ids) == 1:  # a spelling of the agent, or every word of the query names it ('github copilot cli')
        return Resolution(query, "resolved", ids[0], "exact" if n == normalize(ids[0]) else "name", 1.0)
    if ids:  # 'github copilot': both Copilots
        return ambiguous(query, ids, index.agent_label)
    near = _best_per_value(
        (ids, fuzz.ratio(n, spelling)) for spelling, ids in index.agent_names.items() if abs(len(spelling) - len(n)) < 5
    )
    return typo_winner(query, near) or _unknown_agent(index, query, n)


def _containing(index: MatchIndex, n: str) -> tuple[str, ...]:
    """The agents one of whose names has every word of the query; else those whose names together have every
    meaningful word ('copilot in vs code' uses 'copilot', 'vs code'; 'google gemini cli' the vendor and the name)."""
    words = set(n.split())
    found = {i for spelling, ids in index.agent_names.items() if words <= set(spelling.split()) for i in ids}
    meaningful = (words - STOP_WORDS) or words
    return tuple(sorted(found or (agent for agent, known in index.words_per_agent.items() if meaningful <= known)))


def _unknown_agent(index: MatchIndex, query: str, n: str) -> Resolution:
    similar = _best_per_value((ids, fuzz.WRatio(n, spelling)) for spelling, ids in index.agent_names.items())
    return Resolution(query, "unknown", candidates=closest(similar, index.agent_label))


def resolve_category(index: MatchIndex, query: str) -> Resolution:
    """A category slug from its slug or words ('API integration' -> 'api-integration')."""
    n = normalize(query)
    spelled = index.category_keys
    if n in spelled:
        return Resolution(query, "resolved", spelled[n], "exact", 1.0)
    words = set(n.split())
    containing = sorted(category for key, category in spelled.items() if words and words <= set(key.split()))
    if len(containing) == 1:  # 'api' -> api-integration
        return Resolution(query, "resolved", containing[0], "name", 1.0)
    if containing:
        return ambiguous(query, containing, str)
    resolved = typo_winner(query, {category: fuzz.ratio(n, key) for key, category in spelled.items()})
    similar = {category: fuzz.WRatio(n, key) for key, category in spelled.items()}
    return resolved or Resolution(query, "unknown", candidates=closest(similar, str))


def typo_winner(query: str, similarity: Mapping[str, float]) -> Resolution | None:
    """The one value clearly most similar to the query (`TYPO_RATIO`, 5 ahead of the next) resolves as `fuzzy`."""
    ranked = best_first(similarity)
    if ranked and ranked[0][1] >= TYPO_RATIO and (len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= 5):
        return Resolution(query, "resolved", ranked[0][0], "fuzzy", round(ranked[0][1] / 100, 3))
    return None


def closest(similarity: Mapping[str, float], label: Callable[[str], str]) -> tuple[Candidate, ...]:
    """The `SUGGESTIONS` values most similar to an unknown name, as candidates."""
    return tuple(Candidate(v, label(v), round(s / 100, 3)) for v, s in best_first(similarity)[:SUGGESTIONS])


def ambiguous(query: str, values: Iterable[str], label: Callable[[str], str]) -> Resolution:
    """Several values the query names equally: each with an equal share of the confidence."""
    ordered = sorted(values)
    share = round(1 / len(ordered), 3)
    return Resolution(query, "ambiguous", candidates=tuple(Candidate(v, label(v), share) for v in ordered))


def _best_per_value(pairs: Iterable[tuple[Iterable[str], float]]) -> dict[str, float]:
    best: dict[str, float] = {}
    for values, score in pairs:
        for value in values:
            best[value] = max(best.get(value, 0.0), score)
    return best


def best_first(scored: Mapping[str, float]) -> list[tuple[str, float]]:
    """Highest score first, ties by value: every resolver's order."""
    return sorted(scored.items(), key=lambda item: (-item[1], item[0]))
