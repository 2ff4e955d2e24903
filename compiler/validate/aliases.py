"""Alias phrases the index cannot keep. The build keys every alias by its normalized phrase
(`capidx.schema.text.normalize`, as `derive/match.py` does) and gives one phrase one capability: names and slugs
first (the server tries them before any alias), then the alias table, then capabilities' own aliases, the first
capability by slug winning. An alias that loses there is dropped without a word, so these rules say so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate import discover
from capidx.compiler.validate.load import SourceFile
from capidx.compiler.validate.textrules import items, quote
from capidx.schema.lexicon import identifiers
from capidx.schema.text import normalize, slugify
from capidx.schema.wording import shown, suggest
from capidx.schema.yamldata import json_path

_OWN_WORD = "an agent's own word for a capability belongs in its record's `terminology`"


@dataclass(frozen=True)
class Named:
    """A capability as the index knows it: its slug (its identity across agents) and its name as first written."""

    slug: str
    name: str


@dataclass(frozen=True)
class _RecordAlias:
    """One item of a record's `aliases`, where it is written."""

    document: int
    parts: tuple[Any, ...]
    phrase: str
    owner: Named
    agent: str


def name_keys(documents: Sequence[SourceFile]) -> dict[str, Named]:
    """Normalized capability name or slug -> the capability: the phrases the server answers before any alias."""
    keys: dict[str, Named] = {}
    for document in documents:
        for _, capability in items(document.data, "capabilities"):
            named = _named(capability)
            if named is not None:
                for key in (normalize(named.name), normalize(named.slug)):
                    keys.setdefault(key, named)
    return keys


def table_targets(table: Any, names: Mapping[str, Named]) -> dict[str, Named]:
    """Normalized alias-table phrase -> the capability it leads to, for the phrases whose target exists (the
    others are `alias-target` errors and left out of the build). The first phrase of a normalized key in sorted order
    wins here, as in the build (which sorts the table); a second one is an error of its own (`check_table_keys`)."""
    phrases = table.get("aliases") if isinstance(table, dict) else None
    targets: dict[str, Named] = {}
    for phrase, target in sorted(phrases.items()) if isinstance(phrases, dict) else ():
        found = names.get(normalize(target)) if isinstance(target, str) else None
        if found is not None and (key := normalize(phrase)):
            targets.setdefault(key, found)
    return targets


# The keys an alias table's top level may have besides `x-` ones (schema/aliases-schema.json).
_TABLE_KEYS = ("$schema", "$comment", "aliases")
_SHOWN = 40  # characters of a phrase and of its target the example in `flat_table` repeats


def flat_table(source: SourceFile) -> tuple[Diagnostic, frozenset[str]] | None:
    """A table written without its `aliases` object (`{"mcp": "MCP Servers"}`): one error at `$` saying where the
    phrases go, with the first as the example, and the JSON paths of what the schema says instead (the missing key
    at `$`, each phrase an unknown key), which it replaces. None for a table that has `aliases`, or a key at its top
    that is no phrase (an object, a misspelling of `aliases`): the schema's own words fit those."""
    data = source.data
    if not isinstance(data, dict) or "aliases" in data:
        return None
    phrases = [key for key in data if key not in _TABLE_KEYS and not key.startswith("x-")]
    targets = [key for key in phrases if isinstance(data[key], str) or source.is_nulled((key,))]  # said unusable
    if not phrases or targets != phrases or any(suggest(key, ["aliases"]) for key in phrases):
        return None
    first = next((key for key in phrases if isinstance(data[key], str)), phrases[0])
    example = json.dumps({"aliases": {_cut(first): _cut(data[first] or "…")}}, ensure_ascii=False)
    problem = source.diagnostic(
        (),
        "error",
        "missing required key 'aliases': the phrases are written at the top of the table",
        f'put them under "aliases": {example}',
    )
    return problem, frozenset({json_path(()), *(json_path((key,)) for key in phrases)})


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def check_table_keys(source: SourceFile) -> list[Diagnostic]:
    """Two keys of the alias table that normalize to one phrase ('ghost text', 'ghost  text', 'ghost-text'): the
    index holds one phrase once, so one of them is never used. An error at the later key, naming the earlier."""
    phrases = source.data.get("aliases") if isinstance(source.data, dict) else None
    if not isinstance(phrases, dict):
        return []
    first: dict[str, str] = {}
    problems = []
    for phrase, target in phrases.items():
        key = normalize(phrase)
        if not key:
            continue
        if key not in first:
            first[key] = phrase
            continue
        earlier = first[key]
        if _still_used(phrases.get(earlier), target, earlier, phrase):
            continue
        line = source.source_map.locate(("aliases", earlier), key=True)
        where = f"{quote(earlier)}" + (f" (line {line[0]})" if line else "")
        message = f"alias {quote(phrase)} is the same phrase as {where} once case, spacing and punctuation are ignored"
        problems.append(
            source.diagnostic(
                ("aliases", phrase),
                "error",
                message,
                _same_phrase_hint(earlier, phrases.get(earlier), target),
                "alias-same-phrase",
                key=True,
            )
        )
    return problems


