"""How a name was read, said to the model: a line after the answer when a name was read loosely.

`_meta` says how each name resolved, but clients do not show it to the model, which would take an answer
to 'cloud agent' or 'cladue' for an exact one. `reading` is that line (the loose capability reading with its
runner-ups, agents and a category read as typos, a query that is an agent's name); `read_as`, `quoted` and
`listing` are how a query and a category's list are said, here and in the suggestions (`capidx.server.unresolved`).
"""

from __future__ import annotations

from collections.abc import Mapping

import mcp_types as types

from capidx.schema.text import STOP_WORDS, normalize, plural, terms, unread_words
from capidx.server.listings import Listings
from capidx.server.matchindex import Resolution
from capidx.server.names import HOSTED, before_agent, category_named
from capidx.server.query import root
from capidx.server.snapshot import Snapshot

# How a capability was read when not as spelled in the index, said after the answer (`reading`).
LOOSE_READINGS = {"lexical": "by its words", "fuzzy": "by its words, allowing for typos"}
NEXT_NAMED = 2  # runner-ups a loose reading names
# `resolvedBy` of one agent named more than once in one argument ('claude vs claude code': `agent_args.one_agent`).
REPEATED = "repeated"
REPEATED_MISTYPED = "repeated-fuzzy"  # the same, one of the names mistyped ('claude vs claud code')
# How an agent's name was read when not as spelled.
AGENT_READINGS = {
    "fuzzy": "allowing for typos",
    REPEATED: "which it names more than once",
    REPEATED_MISTYPED: "which it names more than once, allowing for typos",
    HOSTED: "the agent named first (what follows says where it runs, not another agent)",
}
# A query quoted back in an answer that did not find it: the model sent it and has it, so a long sentence is cut.
QUOTED_CHARS = 80
INTEGRATIONS_NAMED = 8  # platforms an empty category of integrations names, then how many more
UNREAD_NAMED = 5  # words of a query in another script that an answer names as left out


def reading(
    snapshot: Snapshot, resolution: Mapping[str, Resolution | list[Resolution]], note: str = ""
) -> list[types.TextContent]:
    """A line after the answer when a name was read loosely ('cloud agent' -> Sandboxing, 'cladue' -> claude-code):
    `_meta` says so too, but clients do not show it to the model, which would take the answer for an exact one. A
    capability query that is a category's name ('security') also points to that category's list."""
    said = agent_readings(snapshot, resolution)
    found = resolution.get("capability")
    if isinstance(found, Resolution) and found.ok and (how := LOOSE_READINGS.get(found.resolved_by or "")):
        runners = [f"{c.label} ({c.value}, {c.confidence:.2f})" for c in found.ranked if c.value != found.value]
        others = f"; next: {', '.join(runners[:NEXT_NAMED])}" if runners else ""
        said.append(
            f"{read_as(snapshot, found, how)} (match {found.confidence:.2f}){others}. If another capability was "
            "meant, call again with its slug."
        )
        category = category_named(snapshot.index, found.query, mistyped=False)
        if category is not None and category not in snapshot.index.empty_categories:
            said.append(f"{category} is also a category: {listing(category)} lists what is in it.")
    said += [note] if note else []
    return [types.TextContent(text=" ".join(said))] if said else []


def read_as(snapshot: Snapshot, resolution: Resolution, how: str) -> str:
    """ "Read 'cloud agent' as Sandboxing (sandboxing), by its words": how a loosely read capability is said, after a
    document as before suggestions."""
    entry = snapshot.index.capabilities.get(resolution.value or "")
    name = f"{entry.name} ({entry.slug})" if entry is not None else resolution.value
    return f"Read {quoted(resolution.query)} as {name}, {how}"


