"""Tools: four read-only lookups (and an optional index tool) answered with precompiled documents.

Plain functions over a snapshot, tested directly. Each call validates its arguments against the
published input schema (a failure is a tool result with `isError: true`, so the model sees it and
can correct itself: SEP-1303), resolves names (`capidx.server.resolve`), finds the document by
`(kind, params)` and returns its text unchanged as the text content and its parsed value as
`structuredContent` (with `notes`, the text of the blocks after it, when there are any). How names were resolved
goes in the result's `_meta` under
`capidx/resolution`, never into the document.

What an answer says beside the document is made elsewhere, each by one module: `readings` (how a name
was read), `records` (no record, another agent's words, nothing cited), `unlisted` (what a list leaves out),
`unresolved` (candidates and budgeted suggestions) and `agent_args` (agent names joined or unknown).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

import mcp_types as types

from capidx.schema.text import canonical_json, normalize, plural
from capidx.server import agent_args, readings, records, unlisted, unresolved
from capidx.server.limits import clip
from capidx.server.matchindex import RESOLUTION_META, Resolution
from capidx.server.names import generic_agent, joins_names, resolve_agent, resolve_category
from capidx.server.resolve import resolve_capability
from capidx.server.snapshot import Artifact, Snapshot

URI_META = "capidx/uri"
BUDGET_META = "capidx/budget"  # a suggestions answer's tokens against its budget: `unresolved.suggestions`
MAX_NAME = 200
MAX_ARGUMENT_BYTES = 16_384
NAMED_UNKNOWN = 3  # unknown argument names an error names, each in at most UNKNOWN_NAME_CHARS characters
UNKNOWN_NAME_CHARS = 60
SAID_PROBLEMS = 5  # problems an invalid-arguments message names (a list too long may hold thousands of blanks)
# Claude Code cuts each tool description at 2,048 characters: every description stays within it.
MAX_DESCRIPTION = 2_048
# Agents a name of several may stand for in a list or sources answer without a category or capability (each agent's
# whole list is ~700-900 tokens on the bundled catalog, its sources ~1,700): past them, one narrows the question.
SEVERAL_WHOLE = 4


class ToolName(StrEnum):
    LOOKUP = "lookup_capability"
    COMPARE = "compare_capability"
    LIST = "list_capabilities"
    SOURCES = "get_sources"
    INDEX = "get_capability_index"


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
            "agents": {
                "type": "array",
                "items": _text(_AGENT),
                "maxItems": unresolved.EVERY_AGENT_NAMED,
                "description": "Only these agents",
            },
        },
        ("capability",),
    ),
    ToolName.LIST: _input({"agent": _text(_AGENT), "category": _text("Category")}),
    ToolName.SOURCES: _input({"agent": _text(_AGENT), "capability": _text(_CAPABILITY)}),
}

# Loose on purpose, a documented union (docs/server.md, "Response format"): the document, or
# `suggestions` (budgeted snippets) for free text and unclear names, or `candidates` (builds without snippets);
# with `notes` (`_with_notes`) when text follows it, left out here as any key the loose schemas allow: tools/list
# is sent in every session.
OUTPUT_SCHEMAS: dict[ToolName, dict[str, Any]] = {
    ToolName.LOOKUP: {
        "type": "object",
        "properties": {
            "agent": {"type": "string"},
            "capability": _OBJECT,
            "availableFor": _ARRAY,
            "agents": _ARRAY,
            "suggestions": _ARRAY,
            "candidates": _ARRAY,
        },
    },
    ToolName.COMPARE: {
        "type": "object",
        "properties": {"capability": _OBJECT, "agents": _ARRAY, "suggestions": _ARRAY, "candidates": _ARRAY},
    },
    ToolName.LIST: {"type": "object", "properties": {"filter": _OBJECT, "capabilities": _ARRAY}},
    ToolName.SOURCES: {
        "type": "object",
        "properties": {"filter": _OBJECT, "sources": _ARRAY, "agents": _ARRAY, "candidates": _ARRAY},
    },
}

READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)


def index_input_schema(variants: tuple[str, ...]) -> dict[str, Any]:
    return _input({"variant": {"type": "string", "enum": list(variants)}}, ("variant",))


def _descriptions(snapshot: Snapshot) -> dict[ToolName, str]:
    """What each tool does comes first, the names it accepts last, listed only as far as they fit
    `MAX_DESCRIPTION` (a client never shows the model what is past its cut, and says nothing)."""
    lookup = (
        "One agent's support for one capability: availability, setup, limits, sources. "
        "If the agent lacks it: available=false and availableFor; recorded=false: no data (unknown, not a no). "
        "Tier: cheapest plan with it (pro: paid individual plan or API); no tier: plan unknown."
    )
    listing = "List capabilities of an agent, a category, or both."
    return {
        ToolName.LOOKUP: lookup + named(" Agents: ", snapshot.index.agents, MAX_DESCRIPTION - len(lookup)),
        ToolName.COMPARE: (
            "Compare one capability across agents (optionally only some); recorded=false: no data (not a no)."
        ),
        ToolName.LIST: listing + named(" Categories: ", snapshot.index.categories, MAX_DESCRIPTION - len(listing)),
        ToolName.SOURCES: (
            "Documentation sources for an agent, a capability, or both (an agent alone: all its sources, a long list)."
        ),
    }


def named(label: str, names: Sequence[str], room: int) -> str:
    """`label` and as many `names` as fit in `room` characters, each whole, then how many more there are
    ("" when not even the label and one name fit)."""
    whole = f"{label}{', '.join(names)}."
    if len(whole) <= room:
        return whole
    shown = unlisted.fitting(names, room - len(label) - len(f" and {len(names):,} more."))
    return f"{label}{', '.join(shown)} and {len(names) - len(shown):,} more." if shown else ""


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
    """Input validators (`jsonschema`, Draft 2020-12) by tool name, each made on its tool's first call.

    Made on use, not at start: importing jsonschema costs ~0.1 s that `initialize` need not wait for.
    """

    by_name: Mapping[str, Mapping[str, Any]]  # tool name -> its input schema
    _made: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def for_variants(cls, variants: tuple[str, ...] | None) -> Validators:
        schemas = {name.value: schema for name, schema in INPUT_SCHEMAS.items()}
        if variants:
            schemas[ToolName.INDEX.value] = index_input_schema(variants)
        return cls(MappingProxyType(schemas))

    def problems(self, name: str, arguments: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
        """What is wrong with `arguments` (as `_listed` reads them), each said where the caller put it in `given`,
        the arguments as sent: a string read as a list is named as the argument the caller wrote."""
        errors = sorted(self._validator(name).iter_errors(arguments), key=lambda e: list(map(str, e.absolute_path)))
        found = [f"{_where(e.absolute_path, arguments, given)}: {_explain(e)}" for e in errors[:SAID_PROBLEMS]]
        # Blank names nothing, as empty does ('minLength'); said in code, not as a schema pattern that every
        # session's tools/list would carry.
        properties = self.by_name[name].get("properties", {})
        blank = [path for path, text in _strings(arguments, properties) if text and not text.strip()]
        found += [
            f"{_where(path, arguments, given)}: must not be empty" for path in blank[: SAID_PROBLEMS - len(found)]
        ]
        return found

    def _validator(self, name: str) -> Any:
        if name not in self._made:
            from jsonschema import Draft202012Validator

            checker = Draft202012Validator.FORMAT_CHECKER
            self._made[name] = Draft202012Validator(self.by_name[name], format_checker=checker)
        return self._made[name]


def _strings(
    arguments: Mapping[str, Any], properties: Mapping[str, Any]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Where (key, and index in a list) and what each string argument that must not be empty is, also each such
    string in a list."""
    for key, value in arguments.items():
        schema = properties.get(key, {})
        if isinstance(value, str) and "minLength" in schema:
            yield (key,), value
        if isinstance(value, list) and "minLength" in schema.get("items", {}):
            yield from (((key, i), item) for i, item in enumerate(value) if isinstance(item, str))