def _still_used(earlier_target: Any, target: Any, earlier: str, phrase: str) -> bool:
    """A second spelling of a phrase that leads to the same capability and holds an identifier the first does not
    ('claude.md' after 'claude md'): the index keeps its identifier (`capidx.schema.lexicon.identifiers`)."""
    same = isinstance(target, str) and isinstance(earlier_target, str)
    same = same and normalize(target) == normalize(earlier_target)
    return same and not set(identifiers(phrase)) <= set(identifiers(earlier))


def _same_phrase_hint(earlier: str, earlier_target: Any, target: Any) -> str:
    if isinstance(target, str) and isinstance(earlier_target, str) and normalize(target) == normalize(earlier_target):
        return f"remove this key: the server reads it as {quote(earlier)}, which already leads to {quote(target)}"
    never = "one phrase leads to one capability, so one of the two would never be used"
    return f"{never}: remove this key or {quote(earlier)}"


def check_table_names(source: SourceFile, names: Mapping[str, Named]) -> list[Diagnostic]:
    """An alias-table phrase that is another capability's name or slug: the server answers the name first, so the
    alias never leads to its target."""
    phrases = source.data.get("aliases") if isinstance(source.data, dict) else None
    problems = []
    for phrase, target in phrases.items() if isinstance(phrases, dict) else ():
        named = names.get(normalize(phrase))
        if named is None or not isinstance(target, str) or named.slug == slugify(target):
            continue
        message = f"alias {quote(phrase)} is the name of the capability {quote(named.name)}: it never leads to"
        message += f" {quote(target)}"
        hint = f"the server answers {quote(named.name)} for it; remove the alias or choose another phrase"
        problems.append(source.diagnostic(("aliases", phrase), "warning", message, hint, "alias-is-name", key=True))
    return problems


def check_own_aliases(source: SourceFile, parts: tuple[Any, ...], capability: dict[str, Any]) -> list[Diagnostic]:
    """Aliases of one record that add nothing: one phrase given twice (`["mcp", "mcp"]`, or `mcp` and `MCP`: the
    index keys both as one phrase), and the record's own name or slug as an alias (the server answers the name
    before any alias). Both are kept silently by the build and mean a list written by hand that says less than
    it seems, so a warning at the item to remove (`alias-repeated`, `alias-own-name`)."""
    owner, aliases = _named(capability), capability.get("aliases")
    if owner is None or not isinstance(aliases, list):
        return []
    own = {normalize(owner.name), normalize(owner.slug)}
    first: dict[str, int] = {}
    problems = []
    for item, phrase in enumerate(aliases):
        key = normalize(phrase) if isinstance(phrase, str) else ""
        if not key:
            continue  # not a phrase: the schema's or `blank`'s to say
        code = "alias-own-name" if key in own else "alias-repeated" if key in first else None
        where = (*parts, "aliases", item)
        if code is None or source.past_cap(code, where):  # (made in reading order: past the cap, only counted)
            first.setdefault(key, item)
            continue
        if key in own:
            message = f"alias {quote(phrase)} is the capability's own name {quote(owner.name)}"
            hint = "remove it: the name already finds the capability; an alias is another name people use"
            problems.append(source.diagnostic(where, "warning", message, hint, code))
        else:
            message = f"alias {quote(phrase)} is given twice in {quote(owner.name)} (first as aliases[{first[key]}])"
            hint = "remove the repeat: phrases are compared ignoring case, spacing and punctuation"
            problems.append(source.diagnostic(where, "warning", message, hint, code))
        first.setdefault(key, item)
    return problems


