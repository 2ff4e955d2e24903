"""`capidx report` on real builds: a small catalog built once, changed (a capability added, one removed,
a description rewritten) and built again, so the report's figures and changes are checked against what
`capidx build` actually writes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, write_catalog
from click.testing import CliRunner
from test_report import check_html

from capidx.cli import cli
from capidx.compiler.report.formats import MARKER

FORMATS = ("text", "markdown", "json", "github", "html")
BUDGETS = "budgets:\n  summary: 50000\n  agent: 50000\n  capability: 50000\n  lookup: 50000\n"


def _build(root: Path, docs: dict[str, Any], budgets: str = BUDGETS) -> Path:
    write_catalog(root, docs)
    (root / "capidx.yaml").write_text(budgets, encoding="utf-8")
    out = root / "build"
    result = CliRunner().invoke(cli, ["build", "--config", str(root / "capidx.yaml"), "--out", str(out), "-q"])
    # A breaching build exits 1 and is still written; anything else must succeed.
    assert result.exit_code in (0, 1), result.output
    assert (out / "manifest.json").is_file(), result.output
    return out


def _changed_catalog() -> dict[str, Any]:
    docs = documents()
    claude = docs["claude-code"]["capabilities"]
    claude[:] = [capability for capability in claude if capability["name"] != "Hooks"]  # only Claude had it
    claude.append(
        {
            "category": "context-awareness",
            "name": "Checkpoints",
            "description": "Saves the workspace before each edit so a session can rewind to any earlier step.",
            "available": True,
        }
    )
    vscode_mcp = next(c for c in docs["vscode-copilot"]["capabilities"] if c["name"] == "MCP Servers")
    vscode_mcp["description"] += " Servers are configured per workspace in .vscode/mcp.json or per user profile."
    return docs


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report-builds")
    return {
        "base": _build(root / "base", documents()),
        "head": _build(root / "head", _changed_catalog()),
        "breached": _build(root / "breached", documents(), "budgets:\n  capability: 50\n  summary: 50000\n"),
    }


def _report(*args: str) -> Any:
    return CliRunner().invoke(cli, ["report", *args], env={"GITHUB_STEP_SUMMARY": ""})


def _manifest(build: Path) -> dict[str, Any]:
    return json.loads((build / "manifest.json").read_text(encoding="utf-8"))


def _json(*args: str) -> dict[str, Any]:
    result = _report(*args, "--format", "json", "--no-fail")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("output_format", FORMATS)
def test_every_format_reports_a_real_build(builds: dict[str, Path], output_format: str) -> None:
    result = _report("--build", str(builds["head"]), "--against", str(builds["base"]), "--format", output_format)
    assert result.exit_code == 0, result.output
    if output_format == "html":
        check_html(result.output)
    if output_format == "markdown":
        assert result.output.startswith(MARKER + "\n## capidx token report\n")


def test_figures_match_the_manifest(builds: dict[str, Path]) -> None:
    manifest = _manifest(builds["head"])
    encoding = manifest["encodings"][0]
    data = _json("--build", str(builds["head"]))
    kinds = {row["kind"]: row for row in data["kinds"]}
    assert set(kinds) >= {artifact["kind"] for artifact in manifest["artifacts"]}
    for kind, row in kinds.items():
        of_kind = [a for a in manifest["artifacts"] if a["kind"] == kind]
        assert row["documents"] == len(of_kind)
        assert row["tokens"][encoding] == sum(a["tokens"][encoding] for a in of_kind)
        assert row["largest"][encoding] == max((a["tokens"][encoding] for a in of_kind), default=0)
    assert data["totals"]["tokens"][encoding] == sum(a["tokens"][encoding] for a in manifest["artifacts"])
    budgets = {row["kind"]: row for row in manifest["budgets"]}
    assert {kind: kinds[kind]["budget"]["tokens"] for kind in budgets} == {k: b["tokens"] for k, b in budgets.items()}
    agents = sorted((a for a in manifest["artifacts"] if a["kind"] == "agent"), key=lambda a: -a["tokens"][encoding])
    assert [doc["uri"] for doc in data["largest"]["agent"]] == [a["uri"] for a in agents[:3]]


def test_changes_against_the_base_build(builds: dict[str, Path]) -> None:
    data = _json("--build", str(builds["head"]), "--against", str(builds["base"]))
    prefix = data["build"]["uriPrefix"]
    changes = {
        name: {entry["uri"].removeprefix(prefix) for entry in entries} for name, entries in data["changes"].items()
    }
    assert {"capabilities/checkpoints", "tools/compare/checkpoints", "tools/lookup/claude-code/checkpoints"} <= (
        changes["added"]
    )
    assert {"capabilities/hooks", "tools/compare/hooks", "tools/lookup/claude-code/hooks"} <= changes["removed"]
    assert {"agents/vscode-copilot", "agents/claude-code", "full"} <= changes["changed"]
    # Exactly the artifacts whose sha256 differs, and nothing else.
    before = {a["uri"]: a["sha256"] for a in _manifest(builds["base"])["artifacts"]}
    after = {a["uri"]: a["sha256"] for a in _manifest(builds["head"])["artifacts"]}
    differ = {uri for uri in before.keys() & after.keys() if before[uri] != after[uri]}
    assert {prefix + uri for uri in changes["changed"]} == differ
    capability = next(row for row in data["kinds"] if row["kind"] == "capability")
    assert capability["delta"]["documents"]["tokens"] == 0  # one added, one removed


def test_the_text_report_names_the_changes(builds: dict[str, Path]) -> None:
    result = _report("--build", str(builds["head"]), "--against", str(builds["base"]))
    assert "Changes against the baseline:" in result.output
    assert "+ capabilities/checkpoints" in result.output
    assert "\u2212 capabilities/hooks" in result.output
    assert "~ agents/vscode-copilot" in result.output


def test_a_real_breach_fails_unless_no_fail(builds: dict[str, Path]) -> None:
    breached = str(builds["breached"])
    assert _report("--build", breached).exit_code == 1
    assert _report("--build", breached, "--no-fail").exit_code == 0
    github = _report("--build", breached, "--format", "github")
    assert github.exit_code == 1
    assert github.output.startswith("::error title=capidx budget breached (capability)::capability: capabilities/")
    data = _json("--build", breached)
    assert data["ok"] is False and [b["kind"] for b in data["breaches"]] == ["capability"]
    assert data["kinds"][0]["kind"] == "capability" and data["kinds"][0]["status"] == "breach"


def test_every_format_is_registered() -> None:
    from capidx.compiler import cli as cli_report
    from capidx.compiler.report import run as report_run

    assert set(cli_report.REPORT_FORMATS) == set(report_run.RENDERER_BY_NAME)


def test_the_build_table_says_each_status_as_the_report_does(tmp_path: Path) -> None:
    """The quick start prints the build's table and then the report's: one kind must not be 'OVER' in one and
    'BREACH' in the other, nor 'ok' in one and 'near' in the other."""
    root = tmp_path / "project"
    write_catalog(root, documents())
    config = root / "capidx.yaml"
    config.write_text("budgets:\n  capability: 50\n  summary: 50000\n", encoding="utf-8")
    CliRunner().invoke(cli, ["build", "--config", str(config), "--out", str(root / "build")])
    summary = next(k for k in _json("--build", str(root / "build"))["kinds"] if k["kind"] == "summary")
    near = summary["largest"]["cl100k_base"] * 100 // 95  # the summary at 95 % of its budget: near
    config.write_text(f"budgets:\n  capability: 50\n  summary: {near}\n", encoding="utf-8")
    built = CliRunner().invoke(cli, ["build", "--config", str(config), "--out", str(root / "build")])
    report = _json("--build", str(root / "build"))
    said = {line.split()[0]: line.split()[-1] for line in built.output.splitlines() if line[:1].isalpha()}
    for kind in report["kinds"]:
        if kind["status"] != "unbudgeted":
            assert said[kind["kind"]] == {"breach": "BREACH", "near": "near", "ok": "ok"}[kind["status"]]
    assert {said["capability"], said["summary"]} == {"BREACH", "near"}


def test_an_integer_setting_written_with_a_fraction_of_zero_is_a_whole_number(tmp_path: Path) -> None:
    """JSON Schema counts 500.0 an integer, so capidx.yaml accepts it; it was carried on as a float and read
    `50,000.0` in the manifest, the build's output and the report."""
    root = tmp_path / "project"
    write_catalog(root, documents())
    config = root / "capidx.yaml"
    config.write_text("budgets:\n  summary: 50000.0\ncharacter_budgets:\n  instructions: 2048.0\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["validate", "-q", "--config", str(config)]).exit_code == 0
    built = CliRunner().invoke(cli, ["build", "--config", str(config), "--out", str(root / "build")])
    assert built.exit_code == 0, built.output
    assert "50,000" in built.output and "of 2,048 characters" in built.output and "50,000.0" not in built.output

    manifest = _manifest(root / "build")
    [budget] = manifest["budgets"]
    instructions = next(row for row in manifest["overview"] if row["kind"] == "instructions")
    assert type(budget["budget"]) is int and type(instructions["budget"]) is int
    assert '"budget":50000,' in (root / "build" / "manifest.json").read_text(encoding="utf-8")
    text = _report("--build", str(root / "build")).output
    assert "50,000 " in text and "50,000.0" not in text and "2,048.0" not in text


def test_a_breach_says_what_to_do_in_the_build_and_the_report_alike(tmp_path: Path) -> None:
    """`capidx build` over budget named the breach and nothing to do about it; the build and the report now end it
    with one remedy in one wording (`budget_remedy`): the budget's key in the capidx.yaml used, or the largest text."""
    import contextlib

    from capidx.compiler.emit.budgets import budget_remedy

    write_catalog(tmp_path, documents())
    (tmp_path / "capidx.yaml").write_text("budgets:\n  summary: 10\n  agent: 50000\n", encoding="utf-8")
    with contextlib.chdir(tmp_path):
        build = CliRunner().invoke(cli, ["build", "-q"])
        assert build.exit_code == 1
        remedy = (
            "to fit: raise budgets.summary in capidx.yaml (`capidx report --propose-budgets` prints them sized from"
            " this build), or shorten the catalog text behind "
        )
        grows = " (summary grows with every agent and capability: shorter text frees little there)"
        lines = build.stderr.splitlines()
        # the document as the report names it, by its path in the build: most documents are no MCP resource
        assert lines[-1] == f"{remedy}summary{grows}", build.stderr
        assert lines[-1] == budget_remedy([("summary", "summary")], "capidx.yaml")
        assert "grow" not in budget_remedy([("capability", "capability-index://capabilities/hooks")], "capidx.yaml")
        report = CliRunner().invoke(cli, ["report"])
        assert report.exit_code == 1
        assert f"  {remedy}summary{grows}" in report.output.splitlines(), report.output
        markdown = CliRunner().invoke(cli, ["report", "--format", "markdown"])
        assert f"- {remedy}summary{grows}" in markdown.output.splitlines(), markdown.output
        elsewhere = CliRunner().invoke(cli, ["report", "--build", "build"])  # which capidx.yaml set it is unknown
        assert "  to fit: raise budgets.summary in the capidx.yaml the build used (`capidx report" in elsewhere.output


# --- --propose-budgets --------------------------------------------------------------------------------


def test_propose_budgets_prints_a_budgets_block_the_config_schema_accepts(tmp_path: Path) -> None:
    """A catalog larger than its budgets were set for breaches them all, and nothing but a comment said how to size
    them: `report --propose-budgets` prints a `budgets:` block from the build's measured sizes (exit 0 with budgets
    breached), one entry per measured kind the config schema takes, that a build then meets."""
    import contextlib

    import jsonschema
    import yaml

    from capidx.compiler.report.propose import readable
    from capidx.compiler.validate.schemas import CONFIG_SCHEMA, bundled_schema

    write_catalog(tmp_path, documents())
    (tmp_path / "capidx.yaml").write_text("budgets:\n  summary: 10\n  agent: 50000\n", encoding="utf-8")
    with contextlib.chdir(tmp_path):
        assert CliRunner().invoke(cli, ["build", "-q"]).exit_code == 1  # over budget
        result = CliRunner().invoke(cli, ["report", "--propose-budgets"])
    assert result.exit_code == 0, result.output
    proposed = yaml.safe_load(result.stdout)
    schema = bundled_schema(CONFIG_SCHEMA)
    jsonschema.validate(proposed, schema)
    manifest = _manifest(tmp_path / "build")
    largest: dict[str, int] = {}
    for row in manifest["artifacts"]:
        largest[row["kind"]] = max(largest.get(row["kind"], 0), row["tokens"]["cl100k_base"])
    accepted = set(schema["properties"]["budgets"]["properties"])
    assert set(proposed["budgets"]) == set(largest) & accepted and "index" in largest  # the match index: no budget
    for kind, value in proposed["budgets"].items():
        assert value == readable(largest[kind] * 1.2) >= largest[kind] * 1.2, kind
    lines = result.stdout.splitlines()
    summary = next(line for line in lines if line.startswith("  summary: "))
    assert summary.endswith(f"# measured {largest['summary']:,}; was 10"), summary
    assert any(line.startswith("# changed from the budgets") and "summary 10 -> " in line for line in lines)
    assert next(line for line in lines if line.startswith("  capability: ")).endswith("; new")
    # The block is capidx.yaml's: the catalog builds within it.
    (tmp_path / "capidx.yaml").write_text(result.stdout, encoding="utf-8")
    with contextlib.chdir(tmp_path):
        assert CliRunner().invoke(cli, ["build", "-q"]).exit_code == 0
        again = CliRunner().invoke(cli, ["report", "--propose-budgets", "--headroom", "0"])
    assert again.exit_code == 0
    assert yaml.safe_load(again.stdout)["budgets"]["summary"] == readable(largest["summary"])


def test_propose_budgets_keeps_a_budgeted_kind_the_build_has_none_of(tmp_path: Path) -> None:
    """A kind the capidx.yaml budgets stays in the block even when the build made no document of it."""
    manifest = _manifest(_build(tmp_path, documents()))
    manifest["artifacts"] = [row for row in manifest["artifacts"] if row["kind"] != "capability"]
    manifest["budgets"] = [{"kind": "capability", "budget": 777, "tokens": 0, "uri": "", "ok": True}]
    (tmp_path / "edited.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = _report("--build", str(tmp_path / "edited.json"), "--propose-budgets", "--headroom", "50")
    assert result.exit_code == 0, result.output
    assert "  capability: 777  # no document of this kind in the build; kept" in result.stdout.splitlines()
    assert "plus 50%" in result.stdout


def test_propose_budgets_quotes_the_manifest_path_on_its_comment_line(tmp_path: Path) -> None:
    """The header names the manifest read, in a YAML comment: a line break in its path (a folder or link a user
    named so) is shown as an escape, else the rest of the name would be a line of capidx.yaml of its own."""
    import yaml

    manifest = _build(tmp_path, documents()) / "manifest.json"
    named = tmp_path / "base\nencodings: [o200k_base]\n#.json"
    named.write_bytes(manifest.read_bytes())
    result = _report("--build", str(named), "--propose-budgets")
    assert result.exit_code == 0, result.output
    assert set(yaml.safe_load(result.stdout)) == {"budgets"}
    assert "base\\x0aencodings: [o200k_base]\\x0a#.json:" in result.stdout.splitlines()[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--headroom", "10"], "give --propose-budgets too"),
        (["--propose-budgets", "--format", "json"], "drop --format json"),
        (["--propose-budgets", "--against", "build"], "drop --against"),
        (["--propose-budgets", "--headroom", "-5"], "-5"),
        (["--propose-budgets", "--headroom", "nan"], "nan is not a number"),
    ],
)
def test_propose_budgets_refuses_what_it_cannot_use(tmp_path: Path, args: list[str], message: str) -> None:
    result = _report("--build", str(tmp_path), *args)
    assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.parametrize(
    ("value", "rounded"), [(0.4, 5), (12, 15), (681.6, 685), (1609.2, 1650), (13384.8, 13500), (93886, 94000)]
)
def test_proposed_budgets_round_up_to_a_readable_step(value: float, rounded: int) -> None:
    from capidx.compiler.report.propose import readable

    assert readable(value) == rounded


def test_the_build_may_be_given_as_the_argument_of_report_and_serve(builds: dict[str, Path], tmp_path: Path) -> None:
    """`capidx report build` and `capidx serve build`, as a newcomer types them, were "Got unexpected extra argument":
    the argument is the build, as --build; both at once is refused unless they name the same folder."""
    head, base = builds["head"], builds["base"]
    assert _json(str(head)) == _json("--build", str(head)) == _json(str(head), "--build", str(head))
    assert _json(str(head))["build"]["manifest"] == str(head / "manifest.json")
    twice = _report(str(head), "--build", str(base))
    assert twice.exit_code == 2 and "given twice" in twice.output, twice.output
    served = run_cli(["serve", str(head), "--print-config"], cwd=tmp_path)
    assert served.exit_code == 0 and "build: " in served.output, served.output
    twice = run_cli(["serve", str(head), "--build", str(base), "--print-config"], cwd=tmp_path)
    assert twice.exit_code == 2 and "given twice" in twice.output, twice.output


def test_the_build_given_both_ways_may_name_its_folder_in_other_words(builds: dict[str, Path]) -> None:
    """`capidx report build --build /abs/build` named one folder twice, in two ways, and was refused as "given twice";
    so was a build's manifest.json beside its folder. Only two folders are refused."""
    head = builds["head"]
    relative = os.path.relpath(head)
    for argument, option in ((relative, str(head)), (str(head / "manifest.json"), relative), (f"{head}/", str(head))):
        report = _json(argument, "--build", option)  # refused, it would be exit 2
        assert Path(report["build"]["manifest"]).resolve() == head / "manifest.json", (argument, option)
    served = run_cli(["serve", relative, "--build", str(head), "--print-config"], cwd=Path.cwd())
    assert served.exit_code == 0 and "build: " in served.output, served.output
