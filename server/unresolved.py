"""What an answer says when a capability name did not resolve: candidates, or budgeted suggestions.

An unknown or unclear name, or a question only scoring could read, is answered with what is closest rather
than an error: `suggestions` packs the ranked snippets within the build's budget (match.json `injection`)
with a first line saying how the query was read (or that nothing clearly matches) and a last saying what to
call next; `candidates` names the closest capabilities as rows with a hint, for builds without snippets and
for `get_sources`. A query that is a category's name is answered with that category's capabilities.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from capidx.schema.labels import Label, sorted_labels
from capidx.schema.lexicon import identifiers
from capidx.schema.text import normalize, terms
from capidx.server import records, suggest
from capidx.server.matchindex import Candidate, CapabilityEntry, MatchIndex, Resolution
from capidx.server.names import GENERIC_AGENT_WORDS, category_named
from capidx.server.query import root
from capidx.server.readings import LOOSE_READINGS, listing, nothing_in, quoted, read_as
from capidx.server.snapshot import Artifact, Snapshot

# A capability argument of at least this many words that no name, alias, wording or trigger matches
# is a question ("how do I add an MCP server to gemini"): it is answered with budgeted suggestions.
FREE_TEXT_WORDS = 3
SUGGESTED_NAMES = 3  # candidates named when no snippet fits the budget
MEMBERS_NAMED = 12  # capabilities an answer to a category's name names, at most
# Agents a comparison may name (compare_capability's `agents`): with no agent asked, an agent's own snippet is chosen
# only in a catalog of at most as many, since it is followed by where every agent stands, outside the budget.
EVERY_AGENT_NAMED = 20
# The one label of a category's members, which qualifies every one (what their words share is no match confidence).
MEMBERS = (Label("", 0.0),)
_AGENT_ROOTS = frozenset(map(root, GENERIC_AGENT_WORDS))  # 'agents': which agents, no word a record says


def candidates(snapshot: Snapshot, resolution: Resolution, agent: str | None) -> dict[str, Any]:
    """The closest capabilities as rows, with a hint; for a category's name, every member its hint names (one each)."""
    category = _category_asked(snapshot, resolution)
    rows = []
    for candidate in resolution.candidates if category is None else _members(resolution)[:MEMBERS_NAMED]:
        entry = snapshot.index.capabilities[candidate.value]
        row = {"slug": entry.slug, "name": entry.name, "category": entry.category}
        if category is None:  # a category's member is one, not a match of some confidence
            row["matchConfidence"] = candidate.confidence
        if agent is not None:
            row |= _standing(entry, agent)
        rows.append(row)
    value: dict[str, Any] = {"query": resolution.query, "candidates": rows}
    if agent is not None:
        value["agent"] = agent
    if resolution.status == "unknown":  # a normal answer, not an error: the closest names and where to browse
        hint = _nothing_in_category(snapshot, resolution, rows, agent)
        value["hint"] = hint or _no_words_match(resolution.query, bool(rows))
        return value
    elsewhere = _elsewhere(rows, agent)  # what calling again for that agent would not give
    partly = _partly(rows, agent)  # said of the candidates the agent's data has no record of, when only some
    if category is not None:
        again = f"{elsewhere}." if elsewhere else f"Call again with one capability's name or slug{partly}."
        value["hint"] = f"{_in_category(snapshot, resolution)} {again}"
    elif _weak(_labels(snapshot), [c.confidence for c in resolution.candidates]):
        value["hint"] = (
            f"{_nothing_clearly(resolution.query)}. {elsewhere}; or call again with other words if none of these is it."
            if elsewhere
            else f"{_no_clear_match(resolution.query)}; if one is, call again with its slug{partly}."
        )
    else:
        value["hint"] = (
            f"No clear match. {elsewhere}."
            if elsewhere
            else f"No clear match: call again with one candidate's slug{partly}."
        )
    return value


def _elsewhere(rows: list[dict[str, Any]], agent: str | None) -> str:
    """Where a candidate's record is when the asked agent's data records none of them: calling again for that agent
    would answer with no record (or no sources), so every agent's are pointed to, as `_next_step` does for
    suggestions; one candidate is named by its slug. "" when no agent was asked or one candidate is recorded; no
    closing period, so that a hint can go on."""
    if agent is None or not rows or any(row.get("recorded") for row in rows):
        return ""
    which, named = ("it", repr(rows[0]["slug"])) if len(rows) == 1 else ("any of these", "one's name or slug")
    return (
        f"{agent}'s data has no record of {which} (no data, not a no): compare_capability with {named} gives every "
        "agent's record of it, and get_sources with it and no agent every agent's sources"
    )


