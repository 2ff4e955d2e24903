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
