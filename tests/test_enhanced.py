"""The enhanced index in the build directory: relationships, triggers, semantics, snippets, injection.

docs/build-directory.md, "The enhanced index". Built from the factory catalog (with a lower similarity
threshold, so that its few capabilities have similar-to edges) and from the bundled catalog.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import AGENT_IDS, documents, run_cli, snapshot, write_catalog
from manifest_factory import artifact_bytes, build_text

from capidx.compiler.catalog import Agent
from capidx.compiler.config import InjectionLabel
from capidx.compiler.derive.enhance import MAX_SHARED_TERMS, injection_overhead
from capidx.compiler.derive.match import agent_names, terminology_key
from capidx.compiler.derive.semantics import description_stats
from capidx.compiler.emit.tokens import load_bundled
from capidx.schema.labels import measure_overhead
from capidx.schema.text import normalize, slugify

REPO = Path(__file__).resolve().parent.parent
ENCODING = load_bundled("cl100k_base")  # as the build loads it: nothing written to tiktoken's cache
LOW_THRESHOLD = "relationships:\n  similarity_threshold: 0.05\n  max_similar: 2\n"


def _count(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


def _json(built: Path, path: str) -> Any:
    return json.loads(build_text(built, path))


@pytest.fixture(scope="module")
def factory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("factory")
    write_catalog(root)
    (root / "capidx.yaml").write_text(LOW_THRESHOLD, encoding="utf-8")
    result = run_cli(["build", "--out", str(root / "build"), "-q"], cwd=root)
    assert result.exit_code == 0, result.stderr
    return root / "build"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundled") / "build"
    result = run_cli(["build", "--out", str(out), "-q"], cwd=REPO)  # the repository's capidx.yaml and agents/
    assert result.exit_code == 0, result.stderr[-3000:]
    return out


def _rows(built: Path, kind: str) -> list[dict[str, Any]]:
    return [row for row in _json(built, "manifest.json")["artifacts"] if row["kind"] == kind]


# --- relationships ----------------------------------------------------------------------------------


def test_lookup_and_compare_carry_relationships(factory: Path) -> None:
    lookup = _json(factory, "tools/lookup/claude-code/mcp-servers.json")["relationships"]
    assert lookup["sameCapability"] == ["copilot-cli", "vscode-copilot"]  # the *other* agents with it
    compare = _json(factory, "tools/compare/mcp-servers.json")["relationships"]
    assert compare["sameCapability"] == list(AGENT_IDS)  # a comparison: every agent with it
    index = {row["slug"]: row for row in _json(factory, "index/match.json")["capabilities"]}
    for slug, row in index.items():
        edges = _json(factory, f"tools/compare/{slug}.json").get("relationships", {}).get("similarTo", [])
        assert len(edges) <= 2  # relationships.max_similar from capidx.yaml
        for edge in edges:
            assert edge["score"] >= 0.05 and edge["name"] == index[edge["capability"]]["name"]
            assert 0 < len(edge["shared"]) <= MAX_SHARED_TERMS
        for agent_id in AGENT_IDS:
            document = _json(factory, f"tools/lookup/{agent_id}/{slug}.json")
            assert document.get("relationships", {}).get("similarTo", []) == edges
        # match.json keeps what the server reads of an edge: the capability and the score
        assert row["similarTo"] == [{"capability": edge["capability"], "score": edge["score"]} for edge in edges]
    assert any(row["similarTo"] for row in index.values())


def test_related_capabilities_are_shown_in_markdown(factory: Path) -> None:
    index = _json(factory, "index/match.json")["capabilities"]
    related = next(row for row in index if row["similarTo"])
    edge = _json(factory, f"tools/compare/{related['slug']}.json")["relationships"]["similarTo"][0]
    line = f"{edge['name']} {edge['score']:.2f} ({', '.join(edge['shared'])})"
    page = (factory / f"capabilities/{related['slug']}.md").read_text("utf-8")
    assert f"\nRelated: {line}" in page
    full = (factory / "full.md").read_text("utf-8")
    section = full.split(f"\n## {related['name']} (`{related['slug']}`)\n", 1)[1]
    assert f"- Related: {line}" in section.split("\n## ", 1)[0]


def test_superseded_by_comes_from_the_data(factory: Path) -> None:
    successor = "Copilot code review on GitHub.com"  # copilot-cli's Code Review record
    assert _json(factory, "tools/lookup/copilot-cli/code-review.json")["relationships"]["supersededBy"] == successor
    assert _json(factory, "tools/compare/code-review.json")["relationships"]["supersededBy"] == successor
    assert "supersededBy" not in _json(factory, "tools/lookup/claude-code/code-review.json").get("relationships", {})


def test_one_agents_successor_is_said_of_its_record_not_of_the_capability(tmp_path: Path) -> None:
    """copilot-cli's Code Review is deprecated for a successor, claude-code's is not: a comparison said the
    capability's `supersededBy` at its top, as if every agent's were superseded, and left out which record was
    deprecated (a blind first-hour test). Each entry says its own; the top says a successor every record names."""
    docs = documents()
    docs["claude-code"]["capabilities"].append(
        {
            "category": "code-explanation",
            "name": "Code Review",
            "description": "Reviews a diff on request.",
            "available": True,
            "sources": [
                {"url": "https://example.org/review", "description": "Review docs", "sourceGranularity": "dedicated"}
            ],
        }
    )
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code in (0, 1), result.stderr
    compared = _json(tmp_path / "build", "tools/compare/code-review.json")
    assert "supersededBy" not in compared.get("relationships", {})
    entries = {entry["agent"]: entry for entry in compared["agents"]}
    assert entries["copilot-cli"]["supersededBy"] == "Copilot code review on GitHub.com"
    assert entries["copilot-cli"]["deprecatedDate"] == "2025-12-01"
    assert "supersededBy" not in entries["claude-code"] and "deprecatedDate" not in entries["claude-code"]


def _related(root: Path, docs: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    write_catalog(root, docs)
    (root / "capidx.yaml").write_text(LOW_THRESHOLD, encoding="utf-8")
    result = run_cli(["build", "--out", str(root / "build"), "-q"], cwd=root)
    assert result.exit_code == 0, result.stderr
    slugs = [row["slug"] for row in _json(root / "build", "index/match.json")["capabilities"]]
    compared = {slug: _json(root / "build", f"tools/compare/{slug}.json") for slug in slugs}
    return {slug: document.get("relationships", {}).get("similarTo", []) for slug, document in compared.items()}


def test_an_agent_naming_itself_in_its_records_relates_no_capabilities_by_its_name(tmp_path: Path) -> None:
    """A team catalog whose records begin "Acme Bot runs …" showed 'Related: Hooks 0.15 (defin, run, tool, bot)': the
    agent's own name, in every record of it, related capabilities that share nothing else. A record's own agent's
    name and id are left out of what similarity compares (another agent's name in it stays)."""
    plain = documents()
    named = documents()
    for agent_id, document in named.items():
        document["agent"]["name"] = f"Zephyr {agent_id.split('-')[0].title()} Qux"
        for capability in document["capabilities"]:
            short = agent_id.replace("-", " ").title()  # 'Claude Code' for claude-code: the id as words
            capability["description"] = (
                f"{document['agent']['name']} ({agent_id}, {short}): {capability['description']}"
            )
    before, after = _related(tmp_path / "plain", plain), _related(tmp_path / "named", named)
    assert after == before
    assert any(before.values())  # the catalog has edges to compare


def test_the_reasons_of_a_relation_are_words_as_the_catalog_writes_them(bundled: Path) -> None:
    """A reader saw stems ('coordinat', 'ad' for 'add', 'rule' for 'rules'): each shared term is shown as a word both
    capabilities' records write (the form written most often)."""
    words: dict[str, set[str]] = {}
    for path in sorted((REPO / "agents").glob("*/capabilities/current.json")):
        for record in json.loads(path.read_text("utf-8"))["capabilities"]:
            texts = [record["name"], record.get("terminology") or "", record["description"]]
            texts += [*record.get("aliases", ()), *record.get("triggers", ())]
            words.setdefault(normalize(record["name"]), set()).update(normalize(" ".join(texts)).split())
    names = {row["slug"]: normalize(row["name"]) for row in _json(bundled, "index/match.json")["capabilities"]}
    table = json.loads((REPO / "agents" / "aliases.json").read_text("utf-8"))["aliases"]
    for phrase, named in table.items():  # the alias table's phrases are the capability's words too
        words[normalize(named) if normalize(named) in words else names[named]].update(normalize(phrase).split())
    shown = 0
    for slug, name in names.items():
        for edge in _json(bundled, f"tools/compare/{slug}.json").get("relationships", {}).get("similarTo", []):
            for word in edge["shared"]:
                assert word in words[name] or word in words[names[edge["capability"]]], (slug, edge)
                shown += 1
    assert shown > 50


def test_bundled_catalog_has_relationships_everywhere(bundled: Path) -> None:
    index = _json(bundled, "index/match.json")
    with_edges = [row for row in index["capabilities"] if row["similarTo"]]
    assert len(with_edges) >= len(index["capabilities"]) // 2
    for row in with_edges:
        assert len(row["similarTo"]) <= 5 and all(edge["score"] >= 0.15 for edge in row["similarTo"])
        edges = _json(bundled, f"tools/compare/{row['slug']}.json")["relationships"]["similarTo"]
        assert row["similarTo"] == [{"capability": edge["capability"], "score": edge["score"]} for edge in edges]
    full = (bundled / "full.md").read_text("utf-8")
    assert full.count("\n- Related: ") == len(with_edges)
    sample = with_edges[0]
    assert "\nRelated: " in (bundled / f"capabilities/{sample['slug']}.md").read_text("utf-8")


# --- triggers -----------------------------------------------------------------------------------------


def test_no_derived_triggers_in_the_summary(factory: Path) -> None:
    # the summary has no derived "Triggers:" line: it bought nothing on the prompt benchmark (the verbs are
    # in the capability names it lists anyway) and cost ~110 tokens of every conversation
    assert "Triggers:" not in (factory / "summary.md").read_text("utf-8")


def test_bundled_summary_keeps_headroom_and_names_every_capability(bundled: Path) -> None:
    summary = (bundled / "summary.md").read_text("utf-8")
    tokens = _rows(bundled, "summary")[0]["tokens"]["cl100k_base"]
    assert tokens <= 600, f"summary: {tokens} tokens, over the 600-token goal"
    for row in _json(bundled, "index/match.json")["capabilities"]:
        assert any(line.startswith(f"{row['name']} ") for line in summary.splitlines()), row["name"]


# --- semantics ----------------------------------------------------------------------------------------


def test_semantics_in_quality(factory: Path) -> None:
    assert "semantics" not in _json(factory, "stats.json")  # a model has no use for it
    semantics = _json(factory, "site/api/quality.json")["descriptions"]
    records = [(agent, item["description"]) for agent, doc in documents().items() for item in doc["capabilities"]]
    entropies = [description_stats(text).entropy for _, text in records]
    assert semantics["descriptions"] == len(records)
    assert semantics["minEntropy"] == min(entropies)
    assert semantics["meanEntropy"] == round(sum(entropies) / len(entropies), 3)
    lowest = semantics["lowest"]
    assert len(lowest) == 5 and [row["entropy"] for row in lowest] == sorted(entropies)[:5]
    assert lowest[0] == {"capability": "code-review", "agent": "copilot-cli", "entropy": min(entropies)}


# --- snippets -----------------------------------------------------------------------------------------


def test_a_snippet_for_every_recorded_pair_and_canonical_capability(factory: Path) -> None:
    rows = {row["uri"].removeprefix("capability-index://") + ".md": row for row in _rows(factory, "snippet")}
    expected = {
        f"tools/snippets/{agent}/{normalize(item['name']).replace(' ', '-')}.md"
        for agent, doc in documents().items()
        for item in doc["capabilities"]
    }
    slugs = {row["slug"] for row in _json(factory, "index/match.json")["capabilities"]}
    expected |= {f"tools/snippets/_all/{slug}.md" for slug in slugs}
    assert set(rows) == expected
    for path, row in rows.items():
        assert row["path"] == "tools/snippets.pack"  # every snippet is packed
        text = artifact_bytes(factory, row).decode("utf-8")
        assert row["tokens"]["cl100k_base"] == _count(text)  # measured like every artifact
        assert row["uri"] == "capability-index://" + path.removesuffix(".md")
        assert row["params"]["capability"] == path.rsplit("/", 1)[1].removesuffix(".md")
        assert row["params"].get("agent", "_all") == path.split("/")[2]
    pair = artifact_bytes(factory, rows["tools/snippets/claude-code/mcp-servers.md"]).decode("utf-8")
    assert pair.startswith("**MCP Servers** (claude-code): ✓ available, ")
    assert "Connects external tools" in pair and "Setup: `claude mcp add" in pair and "Config: `.mcp.json`" in pair
    unavailable = build_text(factory, "tools/snippets/copilot-cli/subagents.md")
    assert "✗ not available" in unavailable
    canonical = build_text(factory, "tools/snippets/_all/subagents.md")
    # It also answers for an agent with no record: it says who lacks it, which agents have no record, and whose
    # words the description is, so that none reads as the asked agent's own.
    head, described = canonical.splitlines()[:2]
    assert head == (
        "**Subagents** (agent-orchestration): available in claude-code; not available in copilot-cli; "
        "no record for vscode-copilot"
    )
    assert described.startswith("claude-code: Delegates focused tasks")


def test_a_canonical_snippet_names_the_agents_with_no_record_up_to_four_then_counts_them(tmp_path: Path) -> None:
    """'no record for the other agents' left a model asking about one agent unsure whether that agent was among them
    (a blind model test): the ids are named, up to four; past four (a catalog of many agents) they are counted."""
    docs = documents()
    for number in range(1, 5):  # four more agents, each recording only Subagents
        clone = json.loads(json.dumps(docs["copilot-cli"]))
        clone["agent"]["name"] = f"Clone {number}"
        clone["capabilities"] = [c for c in clone["capabilities"] if c["name"] == "Subagents"]
        docs[f"clone-{number}"] = clone
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code in (0, 1), result.stderr[-3000:]
    head = {
        name: build_text(tmp_path / "build", f"tools/snippets/_all/{slugify(name)}.md").splitlines()[0]
        for name in ("Subagents", "Hooks")
    }
    missing = {
        name: [agent for agent, doc in docs.items() if all(c["name"] != name for c in doc["capabilities"])]
        for name in head
    }
    assert missing["Subagents"] == ["vscode-copilot"] and len(missing["Hooks"]) == 6, missing
    assert head["Subagents"].endswith("; no record for vscode-copilot"), head
    assert head["Hooks"].endswith("; no record for the other 6 agents"), head


def test_bundled_snippets_are_short_and_within_budget(bundled: Path) -> None:
    manifest = _json(bundled, "manifest.json")
    budget = next(row for row in manifest["budgets"] if row["kind"] == "snippet")
    assert budget["ok"]
    tokens = [row["tokens"]["cl100k_base"] for row in _rows(bundled, "snippet")]
    records = sum(len(json.loads(path.read_text("utf-8"))["capabilities"]) for path in REPO.glob("agents/*/*/*.json"))
    assert len(tokens) == records + len(manifest["catalog"]["capabilities"])
    assert max(tokens) <= budget["budget"] and sum(tokens) / len(tokens) <= 100


# --- injection ----------------------------------------------------------------------------------------


def test_injection_settings_and_measured_overhead(factory: Path) -> None:
    labels = [("✓ Recommended", 0.8), ("○ Consider", 0.5), ("△ Possible", 0.0)]
    assert _json(factory, "index/match.json")["injection"] == {
        "maxTokens": 500,
        "maxSnippets": 3,
        "labels": [{"label": label, "minConfidence": confidence} for label, confidence in labels],
        "overheadTokens": measure_overhead(_count, labels),
    }


def test_injection_labels_from_capidx_yaml(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text(
        "injection:\n  max_tokens: 300\n  max_snippets: 2\n  labels:\n"
        "    - {label: 'Best match:', min_confidence: 0.9}\n    - {label: 'Maybe', min_confidence: 0.2}\n",
        encoding="utf-8",
    )
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    labels = [("Best match:", 0.9), ("Maybe", 0.2)]
    assert _json(tmp_path / "build", "index/match.json")["injection"] == {
        "maxTokens": 300,
        "maxSnippets": 2,
        "labels": [{"label": "Best match:", "minConfidence": 0.9}, {"label": "Maybe", "minConfidence": 0.2}],
        "overheadTokens": measure_overhead(_count, labels),
    }


def test_label_overhead_is_reused_from_the_previous_index_unless_labels_change() -> None:
    labels = (InjectionLabel("A", 0.5), InjectionLabel("B", 0.0))
    rows = [{"label": "A", "minConfidence": 0.5}, {"label": "B", "minConfidence": 0.0}]
    previous = {"injection": {"labels": rows, "overheadTokens": 7}}

    def refuse(texts: list[str]) -> list[int]:
        raise AssertionError("same labels: nothing to count")

    assert injection_overhead(labels, refuse, previous) == 7
    calls: list[list[str]] = []

    def count(texts: list[str]) -> list[int]:
        calls.append(texts)
        return [_count(text) for text in texts]

    changed = (InjectionLabel("A", 0.6), InjectionLabel("B", 0.0))
    assert injection_overhead(changed, count, previous) == measure_overhead(_count, changed)
    assert len(calls) == 1 and len(calls[0]) == len(set(calls[0]))  # one batch, each text once


# --- edge cases and failures ---------------------------------------------------------------------------


def test_a_capability_without_terms_builds_with_no_edges_and_zero_entropy(tmp_path: Path) -> None:
    docs = documents()
    docs["claude-code"]["capabilities"].append(
        {"category": "customization", "name": "All Of It", "description": "It is what it is, and it was.",
         "available": True}
    )  # fmt: skip
    write_catalog(tmp_path, docs)
    (tmp_path / "capidx.yaml").write_text(LOW_THRESHOLD, encoding="utf-8")
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    index = _json(tmp_path / "build", "index/match.json")
    entry = next(row for row in index["capabilities"] if row["slug"] == "all-of-it")
    assert entry["similarTo"] == [] and entry["terms"] == {}
    assert all(edge["capability"] != "all-of-it" for row in index["capabilities"] for edge in row["similarTo"])
    assert "relationships" not in _json(tmp_path / "build", "tools/lookup/claude-code/all-of-it.json")  # all empty
    assert build_text(tmp_path / "build", "tools/snippets/claude-code/all-of-it.md")


def test_a_bad_use_when_regex_fails_the_build(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path).exit_code == 0
    before = snapshot(tmp_path / "build")
    docs = documents()
    docs["claude-code"]["capabilities"][0]["useWhen"] = [{"pattern": "(unclosed", "confidence": 0.5}]
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 1
    assert "invalid regular expression" in result.stderr
    assert snapshot(tmp_path / "build") == before


def test_a_similarity_threshold_of_zero_is_a_usage_error(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("relationships:\n  similarity_threshold: 0\n", encoding="utf-8")
    result = run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert result.exit_code == 2
    # Rejected by the config schema, with the position in capidx.yaml.
    assert "capidx.yaml:2:25: $.relationships.similarity_threshold: 0 is less than or equal to the minimum" in (
        result.stderr
    )


def test_relationship_settings_are_build_inputs(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    build = ["build", "--out", str(tmp_path / "build")]
    assert run_cli(build, cwd=tmp_path).exit_code == 0
    assert "up to date" in run_cli(build, cwd=tmp_path).stdout
    (tmp_path / "capidx.yaml").write_text(LOW_THRESHOLD, encoding="utf-8")
    result = run_cli(build, cwd=tmp_path)
    assert result.exit_code == 0 and "up to date" not in result.stdout
    assert any(row["similarTo"] for row in _json(tmp_path / "build", "index/match.json")["capabilities"])


def test_builds_are_byte_identical(factory: Path, tmp_path: Path) -> None:
    root = factory.parent
    again = run_cli(["build", "--out", str(tmp_path / "again"), "-q"], cwd=root)
    assert again.exit_code == 0, again.stderr
    assert snapshot(tmp_path / "again") == snapshot(factory)


# --- agent names and terminology (match.json) ------------------------------------------------------------

AGENTS = (
    Agent("claude-code", "Claude Code", "Anthropic", "1", "2026-01-01", ()),
    Agent("copilot-cli", "GitHub Copilot CLI", "GitHub", "1", "2026-01-01", ()),
    Agent("gemini-cli", "Gemini CLI", "Google", "1", "2026-01-01", ()),
    Agent("vscode-copilot", "GitHub Copilot in Visual Studio Code", "GitHub", "1", "2026-01-01", ()),
)


@pytest.mark.parametrize(
    ("spelling", "ids"),
    [
        ("github copilot", ["copilot-cli", "vscode-copilot"]),  # a prefix of both names: ambiguous
        ("copilot", ["copilot-cli", "vscode-copilot"]),
        ("copilot in vs code", ["vscode-copilot"]),
        ("github copilot in vs code", ["vscode-copilot"]),
        ("vs code copilot", ["vscode-copilot"]),
        ("copilot vscode", ["vscode-copilot"]),
        ("copilot in vscode", ["vscode-copilot"]),
        ("vs code", ["vscode-copilot"]),
        ("google gemini cli", ["gemini-cli"]),  # vendor + name
        ("google gemini", ["gemini-cli"]),
        ("anthropic claude", ["claude-code"]),
        ("github copilot cli", ["copilot-cli"]),
    ],
)
def test_agent_names(spelling: str, ids: list[str]) -> None:
    assert agent_names(AGENTS)[spelling] == ids


def test_generic_words_name_no_agent() -> None:
    names = agent_names(AGENTS)
    assert not {"code", "cli", "in", "studio", "github copilot in"} & set(names)


def test_no_nickname_cuts_a_product_name() -> None:
    """'Visual Studio' is another product than Visual Studio Code: a run of the name that cut it was a nickname of
    VS Code Copilot, which the server then read silently (a blind model test)."""
    names = agent_names(AGENTS)
    cut = {"visual", "visual studio", "visualstudio", "studio code", "studiocode", "copilot in visual studio"}
    assert not cut & set(names)
    assert names["visual studio code"] == names["copilot visual studio code"] == ["vscode-copilot"]


@pytest.mark.parametrize(
    ("key", "kept"),
    [
        ("commands", False),  # Gemini's "@ commands": one generic word
        ("mode", False),
        ("files", False),
        ("settings", False),
        ("tools", False),
        ("p", False),
        ("the", False),
        ("extensions", True),  # one distinctive word: Gemini's name for plugins
        ("codebase", True),
        ("plan mode", True),  # several words: always specific enough
        ("custom commands toml", True),
    ],
)
def test_terminology_keys(key: str, kept: bool) -> None:
    assert terminology_key(key) is kept


def test_bundled_terminology_keeps_distinctive_wording_only(bundled: Path) -> None:
    terminology = _json(bundled, "index/match.json")["terminology"]
    assert "commands" not in terminology  # would send "commands" to File References
    assert terminology["extensions"] == [{"agent": "gemini-cli", "capability": "plugins"}]
    assert all(terminology_key(key) for key in terminology)


# --- build output ---------------------------------------------------------------------------------------


@pytest.fixture
def noisy(tmp_path: Path) -> Path:
    """The factory catalog with many unverified sources in one file (warnings the reporter groups)."""
    docs = documents()
    docs["claude-code"]["capabilities"][3]["sources"] = [
        {"url": f"https://example.com/hooks/{n}", "description": "Hooks page", "sourceGranularity": "section"}
        for n in range(6)
    ]
    write_catalog(tmp_path, docs)
    return tmp_path


def test_build_groups_repetitive_warnings(noisy: Path) -> None:
    result = run_cli(["build", "--out", str(noisy / "build")], cwd=noisy)
    assert result.exit_code == 0, result.stderr
    assert "7 sources never verified" in result.stderr  # 6 added + the factory's own
    assert "source never verified" not in result.stderr  # not one line per source
    assert "4 files valid" in result.stderr


def test_build_quiet_shows_no_warnings(noisy: Path) -> None:
    result = run_cli(["build", "--out", str(noisy / "build"), "-q"], cwd=noisy)
    assert result.exit_code == 0
    assert result.stderr == "" and result.stdout == ""


def test_build_quiet_still_shows_errors(noisy: Path) -> None:
    docs = documents()
    del docs["claude-code"]["capabilities"][0]["available"]
    write_catalog(noisy, docs)
    result = run_cli(["build", "--out", str(noisy / "build"), "-q"], cwd=noisy)
    assert result.exit_code == 1
    assert "available" in result.stderr and "warning" not in result.stderr


def test_build_verbose_lists_every_warning(noisy: Path) -> None:
    result = run_cli(["build", "--out", str(noisy / "build"), "-v"], cwd=noisy)
    assert result.exit_code == 0
    assert result.stderr.count("source never verified") == 7


# --- validate: vague descriptions ------------------------------------------------------------------------

LOW = "Plugins plugins plugins."
RICH = "Connects external tools and data sources to the agent through the Model Context Protocol."
SOLO_SOURCE = {"url": "https://docs.acme.dev/plugins", "description": "Plugins guide", "sourceGranularity": "section"}


def _one_capability_catalog(root: Path, description: str) -> None:
    document = {
        "agent": {"name": "Solo", "vendor": "Acme", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
        "capabilities": [
            {
                "category": "customization",
                "name": "Plugins",
                "description": description,
                "available": True,
                "sources": [SOLO_SOURCE | {"verifiedDate": date.today().isoformat()}],  # no no-sources warning
            }
        ],
    }
    write_catalog(root, {"solo": document}, aliases=None)


@pytest.mark.parametrize(
    ("description", "config", "plain", "strict"),
    [
        (LOW, "", 0, 1),  # a warning, which --strict makes an error
        (RICH, "", 0, 0),
        (LOW, "lint:\n  min_description_entropy: 0\n", 0, 0),  # 0 turns the rule off
        (RICH, "lint:\n  min_description_entropy: 10\n", 0, 1),  # the threshold is configurable
    ],
)
def test_vague_descriptions_fail_only_under_strict(
    tmp_path: Path, description: str, config: str, plain: int, strict: int
) -> None:
    _one_capability_catalog(tmp_path, description)
    if config:
        (tmp_path / "capidx.yaml").write_text(config, encoding="utf-8")
    lenient = run_cli(["validate"], cwd=tmp_path)
    assert lenient.exit_code == plain, lenient.output
    strict_run = run_cli(["validate", "--strict"], cwd=tmp_path)
    assert strict_run.exit_code == strict, strict_run.output
    assert ("too vague" in strict_run.output) == bool(strict)
    build = run_cli(["build", "--strict", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path)
    assert build.exit_code == strict


def test_lint_and_quality_share_one_entropy(tmp_path: Path) -> None:
    _one_capability_catalog(tmp_path, "Runs hooks, runs hooks, then stops.")
    result = run_cli(["validate"], cwd=tmp_path)
    bits = description_stats("Runs hooks, runs hooks, then stops.").entropy
    said = f"description too vague to be found by its words: 3 distinct words a question can match ({bits:.1f} bits"
    assert said in result.output
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path).exit_code == 0
    assert _json(tmp_path / "build", "site/api/quality.json")["descriptions"]["minEntropy"] == bits


def test_a_vague_description_says_much_repeated_only_when_repetition_is_the_cause(tmp_path: Path) -> None:
    """'2 distinct words' alone read as 'write more words' for a description of many words that repeats two: it
    says 'much repeated' when it has more than twice as many words as distinct ones, and not otherwise."""
    for description, repeated in (("Runs hooks, runs hooks, runs hooks, runs hooks.", True), ("Reviews code.", False)):
        _one_capability_catalog(tmp_path, description)
        output = run_cli(["validate"], cwd=tmp_path).output
        assert "2 distinct words a question can match" in output, output
        assert ("2 distinct words a question can match, much repeated (" in output) == repeated, output


def test_manifest_hashes_cover_the_new_artifacts(factory: Path) -> None:
    for row in _rows(factory, "snippet") + _rows(factory, "index"):
        assert hashlib.sha256(artifact_bytes(factory, row)).hexdigest() == row["sha256"]


# --- shared vocabulary: printed once only when records share it ------------------------------------------------


def _agent_document(name: str, aliases: list[str]) -> dict[str, object]:
    record = {"category": "api-integration", "name": "MCP Servers", "available": True, "aliases": aliases}
    record["description"] = "Connects external tools and data sources to the agent through the Model Context Protocol."
    return {
        "agent": {"name": name, "vendor": "Acme", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
        "capabilities": [record],
    }


@pytest.mark.parametrize(
    ("given", "shared"),
    [
        ({"a": ["tool servers", ".mcp.json"], "b": ["mcp-config.json"], "c": ["mcp.json"]}, None),  # all differ
        ({"a": ["tool servers"], "b": ["tool servers"], "c": [".mcp.json"]}, "tool servers"),  # two of three
        ({"a": [".mcp.json"]}, ".mcp.json"),  # one record: its own is the capability's
    ],
)
def test_aliases_are_printed_as_shared_only_when_records_share_them(
    tmp_path: Path, given: dict[str, list[str]], shared: str | None
) -> None:
    """A capability's document (and full.md, from the same macro) prints once per capability the aliases two or
    more records give (or a lone record's); an alias list only one of several records gives stays under that
    record, not credited to agents that never gave it."""
    write_catalog(tmp_path, {agent: _agent_document(agent.upper(), aliases) for agent, aliases in given.items()}, None)
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path).exit_code == 0
    document = (tmp_path / "build" / "capabilities" / "mcp-servers.md").read_text("utf-8")
    head = document.split("\n## A (`a`)", 1)[0]
    capability_line = [line for line in head.splitlines() if line.startswith("- Aliases:")]
    assert capability_line == ([f"- Aliases: {shared}"] if shared else [])
    for agent, aliases in given.items():
        section = document.split(f"(`{agent}`)\n", 1)[1].split("\n## ", 1)[0]
        own = [line for line in section.splitlines() if line.startswith("- Aliases:")]
        assert own == ([] if "; ".join(aliases) == shared else [f"- Aliases: {'; '.join(aliases)}"]), agent


def test_alias_table_phrases_a_record_gives_stay_that_records(tmp_path: Path) -> None:
    """The alias table's phrases are printed with the capability's shared vocabulary only where no record gives
    them: a phrase one agent's record gives ('MCP.json') is that agent's, shown under its record."""
    table = {"aliases": {"mcp.json": "MCP Servers", "connect tools": "MCP Servers"}}
    given = {"a": ["tool servers", "MCP.json"], "b": ["mcp-config.json"]}
    write_catalog(tmp_path, {agent: _agent_document(agent.upper(), aliases) for agent, aliases in given.items()}, table)
    assert run_cli(["build", "--out", str(tmp_path / "build"), "-q"], cwd=tmp_path).exit_code == 0
    document = (tmp_path / "build" / "capabilities" / "mcp-servers.md").read_text("utf-8")
    head, records = document.split("\n## A (`a`)", 1)
    assert [line for line in head.splitlines() if line.startswith("- Aliases:")] == ["- Aliases: connect tools"]
    assert "- Aliases: tool servers; MCP.json" in records
