"""Which artifacts a catalog produces, with their paths, URIs, params and text (pure apart from Jinja).

Markdown (snippets included) goes through templates; tool documents and the index are JSON values
serialized with `capidx.schema.text.canonical_json`. The summary and stats are made last because they quote other
artifacts' sizes. `Enhanced` (capidx.compiler.derive.enhance) carries the relationships, triggers and
semantics, computed once per build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from json.encoder import encode_basestring  # what canonical_json uses for strings (ensure_ascii=False)
from typing import Any

import jinja2

from capidx.compiler.artifacts import ALL, Artifact, make_artifact
from capidx.compiler.catalog import CanonicalCapability, Capability, Catalog, Source
from capidx.compiler.config import DEFAULT_TITLE
from capidx.compiler.derive import tool_documents as derive
from capidx.compiler.derive.enhance import Enhanced
from capidx.compiler.derive.match import match_index
from capidx.compiler.derive.snippets import TEMPLATE as SNIPPET_TEMPLATE
from capidx.compiler.derive.snippets import snippet_artifacts
from capidx.compiler.derive.stats import stats_document
from capidx.compiler.diagnostics import escape_character
from capidx.compiler.render.environment import TemplateFailure, get_renderer, template_file
from capidx.compiler.render.overview import Fitted, fit, instructions_frame, memory_frame
from capidx.compiler.render.views import References
from capidx.schema.builddir import MATCH_INDEX
from capidx.schema.text import canonical_json

Renderer = Callable[..., str]
# The kinds of artifact a template renders, each from the template of its name (`_renderers`): those of
# `markdown_artifacts`, and the summary.
MARKDOWN_KINDS = ("full", "agent", "capability", "category", SNIPPET_TEMPLATE)
TEMPLATED_KINDS = frozenset({*MARKDOWN_KINDS, "summary"})


def _renderers(env: jinja2.Environment, *names: str) -> dict[str, Renderer]:
    return {name: _tidy(get_renderer(env, _template_name(name))) for name in names}


def _template_name(kind: str) -> str:
    return f"{kind}.md.j2"


def unencodable(env: jinja2.Environment, artifact: Artifact, error: UnicodeEncodeError) -> TemplateFailure:
    """The template error of an artifact whose text UTF-8 cannot encode: a lone surrogate, which only a template
    can make (a string escape such as `"\\ud800"`; validate refuses one in the data, YAML in capidx.yaml), named
    with the template, the artifact and the line of its text, as other template errors are (exit 1)."""
    line = error.object.count("\n", 0, error.start) + 1
    found = escape_character(error.object[error.start])
    where = template_file(env, _template_name(artifact.kind)) if artifact.kind in TEMPLATED_KINDS else None
    return TemplateFailure(
        f"{where or artifact.path}: {artifact.path}, line {line}, holds a lone surrogate ({found}), which UTF-8 "
        'cannot encode (a string escape in the template such as "\\ud800"? write the character itself)'
    )


def _tidy(render: Renderer) -> Renderer:
    """Every Markdown file ends with exactly one newline, whatever the template's whitespace."""
    return lambda **context: render(**context).rstrip() + "\n"


