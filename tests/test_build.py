"""`capidx build` on the factory catalog: every artifact, its contents, the manifest, losslessness.

One build is shared by the whole module (it is deterministic, so reading it many times is safe).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from catalog_factory import AGENT_IDS, ALIASES, documents, run_cli, snapshot, write_catalog
from manifest_factory import artifact_bytes, build_text

from capidx.compiler.emit.tokens import load_bundled
from capidx.schema.text import canonical_json as dumps
from capidx.schema.text import normalize

REPO = Path(__file__).resolve().parent.parent
SLUGS = ("code-review", "custom-instructions", "hooks", "inline-suggestions", "mcp-servers", "subagents")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    write_catalog(root)
    result = run_cli(["build", "--out", str(root / "build")], cwd=root)
    assert result.exit_code == 0, result.output
    return root / "build"


@pytest.fixture(scope="module")
def manifest(built: Path) -> dict[str, Any]:
    return json.loads((built / "manifest.json").read_text("utf-8"))


def _json(built: Path, path: str) -> Any:
    return json.loads(build_text(built, path))


def test_manifest_is_valid_and_lists_every_file_with_its_hash(built: Path, manifest: dict[str, Any]) -> None:
    schema = json.loads((REPO / "schema" / "build-manifest.schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator(schema).validate(manifest)
    listed = {row["path"] for row in manifest["artifacts"]}
    assert listed == set(snapshot(built)) - {"manifest.json"}
    for row in manifest["artifacts"]:
        data = artifact_bytes(built, row)
        assert row["bytes"] == len(data)
        assert row["sha256"] == hashlib.sha256(data).hexdigest()
        assert f"{row['tokens']['cl100k_base']:,} tokens (cl100k_base)." in row["description"]
    assert len({row["uri"] for row in manifest["artifacts"]}) == len(manifest["artifacts"])
    assert manifest["catalog"] == {
        "agents": list(AGENT_IDS),
        "capabilities": list(SLUGS),
        "categories": [
            "agent-orchestration",
            "api-integration",
            "code-completion",
            "code-explanation",
            "customization",
        ],
    }
    assert [row["kind"] for row in manifest["resourceTemplates"]] == ["agent", "capability", "category"]
    assert manifest["inputDigest"].startswith("sha256:")


def test_every_artifact_kind_has_its_documents(manifest: dict[str, Any]) -> None:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for row in manifest["artifacts"]:
        by_kind.setdefault(row["kind"], []).append(row)
    counts = {kind: len(rows) for kind, rows in by_kind.items()}
    pairs = 3 * 6
    # list: 3 per-agent, 5 per-category, one per (agent, category) pair with records (3 + 4 + 3)
    # snippet: one per recorded agent x capability pair (4 + 4 + 3 records), one per canonical capability
    assert counts == {
        "summary": 1, "full": 1, "stats": 1, "agent": 3, "capability": 6, "category": 5,
        "instructions": 1, "memory": 1,
        "lookup": pairs, "compare": 6, "list": 3 + 5 + 10, "sources": pairs + 6 + 3, "snippet": 11 + 6, "index": 1,
        # site/ (on by default): the Markdown copies of the agent, capability and category documents, one API
        # document per agent, capability and category, and the single files
        "site-markdown": 3 + 6 + 5, "site-agent": 3, "site-capability": 6, "site-category": 5,
        "llms": 1, "llms-full": 1, "site-page": 1, "site-script": 1, "site-style": 1, "site-index": 1,
        "site-agents": 1, "site-capabilities": 1, "site-quality": 1,
    }  # fmt: skip
    summary = by_kind["summary"][0]
    assert (summary["uri"], summary["path"], summary["mimeType"]) == (
        "capability-index://summary",
        "summary.md",
        "text/markdown",
    )
    lookup = next(row for row in by_kind["lookup"] if row["params"] == {"agent": "copilot-cli", "capability": "hooks"})
    assert lookup["path"] == "tools/lookup.pack" and lookup["offset"] >= 0  # tool answers are packed
    assert lookup["uri"] == "capability-index://tools/lookup/copilot-cli/hooks"
    assert {row["params"].get("category") for row in by_kind["list"] if "agent" not in row["params"]} == set(
        ["agent-orchestration", "api-integration", "code-completion", "code-explanation", "customization"]
    )


def test_summary_names_every_capability_and_agent(built: Path) -> None:
    summary = (built / "summary.md").read_text("utf-8")
    for doc in documents().values():
        for capability in doc["capabilities"]:
            assert capability["name"] in summary
    for agent_id in AGENT_IDS:
        assert agent_id in summary
    assert "MCP Servers ✓p ✓b ✓f" in summary  # claude pro, copilot-cli business, vscode free
    assert "Subagents ✓ ✗ -" in summary  # available, recorded unavailable, not recorded
    assert "capability-index://full (all details, " in summary


def test_lookup_documents_cover_every_agent_and_capability(built: Path) -> None:
    for agent_id in AGENT_IDS:
        for slug in SLUGS:
            text = build_text(built, f"tools/lookup/{agent_id}/{slug}.json")
            assert text == dumps(json.loads(text))  # compact, sorted, the one serialization
    missing = _json(built, "tools/lookup/vscode-copilot/subagents.json")
    assert missing == {
        "agent": "vscode-copilot",
        "availableFor": ["claude-code"],
        "capability": {
            "category": "agent-orchestration", "name": "Subagents", "recorded": False,
            "slug": "subagents",
        },
        "relationships": {"sameCapability": ["claude-code"]},
    }  # fmt: skip
    unavailable = _json(built, "tools/lookup/copilot-cli/subagents.json")["capability"]
    assert (unavailable["available"], unavailable["recorded"]) == (False, True)
    mcp = _json(built, "tools/lookup/claude-code/mcp-servers.json")["capability"]
    assert mcp["implementationNotes"]["configFile"] == ".mcp.json"
    assert mcp["tier"] == "pro"
    assert mcp["limitations"][0] == "Tool output counts against the context window"
    assert {"url": "https://modelcontextprotocol.io/specification", "verifiedDate": "2026-01-02"}.items() <= mcp[
        "sources"
    ][1].items()


def test_compare_list_and_sources_documents(built: Path) -> None:
    compare = _json(built, "tools/compare/subagents.json")
    assert compare["capability"] == {"category": "agent-orchestration", "name": "Subagents", "slug": "subagents"}
    assert [entry["agent"] for entry in compare["agents"]] == list(AGENT_IDS)
    lacks, unrecorded = compare["agents"][1:]
    assert unrecorded == {"agent": "vscode-copilot", "recorded": False}  # no data, no `available` to read as a "no"
    assert lacks["available"] is False  # a "no" keeps its reason
    assert lacks["description"].startswith("No user-defined subagents")
    assert compare["agents"][0]["terminology"] == "subagents"
    mcp = {entry["agent"]: entry for entry in _json(built, "tools/compare/mcp-servers.json")["agents"]}
    assert mcp["claude-code"]["limitations"][0] == "Tool output counts against the context window"  # as in lookup

    per_agent = _json(built, "tools/list/copilot-cli/_all.json")
    assert per_agent["filter"] == {"agent": "copilot-cli"}
    assert all("agent" not in row and "implementationNotes" not in row for row in per_agent["capabilities"])
    by_category = _json(built, "tools/list/_all/customization.json")
    assert {row["agent"] for row in by_category["capabilities"]} == set(AGENT_IDS)

    spec = "https://modelcontextprotocol.io/specification"
    sources = _json(built, "tools/sources/_all/mcp-servers.json")
    row = next(row for row in sources["sources"] if row["url"] == spec)
    assert [cite["agent"] for cite in row["citations"]] == list(AGENT_IDS)
    dates = ["2026-01-02", "2025-08-01", "2026-01-02"]  # each citation's own, not the newest for all
    assert [cite["verifiedDate"] for cite in row["citations"]] == dates
    assert [row["url"] for row in sources["sources"]] == sorted(row["url"] for row in sources["sources"])
    assert _json(built, "tools/sources/vscode-copilot/hooks.json") == {
        "filter": {"agent": "vscode-copilot", "capability": "hooks"},
        "sources": [],
    }
    agent_sources = _json(built, "tools/sources/claude-code/_all.json")
    assert len(agent_sources["sources"]) == 4


def test_match_index(built: Path) -> None:
    index = _json(built, "index/match.json")
    names = index["agentNames"]
    assert names["copilot"] == ["copilot-cli", "vscode-copilot"]  # ambiguous: the server says so
    assert names["claude"] == ["claude-code"]
    assert names["vs code"] == names["vscode"] == ["vscode-copilot"]
    assert names["copilot cli"] == ["copilot-cli"]  # name without the vendor word
    assert names["claude code"] == ["claude-code"]
    assert "code" not in names and "cli" not in names  # generic words name no agent on their own
    assert index["aliases"]["mcp"] == "mcp-servers"  # alias table
    assert index["aliases"]["model context protocol"] == "mcp-servers"  # a capability's own alias
    assert index["aliases"]["memory file"] == "custom-instructions"
    assert index["terminology"]["claude md memory"] == [{"agent": "claude-code", "capability": "custom-instructions"}]
    entry = next(item for item in index["capabilities"] if item["slug"] == "mcp-servers")
    assert entry["agents"]["claude-code"] == {
        "available": True,
        "terminology": "MCP servers",
        "aliases": ["model context protocol", "tool servers"],
        "triggers": ["connect a database", "add a tool server", "use an external tool"],  # words the record uses
    }
    assert entry["terms"]["connect"] >= 1  # a trigger phrase ("connect a database") counts as a record's text
    # Only what the server reads: the ranking model computes its own statistics from `terms` and `description`;
    # `descriptions`, as written, are what it embeds for the order of what it offers.
    assert set(index) == {"version", "agents", "agentNames", "capabilities", "aliases", "terminology", "categories",
                          "emptyCategories", "identifiers", "injection"}  # fmt: skip
    assert set(entry) == {
        "slug", "name", "category", "agents", "aliases", "terms", "description", "descriptions", "similarTo"
    }  # fmt: skip
    claude = next(row for row in index["agents"] if row["id"] == "claude-code")  # what its file lists, by name
    assert claude == {
        "id": "claude-code",
        "name": "Claude Code",
        "vendor": "Anthropic",
        "integrations": [
            {"name": "VS Code", "supported": True, "features": ["diff view", "selection context"]},
            {"name": "Emacs", "supported": False},  # no features: no key
        ],
        "models": [{"name": "Claude Sonnet 4.5", "available": True}],
    }
    copilot = next(row for row in index["agents"] if row["id"] == "copilot-cli")  # no models: no key
    assert copilot == {
        "id": "copilot-cli",
        "name": "GitHub Copilot CLI",
        "vendor": "GitHub",
        "integrations": [{"name": "Terminal", "supported": True}],
    }
    assert all(normalize(key) == key for key in names)


def test_stats_counts_and_sizes(built: Path, manifest: dict[str, Any]) -> None:
    stats = _json(built, "stats.json")
    catalog = stats["catalog"]
    assert (catalog["agents"], catalog["capabilities"], catalog["canonicalCapabilities"]) == (3, 11, 6)
    assert catalog["available"] == 10
    assert catalog["byTier"] == {"business": 1, "enterprise": 1, "free": 5, "pro": 1, "unspecified": 3}
    assert catalog["byStatus"]["deprecated"] == 1
    # reference date: newest date in the data (2026-01-20); stale: verified before 2025-10-22 (90 days)
    assert catalog["sources"] == {
        "citations": 7, "unique": 5, "unverified": 1, "stale": 3, "staleAfterDays": 90, "referenceDate": "2026-01-20",
    }  # fmt: skip
    assert set(stats) == {"catalog", "note"}  # build metadata (sizes, tokens, budgets) is in the manifest only
    assert [row["kind"] for row in manifest["artifacts"]].count("stats") == 1


def test_markdown_documents(built: Path) -> None:
    agent = (built / "agents/copilot-cli.md").read_text("utf-8")
    assert agent.startswith("# GitHub Copilot CLI (`copilot-cli`)\n")
    assert "### Code Review\n✓ enterprise, maturity deprecated, status deprecated, deprecated 2025-12-01" in agent
    capability = (built / "capabilities/subagents.md").read_text("utf-8")
    assert "| vscode-copilot | - | not recorded |" in capability
    # what an agent's data does not mention is said in its document, not left out in silence
    vscode = (built / "agents/vscode-copilot.md").read_text("utf-8")
    assert "Not in its data (" in vscode and "Subagents" in vscode.split("Not in its data", 1)[1].split("\n", 1)[0]
    assert "No data, not a no." in vscode
    assert "| copilot-cli | ✗ |" in capability
    # its title names it once: the shared aliases follow the legend without a second heading of its name
    mcp = (built / "capabilities/mcp-servers.md").read_text("utf-8")
    assert mcp.count("MCP Servers (`mcp-servers`)") == 1 and "\n\n- Aliases: " in mcp and "mcp" in mcp, mcp[:1_500]
    heads = [path.read_text("utf-8").split("\n", 1)[0] for path in sorted((built / "categories").glob("*.md"))]
    assert any(head.endswith(": 1 capability") for head in heads)  # counted as said, not '1 capabilities'
    assert not any(head.endswith(": 1 capabilities") for head in heads)
    category = (built / "categories/customization.md").read_text("utf-8")
    assert "| Hooks | ✓f | - | - |" in category
    full = (built / "full.md").read_text("utf-8")
    spec = "https://modelcontextprotocol.io/specification"
    assert full.count(spec) == 1  # each URL once, cited by number
    assert "[3a]" in full and "[3b]" in full  # one URL cited with different details: lettered variants
    assert "Docs: [2]" in full  # a start URL already in the list is cited, not repeated


def _scalars(value: Any, key: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() if k not in BUILD_ONLY for pair in _scalars(v, k)]
    if isinstance(value, list):
        return [pair for item in value for pair in _scalars(item, key)]
    return [(key, value)]


BUILD_ONLY = {"$schema", "$comment"}  # docs/build-directory.md, "Losslessness"


def test_full_is_lossless(built: Path) -> None:
    full = (built / "full.md").read_text("utf-8")
    inputs: list[Any] = [*documents().values(), ALIASES]
    for key, value in (pair for doc in inputs for pair in _scalars(doc)):
        if isinstance(value, bool):
            continue  # checked below, where they belong
        assert str(value) in full, f"{key}={value!r} missing from full.md"
    for phrase in ALIASES["aliases"]:
        assert phrase in full
    claude = full[full.index("# Claude Code") : full.index("# GitHub Copilot CLI")]
    copilot = full[full.index("# GitHub Copilot CLI") :]
    assert claude.split("### Subagents\n", 1)[1].startswith("✓ ")  # every record shows `available`
    assert copilot.split("### Subagents\n", 1)[1].startswith("✗ ")
    assert "VS Code ✓ (diff view, selection context) · Emacs ✗" in full
    assert "GPT-4.1 (OpenAI) ✗" in full


def test_full_is_much_smaller_than_its_input(built: Path, manifest: dict[str, Any]) -> None:

    encoding = load_bundled("cl100k_base")
    root = built.parent / "agents"
    inputs = sum(len(encoding.encode_ordinary(path.read_text("utf-8"))) for path in root.rglob("*.json"))
    full = next(row for row in manifest["artifacts"] if row["kind"] == "full")["tokens"]["cl100k_base"]
    assert full <= 0.55 * inputs, f"full.md is {full / inputs:.0%} of the input"


def test_an_empty_sources_list_is_the_same_as_none(tmp_path: Path) -> None:
    """`"sources": []` is accepted and means what leaving `sources` out means: validate says the same of both,
    and the build's documents and tool answers (a record that cites nothing) are byte for byte the same."""
    outputs = []
    for variant, change in (("absent", lambda record: record.pop("sources")), ("empty", lambda record: None)):
        docs = documents()
        record = docs["claude-code"]["capabilities"][0]
        change(record)
        if variant == "empty":
            record["sources"] = []
        root = tmp_path / variant
        write_catalog(root, docs)
        checked = json.loads(run_cli(["validate", "--format", "json"], cwd=root).output)
        assert run_cli(["build", "-q"], cwd=root).exit_code == 0
        files = snapshot(root / "build")
        kept = {path: data for path, data in files.items() if path != "manifest.json" and not path.startswith("site/")}
        outputs.append(([(d["pointer"], d["code"]) for d in checked["diagnostics"]], kept))
    assert outputs[0] == outputs[1]


