"""Rules across agents: the build makes one capability of every record whose name gives one slug, with one name
and one category (`capidx.compiler.catalog`), so those records should agree.

- `name-slug-collision` (error): names that give one slug but differ in what the slug drops ('C++ Support' /
  'C# Support'): two capabilities the build would merge into one;
- `name-spelling` (warning): one capability spelled two ways ('MCP Servers' / 'MCP servers ');
- `category-mismatch` (error): one capability given two categories. The build can file it under one only, while its
  answers about each agent quote that agent's record: the catalog would contradict itself, so it is refused, as a
  second spelling of a slug is;
- `name-plural` (error): names that differ only in singular and plural ('Custom Instruction' / 'Custom
  Instructions'): one capability the build would make two of, each agent answered on one of them, so that the
  catalog contradicts itself (within one document, the duplicate-name rule's error, `lint`);
- `name-near-miss`: a name one typing error from another agent's ('Inline Code Completon', 'Sub-agents'), which the
  build would make a second capability of. An error where the two differ only in where a space or hyphen falls
  between the letters ('Sub-agents' / 'Subagents': one word written apart and together is one name): the answers
  about each agent would say it has no record of the capability the others have, and on a tie (every two-agent
  catalog) the overview shows each agent on a capability of its own. Else a warning: one letter apart may be two
  capabilities ('Mode Selection' / 'Model Selection').

Each rule decides from every record of the catalog, the documents read only to compare with (`context`: the rest of
the catalog when a pre-commit hook names the changed files) included, and reports only in the checked documents: a
document is told the same checked alone as with the whole catalog. The value more agents write prevails, and each
other value is said where it is written, naming a place of the prevailing one; on a tie neither is "the others'",
so every value is said, naming a place of the other, and no file order decides which one is wrong. Repeats within
one document are the duplicate-name rule's (`lint`).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from capidx.compiler.diagnostics import Diagnostic, Severity, plural
from capidx.compiler.validate import textrules
from capidx.compiler.validate.load import SourceFile
from capidx.compiler.validate.textrules import quote
from capidx.schema.text import fold, normalize, slugify
from capidx.schema.wording import one_edit, shown

# A name shorter than this (normalized) is not compared for a typing error: short names are often one letter
# apart on purpose.
NEAR_MISS_MIN = 6
# Names a name is compared with, on average, by the near-miss check. Sharing an end (`_ends`) bounds a real
# catalog's comparisons (a name has a handful of neighbours, most none), not a pull request's: 800 names of 190
# letters, one letter each away from 'aaa…a', all share their ends with hundreds of others and were compared pair by
# pair (444 s for a 0.5 MB document). Past the budget no more names are compared: what is left unsaid is a warning
# about a typo.
NEAR_MISS_COMPARISONS = 64
_DIGITS = re.compile(r"\d")
_SPELLING_HINT = "use one spelling for one capability"
_CATEGORY_HINT = "use one category for one capability"
_NEAR_MISS_HINT = "one capability spelled two ways becomes two capabilities"
PLURAL_HINT = "the build makes two capabilities of two names: write one for one capability, or name two apart"

# Characters a name may be written with or without and still be the same name: spaces, dashes, quotes, brackets
# and the punctuation that separates words. A slug keeps only a-z and 0-9, so names that differ in anything else
# ('C++' and 'C#', '日本語' and '中文') would be merged into one capability without a word.
_SEPARATING = frozenset({"Zs", "Zl", "Zp", "Pd", "Pc", "Ps", "Pe", "Pi", "Pf"})
_SEPARATORS = frozenset(".,;:!?/\\'\"·…&")
_SLUG_KEEPS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
RENAME = "write the name with letters a-z and digits ('C Sharp', 'Japanese'): a capability's slug keeps only those"


def symbols(name: str) -> list[str]:
    """The characters of a name that its slug drops and that are not mere separators ('+', '#', '語')."""
    return [
        c
        for c in fold(name)
        if c not in _SLUG_KEEPS and c not in _SEPARATORS and unicodedata.category(c) not in _SEPARATING
    ]


@dataclass(frozen=True)
class _Record:
    """A capability record: its document (numbered in `(*sources, *context)`), its index there, what it says, and
    its name normalized (`key`: one key, one slug)."""

    document: int
    index: int
    name: str
    category: Any
    key: str


# Whether the schema refuses the category of a document's capability (at this index): it is said there, with its fix.
Refused = Callable[[SourceFile, int], bool]


def check_across_agents(
    sources: Sequence[SourceFile], context: Sequence[SourceFile] = (), refused: Refused = lambda source, index: False
) -> list[Diagnostic]:
    """`name-slug-collision`, `name-spelling` and `category-mismatch` at the checked `sources`' records, compared
    with every record of one slug in `sources` and `context`. A category `refused` by the schema, or no slug, takes
    no part in the vote: its own error says it, and the agents that agree are not told they disagree with a typo."""
    documents = (*sources, *context)
    groups: dict[str, list[_Record]] = {}  # normalized name -> its records, in catalog order
    forms: dict[str, list[_Record]] = {}  # the same in the singular -> its records
    for record in _records(documents):
        groups.setdefault(record.key, []).append(record)
        forms.setdefault(singular(record.key), []).append(record)
    problems: list[Diagnostic] = []
    for group in groups.values():
        if records := _to_compare(group, len(sources)):
            problems += _names(documents, len(sources), records)
            problems += _categories(documents, len(sources), records, refused)
    for group in forms.values():
        if len({record.key for record in group}) > 1 and (records := _to_compare(group, len(sources))):
            problems += _plurals(documents, len(sources), records)
    return problems


def singular(key: str) -> str:
    """A normalized name with each word in the singular ('mcp servers' -> 'mcp server', 'policies' -> 'policy'), a
    key only names that differ in plural endings share: 'testing' stays, and words of three letters ('gas', 'mcp')."""
    return " ".join(_singular_word(word) for word in key.split())


def _singular_word(word: str) -> str:
    """'policies' -> 'policy', 'servers' -> 'server'; after a hissing sound a final 'e' goes too, so that a plural
    in '-es' meets its singular whichever it is: 'boxes' and 'box' -> 'box', 'caches' and 'cache' -> 'cach'."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:-1] if word.endswith(("se", "she", "che", "xe", "ze")) else word