def _partly(rows: list[dict[str, Any]], agent: str | None, compare: str = "compare_capability") -> str:
    """The clause a hint adds when the agent's data records only some of the candidates (`recorded`): calling again
    for that agent with one it has no record of would answer with no record, as `_next_step` says of suggestions."""
    recorded = [row.get("recorded") for row in rows]
    if agent is None or all(recorded) or not any(recorded):
        return ""
    return f"; for one {agent} has no record of, {compare} gives every agent's"


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
        return f"More than one capability matches {quoted(query)} closely; the closest:"
    return f"No single clear match for {quoted(query)}; the closest capabilities:"


def category_answered(snapshot: Snapshot, resolution: Resolution) -> str | None:
    """The category an answer read its capability query as the name of (`resolved_by` "category"); None for any
    other answer."""
    return category_named(snapshot.index, resolution.query) if resolution.resolved_by == "category" else None


def _category_asked(snapshot: Snapshot, resolution: Resolution) -> str | None:
    """The category a capability query named ('security'), answered with its capabilities; None for any other, and
    for a category nothing is in (`_nothing_in_category`), whose answer's candidates are matches of its words."""
    category = category_answered(snapshot, resolution)
    return None if category in snapshot.index.empty_categories else category


def _nothing_in_category(
    snapshot: Snapshot, resolution: Resolution, rows: list[dict[str, Any]], agent: str | None
) -> str:
    """What an answer to the name of a category nothing is in ('debugging') says: that, and that the capabilities
    offered (of other categories, found by its words: 'code generation', Test Generation) only share words with it,
    with where their records are when the asked agent's data has none of them (`_elsewhere`, `_partly`); "" for any
    other answer."""
    category = category_answered(snapshot, resolution)
    if category is None or category not in snapshot.index.empty_categories:
        return ""
    named = "" if normalize(category) == normalize(resolution.query) else f", {category}"
    nothing = nothing_in(category, snapshot.index.listings)
    said = f"{resolution.query!r} is a category{named}, not one capability, and {nothing}."
    if not rows:
        return said
    these = (
        "The capability here, of another category, shares"
        if len(rows) == 1
        else "The capabilities here, of other categories, share"
    )
    shared = f"{said} {these} words with it"
    if elsewhere := _elsewhere(rows, agent):  # calling again for that agent would answer with no record
        return f"{shared}. {elsewhere}."
    return f"{shared}: if one was meant, call again with its slug{_partly(rows, agent)}."


def _in_category(snapshot: Snapshot, resolution: Resolution) -> str:
    """What an answer to a category's name ('security') says first: that it is one, its capabilities (up to
    `MEMBERS_NAMED`), and where its whole list is. Its members come as such, not as matches: each is one of it."""
    category = _category_asked(snapshot, resolution)
    if category is None:
        return ""
    named = "" if normalize(category) == normalize(resolution.query) else f", {category}"
    members = [c.label for c in _members(resolution)]
    more = f" and {len(members) - MEMBERS_NAMED:,} more" if len(members) > MEMBERS_NAMED else ""
    its = "Its only capability" if len(members) == 1 else f"Its {len(members):,} capabilities"
    return (
        f"{resolution.query!r} is a category{named}, not one capability. {its}: "
        f"{', '.join(members[:MEMBERS_NAMED])}{more}; {listing(category)} lists all of it."
    )


def _no_clear_match(query: str) -> str:
    """What an unresolved answer whose candidates are all weak says first ('voice input'): the model must not pick one
    of them for an answer, nor read the catalog's silence as a no. Only the query's words failed to match: the
    catalog may record it in others ('how much have I spent' is Usage Tracking's '/cost')."""
    return (
        f"{_nothing_clearly(query)}. If none of these is it, that is not a no: the catalog may word it otherwise, so "
        "call again with other words or a capability's own name"
    )


def _nothing_clearly(query: str) -> str:
    return f"Nothing in this catalog clearly matches {quoted(query)}"


def _no_words_match(query: str, closest: bool) -> str:
    """The hint of an answer that resolved nothing: said as what the server knows (no capability matches the query
    closely enough to answer; some may share a word of it weakly), not as the catalog having no data, which it may
    hold under other words."""
    names = "a candidate's slug if one was meant, " if closest else ""
    return (
        f"No capability matches {quoted(query)} closely enough to answer; that is not a no, as the catalog may word "
        f"it otherwise. Call again with {names}other words, or a capability's name from list_capabilities with an "
        "agent or a category."
    )


