"""The bundled catalog (agents/) with the root capidx.yaml: budgets hold, the summary is complete and
small, full.md is lossless and much smaller than its input. Built into a temporary directory."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import run_cli

from capidx.compiler.emit.tokens import load_bundled

REPO = Path(__file__).resolve().parent.parent
SUMMARY_LIMIT = 600


def _bundled_inputs() -> list[Path]:
    return sorted((REPO / "agents").glob("*/capabilities/current.json")) + sorted((REPO / "agents").glob("aliases.*"))


pytestmark = pytest.mark.skipif(not _bundled_inputs(), reason="the bundled catalog is not there yet")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundled") / "build"
    result = run_cli(["build", "--out", str(out), "-q"], cwd=REPO)  # the repo's own capidx.yaml and agents/
    assert result.exit_code == 0, result.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def manifest(built: Path) -> dict[str, Any]:
    return json.loads((built / "manifest.json").read_text("utf-8"))


def _tokens(manifest: dict[str, Any], kind: str) -> int:
    return next(row["tokens"]["cl100k_base"] for row in manifest["artifacts"] if row["kind"] == kind)


def test_every_budget_holds(manifest: dict[str, Any]) -> None:
    assert manifest["budgets"], "capidx.yaml sets budgets"
    assert all(row["ok"] for row in manifest["budgets"]), manifest["budgets"]
    assert {row["kind"]: row["budget"] for row in manifest["budgets"]}["summary"] == SUMMARY_LIMIT


def test_stats_is_counts_a_model_can_use_in_600_tokens(built: Path, manifest: dict[str, Any]) -> None:
    assert _tokens(manifest, "stats") <= 600
    catalog = json.loads((built / "stats.json").read_text("utf-8"))["catalog"]
    assert set(catalog["byAgent"]) == set(manifest["catalog"]["agents"])
    assert {"byCategory", "byTier", "sources"} <= set(catalog) and "stale" in catalog["sources"]


def test_summary_is_small_and_names_every_capability(built: Path, manifest: dict[str, Any]) -> None:
    assert _tokens(manifest, "summary") <= SUMMARY_LIMIT
    summary = (built / "summary.md").read_text("utf-8")
    names = {row["name"] for row in json.loads((built / "index" / "match.json").read_text("utf-8"))["capabilities"]}
    assert len(names) == len(manifest["catalog"]["capabilities"])
    lines = summary.splitlines()
    for name in names:
        assert any(line.startswith(f"{name} ") for line in lines), name
    for agent in manifest["catalog"]["agents"]:
        assert agent in summary


def test_full_is_at_most_55_percent_of_the_input(manifest: dict[str, Any]) -> None:

    encoding = load_bundled("cl100k_base")
    inputs = sum(len(encoding.encode_ordinary(path.read_text("utf-8"))) for path in _bundled_inputs())
    full = _tokens(manifest, "full")
    assert full <= 0.55 * inputs, f"full.md: {full:,} tokens = {full / inputs:.1%} of {inputs:,}"


def test_full_is_lossless(built: Path) -> None:
    full = (built / "full.md").read_text("utf-8")
    missing = []
    for path in _bundled_inputs():
        if path.suffix != ".json":
            continue
        for key, value in _scalars(json.loads(path.read_text("utf-8"))):
            # an alias-table phrase matches in any case: shown once, as a record spells it ('CLAUDE.md', not also
            # 'claude.md')
            shown = full.casefold() if key == "alias" else full
            text = str(value).casefold() if key == "alias" else str(value)
            if (key, value) == ("status", "unknown"):  # says no more than 'unverified' or a date: not shown
                continue
            if not isinstance(value, bool) and value is not None and text not in shown:
                missing.append(f"{path.relative_to(REPO)}: {key}={value!r}")
    assert not missing, "\n".join(missing[:20])


def _scalars(value: Any, key: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        pairs = [pair for k, v in value.items() if k not in {"$schema", "$comment"} for pair in _scalars(v, k)]
        if key == "aliases":  # the alias table: phrases are keys
            pairs += [("alias", phrase) for phrase in value]
        return pairs
    if isinstance(value, list):
        return [pair for item in value for pair in _scalars(item, key)]
    return [(key, value)]


def test_no_list_item_ends_in_doubled_punctuation(built: Path) -> None:
    """List items that are sentences are joined with a space, not "; " after their full stop (issue 29)."""
    doubled = []
    for path in sorted(built.rglob("*")):
        if path.is_file() and path.suffix in {".md", ".txt", ".html", ".json"}:
            text = path.read_text("utf-8")
            name = path.relative_to(built)
            doubled += [f"{name}: {text[m.start() - 40 : m.end()]!r}" for m in re.finditer(r"\.;", text)]
    assert not doubled, doubled[:5]


def test_an_agents_document_leaves_the_usewhen_patterns_to_the_capability_documents(built: Path) -> None:
    """A model reads an agent's document whole: its useWhen regular expressions (a quarter of it, saying no more
    than the trigger phrases) are left out there, and shown in the capability documents and full.md (lossless)."""
    patterns = {
        rule["pattern"]
        for path in _bundled_inputs()
        if path.name == "current.json"
        for capability in json.loads(path.read_text("utf-8"))["capabilities"]
        for rule in capability.get("useWhen", ())
    }
    assert patterns
    agents = "".join(path.read_text("utf-8") for path in (built / "agents").glob("*.md"))
    capabilities = "".join(path.read_text("utf-8") for path in (built / "capabilities").glob("*.md"))
    full = (built / "full.md").read_text("utf-8")
    assert "Use when" not in agents and "Triggers:" in agents
    assert all(f"`{pattern}`" in capabilities and f"`{pattern}`" in full for pattern in patterns)
