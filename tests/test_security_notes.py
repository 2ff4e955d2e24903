"""What the server says after an answer, on a build a fork's catalog makes (docs/security.md, "The server").

The notes on what a record does not say (`server/records.py`) read other agents' records of the capability: a build
of a catalog whose agents all share one capability must not make one call read all of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_support import connect, made_once, real_build, run_capidx, write_document

from capidx.server import records
from capidx.server.snapshot import Snapshot

pytestmark = pytest.mark.anyio

SHARED = 80  # agents recording one capability: more than the records a note reads (`records._RECORDS_READ`, 64)


def _shared_catalog(root: Path) -> Path:
    """`SHARED` agents recording Custom Instructions, every other one saying 'settings.json' (an identifier) and
    giving it the alias 'frobnicator knob'."""
    for i in range(SHARED):
        says = i % 2 == 1
        record = {
            "category": "customization",
            "name": "Custom Instructions",
            "description": "Reads settings.json and project rules at start." if says else "Reads rules at start.",
            "available": True,
            "aliases": ["frobnicator knob"] if says else [f"house rules {i}"],
        }
        document = {
            "agent": {"name": f"Agent {i}", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
            "capabilities": [record],
        }
        write_document(root, f"agent-{i:03d}", document)
    return real_build(root / "agents", root / "build")


@pytest.fixture(name="shared_build", scope="module")
def fixture_shared_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from made_once(tmp_path_factory, "shared-capability-80-agents", _shared_catalog)


@pytest.mark.parametrize("query", ["settings.json", "frobnicator knob"])
async def test_a_note_reads_a_bounded_number_of_records_of_a_capability_every_agent_shares(
    shared_build: Path, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`records.borrowed` ('X is used in the Hooks records of a and b; c's record does not use it') read every agent's
    lookup of the capability, and each lookup lists every agent that has it: a comparison of a capability 1,400
    agents share parsed 124 MB of JSON on every call (0.55 s, against 2 ms for 50 agents). It reads at most 64
    records, the asked agents' first, as `records.unheld` does, and still says whose records use the words."""
    lookups: list[Any] = []
    real = Snapshot.find

    def counted(self: Snapshot, kind: str, **params: Any) -> Any:
        if kind == "lookup":
            lookups.append(params)
        return real(self, kind, **params)

    monkeypatch.setattr(Snapshot, "find", counted)
    async with connect(shared_build) as client:
        result = await client.call_tool("compare_capability", {"capability": query})
    notes = " ".join(block.text for block in result.content if block.type == "text")
    assert f"'{query}' is used in the Custom Instructions records of agent-001, agent-003" in notes, notes
    assert "do not use it." in notes
    read = {params["agent"] for params in lookups}
    assert len(read) <= 64, len(read)


LIMITATIONS = 3_000  # limitations of one record: far more than a note reads (`records._LIMITS_READ`, 256)


