"""Tools: four read-only lookups (and an optional index tool) answered with precompiled documents.

Plain functions over a snapshot, tested directly. Each call validates its arguments against the
published input schema (a failure is a tool result with `isError: true`, so the model sees it and
can correct itself: SEP-1303), resolves names (`capidx.server.resolve`), finds the document by
`(kind, params)` and returns its text unchanged as the text content and its parsed value as
`structuredContent`. How names were resolved goes in the result's `_meta` under
`capidx/resolution`, never into the document.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import mcp_types as types

from capidx.server.resolve import Resolution, resolve_agent, resolve_capability, resolve_category
from capidx.server.schema_check import SchemaError, Validator
from capidx.server.snapshot import Artifact, Snapshot

RESOLUTION_META = "capidx/resolution"
URI_META = "capidx/uri"
MAX_NAME = 200
MAX_ARGUMENT_BYTES = 16_384


class ToolName(StrEnum):
    LOOKUP = "lookup_capability"
    COMPARE = "compare_capability"
    LIST = "list_capabilities"
    SOURCES = "get_sources"
    INDEX = "get_capability_index"


def dumps(value: Any) -> str:
    """The build's compact JSON (docs/build-directory.md, "Tool documents")."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# --- schemas ----------------------------------------------------------------------------------------


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": MAX_NAME, "description": description}


_AGENT = "Agent id or name"
_CAPABILITY = "Capability name, alias or an agent's own term"
_ARRAY = {"type": "array"}
_OBJECT = {"type": "object"}


def _input(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


INPUT_SCHEMAS: dict[ToolName, dict[str, Any]] = {
    ToolName.LOOKUP: _input({"agent": _text(_AGENT), "capability": _text(_CAPABILITY)}, ("agent", "capability")),
    ToolName.COMPARE: _input(
        {
            "capability": _text(_CAPABILITY),
            "agents": {"type": "array", "items": _text(_AGENT), "maxItems": 20, "description": "Only these agents"},
        },
        ("capability",),
    ),
    ToolName.LIST: _input({"agent": _text(_AGENT), "category": _text("Category")}),
    ToolName.SOURCES: _input({"agent": _text(_AGENT), "capability": _text(_CAPABILITY)}),
}

# Loose on purpose: documents, or `candidates` when a name had no clear match.
OUTPUT_SCHEMAS: dict[ToolName, dict[str, Any]] = {
    ToolName.LOOKUP: {
        "type": "object",
        "properties": {
            "agent": {"type": "string"},
            "capability": _OBJECT,
            "availableFor": _ARRAY,
            "candidates": _ARRAY,
        },
    },
    ToolName.COMPARE: {"type": "object", "properties": {"capability": _OBJECT, "agents": _ARRAY, "candidates": _ARRAY}},
    ToolName.LIST: {"type": "object", "properties": {"filter": _OBJECT, "capabilities": _ARRAY}},
    ToolName.SOURCES: {"type": "object", "properties": {"filter": _OBJECT, "sources": _ARRAY, "candidates": _ARRAY}},
}

READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)


def index_input_schema(variants: tuple[str, ...]) -> dict[str, Any]:
    return _input({"variant": {"type": "string", "enum": list(variants)}}, ("variant",))


def _descriptions(snapshot: Snapshot) -> dict[ToolName, str]:
    agents = ", ".join(snapshot.index.agents)
    categories = ", ".join(snapshot.index.categories)
    return {
        ToolName.LOOKUP: (
            f"One agent's support for one capability: availability, tier, setup, limits, sources. Agents: {agents}. "
            "If the agent lacks it: available=false and availableFor."
        ),
        ToolName.COMPARE: "Compare one capability across agents (optionally only some).",
        ToolName.LIST: f"List capabilities of an agent, a category, or both. Categories: {categories}.",
        ToolName.SOURCES: "Documentation sources for an agent, a capability, or both.",
    }