def markdown_artifacts(
    catalog: Catalog, env: jinja2.Environment, prefix: str, enhanced: Enhanced, *, title: str = DEFAULT_TITLE
) -> Iterator[Artifact]:
    """full.md, one document per agent, canonical capability and category, and the snippets.

    `title` (capidx.yaml's `title:`) is a variable of every template but the snippet's, for user templates that want it
    (docs/templates.md)."""
    render = _renderers(env, *MARKDOWN_KINDS)
    related = {capability.slug: enhanced.similar_rows(capability.slug) for capability in catalog.capabilities}
    names = {capability.slug: capability.name for capability in catalog.capabilities}  # a record may spell it otherwise
    shared = {"catalog": catalog, "prefix": prefix, "related": related, "title": title, "names": names}
    records = [record for agent in catalog.agents for record in agent.capabilities]
    yield make_artifact(
        "full",
        "full.md",
        prefix,
        "Full capability index",
        "Every capability of every agent with every detail; sources listed once and cited by number.",
        render["full"](
            **shared,
            refs=References(records),
            records=len(records),
            canonical={capability.slug: capability for capability in catalog.capabilities},
        ),
    )
    for agent in catalog.agents:
        recorded = {record.slug for record in agent.capabilities}
        yield make_artifact(
            "agent",
            f"agents/{agent.id}.md",
            prefix,
            f"{agent.name} capabilities",
            f"Every capability of {agent.name} ({agent.vendor}) with details and sources.",
            render["agent"](
                **shared,
                agent=agent,
                refs=References(agent.capabilities),
                unrecorded=[c.name for c in catalog.capabilities if c.slug not in recorded],
            ),
            agent=agent.id,
        )
    for capability in catalog.capabilities:
        yield make_artifact(
            "capability",
            f"capabilities/{capability.slug}.md",
            prefix,
            f"{capability.name} across agents",
            f"{capability.name}: comparison across agents, then each agent's details and sources.",
            render["capability"](**shared, capability=capability, refs=References(capability.records)),
            capability=capability.slug,
        )
    for category, capabilities in catalog.by_category().items():
        yield make_artifact(
            "category",
            f"categories/{category}.md",
            prefix,
            f"{category} capabilities",
            f"Capabilities in {category}: availability matrix and each agent's wording.",
            render["category"](**shared, category=category, capabilities=capabilities),
            category=category,
        )
    yield from snippet_artifacts(catalog, render[SNIPPET_TEMPLATE], prefix, enhanced)


def summary_artifact(
    catalog: Catalog,
    env: jinja2.Environment,
    prefix: str,
    full_tokens: int,
    *,
    title: str = DEFAULT_TITLE,
) -> Artifact:
    """summary.md: the matrix of every capability by agent, and where the details are."""
    text = _renderers(env, "summary")["summary"](
        catalog=catalog,
        title=title,
        prefix=prefix,
        full_tokens=full_tokens,
    )
    return make_artifact(
        "summary",
        "summary.md",
        prefix,
        "Capability summary",
        "Compact matrix of every capability by agent, grouped by category.",
        text,
    )


def overview_artifacts(
    catalog: Catalog, prefix: str, budgets: Mapping[str, int], *, title: str, build: str, make: str = "capidx build"
) -> list[tuple[Artifact, Fitted]]:
    """instructions.md (sent by `capidx serve --instructions summary`) and memory.md (the body `capidx inject`
    writes into a memory file), each in the richest form that fits its character budget. `build` and `make`: the
    build directory memory.md names, and the command it says makes it (`Config.build_label`, `build_command`)."""
    instructions = fit(catalog, instructions_frame(catalog, title), budgets["instructions"])
    memory = fit(catalog, memory_frame(catalog, title, build, make), budgets["memory"])
    return [
        (
            make_artifact(
                "instructions",
                "instructions.md",
                prefix,
                "Server instructions",
                f"The overview sent as the server's instructions ({instructions.form} form, "
                f"{instructions.characters:,} characters).",
                instructions.text,
            ),
            instructions,
        ),
        (
            make_artifact(
                "memory",
                "memory.md",
                prefix,
                "Memory-file overview",
                f"The overview for a memory file such as AGENTS.md ({memory.form} form, {memory.characters:,} "
                "characters).",
                memory.text,
            ),
            memory,
        ),
    ]


def stats_artifact(catalog: Catalog, old_days: int, prefix: str) -> Artifact:
    document = stats_document(catalog, old_days)
    return make_artifact(
        "stats",
        "stats.json",
        prefix,
        "Capability index statistics",
        "Counts of agents and capability records by agent, category, tier, maturity and status; source freshness.",
        canonical_json(document) + "\n",
    )


def _json(kind: str, path: str, prefix: str, title: str, blurb: str, value: Any, **params: str | None) -> Artifact:
    return make_artifact(kind, path, prefix, title, blurb, canonical_json(value), **params)


