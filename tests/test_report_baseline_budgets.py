"""`capidx report --against`: a build whose capidx.yaml loosens a budget is warned about, and `--baseline-budgets`
holds it to the baseline's, so that a pull request cannot pass the budget check by raising its own budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, write_catalog
from click.testing import CliRunner

from capidx.cli import cli


def _larger_catalog() -> dict[str, Any]:
    """The catalog with one capability's description grown: its capability document is the largest, and larger."""
    docs = documents()
    mcp = next(c for c in docs["vscode-copilot"]["capabilities"] if c["name"] == "MCP Servers")
    mcp["description"] += " Servers are configured per workspace in .vscode/mcp.json or per user profile." * 3
    return docs


def _build(root: Path, docs: dict[str, Any], config: str) -> Path:
    write_catalog(root, docs)
    (root / "capidx.yaml").write_text(config, encoding="utf-8")
    out = root / "build"
    result = CliRunner().invoke(cli, ["build", "--config", str(root / "capidx.yaml"), "--out", str(out), "-q"])
    assert result.exit_code in (0, 1), result.output  # a breaching build is still written
    return out


def _manifest(build: Path) -> dict[str, Any]:
    return json.loads((build / "manifest.json").read_text(encoding="utf-8"))


def _largest(build: Path, kind: str) -> int:
    manifest = _manifest(build)
    encoding = manifest["encodings"][0]
    return max(a["tokens"][encoding] for a in manifest["artifacts"] if a["kind"] == kind)


def _characters(build: Path, kind: str) -> int:
    return next(row["characters"] for row in _manifest(build)["overview"] if row["kind"] == kind)


LOOSE = "budgets:\n  summary: 50000\n  capability: 50000\n"


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """base: budgets its own documents just fit; head: a larger capability document, `capability` raised,
    `lookup` and the instructions' character budget of the base left out, `summary` lowered."""
    root = tmp_path_factory.mktemp("baseline-budgets")
    head = _build(root / "head", _larger_catalog(), LOOSE)
    probe = _build(root / "probe", documents(), LOOSE)
    capability, lookup = _largest(probe, "capability"), _largest(probe, "lookup")
    assert _largest(head, "capability") > capability
    characters = _characters(head, "instructions") - 1  # the head's form does not fit it: the base's is shorter
    base = _build(
        root / "base",
        documents(),
        f"budgets:\n  summary: 60000\n  capability: {capability}\n  lookup: {lookup + 1000}\n"
        f"character_budgets:\n  instructions: {characters}\n",
    )
    return {"base": base, "head": head, "root": root}


def _report(*args: str) -> Any:
    return CliRunner().invoke(cli, ["report", *args], env={"GITHUB_STEP_SUMMARY": ""})


def _json(*args: str) -> dict[str, Any]:
    result = _report(*args, "--format", "json", "--no-fail")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_budgets_a_change_raises_or_drops_are_warnings_and_its_own_budgets_still_decide(
    builds: dict[str, Path],
) -> None:
    base, head = _manifest(builds["base"]), builds["head"]
    capability = next(row["budget"] for row in base["budgets"] if row["kind"] == "capability")
    lookup = next(row["budget"] for row in base["budgets"] if row["kind"] == "lookup")
    result = _report("--build", str(head), "--against", str(builds["base"]))
    assert result.exit_code == 0, result.output  # the build's own budgets are met
    assert f"budgets.capability raised from {capability:,} to 50,000 tokens against the baseline" in result.output
    assert f"budgets.lookup: the baseline's budget of {lookup:,} tokens is not set for this build" in result.output
    assert "character_budgets.instructions raised from" in result.output
    warnings = _json("--build", str(head), "--against", str(builds["base"]))["warnings"]
    loosened = sorted(w["kind"] for w in warnings if w["reason"] == "budget-loosened")
    assert loosened == ["capability", "instructions", "lookup"]  # not summary: 60,000 -> 50,000 is tighter
    # The other way round only the summary's is looser; a budget the baseline does not set (lookup) is no warning.
    reverse = _json("--build", str(builds["base"]), "--against", str(head))["warnings"]
    assert [w["kind"] for w in reverse if w["reason"] == "budget-loosened"] == ["summary"]


