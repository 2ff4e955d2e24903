"""benchmarks/resolution_bench.py --catalog: a query file of one's own against another catalog's agents folder, through
the real server. Behaviour only: the run is the named catalog's and each answer is judged, no figure of a set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_loader import load_benchmark

ROOT = Path(__file__).resolve().parents[1]


def test_a_query_file_runs_against_the_catalog_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_benchmark("resolution_bench")
    queries = [
        {"id": "x1", "kind": "exact", "agent": "ferrule", "query": "conversation rewind",
         "expect": {"capability": "Conversation Rewind", "available": True}},
        {"id": "x2", "kind": "none", "agent": "ferrule", "query": "database schema migrations",
         "expect": {"capability": None, "available": None}},
    ]  # fmt: skip
    file = tmp_path / "mine_queries.json"
    file.write_text(json.dumps(queries), encoding="utf-8")
    agents = ROOT / "benchmarks" / "resolution" / "catalog2" / "agents"
    assert bench.main(["--catalog", str(agents), str(file), "--summary"]) == 0
    [line] = [row for row in capsys.readouterr().out.splitlines() if row.startswith("catalog ")]
    assert line.split()[1] == "2" and line.endswith("(2 / 0)")
