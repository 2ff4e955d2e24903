"""Term entropy of descriptions: over the distribution of terms, not the set of distinct terms."""

from __future__ import annotations

import math

import pytest

from capidx.compiler.derive.semantics import (
    SemanticStats,
    description_stats,
    low_information,
    term_entropy,
)


def test_four_distinct_equal_terms_carry_two_bits() -> None:
    assert term_entropy(["a", "b", "c", "d"]) == pytest.approx(2.0)
    assert description_stats("plan review test debug") == SemanticStats(2.0, 4, 4)


def test_entropy_is_over_the_distribution_not_the_set() -> None:
    # [x, x, x, y]: p = 3/4, 1/4 → 0.811 bits. Over the set {x, y} it would be log2(2) = 1.
    assert term_entropy(["x", "x", "x", "y"]) == pytest.approx(0.8113, abs=1e-4)
    stats = description_stats("rewind rewind rewind edits")
    assert stats == SemanticStats(0.811, 2, 4)
    assert stats.entropy != math.log2(stats.unique_terms)


def test_a_repeated_term_lowers_entropy_against_distinct_terms() -> None:
    repeated = description_stats("search search files code")
    distinct = description_stats("search web files code")
    assert repeated.total_terms == distinct.total_terms == 4
    assert repeated.entropy == 1.5
    assert distinct.entropy == 2.0


def test_stop_words_and_inflections_are_not_terms() -> None:
    # "the", "for", "and" are stop words; "tests"/"testing" both stem to "test": [run, test, test, lint]
    # has p = 1/4, 1/2, 1/4 → 1.5 bits.
    assert description_stats("Run the tests for testing and lint") == SemanticStats(1.5, 3, 4)


def test_empty_text_carries_nothing() -> None:
    assert description_stats("") == SemanticStats(0.0, 0, 0)
    assert description_stats("the of and") == SemanticStats(0.0, 0, 0)
    assert description_stats("test") == SemanticStats(0.0, 1, 1)


def test_low_information_against_threshold() -> None:
    weak = description_stats("plan plan mode")
    rich = description_stats("Draft a step-by-step plan, review it with the user, then execute the edits in order")
    assert low_information(weak, 2.5)
    assert not low_information(rich, 2.5)
    assert not low_information(SemanticStats(2.5, 6, 6), 2.5)  # at the threshold is enough