def test_a_record_spelled_otherwise_is_headed_with_the_catalogs_spelling(tmp_path: Path) -> None:
    """Two agents write 'MCP Servers', one 'MCP servers' (a `name-spelling` warning): the build shows the spelling
    most agents write everywhere, that agent's own document and full.md included, which headed its record
    'MCP servers'."""
    docs = documents()
    docs["vscode-copilot"]["capabilities"][0]["name"] = "MCP servers"
    write_catalog(tmp_path, docs)
    assert run_cli(["build", "-q"], cwd=tmp_path).exit_code == 0
    page = (tmp_path / "build" / "agents" / "vscode-copilot.md").read_text("utf-8")
    full = (tmp_path / "build" / "full.md").read_text("utf-8")
    assert "### MCP Servers\n" in page and "MCP servers\n" not in page
    assert full.count("### MCP Servers\n") == 3 and "### MCP servers" not in full
    site = tmp_path / "build" / "site"  # the site's JSON and its page's agent cards alike
    record = json.loads((site / "api" / "agents" / "vscode-copilot.json").read_text("utf-8"))["capabilities"][0]
    assert (record["slug"], record["name"]) == ("mcp-servers", "MCP Servers")
    assert 'data-show-capability="mcp-servers">MCP servers</a>' not in (site / "index.html").read_text("utf-8")
