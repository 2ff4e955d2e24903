"""The query analysed once (`Query`) for the exact tiers (server/resolve.py) and the ranking model (server/rank.py):
identifiers, `terms()`, typos corrected against the index's vocabulary, and the units to rank: a word, or a run an
abbreviation stands for, as Snowball roots, with the table's other readings as alternatives unless a name has it all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

import Stemmer
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from capidx.schema.lexicon import IDENTIFIER_PATTERN, abbreviations, expansions, identifiers, kinds
from capidx.schema.text import PROPER_NAMES, STOP_WORDS, normalize, terms

# Typo correction: a word of MIN_CORRECTABLE letters or more may be one error from an index term (two from LONG_TYPO
# letters); up to SHORT_TYPO letters only a missing or swapped letter counts (`_plausible_typo`).
MIN_CORRECTABLE, SHORT_TYPO, LONG_TYPO = 4, 5, 9
LONGEST_EXPANSION = 4  # the longest run an abbreviation stands for ('bring your own key')
# Words that ask about a record ('does it support hooks?', 'hooks setup'), not what a capability is called, as `terms()`
# gives them: left out unless the query holds a whole name, alias or wording that has them, or has no other word.
QUESTION_WORDS = frozenset(
    "support available availability limitation requirement feature functionality capability option set setting setup "
    "enable enabl drawback downside caveat gotcha restriction constraint generally".split()
)
# 'no' and 'not': read with the next word when the index negates it with 'non'; beside a name, no word more.
NEGATIONS = frozenset(("no", "not"))
_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def root(term: str) -> str:
    """The Snowball root of a `terms()` term ('approval' -> 'approv'); an identifier or proper name stays."""
    return str(_STEMMER.stemWord(term)) if term.isalnum() and term not in PROPER_NAMES else term


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """What analysis needs of the index: its terms and roots, and the roots of each capability's name."""

    terms: frozenset[str]
    roots: frozenset[str]  # the ranking model's
    names: Mapping[str, frozenset[str]]  # a root -> the capabilities whose name has it
    name_roots: Mapping[str, frozenset[str]]  # a capability -> its name's roots
    named: Mapping[str, frozenset[frozenset[str]]]  # a question word -> the terms of each name, alias... with it

    def knows(self, term: str) -> bool:
        """An index term, abbreviation or proper name: never read as a typo ('py support' is not MCP Support)."""
        return term in self.terms or term in PROPER_NAMES or bool(expansions(term) or kinds(term))


@dataclass(frozen=True, slots=True)
class Unit:
    """A query word, or a run an abbreviation stands for, as roots (`trust` < 1: typo-corrected); its alternatives."""

    words: tuple[str, ...]
    alternatives: tuple[tuple[str, ...], ...] = ()
    trust: float = 1.0


@dataclass(frozen=True, slots=True)
class Query:
    """Everything the resolver reads of one query."""

    text: str
    normalized: str
    identifiers: tuple[str, ...]
    key: str  # the terms joined: 'the release notes' and 'release note' share it
    corrected: bool  # a word was read as a typo of an index term (not the light stem's 'e': 'integrate')
    mistyped: bool  # a word the index lacks: the whole string may be a mistyped name
    rest: tuple[str, ...]  # terms outside the identifiers
    units: tuple[Unit, ...]
    corrections: Mapping[str, str]  # a term as typed -> the index term it was read as
    asks_only: bool = False  # every word asks about a record ('limitations')


def analyse(text: str, vocabulary: Vocabulary) -> Query:
    literal = tuple(dict.fromkeys(identifiers(text)))
    raw = _asked(text, vocabulary)
    rest = tuple(_asked(IDENTIFIER_PATTERN.sub(" ", text), vocabulary)) if literal else tuple(raw)
    fixed = {term: correct(term, vocabulary) for term in dict.fromkeys(raw)}
    words = [fixed[term] for term in raw]
    known = [token for token in literal if token in vocabulary.terms]
    if known:  # an identifier the index has is matched as itself ('/memory' is not 'memory')
        unknown = [t for token in literal if token not in vocabulary.terms for t in terms(token)]
        words = [fixed.get(term) or correct(term, vocabulary) for term in dict.fromkeys((*rest, *unknown))]
    words = _negated([part for word in words for part in _parts(word, vocabulary)], vocabulary)
    units = [Unit((token,)) for token in known] + _units(words, vocabulary, _plural_readings(text))
    corrections = {term: word for term, (word, _) in fixed.items() if word != term}
    # a typo's correction, not the light stem's dropped 'e' either way ('include' for 'includ', 'past' for 'paste')
    typo = any(w not in (f"{t}e", t[:-1] if t.endswith("e") else None) for t, (w, trust) in fixed.items() if trust < 1)
    return Query(
        text=text,
        normalized=normalize(text),
        identifiers=literal,
        key=" ".join(raw),
        corrected=typo,
        mistyped=not all(map(vocabulary.knows, raw)),
        rest=rest,
        units=tuple(units),
        corrections=MappingProxyType(corrections),
        asks_only=bool(raw) and not literal and set(raw) <= QUESTION_WORDS,
    )


