"""What the answers' hints say of the agent asked about when a capability is unclear, and what a category's list's
note says of the agents whose data leaves some of it out: said once, in the number there is, and never a step that
would answer with no record.

The builds are the bundled catalog plus invented agents that each record a few of its capabilities: the agents a
catalog grows by, whose data records none (or only some) of the closest capabilities.
"""

from __future__ import annotations

import json
import re
import shutil
from itertools import combinations
from pathlib import Path

import pytest
from server_support import REPO, connect, real_build

pytestmark = pytest.mark.anyio


def _records(agents: Path) -> dict[str, dict]:
    """Every capability record of the bundled catalog, by name (the first agent's that has it)."""
    found: dict[str, dict] = {}
    for path in sorted(agents.glob("*/capabilities/current.json")):
        for record in json.loads(path.read_text("utf-8"))["capabilities"]:
            found.setdefault(record["name"], record)
    return found


def crowded_build(root: Path, recorded: dict[str, list[str]]) -> Path:
    """The bundled catalog plus one agent per `recorded` id, whose data records only the capabilities named."""
    agents = root / "agents"
    shutil.copytree(REPO / "agents", agents)
    records = _records(agents)
    template = json.loads((agents / "gemini-cli" / "capabilities" / "current.json").read_text("utf-8"))
    for agent, names in recorded.items():
        data = dict(template, agent=dict(template["agent"], name=agent.title()))
        data["capabilities"] = [records[name] for name in names]
        (agents / agent / "capabilities").mkdir(parents=True)
        (agents / agent / "capabilities" / "current.json").write_text(json.dumps(data), "utf-8")
    return real_build(agents, root / "build")


async def test_a_hint_for_an_agent_that_records_no_candidate_says_not_a_no_once(tmp_path: Path) -> None:
    """zeta-a's data records none of the candidates for a loose question: the hint says nothing clearly matches, where
    each one's record is, then to try other words -- "not a no" once, and no 'call again with its slug', which would
    answer with no sources. For zeta-b, which records one of them, the hint says where the others' records are."""
    build = crowded_build(tmp_path, {"zeta-a": ["Inline Code Completion"], "zeta-b": ["Tool Permissions"]})
    asked = {"capability": "approve commands automatically"}
    async with connect(build) as client:
        none = (await client.call_tool("get_sources", {"agent": "zeta-a", **asked})).structured_content
        some = (await client.call_tool("get_sources", {"agent": "zeta-b", **asked})).structured_content
        unclear = (await client.call_tool("get_sources", {"agent": "zeta-b", "capability": "tool"})).structured_content
    assert not any(row["recorded"] for row in none["candidates"])
    hint = none["hint"]
    assert hint.count("not a no") == 1 and "its slug" not in hint
    assert hint.startswith("Nothing in this catalog clearly matches 'approve commands automatically'. zeta-a's data")
    assert hint.endswith("; or call again with other words if none of these is it.")
    assert any(row["recorded"] for row in some["candidates"]) and not all(r["recorded"] for r in some["candidates"])
    for partly in (some["hint"], unclear["hint"]):
        assert partly.endswith("slug; for one zeta-b has no record of, compare_capability gives every agent's.")


async def test_a_category_hint_says_where_the_records_are(bundled_build: Path) -> None:
    """chat-assistance has one capability, which claude-code's data does not record: said in the singular, by its
    slug; copilot-cli records five of customization's six: the hint says where the sixth's record is."""
    async with connect(bundled_build) as client:
        one = await client.call_tool("get_sources", {"agent": "claude-code", "capability": "chat-assistance"})
        lookup = await client.call_tool("lookup_capability", {"agent": "claude-code", "capability": "chat-assistance"})
        some = await client.call_tool("get_sources", {"agent": "copilot-cli", "capability": "customization"})
    hint = one.structured_content["hint"]
    assert [row["slug"] for row in one.structured_content["candidates"]] == ["inline-chat"]
    assert "has no record of it (no data, not a no): compare_capability with 'inline-chat' gives every" in hint
    assert "any of these" not in hint and "one's name" not in hint
    last = lookup.content[0].text.split("\n\n")[-2]  # the line before the one on snippets from other agents' records
    assert last.startswith("compare_capability with 'inline-chat' gives every agent's record of it")
    assert some.structured_content["hint"].endswith(
        "Call again with one capability's name or slug; for one copilot-cli has no record of, compare_capability "
        "gives every agent's."
    )


async def test_other_candidates_none_of_which_the_agent_records_point_to_every_agents_record(tmp_path: Path) -> None:
    """zeta-a's data records none of the snippets nor the other candidates for 'tool': the line naming the others
    does not say to call again with one slug, which would answer with no record."""
    build = crowded_build(tmp_path, {"zeta-a": ["Inline Code Completion"], "zeta-b": ["Tool Permissions"]})
    async with connect(build) as client:
        none = await client.call_tool("lookup_capability", {"agent": "zeta-a", "capability": "tool"})
        some = await client.call_tool("lookup_capability", {"agent": "zeta-b", "capability": "tool"})
    assert none.structured_content["candidates"] and not any(
        r["recorded"] for r in none.structured_content["candidates"]
    )
    (others,) = [line for line in none.content[0].text.split("\n\n") if line.startswith("Other candidates: ")]
    assert "Call again" not in others
    assert others.endswith(
        ". compare_capability with one's name or slug gives every agent's record of it"
        " (setup, limits, caveats, sources where recorded)."
    )
    (others,) = [line for line in some.content[0].text.split("\n\n") if line.startswith("Other candidates: ")]
    assert others.endswith(
        "Call again with one slug; for one zeta-b has no record of, compare_capability gives every agent's."
    )


async def test_a_categorys_note_says_the_agents_past_the_room_for_names_in_one_sentence(tmp_path: Path) -> None:
    """Thirteen agents that each leave out a different six of context-awareness's eight capabilities: once the room
    for names is spent, the agents left are said together in one sentence, not one count-only sentence each."""
    members = [name for name, record in _records(REPO / "agents").items() if record["category"] == "context-awareness"]
    pairs = list(combinations(sorted(members), 2))[:13]
    agents = {f"agent-number-{n + 1:02}": list(pair) for n, pair in enumerate(pairs)}
    build = crowded_build(tmp_path, agents)
    async with connect(build) as client:
        result = await client.call_tool("list_capabilities", {"category": "context-awareness"})
    note = result.content[-1].text
    assert not re.search(r"so not listed: \d+ capabilit", note)
    assert all(note.count(agent) == 1 for agent in agents)
    named = note.split(". ")
    assert len([sentence for sentence in named if sentence.startswith("Not in ")]) < 10
    (together,) = [sentence for sentence in named if sentence.startswith("Some of it is not in the data of ")]
    assert together.endswith(", vscode-copilot either (no data, not a no)")
    assert note.endswith("A list by an agent and this category names those not named here.")
