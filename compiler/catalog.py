"""The catalog model: frozen dataclasses built by one pure function from validated documents.

Everything downstream (derive, render, stats, the match index) reads this model and never the raw
JSON, so the field names of the data format are translated in exactly one place. Fields the model
does not know (extension keys `x-…`, or keys a schema given by --schema allows) are kept as flattened
`extra` pairs so that full.md can still show them: full.md is lossless (docs/build-directory.md,
"Losslessness").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from capidx.compiler.errors import InvalidError
from capidx.compiler.markup import DOCUMENTATION_KEYS, defused
from capidx.schema.text import slugify

# (dotted key, value as text) for keys the model does not know, in document order.
Extra = tuple[tuple[str, str], ...]

_SOURCE_KEYS = frozenset(
    "url description sourceGranularity verifiedDate publishedDate status supersededBy excerpt".split()
)
_NOTES_KEYS = frozenset("setup configFile startUrl gotchas".split())
_CAPABILITY_KEYS = frozenset(
    """category name description available terminology tier introducedIn maturityLevel limitations
    requirements status deprecatedDate supersededBy sources implementationNotes aliases triggers useWhen""".split()
)
_AGENT_KEYS = frozenset("name vendor version lastUpdated aliases".split())
# Top-level keys of a capability document; `$schema` and `$comment` are build-only (they name the schema
# and note things for the file's editors, not the agent: docs/build-directory.md, "Losslessness").
_DOCUMENT_KEYS = frozenset("$schema $comment agent capabilities integrations models documentation".split())
_INTEGRATION_KEYS = frozenset("platform supported features".split())
_MODEL_KEYS = frozenset("name provider available tier note".split())


class CatalogError(InvalidError):
    """The documents passed validation but cannot form a catalog (e.g. an agent id that is not a slug)."""


@dataclass(frozen=True)
class Source:
    url: str
    description: str
    granularity: str
    verified_date: str | None = None
    published_date: str | None = None
    status: str | None = None
    superseded_by: str | None = None
    excerpt: str | None = None
    extra: Extra = ()


@dataclass(frozen=True)
class ImplementationNotes:
    setup: str | None = None
    config_file: str | None = None
    start_url: str | None = None
    gotchas: tuple[str, ...] = ()
    extra: Extra = ()


@dataclass(frozen=True)
class UseWhen:
    pattern: str
    confidence: float


@dataclass(frozen=True)
class Capability:
    """One agent's record of one capability."""

    agent: str
    name: str
    slug: str
    category: str
    description: str
    available: bool
    terminology: str | None = None
    tier: str | None = None
    introduced_in: str | None = None
    maturity: str | None = None
    status: str | None = None
    deprecated_date: str | None = None
    superseded_by: str | None = None
    limitations: tuple[str, ...] = ()
    requirements: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()
    notes: ImplementationNotes | None = None
    aliases: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()
    use_when: tuple[UseWhen, ...] = ()
    extra: Extra = ()

    @property
    def deprecated(self) -> bool:
        """Deprecated by its status or its maturity (the schema allows either)."""
        return "deprecated" in (self.status, self.maturity)


@dataclass(frozen=True)
class Integration:
    platform: str | None
    supported: bool | None
    features: tuple[str, ...] = ()
    extra: Extra = ()


@dataclass(frozen=True)
class Model:
    name: str | None
    provider: str | None = None
    available: bool | None = None
    tier: str | None = None
    note: str | None = None
    extra: Extra = ()


@dataclass(frozen=True)
class Agent:
    id: str
    name: str
    vendor: str
    version: str
    last_updated: str
    capabilities: tuple[Capability, ...]  # sorted by (category, name)
    integrations: tuple[Integration, ...] = ()
    models: tuple[Model, ...] = ()
    documentation: tuple[tuple[str, str], ...] = ()  # (key, url), DOCUMENTATION_KEYS order, then others
    extra: Extra = ()
    aliases: tuple[str, ...] = ()  # other names people use for the agent (`agent.aliases`)


@dataclass(frozen=True)
class Vocabulary:
    """How people ask for a capability: its aliases, trigger phrases and useWhen patterns."""

    aliases: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()
    use_when: tuple[UseWhen, ...] = ()

    @classmethod
    def of(cls, record: Capability) -> Vocabulary:
        return cls(record.aliases, record.triggers, record.use_when)


