"""Budgeted suggestions: pick precompiled snippets for a request without ever exceeding a token budget.

Run-time code, so no tokenizer: every snippet arrives with the token count the build measured, and
the label line each snippet gets is charged as a constant `overhead_tokens`, also measured at build
time (`measure_overhead(count)` with the build's counter, so build and run time agree on the
strings). Packing is greedy in rank order:

- a candidate whose snippet (plus overhead) does not fit what is left of `max_tokens` is skipped
  and listed in `omitted`, and the next one is tried: it is never truncated (truncating needs a
  tokenizer), so the sum of the stored counts always stays within the budget;
- at most `max_snippets` are returned; candidates after that are not considered (nor omitted);
- `related` candidates (e.g. `similar-to` neighbours) are tried after all ranked ones, so they only
  take budget and snippet slots the ranked candidates left;
- each key is considered once, at its first appearance; a candidate whose confidence is below the
  lowest label's threshold is not suggested at all (it is not "omitted": it did not qualify).

When nothing fits, `suggestions` is empty and `omitted` names every candidate tried, so the caller
can say "no snippet fits the budget of N tokens". `render_suggestions` turns a result into the
plain text the server returns; callers that answer with JSON use the result's fields instead.

The label line and its measurement are shared with the build (`capidx.schema.labels`); nothing
comes from the compiler (its configured labels work as they are: anything with `label` and
`min_confidence`, or a plain `(label, min_confidence)` pair).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from capidx.schema.labels import (
    BLOCK_SEPARATOR,
    DEFAULT_LABELS,
    Label,
    LabelLike,
    label_line,
    sorted_labels,
)

DEFAULT_MAX_SNIPPETS = 3
DEFAULT_MAX_TOKENS = 500
# For a build that does not state its measured `overheadTokens`: a generous upper bound of one label line
# and separator ("✓ Recommended (0.85)\n" and a blank line are 9 cl100k_base tokens).
FALLBACK_OVERHEAD_TOKENS = 12
_EPSILON = 1e-9  # 0.1 + 0.7 is still "at least 0.8"


@dataclass(frozen=True, slots=True)
class Injection:
    """A build's budget for suggestions (match.json `injection`); a None field: the default above."""

    max_tokens: int | None = None
    max_snippets: int | None = None
    labels: tuple[tuple[str, float], ...] = ()
    overhead_tokens: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> Injection | None:
        if not isinstance(data, Mapping):
            return None
        labels = tuple(
            (str(item["label"]), float(item["minConfidence"]))
            for item in data.get("labels", ())
            if isinstance(item, Mapping) and "label" in item and "minConfidence" in item
        )
        return cls(data.get("maxTokens"), data.get("maxSnippets"), labels, data.get("overheadTokens"))


@dataclass(frozen=True)
class Candidate:
    """A ranked match: `snippet` is precompiled text and `tokens` its count measured at build time."""

    key: str
    confidence: float
    snippet: str
    tokens: int


@dataclass(frozen=True)
class Suggestion:
    """One packed snippet with its label."""

    key: str
    label: str
    confidence: float
    snippet: str
    tokens: int  # the snippet's stored count, without the label overhead
    related: bool = False  # came from the `related` candidates


@dataclass(frozen=True)
class SuggestionResult:
    """What `suggest` packed, what it left out for lack of budget, and the budget it had."""

    suggestions: tuple[Suggestion, ...]
    total_tokens: int  # stored counts plus one overhead per suggestion; never above max_tokens
    omitted: tuple[str, ...]  # keys skipped because they did not fit the remaining budget
    max_tokens: int

    @property
    def nothing_fits(self) -> bool:
        """There were candidates, but not one fit the budget."""
        return not self.suggestions and bool(self.omitted)


def suggest(
    candidates: Iterable[Candidate],
    labels: Iterable[LabelLike | tuple[str, float]] = DEFAULT_LABELS,
    max_snippets: int = DEFAULT_MAX_SNIPPETS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    related: Iterable[Candidate] = (),
    overhead_tokens: int = 0,
) -> SuggestionResult:
    """Pack labelled snippets greedily, in rank order, within `max_snippets` and `max_tokens`."""
    if min(max_snippets, max_tokens, overhead_tokens) < 0:
        raise ValueError("max_snippets, max_tokens and overhead_tokens must be >= 0")
    thresholds = sorted_labels(labels)
    chosen: list[Suggestion] = []
    omitted: list[str] = []
    seen: set[str] = set()
    used = 0
    for is_related, group in ((False, candidates), (True, related)):
        for candidate in group:
            if len(chosen) >= max_snippets:
                break
            label = _label(candidate.confidence, thresholds)
            if candidate.key in seen or label is None:
                continue
            if candidate.tokens < 0:
                raise ValueError(f"negative token count for {candidate.key!r}")
            seen.add(candidate.key)
            cost = candidate.tokens + overhead_tokens
            if used + cost > max_tokens:
                omitted.append(candidate.key)
                continue
            used += cost
            chosen.append(_suggestion(candidate, label, is_related))
    return SuggestionResult(tuple(chosen), used, tuple(omitted), max_tokens)


def label_for(confidence: float, labels: Iterable[LabelLike | tuple[str, float]] = DEFAULT_LABELS) -> str | None:
    """The label of the highest threshold `confidence` reaches; None below every threshold."""
    return _label(confidence, sorted_labels(labels))


def _label(confidence: float, thresholds: tuple[Label, ...]) -> str | None:
    """`label_for` over labels already sorted by `_sorted_labels`."""
    return next((label.label for label in thresholds if confidence >= label.min_confidence - _EPSILON), None)


def render_suggestions(result: SuggestionResult, labelled: bool = True) -> str:
    """Plain text: one block per suggestion, a label line then the snippet, blocks separated by a blank line.

    `✓ Recommended (0.85)\\n<snippet>`; without `labelled`, the snippets alone (a category's members, which
    are no matches: the overhead charged for a label line is then unused). A result where nothing fit renders as
    one sentence naming the budget and the omitted keys; an empty result renders as "".
    """
    if result.nothing_fits:
        return f"no snippet fits the budget of {result.max_tokens} tokens (omitted: {', '.join(result.omitted)})"
    return BLOCK_SEPARATOR.join(  # a snippet document ends with its own line break: one blank line between blocks
        f"{label_line(suggestion.label, suggestion.confidence) if labelled else ''}"
        f"{suggestion.snippet.removesuffix(chr(10))}"
        for suggestion in result.suggestions
    )


def _suggestion(candidate: Candidate, label: str, related: bool) -> Suggestion:
    return Suggestion(candidate.key, label, candidate.confidence, candidate.snippet, candidate.tokens, related)
