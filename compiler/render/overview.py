"""The overview that reaches the model at session start: the `instructions` and `memory` artifacts.

Clients put server instructions (and memory files such as AGENTS.md) into every session, and Claude Code
cuts server instructions at 2,048 characters without telling anyone. So the overview is fitted to a
character budget here, at build time, by choosing the richest of a few documented forms that fits whole
(docs/build-directory.md, "The overview"), never by cutting text:

- `matrix`: every capability by category with one cell per agent (✓ ✗ -);
- `names`: every capability name by category, without cells;
- `capability-names`: the same without the agent ids (many agents: the names are what a model needs first,
  and the ids are listed where details are asked for);
- `counts`: the categories with how many capabilities each holds;
- `total`: the number of capabilities and categories alone.

The head says what the overview is for, the tail how to get details; both come from the caller, so the
server's instructions and a memory file share one fitter. Pure: text in, text out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from capidx.compiler.catalog import Capability, Catalog
from capidx.compiler.derive.match import agent_names
from capidx.compiler.diagnostics import plural
from capidx.compiler.render.markdown import inline, line
from capidx.compiler.render.views import (
    AVAILABLE,
    DEPRECATED,
    DEPRECATED_LEGEND,
    NOT_RECORDED,
    UNAVAILABLE,
    agent_records,
    any_deprecated,
)

FORMS = ("matrix", "names", "capability-names", "counts", "total")
# Forms that name every canonical capability (the others name only categories).
NAMING_FORMS = frozenset({"matrix", "names", "capability-names"})


@dataclass(frozen=True)
class Frame:
    """What surrounds the body: `head` (what this is for, first) and `tail` (how to get details, last).

    `headings`: the matrix's categories as `## category` headings; without, as `category:` lines with the
    capabilities as list items, for a block inside someone's Markdown file, whose outline it must not
    change."""

    head: str
    tail: str
    headings: bool = True
    # Said last when it fits, and left out first: never at the cost of a richer form (a catalog whose matrix fits
    # only without it keeps the matrix).
    spare: str = ""


@dataclass(frozen=True)
class Fitted:
    """The text, the form it has and its size against its budget."""

    text: str
    form: str
    characters: int
    budget: int

    @property
    def ok(self) -> bool:
        return self.characters <= self.budget

    def manifest_row(self, kind: str, uri: str) -> dict[str, object]:
        """A row of the manifest's `overview` (schema/build-manifest.schema.json)."""
        return {
            "kind": kind,
            "uri": uri,
            "form": self.form,
            "characters": self.characters,
            "budget": self.budget,
            "ok": self.ok,
            "namesEveryCapability": self.form in NAMING_FORMS,
        }


def characters(text: str) -> int:
    """Length as JavaScript's `String.length` counts it (UTF-16 code units), the unit a client's cut uses;
    never less than the number of code points."""
    return len(text.encode("utf-16-le")) // 2


def fit(catalog: Catalog, frame: Frame, budget: int) -> Fitted:
    """The richest form whose whole text fits `budget` characters; the last form when none fits (the build
    then reports the breach: text is never cut)."""
    text, form = "", FORMS[-1]
    for form in FORMS:
        for spare in dict.fromkeys((True, not frame.spare)):  # with the spare sentence, then without it
            text = render(catalog, frame, form, spare)
            if characters(text) <= budget:
                return Fitted(text, form, characters(text), budget)
    return Fitted(text, form, characters(text), budget)


def render(catalog: Catalog, frame: Frame, form: str, spare: bool = True) -> str:
    """The whole text of one form (`FORMS`), whatever its size; `spare`: with the frame's spare sentence."""
    body = _BODIES[form](catalog, frame.headings)
    tail = f"{frame.tail.strip()} {frame.spare.strip()}" if spare and frame.spare.strip() else frame.tail.strip()
    return "\n".join(part for part in (frame.head.strip(), body.strip(), tail) if part) + "\n"


def _matrix(catalog: Catalog, headings: bool) -> str:
    deprecated = f", {DEPRECATED_LEGEND}" if any_deprecated(catalog.capabilities) else ""
    # A tier pointer only where a record states one: a catalog without tiers promised data it does not hold.
    tiers = any(record.tier for capability in catalog.capabilities for record in capability.records)
    tier = " (tier: see Details)" if tiers else ""
    legend = (
        f"Columns: {' '.join(catalog.agent_ids)}. {AVAILABLE} available{tier}, {UNAVAILABLE} not available, "
        f"{NOT_RECORDED} not recorded{deprecated}; not recorded or not listed: no data, not a no."
    )
    lines = [legend]
    for category, capabilities in catalog.by_category().items():
        lines.append(f"## {inline(category)}" if headings else f"{inline(category)}:")
        for capability in capabilities:
            cells = " ".join(_cell(record) for _, record in agent_records(capability, catalog.agents))
            lines.append(f"{line(capability.name)} {cells}" if headings else f"- {line(capability.name)} {cells}")
    return "\n".join(lines)


def _cell(record: Capability | None) -> str:
    """✓ (✓† if deprecated), ✗ or -: the summary's tier letters are left to the tools here."""
    if record is None:
        return NOT_RECORDED
    if not record.available:
        return UNAVAILABLE
    return AVAILABLE + (DEPRECATED if record.deprecated else "")


