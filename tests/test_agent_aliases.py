"""An agent's other names (`agent.aliases`): what people call it besides its name ('Copilot Chat' for GitHub
Copilot in Visual Studio Code) is read as that agent by every tool, and an alias that names another agent too is
said by validate, as two agents sharing a display name are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_factory import documents, run_cli, write_catalog
from server_support import connect

pytestmark = pytest.mark.anyio


def _catalog(tmp_path: Path, **aliases: list[str]) -> Path:
    docs = documents()
    for agent, names in aliases.items():
        docs[agent]["agent"]["aliases"] = names
    write_catalog(tmp_path, docs)
    return tmp_path


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


async def test_an_agents_alias_is_read_as_that_agent_by_every_tool(tmp_path: Path) -> None:
    project = _catalog(tmp_path, **{"vscode-copilot": ["GitHub Copilot Chat", "Copilot Chat"]})
    validated = run_cli(["validate"], project)
    assert validated.exit_code == 0 and "agent-name" not in validated.output, validated.output
    assert run_cli(["build", "-q"], project).exit_code == 0
    names = json.loads((project / "build" / "index" / "match.json").read_text("utf-8"))["agentNames"]
    assert names["copilot chat"] == names["github copilot chat"] == ["vscode-copilot"]
    async with connect(project / "build") as client:
        lookup = await client.call_tool("lookup_capability", {"agent": "Copilot Chat", "capability": "mcp"})
        listed = await client.call_tool("list_capabilities", {"agent": "copilot chat"})
        unknown = await client.call_tool("lookup_capability", {"agent": "Copilot Voice", "capability": "mcp"})
    assert not lookup.is_error and lookup.structured_content["agent"] == "vscode-copilot", _text(lookup)
    assert not listed.is_error and listed.structured_content["filter"]["agent"] == "vscode-copilot", _text(listed)
    assert unknown.is_error  # an alias is a name as written, not a word any name of the agent may be read from


def test_an_alias_another_agent_is_named_by_is_said(tmp_path: Path) -> None:
    project = _catalog(tmp_path, **{"vscode-copilot": ["Claude Code", "VS Code Chat"], "copilot-cli": ["vs code chat"]})
    result = run_cli(["validate", "-v"], project)
    assert result.exit_code == 0, result.output  # a warning, as two agents sharing a display name
    lines = [line for line in result.output.splitlines() if "also the" in line]
    assert any("agent alias 'Claude Code' is also the name of agent 'claude-code'" in line for line in lines), lines
    said = "agent alias 'VS Code Chat' is also the alias of agent 'copilot-cli'"  # its file comes first
    assert any(said in line and line.startswith("agents/vscode-copilot/") for line in lines), lines
    assert len(lines) == 2, lines


def test_an_agents_alias_is_one_line_of_text(tmp_path: Path) -> None:
    project = _catalog(tmp_path, **{"claude-code": ["Claude\\nCode"]})
    (project / "agents" / "claude-code" / "capabilities" / "current.json").write_text(
        (project / "agents" / "claude-code" / "capabilities" / "current.json")
        .read_text("utf-8")
        .replace("Claude\\\\nCode", "Claude\\nCode"),
        encoding="utf-8",
    )
    result = run_cli(["validate"], project)
    assert "$.agent.aliases[0]" in result.output, result.output


async def test_an_alias_of_another_agents_words_takes_nothing_from_it(tmp_path: Path) -> None:
    """An alias every word of which another agent's name or id has ('Claude', 'Copilot CLI' given to the VS Code
    agent) was one of the agent's strong names: `agent='claude'` answered for VS Code alone, and `agent='copilot-cli'`,
    the other agent's id, for both. It names both agents, as a word two names share does, and validate says so."""
    project = _catalog(tmp_path, **{"vscode-copilot": ["Claude", "Copilot CLI", "Copilot Chat"]})
    validated = run_cli(["validate"], project)
    assert validated.exit_code == 0, validated.output
    said = [line for line in validated.output.splitlines() if "also names agent" in line]
    assert len(said) == 2 and all(line.startswith("agents/vscode-copilot/") for line in said), validated.output
    assert "'Claude' also names agent 'claude-code'" in said[0] and "'copilot-cli'" in said[1], said
    assert run_cli(["build", "-q"], project).exit_code == 0
    async with connect(project / "build") as client:
        by_id = await client.call_tool("lookup_capability", {"agent": "copilot-cli", "capability": "mcp"})
        by_word = await client.call_tool("lookup_capability", {"agent": "claude", "capability": "mcp"})
        by_alias = await client.call_tool("lookup_capability", {"agent": "Copilot Chat", "capability": "mcp"})
    assert by_id.structured_content["agent"] == "copilot-cli", _text(by_id)
    assert [answer["agent"] for answer in by_word.structured_content["agents"]] == ["claude-code", "vscode-copilot"]
    assert by_alias.structured_content["agent"] == "vscode-copilot", _text(by_alias)
