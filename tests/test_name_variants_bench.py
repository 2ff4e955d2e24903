"""benchmarks/name_variants.py generates the variants it says it does and runs end to end on any catalog.
Behaviour only: no figure is asserted."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from bench_loader import load_benchmark
from catalog_factory import write_catalog

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    return load_benchmark("name_variants")


def test_every_kind_of_variant_is_made_from_the_name_alone() -> None:
    bench = _load()
    names = ["multi-file editing", "inline editing", "hooks"]
    made = list(bench.variants("Multi-file Editing", "multi-file-editing", names))
    assert {kind for kind, _ in made} == {
        "exact",
        "slug",
        "spacing",
        "number",
        "partial",
        "typo",
        "two typos",
        "asked about",
    }
    queries = {query for _, query in made}
    assert {"MULTI-FILE EDITING", "multi-file-editing", "Multi file Editing", "Multi-file Editings"} <= queries
    assert {"Mlti-file Editing", "Mluti-file Editing", "Muulti-file Editing"} <= queries  # in the longest word
    assert "Multifile Ediing" in queries  # two typos: a letter dropped in each of two words
    assert "the multi-file editing feature" in queries
    # 'Editing' is also a word of 'inline editing': not a partial name of one capability
    assert {query for kind, query in made if kind == "partial"} == {"Multi-file"}


def test_it_measures_another_catalog(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load()
    assert bench.main(["--agents", str(write_catalog(tmp_path / "agents")), "--failures", "5"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("| catalog | exact |") and len(table) == 3
    one_call, total = table[2].split(" | ")[-2].split(" / ")
    assert 0 < int(one_call) <= int(total)