def _to_compare(group: Sequence[_Record], checked: int) -> list[_Record]:
    """A document's first record of each group, when two documents or more have one and a checked one is among
    them; else none (one agent's, nothing to agree with; or none of the checked documents')."""
    records = _first_of_each_document(group) if len(group) > 1 else []
    return records if len(records) > 1 and any(record.document < checked for record in records) else []


def check_name_near_misses(sources: Sequence[SourceFile], context: Sequence[SourceFile] = ()) -> list[Diagnostic]:
    """A capability name one typing error away from a name another agent uses ('Inline Code Completon') makes a
    second capability, with nothing said at build time: said in each document that writes the name fewer agents
    use, naming a place of the other (`_near_miss`: an error for a space or hyphen apart, else a warning); on a tie a
    warning in each of both, since either may be the typo.

    Names within one error of each other share their first or their last letters (`_ends`), so each name is
    compared (`one_edit`) only with the names that share one of its ends: linear in the catalog's letters, not
    quadratic in its names, for names that are not all alike. Names shorter than
    `NEAR_MISS_MIN` letters are left alone, and no more than `NEAR_MISS_COMPARISONS` per name on average are made,
    those of the names with the fewest others to compare first."""
    documents = (*sources, *context)
    used: dict[str, list[_Record]] = {}  # normalized name -> its records, in catalog order
    for record in _records(documents):
        if NEAR_MISS_MIN <= len(record.key) <= textrules.SINGLE_LINE_MAX:  # a longer one is an error of its own
            used.setdefault(record.key, []).append(record)
    ends = {key: _ends(key) for key in used}
    neighbours: dict[tuple[str, int, str], set[str]] = {}
    for key, key_ends in ends.items():
        for end in key_ends:
            neighbours.setdefault(end, set()).add(key)
    said: dict[str, list[Diagnostic]] = {}
    budget = NEAR_MISS_COMPARISONS * len(used)
    # The names with the fewest others to compare first: names all alike (a pull request's, in a file read first)
    # spent the budget before a real near miss read after them was compared, and it went unsaid.
    for key in sorted(used, key=lambda key: sum(len(neighbours[end]) for end in ends[key])):
        records = used[key]
        named = _first_of_each_document(record for record in records if record.document < len(sources))
        if not named:
            continue  # only in `context`: compared with, never reported at
        ours = {record.document for record in records}
        near = {other for end in ends[key] for other in neighbours[end]}  # a superset: confirmed below
        budget -= len(near)
        if budget < 0:
            break
        for other in sorted(other for other in near if one_edit(key, other)):
            theirs = {record.document for record in used[other]}
            if (
                ours & theirs
                or len(theirs) < len(ours)
                or _digits_apart(key, other)
                or singular(key) == singular(other)
            ):
                continue  # two capabilities of one agent, the better-established name, 'Python 2' / 'Python 3', or
                # 'MCP Server' / 'MCP Servers' (`name-plural`'s error)
            said.setdefault(key, []).extend(
                _near_miss(documents, record, used[other][0], len(ours), len(theirs)) for record in named
            )
    return [problem for key in used for problem in said.get(key, ())]  # in catalog order