def test_baseline_budgets_hold_the_build_to_the_tighter_budget(builds: dict[str, Path]) -> None:
    head, base = str(builds["head"]), str(builds["base"])
    baseline = {row["kind"]: row["budget"] for row in _manifest(builds["base"])["budgets"]}
    text = _report("--build", head, "--against", base, "--baseline-budgets")
    assert text.exit_code == 1, text.output
    assert "budgets: each the tighter of this build's and the baseline's (--baseline-budgets)" in text.output
    assert f"over the baseline's budget of {baseline['capability']:,}" in text.output
    assert "this build sets 50,000" in text.output
    assert "or raise budgets.capability on the base branch first" in text.output

    data = _json("--build", head, "--against", base, "--baseline-budgets")
    assert data["ok"] is False and data["heldToBaseline"] is True
    (breach,) = data["breaches"]
    assert breach["kind"] == "capability" and breach["budget"] == baseline["capability"]
    assert breach["heldToBaseline"] is True and breach["ownBudget"] == 50000
    assert breach["tokens"] == _largest(builds["head"], "capability")
    kinds = {row["kind"]: row for row in data["kinds"]}
    # A kind only the baseline budgets is checked against it, from the build's own documents.
    lookup = kinds["lookup"]["budget"]
    assert lookup["budget"] == baseline["lookup"] and lookup["ownBudget"] is None and lookup["ok"] is True
    assert lookup["tokens"] == _largest(builds["head"], "lookup")
    # Where the build's own budget is the tighter one, it stands.
    assert kinds["summary"]["budget"]["budget"] == 50000 and "heldToBaseline" not in kinds["summary"]["budget"]
    # The instructions' character budget: the build chose its form for its own, larger budget.
    (instructions,) = [row for row in data["overview"] if row["kind"] == "instructions"]
    assert instructions["ok"] is False and instructions["heldToBaseline"] is True
    assert (
        instructions["ownBudget"] == 2048 and instructions["budget"] == _characters(builds["head"], "instructions") - 1
    )
    assert "in the form this build chose" in text.output


def test_without_baseline_budgets_the_same_report_passes(builds: dict[str, Path]) -> None:
    data = _json("--build", str(builds["head"]), "--against", str(builds["base"]))
    assert data["ok"] is True and data["heldToBaseline"] is False and data["breaches"] == []


@pytest.mark.parametrize("output_format", ["markdown", "github", "html"])
def test_every_format_says_a_held_breach(builds: dict[str, Path], output_format: str) -> None:
    args = ("--build", str(builds["head"]), "--against", str(builds["base"]), "--baseline-budgets")
    result = _report(*args, "--format", output_format)
    assert result.exit_code == 1, result.output
    assert (
        "over the baseline&#39;s budget" in result.output
        if output_format == "html"
        else ("over the baseline's budget" in result.output)
    )
    if output_format == "markdown":
        assert "budgets: each the tighter of this build's and the baseline's" in result.output
    if output_format == "github":
        assert result.output.startswith("::error title=capidx budget breached (capability)::")


def test_a_loosened_budget_is_annotated_at_its_key(builds: dict[str, Path]) -> None:
    config = builds["root"] / "head" / "capidx.yaml"
    args = ("--build", str(builds["head"]), "--against", str(builds["base"]), "--format", "github")
    result = _report(*args, "--config", str(config))
    line = next(row for row in result.output.splitlines() if "budgets.capability raised" in row)
    assert line.startswith(f"::warning file={config},line=3,col=3,")  # `capability: 50000` in LOOSE
    # In a git work tree (a checkout), the file is named from its top, where GitHub places annotations.
    (config.parent / ".git").mkdir(exist_ok=True)
    checkout = _report(*args, "--config", str(config))
    line = next(row for row in checkout.output.splitlines() if "budgets.capability raised" in row)
    assert line.startswith("::warning file=capidx.yaml,line=3,col=3,")
    dropped = next(row for row in result.output.splitlines() if "budgets.lookup:" in row)
    assert dropped.startswith("::warning title=")  # no key to point at: the build's capidx.yaml has none


def test_baseline_budgets_need_a_baseline(builds: dict[str, Path]) -> None:
    result = _report("--build", str(builds["head"]), "--baseline-budgets")
    assert result.exit_code == 2
    assert "--against" in result.output


def test_baseline_budgets_need_the_same_primary_encoding(builds: dict[str, Path]) -> None:
    """The baseline's budgets count its primary encoding's tokens: a build that switched its primary encoding to
    another the baseline also measured is not held to them in another unit (nor passes for it)."""
    from capidx.compiler.report.manifest_reader import Manifest
    from capidx.compiler.report.model import BaselineError, build_report

    head, base = _manifest(builds["head"]), _manifest(builds["base"])
    other = {**base, "encodings": ["o200k_base", *base["encodings"]]}  # its primary: not the build's
    build, baseline = (
        Manifest(builds["head"] / "manifest.json", head),
        Manifest(builds["base"] / "manifest.json", other),
    )
    assert build_report(build, baseline).ok  # compared, the build's own budgets decide
    with pytest.raises(BaselineError, match="same primary encoding"):
        build_report(build, baseline, held=True)


