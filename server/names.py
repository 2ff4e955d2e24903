"""Agent and category names, and the typo and suggestion helpers every resolver shares: agents and categories have
few, short names, so spellings, their words and typo tolerance suffice (capabilities need server/resolve.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from capidx.schema.text import STOP_WORDS, normalize
from capidx.server.matchindex import Candidate, MatchIndex, NameTable, Resolution
from capidx.server.query import LONG_TYPO

# Whole-string similarity (0-100) that reads as "the same words, mistyped", when TYPO_LEAD ahead of the next; below
# TYPO_FLOOR a similarity can neither win nor come within the lead.
TYPO_RATIO, TYPO_LEAD, SUGGESTIONS = 82, 5, 3
TYPO_FLOOR = TYPO_RATIO - TYPO_LEAD
GENERIC_AGENT_WORDS = frozenset(("agent", "agents"))  # what every agent is: 'the VS Code agent'
_JOINERS = frozenset(",&/+;")  # a list of names, which `agent_args` splits ('claude, agents')
_JOINING_WORDS = frozenset("and or nor plus versus other others both all every".split())  # 'claude and other agents'
_NUMBER = re.compile(r"\d+")
HOSTED = "hosted"  # `resolvedBy` of the agent named before 'in', 'for' or 'on' ('Claude Code in VS Code')
_HOSTED_IN = re.compile(r"^(.+?)\s+(?:in|inside|for|on)\s+\S.*$", re.IGNORECASE | re.DOTALL)
# What joins agents' names in one string: "and", "or", "vs", "versus", "&", "/", "+", ";" (agent_args splits on them;
# a comma separates too).
_JOINED = re.compile(r"\s+(?:and|or|vs\.?|versus)\s+|\s*[&/+;]\s*", re.IGNORECASE)


def resolve_agent(index: MatchIndex, query: str) -> Resolution:
    """An agent id from its id, name or nickname ('claude', 'Copilot in VS Code'), also as '[the] X agent', or as the
    agent named before 'in' (`HOSTED`). A name that stops inside a longer name of the catalog ('Visual Studio' in
    'Visual Studio Code') is another product, and names joined ('copilot cli vs vscode copilot') are several: neither
    is read by its words nor as mistyped (agent_args reads joined names one by one)."""
    read = before_agent(index.agent_names, query)
    read = "" if _every_agent(index, read) else read
    n = normalize(read)
    if n not in index.agent_names.spellings and (hosted := _hosted(index, query, read)) is not None:
        return hosted
    loosely = not _cuts_a_name(index.agent_names, n) and not joins_names(index.agent_names, read)
    return _resolve_name(index.agent_names, query, index.agent_label, read, loosely=loosely)


def joiners(table: NameTable, text: str) -> list[re.Match[str]]:
    """Where names are joined (`_JOINED`, on the NFKC text: a full-width '＆' joins as '&'); not a 'vs' that begins a
    spelling ('Gemini Code Assist in VS Code' is no 'vs', whose 'Code' was read as two agents: a blind model test)."""
    text = unicodedata.normalize("NFKC", text)
    return [m for m in _JOINED.finditer(text) if not _spelled_from(table, text[m.start() :])]


def joins_names(table: NameTable, text: str) -> bool:
    """Whether a string joins names of agents: a comma, or a joiner (`joiners`)."""
    return "," in text or bool(joiners(table, text))


def _spelled_from(table: NameTable, text: str) -> bool:
    """Whether the text's first two words begin a spelling of two or more words, the second maybe cut ('VS Code ...',
    'vs cod': 'vs code'; not 'vs codex', another product)."""
    first = normalize(text).split()[:2]
    if len(first) < 2:
        return False
    head, typed = first
    return any(word.startswith(typed) for word in table.second_words.get(head, ()))


def _hosted(index: MatchIndex, query: str, read: str) -> Resolution | None:
    """'Claude Code in VS Code' (its editor extension) is the agent named before 'in', by a spelling of two or more
    words or its id: it was read as claude-code and vscode-copilot, and a model answered that Claude Code has inline
    chat in VS Code (a blind model test). Not a one-word nickname: 'Gemini in Android Studio' is another product."""
    if (match := _HOSTED_IN.match(read.strip())) is None:
        return None
    head = normalize(match.group(1))
    ids = index.agent_names.spellings.get(head, ())
    if len(ids) != 1 or (" " not in head and head not in index.agents):
        return None
    return Resolution(query, "resolved", ids[0], HOSTED, 1.0)


def _cuts_a_name(table: NameTable, n: str) -> bool:
    """Whether the words hold the first two or more words of spellings of three or more, all of one agent, words that
    are no spelling themselves, then end or go on with a word none of that agent's spellings has, even cut short
    ('github copilot in visual studio' of 'visual studio code'; not 'visual studio cod', 'copilot in vs code', nor
    'github copilot', which begins names of two agents)."""
    if n in table.spellings:
        return False
    words = n.split()
    for start in range(len(words) - 1):
        for end in range(start + 2, len(words) + 1):
            found = table.continuations.get(tuple(words[start:end]))
            if found is None:
                break
            following, owners = found
            after = words[end] if end < len(words) else ""
            theirs = set().union(*(table.words.get(owner, frozenset()) for owner in owners)) if after else set()
            going_on = after and (after in theirs or any(w.startswith(after) for w in following))
            if not going_on and len(owners) == 1 and " ".join(words[start:end]) not in table.spellings:
                return True
    return False


def generic_agent(index: MatchIndex, query: str) -> bool:
    """'the agent', 'all agents': what every agent is, naming none (unless a spelling: 'Cursor Agent' has the word)."""
    return bool(normalize(query)) and _every_agent(index, before_agent(index.agent_names, query))


def _every_agent(index: MatchIndex, read: str) -> bool:
    n = normalize(read)
    return n not in index.agent_names.spellings and set(n.split()) - STOP_WORDS - _JOINING_WORDS <= GENERIC_AGENT_WORDS


def resolve_category(index: MatchIndex, query: str) -> Resolution:
    return _resolve_name(index.category_names, query, str)


def before_agent(table: NameTable, query: str) -> str:
    """'[the] X agent(s)' read as 'X' ('VS Code agent'); not a spelling ('Cursor Agent'), a list or other words
    ('claude and other agents', 'claude, agents'); X may have stop words ('the copilot in vs code agent')."""
    words = normalize(query).split()
    if len(words) < 2 or words[-1] not in GENERIC_AGENT_WORDS or " ".join(words) in table.spellings:
        return query
    head = words[1:-1] if words[0] == "the" else words[:-1]
    if not head or not _JOINERS.isdisjoint(query):
        return query
    spelled = " ".join(head) in table.spellings  # 'the All Hands agent', 'Sand and Sea agent'
    return query if set(head) & _JOINING_WORDS and not spelled else " ".join(head)


def _resolve_name(
    table: NameTable, query: str, label: Callable[[str], str], read: str | None = None, loosely: bool = True
) -> Resolution:
    """A spelling, else (`loosely`) its words (not stop words alone) or a spelling mistyped, else suggestions; `read`:
    what names it."""
    n = normalize(read if read is not None else query)
    found = table.spellings.get(n) or (_containing(table, n) if loosely and set(n.split()) - STOP_WORDS else ())
    if len(found) == 1:  # a spelling of the value, or every word of the query names it ('github copilot cli')
        exact = normalize(query) == normalize(found[0])  # 'claude-code agent' is no exact spelling
        return Resolution(query, "resolved", found[0], "exact" if exact else "name", 1.0)
    if found:  # 'github copilot': both Copilots
        return ambiguous(query, found, label)
    if loosely and (resolved := _mistyped(table, query, n)):
        return resolved
    similar = _best_per_value((values, fuzz.WRatio(n, s)) for s, values in table.spellings.items())  # when shown
    return Resolution(query, "unknown", candidates=closest(similar, label))


def category_named(index: MatchIndex, query: str, mistyped: bool = True) -> str | None:
    """The category the query names ('security') or, with `mistyped`, names mistyped ('securty'), else None."""
    n = normalize(query)
    found = index.category_names.spellings.get(n) or (_mistyped_words(index, query, n) if mistyped else ())
    return found[0] if len(found) == 1 else None


def _mistyped_words(index: MatchIndex, query: str, n: str) -> tuple[str, ...]:
    """The category the query spells with words slipped (`_slip`) that the index lacks: a wrong letter makes everyday
    words into others ('tasting' for 'testing'), and a missing one words the catalog says ('mode selection')."""
    words = n.split()

    def typed_as(spelling: str) -> bool:
        parts = spelling.split()
        return len(parts) == len(words) and all(
            a == b or (a not in index.vocabulary.terms and _slip(a, b)) for a, b in zip(words, parts, strict=True)
        )

    typo = typo_winner(query, _near(index.category_names, n, typed_as))
    return (typo.value,) if typo and typo.value else ()


def _slip(typed: str, word: str) -> bool:
    """`word` with one letter missing, added or swapped, the first kept ('securty', 'langauge'); not one changed."""
    one_slip = typed[:1] == word[:1] and OSA.distance(typed, word) == 1  # missing, added, swapped or changed
    return one_slip and (len(typed) != len(word) or sorted(typed) == sorted(word))  # the same letters: not changed


def _mistyped(table: NameTable, query: str, n: str) -> Resolution | None:
    """The one value whose spelling the query is, mistyped; a typo does not change a number ('agent-999')."""
    numbers = _NUMBER.findall(n)
    return typo_winner(query, _near(table, n, lambda s: n and keeps(numbers, s) and mistyped_as(n, s)))


def _near(table: NameTable, n: str, keep: Callable[[str], object]) -> dict[str, float]:
    """Value -> similarity (0-100) of its closest spelling `keep` accepts, from `TYPO_FLOOR` (skipped in C below)."""
    close = process.extract(n, list(table.spellings), scorer=fuzz.ratio, score_cutoff=TYPO_FLOOR, limit=None)
    return _best_per_value((table.spellings[spelling], score) for spelling, score, _ in close if keep(spelling))


def _containing(table: NameTable, n: str) -> tuple[str, ...]:
    """The values a spelling of which has every word of the query; else whose spellings together have every meaningful
    word ('copilot in vs code')."""
    words = set(n.split())
    found = {v for spelling, values in table.spellings.items() if words <= set(spelling.split()) for v in values}
    meaningful = words - STOP_WORDS
    found = found or {value for value, known in table.words.items() if meaningful <= known}
    return tuple(sorted(found)) or _most_words(table, meaningful)


def _most_words(table: NameTable, words: set[str]) -> tuple[str, ...]:
    """The one value whose names hold the most words, when each word it lacks names several values and no spelling
    ('Claude Code CLI'; not 'claude code gemini', 'Claude Desktop' nor 'Claude Code and Copilot CLI')."""
    held = {value: len(words & known) for value, known in table.words.items()}
    best = max(held.values(), default=0)
    winners = [value for value, count in held.items() if count == best]
    if not best or len(winners) != 1:
        return ()
    lacking = words - table.words[winners[0]]
    naming = {word: sum(word in known for known in table.words.values()) for word in lacking}
    named = any(set(spelling.split()) <= lacking for spelling in table.spellings)  # 'copilot', 'github'
    return tuple(winners) if all(count > 1 for count in naming.values()) and not named else ()


def mistyped_as(typed: str, spelling: str) -> bool:
    """`spelling` mistyped word by word or run together ('claudecod'): not merely similar ('github copilot chat').
    Words spaced otherwise than the spelling's are read run together with one slip at most, unless typed as one word:
    'copilot in xcode' is two slips from 'copilot in vs code', and another product (a blind model test)."""
    words, spelled = typed.split(), spelling.split()
    if len(words) == len(spelled):
        pairs = list(zip(words, spelled, strict=True))
    else:
        pairs = [("".join(words), "".join(spelled))]
    slips = 2 if len(words) == 1 or len(words) == len(spelled) else 1
    return all(
        OSA.distance(a, b) <= (slips if len(b) >= LONG_TYPO else 1) or (len(a) >= 3 and b.startswith(a))
        for a, b in pairs
    )


def keeps(numbers: list[str], spelling: str) -> bool:
    return _NUMBER.findall(spelling) == numbers


def typo_winner(query: str, similarity: Mapping[str, float]) -> Resolution | None:
    """The one value clearly most similar to the query (`TYPO_RATIO`, `TYPO_LEAD` ahead) resolves as `fuzzy`."""
    ranked = best_first(similarity)
    if ranked and ranked[0][1] >= TYPO_RATIO and (len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= TYPO_LEAD):
        return Resolution(query, "resolved", ranked[0][0], "fuzzy", round(ranked[0][1] / 100, 3))
    return None


def closest(similarity: Mapping[str, float], label: Callable[[str], str]) -> tuple[Candidate, ...]:
    """The `SUGGESTIONS` values most similar to an unknown name; none that shares nothing with it ('🤖')."""
    return tuple(Candidate(v, label(v), round(s / 100, 3)) for v, s in best_first(similarity)[:SUGGESTIONS] if s > 0)


def ambiguous(query: str, values: Iterable[str], label: Callable[[str], str]) -> Resolution:
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
