"""The prompt benchmark: its dataset matches the catalog, its judge is right, and it runs end to end
against the real server (`capidx build` + `capidx serve` over stdio). No network."""

from __future__ import annotations

import json
import urllib.request
from collections import Counter
from pathlib import Path
from types import ModuleType

import mcp_types as types
import pytest
from bench_loader import load_benchmark

from capidx.schema.text import slugify

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "benchmarks"


def _load(name: str) -> ModuleType:
    return load_benchmark(name)


bench = _load("prompt_bench")
PROMPTS = bench.load_prompts()


def _catalog() -> dict[str, dict[str, bool]]:
    """agent -> canonical slug -> available, read straight from the catalog files."""
    facts: dict[str, dict[str, bool]] = {}
    for path in sorted((ROOT / "agents").glob("*/capabilities/current.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        facts[path.parts[-3]] = {slugify(c["name"]): bool(c["available"]) for c in data["capabilities"]}
    return facts


# --- the dataset ------------------------------------------------------------------------------------


def test_enough_prompts_of_every_kind() -> None:
    assert len(PROMPTS) >= 60
    kinds = Counter(p["kind"] for p in PROMPTS)
    assert set(kinds) == set(bench.KINDS)
    scenarios = [p for p in PROMPTS if p["kind"] == "scenario"]
    assert len(scenarios) >= 5
    assert sum(len(p["calls"]) > 1 for p in scenarios) >= 4
    assert len({p["id"] for p in PROMPTS}) == len(PROMPTS)


def test_expected_slugs_and_availability_match_the_catalog() -> None:
    facts = _catalog()
    slugs = {slug for caps in facts.values() for slug in caps}
    assert len(slugs) == 36
    for prompt in PROMPTS:
        for call in prompt["calls"]:
            assert call["tool"] in bench.TOOLS, prompt["id"]
            expect = call["expect"]
            for slug in filter(None, (expect.get("capability"), expect.get("filter", {}).get("capability"))):
                assert slug in slugs, f"{prompt['id']}: {slug}"
            for agent in [expect.get("agent"), expect.get("filter", {}).get("agent"), *expect.get("agents", ())]:
                assert agent is None or agent in facts, f"{prompt['id']}: {agent}"
            if call["tool"] == "lookup_capability" and "ambiguousAgent" not in expect:
                # Unrecorded capabilities count as unavailable (the build answers recorded: false).
                actual = facts[expect["agent"]].get(expect["capability"], False)
                assert expect["available"] is actual, f"{prompt['id']}: {expect}"


def test_lacking_and_ambiguous_prompts_mean_what_they_say() -> None:
    for prompt in PROMPTS:
        expects = [c["expect"] for c in prompt["calls"]]
        if prompt["kind"] == "lacking":
            assert all(e.get("available") is False for e in expects), prompt["id"]
        if prompt["kind"] == "ambiguous-agent":
            assert all(e.get("ambiguousAgent") == ["copilot-cli", "vscode-copilot"] for e in expects), prompt["id"]


def test_harness_dataset_check_agrees() -> None:
    assert bench.check_prompts(PROMPTS, bench.catalog_facts()) == []
    broken = [
        {
            "id": "x",
            "kind": "exact",
            "prompt": "p",
            "calls": [
                {
                    "tool": "lookup_capability",
                    "arguments": {},
                    "expect": {"agent": "claude-code", "capability": "nope", "available": True},
                }
            ],
        }
    ]
    assert any("nope" in problem for problem in bench.check_prompts(broken, bench.catalog_facts()))


def test_subset_takes_every_kind_first() -> None:
    subset = bench.select_subset(PROMPTS, len(bench.KINDS))
    assert {p["kind"] for p in subset} == set(bench.KINDS)
    assert bench.select_subset(PROMPTS, 5) == bench.select_subset(PROMPTS, 5)


# --- the judge (no server) --------------------------------------------------------------------------


def _answer(value: dict | None, resolution: dict, *, error: str | None = None, budget: dict | None = None) -> object:
    text = error if error is not None else json.dumps(value)
    meta = {bench.RESOLUTION_META: resolution} | ({bench.BUDGET_META: budget} if budget is not None else {})
    result = types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=value if error is None else None,
        is_error=error is not None,
        _meta=meta,
    )
    return bench.Answer.of(result)


LOOKUP = {"agent": "claude-code", "capability": "mcp-servers", "available": True}


def _lookup_doc(agent: str, slug: str, available: bool = True) -> dict:
    return {"agent": agent, "capability": {"slug": slug, "available": available}, "availableFor": []}


def test_judge_correct_and_wrong_documents() -> None:
    args = {"agent": "claude", "capability": "mcp"}
    right = _answer(_lookup_doc("claude-code", "mcp-servers"), {})
    assert bench.judge("lookup_capability", args, LOOKUP, right).outcome == "correct"
    other = _answer(_lookup_doc("claude-code", "plugins"), {})
    assert bench.judge("lookup_capability", args, LOOKUP, other).outcome == "wrong"
    unavailable = _answer(_lookup_doc("claude-code", "mcp-servers", available=False), {})
    assert bench.judge("lookup_capability", args, LOOKUP, unavailable).outcome == "wrong"


def test_judge_retries_with_the_top_candidate() -> None:
    candidates = [{"value": "mcp-servers", "label": "MCP Servers", "matchConfidence": 0.6}]
    answer = _answer(
        {"query": "mcp sever", "candidates": [{"slug": "mcp-servers"}], "agent": "claude-code"},
        {
            "agent": {"status": "resolved", "value": "claude-code"},
            "capability": {"status": "ambiguous", "candidates": candidates},
        },
    )
    verdict = bench.judge("lookup_capability", {"agent": "claude", "capability": "mcp sever"}, LOOKUP, answer)
    assert verdict.outcome == "unresolved"
    assert verdict.retry_arguments == {"agent": "claude", "capability": "mcp-servers"}


def _suggestions(status: str, *slugs: str, available: bool = True, budget: dict | None = None) -> object:
    rows = [{"capability": slug, "label": "✓ Recommended", "available": available} for slug in slugs]
    value = {"query": "q", "agent": "claude-code", "suggestions": rows}
    resolution = {"agent": {"status": "resolved", "value": "claude-code"}, "capability": {"status": status}}
    if status == "resolved":
        resolution["capability"]["value"] = slugs[0]
    else:
        resolution["capability"]["candidates"] = [{"value": slug, "matchConfidence": 0.5} for slug in slugs]
    return _answer(value, resolution, budget=budget)


def test_judge_budgeted_suggestions() -> None:
    args = {"agent": "claude", "capability": "how do I connect tools"}
    resolved = _suggestions("resolved", "mcp-servers", "plugins")
    assert bench.judge("lookup_capability", args, LOOKUP, resolved).outcome == "correct"
    assert "suggestions [mcp-servers" in resolved.summary()
    assert "tokens" not in resolved.summary()  # no budget in `_meta`: none is made up
    # The tokens a suggestions answer used against its budget are read from `_meta` (the model is not told them).
    budget = {"totalTokens": 180, "maxTokens": 500, "tokens": {"mcp-servers": 120}, "omitted": []}
    budgeted = _suggestions("resolved", "mcp-servers", "plugins", budget=budget).summary()
    assert budgeted.endswith("suggestions [mcp-servers None, plugins None] 180/500 tokens"), budgeted
    other = _suggestions("resolved", "plugins", "mcp-servers")
    assert bench.judge("lookup_capability", args, LOOKUP, other).outcome == "wrong"
    lacking = _suggestions("resolved", "mcp-servers", available=False)
    assert bench.judge("lookup_capability", args, LOOKUP, lacking).outcome == "wrong"
    unclear = bench.judge("lookup_capability", args, LOOKUP, _suggestions("ambiguous", "plugins", "mcp-servers"))
    assert (unclear.outcome, unclear.retry_arguments) == ("unresolved", {"agent": "claude", "capability": "plugins"})


def test_judges_read_no_record_as_not_available() -> None:
    """A lookup document or suggestion row for a capability the agent has no record of carries `recorded: false` and
    no `available`: both judges score it as not available, what the query sets expect of such a capability."""
    args = {"agent": "claude", "capability": "mcp"}
    document = {"agent": "claude-code", "capability": {"slug": "mcp-servers", "recorded": False}, "availableFor": []}
    row = {"capability": "mcp-servers", "label": "✓ Recommended", "recorded": False}
    suggested = {"query": "q", "agent": "claude-code", "suggestions": [row]}
    resolution = {"capability": {"status": "resolved", "value": "mcp-servers"}}
    resolution_bench = _load("resolution_bench")
    for answer in (_answer(document, {}), _answer(suggested, resolution)):
        assert bench.judge("lookup_capability", args, LOOKUP | {"available": False}, answer).outcome == "correct"
        assert bench.judge("lookup_capability", args, LOOKUP, answer).outcome == "wrong"
        assert resolution_bench.resolved(answer)["available"] is False


def test_judge_ambiguous_agent() -> None:
    expect = {"ambiguousAgent": ["copilot-cli", "vscode-copilot"]}
    both = [{"value": "copilot-cli"}, {"value": "vscode-copilot"}]
    said_so = _answer(None, {"agent": {"status": "ambiguous", "candidates": both}}, error="ambiguous")
    assert bench.judge("lookup_capability", {"agent": "copilot"}, expect, said_so).outcome == "correct"
    guessed = _answer(_lookup_doc("copilot-cli", "mcp-servers"), {})
    assert bench.judge("lookup_capability", {"agent": "copilot"}, expect, guessed).outcome == "wrong"


def test_judge_filters_and_comparisons() -> None:
    listed = _answer({"filter": {"agent": "gemini-cli"}, "capabilities": []}, {})
    assert bench.judge("list_capabilities", {}, {"filter": {"agent": "gemini-cli"}}, listed).outcome == "correct"
    assert bench.judge("list_capabilities", {}, {"filter": {"agent": "claude-code"}}, listed).outcome == "wrong"
    compared = _answer(
        {"capability": {"slug": "hooks"}, "agents": [{"agent": "gemini-cli"}, {"agent": "claude-code"}]}, {}
    )
    expect = {"capability": "hooks", "agents": ["claude-code", "gemini-cli"]}
    assert bench.judge("compare_capability", {}, expect, compared).outcome == "correct"


# --- end to end through the real server -------------------------------------------------------------


@pytest.mark.slow
def test_benchmark_runs_against_the_real_server(bundled_build: Path) -> None:
    """Both modes end to end: "aliases" over stdio (a `capidx serve` subprocess) from the shared real build of the
    same catalog (a default build, aliases on, built once per test run); "no-aliases" builds the catalog itself
    (`capidx build --no-aliases`) and talks to the server in process (the bench's `--transport memory`): one
    subprocess server checks the stdio path, the other transport is checked on the same prompts."""
    exact = [p for p in PROMPTS if p["kind"] == "exact"][:4]
    rest = bench.select_subset([p for p in PROMPTS if p["kind"] != "exact"], 6)
    with_aliases = bench.run_benchmark(exact + rest, modes=["aliases"], build_dir=bundled_build)
    report = bench.run_benchmark(exact + rest, modes=["no-aliases"], transport="memory")
    assert (with_aliases["transport"], report["transport"]) == ("stdio", "memory")
    report["runs"] = with_aliases["runs"] + report["runs"]

    assert report["rawCatalog"]["tokens"] > 10_000
    assert [run["mode"] for run in report["runs"]] == list(bench.MODES)
    for run in report["runs"]:
        total = run["total"]
        assert total["prompts"] == 10
        assert sum(total[outcome] for outcome in bench.OUTCOMES) == 10
        for key in ("correctRate", "retryRate", "wrongRate", "ratioMean", "ratioMax", "wireRatioMax"):
            assert 0.0 <= total[key] <= 1.0, key
        assert run["toolsListTokens"] > 0
        assert set(run["targetsMet"]) == {"correct", "wrong", "tokenRatio"}
        by_id = {r["id"]: r for r in run["results"]}
        for prompt in exact:
            result = by_id[prompt["id"]]
            assert result["outcome"] == "correct", (run["mode"], result)
            assert 0 < result["ratio"] < bench.TARGETS["tokenRatio"]
        assert "correct without retry" in bench.render(report)


# --- the optional LLM adapter -----------------------------------------------------------------------


def test_llm_adapter_skips_without_configuration(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    adapter = _load("llm_adapter")

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the adapter must not touch the network when it is not configured")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    assert adapter.main([], environ={}) == 0
    assert "skipped" in capsys.readouterr().out
    assert adapter.settings_from_env({"CAPIDX_BENCH_LLM_URL": "http://x/v1/"}) is None
    configured = adapter.settings_from_env({"CAPIDX_BENCH_LLM_URL": "http://x/v1/", "CAPIDX_BENCH_LLM_MODEL": "m"})
    assert configured == {"url": "http://x/v1", "model": "m", "key": ""}


def test_llm_adapter_converts_tools_and_reads_tool_calls() -> None:
    adapter = _load("llm_adapter")
    tool = types.Tool(name="lookup_capability", description="d", input_schema={"type": "object", "properties": {}})
    assert adapter.openai_tools([tool]) == [
        {
            "type": "function",
            "function": {
                "name": "lookup_capability",
                "description": "d",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    message = {
        "tool_calls": [
            {"function": {"name": "get_sources", "arguments": '{"agent": "gemini"}'}},
            {"function": {"name": "list_capabilities", "arguments": "not json"}},
        ]
    }
    assert adapter.tool_calls(message) == [("get_sources", {"agent": "gemini"}), ("list_capabilities", {})]
