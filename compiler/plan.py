"""Which artifacts a catalog produces, with their paths, URIs, params and text (pure apart from Jinja).

Markdown (snippets included) goes through templates; tool documents and the index are JSON values
serialized with `capidx.server.text.canonical_json`. The summary and stats are made last because they quote other
artifacts' sizes. `Enhanced` (capidx.compiler.enhance) carries the relationships, triggers and
semantics, computed once per build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jinja2

from capidx.compiler import derive
from capidx.compiler.artifacts import ALL, Artifact, Measured, make_artifact
from capidx.compiler.catalog import CanonicalCapability, Capability, Catalog
from capidx.compiler.enhance import Enhanced
from capidx.compiler.match import match_index
from capidx.compiler.render import get_renderer
from capidx.compiler.snippets import TEMPLATE as SNIPPET_TEMPLATE
from capidx.compiler.snippets import snippet_artifacts
from capidx.compiler.stats import stats_document
from capidx.compiler.triggers import compact_trigger_line
from capidx.compiler.views import References
from capidx.server.text import canonical_json

Renderer = Callable[..., str]


def _renderers(env: jinja2.Environment, *names: str) -> dict[str, Renderer]:
    return {name: _tidy(get_renderer(env, f"{name}.md.j2")) for name in names}


def _tidy(render: Renderer) -> Renderer:
    """Every Markdown file ends with exactly one newline, whatever the template's whitespace."""
    return lambda **context: render(**context).rstrip() + "\n"


def markdown_artifacts(
    catalog: Catalog, env: jinja2.Environment, prefix: str, enhanced: Enhanced
) -> Iterator[Artifact]:
    """full.md, one document per agent, canonical capability and category, and the snippets."""
    render = _renderers(env, "full", "agent", "capability", "category", SNIPPET_TEMPLATE)
    related = {capability.slug: enhanced.similar_rows(capability.slug) for capability in catalog.capabilities}
    shared = {"catalog": catalog, "prefix": prefix, "related": related}
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
        yield make_artifact(
            "agent",
            f"agents/{agent.id}.md",
            prefix,
            f"{agent.name} capabilities",
            f"Every capability of {agent.name} ({agent.vendor}) with details and sources.",
            render["agent"](**shared, agent=agent, refs=References(agent.capabilities)),
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
    catalog: Catalog, env: jinja2.Environment, prefix: str, full_tokens: int, enhanced: Enhanced
) -> Artifact:
    """`triggers`: the compact `verb→slugs` line (`triggers.compact_trigger_line`), "" when no verb qualifies.

    It is made from names and explicit triggers only: descriptions mention verbs in passing ("debug" in a
    description of usage metrics), and a line injected into every conversation must not send agents there.
    """
    text = _renderers(env, "summary")["summary"](
        catalog=catalog,
        prefix=prefix,
        full_tokens=full_tokens,
        triggers=compact_trigger_line(enhanced.named_triggers),
    )
    return make_artifact(
        "summary",
        "summary.md",
        prefix,
        "Capability summary",
        "Compact matrix of every capability by agent, grouped by category.",
        text,
    )


def stats_artifact(
    catalog: Catalog, measured: Sequence[Measured], encodings: Sequence[str], old_days: int, prefix: str
) -> Artifact:
    document = stats_document(catalog, measured, encodings, old_days)
    return make_artifact(
        "stats",
        "stats.json",
        prefix,
        "Capability index statistics",
        "Counts by category, tier, maturity and status; source freshness; description entropy; size and tokens of "
        "every artifact.",
        canonical_json(document) + "\n",
    )


def _json(kind: str, path: str, prefix: str, title: str, blurb: str, value: Any, **params: str | None) -> Artifact:
    return make_artifact(kind, path, prefix, title, blurb, canonical_json(value), **params)


def tool_artifacts(catalog: Catalog, prefix: str, enhanced: Enhanced) -> Iterator[Artifact]:
    """lookup, compare, list and sources documents, and index/match.json."""
    for capability in catalog.capabilities:
        yield from _per_capability(catalog, capability, prefix, enhanced)
    yield from _lists(catalog, prefix)
    yield from _agent_sources(catalog, prefix)
    yield _json(
        "index",
        "index/match.json",
        prefix,
        "Name resolution index",
        "Normalized agent and capability names, aliases, terminology, BM25 statistics, relationships and triggers.",
        match_index(catalog, enhanced),
    )


def _per_capability(
    catalog: Catalog, capability: CanonicalCapability, prefix: str, enhanced: Enhanced
) -> Iterator[Artifact]:
    slug, name = capability.slug, capability.name
    for agent_id in catalog.agent_ids:
        yield _json(
            "lookup",
            f"tools/lookup/{agent_id}/{slug}.json",
            prefix,
            f"{name} for {agent_id}",
            f"Lookup answer: {name} for {agent_id}.",
            derive.lookup_document(agent_id, capability, enhanced.relationships(capability, agent_id)),
            agent=agent_id,
            capability=slug,
        )
        record = capability.record(agent_id)
        yield _json(
            "sources",
            f"tools/sources/{agent_id}/{slug}.json",
            prefix,
            f"Sources: {name} for {agent_id}",
            f"Sources cited for {name} by {agent_id}.",
            derive.sources_document([record] if record else [], agent=agent_id, capability=slug),
            agent=agent_id,
            capability=slug,
        )
    yield _json(
        "compare",
        f"tools/compare/{slug}.json",
        prefix,
        f"Compare {name}",
        f"{name} compared across every agent.",
        derive.compare_document(catalog, capability, enhanced.relationships(capability)),
        capability=slug,
    )
    yield _json(
        "sources",
        f"tools/sources/{ALL}/{slug}.json",
        prefix,
        f"Sources: {name}",
        f"Sources cited for {name} by any agent.",
        derive.sources_document(capability.records, agent=None, capability=slug),
        capability=slug,
    )


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
    for agent_id, rows in sorted(by_agent.items()):
        yield _list(prefix, rows, agent_id, None)
    for category, rows in sorted(by_category.items()):
        yield _list(prefix, rows, None, category)
    for (agent_id, category), rows in sorted(by_pair.items()):
        yield _list(prefix, rows, agent_id, category)


def _list(
    prefix: str, rows: list[tuple[CanonicalCapability, Capability]], agent: str | None, category: str | None
) -> Artifact:
    scope = " in ".join(part for part in (agent, category) if part)
    return _json(
        "list",
        f"tools/list/{agent or ALL}/{category or ALL}.json",
        prefix,
        f"Capabilities: {scope}",
        f"List of capabilities: {scope}.",
        derive.list_document(rows, agent=agent, category=category),
        agent=agent,
        category=category,
    )


def _agent_sources(catalog: Catalog, prefix: str) -> Iterator[Artifact]:
    for agent in catalog.agents:
        yield _json(
            "sources",
            f"tools/sources/{agent.id}/{ALL}.json",
            prefix,
            f"Sources: {agent.id}",
            f"Every source cited by {agent.id}.",
            derive.sources_document(agent.capabilities, agent=agent.id, capability=None),
            agent=agent.id,
        )