def tool_artifacts(
    catalog: Catalog, prefix: str, enhanced: Enhanced, indexed: Callable[[], Enhanced] | None = None
) -> Iterator[Artifact]:
    """lookup, compare, list and sources documents, and index/match.json, made last from `indexed()` when given
    (the build's enhanced index with its `injection` section, whose counts are collected only then).

    Texts are exactly `canonical_json` of the `derive` documents, but parts that many documents share are
    serialized once and spliced in: a capability's `similarTo` rows (in each agent's lookup and the
    comparison), a record's fields (in its lookup and the comparison), a source entry's details (in the three
    sources documents its citation is in) and a record's list row (in three lists). The documents themselves are
    not built.
    """
    rows = _SourceRows()
    for capability in catalog.capabilities:
        yield from _per_capability(catalog, capability, prefix, enhanced, rows)
    yield from _lists(catalog, prefix)
    yield from _agent_sources(catalog, prefix, rows)
    yield _json(
        "index",
        MATCH_INDEX,
        prefix,
        "Name resolution index",
        "Normalized agent and capability names, aliases, terminology, term counts for the BM25F ranking, "
        "descriptions, identifiers and relationships.",
        match_index(catalog, indexed() if indexed else enhanced),
    )


def _per_capability(
    catalog: Catalog, capability: CanonicalCapability, prefix: str, enhanced: Enhanced, rows: _SourceRows
) -> Iterator[Artifact]:
    slug, name = capability.slug, capability.name
    similar = enhanced.similar_rows(slug)
    similar_text = canonical_json(similar) if similar else None
    # Each record's fields are serialized once, member by member, for its lookup and the comparison.
    fields = {record.agent: _fields_texts(record) for record in capability.records}
    texts = _CapabilityTexts(capability)
    for agent_id in catalog.agent_ids:
        relationships = _relationships_text(enhanced.direct_relationships(capability, agent_id), similar_text)
        record = capability.record(agent_id)
        yield make_artifact(
            "lookup",
            f"tools/lookup/{agent_id}/{slug}.json",
            prefix,
            f"{name} for {agent_id}",
            f"Lookup answer: {name} for {agent_id}.",
            texts.lookup(agent_id, record, fields.get(agent_id), relationships),
            agent=agent_id,
            capability=slug,
        )
        yield make_artifact(
            "sources",
            f"tools/sources/{agent_id}/{slug}.json",
            prefix,
            f"Sources: {name} for {agent_id}",
            f"Sources cited for {name} by {agent_id}.",
            rows.document([record] if record else [], agent=agent_id, capability=slug),
            agent=agent_id,
            capability=slug,
        )
    relationships = _relationships_text(enhanced.direct_relationships(capability), similar_text)
    yield make_artifact(
        "compare",
        f"tools/compare/{slug}.json",
        prefix,
        f"Compare {name}",
        f"{name} compared across every agent.",
        texts.compare(catalog.agent_ids, fields, relationships),
        capability=slug,
    )
    yield make_artifact(
        "sources",
        f"tools/sources/{ALL}/{slug}.json",
        prefix,
        f"Sources: {name}",
        f"Sources cited for {name} by any agent.",
        rows.document(capability.records, agent=None, capability=slug),
        capability=slug,
    )


def _fields_texts(record: Capability) -> dict[str, str]:
    """`derive.record_fields(record)` with each member value serialized (canonical JSON)."""
    return {key: _value_text(value) for key, value in derive.record_fields(record).items()}