def _where(path: Sequence[Any], arguments: Mapping[str, Any], given: Mapping[str, Any]) -> str:
    """A problem's place as the caller wrote the arguments. A string `_listed` read as a list is no list to the
    caller: its one name is the argument itself (`agents: must not be empty`, not `agents.0`, an item never
    written), and of several names it separates by commas, the one in the Nth field is said as such (`agents (name
    2)`), empty fields counted as the caller counts them (`agent_args.comma_fields`)."""
    if not path:
        return "arguments"
    key, *within = path
    if within and isinstance(given.get(key), str) and isinstance(arguments.get(key), list):
        if len(arguments[key]) == 1:
            return str(key)
        place, _name = agent_args.comma_fields(given[key])[int(within[0])]
        return f"{key} (name {place})"
    return ".".join(map(str, path))


def _unknown(names: list[str]) -> str:
    """'unknown argument(s): 'foo', 'bar'': each name clipped (a key may be as long as the arguments' limit), at most
    `NAMED_UNKNOWN` of them, and how many more."""
    named = ", ".join(f"'{clip(name, UNKNOWN_NAME_CHARS)}'" for name in names[:NAMED_UNKNOWN])
    more = f" and {len(names) - NAMED_UNKNOWN} more" if len(names) > NAMED_UNKNOWN else ""
    return f"unknown argument(s): {named}{more}"