def _first_of_each_document(records: Iterable[_Record]) -> list[_Record]:
    """A document's first record of a name (a second one is the duplicate-name rule's error)."""
    first: dict[int, _Record] = {}
    for record in records:
        first.setdefault(record.document, record)
    return list(first.values())


def _records(documents: Sequence[SourceFile]) -> Iterator[_Record]:
    """Every record with a name, in catalog order (documents by where they are, whether checked or context): the
    place a message names must not depend on which files were named."""
    for number in sorted(range(len(documents)), key=lambda number: os.path.abspath(documents[number].path)):
        for index, capability in textrules.items(documents[number].data, "capabilities"):
            name = capability.get("name")
            if isinstance(name, str) and (key := normalize(name)):
                yield _Record(number, index, name, capability.get("category"), key)


def _outvoted(records: Sequence[_Record], value: Callable[[_Record], str]) -> Iterator[tuple[_Record, _Record]]:
    """(record, other) for each record whose value is not the one more agents write than any other (every record,
    on a tie at the top), `other` the first record of a leading value not its own. `records`: one per document, in
    catalog order."""
    counts = Counter(value(record) for record in records)
    most = max(counts.values(), default=0)
    leading = [written for written, count in counts.items() if count == most]  # in catalog order
    first: dict[str, _Record] = {}
    for record in records:
        first.setdefault(value(record), record)
    for record in records:
        if leading != [value(record)]:
            yield record, first[next(written for written in leading if written != value(record))]


def _names(documents: Sequence[SourceFile], checked: int, records: Sequence[_Record]) -> list[Diagnostic]:
    """Spellings of one slug: an error where they differ in what the slug drops (two capabilities merged), else a
    warning (one capability, which the build shows under one of its spellings)."""
    problems = []
    for record, other in _outvoted(records, lambda record: record.name):
        if record.document >= checked:
            continue
        where = _where(documents, other, "name")
        source, parts = documents[record.document], ("capabilities", record.index, "name")
        if symbols(record.name) != symbols(other.name):  # 'C# Support', 'C++ Support'
            slug = slugify(record.name)
            message = f"{quote(record.name)} makes the same slug ({slug}) as {quote(other.name)} in {where}"
            problems.append(source.diagnostic(parts, "error", message, RENAME, "name-slug-collision"))
        else:
            name, there = _spelled(record.name, other.name)
            message = f"{name} is spelled {there} in {where}"
            problems.append(source.diagnostic(parts, "warning", message, _SPELLING_HINT, "name-spelling"))
    return problems


def _plurals(documents: Sequence[SourceFile], checked: int, records: Sequence[_Record]) -> list[Diagnostic]:
    """Names one capability in the singular and the plural: an error at each outvoted spelling."""
    problems = []
    for record, other in _outvoted(records, lambda record: record.key):
        if record.document < checked:
            where = _where(documents, other, "name")
            message = f"{quote(record.name)} differs only in singular and plural from {quote(other.name)} in {where}"
            parts = ("capabilities", record.index, "name")
            problems.append(documents[record.document].diagnostic(parts, "error", message, PLURAL_HINT, "name-plural"))
    return problems


