"""Snippets: the few lines per capability the server packs into budgeted suggestions (kind `snippet`).

`tools/snippets/<agent>/<capability>.md` for every capability an agent's file records (availability,
tier, maturity, description, setup and config file) and `tools/snippets/_all/<capability>.md` for the
canonical capability (category, the agents that have it or lack it, those with no record of it, one
description with the agent whose record it is): the server answers with it for an agent with no record.
Rendered with the `snippet.md.j2` template, so a project can restyle them; measured like every artifact, so the server
sums the manifest's `tokens` instead of running a tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from capidx.compiler.artifacts import ALL, Artifact, make_artifact
from capidx.compiler.catalog import Catalog
from capidx.compiler.derive.enhance import Enhanced

TEMPLATE = "snippet"


def snippet_artifacts(
    catalog: Catalog, render: Callable[..., str], prefix: str, enhanced: Enhanced
) -> Iterator[Artifact]:
    """One snippet per recorded agent × capability pair, then one per canonical capability."""
    agents = {agent.id: agent for agent in catalog.agents}
    for capability in catalog.capabilities:
        recorded = {record.agent for record in capability.records}
        for record in capability.records:
            agent = agents[record.agent]
            yield make_artifact(
                "snippet",
                f"tools/snippets/{agent.id}/{capability.slug}.md",
                prefix,
                f"Snippet: {capability.name} for {agent.id}",
                f"Suggestion text: {capability.name} in {agent.name}.",
                render(capability=capability, record=record, agent=agent, description=record.description),
                agent=agent.id,
                capability=capability.slug,
            )
        yield make_artifact(
            "snippet",
            f"tools/snippets/{ALL}/{capability.slug}.md",
            prefix,
            f"Snippet: {capability.name}",
            f"Suggestion text: {capability.name} across agents.",
            render(
                capability=capability,
                record=None,
                agent=None,
                description=(described := enhanced.described[capability.slug]).description,
                described_by=described.agent,
                unrecorded=[agent_id for agent_id in agents if agent_id not in recorded],
            ),
            capability=capability.slug,
        )
