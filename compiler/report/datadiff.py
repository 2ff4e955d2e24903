"""What a change does to the data a model is answered from: the catalog of one build against another's.

`capidx report --against` compares two builds' `compare` documents (one per canonical capability, holding every
agent's record of it: docs/build-directory.md, "Tool documents"), their match indexes (each capability's aliases)
and their manifests' `catalog`, and says what the model will now answer differently: availability that flipped,
agents and capabilities added or removed, tier, status, maturity and category changes, aliases added or removed,
sources added or removed, and records whose text changed (named, not diffed).

Pure: `read_catalog` takes the manifest's data and the documents' bytes (read by `artifact_reader`), `compare`
takes two catalogs. Every text that reaches a report is `visible` (no control character, no line break); each
format escapes it further its own way.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from capidx.compiler.diagnostics import plural
from capidx.schema.printable import visible

COMPARE_KIND = "compare"
INDEX_KIND = "index"  # index/match.json: each capability's aliases (the alias table's and the records')
# The match index's bytes, at most: it holds every capability's terms, about 4 KB a capability (some 4,000
# capabilities), and parsed, JSON takes up to 30 times its bytes (a forged one of short strings): past it, aliases
# are not compared, and the report says so.
MAX_INDEX_BYTES = 16 << 20
_SHOWN_ALIASES = 5  # aliases quoted per capability; the rest counted
_ALIAS_CHARACTERS = 60  # of each alias quoted
# One compare document's bytes, at most: every agent's record of one capability, some kilobytes each (a capability
# of the bundled catalog: 5 KB); parsed, JSON takes some 30 times its bytes, so a forged 64 MiB one took 1.8 GB.
MAX_DOCUMENT_BYTES = 8 << 20
AVAILABLE, NOT_AVAILABLE, NOT_RECORDED = "available", "not available", "not recorded"
TRAITS = ("tier", "status", "maturityLevel")
_NOT_TEXT = frozenset({"agent", "available", "recorded", "sources", *TRAITS})
_NAMED_AGENTS = 3  # agents named for a capability added or removed; the rest are counted


class DataUnavailable(Exception):
    """The build does not hold what the comparison needs; `str()` says what is missing."""


@dataclass(frozen=True)
class Record:
    """One agent's record of one capability, as its compare document gives it."""

    available: bool
    traits: Mapping[str, str]  # tier, status, maturityLevel: those the record has
    texts: Mapping[str, str]  # every other field (description, limitations, …; its name visible): its JSON's digest
    sources: tuple[str, ...]  # the URLs it cites, in order

    @property
    def state(self) -> str:
        return AVAILABLE if self.available else NOT_AVAILABLE


@dataclass(frozen=True)
class Capability:
    name: str
    category: str


@dataclass(frozen=True)
class Catalog:
    agents: tuple[str, ...]
    capabilities: Mapping[str, Capability]  # by slug
    records: Mapping[tuple[str, str], Record]  # by (agent, capability slug)
    # slug -> the other names a lookup takes for it (match index `aliases`); None: the build's index was not read
    aliases: Mapping[str, frozenset[str]] | None = None

    def state(self, agent: str, capability: str) -> str:
        record = self.records.get((agent, capability))
        return NOT_RECORDED if record is None else record.state


@dataclass(frozen=True)
class DataItem:
    """One line of a section. `text` is the line as printed (plain, visible); the other fields are its JSON form."""

    text: str
    agent: str | None = None
    capability: str | None = None
    field: str | None = None
    before: str | None = None
    after: str | None = None
    fields: tuple[str, ...] = ()
    added: int = 0
    removed: int = 0


@dataclass(frozen=True)
class Section:
    key: str  # the JSON key
    title: str  # "Availability changes"
    one: str  # one of its items, after a count: "availability change"
    items: tuple[DataItem, ...]

    def count(self) -> str:
        return plural(len(self.items), self.one, self.title.lower())


@dataclass(frozen=True)
class DataDiff:
    """The data comparison, or why there is none (`unavailable`)."""

    sections: tuple[Section, ...] = ()
    unavailable: str | None = None
    # Why aliases were not compared (a build's match index not read), else None: no alias change is then no news.
    aliases_unread: str | None = None

    @property
    def changed(self) -> bool:
        return any(section.items for section in self.sections)

    def summary(self) -> str:
        """`2 availability changes, 1 agent added, …`, `no record changed`, or `unavailable (why)`."""
        if self.unavailable is not None:
            return f"unavailable ({self.unavailable})"
        said = ", ".join(section.count() for section in self.sections if section.items) or "no record changed"
        return said + (f"; aliases not compared ({self.aliases_unread})" if self.aliases_unread else "")


