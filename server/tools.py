"""Tools: four read-only lookups (and an optional index tool) answered with precompiled documents.

Plain functions over a snapshot, tested directly. Each call validates its arguments against the
published input schema (a failure is a tool result with `isError: true`, so the model sees it and
can correct itself: SEP-1303), resolves names (`capidx.server.resolve`), finds the document by
`(kind, params)` and returns its text unchanged as the text content and its parsed value as
`structuredContent`. How names were resolved goes in the result's `_meta` under
`capidx/resolution`, never into the document.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

import mcp_types as types

from capidx.schema.labels import Label, sorted_labels
from capidx.schema.text import canonical_json, normalize, plural, terms
from capidx.server import suggest
from capidx.server.limits import clip
from capidx.server.matchindex import RESOLUTION_META, Candidate, Resolution
from capidx.server.names import resolve_agent, resolve_category
from capidx.server.query import root
from capidx.server.resolve import resolve_capability
from capidx.server.snapshot import Artifact, Snapshot

URI_META = "capidx/uri"
MAX_NAME = 200
MAX_ARGUMENT_BYTES = 16_384
# A capability argument of at least this many words that no name, alias, wording or trigger matches
# is a question ("how do I add an MCP server to gemini"): it is answered with budgeted suggestions.
FREE_TEXT_WORDS = 3
SUGGESTED_NAMES = 3  # candidates named when no snippet fits the budget
# What joins agents' names in one string: "and", "or", "vs", "versus", "&", "/", "+", ";". Every run of adjacent
# pieces between them is resolved once: a call resolves at most JOINED_RUNS runs (one string of eight pieces).
_JOINED = re.compile(r"\s+(?:and|or|vs\.?|versus)\s+|\s*[&/+;]\s*", re.IGNORECASE)
JOINED_RUNS = 36
COVERED_SHOWN = 12  # agent ids an unknown-agent error lists; past it, their number and the closest
# Claude Code cuts each tool description at 2,048 characters: every description stays within it.
MAX_DESCRIPTION = 2_048


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
            "agents": {"type": "array", "items": _text(_AGENT), "maxItems": 20, "description": "Only these agents"},
        },
        ("capability",),
    ),
    ToolName.LIST: _input({"agent": _text(_AGENT), "category": _text("Category")}),
    ToolName.SOURCES: _input({"agent": _text(_AGENT), "capability": _text(_CAPABILITY)}),
}

# Loose on purpose, a documented union (docs/server.md, "Response format"): the document, or
# `suggestions` (budgeted snippets) for free text and unclear names, or `candidates` (builds without snippets).
OUTPUT_SCHEMAS: dict[ToolName, dict[str, Any]] = {
    ToolName.LOOKUP: {
        "type": "object",
        "properties": {
            "agent": {"type": "string"},
            "capability": _OBJECT,
            "availableFor": _ARRAY,
            "suggestions": _ARRAY,
            "candidates": _ARRAY,
        },
    },
    ToolName.COMPARE: {
        "type": "object",
        "properties": {"capability": _OBJECT, "agents": _ARRAY, "suggestions": _ARRAY, "candidates": _ARRAY},
    },
    ToolName.LIST: {"type": "object", "properties": {"filter": _OBJECT, "capabilities": _ARRAY}},
    ToolName.SOURCES: {"type": "object", "properties": {"filter": _OBJECT, "sources": _ARRAY, "candidates": _ARRAY}},
}

READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)


def index_input_schema(variants: tuple[str, ...]) -> dict[str, Any]:
    return _input({"variant": {"type": "string", "enum": list(variants)}}, ("variant",))


def _descriptions(snapshot: Snapshot) -> dict[ToolName, str]:
    """What each tool does comes first, the names it accepts last, listed only as far as they fit
    `MAX_DESCRIPTION` (a client never shows the model what is past its cut, and says nothing)."""
    lookup = (
        "One agent's support for one capability: availability, tier, setup, limits, sources. "
        "If the agent lacks it: available=false and availableFor; recorded=false: no data (unknown, not a no)."
    )
    listing = "List capabilities of an agent, a category, or both."
    return {
        ToolName.LOOKUP: lookup + named(" Agents: ", snapshot.index.agents, MAX_DESCRIPTION - len(lookup)),
        ToolName.COMPARE: (
            "Compare one capability across agents (optionally only some); recorded=false: no data (not a no)."
        ),
        ToolName.LIST: listing + named(" Categories: ", snapshot.index.categories, MAX_DESCRIPTION - len(listing)),
        ToolName.SOURCES: "Documentation sources for an agent, a capability, or both.",
    }


def named(label: str, names: Sequence[str], room: int) -> str:
    """`label` and as many `names` as fit in `room` characters, each whole, then how many more there are
    ("" when not even the label and one name fit)."""
    whole = f"{label}{', '.join(names)}."
    if len(whole) <= room:
        return whole
    shown = fitting(names, room - len(label) - len(f" and {len(names):,} more."))
    return f"{label}{', '.join(shown)} and {len(names) - len(shown):,} more." if shown else ""


def fitting(names: Sequence[str], room: int) -> list[str]:
    """The first `names` that, joined by commas, fit in `room` characters: none when the first does not."""
    shown: list[str] = []
    size = -2
    for name in names:
        size += len(name) + 2
        if size > room:
            break
        shown.append(name)
    return shown


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

    def problems(self, name: str, arguments: Mapping[str, Any]) -> list[str]:
        errors = sorted(self._validator(name).iter_errors(arguments), key=lambda e: list(map(str, e.absolute_path)))
        found = [_explain(error) for error in errors[:5]]
        # Blank names nothing, as empty does ('minLength'); said in code, not as a schema pattern that every
        # session's tools/list would carry.
        properties = self.by_name[name].get("properties", {})
        blank = [where for where, text in _strings(arguments, properties) if text and not text.strip()]
        return found + [f"{where}: must not be empty" for where in blank]

    def _validator(self, name: str) -> Any:
        if name not in self._made:
            from jsonschema import Draft202012Validator

            checker = Draft202012Validator.FORMAT_CHECKER
            self._made[name] = Draft202012Validator(self.by_name[name], format_checker=checker)
        return self._made[name]


def _strings(arguments: Mapping[str, Any], properties: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Where and what each string argument that must not be empty is, also each such string in a list."""
    for key, value in arguments.items():
        schema = properties.get(key, {})
        if isinstance(value, str) and "minLength" in schema:
            yield key, value
        if isinstance(value, list) and "minLength" in schema.get("items", {}):
            yield from ((f"{key}.{i}", item) for i, item in enumerate(value) if isinstance(item, str))