@dataclass(frozen=True)
class CanonicalCapability:
    """A capability name shared across agents; `records` holds one record per agent that mentions it."""

    slug: str
    name: str
    category: str
    records: tuple[Capability, ...]  # sorted by agent id
    table_aliases: tuple[str, ...] = ()  # alias-table phrases that point here, sorted
    # The vocabulary two or more records share (the most common value; a lone record's own): documents print it
    # once and show a record's own only where it differs.
    common: Vocabulary = Vocabulary()

    def record(self, agent_id: str) -> Capability | None:
        for record in self.records:
            if record.agent == agent_id:
                return record
        return None

    @property
    def available_for(self) -> tuple[str, ...]:
        return tuple(record.agent for record in self.records if record.available)

    @property
    def table_only_aliases(self) -> tuple[str, ...]:
        """The alias table's phrases for this capability that no record gives (case aside): printed beside the
        shared vocabulary, while a phrase a record gives stays that record's."""
        given = {alias.casefold() for record in self.records for alias in record.aliases}
        return tuple(phrase for phrase in self.table_aliases if phrase.casefold() not in given)


@dataclass(frozen=True)
class Catalog:
    agents: tuple[Agent, ...]  # sorted by id
    capabilities: tuple[CanonicalCapability, ...]  # sorted by slug
    alias_table: tuple[tuple[str, str], ...] = ()  # (phrase, slug), sorted by phrase
    defined_categories: tuple[str, ...] = ()  # every category the schema defines, used or not, sorted

    @property
    def agent_ids(self) -> tuple[str, ...]:
        return tuple(agent.id for agent in self.agents)

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(sorted({capability.category for capability in self.capabilities}))

    def by_category(self) -> dict[str, tuple[CanonicalCapability, ...]]:
        groups: dict[str, list[CanonicalCapability]] = {category: [] for category in self.categories}
        for capability in self.capabilities:
            groups[capability.category].append(capability)
        return {category: tuple(items) for category, items in groups.items()}


def build_catalog(
    documents: Iterable[tuple[str, Mapping[str, Any]]],
    aliases: Mapping[str, Any] | None,
    defined_categories: Iterable[str] = (),
) -> Catalog:
    """The catalog for validated documents, given as (agent id, parsed document) pairs (pure), and the categories
    their schema defines. Markdown link and image syntax in their text is made inert here, once for every artifact
    (`capidx.compiler.markup`)."""
    agents = tuple(sorted((_agent(agent_id, defused(data)) for agent_id, data in documents), key=lambda a: a.id))
    aliases = defused(aliases) if aliases is not None else None
    canonical = _canonical(agents)
    return Catalog(
        agents=agents,
        capabilities=_attach_table_aliases(canonical, aliases),
        alias_table=_alias_table(canonical, aliases),
        defined_categories=tuple(sorted(set(defined_categories))),
    )


def _agent(agent_id: str, data: Mapping[str, Any]) -> Agent:
    if slugify(agent_id) != agent_id:
        raise CatalogError(
            f"agent directory name '{agent_id}' is not a valid agent id: use lower-case letters, digits "
            f"and single hyphens (e.g. '{slugify(agent_id) or 'my-agent'}')"
        )
    head = data["agent"]
    capabilities = tuple(
        sorted((_capability(agent_id, item) for item in data["capabilities"]), key=lambda c: (c.category, c.name))
    )
    documentation = data.get("documentation") or {}
    ordered_docs = [key for key in DOCUMENTATION_KEYS if key in documentation]
    return Agent(
        id=agent_id,
        name=head["name"],
        vendor=head["vendor"],
        version=head["version"],
        last_updated=head["lastUpdated"],
        aliases=tuple(head.get("aliases", ())),
        capabilities=capabilities,
        integrations=tuple(_integration(item) for item in data.get("integrations", ())),
        models=tuple(_model(item) for item in data.get("models", ())),
        documentation=tuple((key, str(documentation[key])) for key in ordered_docs),
        extra=_extra(head, _AGENT_KEYS, "agent.")
        + _extra(data, _DOCUMENT_KEYS)
        + _extra(documentation, frozenset(DOCUMENTATION_KEYS), "documentation."),
    )


def _capability(agent_id: str, item: Mapping[str, Any]) -> Capability:
    slug = slugify(item["name"])
    if not slug:
        raise CatalogError(f"{agent_id}: capability name {item['name']!r} has no letters or digits to form a slug")
    notes = item.get("implementationNotes")
    return Capability(
        agent=agent_id,
        name=item["name"],
        slug=slug,
        category=item["category"],
        description=item["description"],
        available=bool(item["available"]),
        terminology=item.get("terminology"),
        tier=item.get("tier"),
        introduced_in=item.get("introducedIn"),
        maturity=item.get("maturityLevel"),
        status=item.get("status"),
        deprecated_date=item.get("deprecatedDate"),
        superseded_by=item.get("supersededBy"),
        limitations=tuple(item.get("limitations", ())),
        requirements=tuple(item.get("requirements", ())),
        sources=tuple(_source(source) for source in item.get("sources", ())),
        notes=_notes(notes) if notes is not None else None,
        aliases=tuple(item.get("aliases", ())),
        triggers=tuple(item.get("triggers", ())),
        use_when=tuple(UseWhen(rule["pattern"], rule["confidence"]) for rule in item.get("useWhen", ())),
        extra=_extra(item, _CAPABILITY_KEYS),
    )