# Sections in order of importance: (JSON key, title, one item after a count).
SECTIONS = (
    ("availability", "Availability changes", "availability change"),
    ("agentsAdded", "Agents added", "agent added"),
    ("agentsRemoved", "Agents removed", "agent removed"),
    ("capabilitiesAdded", "Capabilities added", "capability added"),
    ("capabilitiesRemoved", "Capabilities removed", "capability removed"),
    ("capabilitiesRenamed", "Capabilities renamed", "capability renamed"),
    ("traits", "Tier, status, maturity and category changes", "tier, status, maturity or category change"),
    ("aliases", "Alias changes", "alias change"),
    ("sources", "Source changes", "source change"),
    ("text", "Text changes", "text change"),
)


# --- reading a build's catalog ---------------------------------------------------------------------------


def read_catalog(manifest: Mapping[str, Any], documents: Mapping[str, bytes]) -> Catalog:
    """The catalog of a build: its manifest's data and the bytes of its compare documents by URI. Raises
    `DataUnavailable` when a capability of the catalog has no compare document, or one is not one. Only records of
    agents the catalog lists are kept: a capidx build's documents name no other, and a forged one's extra names
    ('<img …>', '@someone') would be counted as agents ('15 of 4 agents') and quoted in every format."""
    rows = [row for row in manifest["artifacts"] if row["kind"] == COMPARE_KIND]
    if not rows:
        raise DataUnavailable("it has no compare documents (made by an older capidx?)")
    slugs = {_param(row, "capability"): row["uri"] for row in rows}
    catalog = manifest["catalog"]
    listed = set(catalog["agents"])  # slugs (the manifest's schema): a record of another name is not the catalog's
    capabilities: dict[str, Capability] = {}
    records: dict[tuple[str, str], Record] = {}
    for slug in catalog["capabilities"]:
        uri = slugs.get(slug)
        if uri is None or uri not in documents:
            raise DataUnavailable(f"it has no compare document for {slug}")
        document = _parse(documents[uri], uri)
        capabilities[slug] = _capability(document.get("capability"), slug)
        for entry in document["agents"]:
            if entry.get("recorded", True) is not False and entry["agent"] in listed:
                records[(entry["agent"], slug)] = _record(entry)
    return Catalog(tuple(catalog["agents"]), capabilities, records, _aliases(manifest, documents))


def _aliases(manifest: Mapping[str, Any], documents: Mapping[str, bytes]) -> dict[str, frozenset[str]] | None:
    """Each capability's aliases from the build's match index (`documents` holds it by URI when it was read), or
    None when there is none to read, it is not one, or a row of it has no `aliases` (an older index: every alias of the
    other build would read as added): the alias table and the records' aliases are what a lookup resolves besides
    names, and no compare document holds them."""
    uri = next((row["uri"] for row in manifest["artifacts"] if row["kind"] == INDEX_KIND), None)
    data = documents.get(uri) if uri is not None else None
    if data is None or len(data) > MAX_INDEX_BYTES:
        return None
    try:
        index = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    rows = index.get("capabilities") if isinstance(index, dict) else None
    if not isinstance(rows, list):
        return None
    found: dict[str, frozenset[str]] = {}
    for row in rows:
        names = row.get("aliases") if isinstance(row, dict) else None
        if not isinstance(row, dict) or not isinstance(row.get("slug"), str) or not isinstance(names, list):
            return None  # an index without every capability's aliases (an older one): each would read as added
        found[row["slug"]] = frozenset(visible(name) for name in names if isinstance(name, str))
    return found


def _param(row: Mapping[str, Any], key: str) -> str | None:
    params = row.get("params")
    value = params.get(key) if isinstance(params, Mapping) else None
    return value if isinstance(value, str) else None


def _parse(data: bytes, uri: str) -> dict[str, Any]:
    if len(data) > MAX_DOCUMENT_BYTES:  # parsed, JSON takes some 30 times its bytes
        raise DataUnavailable(
            f"{visible(uri)} is {len(data):,} bytes, over the {MAX_DOCUMENT_BYTES:,} of a compare document"
        )
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise DataUnavailable(f"{visible(uri)} is not JSON") from None
    except RecursionError:  # the parser's guard against a stack overflow, as for the manifest (`builddir`)
        raise DataUnavailable(f"{visible(uri)} is nested too deeply to be a compare document") from None
    agents = document.get("agents") if isinstance(document, dict) else None
    if not isinstance(agents, list) or not all(
        isinstance(entry, dict) and isinstance(entry.get("agent"), str) for entry in agents
    ):
        raise DataUnavailable(f"{visible(uri)} is not a compare document (no list of agents' records)")
    return document


