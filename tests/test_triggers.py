"""Action triggers: curated verbs found in names, descriptions and explicit phrases."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from capidx.compiler.derive.triggers import (
    ACTION_VERBS,
    TriggerSource,
    action_triggers,
    surface_forms,
    trigger_phrases,
    verb_forms,
    verbs_in,
)
from capidx.schema.text import STOP_WORDS, stem, terms

CATALOG = (
    TriggerSource("checkpoints", "Checkpoints", "Rewind file edits to an earlier state", ("undo my changes",)),
    TriggerSource("debugging-tools", "Debugging tools", "Set breakpoints and inspect variables in a debugger"),
    TriggerSource("test-generation", "Test generation", "Writes unit tests for the selected code"),
    TriggerSource("web-search", "Web search", "Looks things up online", ("google it", "search the web")),
)


# --- the curated list -----------------------------------------------------------------------------


def test_the_list_is_curated_and_survives_terms() -> None:
    assert 80 <= len(ACTION_VERBS) == len(set(ACTION_VERBS))
    assert not [verb for verb in ACTION_VERBS if verb in STOP_WORDS]  # terms() would drop them
    assert [verb for verb in ACTION_VERBS if verb != verb.lower() or not verb.isalpha()] == []


def test_no_two_verbs_share_a_stem() -> None:
    owners: defaultdict[str, set[str]] = defaultdict(set)
    for verb in ACTION_VERBS:
        for form in surface_forms(verb):
            owners[stem(form)].add(verb)
    assert {key: verbs for key, verbs in owners.items() if len(verbs) > 1} == {}


def test_every_verb_maps_to_itself() -> None:
    forms = verb_forms()
    assert all(forms[stem(verb)] == verb for verb in ACTION_VERBS)
    assert list(forms) == sorted(forms)


@pytest.mark.parametrize(
    ("word", "verb"),
    [
        ("runs", "run"),
        ("running", "run"),
        ("ran", "run"),
        ("creating", "create"),
        ("created", "create"),
        ("creation", "create"),
        ("fixes", "fix"),
        ("added", "add"),
        ("debugger", "debug"),
        ("debugging", "debug"),
        ("completions", "complete"),
        ("autocomplete", "complete"),
        ("deployment", "deploy"),
        ("configuration", "configure"),
        ("summarised", "summarize"),
        ("verified", "verify"),
        ("rewound", "rewind"),
        ("planner", "plan"),
    ],
)
def test_inflections_and_derived_nouns_map_to_the_verb(word: str, verb: str) -> None:
    assert verbs_in(word) == (verb,)
    assert verb_forms()[terms(word)[0]] == verb  # what the server can do with stem() and the table


@pytest.mark.parametrize("text", ["built-in tools", "file not found", "Enterprise edition", "results differ"])
def test_misleading_words_are_not_verbs(text: str) -> None:
    assert verbs_in(text) == ()


def test_verbs_in_keeps_first_appearance_order_once() -> None:
    assert verbs_in("Run tests, then fix the failing tests and run them again") == ("run", "test", "fix")


# --- the verb map ---------------------------------------------------------------------------------


def test_action_triggers_from_names_descriptions_and_phrases() -> None:
    triggers = action_triggers(CATALOG)
    assert triggers["rewind"] == ("checkpoints",)  # description
    assert triggers["edit"] == ("checkpoints",)
    assert triggers["undo"] == ("checkpoints",)  # explicit phrase "undo my changes"
    assert triggers["debug"] == ("debugging-tools",)  # name "Debugging", description "debugger"
    assert triggers["inspect"] == ("debugging-tools",)
    assert triggers["test"] == ("test-generation",)
    assert triggers["generate"] == ("test-generation",)  # "generation" in the name
    assert triggers["write"] == ("test-generation",)
    assert triggers["select"] == ("test-generation",)
    assert triggers["search"] == ("web-search",)  # name and phrase
    assert "google" not in triggers  # not a curated verb: only in the phrase map
    assert list(triggers) == sorted(triggers)


def test_a_verb_lists_every_capability_sorted_and_once() -> None:
    items = [
        TriggerSource("b", "Run in a sandbox", triggers=("run it",)),
        TriggerSource("a", "Runner", "Runs commands"),
        TriggerSource("a", "Run", "another agent's wording of the same capability"),
    ]
    assert action_triggers(items)["run"] == ("a", "b")


def test_independent_of_input_order() -> None:
    items = list(CATALOG)
    expected = (action_triggers(items), trigger_phrases(items))
    random.Random(4).shuffle(items)
    assert (action_triggers(items), trigger_phrases(items)) == expected


def test_trigger_phrases_are_normalized_and_kept_whole() -> None:
    items = [*CATALOG, TriggerSource("web-fetch", "Web fetch", triggers=("Search the Web!", "  "))]
    assert trigger_phrases(items) == {
        "google it": ("web-search",),
        "search the web": ("web-fetch", "web-search"),
        "undo my changes": ("checkpoints",),
    }


def test_empty_input() -> None:
    assert action_triggers([]) == {}
    assert trigger_phrases([]) == {}
    assert action_triggers([TriggerSource("x", "The", "of and")]) == {}
