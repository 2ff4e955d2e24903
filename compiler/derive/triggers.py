"""Verb forms: the curated action verbs users say to a coding agent, and the stem of each of their forms.

The resolution index (`verbs` in index/match.json) lists these stems so that the server's typo correction never
"corrects" a real verb form into an index term ("running" is not a typo of "tuning"). Verbs come from a curated
list (`ACTION_VERBS`, from the most to the least common request); the light stemmer maps "runs" and "running" to
"run" but leaves "creating" as "creat", so every verb is expanded into its inflections and a few derived nouns
(`surface_forms`) and each of their stems points back to the verb (`verb_forms()`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from capidx.schema.text import stem

# Ordered by how often users ask for them: where two verbs share a stem, the more common one keeps it.
ACTION_VERBS: tuple[str, ...] = tuple(
    """
    run test debug fix explain refactor write generate create add
    edit review search find complete suggest document commit install configure
    connect deploy build execute plan summarize rename format lint migrate
    translate undo rewind revert restore resume switch select approve restrict
    sandbox monitor trace measure automate script schedule delegate fetch browse
    push merge analyze audit benchmark profile optimize compare check validate
    verify inspect index navigate read remember retry sync update upgrade
    import export upload download clone scaffold mock track watch block
    customize integrate orchestrate ask chat compile preview reset diff scan
    delete
    """.split()
)

# Forms the suffix rules below cannot produce. "built" and "found" are left out on purpose: as
# "built-in" and "not found" they say nothing about building or finding.
_IRREGULAR_FORMS: Mapping[str, tuple[str, ...]] = {
    "complete": ("autocomplete", "autocompletion"),
    "run": ("ran",),
    "write": ("wrote", "written"),
    "undo": ("undid", "undone"),
    "rewind": ("rewound",),
    "explain": ("explanation",),
    "analyze": ("analysis", "analyse", "analysed", "analysing"),
    "compare": ("comparison",),
    "approve": ("approval",),
    "optimize": ("optimise", "optimised", "optimising", "optimisation"),
    "summarize": ("summarise", "summarised", "summarising", "summarisation"),
    "customize": ("customise", "customised", "customising", "customisation"),
}
# Forms the rules do produce but that mean something else ("Enterprise edition", "differ").
_MISLEADING_FORMS = frozenset({"audition", "chatter", "commitment", "differ", "edition", "fixation", "formation"})
_SIBILANT_ENDINGS = ("s", "sh", "ch", "x", "z", "o")


def surface_forms(verb: str) -> frozenset[str]:
    """Inflections and derived nouns of `verb`: 'create' → creates, creating, created, creation, ...

    Deliberately generous: a form that is not an English word ('testation') costs nothing,
    because it never occurs in a text.
    """
    forms = {verb, verb + "s", verb + "ing", verb + "ed", verb + "er", verb + "ion", verb + "ation", verb + "ment"}
    if verb.endswith(_SIBILANT_ENDINGS):
        forms.add(verb + "es")
    if verb.endswith("e"):
        base = verb[:-1]
        forms |= {verb + "d", verb + "r", base + "ing", base + "ion", base + "ation"}
    if verb.endswith("y") and verb[-2] not in "aeiou":
        base = verb[:-1]
        forms |= {base + "ies", base + "ied", base + "ier", base + "ication"}
    if verb[-1] not in "aeiouwxy":  # a doubled final consonant: running, planned, debugger
        forms |= {verb + verb[-1] + "ing", verb + verb[-1] + "ed", verb + verb[-1] + "er"}
    forms.update(_IRREGULAR_FORMS.get(verb, ()))
    return frozenset(forms - _MISLEADING_FORMS)


def verb_forms() -> dict[str, str]:
    """Stem of every surface form → its verb, sorted by stem (a fresh dict, ready to write to the index).

    Where two verbs would share a stem the more common verb (earlier in `ACTION_VERBS`) keeps it;
    the tests check that the curated list has no such clash.
    """
    return dict(_verb_by_stem())


@cache
def _verb_by_stem() -> Mapping[str, str]:
    table: dict[str, str] = {}
    for verb in ACTION_VERBS:
        for form in sorted(surface_forms(verb)):
            table.setdefault(stem(form), verb)
    return MappingProxyType(dict(sorted(table.items())))
