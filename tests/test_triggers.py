"""Verb forms: curated verbs and the stems of their forms, which the server's typo correction leaves alone."""

from __future__ import annotations

from collections import defaultdict

import pytest

from capidx.compiler.derive.triggers import ACTION_VERBS, surface_forms, verb_forms
from capidx.schema.text import STOP_WORDS, stem, terms


def verbs_of(text: str) -> list[str]:
    """The curated verbs among a text's terms, as the server finds them with stem() and the table."""
    forms = verb_forms()
    return [forms[term] for term in terms(text) if term in forms]


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
    assert verbs_of(word) == [verb]


@pytest.mark.parametrize("text", ["built-in tools", "file not found", "Enterprise edition", "results differ"])
def test_misleading_words_are_not_verbs(text: str) -> None:
    assert verbs_of(text) == []