def _capability(value: Any, slug: str) -> Capability:
    value = value if isinstance(value, Mapping) else {}
    return Capability(_text(value.get("name"), slug), _text(value.get("category"), ""))


def _text(value: Any, default: str) -> str:
    return visible(value) if isinstance(value, str) else default


def _record(entry: Mapping[str, Any]) -> Record:
    sources = entry.get("sources")
    urls = [_source_url(source) for source in sources] if isinstance(sources, list) else []
    return Record(
        available=entry.get("available") is True,
        traits={name: visible(str(entry[name])) for name in TRAITS if entry.get(name) is not None},
        texts={  # compared for equality only: a digest, so that what a catalog holds is not held twice
            visible(key): hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode()).hexdigest()
            for key, value in entry.items()
            if key not in _NOT_TEXT
        },
        sources=tuple(urls),
    )


def _source_url(source: Any) -> str:
    if isinstance(source, Mapping) and isinstance(source.get("url"), str):
        return source["url"]
    return json.dumps(source, ensure_ascii=False, sort_keys=True)


# --- comparing two catalogs --------------------------------------------------------------------------------


def compare(before: Catalog, after: Catalog) -> DataDiff:
    """What changed from `before` (the baseline) to `after` (the build), section by section, most important first."""
    listed_before, listed_after = set(before.agents), set(after.agents)  # once: a set per agent is quadratic
    shared = sorted(after.capabilities.keys() & before.capabilities.keys())
    pairs = _recorded_pairs(before, after, listed_before, shared)
    added, removed = (
        after.capabilities.keys() - before.capabilities.keys(),
        before.capabilities.keys() - after.capabilities.keys(),
    )
    renamed = _renamed(before, after, removed, added)
    kept = [*((slug, slug) for slug in shared), *renamed.items()]  # (old slug, new slug) of each capability kept
    found: dict[str, list[DataItem]] = {
        "availability": _availability(before, after, pairs),
        "agentsAdded": _agents(after, [a for a in after.agents if a not in listed_before]),
        "agentsRemoved": _agents(before, [a for a in before.agents if a not in listed_after]),
        "capabilitiesAdded": _capabilities(after, sorted(added - set(renamed.values()))),
        "capabilitiesRemoved": _capabilities(before, sorted(removed - renamed.keys())),
        "capabilitiesRenamed": [
            DataItem(
                f"{old} → {new}: {before.capabilities[old].name} → {after.capabilities[new].name}",
                capability=new,
                field="slug",
                before=old,
                after=new,
            )
            for old, new in sorted(renamed.items())
        ],
        "traits": [*_categories(before, after, kept), *_traits(before, after, pairs)],
        "aliases": _alias_changes(before, after, kept),
        "sources": _sources(before, after, pairs),
        "text": [*_names(before, after, shared), *_texts(before, after, pairs)],
    }
    unread = [which for which, catalog in (("the baseline", before), ("the build", after)) if catalog.aliases is None]
    said = f"{' and '.join(unread)}: no match index with every capability's aliases" if unread else None
    return DataDiff(tuple(Section(key, title, one, tuple(found[key])) for key, title, one in SECTIONS), None, said)


def _renamed(before: Catalog, after: Catalog, removed: Iterable[str], added: Iterable[str]) -> dict[str, str]:
    """Old slug -> new slug for a capability removed whose records an added one holds unchanged (the same agents,
    each with the same availability, traits, texts but the name, and sources): a rename, not a capability gone and
    another come. One whose records match several is left as removed and added."""

    def signatures(catalog: Catalog, slugs: Iterable[str]) -> dict[str, tuple[Any, ...]]:
        wanted, held = set(slugs), {}
        for (agent, slug), record in catalog.records.items():
            if slug in wanted:
                traits, texts = tuple(sorted(record.traits.items())), tuple(sorted(record.texts.items()))
                held.setdefault(slug, []).append((agent, record.available, traits, texts, record.sources))
        return {slug: tuple(sorted(found)) for slug, found in held.items()}  # none recorded: nothing to tell it by

    by_records: dict[tuple[Any, ...], list[str]] = {}
    for slug, signature in sorted(signatures(after, added).items()):
        by_records.setdefault(signature, []).append(slug)
    gone = signatures(before, removed)
    matched = {slug: by_records.get(signature, []) for slug, signature in gone.items()}
    claimed = Counter(new for found in matched.values() for new in found)
    return {old: found[0] for old, found in sorted(matched.items()) if len(found) == 1 and claimed[found[0]] == 1}


