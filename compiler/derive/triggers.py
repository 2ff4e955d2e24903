"""Action triggers: the verbs users say to a coding agent, mapped to the capabilities they call for.

A user asks to "debug", "run the tests" or "rewind"; the resolution index (`actionTriggers` in
index/match.json) maps the verb to the capabilities it calls for. Verbs come from a curated list
(`ACTION_VERBS`, ordered from the most to the least common request), matched against the terms
(`server.text.terms`: stop words removed, light stemming) of each capability's name, description and
explicit `triggers`.

The light stemmer maps "runs" and "running" to "run" but leaves "creating" as "creat" and
"completion" as "completion", so every verb is expanded into its inflections and a few derived
nouns ("creating", "debugger", "completion", "deployment") and each of their stems points back to
the verb (`verb_forms()`). The build can write that table next to the trigger map so the server
resolves a user's word with `stem()` and one lookup, without knowing any English.

Explicit trigger phrases are also kept whole, normalized, in a separate phrase → keys map
(`trigger_phrases`): the verb map stays verb-keyed and small.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from capidx.schema.text import normalize, stem, terms

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


@dataclass(frozen=True)
class TriggerSource:
    """The text of one capability that triggers are found in. `key` is its slug."""

    key: str
    name: str
    description: str = ""
    triggers: tuple[str, ...] = ()


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


def verbs_in(text: str, terms_of: Callable[[str], Iterable[str]] = terms) -> tuple[str, ...]:
    """Curated verbs found in `text`, each once, in order of first appearance.

    `terms_of` is `terms` or a memo of it (the build analyses each distinct text once).
    """
    forms = _verb_by_stem()
    found = (forms.get(term) for term in terms_of(text))
    return tuple(dict.fromkeys(verb for verb in found if verb is not None))


def action_triggers(
    items: Iterable[TriggerSource], terms_of: Callable[[str], Iterable[str]] = terms
) -> dict[str, tuple[str, ...]]:
    """Verb → sorted capability keys, from names, descriptions and explicit trigger phrases.

    Sorted by verb. Every curated verb found counts, wherever it occurs in a phrase ("write
    tests" → write, test); words outside the curated list are kept only in `trigger_phrases`.
    The verbs of each distinct text are found once (agents repeat a capability's name and trigger
    phrases); `terms_of` as for `verbs_in`.
    """
    everywhere: defaultdict[str, set[str]] = defaultdict(set)
    found: dict[str, tuple[str, ...]] = {}

    def verbs(text: str) -> tuple[str, ...]:
        known = found.get(text)
        if known is None:
            known = found[text] = verbs_in(text, terms_of)
        return known

    for item in items:
        for text in (item.name, *item.triggers, item.description):
            for verb in verbs(text):
                everywhere[verb].add(item.key)
    return _by_verb(everywhere)


def _by_verb(keys_by_verb: Mapping[str, set[str]]) -> dict[str, tuple[str, ...]]:
    return {verb: tuple(sorted(keys_by_verb[verb])) for verb in sorted(keys_by_verb)}


def trigger_phrases(items: Iterable[TriggerSource]) -> dict[str, tuple[str, ...]]:
    """Normalized explicit trigger phrase → sorted capability keys, sorted by phrase."""
    keys_by_phrase: defaultdict[str, set[str]] = defaultdict(set)
    for item in items:
        for phrase in item.triggers:
            if key := normalize(phrase):
                keys_by_phrase[key].add(item.key)
    return {phrase: tuple(sorted(keys_by_phrase[phrase])) for phrase in sorted(keys_by_phrase)}
