"""What each agent's file lists (platforms and their features as `integrations`, models as `models`), parsed once.

Why: a capability query may name a platform, a platform's feature or a model ('JetBrains', 'cloud agent sessions',
'GPT-5') that no capability is about, while an
agent's file lists it; the notes that say so (server/records.py `listed`) read these tables, made when a build is
loaded so that a call looks up only the names that share a word with the query, however many a file lists.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from capidx.schema.lexicon import abbreviations
from capidx.schema.text import terms
from capidx.server.query import LONGEST_EXPANSION

# A listed or agent name of more words is no name a query holds whole (`longer`): a query's spans are looked up up to
# this length, so a build's longest name does not set the work per call.
LONGEST_NAME_WORDS = 8

# (kind, name as listed, its flag or None, the name's terms, the platform of an integration's feature or None)
Listed = tuple[str, str, bool | None, tuple[str, ...], str | None]
FEATURES = "integration features"  # the kind of a feature an integration lists ('cloud agent sessions' of GitHub)


def shortened(words: Iterable[str]) -> tuple[str, ...]:
    """`terms()` with each run an abbreviation stands for made that abbreviation ('pull request review' -> 'pr
    review'), for a listed name and a query alike: 'PR reviews' listed answers 'review pull requests' and back."""
    found, left = [], list(words)
    while left:
        size = next((n for n in range(min(LONGEST_EXPANSION, len(left)), 1, -1) if abbreviations(tuple(left[:n]))), 1)
        found.append(abbreviations(tuple(left[:size]))[0] if size > 1 else left[0])
        left = left[size:]
    return tuple(found)


@dataclass(frozen=True)
class Listings:
    by_agent: Mapping[str, tuple[Listed, ...]]  # id -> its platforms and models, in the file's order
    # id -> a word -> the positions in `by_agent` of the names that have it: a query is held up only to the names
    # that share a word with it (a file may list thousands)
    words: Mapping[str, Mapping[str, tuple[int, ...]]]
    # the terms of every listed name and agent name of several words ('github actions', 'github copilot'): a listed
    # name ('GitHub') standing in a query only within a longer one is not what the query names
    longer: frozenset[tuple[str, ...]]
    holders: Mapping[str, frozenset[str]]  # a word -> the agents whose lists have it: who else lists what is asked

    @classmethod
    def from_json(cls, agents: Iterable[Mapping[str, Any]], agent_names: Iterable[str]) -> Listings:
        """From match.json's agents rows (older builds: no lists) and the agents' normalized spellings."""
        by_agent = {row["id"]: _listed(row) for row in agents}
        # a platform's or model's name (a feature hides no other agent's platform: 'vs code extension')
        listed_words = (words for lists in by_agent.values() for _, _, _, words, platform in lists if platform is None)
        longer = frozenset(
            words
            for words in itertools.chain(listed_words, (shortened(terms(name)) for name in agent_names))
            if 1 < len(words) <= LONGEST_NAME_WORDS
        )
        words = {who: _by_word(lists) for who, lists in by_agent.items()}
        holders: dict[str, set[str]] = {}
        for who, by_word in words.items():
            for word in by_word:
                holders.setdefault(word, set()).add(who)
        frozen = MappingProxyType({word: frozenset(agents) for word, agents in holders.items()})
        return cls(MappingProxyType(by_agent), MappingProxyType(words), longer, frozen)


def _listed(row: Mapping[str, Any]) -> tuple[Listed, ...]:
    """An agents row's platforms, their features and models, each named, with its flag when a boolean."""
    found: list[Listed] = []
    for kind, flag in (("integrations", "supported"), ("models", "available")):
        for item in row.get(kind, ()) if isinstance(row.get(kind), list) else ():
            if isinstance(item, dict) and isinstance(name := item.get("name"), str) and name.strip():
                said = item.get(flag) if isinstance(item.get(flag), bool) else None
                found.append((kind, name, said, shortened(terms(name)), None))
                features = item.get("features") if kind == "integrations" else None
                for feature in features if isinstance(features, list) else ():
                    if isinstance(feature, str) and feature.strip():
                        found.append((FEATURES, feature, said, shortened(terms(feature)), name))
    return tuple(found)


def _by_word(lists: Iterable[Listed]) -> Mapping[str, tuple[int, ...]]:
    """A word -> the positions of the listed names that have it, each once."""
    found: dict[str, dict[int, None]] = {}
    for at, (_, _, _, words, _) in enumerate(lists):
        for word in words:
            found.setdefault(word, {})[at] = None
    return MappingProxyType({word: tuple(positions) for word, positions in found.items()})