def _limited_catalog(root: Path) -> Path:
    """Two agents recording Custom Instructions, agent-000's with `LIMITATIONS` limitations, the first of 20,000
    characters; its eleventh, past what its snippet says, says Linux. Over the budgets: such a build is still
    written, and served."""
    for i in range(2):
        limits = [f"Rule file {j} is read in order {j}." for j in range(LIMITATIONS)] if i == 0 else []
        record = {
            "category": "customization",
            "name": "Custom Instructions",
            "description": "Reads project rules at start.",
            "available": True,
            "limitations": ["long " * 4_000, *limits[:9], "Not read on Linux.", *limits[9:]] if i == 0 else [],
        }
        document = {
            "agent": {"name": f"Agent {i}", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
            "capabilities": [
                record,
                {
                    "category": "customization",
                    "name": "Hooks",
                    "description": "Runs scripts on events.",
                    "available": True,
                },
            ],
        }
        write_document(root, f"agent-{i:03d}", document)
    result = run_capidx("build", "--agents", str(root / "agents"), "--out", str(root / "build"), cwd=root)
    assert result.returncode in (0, 1) and (root / "build" / "manifest.json").is_file(), result.stderr
    return root / "build"


async def test_a_limitation_note_reads_a_bounded_part_of_a_record_s_limitations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suggestion's note on a limitation holding a detail of the query ('Not read on Linux.') read every limitation
    of every record it looked at, each whole: 64 records of 2,000 limitations took 2 s per comparison. It reads at
    most 256 limitations a call, 400 characters of each, and still says the one that holds the detail."""
    build = _limited_catalog(tmp_path)
    read: list[str] = []
    whole: set[str] = set()  # a record's texts together, which the notes on words read once per record
    real, real_record = records._roots, records._record

    def counted(text: str) -> frozenset[str]:
        read.append(text)
        return real(text)

    def recorded(document: str, part: str) -> tuple[str, frozenset[str]]:
        whole.add(" ".join(records._texts(document, part)))
        return real_record(document, part)

    monkeypatch.setattr(records, "_roots", counted)
    monkeypatch.setattr(records, "_record", recorded)
    async with connect(build) as client:
        result = await client.call_tool(
            "lookup_capability", {"agent": "agent-000", "capability": "instructions on linux"}
        )
    notes = result.structured_content["notes"]
    assert "agent-000's record of Custom Instructions has the limitation: Not read on Linux." in notes, notes
    answer = " ".join(block.text for block in result.content if block.type == "text")
    assert f"({LIMITATIONS + 2 - 4} more in its record.)" in answer and len(answer) < 4_000, answer[:4_000]
    limitations = [text for text in read if not text.startswith(("{", "[")) and text not in whole]  # nor its names
    assert len(limitations) <= 256 + 2 and max(map(len, limitations)) <= 400, (len(limitations), max(map(len, read)))


async def test_a_query_s_hyphenated_compounds_are_searched_for_a_bounded_number_of_times(
    shared_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each hyphenated compound of a query ('auto-compaction') is a regex searched through the whole text of every
    record the notes read (up to 128), on every call: a query of 200 characters holds some twenty, and 12 over 128
    records of 100 KB took 550 ms a call against 2.8 ms for the same words unhyphenated. At most four are looked for
    (the sentences name four words at most), and one lacking is still said."""
    made: list[tuple[str, ...]] = []
    real = records._compound

    def counted(parts: Any) -> Any:
        made.append(tuple(parts))
        return real(parts)

    monkeypatch.setattr(records, "_compound", counted)
    words = ["reads", "rules", "start", "project", "house", "settings"]
    compounds = [f"{a}-{b}" for a in words for b in words if a != b][:12]
    query = "custom instructions " + " ".join(compounds)
    async with connect(shared_build) as client:
        result = await client.call_tool("compare_capability", {"capability": query})
    notes = " ".join(block.text for block in result.content if block.type == "text")
    assert result.meta is not None and "lexical" in json.dumps(result.meta), result.meta
    assert "'reads-rules' in any form" in notes, notes
    assert 1 <= len(made) <= 4, made


def _listing_catalog(root: Path, models: int = 2_600) -> Path:
    """Two agents whose files list `models` models each, every one named with the word 'gpt' ('GPT 17 Turbo')."""
    for who in ("alpha", "beta"):
        document = {
            "agent": {"name": who.title(), "vendor": "V", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
            "models": [{"name": f"GPT {n} Turbo", "available": True} for n in range(models)],
            "capabilities": [
                {
                    "category": "customization",
                    "name": "Hooks",
                    "description": "Runs commands at events.",
                    "available": True,
                }
            ],
        }
        write_document(root, who, document)
    return real_build(root / "agents", root / "build")


async def test_the_listed_names_a_note_reads_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query's word that every listed name has ('gpt', of 5,000 models 'GPT N Turbo') made each comparison read
    every one (130 agents of 5,000: 410 ms a call). At most `_LISTED_READ` are read, the asked agents' first, and the
    answer says the rest was not."""
    build = _listing_catalog(tmp_path)
    read: list[Any] = []
    real = records._stands_whole

    def counted(*args: Any) -> Any:
        read.append(args)
        return real(*args)

    monkeypatch.setattr(records, "_stands_whole", counted)
    async with connect(build) as client:
        result = await client.call_tool("compare_capability", {"capability": "gpt 7 turbo"})
    notes = " ".join(block.text for block in result.content if block.type == "text")
    assert 0 < len(read) < 2 * 2_600  # not every name that has the word
    assert "alpha's data lists GPT 7 Turbo (available) among its models." in notes, notes
    assert "names the agents' data lists with a word of the query were read" in notes, notes


async def test_every_listed_name_read_is_no_bound_said(tmp_path: Path) -> None:
    """Names sharing a word with the query exactly as many as a call reads (2 agents of 2,048): every one is read,
    and the answer does not say the rest went unread."""
    build = _listing_catalog(tmp_path, models=records._LISTED_READ // 2)
    async with connect(build) as client:
        result = await client.call_tool("compare_capability", {"capability": "gpt 7 turbo"})
    notes = " ".join(block.text for block in result.content if block.type == "text")
    assert "beta's data lists GPT 7 Turbo (available) among its models." in notes, notes
    assert "were read" not in notes, notes