def _source(item: Mapping[str, Any]) -> Source:
    return Source(
        url=item["url"],
        description=item["description"],
        granularity=item["sourceGranularity"],
        verified_date=item.get("verifiedDate"),
        published_date=item.get("publishedDate"),
        status=item.get("status"),
        superseded_by=item.get("supersededBy"),
        excerpt=item.get("excerpt"),
        extra=_extra(item, _SOURCE_KEYS),
    )


def _notes(item: Mapping[str, Any]) -> ImplementationNotes:
    return ImplementationNotes(
        setup=item.get("setup"),
        config_file=item.get("configFile"),
        start_url=item.get("startUrl"),
        gotchas=tuple(item.get("gotchas", ())),
        extra=_extra(item, _NOTES_KEYS),
    )


def _integration(item: Mapping[str, Any]) -> Integration:
    return Integration(
        platform=item.get("platform"),
        supported=item.get("supported"),
        features=tuple(item.get("features", ())),
        extra=_extra(item, _INTEGRATION_KEYS),
    )


def _model(item: Mapping[str, Any]) -> Model:
    return Model(
        name=item.get("name"),
        provider=item.get("provider"),
        available=item.get("available"),
        tier=item.get("tier"),
        note=item.get("note"),
        extra=_extra(item, _MODEL_KEYS),
    )


def _extra(item: Mapping[str, Any], known: frozenset[str], prefix: str = "") -> Extra:
    """Unknown keys flattened to (dotted key, text) pairs; nested values are walked."""
    if item.keys() <= known:  # the usual case, checked at C speed
        return ()
    pairs: list[tuple[str, str]] = []
    for key, value in item.items():
        if key not in known:
            pairs.extend(_flatten(f"{prefix}{key}", value))
    return tuple(pairs)


def _flatten(key: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        return [pair for sub, inner in value.items() for pair in _flatten(f"{key}.{sub}", inner)]
    if isinstance(value, list):
        return [pair for index, inner in enumerate(value) for pair in _flatten(f"{key}[{index}]", inner)]
    return [(key, scalar_text(value))]


def scalar_text(value: Any) -> str:
    """How a JSON scalar is shown in Markdown: strings verbatim, JSON spelling for the rest."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _canonical(agents: Sequence[Agent]) -> tuple[CanonicalCapability, ...]:
    groups: dict[str, list[Capability]] = {}
    for agent in agents:
        seen: set[str] = set()
        for record in agent.capabilities:
            if record.slug in seen:  # a duplicate within one agent: validate reports it; keep the first
                continue
            seen.add(record.slug)
            groups.setdefault(record.slug, []).append(record)
    return tuple(
        CanonicalCapability(
            slug=slug,
            name=_most_common(record.name for record in records),
            category=_most_common(record.category for record in records),
            records=tuple(sorted(records, key=lambda r: r.agent)),
            common=_common_vocabulary(sorted(records, key=lambda r: r.agent)),
        )
        for slug, records in sorted(groups.items())
    )


def _most_common(values: Iterable[str]) -> str:
    """The most frequent spelling; ties go to the alphabetically first (deterministic)."""
    counts = Counter(values)
    return min(counts, key=lambda value: (-counts[value], value))


def _common_vocabulary(records: Sequence[Capability]) -> Vocabulary:
    """Per field, the value most records have (ties: the first agent's, deterministic), when two or more records
    give it or there is one record: a value only one of several records gives is that agent's own, and shown as
    shared it would be credited to agents that never said it."""

    def pick(values: list[Any]) -> Any:
        counts = Counter(values)
        best = max(values, key=lambda value: counts[value])  # max keeps the first of equals
        return best if counts[best] > 1 or len(values) == 1 else ()

    return Vocabulary(
        aliases=pick([record.aliases for record in records]),
        triggers=pick([record.triggers for record in records]),
        use_when=pick([record.use_when for record in records]),
    )


def _alias_table(
    canonical: Sequence[CanonicalCapability], aliases: Mapping[str, Any] | None
) -> tuple[tuple[str, str], ...]:
    if not aliases:
        return ()
    known = {capability.slug for capability in canonical}
    table = ((phrase, slugify(target)) for phrase, target in aliases.get("aliases", {}).items())
    # A target that names no capability is a validation error; the build keeps only resolvable rows.
    return tuple(sorted((phrase, slug) for phrase, slug in table if slug in known))


def _attach_table_aliases(
    canonical: Sequence[CanonicalCapability], aliases: Mapping[str, Any] | None
) -> tuple[CanonicalCapability, ...]:
    by_slug: dict[str, list[str]] = {}
    for phrase, slug in _alias_table(canonical, aliases):
        by_slug.setdefault(slug, []).append(phrase)
    return tuple(
        replace(capability, table_aliases=tuple(sorted(by_slug.get(capability.slug, ())))) for capability in canonical
    )