def tool_list(snapshot: Snapshot, variants: tuple[str, ...] | None) -> list[types.Tool]:
    """The tools for this snapshot; `variants` (exposed index variants) adds get_capability_index."""
    descriptions = _descriptions(snapshot)
    tools = [
        types.Tool(
            name=name.value,
            description=descriptions[name],
            input_schema=INPUT_SCHEMAS[name],
            output_schema=OUTPUT_SCHEMAS[name],
            annotations=READ_ONLY,
        )
        for name in (ToolName.LOOKUP, ToolName.COMPARE, ToolName.LIST, ToolName.SOURCES)
    ]
    if variants:
        primary = snapshot.encodings[0]
        sizes = ", ".join(
            f"{v} {artifact.tokens.get(primary, '?')} {primary}" for v in variants if (artifact := snapshot.variant(v))
        )
        tools.append(
            types.Tool(
                name=ToolName.INDEX.value,
                description=f"The capability index as one document (tokens: {sizes}).",
                input_schema=index_input_schema(variants),
                annotations=READ_ONLY,
            )
        )
    return tools


# --- validation -------------------------------------------------------------------------------------


class UnknownTool(Exception):
    """Maps to JSON-RPC -32602: the tool does not exist on this server."""


@dataclass(frozen=True)
class Validators:
    """Compiled input validators, built once per server."""

    by_name: Mapping[str, Validator]

    @classmethod
    def for_variants(cls, variants: tuple[str, ...] | None) -> Validators:
        schemas = {name.value: schema for name, schema in INPUT_SCHEMAS.items()}
        if variants:
            schemas[ToolName.INDEX.value] = index_input_schema(variants)
        return cls({name: Validator(schema) for name, schema in schemas.items()})

    def problems(self, name: str, arguments: Mapping[str, Any]) -> list[str]:
        errors = sorted(self.by_name[name].iter_errors(arguments), key=lambda e: list(map(str, e.absolute_path)))
        return [_explain(error) for error in errors[:5]]


def _explain(error: SchemaError) -> str:
    """A short message that never echoes the (possibly huge) offending value."""
    where = ".".join(str(part) for part in error.absolute_path) or "arguments"
    schema = error.schema if isinstance(error.schema, dict) else {}
    explain = {
        "type": lambda: f"must be a {schema.get('type')}",
        "maxLength": lambda: f"must be at most {error.validator_value} characters",
        "minLength": lambda: "must not be empty",
        "maxItems": lambda: f"must have at most {error.validator_value} items",
        "required": lambda: f"missing required argument {error.message.split(' ', 1)[0]}",
        "additionalProperties": lambda: (
            "unknown argument(s): "
            + ", ".join(sorted(map(repr, set(error.instance) - set(schema.get("properties", {}))))[:5])
        ),
        "enum": lambda: f"must be one of {', '.join(map(str, error.validator_value))}",
    }.get(str(error.validator))
    return f"{where}: {explain() if explain else 'invalid value'}"


# --- results ----------------------------------------------------------------------------------------


def _error(message: str, **resolution: Resolution | list[Resolution]) -> types.CallToolResult:
    meta = {RESOLUTION_META: _describe(resolution)} if resolution else None
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True, _meta=meta)


def _describe(resolution: Mapping[str, Resolution | list[Resolution]]) -> dict[str, Any]:
    return {
        key: [r.describe() for r in value] if isinstance(value, list) else value.describe()
        for key, value in resolution.items()
    }


def _document(artifact: Artifact, **resolution: Resolution | list[Resolution]) -> types.CallToolResult:
    """The precompiled document, byte for byte, with its parsed value."""
    return types.CallToolResult(
        content=[types.TextContent(text=artifact.text)],
        structured_content=artifact.value,
        _meta={RESOLUTION_META: _describe(resolution), URI_META: artifact.uri},
    )


