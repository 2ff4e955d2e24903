"""Agent arguments as models write them, and what is said when they name no one agent.

Models join names in one string ('claude vs gemini', 'claude, gemini', even 'claude gemini') when comparing, and
misspell or guess ids outside the catalog. `resolve_agents` reads each name, a joined string as the agents it joins
(within a bounded number of resolutions per call), which the tools answer for each agent; `one_agent` reads one
agent named more than once, and says why an argument names no agent; `covered` says which agents the catalog has,
for the tools and the resource templates alike.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

from capidx.schema.text import normalize
from capidx.server.matchindex import Resolution
from capidx.server.names import category_named, generic_agent, joiners, resolve_agent
from capidx.server.readings import REPEATED, REPEATED_MISTYPED, listing, nothing_in
from capidx.server.snapshot import Snapshot

# Every run of adjacent pieces between what joins names (`names.joiners`) is resolved once: a call resolves at most
# JOINED_RUNS runs (one string of eight pieces).
JOINED_RUNS = 36
COVERED_SHOWN = 12  # agent ids an unknown-agent error lists; past it, their number and the closest


def _agents_problem(snapshot: Snapshot, failed: list[Resolution]) -> str:
    """Each ambiguous name with its options; one that names every agent ('all agents') pointed at compare_capability;
    the unknown ones together, said to be outside the catalog first (the answer must come from elsewhere), with the
    ids it covers once, or past `COVERED_SHOWN` their number."""
    problems = []
    once: dict[str, Resolution] = {}
    for resolution in failed:  # a name given twice, in any case, is said once, as first written
        once.setdefault(normalize(resolution.query), resolution)
    failed = list(once.values())
    for resolution in (r for r in failed if r.status == "ambiguous"):
        options = ", ".join(f"{c.value} ({c.label})" for c in resolution.candidates)
        problems.append(f"Agent {resolution.query!r} is ambiguous: it could be {options}. Call again with one id.")
    every = [r for r in failed if r.status != "ambiguous" and generic_agent(snapshot.index, r.query)]
    comparison = "compare_capability without `agents` answers for every agent"
    problems += [f"{r.query!r} names no one agent: {comparison}." for r in every]  # 'all agents': each, in the catalog
    if unknown := [r for r in failed if r.status != "ambiguous" and r not in every]:
        named = ", ".join(repr(r.query) for r in unknown)
        problems.append(f"Unknown agent{'s' if len(unknown) > 1 else ''} {named}: {covered(snapshot, unknown)}")
        problems += [said for r in unknown if (said := _not_an_agent(snapshot, r.query))]
    return " ".join(problems)


def _not_an_agent(snapshot: Snapshot, name: str) -> str:
    """What a name given as an agent is when it is a capability's or a category's (the arguments swapped)."""
    if (slug := snapshot.index.keys.get(normalize(name))) is not None:
        tools = "lookup_capability, compare_capability and get_sources take it as `capability`"
        return f"{name!r} is a capability ({slug}), not an agent: {tools}."
    if (category := category_named(snapshot.index, name)) in snapshot.index.empty_categories:
        return f"{name!r} is a category, not an agent, and {nothing_in(category, snapshot.index.listings)}."
    if category is not None:
        return f"{name!r} is a category: {listing(category)} lists what is in it."
    return ""


def one_agent(snapshot: Snapshot, resolution: Resolution) -> tuple[Resolution, str]:
    """An agent argument that stands for no more than one agent (a name of several agents, or several names joined,
    is answered for each of them: `several_agents`), read: one agent named more than once ('claude vs claude code',
    'claude, claude code') is that agent, resolved as `repeated` (said after the answer, as a comparison of names
    that repeat one reads it once); else the resolution, and why it names no agent (`_agents_problem`)."""
    found, problem = resolve_agents(snapshot, comma_separated(resolution.query), several=True)
    if problem is None and len(found) > 1 and len(ids := named_ids(found)) == 1:
        typo = any(r.resolved_by == "fuzzy" for r in found)  # 'claude vs claud code': a name mistyped is said too
        confidence = min(r.confidence for r in found)  # as sure as its least sure name ('claud code': 0.95)
        return Resolution(resolution.query, "resolved", ids[0], REPEATED_MISTYPED if typo else REPEATED, confidence), ""
    return resolution, _agents_problem(snapshot, [resolution])


def covered(snapshot: Snapshot, unknown: list[Resolution]) -> str:
    """What to say of agents outside the catalog: the ids it covers, or past `COVERED_SHOWN` their number and the
    closest (an id merely spelled like another agent's is no answer to ask it about)."""
    ids = list(snapshot.index.agents)
    if len(ids) <= COVERED_SHOWN:
        return f"this catalog covers {', '.join(ids)}."
    hint = closest(unknown[0]) if len(unknown) == 1 else ""
    return f"not among this catalog's {len(ids):,} agents.{hint}"


def closest(resolution: Resolution) -> str:
    """The closest values of an unknown name, when any is like it at all."""
    return f" Closest: {', '.join(c.value for c in resolution.candidates)}." if resolution.candidates else ""


def resolve_agents(
    snapshot: Snapshot, names: list[str], *, several: bool = False
) -> tuple[list[Resolution], str | None]:
    """Each name's agent; a name that is none but joins names of agents ('claude and gemini', 'claude code vs copilot
    in VS Code'), as models write a comparison, is those agents. `several`: a name that could be several agents
    ('copilot') is no problem, for a comparison sets them all side by side (`named_ids`)."""
    resolutions: list[Resolution] = []
    budget, unread = JOINED_RUNS, []
    for asked in names:
        whole = resolve_agent(snapshot.index, asked)
        name = unicodedata.normalize("NFKC", asked)  # a full-width '＆' or '／' joins as '&' and '/' do
        joined = joiners(snapshot.index.agent_names, name) if not whole.ok else []
        ends = [0, *(i for m in joined for i in m.span()), len(name)] if not whole.ok else []
        pieces = [(a, b) for a, b in zip(ends[::2], ends[1::2], strict=True) if name[a:b].strip()]
        words = [match.span() for match in re.finditer(r"\S+", name)] if len(pieces) < 2 and not whole.ok else []
        if len(words) > 1 and (cost := _runs(len(words))) > budget:
            # read alone it would have been read: the names before it spent the call's budget (said, with what to do)
            unread += [asked] if cost <= JOINED_RUNS else []
        elif len(words) > 1:
            budget -= cost  # a reading that names no agents cost as many resolutions as one that does
            if spaced := _side_by_side(snapshot, name, words):
                resolutions += spaced
                continue
        runs = _runs(len(pieces))
        if len(pieces) < 2 or runs > budget:
            unread += [asked] if len(pieces) > 1 else []
            resolutions.append(whole)
            continue
        budget -= runs
        resolutions += _joined(snapshot, name, pieces) or [whole]
    failed = [r for r in resolutions if not r.ok and not (several and r.status == "ambiguous")]
    if not failed:
        return resolutions, None
    problem = _agents_problem(snapshot, failed)
    if unread:
        problem += f" {', '.join(map(repr, unread))}: more names joined than one call reads; give them as a list."
    return resolutions, problem


class Several(NamedTuple):
    """An agent argument read as several agents: each name's reading, the agents' ids in the order named, what to
    say instead of answering (`problem`), and the line said beside the answer (`read`: how the name was read, or
    which of its names are no agent and for whom the answer is)."""

    found: list[Resolution]
    ids: list[str]
    problem: str | None
    read: str
    unknown: str = ""  # what is said of the names that are no agent, when the others are answered


def several_agents(snapshot: Snapshot, name: str) -> Several | None:
    """An agent argument that names no one agent read as the agents it stands for: a name they share ('copilot'), or
    names joined ('claude vs gemini', 'claude, copilot', read as compare_capability reads a string of names); names of
    which some are no agent ('claude vs cursor') are answered for those that are (`beside_unknown`). None when the
    argument stands for one agent at most (unknown, or one agent named twice): `one_agent` reads it. The tools answer
    for each agent; the agent resource names each one's URI."""
    found, problem = resolve_agents(snapshot, comma_separated(name), several=True)
    if len(ids := named_ids(found)) > 1 or (problem is not None and len(found) > 1):
        problem, unknown = beside_unknown(snapshot, found, problem)
        read = answered_for(found, unknown) if unknown else read_as_agents(name, ids) if problem is None else ""
        return Several(found, ids, problem, read, unknown)
    return None


def beside_unknown(snapshot: Snapshot, found: list[Resolution], problem: str | None) -> tuple[str | None, str]:
    """Names of which some are agents and the others no agent at all (none ambiguous, every name read: 'claude vs
    cursor', ['claude', 'cursor']) are answered for the agents, and the others said beside the answer
    (`answered_for`): the catalog has nothing on them, which an error made the model learn in a second call.
    (the problem left, what to say of the names that are no agent)."""
    unknown = [r for r in found if not r.ok and r.status != "ambiguous"]
    if problem is None or not named_ids(found) or not unknown or problem != _agents_problem(snapshot, unknown):
        return problem, ""
    return None, problem


def answered_for(found: list[Resolution], unknown: str) -> str:
    """ "'copilot' read as copilot-cli and vscode-copilot. Unknown agent 'cursor': this catalog covers … Looked up for
    copilot-cli, vscode-copilot alone." (what follows an answer or suggestions alike)"""
    return " ".join(
        filter(None, (read_as_several(found), f"{unknown} Looked up for {', '.join(named_ids(found))} alone."))
    )


def named_ids(resolutions: list[Resolution]) -> list[str]:
    """The agents the names stand for, each once, in the order named: an ambiguous name ('copilot') for every agent
    it could be."""
    ids = [[r.value] if r.ok else [c.value for c in r.candidates if r.status == "ambiguous"] for r in resolutions]
    return list(dict.fromkeys(value for values in ids for value in values if value))


def read_as_several(resolutions: list[Resolution]) -> str:
    """ "'copilot' read as copilot-cli and vscode-copilot." for each ambiguous name of a comparison; '' when none."""
    read = [(r.query, [c.value for c in r.candidates]) for r in dict.fromkeys(resolutions) if r.status == "ambiguous"]
    return " ".join(read_as_agents(query, ids) for query, ids in read if len(ids) > 1)


def read_as_agents(query: str, ids: list[str]) -> str:
    """ "'copilot' read as copilot-cli and vscode-copilot." """
    return f"{query!r} read as {', '.join(ids[:-1])} and {ids[-1]}."


def _runs(pieces: int) -> int:
    """The runs of adjacent pieces that many pieces have: the resolutions reading them as names costs."""
    return pieces * (pieces + 1) // 2


def _side_by_side(snapshot: Snapshot, name: str, words: list[tuple[int, int]]) -> list[Resolution] | None:
    """Names written side by side with spaces alone ('claude gemini'): read as the agents they name only when every
    run of words names one agent and they are two or more (a mistyped name, 'claude coode', stays one name; so does
    'claude cli', whose 'cli' several agents' names share, as do 'copilot' and 'code')."""
    reading = _joined(snapshot, name, words, several=False)
    if not reading or not all(r.ok for r in reading) or len({r.value for r in reading}) < 2:
        return None
    return reading


def _joined(snapshot: Snapshot, name: str, pieces: list[tuple[int, int]], *, several: bool = True) -> list[Resolution]:
    """The reading of the pieces as runs of adjacent pieces, each an agent's name, with the fewest runs that name no
    agent, then the fewest pieces in those, then the fewest runs ('R&D Agent vs claude': 'R&D Agent', 'claude'; in
    'claude code vs copilot in VS Code vs emacs' only 'emacs' fails); [] if no run of it names an agent. A name of
    several agents ('copilot') names agents (`several`): in 'copilot and cursor' it is 'cursor' that names none."""

    def names_agents(resolution: Resolution) -> bool:
        return resolution.ok or (several and resolution.status == "ambiguous")

    @functools.cache
    def run(first: int, last: int) -> Resolution:
        return resolve_agent(snapshot.index, name[pieces[first][0] : pieces[last][1]])

    best: list[tuple[tuple[int, int, int], list[Resolution]]] = [((0, 0, 0), [])]  # by the pieces read so far
    for end in range(1, len(pieces) + 1):
        options = []
        for start, ((failed, failed_pieces, count), readings) in enumerate(best):
            bad = not names_agents(reading := run(start, end - 1))
            options.append(((failed + bad, failed_pieces + bad * (end - start), count + 1), [*readings, reading]))
        best.append(min(options, key=lambda option: option[0]))
    readings = best[-1][1]
    return readings if any(map(names_agents, readings)) else []


def comma_separated(text: str) -> list[str]:
    """The names a string separates by commas ('claude, gemini'), or the string itself when it holds none."""
    return [name for _place, name in comma_fields(text)] or [text]


def comma_fields(text: str) -> list[tuple[int, str]]:
    """The names a string separates by commas, each with its place among the fields as written, from 1: an empty or
    blank field names nothing, yet counts for the place of the names after it, so that a message numbering a name
    ('claude,,xxx': 'xxx' is name 3) numbers it as the caller counts, not by its place among the names kept (2)."""
    return [(place, part.strip()) for place, part in enumerate(text.split(","), 1) if part.strip()]