def _recorded_pairs(
    before: Catalog, after: Catalog, listed_before: set[str], shared: Iterable[str]
) -> list[tuple[str, str]]:
    """The (agent, capability) pairs of agents and capabilities both catalogs list that either records, in the
    catalog's order of agents, then by capability. A pair neither records changes nothing, so the work is bounded by
    the records the documents hold (bytes read), not by agents times capabilities: a forged manifest listing 20,000
    of each, its compare documents one empty list, would otherwise make 400 million pairs (minutes, gigabytes)."""
    order = {agent: place for place, agent in enumerate(after.agents) if agent in listed_before}
    capabilities = set(shared)
    recorded = {pair for pair in (*before.records, *after.records) if pair[0] in order and pair[1] in capabilities}
    return sorted(recorded, key=lambda pair: (order[pair[0]], pair[1]))


def subject(agent: str | None, capability: str | None) -> str:
    return " / ".join(part for part in (agent, capability) if part)


# A flip between yes and no first: the answer to "can it?" changes; then a record added or removed.
_FLIP_ORDER = {frozenset({AVAILABLE, NOT_AVAILABLE}): 0, frozenset({NOT_RECORDED, AVAILABLE}): 1}


def _availability(before: Catalog, after: Catalog, pairs: Iterable[tuple[str, str]]) -> list[DataItem]:
    items = []
    for agent, slug in pairs:
        old, new = before.state(agent, slug), after.state(agent, slug)
        if old != new:
            note = " (record added)" if old == NOT_RECORDED else " (record removed)" if new == NOT_RECORDED else ""
            text = f"{subject(agent, slug)}: {old} → {new}{note}"
            items.append(DataItem(text, agent, slug, "available", old, new))
    return sorted(items, key=lambda item: (_FLIP_ORDER.get(frozenset({item.before, item.after}), 2), item.text))


def _agents(catalog: Catalog, agents: Iterable[str]) -> list[DataItem]:
    wanted = set(agents)
    recorded: Counter[str] = Counter()
    available: Counter[str] = Counter()
    for (agent, _slug), record in catalog.records.items():
        if agent in wanted:
            recorded[agent] += 1
            available[agent] += record.available
    return [
        DataItem(
            f"{agent}: {plural(recorded[agent], 'capability', 'capabilities')} recorded, {available[agent]} available",
            agent=agent,
            added=recorded[agent],
        )
        for agent in agents
    ]


def _capabilities(catalog: Catalog, slugs: Iterable[str]) -> list[DataItem]:
    wanted = set(slugs)
    recorded: dict[str, list[str]] = {}
    available: dict[str, list[str]] = {}
    for (agent, slug), record in sorted(catalog.records.items()):
        if slug in wanted:
            recorded.setdefault(slug, []).append(agent)
            if record.available:
                available.setdefault(slug, []).append(agent)
    items = []
    for slug in sorted(wanted):
        having, count = available.get(slug, []), len(recorded.get(slug, []))
        named = ", ".join(having[:_NAMED_AGENTS]) + (", …" if len(having) > _NAMED_AGENTS else "")
        who = f"available for {named}" if having else "available for no agent"
        text = f"{slug}: {who} ({len(having)} of {plural(len(catalog.agents), 'agent')}; {count} recorded)"
        items.append(DataItem(text, capability=slug, added=len(having)))
    return items


def _both(
    before: Catalog, after: Catalog, pairs: Iterable[tuple[str, str]]
) -> Iterable[tuple[str, str, Record, Record]]:
    for agent, slug in pairs:
        old, new = before.records.get((agent, slug)), after.records.get((agent, slug))
        if old is not None and new is not None:
            yield agent, slug, old, new


def _changed_value(name: str, old: str | None, new: str | None) -> str:
    return f"{name} {old or 'none'} → {new or 'none'}"