def wants_suggestions(snapshot: Snapshot, resolution: Resolution) -> bool:
    """For a lookup or a comparison: no clear winner, or free text that only scoring could resolve -- and a build with
    snippets to answer with (older builds have none: they answer with the document or candidates)."""
    if not snapshot.has_kind("snippet"):
        return False
    if resolution.status == "ambiguous":
        return True
    free_text = len(normalize(resolution.query).split()) >= FREE_TEXT_WORDS
    named = resolution.resolved_by == "identifier"  # identifiers alone ('/pr, /diff, /worktree') name, not ask
    return resolution.ok and resolution.scored and free_text and not named


def _snippet(snapshot: Snapshot, slug: str, agents: Sequence[str], asked: frozenset[str]) -> Artifact | None:
    """The first asked agent's own snippet for the capability (of those that record it), else the cross-agent one,
    whose description is some agent's. With no agent asked, the record whose snippet has more of the query's words
    (`asked`) than the cross-agent one speaks instead ('ollama' is in copilot-cli's record of Model Selection, not
    in claude-code's, which the cross-agent snippet quotes): its words are what the question was about. Only a record
    of an agent that has the capability: one that lacks it opened 'which agents have tab completion' with "Inline Code
    Completion (copilot-cli): ✗ not available" while VS Code Copilot has it (a blind model test)."""
    own = (snapshot.find("snippet", agent=agent, capability=slug) for agent in agents)
    found = next(filter(None, own), None) or snapshot.find("snippet", capability=slug)
    if agents or not asked or found is None:
        return found
    entry = snapshot.index.capabilities[slug]
    having = (agent for agent in entry.agents if entry.available_to(agent))
    voices = [found, *filter(None, (snapshot.find("snippet", agent=agent, capability=slug) for agent in having))]
    return max(voices, key=lambda artifact: len(asked.intersection(_described(artifact))))  # the first of equals


def _described(snippet: Artifact) -> list[str]:
    """The roots of a snippet's description, its second line (the first is its heading): what its record says, not
    how to set it up, which the agents' own snippets add and the cross-agent one leaves out. Roots: 'deploy' asked is
    the 'deployments' a record says."""
    lines = snippet.text.split("\n", 2)
    return [root(term) for term in terms(lines[1])] if len(lines) > 1 else []


def _suggestion_candidates(
    snapshot: Snapshot,
    pairs: list[tuple[str, float]],
    agents: Sequence[str],
    asked: frozenset[str],
    speakers: dict[str, str],
    room: int = 0,
) -> list[suggest.Candidate]:
    """The candidates with their snippets; `speakers` gets, for a snippet chosen by its words (`_snippet`), the
    agent whose record it is; `room`: tokens the first may take to speak for every compared agent."""
    primary = snapshot.encodings[0]
    found = []
    for slug, confidence in pairs:
        artifact = _snippet(snapshot, slug, agents, asked)
        if artifact is not None and primary in artifact.tokens:
            found.append(suggest.Candidate(slug, confidence, artifact.text, artifact.tokens[primary]))
            if not agents and (speaker := artifact.params.get("agent")):
                speakers[slug] = speaker
    if found and len(agents) > 1 and room:  # a comparison's first suggestion: each compared agent's own record
        found[0] = _every_voice(snapshot, found[0], agents, room)
    return found


def _every_voice(snapshot: Snapshot, first: suggest.Candidate, agents: Sequence[str], room: int) -> suggest.Candidate:
    """The first suggestion of a comparison of some agents in each one's own snippet, as many as fit in `room`
    tokens, in the order asked: one agent's snippet said another's ✓ with none of its limits ('Not on the free
    plan' of a review, a blind model test). Joined by a blank line, each join is charged one token more than the
    measured counts (a snippet's last line break and the one added may tokenize as one more: 55 of 608 pairs of the
    catalogs here in cl100k_base, none by more), so the budget still holds without a tokenizer."""
    primary = snapshot.encodings[0]
    own = (snapshot.find("snippet", agent=agent, capability=first.key) for agent in agents)
    parts = [artifact for artifact in own if artifact is not None and primary in artifact.tokens]
    kept, tokens = parts[:1], first.tokens  # the first is the first asked agent's own snippet, when there is one
    for artifact in parts[1:]:
        if tokens + 1 + artifact.tokens[primary] <= room:
            kept.append(artifact)
            tokens += 1 + artifact.tokens[primary]
    if len(kept) < 2:
        return first
    return suggest.Candidate(first.key, first.confidence, "\n".join(artifact.text for artifact in kept), tokens)


