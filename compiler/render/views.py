"""Small pure helpers that templates call: citation numbering, matrix markers and record lookups.

Kept in Python (not Jinja) because they carry rules worth testing: each URL is listed once per
document and cited by number; when capabilities cite the same URL with different details (another
verification date, say), each distinct variant gets a letter (`[2a]`, `[2b]`) so nothing is lost.
They also do what a template would otherwise do per table cell or per citation (a lookup, a call): a
Jinja call costs microseconds, and documents make hundreds of thousands of them at scale.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from capidx.compiler.catalog import Agent, CanonicalCapability, Capability, Source

AVAILABLE, UNAVAILABLE, NOT_RECORDED = "✓", "✗", "-"
TIER_MARKS = {"free": "f", "pro": "p", "business": "b", "enterprise": "e"}
# After ✓ (and its tier), so that a matrix read alone does not present a deprecated feature as plainly available.
DEPRECATED = "†"
DEPRECATED_LEGEND = f"{DEPRECATED} deprecated"


def mark(record: Capability | None) -> str:
    """Matrix cell: ✓ (tier not stated), ✓f/✓p/✓b/✓e (tier), then † if deprecated; ✗ not available, - not recorded."""
    if record is None:
        return NOT_RECORDED
    if not record.available:
        return UNAVAILABLE
    return AVAILABLE + TIER_MARKS.get(record.tier or "", "") + (DEPRECATED if record.deprecated else "")


def any_deprecated(capabilities: Iterable[CanonicalCapability]) -> bool:
    """Whether a matrix of these capabilities shows a † (its legend then explains it; otherwise it costs nothing)."""
    return any(record.available and record.deprecated for capability in capabilities for record in capability.records)


def agent_records(capability: CanonicalCapability, agents: Iterable[Agent]) -> list[tuple[Agent, Capability | None]]:
    """(agent, its record of `capability` or None) for each agent, in the agents' order.

    One call per table instead of a `capability.record(agent.id)` lookup per cell (a linear search each).
    """
    by_agent = {record.agent: record for record in capability.records}
    return [(agent, by_agent.get(agent.id)) for agent in agents]


def marks(capability: CanonicalCapability, agents: Iterable[Agent]) -> list[str]:
    """The matrix cells (`mark`) of one capability's row, one per agent in the agents' order."""
    return [mark(record) for _, record in agent_records(capability, agents)]


def group_by_category(records: Iterable[Capability]) -> list[tuple[str, list[Capability]]]:
    """(category, its records) sorted by category, records in their order: what `records|groupby("category")`
    gives, without Jinja's attribute lookup per record (an item lookup that fails first, then getattr)."""
    ordered = sorted(records, key=_category)
    return [(category, list(group)) for category, group in itertools.groupby(ordered, key=_category)]


_category = operator.attrgetter("category")


def record_traits(record: Capability) -> list[str]:
    """The short facts after a record's ✓/✗: "term", tier, maturity, status, since, deprecation.

    Enum values are distinct across tier, maturity and status except `deprecated` (maturity and
    status), which is therefore labelled; everything else is positional (the legend says so).
    """
    parts = [f'"{record.terminology}"'] if record.terminology else []
    parts += [value for value in (record.tier,) if value]
    if record.maturity:
        parts.append("maturity deprecated" if record.maturity == "deprecated" else record.maturity)
    if record.status:
        parts.append("status deprecated" if record.status == "deprecated" else record.status)
    if record.introduced_in:
        parts.append(f"since {record.introduced_in}")
    if record.deprecated_date:
        parts.append(f"deprecated {record.deprecated_date}")
    if record.superseded_by:
        parts.append(f"superseded by {record.superseded_by}")
    return parts


# A snippet is packed into a budgeted answer: a record with thousands of limitations, or one of a page, must not
# make every snippet of it too large to show (the answer was then "no snippet fits the budget").
SNIPPET_LIMITS = 4  # limitations (and caveats) a snippet says; the rest are counted
SNIPPET_LIMIT_CHARS = 200  # characters of each, cut with "…"


