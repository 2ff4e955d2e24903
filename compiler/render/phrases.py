"""The `phrases` filter: list items joined into one line of prose without doubled punctuation.

Catalog lists (limitations, requirements, gotchas, aliases, triggers) hold short phrases or whole sentences.
Joined with "; " alone, sentences read `...before adding it.; Exit code 2 ...` in every artifact a model
reads. Here an item that already ends a sentence is followed by a space, any other by "; ".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_ENDS_SENTENCE = (".", "!", "?", ";", "…")


def join_phrases(items: Iterable[Any]) -> str:
    """The items in order, each followed by "; " unless it ends with sentence punctuation (then " ")."""
    parts: list[str] = []
    for item in items:
        text = str(item).rstrip()
        if parts:
            parts.append(" " if parts[-1].endswith(_ENDS_SENTENCE) else "; ")
        parts.append(text)
    return "".join(parts)