def suggestions(
    snapshot: Snapshot,
    resolution: Resolution,
    agent: str | None,
    compared: Sequence[str] = (),
    comparing: bool = False,
) -> dict[str, Any]:
    """Ranked snippets packed within the build's budget (match.json `injection`), then related ones; each the asked
    agent's own where there is one. For a comparison of some agents (`compared`), the first suggestion is in each
    one's own words that fit (`_every_voice`), each other one in the first of them that records it, and a line says
    each suggestion's standing with every one of them. `comparing`: the asked agent is a comparison's one agent, which
    compare_capability gives every agent's record without."""
    index = snapshot.index
    voices = (agent,) if agent is not None else tuple(compared)
    compare = "compare_capability without agents" if comparing else "compare_capability"
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
    few = len(index.agents) <= EVERY_AGENT_NAMED  # where every agent stands is a line of at most as many
    # the query's words a record may say: 'agents' asks which agents ('which agents have tab completion'), and a record
    # saying 'agent' is no closer to the question
    asked = frozenset(map(root, terms(resolution.query))) - _AGENT_ROOTS if not voices and few else frozenset()
    speakers: dict[str, str] = {}  # with no agent asked: a suggestion in one agent's words, and whose
    max_tokens = _setting(injection, "max_tokens", suggest.DEFAULT_MAX_TOKENS)
    overhead = _setting(injection, "overhead_tokens", suggest.FALLBACK_OVERHEAD_TOKENS)
    result = suggest.suggest(
        _suggestion_candidates(snapshot, pairs, voices, asked, speakers, max_tokens - overhead),
        labels=_labels(snapshot) if category is None else MEMBERS,  # a member is one whatever its words' share
        max_snippets=max_snippets,
        max_tokens=max_tokens,
        related=_suggestion_candidates(
            snapshot, [(s, c) for s, c in related if s in index.capabilities], voices, asked, speakers
        ),
        overhead_tokens=overhead,
    )
    rows = []
    for item in result.suggestions:
        entry = index.capabilities[item.key]
        row: dict[str, Any] = {"capability": item.key, "name": entry.name}
        if category is None:  # a category's members are its members, not matches: no label nor confidence
            row |= {"label": item.label, "confidence": item.confidence}
        row["snippet"] = item.snippet
        if agent is not None:
            row |= _standing(entry, agent)
        if compared or item.key in speakers:  # a snippet speaks for one agent: where the others stand
            row["agents"] = _where_they_stand(entry, compared or index.agents)
        if item.related:
            row["related"] = True
        rows.append(row)
    value: dict[str, Any] = {"query": resolution.query}
    if agent is not None:
        value["agent"] = agent
    if category is not None:
        value["category"] = category
    value["suggestions"] = rows
    # What the budget let in and left out is for the client, not the model: `_meta`, not the value the model reads.
    budget = {
        "totalTokens": result.total_tokens,
        "maxTokens": result.max_tokens,
        "tokens": {item.key: item.tokens for item in result.suggestions},
        "omitted": list(result.omitted),
    }
    text = suggest.render_suggestions(result, labelled=category is None)
    # The lines besides the snippets that the value's fields do not hold, also given as `notes`: a client that passes
    # the model only the structured result (Claude Code does, when there is one) drops the text, and with it these
    # lines. Where each agent stands is each row's `agents`, and the other candidates are `candidates`: only the
    # step after them is a note.
    notes: list[str] = []

    def then(line: str) -> str:
        notes.append(line)
        return line

    loose = _loosely_related(snapshot, resolution, rows)  # decided once: the first line and the last both depend on it
    if rows:  # said first: how the query was read, or that these are candidates ('voice mode' is not Plan Mode)
        text = f"{then(_lead(snapshot, resolution, rows, loose))}\n\n{text}"
    # Where agents stand on capabilities loosely related to the query is no answer to it: the line says so.
    of = f", on these loosely related capabilities, not on {quoted(resolution.query)}" if loose else ""
    standing = [row for row in rows if "agents" in row]
    if compared and rows:  # a snippet speaks for one agent: where every asked agent stands, before the next step
        text = f"{text.rstrip()}\n\n{_standings(rows, f'For the agents asked{of}')}"
    elif standing:  # the same, where one agent's words were chosen: of every suggestion, in order (`_every_agent`)
        text = f"{text.rstrip()}\n\n{_standings(_every_agent(index, rows), f'For every agent{of}')}"
    if loose and standing:  # the rows' `agents` hold the standings the line above says; what they are about is a note
        then(
            f"Where the agents stand (each suggestion's agents) is on these loosely related capabilities, not on "
            f"{quoted(resolution.query)}."
        )
    if lacks := _lacking(snapshot, resolution, rows, loose):
        text = f"{text.rstrip()}\n\n{then(lacks)}"
    # A cross-agent snippet leaves the records' limitations out: one that holds a detail of the query is said ('on
    # Windows'), unless a snippet shown (an agent's own) says it.
    asked_about = [(row["capability"], _asked_about(row, agent, compared, index)) for row in rows]
    if limits := records.limited(snapshot, resolution.query, asked_about, " ".join(row["snippet"] for row in rows)):
        text = f"{text.rstrip()}\n\n{then(limits)}"
    others = _other_candidates(snapshot, resolution, {row["capability"] for row in rows}, agent)
    if not rows:  # nothing fit the budget (or no candidate has a snippet): name the candidates instead, once
        names = ", ".join(f"{index.capabilities[slug].name} ({slug})" for slug, _ in pairs[:SUGGESTED_NAMES])
        # named below, with their match, when an 'Other candidates' line follows (a category's answer has none)
        listed = "" if others and category is None else f" Candidates: {names}. Call again with one slug."
        # No candidate reached a label (capidx.yaml's lowest `min_confidence` above 0): nothing matched clearly, which
        # is no "no" either, as an answer with snippets would say.
        empty = "No snippet to suggest" if resolution.ok or category is not None else _no_clear_match(resolution.query)
        text = then(f"{text or empty}.{listed}")
    if others:
        value["candidates"] = others
    if others and category is None:  # a category's are named in its first line
        names = ", ".join(f"{row['name']} ({row['slug']}, {row['matchConfidence']})" for row in others)
        text = f"{text.rstrip()}\n\nOther candidates: {names}. {then(_call_again(rows, others, agent, compare))}"
    elif rows:
        text = f"{text.rstrip()}\n\n{then(_next_step(rows, agent, loose, compare))}"
    if agent is not None and (unrecorded := [row["name"] for row in rows if row.get("recorded") is False]):
        text = f"{text.rstrip()}\n\n{then(_unrecorded_suggestions(agent, unrecorded))}"
    return {"text": text, "value": value, "notes": notes, "budget": budget}