def check_record_aliases(
    sources: Sequence[SourceFile],
    context: Sequence[SourceFile] = (),
    table: Any = None,
    names: Mapping[str, Named] | None = None,
) -> list[Diagnostic]:
    """Capabilities' own `aliases` the index cannot keep, said at each checked record's alias (`context`, the rest
    of the catalog when a pre-commit hook names only changed files, is compared with, never reported at):
    an alias that is another capability's name or slug (`alias-is-name`), and one phrase that is an alias of two
    capabilities, in records or in the alias `table` (`alias-shared`), which names which one the index keeps (an
    agent whose own record gives the phrase gets its own reading: server/resolve.py). `names`: `name_keys` of the
    same documents, when the caller has it."""
    documents = (*sources, *context)
    names = name_keys(documents) if names is None else names
    tabled = table_targets(table, names)
    claims: dict[str, list[_RecordAlias]] = {}
    for key, alias in _record_aliases(documents):
        claims.setdefault(key, []).append(alias)
    # The aliases to warn of, made in reading order (a document's, by place): past a file's cap, only counted.
    warned: list[tuple[_RecordAlias, Named | None, Mapping[str, _RecordAlias], Named, Named | None]] = []
    for key, aliases in claims.items():
        owners: dict[str, _RecordAlias] = {}  # slug -> its first claim, in claim order: linear per phrase
        for claim in aliases:
            owners.setdefault(claim.owner.slug, claim)
        kept = owners[min(owners)].owner  # the first capability by slug: the index's reading for other agents
        named, by_table = names.get(key), tabled.get(key)
        if named is None and by_table is None and len(owners) == 1:
            continue  # a phrase of one capability, and no name: nothing to say of its claims
        warned += [
            (alias, named, owners, kept, by_table)
            for alias in aliases
            if alias.document < len(sources) and _warned(alias, named, owners, by_table)
        ]
    problems = []
    for alias, named, owners, kept, by_table in sorted(warned, key=lambda found: (found[0].document, found[0].parts)):
        source = sources[alias.document]
        if not source.past_cap("alias-record", alias.parts):  # alias-is-name or alias-shared, one of them per alias
            diagnostic = _dead_alias(source, alias, named) or _shared_alias(source, alias, owners, kept, by_table)
            problems += [diagnostic] if diagnostic is not None else []
    return problems


def _warned(
    alias: _RecordAlias, named: Named | None, owners: Mapping[str, _RecordAlias], by_table: Named | None
) -> bool:
    """Whether `_dead_alias` or `_shared_alias` says something of `alias`, without making what they say."""
    slug = alias.owner.slug
    if named is not None and named.slug != slug:
        return True
    if by_table is not None:
        return by_table.slug != slug
    return any(other != slug for other in owners)


def _dead_alias(source: SourceFile, alias: _RecordAlias, named: Named | None) -> Diagnostic | None:
    if named is None or named.slug == alias.owner.slug:
        return None
    message = f"alias {quote(alias.phrase)} of {quote(alias.owner.name)} is the name of the capability"
    message += f" {quote(named.name)}: the name wins, so the alias is never used"
    hint = f"remove it or choose another phrase; {_OWN_WORD}"
    return source.diagnostic(alias.parts, "warning", message, hint, "alias-is-name")