def _value_text(value: Any) -> str:
    """canonical_json(value); strings and booleans without going through the encoder."""
    if type(value) is str:
        return encode_basestring(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    return canonical_json(value)


def _strings_text(items: Sequence[str]) -> str:
    """canonical_json(list(items)) for strings."""
    return "[" + ",".join([encode_basestring(item) for item in items]) + "]"


def _filter_text(**params: str | None) -> str:
    """canonical_json of a document's `filter` (`derive.sources_filter`, `derive.list_document`): the given
    parameters with a value, whose names (agent, capability, category) are plain and in sorted order."""
    return "{" + ",".join([f'"{key}":{encode_basestring(value)}' for key, value in params.items() if value]) + "}"


class _CapabilityTexts:
    """canonical_json of a capability's lookup and compare documents (`derive.lookup_document`,
    `derive.compare_document`) from its records' serialized fields, without building the documents."""

    def __init__(self, capability: CanonicalCapability) -> None:
        self._capability = capability
        self._name = encode_basestring(capability.name)
        self._slug = encode_basestring(capability.slug)
        self._available_for = _strings_text(capability.available_for)
        self._unrecorded: str | None = None

    def lookup(
        self, agent_id: str, record: Capability | None, fields: dict[str, str] | None, relationships: str | None
    ) -> str:
        if record is None or fields is None:
            if self._unrecorded is None:
                self._unrecorded = canonical_json(
                    derive.identity(self._capability) | {"recorded": False}  # no `available`: no data, not a no
                )
            body = self._unrecorded
        else:
            members = {**fields, "name": self._name, "slug": self._slug, "recorded": "true"}
            members["category"] = encode_basestring(record.category)
            if record.limitations:
                members["limitations"] = _strings_text(record.limitations)
            if record.requirements:
                members["requirements"] = _strings_text(record.requirements)
            body = _object_text(members)
        text = f'{{"agent":{encode_basestring(agent_id)},"availableFor":{self._available_for},"capability":{body}'
        return f'{text},"relationships":{relationships}}}' if relationships is not None else text + "}"

    def compare(self, agent_ids: Sequence[str], fields: dict[str, dict[str, str]], relationships: str | None) -> str:
        entries = []
        for agent_id in agent_ids:
            record = self._capability.record(agent_id)
            agent = encode_basestring(agent_id)
            if record is None:
                entries.append(f'{{"agent":{agent},"recorded":false}}')
                continue
            compared = {key: text for key, text in fields[agent_id].items() if key not in derive.NOT_COMPARED}
            if record.limitations:  # what a comparison is read for, as in the lookup
                compared["limitations"] = _strings_text(record.limitations)
            if record.requirements:
                compared["requirements"] = _strings_text(record.requirements)
            entries.append(f'{{"agent":{agent},{_object_text(compared)[1:]}')  # "agent" sorts before the rest
        capability = self._capability
        identity = canonical_json(derive.identity(capability))
        text = f'{{"agents":[{",".join(entries)}],"capability":{identity}'
        return f'{text},"relationships":{relationships}}}' if relationships is not None else text + "}"


def _relationships_text(direct: dict[str, Any], similar_text: str | None) -> str | None:
    """canonical_json of `Enhanced.relationships` from its agent-dependent part and the serialized `similarTo`;
    None when empty (the document then has no `relationships`, as `derive` leaves it out)."""
    if not direct and similar_text is None:
        return None
    return _with_member(direct, "similarTo", similar_text)


def _object_text(members: dict[str, str]) -> str:
    """canonical_json of an object whose member values are already canonical JSON: keys sorted, compact."""
    return "{" + ",".join([f"{_key_text(key)}:{members[key]}" for key in sorted(members)]) + "}"


@lru_cache(maxsize=64)
def _key_text(key: str) -> str:
    """canonical_json of a member name (the few names `_with_member` is given, so the memo stays tiny)."""
    return canonical_json(key)


def _with_member(document: dict[str, Any], key: str, text: str | None) -> str:
    """canonical_json of `document` with `key` set to the value serialized as `text` (left out when None)."""
    if text is None:
        return canonical_json(document)
    if all(other < key for other in document):  # the usual case: the new member goes last
        head = canonical_json(document)
        return f"{head[:-1]}{',' if document else ''}{_key_text(key)}:{text}}}"
    members = {other: canonical_json(value) for other, value in document.items()}
    members[key] = text
    return _object_text(members)


class _SourceRows:
    """Sources documents made from citations whose details are serialized once each.

    A citation is in its record's agent and capability document, the capability's `_all` document and the
    agent's `_all` document, with the same details but not the same keys naming its record (those depend on the
    document's filter), so only the details are kept, keyed by the identity of the source object, which the
    catalog keeps alive for the whole of `tool_artifacts`; the memo goes with this object at the end of it.
    """

    def __init__(self) -> None:
        self._details: dict[int, str] = {}

    def document(self, records: Sequence[Capability], *, agent: str | None, capability: str | None) -> str:
        """`canonical_json(derive.sources_document(records, agent=agent, capability=capability))`."""
        rows = ",".join([self._row(citations, agent, capability) for citations in derive.citations_by_url(records)])
        return f'{{"filter":{_filter_text(agent=agent, capability=capability)},"sources":[{rows}]}}'

    def _row(self, citations: list[tuple[Capability, Source]], agent: str | None, capability: str | None) -> str:
        """`canonical_json(derive.source_row(citations, ...))`: "citations" sorts before "url"."""
        texts = ",".join([self._citation(record, source, agent, capability) for record, source in citations])
        return f'{{"citations":[{texts}],"url":{encode_basestring(citations[0][1].url)}}}'

    def _citation(self, record: Capability, source: Source, agent: str | None, capability: str | None) -> str:
        """`canonical_json(derive.citation_fields(...))`: the record's keys, which the filter leaves in ("agent"
        and "capability", in that order), sort before "description", the first of the details."""
        details = self._details.get(id(source))
        if details is None:
            details = self._details[id(source)] = canonical_json(derive.citation_details(source))
        cites = derive.citation_record(record, agent=agent, capability=capability)
        if not cites:
            return details
        head = ",".join([f"{_key_text(key)}:{encode_basestring(value)}" for key, value in cites.items()])
        return f"{{{head},{details[1:]}"


def _lists(catalog: Catalog, prefix: str) -> Iterator[Artifact]:
    by_agent: dict[str, list[tuple[CanonicalCapability, Capability]]] = {}
    by_category: dict[str, list[tuple[CanonicalCapability, Capability]]] = {}
    by_pair: dict[tuple[str, str], list[tuple[CanonicalCapability, Capability]]] = {}
    for capability in catalog.capabilities:
        for record in capability.records:
            pair = (capability, record)
            by_agent.setdefault(record.agent, []).append(pair)
            by_category.setdefault(record.category, []).append(pair)
            by_pair.setdefault((record.agent, record.category), []).append(pair)
    rows = _ListRows()
    for agent_id, pairs in sorted(by_agent.items()):
        yield _list(prefix, rows, pairs, agent_id, None)
    for category, pairs in sorted(by_category.items()):
        yield _list(prefix, rows, pairs, None, category)
    for (agent_id, category), pairs in sorted(by_pair.items()):
        yield _list(prefix, rows, pairs, agent_id, category)


def _list(
    prefix: str,
    rows: _ListRows,
    pairs: list[tuple[CanonicalCapability, Capability]],
    agent: str | None,
    category: str | None,
) -> Artifact:
    scope = " in ".join(part for part in (agent, category) if part)
    return make_artifact(
        "list",
        f"tools/list/{agent or ALL}/{category or ALL}.json",
        prefix,
        f"Capabilities: {scope}",
        f"List of capabilities: {scope}.",
        rows.document(pairs, agent=agent, category=category),
        agent=agent,
        category=category,
    )


class _ListRows:
    """List documents made from rows serialized once per record (each record is in three lists)."""

    def __init__(self) -> None:
        self._rows: dict[int, str] = {}

    def document(
        self, pairs: list[tuple[CanonicalCapability, Capability]], *, agent: str | None, category: str | None
    ) -> str:
        """`canonical_json(derive.list_document(pairs, agent=agent, category=category))`."""
        if agent is None:
            ordered = sorted(pairs, key=lambda pair: (pair[1].category, pair[0].slug, pair[1].agent))
            # "agent" sorts before every other member of a row
            texts = [f'{{"agent":{encode_basestring(pair[1].agent)},{self._row(*pair)[1:]}' for pair in ordered]
        else:
            ordered = sorted(pairs, key=lambda pair: (pair[1].category, pair[0].slug))
            texts = [self._row(*pair) for pair in ordered]
        return f'{{"capabilities":[{",".join(texts)}],"filter":{_filter_text(agent=agent, category=category)}}}'

    def _row(self, capability: CanonicalCapability, record: Capability) -> str:
        """A row without `agent` (the record is only in this catalog's lists, so its id is a stable key)."""
        key = id(record)
        text = self._rows.get(key)
        if text is None:
            text = self._rows[key] = canonical_json(derive.list_row(capability, record))
        return text


def _agent_sources(catalog: Catalog, prefix: str, rows: _SourceRows) -> Iterator[Artifact]:
    for agent in catalog.agents:
        yield make_artifact(
            "sources",
            f"tools/sources/{agent.id}/{ALL}.json",
            prefix,
            f"Sources: {agent.id}",
            f"Every source cited by {agent.id}.",
            rows.document(agent.capabilities, agent=agent.id, capability=None),
            agent=agent.id,
        )
