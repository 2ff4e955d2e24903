"""`similar-to` edges: hand-computed Jaccard scores, limits, determinism and the common-term cap."""

from __future__ import annotations

import random

import pytest

from capidx.compiler.derive.relations import (
    COMMON_TERM_FLOOR,
    KeywordSource,
    SimilarEdge,
    common_term_cap,
    exact_similar_edges,
    keyword_set,
    keyword_sets,
    similar_edges,
    similar_to,
)


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def random_sets(n: int, seed: int, vocabulary: int = 60) -> dict[str, frozenset[str]]:
    rng = random.Random(seed)
    pool = [f"t{index}" for index in range(vocabulary)]
    return {f"cap-{index:03d}": frozenset(rng.sample(pool, rng.randint(0, 12))) for index in range(n)}


def as_pairs(edges: dict[str, tuple[SimilarEdge, ...]]) -> dict[tuple[str, str], float]:
    return {(key, edge.target): edge.score for key, found in edges.items() for edge in found}


# --- keyword sets ---------------------------------------------------------------------------------


def test_keyword_set_uses_every_field_through_terms() -> None:
    source = KeywordSource(
        key="mcp-servers",
        name="MCP Servers",
        terminology=("Extensions",),
        description="Connect the agent to external tools",
        aliases=("Model Context Protocol",),
        triggers=("connecting",),
    )
    assert keyword_set(source) == {
        "mcp", "server", "extension", "connect", "agent", "external", "tool", "model", "context", "protocol"
    }  # fmt: skip


def test_negations_and_vs_relate_nothing() -> None:
    """'not', 'no' and 'vs' stay words for name resolution ('non-interactive'), but two descriptions that both say
    "does not" are not related by it: they are left out of keyword sets, and so out of `shared`."""
    sources = [
        KeywordSource("a", "Inline Chat", description="Not available in the terminal; no editor vs CLI mode"),
        KeywordSource("b", "Web Fetch", description="Does not follow redirects; no cookies vs sessions"),
    ]
    assert keyword_set(sources[0]) == {"inline", "chat", "available", "terminal", "editor", "cli", "mode"}
    assert set(keyword_sets(sources)["b"]).isdisjoint({"not", "no", "vs"})


def test_sources_sharing_a_key_are_merged_and_sorted() -> None:
    sets = keyword_sets(
        [
            KeywordSource("b", "Beta", description="alpha"),
            KeywordSource("a", "Plugins"),
            KeywordSource("a", "Extensions"),
        ]
    )
    assert list(sets) == ["a", "b"]
    assert sets["a"] == {"plugin", "extension"}


# --- hand-computed scores -------------------------------------------------------------------------

HAND = {
    "a": words("x y z w"),
    "b": words("x y z v"),
    "c": words("x q r s t u"),
}


def test_jaccard_scores_match_hand_computation() -> None:
    # |a ∩ b| = 3, |a ∪ b| = 5 → 0.6; |a ∩ c| = |b ∩ c| = 1, union 9 → 0.111 (below 0.15).
    assert similar_edges(HAND) == {
        "a": (SimilarEdge("b", 0.6, ("x", "y", "z")),),
        "b": (SimilarEdge("a", 0.6, ("x", "y", "z")),),
        "c": (),
    }


def test_lower_threshold_orders_by_score_then_target() -> None:
    edges = similar_edges(HAND, threshold=0.1)
    assert edges["a"] == (SimilarEdge("b", 0.6, ("x", "y", "z")), SimilarEdge("c", 0.111, ("x",)))
    assert edges["c"] == (SimilarEdge("a", 0.111, ("x",)), SimilarEdge("b", 0.111, ("x",)))


def test_a_score_exactly_at_the_threshold_is_kept() -> None:
    # 3 shared terms of a union of 20 is exactly 0.15.
    sets = {"a": words("s1 s2 s3 a1 a2 a3 a4 a5 a6 a7"), "b": words("s1 s2 s3 b1 b2 b3 b4 b5 b6 b7")}
    sets["b"] |= words("b8 b9 b10")
    assert similar_edges(sets, threshold=0.15)["a"] == (SimilarEdge("b", 0.15, ("s1", "s2", "s3")),)
    assert similar_edges(sets, threshold=0.151)["a"] == ()


def test_the_threshold_comparison_survives_binary_floating_point() -> None:
    # 7 shared of a union of 100 is 0.07, but 0.07 * 100 == 7.000000000000001 in floating point.
    shared = {f"s{index}" for index in range(7)}
    sets = {
        "a": frozenset(shared | {f"a{index}" for index in range(46)}),
        "b": frozenset(shared | {f"b{index}" for index in range(47)}),
    }
    assert [edge.score for edge in similar_edges(sets, threshold=0.07)["a"]] == [0.07]
    assert [edge.score for edge in exact_similar_edges(sets, threshold=0.07)["a"]] == [0.07]


def test_max_similar_keeps_the_best() -> None:
    hub = words("h1 h2 h3 h4 h5 h6")
    sets = {"hub": hub}
    for count in range(1, 7):  # spoke-k shares k of the hub's terms
        sets[f"spoke-{count}"] = frozenset(sorted(hub)[:count]) | {f"own-{count}"}
    edges = similar_edges(sets, max_similar=2)
    assert [edge.target for edge in edges["hub"]] == ["spoke-6", "spoke-5"]
    assert all(len(found) <= 2 for found in edges.values())
    assert similar_edges(sets, max_similar=0) == {key: () for key in sorted(sets)}