def snippet_limits(record: Capability) -> str:
    """A record's limitations on one line, each a sentence, for its snippet: a ✓ is read as covering the case a
    limitation excludes. The first `SNIPPET_LIMITS`, each cut at `SNIPPET_LIMIT_CHARS`; a count of the others
    points to the record, whose limitations the lookup's notes still quote when one holds a detail of the query."""
    return _snippet_line(record.limitations)


def snippet_caveats(record: Capability) -> str:
    """A record's caveats (`implementationNotes.gotchas`) as `snippet_limits` says its limitations: a model answers
    from the snippet of a lookup in its own words and rarely asks for the full record, so a caveat left out there
    ('sessions on the default host do not use prompt files') was an answer made true by omission."""
    return _snippet_line(record.notes.gotchas if record.notes else ())


def _snippet_line(texts: Sequence[str]) -> str:
    said = []
    for item in texts[:SNIPPET_LIMITS]:
        text = " ".join(item[: SNIPPET_LIMIT_CHARS * 2].split())
        text = text if len(text) <= SNIPPET_LIMIT_CHARS else f"{text[: SNIPPET_LIMIT_CHARS - 1].rstrip()}…"
        said.append(text if text.endswith((".", "!", "?", "…")) else f"{text}.")
    more = len(texts) - len(said)
    return " ".join(said + ([f"({more} more in its record.)"] if more > 0 else []))


def source_traits(source: Source) -> list[str]:
    """granularity, verification (date or `unverified`), then whatever else the source records (a status of
    `unknown` says nothing `unverified` or a date does not: left out)."""
    parts = [source.granularity, f"verified {source.verified_date}" if source.verified_date else "unverified"]
    if source.published_date:
        parts.append(f"published {source.published_date}")
    if source.status and source.status != "unknown":
        parts.append(source.status)
    if source.superseded_by:
        parts.append(f"superseded by {source.superseded_by}")
    if source.excerpt:
        parts.append(f'excerpt: "{source.excerpt}"')
    parts += [f"{key}: {value}" for key, value in source.extra]
    return parts


@dataclass(frozen=True)
class Reference:
    number: int
    url: str
    variants: tuple[tuple[str, Source], ...]  # (label, source); label is "" when the URL has one variant

    @property
    def single(self) -> Source | None:
        """The source when the URL has one variant (the usual case), else None: one lookup for templates."""
        return self.variants[0][1] if len(self.variants) == 1 else None


class References:
    """Numbers the sources of the given records in order of first citation."""

    def __init__(self, records: Iterable[Capability]) -> None:
        by_url: dict[str, list[Source]] = {}
        for record in records:
            for source in record.sources:
                variants = by_url.setdefault(source.url, [])
                if source not in variants:
                    variants.append(source)
        self.entries: tuple[Reference, ...] = tuple(
            Reference(number, url, _labelled(variants))
            for number, (url, variants) in enumerate(by_url.items(), start=1)
        )
        self._labels = {source: f"{entry.number}{label}" for entry in self.entries for label, source in entry.variants}
        self._numbers = {entry.url: entry.number for entry in self.entries}

    def cite(self, source: Source) -> str:
        return self._labels[source]

    def cites(self, sources: Iterable[Source]) -> str:
        """`[1][2a]`: a record's citations in one call (templates cite every record of a document)."""
        return "".join(f"[{self._labels[source]}]" for source in sources)

    def link(self, url: str) -> str:
        """`[3]` when the URL is already in the list (it is written once), else the URL itself."""
        number = self._numbers.get(url)
        return f"[{number}]" if number else url

    def __len__(self) -> int:
        return len(self.entries)


def _labelled(variants: list[Source]) -> tuple[tuple[str, Source], ...]:
    if len(variants) == 1:
        return (("", variants[0]),)
    return tuple((_letters(index), source) for index, source in enumerate(variants))


def _letters(index: int) -> str:
    """a, b, …, z, aa, ab, … (a URL with more than 26 variants is unlikely, but must not break)."""
    text = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        text = chr(ord("a") + rest) + text
    return text
