"""Tool documents derived from the catalog: lookup, compare, list and sources (pure).

Shapes are specified in docs/build-directory.md ("Tool documents"); the server returns them verbatim.
Optional fields are omitted when the data has no value for them, so documents stay small.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from capidx.compiler.catalog import CanonicalCapability, Capability, Catalog, ImplementationNotes, Source


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != () and value != [] and value != {}:
        target[key] = value


def notes_fields(notes: ImplementationNotes | None) -> dict[str, Any] | None:
    if notes is None:
        return None
    out: dict[str, Any] = {}
    _put(out, "setup", notes.setup)
    _put(out, "configFile", notes.config_file)
    _put(out, "startUrl", notes.start_url)
    _put(out, "gotchas", list(notes.gotchas))
    return out or None


def source_fields(source: Source, *, excerpt: bool = False, url: bool = True) -> dict[str, Any]:
    """A source entry's fields; `url=False` leaves the URL to a sources row, which gives it once for its citations."""
    out: dict[str, Any] = {"url": source.url} if url else {}
    out["description"] = source.description
    out["sourceGranularity"] = source.granularity
    _put(out, "verifiedDate", source.verified_date)
    _put(out, "publishedDate", source.published_date)
    _put(out, "status", source.status)
    _put(out, "supersededBy", source.superseded_by)
    if excerpt:
        _put(out, "excerpt", source.excerpt)
    return out


def record_fields(record: Capability) -> dict[str, Any]:
    """Everything an agent-facing answer about one record says, except identity (name/slug/category)."""
    out: dict[str, Any] = {"available": record.available, "description": record.description}
    _put(out, "terminology", record.terminology)
    _put(out, "tier", record.tier)
    _put(out, "maturityLevel", record.maturity)
    _put(out, "status", record.status)
    _put(out, "introducedIn", record.introduced_in)
    _put(out, "deprecatedDate", record.deprecated_date)
    _put(out, "supersededBy", record.superseded_by)
    _put(out, "implementationNotes", notes_fields(record.notes))
    _put(out, "sources", [source_fields(source) for source in record.sources])
    return out


# Members of `record_fields` a comparison leaves out. A record's deprecation and successor stay: one agent's, said only
# of the capability, read as every agent's.
NOT_COMPARED = ("introducedIn",)


def identity(capability: CanonicalCapability) -> dict[str, Any]:
    """How tool documents name a capability."""
    return {"name": capability.name, "slug": capability.slug, "category": capability.category}


def lookup_document(
    agent_id: str, capability: CanonicalCapability, relationships: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`relationships`: the document's `relationships` object (`Enhanced.relationships`); left out when empty."""
    record = capability.record(agent_id)
    body: dict[str, Any] = identity(capability)
    if record is None:
        body.update(recorded=False)  # no `available`: no data is not a no
    else:
        body.update(record_fields(record), recorded=True, category=record.category)
        _put(body, "limitations", list(record.limitations))
        _put(body, "requirements", list(record.requirements))
    document = {"agent": agent_id, "capability": body, "availableFor": list(capability.available_for)}
    _put(document, "relationships", relationships)
    return document


def compare_document(
    catalog: Catalog, capability: CanonicalCapability, relationships: dict[str, Any] | None = None
) -> dict[str, Any]:
    entries = []
    for agent_id in catalog.agent_ids:
        record = capability.record(agent_id)
        if record is None:  # no data is not a "no": no `available` to read as one, as in lookup documents
            entries.append({"agent": agent_id, "recorded": False})
            continue
        entry = {"agent": agent_id, **record_fields(record)}  # a "no" keeps its reason and sources
        for key in NOT_COMPARED:
            entry.pop(key, None)
        _put(entry, "limitations", list(record.limitations))  # what a comparison is read for, as in the lookup
        _put(entry, "requirements", list(record.requirements))
        entries.append(entry)
    document = {"capability": identity(capability), "agents": entries}
    _put(document, "relationships", relationships)
    return document


def list_row(capability: CanonicalCapability, record: Capability) -> dict[str, Any]:
    """One record's row in list documents, without the `agent` a list without an agent filter adds. A maturity other
    than stable is said: a list read 'experimental' Sandboxing as the stable features beside it (a blind model test)."""
    row: dict[str, Any] = {"name": capability.name, "slug": capability.slug, "category": record.category}
    _put(row, "tier", record.tier)
    _put(row, "maturityLevel", record.maturity if record.maturity != "stable" else None)
    row["available"] = record.available
    return row


def list_document(
    records: Iterable[tuple[CanonicalCapability, Capability]], *, agent: str | None, category: str | None
) -> dict[str, Any]:
    """Rows for the given records; rows name their agent only when the filter has none."""
    rows = []
    for capability, record in records:
        row = list_row(capability, record)
        if agent is None:
            row["agent"] = record.agent
        rows.append(row)
    rows.sort(key=lambda row: (row["category"], row["slug"], row.get("agent", "")))
    return {"filter": _filter(agent=agent, category=category), "capabilities": rows}


def sources_document(records: Iterable[Capability], *, agent: str | None, capability: str | None) -> dict[str, Any]:
    """One row per URL cited by the given records, sorted by URL, listing every citation of it."""
    rows = [source_row(citations, agent=agent, capability=capability) for citations in citations_by_url(records)]
    return {"filter": sources_filter(agent, capability), "sources": rows}


def sources_filter(agent: str | None, capability: str | None) -> dict[str, str]:
    """The `filter` of a sources document."""
    return _filter(agent=agent, capability=capability)


def citations_by_url(records: Iterable[Capability]) -> list[list[tuple[Capability, Source]]]:
    """The (record, source) citations of the given records grouped by URL, in URL order: one group per row.

    In a group, citations are in (agent, capability) order; a record that cites the URL more than once keeps its
    own order. Every citation is kept, a repeat included, so that a row's counts are the data's."""
    cited: dict[str, list[tuple[Capability, Source]]] = {}
    for record in records:
        for source in record.sources:
            cited.setdefault(source.url, []).append((record, source))
    return [sorted(cited[url], key=lambda pair: (pair[0].agent, pair[0].slug)) for url in sorted(cited)]


def source_row(
    citations: list[tuple[Capability, Source]], *, agent: str | None, capability: str | None
) -> dict[str, Any]:
    """A URL and its citations, each with the details its own record gives: records that cite one URL describe,
    date and rate it each in their own words, and no record's details are shown as another's. `agent` and
    `capability` are the document's filter (`citation_record`)."""
    citing = [citation_fields(*pair, agent=agent, capability=capability) for pair in citations]
    return {"url": citations[0][1].url, "citations": citing}


def citation_fields(record: Capability, source: Source, *, agent: str | None, capability: str | None) -> dict[str, Any]:
    """One citation in a sources row: who cites it (`citation_record`), then its source's details."""
    return {**citation_record(record, agent=agent, capability=capability), **citation_details(source)}


def citation_record(record: Capability, *, agent: str | None, capability: str | None) -> dict[str, str]:
    """The citing record's `agent` unless the document is filtered to one agent, and its `capability` unless it is
    filtered to one capability: the document's filter names those once for every citation, as list rows carry
    `agent` only where the filter has none."""
    cites: dict[str, str] = {}
    if agent is None:
        cites["agent"] = record.agent
    if capability is None:
        cites["capability"] = record.slug
    return cites


def citation_details(source: Source) -> dict[str, Any]:
    """A source entry's details in a sources row, without the URL the row gives once for all its citations."""
    return source_fields(source, excerpt=True, url=False)


def _filter(**params: str | None) -> dict[str, str]:
    return {key: value for key, value in params.items() if value}
