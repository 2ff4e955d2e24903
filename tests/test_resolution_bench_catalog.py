"""benchmarks/resolution_bench.py --catalog: a query file of one's own against another catalog's agents folder, through
the real server. Behaviour only: the run is the named catalog's and each answer is judged, no figure of a set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_loader import load_benchmark

ROOT = Path(__file__).resolve().parents[1]


AGENTS = ROOT / "benchmarks" / "resolution" / "catalog2" / "agents"


def _query_file(tmp_path: Path) -> Path:
    queries = [
        {"id": "x1", "kind": "exact", "agent": "ferrule", "query": "conversation rewind",
         "expect": {"capability": "Conversation Rewind", "available": True}},
        {"id": "x2", "kind": "none", "agent": "ferrule", "query": "database schema migrations",
         "expect": {"capability": None, "available": None}},
    ]  # fmt: skip
    file = tmp_path / "mine_queries.json"
    file.write_text(json.dumps(queries), encoding="utf-8")
    return file


def test_a_query_file_runs_against_the_catalog_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_benchmark("resolution_bench")
    assert bench.main(["--catalog", str(AGENTS), str(_query_file(tmp_path)), "--summary"]) == 0
    [line] = [row for row in capsys.readouterr().out.splitlines() if row.startswith("catalog ")]
    assert line.split()[1] == "2" and line.endswith("(2 / 0)")


def test_the_ablation_runs_a_query_file_against_the_catalog_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/benchmarks.md gives an ablation on the public catalog's query set: the script that makes it takes the
    same --catalog."""
    ablation = load_benchmark("resolution_ablation")
    assert ablation.main(["--catalog", str(AGENTS), str(_query_file(tmp_path))]) == 0
    assert "1 runs, 2 queries; as it is: one call 2, right 2, wrong 0" in capsys.readouterr().out


@pytest.mark.parametrize("script", ["resolution_bench", "resolution_ablation"])
def test_a_catalog_and_named_runs_are_not_asked_for_together(tmp_path: Path, script: str) -> None:
    """--catalog replaces the runs: a --runs given with it was dropped without a word."""
    with pytest.raises(SystemExit) as refused:
        load_benchmark(script).main(["--runs", "catalog2", "--catalog", str(AGENTS), str(_query_file(tmp_path))])
    assert refused.value.code == 2


@pytest.mark.parametrize("script", ["resolution_bench", "resolution_ablation"])
@pytest.mark.parametrize("missing", ["agents", "queries"])
def test_a_catalog_or_query_file_not_there_is_said_before_any_build(
    tmp_path: Path, script: str, missing: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped --catalog path ended in a traceback from deep inside the run; it is a usage error, as argparse's."""
    agents = tmp_path / "no-agents" if missing == "agents" else AGENTS
    queries = tmp_path / "no-queries.json" if missing == "queries" else _query_file(tmp_path)
    with pytest.raises(SystemExit) as refused:
        load_benchmark(script).main(["--catalog", str(agents), str(queries)])
    said = capsys.readouterr().err
    assert refused.value.code == 2 and "--catalog: no " in said and str(tmp_path) in said