def _explain(error: Any) -> str:
    """A short message that never echoes the (possibly huge) offending value."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    explain = {
        "type": lambda: f"must be {'an' if str(schema.get('type'))[:1] in 'aeiou' else 'a'} {schema.get('type')}",
        "maxLength": lambda: f"must be at most {error.validator_value} characters",
        "minLength": lambda: "must not be empty",
        "maxItems": lambda: f"must hold at most {error.validator_value} names",  # a list or a string of names
        "required": lambda: f"missing required argument {error.message.split(' ', 1)[0]}",
        "additionalProperties": lambda: _unknown(sorted(set(error.instance) - set(schema.get("properties", {})))),
        "enum": lambda: f"must be one of {', '.join(map(str, error.validator_value))}",
    }.get(str(error.validator))
    return explain() if explain else "invalid value"


# --- results ----------------------------------------------------------------------------------------


def _error(message: str, **resolution: Resolution | list[Resolution]) -> types.CallToolResult:
    meta = {RESOLUTION_META: _describe(resolution)} if resolution else None
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True, _meta=meta)


def _describe(resolution: Mapping[str, Resolution | list[Resolution]]) -> dict[str, Any]:
    return {
        key: [r.describe() for r in value] if isinstance(value, list) else value.describe()
        for key, value in resolution.items()
    }


def _document(
    snapshot: Snapshot, artifact: Artifact, note: str = "", **resolution: Resolution | list[Resolution]
) -> types.CallToolResult:
    """The precompiled document, byte for byte, with its parsed value (and how a loose name was read, and `note`)."""
    said = readings.reading(snapshot, resolution, note)
    return types.CallToolResult(
        content=[types.TextContent(text=artifact.text), *said],
        structured_content=_with_notes(artifact.value, [block.text for block in said]),
        _meta={RESOLUTION_META: _describe(resolution), URI_META: artifact.uri},
    )


def _with_notes(value: Any, notes: Sequence[str]) -> Any:
    """`value` with `notes`, the lines the text blocks add to it: a client that passes the model only the structured
    result (Claude Code does, whenever there is one) drops the text blocks, and with them how a name was read, what
    a record lacks and what to call next. The document's own value is left as it is."""
    return {**value, "notes": list(notes)} if notes and isinstance(value, dict) else value


def _synthesized(
    snapshot: Snapshot, value: dict[str, Any], note: str = "", **resolution: Resolution | list[Resolution]
) -> types.CallToolResult:
    """A value the build has no document for (a filtered comparison, an empty list, candidates)."""
    said = readings.reading(snapshot, resolution, note)
    return types.CallToolResult(
        content=[types.TextContent(text=canonical_json(value)), *said],
        structured_content=_with_notes(value, [block.text for block in said]),
        _meta={RESOLUTION_META: _describe(resolution)},
    )


def _suggested(
    snapshot: Snapshot,
    resolution: Resolution,
    agent_id: str | None,
    note: str = "",
    compared: Sequence[str] = (),
    comparing: bool = False,
    **meta: Resolution | list[Resolution],
) -> types.CallToolResult:
    answer = unresolved.suggestions(snapshot, resolution, agent_id, compared, comparing)
    content = [types.TextContent(text=answer["text"])]
    # the suggestions themselves say how the capability was read; how the agents were, and a note, follow
    if said := [*readings.agent_readings(snapshot, meta), *filter(None, [note])]:
        content.append(types.TextContent(text=" ".join(said)))
    return types.CallToolResult(
        content=content,
        structured_content=_with_notes(answer["value"], [*answer["notes"], *([" ".join(said)] if said else [])]),
        _meta={RESOLUTION_META: _describe(meta), BUDGET_META: answer["budget"]},
    )


def _filtered(
    snapshot: Snapshot, kind: str, listed: str, resolved: Mapping[str, Resolution], note: str = ""
) -> types.CallToolResult:
    """The `kind` document for the resolved filter; an empty `listed` list when the build has none for it (with `note`
    all the same: an agent with nothing in a category still gets the names its data does not mention)."""
    params = {key: r.value for key, r in resolved.items()}
    document = _recorded(snapshot, kind, params)
    if document is None:  # said, so that an empty list is not read as the agent lacking it all
        value = {"filter": params, listed: [], "hint": unlisted.nothing(snapshot, listed, params, bool(note))}
        return _synthesized(snapshot, value, note, **resolved)
    return _document(snapshot, document, note, **resolved)


