"""Budgeted suggestions: labels at thresholds, greedy packing, skipped oversized snippets, related items."""

from __future__ import annotations

import pytest

from capidx.compiler.config import DEFAULT_LABELS as CONFIG_LABELS
from capidx.compiler.config import InjectionLabel
from capidx.schema.labels import measure_overhead
from capidx.server.suggest import (
    BLOCK_SEPARATOR,
    DEFAULT_LABELS,
    Candidate,
    Label,
    Suggestion,
    SuggestionResult,
    label_for,
    render_suggestions,
    suggest,
)


def candidate(key: str, tokens: int, confidence: float = 0.9) -> Candidate:
    return Candidate(key, confidence, f"snippet of {key}", tokens)


def keys(result: SuggestionResult) -> list[str]:
    return [suggestion.key for suggestion in result.suggestions]


# --- labels ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("confidence", "label"),
    [
        (1.0, "✓ Recommended"),
        (0.8, "✓ Recommended"),
        (0.1 + 0.7, "✓ Recommended"),  # 0.7999999999999999 in floating point
        (0.79, "○ Consider"),
        (0.5, "○ Consider"),
        (0.4999, "△ Possible"),
        (0.0, "△ Possible"),
    ],
)
def test_labels_at_and_around_the_thresholds(confidence: float, label: str) -> None:
    assert label_for(confidence) == label
    assert suggest([Candidate("k", confidence, "s", 1)]).suggestions[0].label == label


def test_labels_may_come_in_any_order_and_any_shape() -> None:
    pairs = [("low", 0.2), ("high", 0.9)]
    assert label_for(0.95, pairs) == "high"
    assert label_for(0.5, pairs) == "low"
    assert label_for(0.5, [Label("x", 0.5)]) == "x"
    assert label_for(0.85, CONFIG_LABELS) == "✓ Recommended"  # the compiler's InjectionLabel works as is
    assert [label.label for label in CONFIG_LABELS] == [label.label for label in DEFAULT_LABELS]


def test_below_every_threshold_is_not_suggested_nor_omitted() -> None:
    labels = [InjectionLabel("sure", 0.6)]
    result = suggest([candidate("weak", 5, 0.3), candidate("strong", 5, 0.7)], labels)
    assert keys(result) == ["strong"]
    assert result.omitted == ()


# --- packing --------------------------------------------------------------------------------------


def test_packs_in_rank_order_not_by_confidence() -> None:
    result = suggest([candidate("first", 10, 0.5), candidate("second", 10, 0.95)])
    assert keys(result) == ["first", "second"]
    assert [s.label for s in result.suggestions] == ["○ Consider", "✓ Recommended"]


def test_max_snippets_caps_the_count_and_later_candidates_are_not_omitted() -> None:
    result = suggest([candidate(f"k{index}", 10) for index in range(5)], max_snippets=2)
    assert keys(result) == ["k0", "k1"]
    assert result.total_tokens == 20
    assert result.omitted == ()


def test_a_budget_filled_exactly_is_allowed() -> None:
    result = suggest([candidate("a", 200), candidate("b", 300), candidate("c", 1)], max_tokens=500)
    assert keys(result) == ["a", "b"]
    assert result.total_tokens == 500
    assert result.omitted == ("c",)


def test_an_oversized_snippet_is_skipped_not_truncated_and_the_next_tried() -> None:
    result = suggest([candidate("huge", 900), candidate("small", 100), candidate("medium", 350)], max_tokens=500)
    assert keys(result) == ["small", "medium"]
    assert result.suggestions[0] == Suggestion("small", "✓ Recommended", 0.9, "snippet of small", 100)
    assert result.omitted == ("huge",)
    assert result.total_tokens == 450


def test_overhead_is_charged_per_snippet() -> None:
    many = [candidate("a", 100), candidate("b", 100), candidate("c", 100)]
    assert keys(suggest(many, max_tokens=300)) == ["a", "b", "c"]
    result = suggest(many, max_tokens=300, overhead_tokens=10)
    assert keys(result) == ["a", "b"]
    assert result.total_tokens == 220
    assert result.omitted == ("c",)