def _lacking(snapshot: Snapshot, resolution: Resolution, rows: list[dict[str, Any]], loose: bool) -> str:
    """Of an unclear answer's first suggestion, beside where other agents stand (a comparison, or no agent asked), the
    query's words other records of it have and an agent's does not (`records.lacking`): 'custom slash commands'
    compared offers Claude Code's Custom Instructions first, whose record speaks of slash commands, with gemini-cli's ✓
    beside it, whose record does not; 'OpenTelemetry export' offers Usage Tracking across agents, ✓ for all four, and
    only gemini-cli's record says OpenTelemetry (a blind model test)."""
    if resolution.status != "ambiguous" or resolution.resolved_by == "category" or loose or not rows:
        return ""
    if "agents" in rows[0]:
        agents = [a["agent"] for a in rows[0]["agents"] if a["recorded"]]
    else:  # a snippet across agents: every agent with a record of it stands beside it ('For every agent')
        agents = [] if "recorded" in rows[0] else sorted(snapshot.index.capabilities[rows[0]["capability"]].agents)
    return " ".join(records.lacking(snapshot, resolution, rows[0]["capability"], agents, True)) if agents else ""


def _asked_about(row: dict[str, Any], agent: str | None, compared: Sequence[str], index: MatchIndex) -> list[str]:
    """The agents a suggestion answers for: the asked one, the compared ones, else every agent with a record of it."""
    if agent is not None:
        return [agent]
    return list(compared) or sorted(index.capabilities[row["capability"]].agents)


def _standing(entry: CapabilityEntry, agent: str) -> dict[str, bool]:
    """Whether the agent's record says it has the capability, and whether it has a record at all: without a record,
    no `available` (a false one would read as a no: no data is not a no)."""
    if agent not in entry.agents:
        return {"recorded": False}
    return {"available": entry.available_to(agent), "recorded": True}