def _explain(error: Any) -> str:
    """A short message that never echoes the (possibly huge) offending value."""
    where = ".".join(str(part) for part in error.absolute_path) or "arguments"
    schema = error.schema if isinstance(error.schema, dict) else {}
    explain = {
        "type": lambda: f"must be {'an' if str(schema.get('type'))[:1] in 'aeiou' else 'a'} {schema.get('type')}",
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


# How a capability was read when not as spelled in the index, said after the answer (`_reading`).
_LOOSE_READINGS = {"lexical": "by its words", "fuzzy": "by its words, allowing for typos"}
NEXT_NAMED = 2  # runner-ups a loose reading names
NOT_LISTED_SHOWN = 10  # sentences a category's list's note says, at most: one per set of capabilities agents leave out
# Characters of names a list's note spells out as not in the data, at most (~150 tokens): every name for the catalogs
# this is made for, while the note beside a list document, whose budget the build checks, stays bounded for one of
# hundreds of capabilities.
NOT_LISTED_CHARS = 600
MEMBERS_NAMED = 12  # capabilities an answer to a category's name names, at most
# The one label of a category's members, which qualifies every one (what their words share is no match confidence).
MEMBERS = (Label("", 0.0),)
_NAMED_BY = frozenset(("alias", "terminology", "identifier"))  # the tiers a query names a capability in words


def _reading(
    snapshot: Snapshot, resolution: Mapping[str, Resolution | list[Resolution]], note: str = ""
) -> list[types.TextContent]:
    """A line after the answer when a name was read loosely ('cloud agent' -> Sandboxing, 'cladue' -> claude-code):
    `_meta` says so too, but clients do not show it to the model, which would take the answer for an exact one. A
    capability query that is a category's name ('security') also points to that category's list."""
    said = _agent_readings(snapshot, resolution)
    found = resolution.get("capability")
    if isinstance(found, Resolution) and found.ok and (how := _LOOSE_READINGS.get(found.resolved_by or "")):
        runners = [f"{c.label} ({c.value}, {c.confidence:.2f})" for c in found.ranked if c.value != found.value]
        others = f"; next: {', '.join(runners[:NEXT_NAMED])}" if runners else ""
        said.append(
            f"{_read_as(snapshot, found, how)} (match {found.confidence:.2f}){others}. If another capability was "
            "meant, call again with its slug."
        )
        if (category := snapshot.index.category_named(found.query)) is not None:
            said.append(f"{category} is also a category: {_listing(category)} lists what is in it.")
    said += [note] if note else []
    return [types.TextContent(text=" ".join(said))] if said else []


def _read_as(snapshot: Snapshot, resolution: Resolution, how: str) -> str:
    """ "Read 'cloud agent' as Sandboxing (sandboxing), by its words": how a loosely read capability is said, after a
    document as before suggestions."""
    entry = snapshot.index.capabilities.get(resolution.value or "")
    name = f"{entry.name} ({entry.slug})" if entry is not None else resolution.value
    return f"Read {_quoted(resolution.query)} as {name}, {how}"


def _unrecorded(snapshot: Snapshot, slug: str, agents: Iterable[str]) -> str:
    """Said after a lookup or comparison for the asked agents whose data does not mention the capability: their
    `available: false` beside `recorded: false` would otherwise be read as a no."""
    entry = snapshot.index.capabilities.get(slug)
    if entry is None:
        return ""
    return _no_record([agent for agent in dict.fromkeys(agents) if agent not in entry.agents], [entry.name])


def _borrowed(snapshot: Snapshot, resolution: Resolution, agent: str, shown: str = "answered above") -> str:
    """ "'GEMINI.md' is used in the records of copilot-cli and gemini-cli of Custom Instructions; claude-code's record
    of Custom Instructions, answered above, does not use it." when a name, wording or identifier found the capability
    and other agents' records of it use the words while the asked agent's does not: the answer would otherwise read as
    if that agent had it. `shown`: what the answer above shows of that record."""
    entry = snapshot.index.capabilities.get(resolution.value or "")
    if resolution.resolved_by not in _NAMED_BY or entry is None or agent not in entry.agents:
        return ""
    asked = (normalize(resolution.query), " ".join(terms(resolution.query)))  # as written; in other forms

    def says(who: str) -> bool:  # one of the agent's own aliases, or in what the model is shown of its record
        if snapshot.index.own_aliases.get((who, asked[0])) == entry.slug:
            return True
        document = snapshot.find("lookup", agent=who, capability=entry.slug)
        held = _record_words(document.text) if document is not None else ("", "")
        return any(a and f" {a} " in f" {h} " for a, h in zip(asked, held, strict=True))

    owners = [] if says(agent) else [who for who in sorted(entry.agents) if who != agent and says(who)]
    if not owners:
        return ""
    whose = f"{owners[0]}'s record" if len(owners) == 1 else f"the records of {', '.join(owners[:-1])} and {owners[-1]}"
    return (
        f"'{resolution.query.strip()}' is used in {whose} of {entry.name}; {agent}'s record of {entry.name}, {shown}, "
        "does not use it."
    )


@functools.lru_cache(maxsize=1024)
def _record_words(document: str) -> tuple[str, str]:
    """A lookup document's capability record as normalized words and as `terms()` (parsed once per document text:
    the lookups that need it are the exact tiers', the most frequent)."""
    try:
        value = json.loads(document)
    except (ValueError, RecursionError):
        return "", ""
    record = canonical_json(value.get("capability") if isinstance(value, dict) else None)
    return normalize(record), " ".join(terms(record))


def _no_record(agents: list[str], names: list[str]) -> str:
    """'copilot-cli's data has no record of Plugins: no data, not a no.'; '' when no agent lacks a record."""
    if not agents:
        return ""
    whose = f"{agents[0]}'s data has" if len(agents) == 1 else f"The data of {', '.join(agents)} have"
    return f"{whose} no record of {', '.join(names)}: no data, not a no."


def _agent_readings(snapshot: Snapshot, resolution: Mapping[str, Resolution | list[Resolution]]) -> list[str]:
    """'Read agent 'cladue' as claude-code, allowing for typos.' for each agent name (`agent`, or each of compare's
    `agents`) and the category read as a typo; and when nothing answered the capability asked for and it is an
    agent's name ('copilot'), that it is also that agent's: a model that swapped the arguments gets the way back."""
    agents = [r for value in (resolution.get("agent"), resolution.get("agents")) for r in _listed_of(value)]
    said = [
        f"Read agent {r.query!r} as {r.value}, allowing for typos." for r in agents if r.ok and r.resolved_by == "fuzzy"
    ]
    category = resolution.get("category")
    if isinstance(category, Resolution) and category.ok and category.resolved_by == "fuzzy":
        said.append(f"Read category {category.query!r} as {category.value}, allowing for typos.")
    asked = resolution.get("capability")
    if isinstance(asked, Resolution) and not asked.ok and (ids := _agent_spelled(snapshot, asked.query)):
        said.append(
            f"{asked.query!r} is also a name of {', '.join(ids)}: if that agent was meant, give it as an agent argument"
            " and what is asked about as `capability`."
        )
    return said


def _agent_spelled(snapshot: Snapshot, query: str) -> tuple[str, ...]:
    """The agents `query` is a spelling or nickname of, as written ('copilot', 'Claude Code'), unless every word of it
    is a word of some capability's name ('code', 'cli' name capabilities too): a lookup, not a search of the names."""
    normalized = normalize(query)
    words = [root(term) for term in terms(normalized)]
    if words and all(word in snapshot.index.vocabulary.names for word in words):
        return ()
    said = set(normalized.split())  # and a word of the agent's id: 'visual studio' is a piece of a name, not the agent
    spelled = snapshot.index.agent_names.spellings.get(normalized, ())
    return tuple(str(agent) for agent in spelled if said & set(normalize(agent).split()))


def _listed_of(value: Resolution | list[Resolution] | None) -> list[Resolution]:
    return value if isinstance(value, list) else [value] if isinstance(value, Resolution) else []


def _document(
    snapshot: Snapshot, artifact: Artifact, note: str = "", **resolution: Resolution | list[Resolution]
) -> types.CallToolResult:
    """The precompiled document, byte for byte, with its parsed value (and how a loose name was read, and `note`)."""
    return types.CallToolResult(
        content=[types.TextContent(text=artifact.text), *_reading(snapshot, resolution, note)],
        structured_content=artifact.value,
        _meta={RESOLUTION_META: _describe(resolution), URI_META: artifact.uri},
    )


def _synthesized(
    snapshot: Snapshot, value: dict[str, Any], note: str = "", **resolution: Resolution | list[Resolution]
) -> types.CallToolResult:
    """A value the build has no document for (a filtered comparison, an empty list, candidates)."""
    return types.CallToolResult(
        content=[types.TextContent(text=canonical_json(value)), *_reading(snapshot, resolution, note)],
        structured_content=value,
        _meta={RESOLUTION_META: _describe(resolution)},
    )


def _agents_problem(snapshot: Snapshot, failed: list[Resolution]) -> str:
    """Each ambiguous name with its options; the unknown ones together, said to be outside the catalog first (the
    answer must come from elsewhere), with the ids it covers once, or past `COVERED_SHOWN` their number."""
    problems = []
    for resolution in (r for r in failed if r.status == "ambiguous"):
        options = ", ".join(f"{c.value} ({c.label})" for c in resolution.candidates)
        problems.append(f"Agent {resolution.query!r} is ambiguous: it could be {options}. Call again with one id.")
    if unknown := [r for r in failed if r.status != "ambiguous"]:
        named = ", ".join(repr(r.query) for r in unknown)
        problems.append(f"Unknown agent{'s' if len(unknown) > 1 else ''} {named}: {covered(snapshot, unknown)}")
    return " ".join(problems)


def _one_agent_problem(snapshot: Snapshot, resolution: Resolution, compare: bool = True) -> str:
    """Why an agent argument names no one agent: when it joins several agents' names ('claude vs gemini', 'claude,
    gemini'), that this tool answers for one at a time (and, with `compare`, that compare_capability sets them side
    by side); else `_agents_problem`."""
    found, problem = _resolve_agents(snapshot, _comma_separated(resolution.query))
    if len(found) < 2:  # not names joined: the name itself is unknown or ambiguous
        return _agents_problem(snapshot, [resolution])
    if problem is not None:  # joined names, one of them no agent or several ('claude and copilot')
        return f"{resolution.query!r} joins several names, and this tool answers for one agent. {problem}"
    ids = list(dict.fromkeys(r.value for r in found))
    if len(ids) == 1:  # 'claude vs claude code'
        return f"{resolution.query!r} names {ids[0]} more than once: give it once, as the agent argument."
    side = f", or compare_capability(capability, agents={ids!r}) to set them side by side" if compare else ""
    return (
        f"{resolution.query!r} names {len(ids)} agents ({', '.join(map(str, ids))}): this tool answers for one at a "
        f"time. Call it once per agent{side}."
    )


def covered(snapshot: Snapshot, unknown: list[Resolution]) -> str:
    """What to say of agents outside the catalog: the ids it covers, or past `COVERED_SHOWN` their number and the
    closest (an id merely spelled like another agent's is no answer to ask it about)."""
    ids = list(snapshot.index.agents)
    if len(ids) <= COVERED_SHOWN:
        return f"this catalog covers {', '.join(ids)}."
    closest = _closest(unknown[0]) if len(unknown) == 1 else ""
    return f"not among this catalog's {len(ids):,} agents.{closest}"


def _closest(resolution: Resolution) -> str:
    """The closest values of an unknown name, when any is like it at all."""
    return f" Closest: {', '.join(c.value for c in resolution.candidates)}." if resolution.candidates else ""


def _candidates(snapshot: Snapshot, resolution: Resolution, agent: str | None) -> dict[str, Any]:
    """The closest capabilities as rows, with a hint; for a category's name, every member its hint names (one each)."""
    category = _category_asked(snapshot, resolution)
    rows = []
    for candidate in resolution.candidates if category is None else _members(resolution)[:MEMBERS_NAMED]:
        entry = snapshot.index.capabilities[candidate.value]
        row = {"slug": entry.slug, "name": entry.name, "category": entry.category}
        if category is None:  # a category's member is one, not a match of some confidence
            row["matchConfidence"] = candidate.confidence
        if agent is not None:
            row |= {"available": entry.available_to(agent), "recorded": agent in entry.agents}
        rows.append(row)
    value: dict[str, Any] = {"query": resolution.query, "candidates": rows}
    if agent is not None:
        value["agent"] = agent
    if resolution.status == "unknown":  # a normal answer, not an error: the closest names and where to browse
        value["hint"] = _no_words_match(resolution.query, bool(rows))
        return value
    elsewhere = _elsewhere(rows, agent)  # what calling again for that agent would not give
    if category is not None:
        again = elsewhere or "Call again with one capability's name or slug."
        value["hint"] = f"{_in_category(snapshot, resolution)} {again}"
    elif _weak(_labels(snapshot), [c.confidence for c in resolution.candidates]):
        again = f". {elsewhere}" if elsewhere else "; if one is, call again with its slug."
        value["hint"] = f"{_no_clear_match(resolution.query)}{again}"
    else:
        value["hint"] = (
            f"No clear match. {elsewhere}" if elsewhere else "No clear match: call again with one candidate's slug."
        )
    return value


def _elsewhere(rows: list[dict[str, Any]], agent: str | None) -> str:
    """Where a candidate's record is when the asked agent's data records none of them: calling again for that agent
    would answer with no record (or no sources), so every agent's are pointed to, as `_next_step` does for
    suggestions; "" when no agent was asked or one candidate is recorded."""
    if agent is None or not rows or any(row.get("recorded") for row in rows):
        return ""
    return (
        f"{agent}'s data has no record of any of these (no data, not a no): compare_capability with one's name or slug "
        "gives every agent's record of it, and get_sources with it and no agent every agent's sources."
    )


def _members(resolution: Resolution) -> tuple[Candidate, ...]:
    """A category's capabilities as its answer ranks them: all of them (`candidates` holds only the first few)."""
    return resolution.ranked or resolution.candidates


def _labels(snapshot: Snapshot) -> tuple[Label, ...]:
    """The build's confidence labels (match.json `injection`), else the defaults; highest threshold first."""
    injection = snapshot.index.injection
    return sorted_labels(injection.labels if injection and injection.labels else suggest.DEFAULT_LABELS)


def _weak(thresholds: tuple[Label, ...], confidences: list[float]) -> bool:
    """Whether every candidate has the lowest confidence label ('△ Possible'): loosely related at best."""
    lowest = thresholds[-1].label if len(thresholds) > 1 else None
    return bool(confidences) and all(suggest.label_for(c, thresholds) == lowest for c in confidences)


def _opener(snapshot: Snapshot, query: str, first: str | None, weak: bool) -> str:
    """The first line of suggestions that resolved nothing: `weak` ones (`_loosely_related`) are loosely related at
    best; a first one with the highest label ('✓ Recommended') is not unclear, only not alone ('which models can I
    use')."""
    if weak:
        return f"{_no_clear_match(query)}. Loosely related:"
    if first is not None and first == _labels(snapshot)[0].label:
        return f"More than one capability matches {_quoted(query)} closely; the closest:"
    return f"No single clear match for {_quoted(query)}; the closest capabilities:"


def _category_asked(snapshot: Snapshot, resolution: Resolution) -> str | None:
    """The category a capability query named ('security'), answered with its capabilities; None for any other."""
    return snapshot.index.category_named(resolution.query) if resolution.resolved_by == "category" else None


def _in_category(snapshot: Snapshot, resolution: Resolution) -> str:
    """What an answer to a category's name ('security') says first: that it is one, its capabilities (up to
    `MEMBERS_NAMED`), and where its whole list is. Its members come as such, not as matches: each is one of it."""
    category = _category_asked(snapshot, resolution)
    if category is None:
        return ""
    named = "" if normalize(category) == normalize(resolution.query) else f", {category}"
    members = [c.label for c in _members(resolution)]
    more = f" and {len(members) - MEMBERS_NAMED:,} more" if len(members) > MEMBERS_NAMED else ""
    return (
        f"{resolution.query!r} is a category{named}, not one capability. Its "
        f"{plural(len(members), 'capability', 'capabilities')}: {', '.join(members[:MEMBERS_NAMED])}{more}; "
        f"{_listing(category)} lists all of it."
    )


def _listing(category: str) -> str:
    return f"list_capabilities(category={category!r})"


def _no_clear_match(query: str) -> str:
    """What an unresolved answer whose candidates are all weak says first ('voice input'): the model must not pick one
    of them for an answer, nor read the catalog's silence as a no. Only the query's words failed to match: the
    catalog may record it in others ('how much have I spent' is Usage Tracking's '/cost')."""
    return (
        f"Nothing in this catalog clearly matches {_quoted(query)}. If none of these is it, that is not a no: the "
        "catalog may word it otherwise, so call again with other words or a capability's own name"
    )


def _no_words_match(query: str, closest: bool) -> str:
    """The hint of an answer that resolved nothing: said as what the server knows (no capability matches the query
    closely enough to answer; some may share a word of it weakly), not as the catalog having no data, which it may
    hold under other words."""
    names = "a candidate's slug if one was meant, " if closest else ""
    return (
        f"No capability matches {_quoted(query)} closely enough to answer; that is not a no, as the catalog may word "
        f"it otherwise. Call again with {names}other words, or a capability's name from list_capabilities with an "
        "agent or a category."
    )


# A query quoted back in an answer that did not find it: the model sent it and has it, so a long sentence is cut.
QUOTED_CHARS = 80


def _quoted(query: str) -> str:
    """`query` as `repr` quotes it, its first `QUOTED_CHARS` characters and its length when longer."""
    return repr(query) if len(query) <= QUOTED_CHARS else f"{query[: QUOTED_CHARS - 1]!r}… ({len(query)} characters)"


# --- budgeted suggestions ---------------------------------------------------------------------------


def wants_suggestions(snapshot: Snapshot, resolution: Resolution) -> bool:
    """For a lookup: no clear winner, or free text that only scoring could resolve -- and a build with
    snippets to answer with (older builds have none: they answer with the document or candidates)."""
    if not snapshot.has_kind("snippet"):
        return False
    if resolution.status == "ambiguous":
        return True
    free_text = len(normalize(resolution.query).split()) >= FREE_TEXT_WORDS
    return resolution.ok and resolution.scored and free_text


def _snippet(snapshot: Snapshot, slug: str, agent: str | None) -> Artifact | None:
    """The agent's own snippet for the capability, else the cross-agent one."""
    own = snapshot.find("snippet", agent=agent, capability=slug) if agent is not None else None
    return own or snapshot.find("snippet", capability=slug)


def _suggestion_candidates(
    snapshot: Snapshot, pairs: list[tuple[str, float]], agent: str | None
) -> list[suggest.Candidate]:
    primary = snapshot.encodings[0]
    found = []
    for slug, confidence in pairs:
        artifact = _snippet(snapshot, slug, agent)
        if artifact is not None and primary in artifact.tokens:
            found.append(suggest.Candidate(slug, confidence, artifact.text, artifact.tokens[primary]))
    return found


def suggestions(snapshot: Snapshot, resolution: Resolution, agent: str | None) -> dict[str, Any]:
    """Ranked snippets packed within the build's budget (match.json `injection`), then related ones."""
    index = snapshot.index
    injection = index.injection
    max_snippets = _setting(injection, "max_snippets", suggest.DEFAULT_MAX_SNIPPETS)
    ranked = resolution.ranked or resolution.candidates  # scored results rank every candidate, winner first
    # Twice as many as fit: room to skip a snippet too large for the budget, without trying the whole catalog.
    pairs = [(c.value, c.confidence) for c in ranked if c.value in index.capabilities][: 2 * max_snippets]
    related: list[tuple[str, float]] = []
    category = _category_asked(snapshot, resolution)
    if pairs and category is None:  # a category's answer is its capabilities, no neighbours
        top, confidence = pairs[0]
        related = [(slug, round(confidence * score, 3)) for slug, score in index.capabilities[top].similar]
    result = suggest.suggest(
        _suggestion_candidates(snapshot, pairs, agent),
        labels=_labels(snapshot) if category is None else MEMBERS,  # a member is one whatever its words' share
        max_snippets=max_snippets,
        max_tokens=_setting(injection, "max_tokens", suggest.DEFAULT_MAX_TOKENS),
        related=_suggestion_candidates(snapshot, [(s, c) for s, c in related if s in index.capabilities], agent),
        overhead_tokens=_setting(injection, "overhead_tokens", suggest.FALLBACK_OVERHEAD_TOKENS),
    )
    rows = []
    for item in result.suggestions:
        entry = index.capabilities[item.key]
        row: dict[str, Any] = {"capability": item.key, "name": entry.name}
        if category is None:  # a category's members are its members, not matches: no label nor confidence
            row |= {"label": item.label, "confidence": item.confidence}
        row |= {"tokens": item.tokens, "snippet": item.snippet}
        if agent is not None:
            row |= {"available": entry.available_to(agent), "recorded": agent in entry.agents}
        if item.related:
            row["related"] = True
        rows.append(row)
    value: dict[str, Any] = {"query": resolution.query}
    if agent is not None:
        value["agent"] = agent
    if category is not None:
        value["category"] = category
    value |= {"suggestions": rows, "totalTokens": result.total_tokens, "maxTokens": result.max_tokens}
    value["omitted"] = list(result.omitted)
    text = suggest.render_suggestions(result, labelled=category is None)
    loose = _loosely_related(snapshot, resolution, rows)  # decided once: the first line and the last both depend on it
    if rows:  # said first: how the query was read, or that these are candidates ('voice mode' is not Plan Mode)
        text = f"{_lead(snapshot, resolution, rows, loose)}\n\n{text}"
    if not rows:  # nothing fit the budget (or no candidate has a snippet): name the candidates instead
        names = ", ".join(f"{index.capabilities[slug].name} ({slug})" for slug, _ in pairs[:SUGGESTED_NAMES])
        text = f"{text or 'No snippet to suggest'}. Candidates: {names}. Call again with one slug."
    others = _other_candidates(snapshot, resolution, {row["capability"] for row in rows}, agent)
    if others:
        value["candidates"] = others
    if others and category is None:  # a category's are named in its first line
        names = ", ".join(f"{row['name']} ({row['slug']}, {row['matchConfidence']})" for row in others)
        text = f"{text.rstrip()}\n\nOther candidates: {names}. Call again with one slug."
    elif rows:
        text = f"{text.rstrip()}\n\n{_next_step(rows, agent, loose)}"
    if agent is not None and (unrecorded := [row["name"] for row in rows if row.get("recorded") is False]):
        text = f"{text.rstrip()}\n\n{_unrecorded_suggestions(agent, unrecorded)}"
    return {"text": text, "value": value}


def _next_step(rows: list[dict[str, Any]], agent: str | None, other_words_said: bool) -> str:
    """The last line of suggestions that name no other candidates: a snippet is a summary, the record is a call away;
    for an agent whose data records none of them, every agent's record is (compare_capability): this tool would
    answer with no record, and where only some are recorded, the line says so of the others. Other words are offered
    unless the first line did."""
    recorded = [row.get("recorded") is not False for row in rows]  # no agent asked: every row has its record
    if any(recorded):
        which = "" if all(recorded) else f"; for one {agent} has no record of, compare_capability gives every agent's"
        step = f"Call again with one's name or slug for its full record (setup, limits, sources{which})"
        words = ", or with"
    else:
        step = "compare_capability with one's name or slug gives every agent's record of it (setup, limits, sources)"
        words = "; call again with"
    return f"{step}." if other_words_said else f"{step}{words} other words if none of these is it."


def _loosely_related(snapshot: Snapshot, resolution: Resolution, rows: list[dict[str, Any]]) -> bool:
    """Whether suggestions that resolved nothing, and answer no category's name, all have the lowest label: the first
    line then says nothing clearly matches and to call again with other words (`_no_clear_match`), which the closing
    line does not repeat."""
    if resolution.ok or _category_asked(snapshot, resolution) is not None:
        return False
    return _weak(_labels(snapshot), [row["confidence"] for row in rows])


def _lead(snapshot: Snapshot, resolution: Resolution, rows: list[dict[str, Any]], loose: bool) -> str:
    """The first line of suggestions: for a question its words answered ('Does Copilot CLI support hooks?'), how it
    was read, as a document's loose reading says it (the labels alone would leave the model guessing what they are),
    and what the snippets below are; else that these are candidates, or a category's capabilities."""
    if not resolution.ok:
        if category := _in_category(snapshot, resolution):
            return f"{category} {_summaries(len(rows), len(_members(resolution)))}"
        return _opener(snapshot, resolution.query, rows[0]["label"], loose)
    how = _LOOSE_READINGS.get(resolution.resolved_by or "", "by its words")
    return f"{_read_as(snapshot, resolution, how)}{_heading(rows, resolution.value or '')}"


def _summaries(shown: int, members: int) -> str:
    """What a category's answer says of the snippets below its first line: all its members', or some of them."""
    if shown == members:
        return "Its summary:" if shown == 1 else "Their summaries:"
    return "The summary of one of them:" if shown == 1 else f"Summaries of {shown} of them:"


def _heading(rows: list[dict[str, Any]], slug: str) -> str:
    """What the snippets under a resolved reading are: its own summary or the closest by the query, best first, then
    capabilities like it (`similarTo` neighbours, not matches of the query)."""
    ranked = [row for row in rows if not row.get("related")]
    related = len(rows) - len(ranked)
    what = []
    if ranked and ranked[0]["capability"] == slug:
        what.append("its summary" if len(ranked) == 1 else "its summary, then the next closest")
    elif ranked:
        what.append("the closest capability" if len(ranked) == 1 else "the closest capabilities, best first")
    if related:
        what.append("a capability like it" if related == 1 else "capabilities like it")
    return f"; {', then '.join(what)}:"


def _unrecorded_suggestions(agent: str, names: list[str]) -> str:
    """The last line of suggestions some of which the agent's data does not mention (their snippets are other agents'):
    said of the suggestions, so that it is not read as the answer to the question ('PR review' is not Git
    Integration, and Code Review may be in the data)."""
    theirs = "its snippet comes" if len(names) == 1 else "their snippets come"
    return (
        f"Of these suggestions, {agent}'s data has no record of {', '.join(names)} ({theirs} from other agents' "
        "records): no data, not a no."
    )


def _other_candidates(
    snapshot: Snapshot, resolution: Resolution, suggested: set[str], agent: str | None
) -> list[dict[str, Any]]:
    """When nothing was resolved, the scorer's candidates that got no snippet, named in one short row each: the
    right capability is often ranked below the snippets' three (`capidx.server.resolve.SHOWN_CANDIDATES`)."""
    if resolution.ok:
        return []
    rows = _candidates(snapshot, resolution, agent)["candidates"]
    return [row for row in rows if row["slug"] not in suggested]


def _setting(injection: Any, name: str, default: int) -> int:
    value = getattr(injection, name, None) if injection is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _suggested(
    snapshot: Snapshot, resolution: Resolution, agent_id: str | None, **meta: Resolution | list[Resolution]
) -> types.CallToolResult:
    answer = suggestions(snapshot, resolution, agent_id)
    content = [types.TextContent(text=answer["text"])]
    if said := _agent_readings(snapshot, meta):  # the suggestions themselves say how the capability was read
        content.append(types.TextContent(text=" ".join(said)))
    return types.CallToolResult(
        content=content,
        structured_content=answer["value"],
        _meta={RESOLUTION_META: _describe(meta)},
    )


def _resolve_agents(snapshot: Snapshot, names: list[str]) -> tuple[list[Resolution], str | None]:
    """Each name's agent; a name that is none but joins names of agents ('claude and gemini', 'claude code vs copilot
    in VS Code'), as models write a comparison, is those agents."""
    resolutions: list[Resolution] = []
    budget, unread = JOINED_RUNS, []
    for asked in names:
        whole = resolve_agent(snapshot.index, asked)
        name = unicodedata.normalize("NFKC", asked)  # a full-width '＆' or '／' joins as '&' and '/' do
        ends = [0, *(i for m in _JOINED.finditer(name) for i in m.span()), len(name)] if not whole.ok else []
        pieces = [(a, b) for a, b in zip(ends[::2], ends[1::2], strict=True) if name[a:b].strip()]
        runs = len(pieces) * (len(pieces) + 1) // 2
        if len(pieces) < 2 or runs > budget:
            unread += [asked] if len(pieces) > 1 else []
            resolutions.append(whole)
            continue
        budget -= runs
        resolutions += _joined(snapshot, name, pieces) or [whole]
    failed = [r for r in resolutions if not r.ok]
    if not failed:
        return resolutions, None
    problem = _agents_problem(snapshot, failed)
    if unread:
        problem += f" {', '.join(map(repr, unread))}: more names joined than one call reads; give them as a list."
    return resolutions, problem


def _joined(snapshot: Snapshot, name: str, pieces: list[tuple[int, int]]) -> list[Resolution]:
    """The reading of the pieces as runs of adjacent pieces, each an agent's name, with the fewest runs that name no
    agent, then the fewest pieces in those, then the fewest runs ('R&D Agent vs claude': 'R&D Agent', 'claude'; in
    'claude code vs copilot in VS Code vs emacs' only 'emacs' fails); [] if no run of it names an agent."""

    @functools.cache
    def run(first: int, last: int) -> Resolution:
        return resolve_agent(snapshot.index, name[pieces[first][0] : pieces[last][1]])

    best: list[tuple[tuple[int, int, int], list[Resolution]]] = [((0, 0, 0), [])]  # by the pieces read so far
    for end in range(1, len(pieces) + 1):
        options = []
        for start, ((failed, failed_pieces, count), readings) in enumerate(best):
            bad = not (reading := run(start, end - 1)).ok
            options.append(((failed + bad, failed_pieces + bad * (end - start), count + 1), [*readings, reading]))
        best.append(min(options, key=lambda option: option[0]))
    readings = best[-1][1]
    return readings if any(r.ok for r in readings) else []


def _filtered(
    snapshot: Snapshot, kind: str, listed: str, resolved: Mapping[str, Resolution], note: str = ""
) -> types.CallToolResult:
    """The `kind` document for the resolved filter; an empty `listed` list when the build has none for it (with `note`
    all the same: an agent with nothing in a category still gets the names its data does not mention)."""
    params = {key: r.value for key, r in resolved.items()}
    document = snapshot.find(kind, **params)
    entry = snapshot.index.capabilities.get(params.get("capability") or "")
    unrecorded = entry is not None and params.get("agent") is not None and params["agent"] not in entry.agents
    if document is None or unrecorded:  # said, so that an empty list is not read as the agent lacking it all
        value = {"filter": params, listed: [], "hint": _nothing(snapshot, listed, params, bool(note))}
        return _synthesized(snapshot, value, note, **resolved)
    return _document(snapshot, document, note, **resolved)


def _not_listed(snapshot: Snapshot, resolved: Mapping[str, Resolution]) -> str:
    """After a list: the capabilities of the catalog (in the category) that the agent's data does not mention, which
    the list leaves out; for a category's list, the same for the agents whose data leaves some out, those that leave
    out the same ones together (up to `NOT_LISTED_SHOWN` sentences, then the other agents as leaving some out too).
    A category's note names every such agent's id, then every capability, within `NOT_LISTED_CHARS` characters
    shared by all (ids first: a count of names is no use without whose they are), then says how many more (only
    their number once the room is spent), and once which list names them. A model would otherwise read a missing
    entry as a no, and cannot see names not given."""
    category = resolved["category"].value if "category" in resolved else None
    if "agent" in resolved:
        agents = [resolved["agent"].value or ""]
    elif category is not None:
        agents = list(snapshot.index.agents)
    else:
        return ""
    entries = [entry for entry in snapshot.index.capabilities.values() if category in (None, entry.category)]
    groups: dict[tuple[str, ...], list[str]] = {}  # what the agents leave out -> those agents, in the index's order
    others: list[str] = []  # agents past the sentences said
    for agent in agents:
        if not (missing := tuple(entry.name for entry in entries if agent not in entry.agents)):
            continue
        if missing in groups or len(groups) < NOT_LISTED_SHOWN:
            groups.setdefault(missing, []).append(agent)
        else:
            others.append(agent)
    room = NOT_LISTED_CHARS
    whose: list[tuple[list[str], int]] = []
    for ids in [*groups.values(), others]:
        shown = ids if "agent" in resolved else fitting(ids, room)  # the asked agent is named whatever the room
        room = max(0, room - len(", ".join(shown)) * ("agent" not in resolved))
        whose.append((shown, len(ids)))
    said, cut = [], any(len(shown) < count for shown, count in whose)
    for missing, (ids, count) in zip(groups, whose[:-1], strict=True):
        shown = fitting(missing, room)
        room = max(0, room - len(", ".join(shown)))
        cut = cut or len(shown) < len(missing)
        said.append(f"Not in {_data_of(ids, count)}, so not listed: {_some_of(shown, len(missing))}")
    if others:
        said.append(f"Some of it is not in {_data_of(*whose[-1])} either")
    where = _narrower("agent" in resolved, category is not None) if cut or others else ""
    return f"{'. '.join(said)} (no data, not a no).{where}" if said else ""


def _data_of(ids: list[str], count: int) -> str:
    """ "copilot-cli's data", "the data of copilot-cli, gemini-cli", "the data of copilot-cli and 3 more agents", "the
    data of 4 agents": whose data a list's note speaks of, by the `ids` the room let it name of `count` agents."""
    if count == 1 and ids:
        return f"{ids[0]}'s data"
    if not ids:
        return f"the data of {plural(count, 'agent')}"
    more = f" and {plural(count - len(ids), 'more agent')}" if count > len(ids) else ""
    return f"the data of {', '.join(ids)}{more}"


def _some_of(shown: list[str], count: int) -> str:
    """'Hooks, Plugins and 3 more' of `count` capabilities; '5 capabilities' when none is named."""
    if not shown:
        return plural(count, "capability", "capabilities")
    return ", ".join(shown) + (f" and {count - len(shown):,} more" if count > len(shown) else "")


def _narrower(agent: bool, category: bool) -> str:
    """Which list names what a list's note did not: by the agent and a category; none narrower for both."""
    if not agent:
        return " A list by an agent and this category names those not named here."
    return "" if category else " A list by that agent and a category names those not named here."


def _nothing(snapshot: Snapshot, listed: str, params: Mapping[str, str | None], noted: bool = False) -> str:
    """Why a filter has nothing to list: the agent's data does not mention it (no data, not a no), or no source.
    `noted`: a note follows, which for a list names what the agent's data does not mention as no data, not a no:
    the hint does not say it twice."""
    agent, capability, category = (params.get(key) for key in ("agent", "capability", "category"))
    entry = snapshot.index.capabilities.get(capability or "")
    if agent is not None and (entry is None or agent not in entry.agents):
        if entry is not None:
            return f"{agent}'s data does not mention {capability}: the catalog has no data on it, which is not a no."
        about = f"capability in {category}" if category else "capability"
        no_data = "." if noted else ": the catalog has no data on it, which is not a no."
        return f"{agent}'s data records no {about}{no_data}"
    return f"No {listed} recorded for this filter."


# --- the tools --------------------------------------------------------------------------------------


def lookup_capability(snapshot: Snapshot, agent: str, capability: str) -> types.CallToolResult:
    agent_res = resolve_agent(snapshot.index, agent)
    if not agent_res.ok:
        return _error(_one_agent_problem(snapshot, agent_res), agent=agent_res)
    cap_res = resolve_capability(snapshot.index, capability, agent=agent_res.value)
    if wants_suggestions(snapshot, cap_res):
        return _suggested(snapshot, cap_res, agent_res.value, agent=agent_res, capability=cap_res)
    if cap_res.status == "ambiguous":
        return _synthesized(
            snapshot, _candidates(snapshot, cap_res, agent_res.value), agent=agent_res, capability=cap_res
        )
    if not cap_res.ok:  # unknown: suggestions as a normal result (issue 12)
        return _synthesized(
            snapshot, _candidates(snapshot, cap_res, agent_res.value), agent=agent_res, capability=cap_res
        )
    document = snapshot.find("lookup", agent=agent_res.value, capability=cap_res.value)
    if document is None:
        return _error(f"The build has no lookup document for {agent_res.value} / {cap_res.value}; rebuild it.")
    asked = agent_res.value or ""
    notes = (_borrowed(snapshot, cap_res, asked), _unrecorded(snapshot, cap_res.value or "", [asked]))
    return _document(snapshot, document, " ".join(filter(None, notes)), agent=agent_res, capability=cap_res)


def compare_capability(snapshot: Snapshot, capability: str, agents: list[str] | None = None) -> types.CallToolResult:
    cap_res = resolve_capability(snapshot.index, capability)
    if cap_res.status == "ambiguous" and snapshot.has_kind("snippet"):
        return _suggested(snapshot, cap_res, None, capability=cap_res)
    if cap_res.status == "ambiguous":
        return _synthesized(snapshot, _candidates(snapshot, cap_res, None), capability=cap_res)
    if not cap_res.ok:
        return _synthesized(snapshot, _candidates(snapshot, cap_res, None), capability=cap_res)
    document = snapshot.find("compare", capability=cap_res.value)
    if document is None:
        return _error(f"The build has no comparison for {cap_res.value}; rebuild it.")
    if not agents:
        return _document(
            snapshot, document, _unrecorded(snapshot, cap_res.value or "", snapshot.index.agents), capability=cap_res
        )
    agent_res, problem = _resolve_agents(snapshot, agents)
    if problem:
        return _error(problem, capability=cap_res, agents=agent_res)
    wanted = {r.value for r in agent_res}
    whole = document.value
    if not isinstance(whole, dict) or not isinstance(whole.get("agents"), list):
        return _error(f"The build's comparison for {cap_res.value} is not a JSON object; rebuild it.")
    value = dict(whole)
    value["agents"] = [entry for entry in whole["agents"] if entry.get("agent") in wanted]
    note = _unrecorded(snapshot, cap_res.value or "", [r.value or "" for r in agent_res])
    return _synthesized(snapshot, value, note, capability=cap_res, agents=agent_res)


def list_capabilities(
    snapshot: Snapshot, agent: str | None = None, category: str | None = None
) -> types.CallToolResult:
    if agent is None and category is None:
        return _error("Give an agent, a category, or both (the categories are in this tool's description).")
    resolved: dict[str, Resolution] = {}
    if agent is not None:
        resolved["agent"] = resolve_agent(snapshot.index, agent)
        if not resolved["agent"].ok:
            return _error(_one_agent_problem(snapshot, resolved["agent"], compare=False), **resolved)
    if category is not None:
        resolved["category"] = resolve_category(snapshot.index, category)
        if not resolved["category"].ok:
            if resolved["category"].status == "ambiguous":
                options = ", ".join(c.value for c in resolved["category"].candidates)
                return _error(f"Category {category!r} is ambiguous: it could be {options}.", **resolved)
            if (slug := snapshot.index.keys.get(normalize(category))) is not None:  # a capability's name
                hint = f" {category!r} is a capability ({slug}): call lookup_capability or compare_capability."
                return _error(f"Unknown category {category!r}.{hint}", **resolved)
            return _error(f"Unknown category {category!r}.{_closest(resolved['category'])}", **resolved)
    # An agent with nothing in that category has no document.
    return _filtered(snapshot, "list", "capabilities", resolved, _not_listed(snapshot, resolved))


def get_sources(snapshot: Snapshot, agent: str | None = None, capability: str | None = None) -> types.CallToolResult:
    if agent is None and capability is None:
        return _error("Give an agent, a capability, or both.")
    resolved: dict[str, Resolution] = {}
    if agent is not None:
        resolved["agent"] = resolve_agent(snapshot.index, agent)
        if not resolved["agent"].ok:
            return _error(_one_agent_problem(snapshot, resolved["agent"], compare=False), **resolved)
    agent_id = resolved["agent"].value if "agent" in resolved else None
    if capability is not None:
        resolved["capability"] = resolve_capability(snapshot.index, capability, agent=agent_id)
        if resolved["capability"].status == "ambiguous":
            return _synthesized(snapshot, _candidates(snapshot, resolved["capability"], agent_id), **resolved)
        if not resolved["capability"].ok:
            return _synthesized(snapshot, _candidates(snapshot, resolved["capability"], agent_id), **resolved)
    # The agent has not recorded that capability: no document, nothing cited.
    found = resolved.get("capability")
    notes = []
    if found and agent_id:  # the sources of the record are shown, not the record itself
        uncited = _uncited(snapshot, found, agent_id)
        shown = "asked about here" if uncited else "whose sources are listed above"
        notes = [_borrowed(snapshot, found, agent_id, shown), uncited]
    return _filtered(snapshot, "sources", "sources", resolved, " ".join(filter(None, notes)))


def _uncited(snapshot: Snapshot, found: Resolution, agent: str) -> str:
    """An agent's record that cites nothing is answered with an empty list, which alone reads like a lost answer.
    Nothing when the agent has no record of the capability: the build writes an empty sources document for every
    pair, and the answer's hint already says there is no data (there is no record to cite nothing)."""
    entry = snapshot.index.capabilities.get(found.value or "")
    if entry is None or agent not in entry.agents:
        return ""
    document = snapshot.find("sources", agent=agent, capability=found.value)
    value = document.value if document is not None else None  # parsed on each use: once here
    if not isinstance(value, dict) or value.get("sources"):
        return ""
    return f"{agent}'s record of {entry.name} cites no sources."


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
    return {
        key: _comma_separated(value)
        if isinstance(value, str) and key in properties and properties[key].get("type") == "array"
        else value
        for key, value in arguments.items()
    }


def _comma_separated(text: str) -> list[str]:
    """The names a string separates by commas ('claude, gemini'), or the string itself when it holds none."""
    return [part.strip() for part in text.split(",") if part.strip()] or [text]


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
    arguments = _listed(validators.by_name[name], arguments)
    problems = validators.problems(name, arguments)
    if problems:
        return _error(f"Invalid arguments for {name}: " + "; ".join(problems))
    return HANDLERS[name](snapshot, **arguments)