def test_a_budget_the_baseline_breaches_itself_holds_the_build_to_the_baselines_size(tmp_path: Path) -> None:
    """The base branch over its own budget (the pre-commit hook checks no budget) made every pull request fail held
    to it, the one raising the budget too: such a budget holds a build to the baseline's size instead, said as a
    warning; a build larger than the baseline still breaches it."""
    probe = _build(tmp_path / "probe", documents(), LOOSE)
    fits = _largest(probe, "capability")
    base = _build(tmp_path / "base", documents(), f"budgets:\n  capability: {fits - 10}\n")  # over its own budget
    raised = _build(tmp_path / "raised", documents(), "budgets:\n  capability: 50000\n")  # the same data
    grown = _build(tmp_path / "grown", _larger_catalog(), "budgets:\n  capability: 50000\n")

    passed = _report("--build", str(raised), "--against", str(base), "--baseline-budgets")
    assert passed.exit_code == 0, passed.output
    said = f"the baseline breaches its own budget of {fits - 10:,} ({fits:,} tokens)"
    assert said in passed.output and "held to that size" in passed.output
    data = _json("--build", str(raised), "--against", str(base), "--baseline-budgets")
    assert data["ok"] is True and "baseline-breach" in {w["reason"] for w in data["warnings"]}

    failed = _report("--build", str(grown), "--against", str(base), "--baseline-budgets")
    assert failed.exit_code == 1, failed.output
    over = _largest(grown, "capability") - fits
    assert f"{over:,} over the baseline's {fits:,}, which already breaches its budget of {fits - 10:,}" in failed.output
    (breach,) = _json("--build", str(grown), "--against", str(base), "--baseline-budgets")["breaches"]
    assert breach["baselineTokens"] == fits and breach["ok"] is False


def test_a_character_budget_the_baseline_breaches_itself_holds_the_overview_to_the_baselines_size(
    tmp_path: Path,
) -> None:
    """The same for the overviews' character budgets: the base branch's instructions over its own budget, a pull
    request raising it to what the base's form takes passes; one whose form is larger than the base's breaches."""
    base = _build(tmp_path / "base", documents(), "character_budgets:\n  instructions: 100\n")
    shortest = _characters(base, "instructions")
    assert shortest > 100  # the base breaches its own budget
    raised = _build(tmp_path / "raised", documents(), f"character_budgets:\n  instructions: {shortest}\n")
    richer = _build(tmp_path / "richer", documents(), "character_budgets:\n  instructions: 2048\n")
    assert _characters(richer, "instructions") > shortest
    passed = _report("--build", str(raised), "--against", str(base), "--baseline-budgets")
    assert passed.exit_code == 0, passed.output
    failed = _report("--build", str(richer), "--against", str(base), "--baseline-budgets")
    assert failed.exit_code == 1 and "in the form this build chose" in failed.output, failed.output


def test_a_build_within_a_budget_the_baseline_breaches_is_not_said_to_be_held(tmp_path: Path) -> None:
    """A build that fits the budget its baseline breaches was warned "this build is held to that size (N)", N its own
    largest document, not the size it is held to: no warning then, and one over the budget names both sizes apart."""
    probe = _build(tmp_path / "probe", documents(), LOOSE)
    fits = _largest(probe, "capability")
    base = _build(tmp_path / "base", _larger_catalog(), f"budgets:\n  capability: {fits}\n")  # over its own budget
    within = _build(tmp_path / "within", documents(), "budgets:\n  capability: 50000\n")
    data = _json("--build", str(within), "--against", str(base), "--baseline-budgets")
    assert data["ok"] is True and "baseline-breach" not in {w["reason"] for w in data["warnings"]}, data["warnings"]
    over = _build(tmp_path / "over", documents(), "budgets:\n  capability: 50000\n")
    tight = _build(tmp_path / "tight", _larger_catalog(), f"budgets:\n  capability: {fits - 10}\n")
    (said,) = [
        w
        for w in _json("--build", str(over), "--against", str(tight), "--baseline-budgets")["warnings"]
        if w["reason"] == "baseline-breach"
    ]
    assert f"this build ({fits:,}) is held to that size" in said["message"], said