def _recorded(snapshot: Snapshot, kind: str, params: Mapping[str, str | None]) -> Artifact | None:
    """The `kind` document for `params`; None when the build has none, or the agent has no record of the capability
    (whatever another agent's record holds): the answer is then an empty list and what the data does not say."""
    entry = snapshot.index.capabilities.get(params.get("capability") or "")
    agent = params.get("agent")
    if entry is not None and agent is not None and agent not in entry.agents:
        return None
    return snapshot.find(kind, **params)


# --- the tools --------------------------------------------------------------------------------------


def lookup_capability(snapshot: Snapshot, agent: str, capability: str) -> types.CallToolResult:
    agent_res = resolve_agent(snapshot.index, agent)
    if not agent_res.ok:
        # A name that stands for several agents is answered as a comparison of them, in this one call: the model
        # asked about each of them.
        if (several := agent_args.several_agents(snapshot, agent)) is not None:
            cap_res = resolve_capability(snapshot.index, capability)
            return _compared(snapshot, cap_res, [agent], several.found, several.problem, several.read)
        agent_res, problem = agent_args.one_agent(snapshot, agent_res)
        if problem:
            # agent='MCP', capability='ferrule': swapped when the agent argument names a capability by a tier of its
            # names, not by the ranking's words (agent='cursor', capability='claude' asks about two agents).
            as_capability = resolve_capability(snapshot.index, agent)
            if (
                as_capability.ok
                and not as_capability.scored
                and (swapped := resolve_agent(snapshot.index, capability)).ok
            ):
                problem += f" {capability!r} is an agent ({swapped.value}): call again with the arguments swapped."
            return _error(problem, agent=agent_res)
    cap_res = resolve_capability(snapshot.index, capability, agent=agent_res.value)
    asked = agent_res.value or ""
    listed = records.listed(snapshot, capability, [asked])  # a platform or model its file lists ('JetBrains')
    about = records.about_records(cap_res, [asked])  # 'limitations': each record's, no capability's
    if unresolved.wants_suggestions(snapshot, cap_res):  # free text read as one capability: what its record lacks too
        unheld = records.unheld(snapshot, cap_res, asked, elsewhere=True)
        lacks = " ".join(filter(None, (unheld, records.unlimited(snapshot, cap_res, [asked]), listed, about)))
        return _suggested(snapshot, cap_res, agent_res.value, lacks, agent=agent_res, capability=cap_res)
    if not cap_res.ok:  # ambiguous or unknown: candidates as a normal result (issue 12)
        value = unresolved.candidates(snapshot, cap_res, agent_res.value)
        return _synthesized(
            snapshot, value, " ".join(filter(None, (listed, about))), agent=agent_res, capability=cap_res
        )
    document = snapshot.find("lookup", agent=agent_res.value, capability=cap_res.value)
    if document is None:
        return _error(f"The build has no lookup document for {agent_res.value} / {cap_res.value}; rebuild it.")
    notes = (
        records.borrowed(snapshot, cap_res, asked),
        records.unheld(snapshot, cap_res, asked),
        records.unrecorded(snapshot, cap_res.value or "", [asked]),
        records.unlimited(snapshot, cap_res, [asked]),
        listed,
    )
    return _document(snapshot, document, " ".join(filter(None, notes)), agent=agent_res, capability=cap_res)


def compare_capability(snapshot: Snapshot, capability: str, agents: list[str] | None = None) -> types.CallToolResult:
    asked, named = _of_agents(snapshot, capability)
    cap_res = resolve_capability(snapshot.index, asked)
    agents = agents or named  # 'hooks claude vs gemini': those two
    # The agents first, whatever answers: a name that is no agent is said, never dropped with the filter; one that
    # could be several ('copilot') is all of them, as a comparison can set them side by side.
    agent_res, problem = agent_args.resolve_agents(snapshot, agents, several=True) if agents else ([], None)
    problem, unknown = agent_args.beside_unknown(snapshot, agent_res, problem)  # ['claude', 'cursor']: claude's
    beside = agent_args.answered_for(agent_res, unknown) if unknown else ""
    if asked != capability:
        ids = agent_args.named_ids(agent_res)
        whom = f"for {', '.join(ids[:-1])} and {ids[-1]}" if named and len(ids) > 1 else "across every agent"
        beside = " ".join(filter(None, (f"Read {readings.quoted(capability)} as {asked!r} compared {whom}.", beside)))
    return _compared(snapshot, cap_res, agents, agent_res, problem, beside)


