"""The baseline scripts of benchmarks/baseline/ give right answers (a yardstick that does less work than it
claims would flatter capidx's ratios), and benchmarks/baseline_bench.py runs end to end. Behaviour only:
no figure is asserted."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from catalog_factory import AGENT_IDS, documents, write_catalog

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "benchmarks" / "baseline"
BENCH = ROOT / "benchmarks" / "baseline_bench.py"
CANONICAL_NAMES = ["Code Review", "Custom Instructions", "Hooks", "Inline Suggestions", "MCP Servers", "Subagents"]


def _script(name: str, catalog: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BASELINE / name), str(catalog), str(out)], capture_output=True, text=True, timeout=60
    )


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("baseline_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_bench"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_check_accepts_a_valid_catalog(tmp_path: Path) -> None:
    result = _script("check.py", write_catalog(tmp_path), tmp_path / "out")
    assert (result.returncode, result.stdout) == (0, "")
    assert (tmp_path / "out" / "problems.txt").read_text(encoding="utf-8") == ""


@pytest.mark.parametrize("catalog", ["bundled", "generated"])
def test_check_agrees_that_the_benchmark_catalogs_are_valid(tmp_path: Path, catalog: str) -> None:
    """The benchmark runs check.py on these; a false alarm would stop it."""
    if catalog == "bundled":
        folder = ROOT / "agents"
    else:
        folder = tmp_path / "generated"
        generator = ROOT / "benchmarks" / "gen_catalog.py"
        subprocess.run([sys.executable, str(generator), "3", "40", str(folder)], check=True)
    result = _script("check.py", folder, tmp_path / "out")
    assert (result.returncode, result.stdout) == (0, "")


def test_check_reports_every_problem_with_its_file_and_place(tmp_path: Path) -> None:
    docs = documents()
    claude = docs["claude-code"]
    del claude["capabilities"][0]["available"]
    claude["capabilities"][1]["tier"] = "gold"
    claude["capabilities"][2]["category"] = "telepathy"
    claude["capabilities"][3]["available"] = "yes"
    del claude["capabilities"][0]["sources"][1]["url"]
    claude["capabilities"][0]["useWhen"] = [{"pattern": "mcp", "confidence": 2}]  # not the list agents share
    claude["agent"]["lastUpdated"] = "yesterday"
    docs["copilot-cli"]["capabilities"][0]["aliases"] = "not a list"
    catalog = write_catalog(tmp_path, docs)
    (catalog / "vscode-copilot" / "capabilities" / "current.json").write_text("{ not json", encoding="utf-8")

    result = _script("check.py", catalog, tmp_path / "out")

    assert result.returncode == 1
    lines = result.stdout.splitlines()
    claude_file = str(catalog / "claude-code" / "capabilities" / "current.json")
    expected = [
        (claude_file, "agent.lastUpdated"),
        (claude_file, "capabilities[0]: missing available"),
        (claude_file, "capabilities[0].sources[1]: missing url"),
        (claude_file, "capabilities[0].useWhen[0].confidence"),
        (claude_file, "capabilities[1].tier: 'gold'"),
        (claude_file, "capabilities[2].category: unknown category 'telepathy'"),
        (claude_file, "capabilities[3].available"),
        ("copilot-cli", "capabilities[0].aliases: must be a list of strings"),
        ("vscode-copilot", "cannot read JSON"),
    ]
    for path, problem in expected:
        assert any(path in line and problem in line for line in lines), (path, problem, lines)
    assert len(lines) == len(expected)
    assert (tmp_path / "out" / "problems.txt").read_text(encoding="utf-8") == result.stdout


def test_matrix_has_a_row_per_canonical_name_and_a_column_per_agent(tmp_path: Path) -> None:
    result = _script("matrix.py", write_catalog(tmp_path), tmp_path / "out")
    assert result.returncode == 0, result.stderr

    rows = [line for line in (tmp_path / "out" / "matrix.md").read_text(encoding="utf-8").splitlines() if "|" in line]
    assert rows[0] == "| capability | category | " + " | ".join(AGENT_IDS) + " |"
    body = rows[2:]
    assert [row.split(" | ")[0].removeprefix("| ") for row in body] == CANONICAL_NAMES
    assert "| MCP Servers | api-integration | yes (pro) | yes (business) | yes (free) |" in body
    assert "| Subagents | agent-orchestration | yes | no | - |" in body  # recorded unavailable vs not recorded
    assert "| Code Review | code-explanation | - | yes (enterprise) | - |" in body


def test_static_api_writes_index_agents_and_capabilities(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _script("static_api.py", write_catalog(tmp_path), out)
    assert result.returncode == 0, result.stderr

    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    assert [agent["id"] for agent in index["agents"]] == list(AGENT_IDS)
    assert [entry["name"] for entry in index["capabilities"]] == CANONICAL_NAMES
    for entry in index["agents"] + index["capabilities"]:
        assert (out / entry["path"]).is_file(), entry
    source = documents()
    for agent_id in AGENT_IDS:
        assert json.loads((out / "agents" / f"{agent_id}.json").read_text(encoding="utf-8")) == source[agent_id]
    mcp = json.loads((out / "capabilities" / "mcp-servers.json").read_text(encoding="utf-8"))
    assert mcp["category"] == "api-integration"
    assert mcp["agents"] == {agent_id: source[agent_id]["capabilities"][0] for agent_id in AGENT_IDS}
    hooks = next(entry for entry in index["capabilities"] if entry["name"] == "Hooks")
    assert hooks["agents"] == ["claude-code"]


@pytest.mark.slow
def test_bench_runs_once_on_the_bundled_catalog_and_cleans_up(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "-n", "1", "--warmup", "0", "--sizes", "none", "--out-root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    for label in (
        "baseline: check + matrix + static_api",
        "capidx build, cold (fresh --out)",
        "capidx build, no-op rebuild",
        "baseline: check.py",
        "capidx validate -q",
        "cold build / the three scripts",
        "no-op rebuild / the three scripts",
        "validate -q / check.py",
        "cold build CPU per 1,000 capabilities",
        "cold build by size",
    ):
        assert label in result.stdout, label
    assert list(tmp_path.iterdir()) == []


def test_bench_stops_with_the_reason_when_capidx_cannot_run(tmp_path: Path) -> None:
    broken = tmp_path / "checkout"
    (broken / "capidx" / "compiler").mkdir(parents=True)
    (broken / "capidx" / "compiler" / "__init__.py").write_text("raise ImportError('broken on purpose')\n")
    out_root = tmp_path / "outs"
    out_root.mkdir()
    command = [sys.executable, str(BENCH), "-n", "1", "--sizes", "none", "--out-root", str(out_root)]
    result = subprocess.run([*command, "--pythonpath", str(broken)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "broken on purpose" in result.stderr
    assert list(out_root.iterdir()) == []


def test_bench_rejects_an_unknown_size(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--sizes", "1k,3k", "--out-root", str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "3k" in result.stderr


def test_a_failing_process_stops_the_measurement_with_its_message() -> None:
    bench = _load_bench()
    with pytest.raises(SystemExit, match="exited 3") as stopped:
        bench.run_process([sys.executable, "-c", "import sys; print('why', file=sys.stderr); sys.exit(3)"], ROOT, {})
    assert "why" in str(stopped.value)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the tree is read from /proc")
def test_memory_of_the_whole_process_tree_is_counted() -> None:
    """A parent that holds ~40 MiB and a child that holds ~80 MiB: the largest single process is the child,
    the tree's sum holds both."""
    child = "import time; held = bytes(range(256)) * (80 << 12); time.sleep(0.6)"
    parent = (
        "import subprocess, sys; held = bytes(range(256)) * (40 << 12); "
        f"subprocess.run([sys.executable, '-c', {child!r}])"
    )
    sample = _load_bench().run_process([sys.executable, "-c", parent], ROOT, {})
    assert sample.max_rss_kib >= 80 << 10
    assert sample.tree_rss_kib >= 120 << 10
    assert sample.cpu > 0 and sample.wall >= 0.6
