"""Issue 12: a capability name nothing matches gets suggestions as a normal result, never a tool error."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import (
    connect,
)

pytestmark = pytest.mark.anyio


async def test_unknown_capability_gets_suggestions_and_a_pointer_to_list_capabilities(any_build: Path) -> None:
    async with connect(any_build) as client:
        result = await client.call_tool("lookup_capability", {"agent": "claude", "capability": "xyzzy plugh"})
        compared = await client.call_tool("compare_capability", {"capability": "xyzzy plugh"})
        sources = await client.call_tool("get_sources", {"agent": "claude", "capability": "xyzzy plugh"})
    for answer in (result, compared, sources):
        assert not answer.is_error
        value = answer.structured_content
        assert value["query"] == "xyzzy plugh"
        assert 1 <= len(value["candidates"]) <= 3
        assert "list_capabilities" in value["hint"]
        resolution = answer.meta["capidx/resolution"]["capability"]
        assert resolution["status"] == "unknown"  # every response says how the name was resolved
        assert [c["value"] for c in resolution["candidates"]] == [c["slug"] for c in value["candidates"]]
    assert all("available" in c for c in result.structured_content["candidates"])


async def test_an_unknown_agent_is_still_an_error(any_build: Path) -> None:
    async with connect(any_build) as client:
        result = await client.call_tool("lookup_capability", {"agent": "emacs", "capability": "mcp"})
    assert result.is_error and "emacs" in result.content[0].text


async def test_an_unresolved_lookup_names_the_candidates_its_snippets_leave_out(bundled_build: Path) -> None:
    """The snippets answer with the top three; the scorer's further candidates are named too, in the
    text and the structured answer, so the model sees them (not only `_meta`)."""
    async with connect(bundled_build) as client:
        result = await client.call_tool(
            "lookup_capability", {"agent": "claude", "capability": "notes about the terminal and the editor window"}
        )
    assert not result.is_error
    resolution = result.meta["capidx/resolution"]["capability"]
    assert resolution["status"] == "ambiguous"
    value = result.structured_content
    suggested = [row["capability"] for row in value["suggestions"]]
    others = [row["slug"] for row in value["candidates"]]
    assert others and not set(others) & set(suggested)
    assert others == [c["value"] for c in resolution["candidates"] if c["value"] not in suggested]
    text = result.content[0].text
    assert "Other candidates:" in text and all(slug in text for slug in others)
    assert all(isinstance(row["available"], bool) for row in value["candidates"])


async def test_a_name_like_nothing_gets_no_made_up_candidates(bundled_build: Path) -> None:
    # Nothing shares a letter with '🤖🤖': the first names in alphabetical order are no suggestion.
    async with connect(bundled_build) as client:
        result = await client.call_tool("lookup_capability", {"agent": "claude-code", "capability": "🤖🤖"})
        agent = await client.call_tool("lookup_capability", {"agent": "🤖", "capability": "hooks"})
        category = await client.call_tool("list_capabilities", {"category": "🤖"})
    assert not result.is_error
    assert result.structured_content["candidates"] == []
    assert "list_capabilities" in result.structured_content["hint"]
    assert "closest" not in result.structured_content["hint"]
    assert result.meta["capidx/resolution"]["capability"]["status"] == "unknown"
    for error in (agent, category):
        assert error.is_error and "Unknown" in error.content[0].text and "Closest" not in error.content[0].text


@pytest.mark.parametrize("blank", ["   ", "\t", "\u3000"])
async def test_a_blank_name_is_refused_like_an_empty_one(catalog_build: Path, blank: str) -> None:
    async with connect(catalog_build) as client:
        lookup = await client.call_tool("lookup_capability", {"agent": "claude", "capability": blank})
        listed = await client.call_tool("list_capabilities", {"agent": blank})
    assert lookup.is_error and "capability: must not be empty" in lookup.content[0].text
    assert listed.is_error and "agent: must not be empty" in listed.content[0].text