# A comparison's words saying whom it is across ('hooks across agents', 'sandboxing in all agents'): no capability's.
_ACROSS_AGENTS = re.compile(
    r"\s+(?:across|between|among|amongst|for|in|on|of)\s+(?:(?:all|every|each|the|these|those|different|various|both"
    r"|several|coding|ai)\s+){0,3}(?:agents?|assistants?|tools|them)\W{0,3}$",
    re.IGNORECASE,
)
_BEFORE_AGENTS = re.compile(r"(?:\s+(?:across|between|among|for|in|on|of|with))?[\s:,]*$", re.IGNORECASE)
_NAMED_WORDS, _NAMED_TRIES = 8, 4  # the longest run of agents' names at a comparison's end looked for; where it starts


def _of_agents(snapshot: Snapshot, capability: str) -> tuple[str, list[str]]:
    """A comparison's capability less the words saying whom it compares: 'hooks across agents' is 'hooks' (every
    agent), 'hooks claude vs gemini' is 'hooks' for those two (a blind model test: both answered "nothing clearly
    matches", Hooks offered at 0.46). Names at the end only, joined as compare's `agents` reads them, each one agent."""
    if (across := _ACROSS_AGENTS.search(capability)) and capability[: across.start()].strip():
        return capability[: across.start()].strip(), []
    words = list(re.finditer(r"\S+", capability))
    table = snapshot.index.agent_names
    named = table.every_word  # a run of names begins and ends with a word of one
    if len(words) < 3 or normalize(words[-1].group()) not in named or not joins_names(table, capability):
        return capability, []
    tries = _NAMED_TRIES  # each reads a run of names as compare's `agents` does, at most JOINED_RUNS resolutions
    for first in range(max(1, len(words) - _NAMED_WORDS), len(words) - 1):
        tail = capability[words[first].start() :]
        if not joins_names(table, tail) or not tries:
            break
        begins = words[first].group()  # 'in claude and gemini': the names after 'in'
        if normalize(begins) not in named or _BEFORE_AGENTS.fullmatch(f" {begins}"):
            continue
        tries -= 1
        found, problem = agent_args.resolve_agents(snapshot, agent_args.comma_separated(tail), several=True)
        head = _BEFORE_AGENTS.sub("", capability[: words[first].start()])
        every = all(r.ok or r.status == "ambiguous" for r in found)  # 'copilot' is both Copilots, as `agents` reads it
        if problem is None and len(found) > 1 and every and head.strip():
            return head.strip(), [r.query for r in found]
    return capability, []


def _compared(
    snapshot: Snapshot,
    cap_res: Resolution,
    agents: list[str] | None,
    agent_res: list[Resolution],
    problem: str | None,
    lead: str = "",
) -> types.CallToolResult:
    """The comparison of a capability across the agents named (all, without `agents`); `lead` says how the names
    were read in place of the comparison's own words."""
    if problem:
        return _error(problem, capability=cap_res, agents=agent_res)
    meta: dict[str, Any] = {"agents": agent_res} if agents else {}
    read = lead or agent_args.read_as_several(agent_res)
    asked = agent_args.named_ids(agent_res)
    every = asked or list(snapshot.index.agents)
    listed = records.listed(snapshot, cap_res.query, every)  # a platform or model their files list ('JetBrains')
    about = records.about_records(cap_res, asked)  # 'limitations': each record's, no capability's
    if unresolved.wants_suggestions(snapshot, cap_res):  # no clear winner, or free text, as a lookup has them
        # one agent asked: its own snippets, as a lookup has them; several: every agent's, and where each stands
        one = asked[0] if len(asked) == 1 else None
        several = asked if one is None else ()
        unheld = records.unheld(snapshot, cap_res, every, elsewhere=True)
        # the first suggestion's agents without a record of it: their integration features closest to it by name
        offered = [cap_res.value] if cap_res.ok else [c.value for c in cap_res.candidates]
        first = next((snapshot.index.capabilities[s] for s in offered if s in snapshot.index.capabilities), None)
        lacking = [a for a in every if a not in first.agents] if first is not None else []
        features = records.closest_features(snapshot, first.slug, lacking) if first is not None else ""
        notes = (read, unheld, records.unlimited(snapshot, cap_res, every), listed, about, features)
        note = " ".join(filter(None, notes))
        return _suggested(snapshot, cap_res, one, note, several, one is not None, capability=cap_res, **meta)
    if not cap_res.ok:  # ambiguous without snippets, or unknown: candidates
        value = unresolved.candidates(snapshot, cap_res, None)
        return _synthesized(snapshot, value, " ".join(filter(None, (read, listed, about))), capability=cap_res, **meta)
    document = snapshot.find("compare", capability=cap_res.value)
    if document is None:
        return _error(f"The build has no comparison for {cap_res.value}; rebuild it.")
    notes = (
        read,
        records.borrowed(snapshot, cap_res, every),
        records.unheld(snapshot, cap_res, every),
        records.unrecorded(snapshot, cap_res.value or "", every),
        records.unlimited(snapshot, cap_res, every),
        listed,
    )
    note = " ".join(filter(None, notes))
    if not agents:
        return _document(snapshot, document, note, capability=cap_res)
    whole = document.value
    if not isinstance(whole, dict) or not isinstance(whole.get("agents"), list):
        return _error(f"The build's comparison for {cap_res.value} is not a JSON object; rebuild it.")
    value = dict(whole)
    # an entry that is no object (a forged build's) is no asked agent's: `.get` on it was an internal error
    value["agents"] = [entry for entry in whole["agents"] if isinstance(entry, dict) and entry.get("agent") in asked]
    return _synthesized(snapshot, value, note, capability=cap_res, agents=agent_res)