def _synthesized(value: dict[str, Any], **resolution: Resolution | list[Resolution]) -> types.CallToolResult:
    """A value the build has no document for (a filtered comparison, an empty list, candidates)."""
    return types.CallToolResult(
        content=[types.TextContent(text=dumps(value))],
        structured_content=value,
        _meta={RESOLUTION_META: _describe(resolution)},
    )


def _agent_problem(resolution: Resolution) -> str:
    if resolution.status == "ambiguous":
        options = ", ".join(f"{c.value} ({c.label})" for c in resolution.candidates)
        return f"Agent {resolution.query!r} is ambiguous: it could be {options}. Call again with one id."
    closest = ", ".join(c.value for c in resolution.candidates)
    return f"Unknown agent {resolution.query!r}. Closest: {closest}."


def _capability_problem(resolution: Resolution) -> str:
    closest = ", ".join(f"{c.label} ({c.value})" for c in resolution.candidates)
    return f"No capability matches {resolution.query!r}. Closest: {closest}. Try list_capabilities to browse."


def _candidates(snapshot: Snapshot, resolution: Resolution, agent: str | None) -> dict[str, Any]:
    rows = []
    for candidate in resolution.candidates:
        entry = snapshot.index.capabilities[candidate.value]
        row = {"slug": entry.slug, "name": entry.name, "category": entry.category}
        row["matchConfidence"] = candidate.confidence
        if agent is not None:
            row["available"] = bool(entry.agents.get(agent, {}).get("available", False))
        rows.append(row)
    value: dict[str, Any] = {"query": resolution.query, "candidates": rows}
    if agent is not None:
        value["agent"] = agent
    value["hint"] = "No clear match: call again with one candidate's slug."
    return value


def _resolve_agents(snapshot: Snapshot, names: list[str]) -> tuple[list[Resolution], str | None]:
    resolutions = [resolve_agent(snapshot.index, name) for name in names]
    problems = [_agent_problem(r) for r in resolutions if not r.ok]
    return resolutions, " ".join(problems) or None


# --- the tools --------------------------------------------------------------------------------------


def lookup_capability(snapshot: Snapshot, agent: str, capability: str) -> types.CallToolResult:
    agent_res = resolve_agent(snapshot.index, agent)
    if not agent_res.ok:
        return _error(_agent_problem(agent_res), agent=agent_res)
    cap_res = resolve_capability(snapshot.index, capability, agent=agent_res.value)
    if cap_res.status == "ambiguous":
        return _synthesized(_candidates(snapshot, cap_res, agent_res.value), agent=agent_res, capability=cap_res)
    if not cap_res.ok:
        return _error(_capability_problem(cap_res), agent=agent_res, capability=cap_res)
    document = snapshot.find("lookup", agent=agent_res.value, capability=cap_res.value)
    if document is None:
        return _error(f"The build has no lookup document for {agent_res.value} / {cap_res.value}; rebuild it.")
    return _document(document, agent=agent_res, capability=cap_res)


def compare_capability(snapshot: Snapshot, capability: str, agents: list[str] | None = None) -> types.CallToolResult:
    cap_res = resolve_capability(snapshot.index, capability)
    if cap_res.status == "ambiguous":
        return _synthesized(_candidates(snapshot, cap_res, None), capability=cap_res)
    if not cap_res.ok:
        return _error(_capability_problem(cap_res), capability=cap_res)
    document = snapshot.find("compare", capability=cap_res.value)
    if document is None:
        return _error(f"The build has no comparison for {cap_res.value}; rebuild it.")
    if not agents:
        return _document(document, capability=cap_res)
    agent_res, problem = _resolve_agents(snapshot, agents)
    if problem:
        return _error(problem, capability=cap_res, agents=agent_res)
    wanted = {r.value for r in agent_res}
    value = dict(document.value)
    value["agents"] = [entry for entry in document.value["agents"] if entry.get("agent") in wanted]
    return _synthesized(value, capability=cap_res, agents=agent_res)