def test_similar_to_goes_from_text_to_edges() -> None:
    sources = [
        KeywordSource("checkpoints", "Checkpoints", description="Rewind file edits to an earlier checkpoint"),
        KeywordSource("undo", "Undo edits", description="Rewind the last file edits"),
        KeywordSource("web-search", "Web search", description="Search the web"),
    ]
    edges = similar_to(sources)
    assert [edge.target for edge in edges["checkpoints"]] == ["undo"]
    assert edges["undo"][0].shared == ("edit", "file", "rewind")
    assert edges["web-search"] == ()


# --- properties -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_matches_the_exact_all_pairs_result_on_small_catalogs(seed: int) -> None:
    sets = random_sets(45, seed)  # below the floor of the cap: no term is too common
    assert similar_edges(sets) == exact_similar_edges(sets)
    assert similar_edges(sets, threshold=0.4, max_similar=2) == exact_similar_edges(sets, 0.4, 2)


def test_matches_the_exact_result_when_every_term_may_propose() -> None:
    sets = random_sets(200, seed=11, vocabulary=40)
    assert similar_edges(sets, threshold=0.2, max_df=len(sets)) == exact_similar_edges(sets, threshold=0.2)


def test_independent_of_input_order() -> None:
    sets = random_sets(120, seed=3)
    expected = similar_edges(sets)
    items = list(sets.items())
    for seed in range(3):
        random.Random(seed).shuffle(items)
        assert similar_edges(dict(items)) == expected

    sources = [KeywordSource(key, key, description=" ".join(sorted(terms))) for key, terms in items]
    expected_from_text = similar_to(sources)
    random.Random(9).shuffle(sources)
    assert similar_to(sources) == expected_from_text


def test_scores_are_symmetric_and_never_self_edges() -> None:
    sets = random_sets(80, seed=5)
    pairs = as_pairs(similar_edges(sets, threshold=0.1, max_similar=len(sets)))
    assert pairs
    for (source, target), score in pairs.items():
        assert source != target
        assert pairs[(target, source)] == score


def test_identical_capabilities_score_one() -> None:
    sets = {"a": words("x y"), "b": words("x y")}
    assert similar_edges(sets)["a"] == (SimilarEdge("b", 1.0, ("x", "y")),)


# --- the common-term cap --------------------------------------------------------------------------


def test_common_terms_do_not_propose_but_still_count() -> None:
    sets = {f"filler-{index:02d}": words(f"common u{index} v{index}") for index in range(COMMON_TERM_FLOOR + 10)}
    sets["r"] = words("common rare r1")
    sets["s"] = words("common rare s1")
    edges = similar_edges(sets, max_df=COMMON_TERM_FLOOR)
    # Found through "rare"; "common" still counts: 2 shared of a union of 4.
    assert edges["r"] == (SimilarEdge("s", 0.5, ("common", "rare")),)
    # Fillers share only "common" (1/5 = 0.2 >= 0.15): the exact method links them, the index does not.
    assert edges["filler-00"] == ()
    assert exact_similar_edges(sets)["filler-00"]


def test_cap_admits_every_term_of_a_small_catalog() -> None:
    assert common_term_cap([3, 40, 2], n=45) == COMMON_TERM_FLOOR
    assert common_term_cap([90, 120], n=200) == 120  # 4,005 + 7,140 pairs fit 500 per capability


def test_cap_stops_at_the_work_budget_but_never_below_the_floor() -> None:
    # 60·59/2 = 1,770 pairs fit a budget of 2·1,000; 80·79/2 more do not.
    assert common_term_cap([80, 60, 5], n=1_000, work_per_capability=2) == 60
    assert common_term_cap([900], n=1_000, work_per_capability=1) == COMMON_TERM_FLOOR


# --- edge cases -----------------------------------------------------------------------------------


def test_empty_catalog() -> None:
    assert similar_edges({}) == {}
    assert similar_to([]) == {}


def test_single_capability() -> None:
    assert similar_to([KeywordSource("only", "Only one")]) == {"only": ()}


def test_capability_without_terms_gets_no_edges() -> None:
    sources = [
        KeywordSource("blank", "the of and", description="it is"),
        KeywordSource("a", "Plan mode"),
        KeywordSource("b", "Plan review"),
    ]
    edges = similar_to(sources)
    assert edges["blank"] == ()
    assert [edge.target for edge in edges["a"]] == ["b"]


def test_duplicate_sources_are_one_capability() -> None:
    source = KeywordSource("dup", "Plan mode")
    edges = similar_to([source, source, KeywordSource("other", "Plan mode")])
    assert edges == {
        "dup": (SimilarEdge("other", 1.0, ("mode", "plan")),),
        "other": (SimilarEdge("dup", 1.0, ("mode", "plan")),),
    }


@pytest.mark.parametrize(("threshold", "max_similar"), [(0, 5), (-0.1, 5), (1.5, 5), (0.2, -1)])
def test_invalid_limits_are_rejected(threshold: float, max_similar: int) -> None:
    with pytest.raises(ValueError):
        similar_edges(HAND, threshold, max_similar)