def list_capabilities(
    snapshot: Snapshot, agent: str | None = None, category: str | None = None
) -> types.CallToolResult:
    if agent is None and category is None:
        return _error("Give an agent, a category, or both (the categories are in this tool's description).")
    resolved: dict[str, Resolution] = {}
    if category is not None and agent is not None and generic_agent(snapshot.index, agent):
        agent = None  # 'all agents' with a category: the category's list is every agent's (it was an error)
    if agent is not None:
        resolved["agent"] = resolve_agent(snapshot.index, agent)
        if not resolved["agent"].ok:
            if (several := agent_args.several_agents(snapshot, agent)) is not None:  # each agent's list, one call
                return _list_of_several(snapshot, agent, category, several)
            resolved["agent"], problem = agent_args.one_agent(snapshot, resolved["agent"])
            if problem:
                return _error(problem, **resolved)
    if category is not None:
        resolved["category"], problem = _category(snapshot, category)
        if problem:
            return _error(problem, **resolved)
    # An agent with nothing in that category has no document.
    return _filtered(snapshot, "list", "capabilities", resolved, unlisted.not_listed(snapshot, resolved))


def _category(snapshot: Snapshot, category: str) -> tuple[Resolution, str]:
    """A category argument's reading, and what to say when it names no category ('' when it does)."""
    resolution = resolve_category(snapshot.index, category)
    if resolution.ok:
        return resolution, ""
    if resolution.status == "ambiguous":
        options = ", ".join(c.value for c in resolution.candidates)
        return resolution, f"Category {category!r} is ambiguous: it could be {options}."
    if (slug := snapshot.index.keys.get(normalize(category))) is not None:  # a capability's name
        hint = f" {category!r} is a capability ({slug}): call lookup_capability or compare_capability."
        return resolution, f"Unknown category {category!r}.{hint}"
    return resolution, f"Unknown category {category!r}.{_read_otherwise(snapshot, category, resolution)}"


def _read_otherwise(snapshot: Snapshot, category: str, resolution: Resolution) -> str:
    """What an unknown category's words name: the capabilities they read as, with their categories ('memory':
    Persistent Memory, in context-awareness), else the closest categories that hold something. The closest by
    spelling alone were offered ('memory': agent-orchestration, model-selection, performance), one of them a category
    the catalog has nothing in (a blind model test)."""
    index = snapshot.index
    found = resolve_capability(index, category)
    read = [found.value] if found.ok and found.value else []
    read = read or [c.value for c in found.candidates if found.status == "ambiguous"][: unresolved.SUGGESTED_NAMES]
    if read:
        named = ", ".join(f"{index.capabilities[s].name} ({s}, in {index.capabilities[s].category})" for s in read)
        how = "As a capability, {} reads as" if found.ok else "As a capability's words, {} is closest to"
        return f" {how.format(repr(category))} {named}: lookup_capability or compare_capability answers with it."
    held = [c for c in resolution.candidates if c.value not in index.empty_categories]
    return f" Closest: {', '.join(c.value for c in held)}." if held else ""