def list_capabilities(
    snapshot: Snapshot, agent: str | None = None, category: str | None = None
) -> types.CallToolResult:
    if agent is None and category is None:
        return _error("Give an agent, a category, or both (the full list is long: read the summary instead).")
    resolved: dict[str, Resolution] = {}
    if agent is not None:
        resolved["agent"] = resolve_agent(snapshot.index, agent)
        if not resolved["agent"].ok:
            return _error(_agent_problem(resolved["agent"]), **resolved)
    if category is not None:
        resolved["category"] = resolve_category(snapshot.index, category)
        if not resolved["category"].ok:
            options = ", ".join(c.value for c in resolved["category"].candidates)
            if resolved["category"].status == "ambiguous":
                return _error(f"Category {category!r} is ambiguous: it could be {options}.", **resolved)
            return _error(f"Unknown category {category!r}. Closest: {options}.", **resolved)
    params = {key: r.value for key, r in resolved.items()}
    document = snapshot.find("list", **params)
    if document is None:  # an agent with nothing in that category has no document
        return _synthesized({"filter": params, "capabilities": []}, **resolved)
    return _document(document, **resolved)


def get_sources(snapshot: Snapshot, agent: str | None = None, capability: str | None = None) -> types.CallToolResult:
    if agent is None and capability is None:
        return _error("Give an agent, a capability, or both.")
    resolved: dict[str, Resolution] = {}
    if agent is not None:
        resolved["agent"] = resolve_agent(snapshot.index, agent)
        if not resolved["agent"].ok:
            return _error(_agent_problem(resolved["agent"]), **resolved)
    agent_id = resolved["agent"].value if "agent" in resolved else None
    if capability is not None:
        resolved["capability"] = resolve_capability(snapshot.index, capability, agent=agent_id)
        if resolved["capability"].status == "ambiguous":
            return _synthesized(_candidates(snapshot, resolved["capability"], agent_id), **resolved)
        if not resolved["capability"].ok:
            return _error(_capability_problem(resolved["capability"]), **resolved)
    params = {key: r.value for key, r in resolved.items()}
    document = snapshot.find("sources", **params)
    if document is None:  # the agent has not recorded that capability: nothing cited
        return _synthesized({"filter": params, "sources": []}, **resolved)
    return _document(document, **resolved)


def get_capability_index(snapshot: Snapshot, variant: str) -> types.CallToolResult:
    artifact = snapshot.variant(variant)
    if artifact is None:
        return _error(f"This build has no {variant} document.")
    return types.CallToolResult(content=[types.TextContent(text=artifact.text)], _meta={URI_META: artifact.uri})


HANDLERS: dict[str, Callable[..., types.CallToolResult]] = {
    ToolName.LOOKUP.value: lookup_capability,
    ToolName.COMPARE.value: compare_capability,
    ToolName.LIST.value: list_capabilities,
    ToolName.SOURCES.value: get_sources,
    ToolName.INDEX.value: get_capability_index,
}


def call_tool(
    snapshot: Snapshot, validators: Validators, name: str, arguments: Mapping[str, Any] | None
) -> types.CallToolResult:
    """Validate and run one tool. Raises `UnknownTool` for a tool this server does not offer."""
    if name not in validators.by_name:
        raise UnknownTool(f"Unknown tool: {name!r}. Tools: {', '.join(validators.by_name)}")
    arguments = dict(arguments or {})
    if len(dumps(arguments).encode("utf-8")) > MAX_ARGUMENT_BYTES:
        return _error(f"Arguments too large (limit {MAX_ARGUMENT_BYTES} bytes): names are short strings.")
    problems = validators.problems(name, arguments)
    if problems:
        return _error(f"Invalid arguments for {name}: " + "; ".join(problems))
    return HANDLERS[name](snapshot, **arguments)