def _names(catalog: Catalog, _headings: bool) -> str:
    agents = f"Agents: {', '.join(catalog.agent_ids)}."
    return _by_category(catalog, f"{agents} Capabilities by category (which agent has which: see Details):")


def _capability_names(catalog: Catalog, _headings: bool) -> str:
    agents = f"{_count(len(catalog.agents), 'agent', 'agents')} (ids not listed here)."
    return _by_category(catalog, f"{agents} Capabilities by category (which agent has which: see Details):")


def _by_category(catalog: Catalog, first: str) -> str:
    lines = [first]
    for category, capabilities in catalog.by_category().items():
        lines.append(f"- {inline(category)}: {', '.join(inline(capability.name) for capability in capabilities)}")
    return "\n".join(lines)


def _counts(catalog: Catalog, _headings: bool) -> str:
    groups = catalog.by_category()
    counted = ", ".join(f"{inline(category)} ({len(items)})" for category, items in groups.items())
    return (
        f"Agents: {', '.join(catalog.agent_ids)}. Capabilities per category: {counted}. "
        "To list a category's names, see Details."
    )


def _total(catalog: Catalog, _headings: bool) -> str:
    return (
        f"{_count(len(catalog.agents), 'agent', 'agents')}, "
        f"{_count(len(catalog.capabilities), 'capability', 'capabilities')} in "
        f"{_count(len(catalog.categories), 'category', 'categories')}: to list them, see Details."
    )


def _count(number: int, one: str, many: str) -> str:
    return f"{number:,} {one if number == 1 else many}"


_BODIES: dict[str, Callable[[Catalog, bool], str]] = {
    "matrix": _matrix,
    "names": _names,
    "capability-names": _capability_names,
    "counts": _counts,
    "total": _total,
}


def dated(catalog: Catalog) -> str:
    """'data as of 2026-11-22', or 'data of 2026-10-01 to 2026-11-22' when the agents' files were last updated on
    different days: what a model weighs against what it remembers, from the files' own `lastUpdated` (not the day
    of the build, so that a build of the same files is the same); then how many of the sources the records cite
    carry a `verifiedDate` ('sources unverified', '12 of 171 sources verified'): a file's date says when it was
    edited, not that its facts were checked. '' when no file says."""
    days = sorted({inline(agent.last_updated[:10]) for agent in catalog.agents if agent.last_updated[:10].strip()})
    if not days:
        return ""
    when = f"data as of {days[0]}" if len(days) == 1 else f"data of {days[0]} to {days[-1]}"
    sources = [source for agent in catalog.agents for record in agent.capabilities for source in record.sources]
    verified = sum(1 for source in sources if source.verified_date)
    if not sources:
        return when
    if verified == len(sources):
        return f"{when}, sources verified"
    return f"{when}, {f'{verified:,} of {len(sources):,} sources verified' if verified else 'sources unverified'}"


def instructions_frame(catalog: Catalog, title: str) -> Frame:
    """The server's instructions: the server is connected, so details come from its tools. Resources are left
    unnamed: which are served is chosen when the server starts (`--expose`, `--no-resources`), after this text
    was written, and the tools answer everything they would."""
    return Frame(
        head=(
            f"{line(title)}: which of {plural(len(catalog.agents), 'agent')} has which of "
            f"{plural(len(catalog.capabilities), 'capability', 'capabilities')}"
            f"{f' ({when})' if (when := dated(catalog)) else ''}. Check here before answering from memory."
        ),
        tail=(
            "Details: lookup_capability(agent, capability) for one agent; compare_capability(capability) across "
            "agents; list_capabilities(agent and/or category) to list names; get_sources(agent and/or capability) "
            "to cite."
        ),
        spare=f"A capability may be asked in your own words{_shared_name(catalog)}.",
    )


def _shared_name(catalog: Catalog) -> str:
    """'; a name several agents share (copilot) answers for each', with a name of this catalog that several agents
    share (a one-word one first, alphabetically), or '' when no name is shared: a one-agent catalog has none."""
    shared = [name for name, ids in agent_names(catalog.agents).items() if len(ids) > 1]
    if not shared:
        return ""
    name = min(shared, key=lambda name: (" " in name, name))
    return f"; a name several agents share ({name}) answers for each"


def memory_frame(catalog: Catalog, title: str, build: str, make: str = "capidx build") -> Frame:
    """A memory file's form (AGENTS.md and the like): the MCP server may not be connected, so it says where
    details live in both cases. `build`: the build directory as the project names it (e.g. `build`, or from the top
    of the work tree `tools/capidx/build`); `make`: the command that writes it there (`Config.build_command`)."""
    build = inline(build)  # on one line, opening no HTML comment: a marker line would end the injected block
    make = inline(make)
    return Frame(
        head=(
            f"{line(title)}: which of {plural(len(catalog.agents), 'agent')} has which of "
            f"{plural(len(catalog.capabilities), 'capability', 'capabilities')} "
            f"({f'{when}; ' if (when := dated(catalog)) else ''}generated by capidx; do not edit by hand)."
        ),
        tail=(
            "Details: if the capidx MCP server is connected, use its tools lookup_capability, compare_capability, "
            f"list_capabilities and get_sources; otherwise (after `{make}`) read "
            f"{build}/capabilities/{{capability}}.md (capability: lower-case name with hyphens), "
            f"{build}/categories/{{category}}.md or {build}/agents/{{agent}}.md (all of one agent)."
        ),
        headings=False,
    )