def _shared_alias(
    source: SourceFile, alias: _RecordAlias, owners: Mapping[str, _RecordAlias], kept: Named, tabled: Named | None
) -> Diagnostic | None:
    """`alias` when another capability claims its phrase: the alias table (which wins) or another record. `owners`:
    each claiming capability's first claim, in claim order; `kept`: the one of them the index keeps."""
    other = next((claim for slug, claim in owners.items() if slug != alias.owner.slug), None)
    if tabled is not None and tabled.slug != alias.owner.slug:
        message = f"alias {quote(alias.phrase)} of {quote(alias.owner.name)} is the alias table's phrase for"
        message += f" {quote(tabled.name)}, which the index keeps for agents whose own record does not give it"
    elif tabled is None and other is not None:
        message = f"alias {quote(alias.phrase)} of {quote(alias.owner.name)} is also an alias of"
        message += f" {quote(other.owner.name)} ({other.agent}); the index keeps {quote(kept.name)} for agents whose"
        message += " own record does not give it"
    else:
        return None
    hint = f"one phrase names one capability: drop it from one of them; {_OWN_WORD}"
    return source.diagnostic(alias.parts, "warning", message, hint, "alias-shared")


def check_names_that_are_aliases(
    sources: Sequence[SourceFile],
    context: Sequence[SourceFile] = (),
    table: Any = None,
    names: Mapping[str, Named] | None = None,
) -> list[Diagnostic]:
    """A capability's name that is another capability's alias, in the table or a record ('Shell Commands', the table's
    phrase for Shell Command Execution): the build makes a capability of its own of it, and the phrase, answered as a
    name first, no longer leads to the other one. The alias rules say so at the alias ("remove the alias"), in files
    the author of the name may never have opened; said at the name (`name-is-alias`), where the choice is made."""
    documents = (*sources, *context)
    names = name_keys(documents) if names is None else names
    aliased = {key: (named, "the alias table's phrase for") for key, named in table_targets(table, names).items()}
    # Only the checked names are looked up, and a record alias's place is found only for one of them: finding the
    # place of every alias of a catalog of 200,000 took 7 s (`place` reads the document up to each one).
    checked = [
        (source, index, named, normalize(named.name))
        for source in sources
        for index, capability in items(source.data, "capabilities")
        if (named := _named(capability)) is not None
    ]
    wanted = {key for *_, key in checked if key not in aliased}
    for key, alias in _record_aliases(documents):
        if key in wanted:
            wanted.discard(key)
            at = documents[alias.document].source_map.place(alias.parts)[0]
            where = f"{shown(documents[alias.document].path)}:{at[0]}:{at[1]}" if at else shown(alias.phrase)
            aliased[key] = (alias.owner, f"in {where} an alias of")
    problems = []
    for source, index, named, key in checked:
        other, how = aliased.get(key, (None, ""))
        if other is not None and other.slug != named.slug:
            message = f"{quote(named.name)} is {how} {quote(other.name)}: the build makes a capability of it"
            hint = f"for a record of {quote(other.name)}, name it so; for another capability, give the alias up"
            problems.append(
                source.diagnostic(("capabilities", index, "name"), "warning", message, hint, "name-is-alias")
            )
    return problems


def _record_aliases(documents: Sequence[SourceFile]) -> Iterator[tuple[str, _RecordAlias]]:
    """Every phrase of the records' `aliases`, normalized (once: a document may hold hundreds of thousands), with
    where it is."""
    for number, document in enumerate(documents):
        agent = discover.agent_id(document.path)
        for index, capability in items(document.data, "capabilities"):
            owner, aliases = _named(capability), capability.get("aliases")
            if owner is None or not isinstance(aliases, list):
                continue
            for item, phrase in enumerate(aliases):
                if isinstance(phrase, str) and (key := normalize(phrase)):
                    yield key, _RecordAlias(number, ("capabilities", index, "aliases", item), phrase, owner, agent)


def _named(capability: dict[str, Any]) -> Named | None:
    name = capability.get("name")
    slug = slugify(name) if isinstance(name, str) else ""
    return Named(slug, name) if slug else None
