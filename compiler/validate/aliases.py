"""Alias phrases the index cannot keep. The build keys every alias by its normalized phrase
(`capidx.schema.text.normalize`, as `derive/match.py` does) and gives one phrase one capability: names and slugs
first (the server tries them before any alias), then the alias table, then capabilities' own aliases, the first
capability by slug winning. An alias that loses there is dropped without a word, so these rules say so.
"""

from __future__ import annotations

from typing import Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate.load import SourceFile
from capidx.compiler.validate.textrules import quote
from capidx.schema.lexicon import identifiers
from capidx.schema.text import normalize


def check_table_keys(source: SourceFile) -> list[Diagnostic]:
    """Two keys of the alias table that normalize to one phrase ('ghost text', 'ghost  text', 'ghost-text'): the
    index holds one phrase once, so one of them is never used. An error at the later key, naming the earlier."""
    phrases = source.data.get("aliases") if isinstance(source.data, dict) else None
    if not isinstance(phrases, dict):
        return []
    first: dict[str, str] = {}
    problems = []
    for phrase, target in phrases.items():
        key = normalize(phrase)
        if not key:
            continue
        if key not in first:
            first[key] = phrase
            continue
        earlier = first[key]
        if _still_used(phrases.get(earlier), target, earlier, phrase):
            continue
        line = source.source_map.locate(("aliases", earlier), key=True)
        where = f"{quote(earlier)}" + (f" (line {line[0]})" if line else "")
        message = f"alias {quote(phrase)} is the same phrase as {where} once case, spacing and punctuation are ignored"
        problems.append(
            source.diagnostic(
                ("aliases", phrase),
                "error",
                message,
                _same_phrase_hint(earlier, phrases.get(earlier), target),
                "alias-same-phrase",
                key=True,
            )
        )
    return problems


def _still_used(earlier_target: Any, target: Any, earlier: str, phrase: str) -> bool:
    """A second spelling of a phrase that leads to the same capability and holds an identifier the first does not
    ('claude.md' after 'claude md'): the index keeps its identifier (`capidx.schema.lexicon.identifiers`)."""
    same = isinstance(target, str) and isinstance(earlier_target, str)
    same = same and normalize(target) == normalize(earlier_target)
    return same and not set(identifiers(phrase)) <= set(identifiers(earlier))


def _same_phrase_hint(earlier: str, earlier_target: Any, target: Any) -> str:
    if isinstance(target, str) and isinstance(earlier_target, str) and normalize(target) == normalize(earlier_target):
        return f"remove this key: the server reads it as {quote(earlier)}, which already leads to {quote(target)}"
    never = "one phrase leads to one capability, so one of the two would never be used"
    return f"{never}: remove this key or {quote(earlier)}"
