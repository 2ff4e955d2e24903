"""benchmarks/resolution_ablation.py: every mechanism it switches off can be switched off, and a pass over a run
still answers every query (a switch whose stand-in no longer fits the function it replaces fails here, not an
hour into a benchmark). Behaviour only: no figure is asserted."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from bench_loader import load_benchmark

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    return load_benchmark("resolution_ablation")


BENCH = _load()
QUERIES = ("hoks", "mcp srvers", "turn on subagents", "/compact", "docs", "the hooks feature", "security", "xyzzy")


@pytest.fixture(scope="module")
def match(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("ablation") / "build"
    BENCH.build(ROOT / "agents", False, out)
    return BENCH.json.loads((out / "index" / "match.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("label", list(BENCH.MECHANISMS))
def test_each_mechanism_switches_off_and_the_resolver_still_answers(match: dict, label: str) -> None:
    with BENCH.MECHANISMS[label]():
        index = BENCH.MatchIndex.from_json(match)  # some switches edit the index as it is read
        for query in QUERIES:  # each reaches the tiers a switch replaces: a stand-in that no longer fits raises
            BENCH.resolve.resolve_capability(index, query, agent="claude-code")
        exact = BENCH.resolve.resolve_capability(index, "Hooks", agent="claude-code")
    assert (exact.value, exact.resolved_by) == ("hooks", "exact")  # no switch touches the exact tier