def test_budget_smaller_than_any_snippet() -> None:
    result = suggest([candidate("a", 120), candidate("b", 80)], max_tokens=50)
    assert result.suggestions == ()
    assert result.omitted == ("a", "b")
    assert result.total_tokens == 0
    assert result.nothing_fits
    assert render_suggestions(result) == "no snippet fits the budget of 50 tokens (omitted: a, b)"


def test_zero_budget_or_zero_snippets() -> None:
    assert suggest([candidate("a", 1)], max_tokens=0).omitted == ("a",)
    empty = suggest([candidate("a", 1)], max_snippets=0)
    assert empty.suggestions == () and empty.omitted == () and not empty.nothing_fits


def test_no_candidates() -> None:
    result = suggest([])
    assert result == SuggestionResult((), 0, (), 500)
    assert not result.nothing_fits
    assert render_suggestions(result) == ""


def test_a_key_is_considered_once() -> None:
    result = suggest([candidate("a", 10), candidate("a", 10), candidate("b", 10)])
    assert keys(result) == ["a", "b"]


def test_deterministic() -> None:
    inputs = [candidate(f"k{index}", 37 * index % 200, index / 10) for index in range(10)]
    assert suggest(inputs, max_tokens=300) == suggest(list(inputs), max_tokens=300)


# --- related --------------------------------------------------------------------------------------


def test_related_fill_the_room_the_ranked_candidates_leave() -> None:
    result = suggest(
        [candidate("main", 300)],
        related=[candidate("too-big", 250, 0.4), candidate("fits", 150, 0.4), candidate("main", 10)],
        max_tokens=500,
    )
    assert keys(result) == ["main", "fits"]
    assert [s.related for s in result.suggestions] == [False, True]
    assert result.suggestions[1].label == "△ Possible"
    assert result.omitted == ("too-big",)
    assert result.total_tokens == 450


def test_related_are_not_added_when_the_ranked_ones_use_every_slot() -> None:
    ranked = [candidate("a", 10), candidate("b", 10), candidate("c", 10)]
    result = suggest(ranked, related=[candidate("r", 10)], max_snippets=3)
    assert keys(result) == ["a", "b", "c"]


def test_related_are_not_added_when_no_budget_remains() -> None:
    result = suggest([candidate("a", 250), candidate("b", 250)], related=[candidate("r", 1)], max_tokens=500)
    assert keys(result) == ["a", "b"]
    assert result.omitted == ("r",)


# --- rendering and overhead -----------------------------------------------------------------------


def test_render_writes_a_label_line_then_the_snippet() -> None:
    result = suggest([Candidate("a", 0.85, "Use checkpoints.", 4), Candidate("b", 0.5, "Or undo.", 3)])
    assert render_suggestions(result) == (
        "✓ Recommended (0.85)\nUse checkpoints." + BLOCK_SEPARATOR + "○ Consider (0.50)\nOr undo."
    )


def test_render_without_labels_writes_the_snippets_alone() -> None:
    """A category's members are no matches: no label line, within the budget charged for one."""
    result = suggest([Candidate("a", 0.25, "Use checkpoints.", 4), Candidate("b", 0.25, "Or undo.", 3)])
    assert render_suggestions(result, labelled=False) == "Use checkpoints." + BLOCK_SEPARATOR + "Or undo."


def test_measure_overhead_takes_the_largest_label_line_and_a_separator() -> None:
    # With characters as the "tokens": "✓ Recommended (0.00)\n" is 21 characters, the separator 2.
    assert measure_overhead(len) == 21 + 2
    assert measure_overhead(len, [("x", 0.0)]) == len("x (0.00)\n") + 2
    seen: list[str] = []
    measure_overhead(lambda text: seen.append(text) or 0)
    assert "△ Possible (1.00)\n" in seen and "○ Consider (0.37)\n" in seen and BLOCK_SEPARATOR in seen


@pytest.mark.parametrize(("field", "value"), [("max_tokens", -1), ("max_snippets", -1), ("overhead_tokens", -1)])
def test_negative_limits_are_rejected(field: str, value: int) -> None:
    with pytest.raises(ValueError):
        suggest([], **{field: value})


def test_negative_token_counts_are_rejected() -> None:
    with pytest.raises(ValueError, match="'a'"):
        suggest([candidate("a", -1)])