def agent_readings(snapshot: Snapshot, resolution: Mapping[str, Resolution | list[Resolution]]) -> list[str]:
    """'Read agent 'cladue' as claude-code, allowing for typos.' for each agent name (`agent`, or each of compare's
    `agents`) and the category read as a typo; when nothing answered the capability asked for and it is an
    agent's name ('copilot'), that it is also that agent's: a model that swapped the arguments gets the way back;
    and the words of any name that were left out as unreadable ('без web search')."""
    agents = [r for value in (resolution.get("agent"), resolution.get("agents")) for r in _listed_of(value)]
    said = [
        f"Read agent {r.query!r} as {r.value}, {AGENT_READINGS[r.resolved_by or '']}."
        for r in agents
        if r.ok and r.resolved_by in AGENT_READINGS
    ]
    said += filter(
        None, (_read_by_name(snapshot, r) for r in dict.fromkeys(agents) if r.ok and r.resolved_by == "name")
    )
    category = resolution.get("category")
    if isinstance(category, Resolution) and category.ok and category.resolved_by == "fuzzy":
        said.append(f"Read category {category.query!r} as {category.value}, allowing for typos.")
    asked = resolution.get("capability")
    if isinstance(asked, Resolution) and not asked.ok and (ids := _agent_spelled(snapshot, asked.query)):
        said.append(
            f"{asked.query!r} is also a name of {', '.join(ids)}: if that agent was meant, give it as an agent argument"
            " and what is asked about as `capability`."
        )
    queries = dict.fromkeys(r.query for r in [*agents, *_listed_of(category), *_listed_of(asked)])
    for query, unread in ((query, unread_words(query)) for query in queries):
        if unread:  # the answer was found without them: an exact match of the rest is not of what was asked
            words = ", ".join(quoted(word) for word in unread[:UNREAD_NAMED])
            said.append(f"Left out of {quoted(query)}: {words} (capidx reads Latin letters and digits only).")
    return said


def _read_by_name(snapshot: Snapshot, resolution: Resolution) -> str:
    """How an agent named other than by its id or a spelling of it was read: by its vendor's name alone ('Google'),
    or by words of its names that no spelling has as written ('GitHub CLI', which may be GitHub's own CLI, read as
    copilot-cli): the answer speaks of that agent, which the user may not have meant. '' for a spelling ('claude')."""
    label = f"{resolution.value} ({snapshot.index.agent_label(resolution.value or '')})"
    named = before_agent(snapshot.index.agent_names, resolution.query)  # 'the Google agent': 'google'
    if _by_vendor(snapshot, resolution.value, named):
        return (
            f"Read agent {resolution.query!r} as {label}, the one agent of this catalog so named; other products of"
            " that name have no data here."
        )
    if normalize(named) in snapshot.index.agent_names.spellings:
        return ""
    return f"Read agent {resolution.query!r} as {label}, by the words of its names."


def _by_vendor(snapshot: Snapshot, agent: str | None, query: str) -> bool:
    """Whether an agent was named by its vendor's name alone ('Google' for gemini-cli, 'Anthropic' for claude-code,
    'GitHub' where one GitHub agent is in the catalog): read silently, it was taken for that vendor's one agent here,
    where the user may mean another of its products. A build that does not give vendors says nothing."""
    vendor = snapshot.index.vendors.get(agent or "")
    asked = set(normalize(query).split()) - STOP_WORDS
    return vendor is not None and bool(asked) and asked <= set(normalize(vendor).split())


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


def quoted(query: str) -> str:
    """`query` as `repr` quotes it, its first `QUOTED_CHARS` characters and its length when longer."""
    return repr(query) if len(query) <= QUOTED_CHARS else f"{query[: QUOTED_CHARS - 1]!r}… ({len(query)} characters)"


def listing(category: str) -> str:
    """The call that lists a category, as every answer that points to it says it."""
    return f"list_capabilities(category={category!r})"


def nothing_in(category: str, listings: Listings) -> str:
    """What every answer says of a category the schema defines and no capability is in ('debugging'): the catalog's
    silence, which is no data, not a no (no agent lacks what nobody recorded). A category of integrations
    ('ide-integration') is what the agents' files list as `integrations`: those are named, since "no data on it" was
    read as the catalog knowing nothing of IDE support while it lists VS Code and JetBrains (a blind model test)."""
    listed = _integrations(listings) if "integration" in category.split("-") else []
    if not listed:
        return f"this catalog records no capability in {category}: it has no data on it, which is not a no"
    shown = some_of(listed[:INTEGRATIONS_NAMED], len(listed))
    return (
        f"this catalog records no capability in {category}, which is not a no; the agents' data lists integrations "
        f"with {shown}: a lookup or comparison naming one says whose"
    )


def some_of(shown: list[str], count: int) -> str:
    """'Hooks, Plugins and 3 more' of `count` capabilities; '5 capabilities' when none is named."""
    if not shown:
        return plural(count, "capability", "capabilities")
    return ", ".join(shown) + (f" and {count - len(shown):,} more" if count > len(shown) else "")


def _integrations(listings: Listings) -> list[str]:
    """The platforms the agents' files list as integrations, each once, in the files' order."""
    found = (name for lists in listings.by_agent.values() for kind, name, *_ in lists if kind == "integrations")
    return list(dict.fromkeys(found))
