"""index/match.json: everything the server needs to resolve names, computed once at build time (pure).

Keys are normalized with the server's own `normalize`/`terms` so build and run time cannot drift.
The shape is specified in docs/build-directory.md ("index/match.json").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from capidx.compiler.catalog import Agent, CanonicalCapability, Catalog
from capidx.server.text import STOP_WORDS, normalize, terms

INDEX_VERSION = 1

# Words too common in product names to stand for one agent on their own ("code" is Claude Code and
# VS Code; "cli" is half the market). They still count inside longer names ("copilot cli").
GENERIC_NAME_WORDS = frozenset(
    """ai agent agents app assistant chat cli code coder coding desktop dev editor extension ide in for of on
    plugin pro studio terminal the tool tools vs web""".split()
)


def match_index(catalog: Catalog) -> dict[str, Any]:
    entries = [_capability_entry(capability) for capability in catalog.capabilities]
    documents = [entry.pop("_terms") for entry in entries]
    for entry, counts in zip(entries, documents, strict=True):
        entry["terms"] = dict(sorted(counts.items()))
        entry["length"] = sum(counts.values())
    total = len(entries)
    frequency = Counter(term for counts in documents for term in counts)
    return {
        "version": INDEX_VERSION,
        "agents": [{"id": agent.id, "name": agent.name, "vendor": agent.vendor} for agent in catalog.agents],
        "agentNames": agent_names(catalog.agents),
        "capabilities": entries,
        "aliases": _aliases(catalog),
        "terminology": _terminology(catalog),
        "idf": {term: round(_idf(total, df), 6) for term, df in sorted(frequency.items())},
        "avgLength": round(sum(entry["length"] for entry in entries) / total, 6) if total else 0,
        "categories": list(catalog.categories),
    }


def _idf(total: int, df: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _capability_entry(capability: CanonicalCapability) -> dict[str, Any]:
    agents: dict[str, Any] = {}
    texts = [capability.name]
    aliases = set(capability.table_aliases)
    triggers: set[str] = set()
    use_when: set[tuple[str, float]] = set()
    for record in capability.records:
        agent: dict[str, Any] = {"available": record.available}
        if record.terminology:
            agent["terminology"] = record.terminology
            texts.append(record.terminology)
        agents[record.agent] = agent
        aliases.update(record.aliases)
        triggers.update(record.triggers)
        use_when.update((rule.pattern, rule.confidence) for rule in record.use_when)
        texts.append(record.description)
    texts.extend(sorted(aliases))
    texts.extend(sorted(triggers))
    return {
        "slug": capability.slug,
        "name": capability.name,
        "category": capability.category,
        "key": normalize(capability.name),
        "agents": agents,
        "aliases": sorted(aliases),
        "triggers": sorted(triggers),
        "useWhen": [{"pattern": pattern, "confidence": confidence} for pattern, confidence in sorted(use_when)],
        "_terms": Counter(term for text in texts for term in terms(text)),
    }


def _aliases(catalog: Catalog) -> dict[str, str]:
    """Normalized alias -> slug. The alias table wins over capabilities' own aliases; among those the
    first capability by slug wins (validate reports an alias claimed by two capabilities)."""
    table: dict[str, str] = {}
    for phrase, slug in catalog.alias_table:
        table.setdefault(normalize(phrase), slug)
    for capability in catalog.capabilities:
        for record in capability.records:
            for alias in record.aliases:
                table.setdefault(normalize(alias), capability.slug)
    return dict(sorted(table.items()))


def _terminology(catalog: Catalog) -> dict[str, list[dict[str, str]]]:
    wording: dict[str, set[tuple[str, str]]] = {}
    for capability in catalog.capabilities:
        for record in capability.records:
            if record.terminology:
                wording.setdefault(normalize(record.terminology), set()).add((record.agent, capability.slug))
    return {
        key: [{"agent": agent, "capability": slug} for agent, slug in sorted(pairs)]
        for key, pairs in sorted(wording.items())
    }


def agent_names(agents: Iterable[Agent]) -> dict[str, list[str]]:
    """Every way people name an agent -> the agent ids it may mean.

    Strong names (id, name, name without the vendor) belong to their agent alone; nicknames (single
    words of the id or name that are not generic, sub-phrases of the name, the vendor) map to every
    agent they fit, so "copilot" names both Copilot agents and is reported as ambiguous by the server.
    A strong name is never diluted by a nickname of another agent.
    """
    strong: dict[str, set[str]] = {}
    weak: dict[str, set[str]] = {}
    for agent in agents:
        for key in _strong_names(agent):
            strong.setdefault(key, set()).add(agent.id)
        for key in _nicknames(agent):
            weak.setdefault(key, set()).add(agent.id)
    merged = {key: ids for key, ids in weak.items() if key not in strong}
    merged.update(strong)
    return {key: sorted(ids) for key, ids in sorted(merged.items()) if key}


def _strong_names(agent: Agent) -> set[str]:
    name = normalize(agent.name)
    return {normalize(agent.id), agent.id.replace("-", ""), name, " ".join(_without_vendor(agent, name.split()))}


def _nicknames(agent: Agent) -> set[str]:
    words = _without_vendor(agent, normalize(agent.name).split())
    keys = {word for word in [*words, *normalize(agent.id).split()] if _distinctive(word)}
    for start in range(len(words)):
        for end in range(start + 2, len(words) + 1):
            phrase = words[start:end]
            if phrase[0] not in STOP_WORDS and phrase[-1] not in STOP_WORDS:
                keys.add(" ".join(phrase))
                if len(phrase) == 2:
                    keys.add("".join(phrase))  # "vs code" is also typed "vscode"
                if len(phrase) == 3 and not STOP_WORDS.intersection(phrase):
                    short = phrase[0][0] + phrase[1][0]  # "visual studio code" -> "vs code", "vscode"
                    keys.update((f"{short} {phrase[2]}", short + phrase[2]))
    keys.add(normalize(agent.vendor))
    return keys


def _without_vendor(agent: Agent, words: list[str]) -> list[str]:
    vendor = set(normalize(agent.vendor).split())
    kept = [word for word in words if word not in vendor]
    return kept or words


def _distinctive(word: str) -> bool:
    return word not in STOP_WORDS and word not in GENERIC_NAME_WORDS and len(word) > 1