def _asked(text: str, vocabulary: Vocabulary) -> list[str]:
    """`terms()` less the words that ask about a record, unless the query holds a whole name that has them."""
    found = terms(text)
    held = frozenset(found)
    if held <= QUESTION_WORDS:  # nothing else asked ('availability'): the word itself
        return found
    return [t for t in found if t not in QUESTION_WORDS or any(n <= held for n in vocabulary.named.get(t, ()))]


def _negated(words: list[tuple[str, float]], vocabulary: Vocabulary) -> list[tuple[str, float]]:
    """'no' or 'not' before a word the index negates with 'non' ('No-interactive Mode'): that negated word."""
    read: list[tuple[str, float]] = []
    for term, trust in words:
        if read and read[-1][0] in NEGATIONS and f"non{term}" in vocabulary.terms:
            read[-1] = (f"non{term}", trust)
        else:
            read.append((term, trust))
    return read


def _plural_readings(text: str) -> dict[str, str]:
    """An OS name ending in 's' after a word that may qualify a thing, in its case, may be a plural ('context windows';
    not 'on windows', 'native Windows'): its light stem ('window') is an alternative too."""
    return {
        name: name.removesuffix("s")
        for name in PROPER_NAMES
        if name.endswith("s")
        and any(
            before.lower() not in STOP_WORDS and (written == name or before[:1].isupper())
            for before, written in re.findall(rf"(\w+)[ -]+({name})\b", text, flags=re.IGNORECASE)
        )
    }


def _units(words: list[tuple[str, float]], vocabulary: Vocabulary, plurals: Mapping[str, str]) -> list[Unit]:
    units: list[Unit] = []
    i = 0
    while i < len(words):
        for size in range(min(LONGEST_EXPANSION, len(words) - i), 1, -1):  # 'command line interface' -> 'cli'
            run = tuple(t for t, _ in words[i : i + size])
            if short := abbreviations(run):
                units.append(_unit(run, [(s,) for s in short], 1.0, vocabulary))
                i += size
                break
        else:
            term, trust = words[i]
            short = abbreviations((term,))  # 'picture' -> 'pic', whose other one-word reading ('image') may be meant
            siblings = [e for s in short for e in expansions(s) if len(terms(e)) == 1]
            spelled = [tuple(terms(e)) for e in (*expansions(term), *siblings, *kinds(term))]  # 'kotlin': a language
            spelled += [(plurals[term],)] if term in plurals else []
            units.append(_unit((term,), [*spelled, *((s,) for s in short)], trust, vocabulary))
            i += 1
    return units


def _unit(run: tuple[str, ...], alternatives: list[tuple[str, ...]], trust: float, vocabulary: Vocabulary) -> Unit:
    words = tuple(root(t) for t in run)
    if frozenset.intersection(*(vocabulary.names.get(w, frozenset()) for w in words)):  # a name has them all:
        return Unit(words, (), trust)  # no expansion may outrank a name's own words
    others = tuple(dict.fromkeys(roots for a in alternatives if (roots := tuple(root(t) for t in a)) != words))
    return Unit(words, others, trust)


def correct(term: str, vocabulary: Vocabulary) -> tuple[str, float]:
    """The term, or the index term one plausible typing error away (the fewest errors, then the 'e' the light stem
    dropped: 'trac' of 'tracing' is 'trace', not 'track'; then the most similar), with the similarity; known words
    stay ('repo' is not 'report', 'julia' not 'jira')."""
    if vocabulary.knows(term) or len(term) < MIN_CORRECTABLE:
        return term, 1.0
    limit = 2 if len(term) >= LONG_TYPO else 1
    within = process.extract(term, vocabulary.terms, scorer=OSA.distance, score_cutoff=limit, limit=None)
    close = [m for m in within if len(m[0]) >= MIN_CORRECTABLE and _plausible_typo(term, m[0])]
    if not close:
        return term, 1.0
    best = max(close, key=lambda m: (-m[1], m[0] == f"{term}e", fuzz.ratio(term, m[0]), m[0]))[0]
    return best, round(fuzz.ratio(term, best) / 100, 3)


def _parts(word: tuple[str, float], vocabulary: Vocabulary) -> list[tuple[str, float]]:
    """An unknown word that is two known words run together ('autocomplete', 'toolset'): those two."""
    term, trust = word
    if term in vocabulary.terms or len(term) < 2 * MIN_CORRECTABLE - 1:
        return [word]
    for cut in range(3, len(term) - 2):
        head, tail = term[:cut], term[cut:]
        if all(part in vocabulary.terms or root(part) in vocabulary.roots for part in (head, tail)):
            return [(head, trust), (tail, trust)]
    return [word]


def _plausible_typo(typed: str, known: str) -> bool:
    """A misspelling keeps its first letter ('fine' is not 'line'); in a short word a wrong or extra letter usually
    makes another real word ('spot' / 'shot'), a missing or swapped one rarely ('hoks', 'mdoe')."""
    if typed[:1] != known[:1]:
        return False
    return (
        len(typed) > SHORT_TYPO
        or len(known) == len(typed) + 1
        or (len(known) == len(typed) and sorted(known) == sorted(typed))
    )
