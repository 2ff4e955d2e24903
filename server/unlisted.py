"""What a list or sources answer says of what it leaves out: the capabilities an agent's data does not mention,
and why a filter has nothing to list.

A list names only what the data records, so a missing entry reads as a no, and a model cannot see names not
given: the note after a list names them (within a bounded number of characters), and an empty answer says
whether the agent's data is silent (no data, not a no) or the build simply has nothing for the filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from capidx.schema.text import plural
from capidx.server.matchindex import Resolution
from capidx.server.readings import nothing_in, some_of
from capidx.server.snapshot import Snapshot

NOT_LISTED_SHOWN = 10  # sentences a category's list's note says, at most: one per set of capabilities agents leave out
# Characters of names a list's note spells out as not in the data, at most (~150 tokens): every name for the catalogs
# this is made for, while the note beside a list document, whose budget the build checks, stays bounded for one of
# hundreds of capabilities.
NOT_LISTED_CHARS = 600


def not_listed(snapshot: Snapshot, resolved: Mapping[str, Resolution], several: Sequence[str] = ()) -> str:
    """After a list: the capabilities of the catalog (in the category) that the agent's data does not mention, which
    the list leaves out; for a category's list, the same for the agents whose data leaves some out, those that leave
    out the same ones together (up to `NOT_LISTED_SHOWN` sentences, then the other agents as leaving some out too).
    A category's note names every such agent's id, then every capability, within `NOT_LISTED_CHARS` characters
    shared by all (ids first: a count of names is no use without whose they are), then says how many more, and once
    which list names them; the agents whose capabilities no name fits are said with the other agents, in one
    sentence (a count per agent would say the same thing again and again). `several`: the agents a name of several
    stands for ('copilot'), said as a category's agents are, with or without a category. A model would otherwise read
    a missing entry as a no, and cannot see names not given."""
    category = resolved["category"].value if "category" in resolved else None
    if "agent" in resolved:
        agents = [resolved["agent"].value or ""]
    elif several:
        agents = list(several)
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
    folded: list[tuple[list[str], int]] = []  # groups past the room for names, said with the other agents
    for missing, (ids, count) in zip(groups, whose[:-1], strict=True):
        shown = fitting(missing, room)
        room = max(0, room - len(", ".join(shown)))
        cut = cut or len(shown) < len(missing)
        if shown or "agent" in resolved:
            said.append(f"Not in {_data_of(ids, count)}, so not listed: {some_of(shown, len(missing))}")
        else:  # a count alone, said once per group, is no use: these agents are said in one sentence
            folded.append((ids, count))
    if folded or others:
        ids, count = _together([*folded, whose[-1]])
        said.append(f"Some of it is not in {_data_of(ids, count)}{' either' if said else ''}")  # after a sentence
    where = _narrower("agent" in resolved, category is not None) if cut or others else ""
    return f"{'. '.join(said)} (no data, not a no).{where}" if said else ""


def _together(whose: list[tuple[list[str], int]]) -> tuple[list[str], int]:
    """The ids named of several groups of agents, and how many agents they hold, for one sentence: the names stop at
    the first group the room cut short, so that 'and N more agents' follows the last id named."""
    ids: list[str] = []
    total = 0
    for shown, count in whose:
        if len(ids) == total:  # every agent before was named
            ids += shown
        total += count
    return ids, total


def _data_of(ids: list[str], count: int) -> str:
    """ "copilot-cli's data", "the data of copilot-cli, gemini-cli", "the data of copilot-cli and 3 more agents", "the
    data of 4 agents": whose data a list's note speaks of, by the `ids` the room let it name of `count` agents."""
    if count == 1 and ids:
        return f"{ids[0]}'s data"
    if not ids:
        return f"the data of {plural(count, 'agent')}"
    more = f" and {plural(count - len(ids), 'more agent')}" if count > len(ids) else ""
    return f"the data of {', '.join(ids)}{more}"


def _narrower(agent: bool, category: bool) -> str:
    """Which list names what a list's note did not: by the agent and a category; none narrower for both."""
    if not agent and not category:  # several agents' lists
        return " A list by one of these agents and a category names those not named here."
    if not agent:
        return " A list by an agent and this category names those not named here."
    return "" if category else " A list by that agent and a category names those not named here."


def nothing(snapshot: Snapshot, listed: str, params: Mapping[str, str | None], noted: bool = False) -> str:
    """Why a filter has nothing to list: the agent's data does not mention it (no data, not a no), or no source.
    `noted`: a note follows, which for a list names what the agent's data does not mention as no data, not a no:
    the hint does not say it twice."""
    agent, capability, category = (params.get(key) for key in ("agent", "capability", "category"))
    if category in snapshot.index.empty_categories:
        said = nothing_in(category, snapshot.index.listings)
        return f"{said[:1].upper()}{said[1:]}."
    entry = snapshot.index.capabilities.get(capability or "")
    if agent is not None and (entry is None or agent not in entry.agents):
        if entry is not None:
            return f"{agent}'s data does not mention {entry.name}: the catalog has no data on it, which is not a no."
        about = f"capability in {category}" if category else "capability"
        no_data = "." if noted else ": the catalog has no data on it, which is not a no."
        return f"{agent}'s data records no {about}{no_data}"
    return f"No {listed} recorded for this filter."


def fitting(names: Sequence[str], room: int) -> list[str]:
    """The first `names` that, joined by commas, fit in `room` characters: none when the first does not (a list's
    note, and the names a tool's description lists)."""
    shown: list[str] = []
    size = -2
    for name in names:
        size += len(name) + 2
        if size > room:
            break
        shown.append(name)
    return shown
