"""Name resolution as pure functions over index/match.json."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import fixture_any_build, fixture_catalog_build, fixture_hand_build  # noqa: F401 (fixtures)

from capidx.server.resolve import MatchIndex, resolve_agent, resolve_capability, resolve_category
from capidx.server.snapshot import load_snapshot


@pytest.fixture
def index(any_build: Path) -> MatchIndex:
    return load_snapshot(any_build).index


@pytest.mark.parametrize(
    ("query", "agent_id", "how"),
    [
        ("claude-code", "claude-code", "exact"),
        ("Claude Code", "claude-code", "exact"),
        ("CLAUDE_CODE", "claude-code", "exact"),
        ("claude", "claude-code", "name"),
        ("gemini", "gemini-cli", "name"),
        ("GitHub Copilot CLI", "copilot-cli", "name"),
        ("gemni", "gemini-cli", "fuzzy"),
        ("claud code", "claude-code", "fuzzy"),
    ],
)
def test_agents(index: MatchIndex, query: str, agent_id: str, how: str) -> None:
    resolution = resolve_agent(index, query)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", agent_id, how)


@pytest.mark.parametrize("query", ["copilot", "Copilot", " COPILOT "])
def test_copilot_is_ambiguous(index: MatchIndex, query: str) -> None:
    resolution = resolve_agent(index, query)
    assert resolution.status == "ambiguous"
    assert [c.value for c in resolution.candidates] == ["copilot-cli", "vscode-copilot"]


@pytest.mark.parametrize("query", ["emacs", "", "   ", "!!!"])
def test_unknown_agents_get_suggestions(index: MatchIndex, query: str) -> None:
    resolution = resolve_agent(index, query)
    assert resolution.status == "unknown"
    assert len(resolution.candidates) == 3


@pytest.mark.parametrize(
    ("query", "agent", "slug", "how"),
    [
        ("MCP Servers", None, "mcp-servers", "exact"),
        ("mcp-servers", None, "mcp-servers", "exact"),
        ("  mcp   SERVERS ", None, "mcp-servers", "exact"),
        ("mcp", None, "mcp-servers", "alias"),
        ("Model Context Protocol", None, "mcp-servers", "alias"),
        ("Extensions", "gemini-cli", "plugins", "terminology"),
        ("Extensions", "claude-code", "plugins", "terminology"),
        ("Plan agent", None, "plan-mode", "terminology"),
        ("mcp srvers", None, "mcp-servers", "fuzzy"),
        ("hoks", None, "hooks", "fuzzy"),
        ("ghost-text suggestions while typing", None, "inline-code-completion", "lexical"),
        ("run a shell command before a tool call", None, "hooks", "lexical"),
    ],
)
def test_capabilities(index: MatchIndex, query: str, agent: str | None, slug: str, how: str) -> None:
    resolution = resolve_capability(index, query, agent=agent)
    assert (resolution.status, resolution.value, resolution.resolved_by) == ("resolved", slug, how)
    assert 0 < resolution.confidence <= 1


def test_the_asked_agents_terminology_wins() -> None:
    data = {
        "agents": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}],
        "agentNames": {},
        "aliases": {},
        "capabilities": [
            {"slug": s, "name": s.title(), "category": "c", "key": s, "agents": {}, "terms": {s: 1}, "length": 1}
            for s in ("rules", "memory")
        ],
        "terminology": {"memory": [{"agent": "a", "capability": "rules"}, {"agent": "b", "capability": "memory"}]},
        "idf": {"rules": 1.0, "memory": 1.0},
        "avgLength": 1,
        "categories": ["c"],
    }
    data["terminology"]["notes"] = data["terminology"].pop("memory")  # a word that is no capability's own name
    index = MatchIndex.from_json(data)
    assert resolve_capability(index, "notes", agent="a").value == "rules"
    assert resolve_capability(index, "notes", agent="b").value == "memory"
    unsure = resolve_capability(index, "notes")
    assert unsure.status == "ambiguous"
    assert [c.value for c in unsure.candidates] == ["memory", "rules"]


def test_low_margin_gives_the_top_three_with_confidence(index: MatchIndex) -> None:
    resolution = resolve_capability(index, "tool")
    assert resolution.status == "ambiguous"
    assert 2 <= len(resolution.candidates) <= 3
    confidences = [c.confidence for c in resolution.candidates]
    assert confidences == sorted(confidences, reverse=True)
    assert confidences[0] - confidences[1] < 0.15


def test_nothing_matches(index: MatchIndex) -> None:
    resolution = resolve_capability(index, "xyzzy plugh")
    assert resolution.status == "unknown" and resolution.value is None
    assert len(resolution.candidates) == 3


def test_resolution_is_described_for_meta(index: MatchIndex) -> None:
    assert resolve_capability(index, "mcp").describe() == {
        "input": "mcp",
        "status": "resolved",
        "value": "mcp-servers",
        "resolvedBy": "alias",
        "matchConfidence": 1.0,
    }


@pytest.mark.parametrize(
    ("query", "category"),
    [("customization", "customization"), ("API integration", "api-integration"), ("api", "api-integration")],
)
def test_categories(index: MatchIndex, query: str, category: str) -> None:
    assert resolve_category(index, query).value == category


def test_unknown_category(index: MatchIndex) -> None:
    resolution = resolve_category(index, "cooking")
    assert resolution.status == "unknown" and len(resolution.candidates) == 3