def _list_of_several(
    snapshot: Snapshot, agent: str, category: str | None, several: agent_args.Several
) -> types.CallToolResult:
    """list_capabilities for a name of several agents ('copilot'): their rows in the shape of a category's list (each
    row with its `agent`; a capability's rows together, the agents in the order named), `filter.agents` naming them,
    said to stand for those agents in the words a lookup uses, then what their data leaves out; a joined name that is
    no agent is said as a lookup says it."""
    found, ids, problem, read = several.found, several.ids, several.problem, several.read
    asked: dict[str, Resolution] = {}
    wrong = ""
    if category is not None:
        asked["category"], wrong = _category(snapshot, category)
    if problem is not None or wrong:
        return _error(problem or wrong, agents=found, **asked)
    if category is None and (too_many := _too_many(agent, ids, "every capability", "a category")):
        return _error(too_many, agents=found)
    in_category = {"category": asked["category"].value} if category is not None else {}
    rows: list[dict[str, Any]] = []
    for agent_id in ids:
        document = snapshot.find("list", agent=agent_id, **in_category)
        value = document.value if document is not None else {"capabilities": []}  # nothing in the category
        if not isinstance(value, dict) or not isinstance(value.get("capabilities"), list):
            return _error(f"The build's list document {document.uri if document else ''} is not valid; rebuild it.")
        rows += [{**row, "agent": agent_id} for row in value["capabilities"] if isinstance(row, dict)]
    # By category then slug, as an agent's or a category's list (a capability only the second agent has went after
    # all of the first's rows, out of its category, then after the first's rows of its category); stable: a
    # capability's rows together, the agents in the order named.
    in_order = sorted(rows, key=lambda row: (str(row.get("category")), str(row.get("slug"))))
    whole: dict[str, Any] = {"filter": {"agents": ids, **in_category}, "capabilities": in_order}
    if not rows and in_category.get("category") in snapshot.index.empty_categories:  # no one's: as one agent's list
        whole["hint"] = unlisted.nothing(snapshot, "capabilities", in_category)
    elif not rows:  # in the category, or at all (agents whose documents record no capability)
        about = f" in {in_category['category']}" if in_category else ""
        whole["hint"] = f"The data of {', '.join(ids)} records no capability{about}."
    note = " ".join(filter(None, [read, unlisted.not_listed(snapshot, asked, ids)]))
    return _synthesized(snapshot, whole, note, agents=found, **asked)


def get_sources(snapshot: Snapshot, agent: str | None = None, capability: str | None = None) -> types.CallToolResult:
    if agent is None and capability is None:
        return _error("Give an agent, a capability, or both.")
    resolved: dict[str, Resolution] = {}
    if agent is not None:
        resolved["agent"] = resolve_agent(snapshot.index, agent)
        if not resolved["agent"].ok:
            if (several := agent_args.several_agents(snapshot, agent)) is not None:  # each agent's sources, one call
                return _sources_of_several(snapshot, agent, capability, several)
            resolved["agent"], problem = agent_args.one_agent(snapshot, resolved["agent"])
            if problem:
                return _error(problem, **resolved)
    agent_id = resolved["agent"].value if "agent" in resolved else None
    if capability is not None:
        resolved["capability"] = resolve_capability(snapshot.index, capability, agent=agent_id)
        if not resolved["capability"].ok:  # ambiguous or unknown: candidates
            return _synthesized(snapshot, unresolved.candidates(snapshot, resolved["capability"], agent_id), **resolved)
    # The agent has not recorded that capability: no document, nothing cited.
    found = resolved.get("capability")
    notes = []
    if found and agent_id:  # the sources of the record are shown, not the record itself
        uncited = records.uncited(snapshot, found, agent_id)
        shown = "asked about here" if uncited else "whose sources are listed above"
        notes = [records.borrowed(snapshot, found, agent_id, shown), uncited]
    elif agent_id:  # every source of the agent's records: those that cite none are not in it
        notes = [records.uncited_records(snapshot, agent_id)]
    return _filtered(snapshot, "sources", "sources", resolved, " ".join(filter(None, notes)))


def _too_many(agent: str, ids: list[str], whole: str, narrower: str) -> str:
    """What to say when a name stands for more agents than one answer gives `whole` (every capability, every
    source) of ('' when it does not): that of each would cost thousands of tokens."""
    if len(ids) <= SEVERAL_WHOLE:
        return ""
    return (
        f"{agent!r} stands for {len(ids):,} agents ({named('', ids, 300).rstrip('.')}): one answer gives {whole} "
        f"of {plural(SEVERAL_WHOLE, 'agent')} at most. Give {narrower}, or at most {SEVERAL_WHOLE} of them."
    )