def _categories(
    documents: Sequence[SourceFile], checked: int, records: Sequence[_Record], refused: Refused
) -> list[Diagnostic]:
    """Categories of one slug: an error at each outvoted one (the build has one category per capability). Only
    categories the schema and the slug rule accept vote (asked only where the categories differ: `refused` may
    check a document)."""
    categorized = [record for record in records if isinstance(record.category, str)]  # else the schema's error
    if len({record.category for record in categorized}) < 2:
        return []
    categorized = [
        record
        for record in categorized
        if textrules.is_category(record.category) and not refused(documents[record.document], record.index)
    ]
    problems = []
    for record, other in _outvoted(categorized, lambda record: record.category):
        if record.document >= checked:
            continue
        where = _where(documents, other, "category")
        message = f"{quote(other.name)} has category {quote(other.category)} in {where}"
        parts, source = ("capabilities", record.index, "category"), documents[record.document]
        problems.append(source.diagnostic(parts, "error", message, _CATEGORY_HINT, "category-mismatch"))
    return problems


def _near_miss(documents: Sequence[SourceFile], record: _Record, other: _Record, ours: int, theirs: int) -> Diagnostic:
    """At `record`, whose name `ours` agents use, one typing error from `other`'s, which `theirs` use. An error where
    the two differ only in where a space (a hyphen, normalized) falls between the letters: one word written apart and
    together is one name, and the build would split the capability, a lookup of this agent answering that it has no
    record of it; on a tie too, where neither is the others' spelling and the split is the same. Else a warning: a
    letter apart may name another capability ('Mode Selection')."""
    said = f"{quote(record.name)} is spelled almost like {quote(other.name)} in {_where(documents, other, 'name')}"
    spacing = record.key.replace(" ", "") == other.key.replace(" ", "")  # one name, written apart and together
    severity: Severity = "error" if spacing else "warning"
    if theirs > ours:
        message = f"{said}, the spelling {plural(theirs, 'other agent')} use"
        hint = f"{_NEAR_MISS_HINT}: spell it as the others do"
    elif spacing:  # a tie: neither is the others', but the build would still split the capability in two
        each = "one agent each" if ours == 1 else f"{ours} agents each"
        message = f"{said}, {each}: one name written apart and together"
        hint = f"{_NEAR_MISS_HINT}: write it one way in both"
    else:
        each = "one agent each" if ours == 1 else f"{ours} agents each"
        message = f"{said}, {each}: one of the two is likely a typo"
        hint = f"{_NEAR_MISS_HINT}: correct the misspelled one"
    parts = ("capabilities", record.index, "name")
    return documents[record.document].diagnostic(parts, severity, message, hint, "name-near-miss")


def _where(documents: Sequence[SourceFile], record: _Record, field: str) -> str:
    """`path:line:col` of a record's field: placed as a diagnostic there would be, the path shown as the reporters
    show a file (`shown`)."""
    source = documents[record.document]
    at = source.source_map.place(("capabilities", record.index, field))[0]
    return f"{shown(source.path)}:{at[0]}:{at[1]}" if at is not None else shown(source.path)


def _spelled(name: str, other: str) -> tuple[str, str]:
    """Two spellings quoted for a message, each with the spaces a reader cannot see in quotes ('MCP servers ' (a
    space at the end)) when the two are spaced differently."""
    ours, theirs = textrules.spacing(name), textrules.spacing(other)
    if ours == theirs:
        return quote(name), quote(other)
    return _with_notes(name, ours), _with_notes(other, theirs)


def _with_notes(name: str, notes: list[str]) -> str:
    return f"{quote(name)} ({', '.join(notes)})" if notes else quote(name)


def _ends(key: str) -> set[tuple[str, int, str]]:
    """Where two keys one edit apart meet: for the shorter's length m (the key's, or one less), the first or the last
    (m - 1) // 2 letters of both, one of which no insertion, deletion, substitution or transposition reaches. Four
    strings of half a key each: every string one letter shorter than each key (its deletion neighbourhood) took
    2.4 GB for 25,000 names of 195 letters, a 7.8 MB document."""
    ends = set()
    for shorter in (len(key), len(key) - 1):
        half = (shorter - 1) // 2
        ends |= {("first", shorter, key[:half]), ("last", shorter, key[len(key) - half :])}
    return ends


def _digits_apart(one: str, other: str) -> bool:
    return _DIGITS.sub("", one) == _DIGITS.sub("", other)