def _categories(before: Catalog, after: Catalog, kept: Iterable[tuple[str, str]]) -> list[DataItem]:
    """A capability's category changed, of each both builds have (old slug, new slug: the same, or a rename's, whose
    category is the capability's, not a record's, so a rename of the same records may still move it)."""
    return [
        DataItem(
            f"{slug}: {_changed_value('category', old, new)}", capability=slug, field="category", before=old, after=new
        )
        for was, slug in kept
        if (old := before.capabilities[was].category) != (new := after.capabilities[slug].category)
    ]


def _traits(before: Catalog, after: Catalog, pairs: Iterable[tuple[str, str]]) -> list[DataItem]:
    items = []
    for agent, slug, old, new in _both(before, after, pairs):
        for name in TRAITS:
            was, now = old.traits.get(name), new.traits.get(name)
            if was != now:
                text = f"{subject(agent, slug)}: {_changed_value(name, was, now)}"
                items.append(DataItem(text, agent, slug, name, was, now))
    return items


def _sources(before: Catalog, after: Catalog, pairs: Iterable[tuple[str, str]]) -> list[DataItem]:
    items = []
    for agent, slug, old, new in _both(before, after, pairs):
        was, now = Counter(old.sources), Counter(new.sources)
        added, removed = sum((now - was).values()), sum((was - now).values())
        if added or removed:
            counts = ", ".join(
                part for part, count in ((f"{added} added", added), (f"{removed} removed", removed)) if count
            )
            text = f"{subject(agent, slug)}: {len(old.sources)} → {plural(len(new.sources), 'source')} ({counts})"
            items.append(DataItem(text, agent, slug, "sources", added=added, removed=removed))
    return items


def _alias_changes(before: Catalog, after: Catalog, slugs: Iterable[tuple[str, str]]) -> list[DataItem]:
    """Per capability both builds have (old slug, new slug: the same, or a rename's), the aliases added and removed
    (`plugins: +1 alias ('add extension')`); none when either build's aliases are unknown (an index not read)."""
    if before.aliases is None or after.aliases is None:
        return []
    items = []
    for old, slug in slugs:
        was, now = before.aliases.get(old, frozenset()), after.aliases.get(slug, frozenset())
        added, removed = sorted(now - was), sorted(was - now)
        if added or removed:
            parts = [
                f"{sign}{plural(len(names), 'alias', 'aliases')} ({_quoted(names)})"
                for sign, names in (("+", added), ("−", removed))
                if names
            ]
            items.append(
                DataItem(
                    f"{slug}: {', '.join(parts)}",
                    capability=slug,
                    field="aliases",
                    added=len(added),
                    removed=len(removed),
                )
            )
    return items


def _quoted(names: list[str]) -> str:
    """The first aliases, each cut at `_ALIAS_CHARACTERS` (the data's text, of any length), then how many more."""
    cut = [name if len(name) <= _ALIAS_CHARACTERS else name[: _ALIAS_CHARACTERS - 1] + "…" for name in names]
    shown = ", ".join(repr(name) for name in cut[:_SHOWN_ALIASES])
    return shown + (f", and {len(names) - _SHOWN_ALIASES} more" if len(names) > _SHOWN_ALIASES else "")


def _names(before: Catalog, after: Catalog, slugs: Iterable[str]) -> list[DataItem]:
    return [
        DataItem(f"{slug}: name", capability=slug, fields=("name",))
        for slug in slugs
        if before.capabilities[slug].name != after.capabilities[slug].name
    ]


def _texts(before: Catalog, after: Catalog, pairs: Iterable[tuple[str, str]]) -> list[DataItem]:
    items = []
    for agent, slug, old, new in _both(before, after, pairs):
        fields = tuple(
            sorted(name for name in old.texts.keys() | new.texts.keys() if old.texts.get(name) != new.texts.get(name))
        )
        if fields:
            items.append(DataItem(f"{subject(agent, slug)}: {', '.join(fields)}", agent, slug, fields=fields))
    return items


def diff_builds(
    build: Mapping[str, Any],
    baseline: Mapping[str, Any],
    read: Callable[[str], Mapping[str, bytes]],
) -> DataDiff:
    """The comparison of two builds' manifests, reading documents through `read(which)` ("build", "baseline"),
    which raises `DataUnavailable` for a build whose documents cannot be read."""
    catalogs = []
    for which, manifest in (("baseline", baseline), ("build", build)):
        try:
            catalogs.append(read_catalog(manifest, read(which)))
        except DataUnavailable as error:
            return DataDiff(unavailable=f"the {which}: {error}")
    return compare(*catalogs)