def _sources_of_several(
    snapshot: Snapshot, agent: str, capability: str | None, several: agent_args.Several
) -> types.CallToolResult:
    """get_sources for a name of several agents ('copilot'): each agent's answer in `agents`, in the order named,
    as its own call would give it (`sources`, and the `hint` of a capability its data does not mention), said to
    stand for those agents in the words a lookup uses; a joined name that is no agent is said as a lookup says it."""
    found, ids, problem, read = several.found, several.ids, several.problem, several.read
    cap_res = resolve_capability(snapshot.index, capability) if capability is not None else None
    asked: dict[str, Resolution] = {"capability": cap_res} if cap_res is not None else {}
    if problem is not None:
        return _error(problem, agents=found, **asked)
    if cap_res is None and (too_many := _too_many(agent, ids, "every source", "a capability")):
        return _error(too_many, agents=found)
    if cap_res is not None and not cap_res.ok:  # ambiguous or unknown: candidates, for none of the agents in particular
        return _synthesized(snapshot, unresolved.candidates(snapshot, cap_res, None), read, agents=found, **asked)
    slug = cap_res.value if cap_res is not None else None
    answers, notes = [], [read]
    for agent_id in ids:
        params = {"agent": agent_id, **({"capability": slug} if slug else {})}
        document = _recorded(snapshot, "sources", params)
        value = document.value if document is not None else None
        if document is not None and not isinstance(value, dict):
            return _error(f"The build's sources document {document.uri} is not a JSON object; rebuild it.")
        if value is None:
            answers.append({"agent": agent_id, "sources": [], "hint": unlisted.nothing(snapshot, "sources", params)})
        else:
            answers.append({"agent": agent_id, "sources": value.get("sources", [])})
        notes.append(
            records.uncited(snapshot, cap_res, agent_id) if cap_res else records.uncited_records(snapshot, agent_id)
        )
    if cap_res is not None:
        notes.insert(1, records.borrowed(snapshot, cap_res, ids, "whose sources are listed above"))
    whole = {"filter": {"agents": ids, **({"capability": slug} if slug else {})}, "agents": answers}
    return _synthesized(snapshot, whole, " ".join(filter(None, notes)), agents=found, **asked)


def get_capability_index(snapshot: Snapshot, variant: str) -> types.CallToolResult:
    artifact = snapshot.variant(variant)
    if artifact is None:
        return _error(f"This build has no {variant} document.")
    return types.CallToolResult(content=[types.TextContent(text=artifact.text)], _meta={URI_META: artifact.uri})


def _listed(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments as models send them, read as meant: a null for an optional argument is "not given" (many clients
    send every argument), and a string where a list of names is wanted the names it separates by commas
    (`"agents": "claude"` or `"claude, gemini"`; an agent's id never holds a comma, a display name with one is given
    in a list)."""
    properties = schema.get("properties", {})
    optional = set(properties) - set(schema.get("required", ()))
    arguments = {key: value for key, value in arguments.items() if value is not None or key not in optional}
    return {key: _as_meant(properties.get(key, {}), value) for key, value in arguments.items()}


def _as_meant(schema: Mapping[str, Any], value: Any) -> Any:
    """One argument as `_listed` reads it: names separated by commas where a list is wanted, and a choice in
    another case (`"Full"`) as the choice it spells, as names are read in any case."""
    if not isinstance(value, str):
        return value
    if schema.get("type") == "array":
        return agent_args.comma_separated(value)
    spelled = [choice for choice in schema.get("enum", ()) if str(choice).casefold() == value.casefold()]
    return spelled[0] if len(spelled) == 1 else value


HANDLERS: dict[str, Callable[..., types.CallToolResult]] = {
    ToolName.LOOKUP.value: lookup_capability,
    ToolName.COMPARE.value: compare_capability,
    ToolName.LIST.value: list_capabilities,
    ToolName.SOURCES.value: get_sources,
    ToolName.INDEX.value: get_capability_index,
}


_SURROGATE = re.compile("[\ud800-\udfff]")


def _whole(value: Any) -> Any:
    """Arguments with each lone surrogate (no JSON client sends one; a Python caller may) as U+FFFD, which every
    later step can encode: in strings, keys, and lists, tuples and objects at any depth."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_whole(key): _whole(item) for key, item in value.items()}
    return [_whole(item) for item in value] if isinstance(value, list | tuple) else value


def call_tool(
    snapshot: Snapshot, validators: Validators, name: str, arguments: Mapping[str, Any] | None
) -> types.CallToolResult:
    """Validate and run one tool. Raises `UnknownTool` for a tool this server does not offer."""
    if name not in validators.by_name:
        raise UnknownTool(f"Unknown tool: '{clip(name)}'. Tools: {', '.join(validators.by_name)}")
    arguments = _whole(dict(arguments or {}))
    if len(canonical_json(arguments).encode("utf-8")) > MAX_ARGUMENT_BYTES:
        return _error(f"Arguments too large (limit {MAX_ARGUMENT_BYTES} bytes): names are short strings.")
    given, arguments = arguments, _listed(validators.by_name[name], arguments)
    problems = validators.problems(name, arguments, given)
    if problems:
        return _error(f"Invalid arguments for {name}: " + "; ".join(problems))
    return HANDLERS[name](snapshot, **arguments)
