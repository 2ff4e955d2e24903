"""benchmarks/resolution_ablation.py: every mechanism it switches off can be switched off, and a pass over a run
still answers every query (a switch whose stand-in no longer fits the function it replaces fails here, not an
hour into a benchmark). Behaviour only: no figure is asserted."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from bench_loader import load_benchmark

from capidx.server import semantic

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


class _Hooks:
    """A stand-in model: a text means what the query means (cosine 1) when it speaks of lifecycles (only Hooks' does)
    or is the query."""

    def embed(self, texts: list[str], norm: bool = True) -> Any:
        alike = [("lifecycle" in text.lower() or "xyzzy" in text.lower()) for text in texts]
        return np.array([[1.0, 0.0] if hit else [0.0, 1.0] for hit in alike])


def test_meaning_in_the_order_and_the_sentence_fill_switch_off_apart(
    match: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each row removes one mechanism: switching off meaning in the order of what is offered leaves a sentence nothing
    # matches answered by meaning (Hooks, as the stand-in says); the sentence's own row answers it by spelling.
    monkeypatch.setattr(semantic, "model", lambda: _Hooks())
    sentence = "xyzzy plugh blorp quux"

    def first(label: str | None) -> str | None:
        if label is None:
            answer = BENCH.resolve.resolve_capability(BENCH.MatchIndex.from_json(match), sentence, agent="claude-code")
        else:
            with BENCH.MECHANISMS[label]():
                index = BENCH.MatchIndex.from_json(match)
                answer = BENCH.resolve.resolve_capability(index, sentence, agent="claude-code")
        assert answer.status == "unknown" and answer.candidates, label
        return answer.candidates[0].value

    assert first(None) == "hooks"
    assert first("meaning in the order of what is offered") == "hooks"
    spelled = first("a sentence nothing matches answered with what is closest in meaning, not in spelling")
    assert spelled != "hooks"