def _where_they_stand(entry: CapabilityEntry, agents: Iterable[str]) -> list[dict[str, Any]]:
    """A suggestion's `agents`: each agent with its standing (`_standing`)."""
    return [{"agent": agent, **_standing(entry, agent)} for agent in agents]


def _every_agent(index: MatchIndex, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every suggestion with where every agent stands, in the order shown: the line of only those in one agent's
    words read as the answer ('mcp' compared: MCP Support offered first across agents, then "For every agent: Debug
    Logging: claude-code ✓, …", a blind model test)."""
    return [
        row
        if "agents" in row
        else {**row, "agents": _where_they_stand(index.capabilities[row["capability"]], index.agents)}
        for row in rows
    ]


def _standings(rows: list[dict[str, Any]], whom: str) -> str:
    """Each suggestion's standing with the agents a comparison asked about (or every agent), of whom its snippet
    speaks for one: 'For the agents asked: Hooks: claude-code ✓, gemini-cli ✗; no record: aider (no data, not a
    no).'"""
    said = []
    for row in rows:
        marks = [f"{a['agent']} {'✓' if a['available'] else '✗'}" for a in row["agents"] if a["recorded"]]
        unrecorded = [a["agent"] for a in row["agents"] if not a["recorded"]]
        parts = [", ".join(marks)] if marks else []
        parts += [f"no record: {', '.join(unrecorded)}"] if unrecorded else []
        said.append(f"{row['name']}: {'; '.join(parts)}")
    return f"{whom} (✓ available, ✗ not; no record: no data, not a no): {'. '.join(said)}."


# What a full record may hold beyond a snippet; not every record holds each ('where recorded').
_HELD = "setup, limits, caveats, sources where recorded"


def _call_again(
    rows: list[dict[str, Any]], others: list[dict[str, Any]], agent: str | None, compare: str = "compare_capability"
) -> str:
    """The last line's step after suggestions and other candidates: calling again for an agent whose data records
    none of them would answer with no record, so every agent's record is pointed to (compare_capability); where only
    some are recorded, the line says so of the others, as `_next_step` does."""
    listed = [*rows, *others]
    if not any(row.get("recorded") is not False for row in listed):  # no agent asked: every one recorded
        return f"{compare} with one's name or slug gives every agent's record of it ({_HELD})."
    return f"Call again with one slug{_partly(listed, agent, compare)}."


def _next_step(
    rows: list[dict[str, Any]], agent: str | None, other_words_said: bool, compare: str = "compare_capability"
) -> str:
    """The last line of suggestions that name no other candidates: a snippet is a summary, the record is a call away;
    for an agent whose data records none of them, every agent's record is (compare_capability): this tool would
    answer with no record, and where only some are recorded, the line says so of the others. One suggestion is named
    by its slug. Other words are offered unless the first line did."""
    recorded = [row.get("recorded") is not False for row in rows]  # no agent asked: every row has its record
    named = f"{rows[0]['capability']!r}" if len(rows) == 1 else "one's name or slug"
    if any(recorded):
        step = f"Call again with {named} for its full record ({_HELD}{_partly(rows, agent, compare)})"
        words = ", or with"
    else:
        step = f"{compare} with {named} gives every agent's record of it ({_HELD})"
        words = "; call again with"
    return f"{step}." if other_words_said else f"{step}{words} other words if none of these is it."


def _loosely_related(snapshot: Snapshot, resolution: Resolution, rows: list[dict[str, Any]]) -> bool:
    """Whether suggestions that resolved nothing, and answer no category's name nor lead with a capability whose
    records hold an identifier of the query ('CLAUDE.md'), all have the lowest label: the first
    line then says nothing clearly matches and to call again with other words (`_no_clear_match`), which the closing
    line does not repeat."""
    if resolution.ok or _category_asked(snapshot, resolution) is not None:
        return False
    held = (
        snapshot.index.identifier_holders
    )  # a first suggestion whose records hold the identifier asked: no loose match
    if rows and any(held(token, rows[0]["capability"]) for token in identifiers(resolution.query)):
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
    how = LOOSE_READINGS.get(resolution.resolved_by or "", "by its words")
    return f"{read_as(snapshot, resolution, how)}{_heading(rows, resolution.value or '')}"


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
    rows = candidates(snapshot, resolution, agent)["candidates"]
    return [row for row in rows if row["slug"] not in suggested]


def _setting(injection: Any, name: str, default: int) -> int:
    value = getattr(injection, name, None) if injection is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default
