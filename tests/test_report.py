"""`capidx report` on synthetic manifests: figures, budgets, deltas, formats and exit codes.

The manifests come from `manifest_factory`, which validates each one against the build-manifest
schema; tests against a real `capidx build` live in test_report_build.py.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from catalog_factory import deny_search, run_cli
from click.testing import CliRunner
from manifest_factory import PRIMARY, make_manifest, uri, write_build

from capidx.cli import cli
from capidx.compiler.report.formats import MARKER, render_text
from capidx.compiler.report.json_form import report_to_dict
from capidx.compiler.report.manifest_reader import Manifest, ManifestError, load_manifest
from capidx.compiler.report.model import BaselineError, build_report

# --- helpers ------------------------------------------------------------------------------------


def _manifest(tmp_path: Path, name: str = "build", **kwargs) -> Manifest:
    return load_manifest(write_build(tmp_path / name, make_manifest(**kwargs)))


def _row(report, kind: str):
    return next(row for row in report.kinds if row.kind == kind)


def _run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, ["report", *args], env=env)


@pytest.fixture
def within_budget(tmp_path: Path) -> Path:
    return write_build(tmp_path / "ok", make_manifest(budgets={"full": 100_000, "agent": 10_000}))


@pytest.fixture
def breached(tmp_path: Path) -> Path:
    return write_build(tmp_path / "breached", make_manifest(budgets={"full": 20_000, "agent": 10_000}))


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """A baseline and a build: one capability added, one agent's document grown, one capability removed."""
    before = make_manifest(
        capabilities={"mcp-servers": "api-integration", "plugins": "customization", "old-thing": "testing"},
        budgets={"agent": 10_000},
    )
    after = make_manifest(
        capabilities={"mcp-servers": "api-integration", "plugins": "customization", "new-thing": "testing"},
        tokens={"agents/alpha-cli": 4_000},
        budgets={"agent": 10_000},
    )
    return write_build(tmp_path / "base", before), write_build(tmp_path / "head", after)


# --- figures ------------------------------------------------------------------------------------


def test_every_kind_in_the_manifest_gets_a_row_with_its_totals(tmp_path: Path) -> None:
    manifest = make_manifest(tokens={"agents/alpha-cli": 2_500, "agents/beta-ide": 2_100, "agents/gamma-web": 2_000})
    report = build_report(load_manifest(write_build(tmp_path / "b", manifest)))
    kinds = {artifact["kind"] for artifact in manifest["artifacts"]}
    assert {row.kind for row in report.kinds} == kinds
    agent = _row(report, "agent")
    assert agent.documents == 3
    assert agent.tokens[PRIMARY] == 6_600
    assert agent.largest[PRIMARY] == 2_500
    assert agent.largest_uri == uri("agents/alpha-cli")
    assert report.totals.documents == len(manifest["artifacts"])
    assert report.totals.tokens[PRIMARY] == sum(a["tokens"][PRIMARY] for a in manifest["artifacts"])


def test_rows_follow_the_schema_order_without_budgets(tmp_path: Path) -> None:
    report = build_report(_manifest(tmp_path))
    assert [row.kind for row in report.kinds] == [
        "summary",
        "full",
        "stats",
        "agent",
        "capability",
        "category",
        "lookup",
        "compare",
        "list",
        "sources",
        "index",
    ]
    assert all(row.status == "unbudgeted" for row in report.kinds)


def test_every_encoding_is_totalled(tmp_path: Path) -> None:
    report = build_report(_manifest(tmp_path, encodings=(PRIMARY, "o200k_base"), tokens={"full": 10_000}))
    full = _row(report, "full")
    assert full.tokens == {PRIMARY: 10_000, "o200k_base": 9_000}
    assert report.totals.tokens["o200k_base"] < report.totals.tokens[PRIMARY]


def test_shares_are_of_the_largest_document_against_200k_and_1m(tmp_path: Path) -> None:
    data = report_to_dict(build_report(_manifest(tmp_path, tokens={"full": 50_000})))
    full = next(row for row in data["kinds"] if row["kind"] == "full")
    assert full["share"] == {"200k": 0.25, "1m": 0.05}
    assert data["totals"]["share"]["1m"] == round(data["totals"]["tokens"][PRIMARY] / 1_000_000, 6)


def test_the_three_largest_agent_capability_and_lookup_documents_are_named(tmp_path: Path) -> None:
    report = build_report(
        _manifest(tmp_path, tokens={"capabilities/plugins": 5_000, "tools/lookup/beta-ide/mcp-servers": 900})
    )
    assert set(report.largest) == {"agent", "capability", "lookup"}
    assert all(len(docs) == 3 for docs in report.largest.values())
    assert report.largest["capability"][0].uri == uri("capabilities/plugins")
    assert report.largest["lookup"][0].tokens == 900
    tokens = [doc.tokens for doc in report.largest["agent"]]
    assert tokens == sorted(tokens, reverse=True)


# --- budgets ------------------------------------------------------------------------------------


def test_breaches_come_first_then_kinds_near_their_budget(tmp_path: Path) -> None:
    budgets = {"summary": 100_000, "lookup": 100, "agent": 2_110}  # agent largest is 2,000-2,099
    report = build_report(_manifest(tmp_path, budgets=budgets))
    assert [row.kind for row in report.kinds][:2] == ["lookup", "agent"]
    assert _row(report, "lookup").status == "breach"
    assert _row(report, "agent").status == "near"
    assert _row(report, "summary").status == "ok"
    assert _row(report, "full").status == "unbudgeted"
    assert [breach.kind for breach in report.breaches] == ["lookup"]
    assert [finding.reason for finding in report.warnings] == ["near-budget"]
    assert not report.ok


def test_against_a_baseline_a_kind_near_its_budget_is_warned_about_when_it_grew(tmp_path: Path) -> None:
    """The same near-budget warning on every pull request, whatever it changed, is one reviewers learn to skip: against
    a baseline it is given when the kind's figure grew; the table still says `near`."""
    budgets = {"full": 10_500, "agent": 100_000}
    base = _manifest(tmp_path, "base", budgets=budgets, tokens={"full": 10_000})
    same = _manifest(tmp_path, "same", budgets=budgets, tokens={"full": 10_000})
    grown = _manifest(tmp_path, "grown", budgets=budgets, tokens={"full": 10_100})
    alone = build_report(same)
    unchanged = build_report(same, base)
    larger = build_report(grown, base)
    assert [f.kind for f in alone.warnings if f.reason == "near-budget"] == ["full"]
    assert [f.kind for f in unchanged.warnings if f.reason == "near-budget"] == []
    assert _row(unchanged, "full").status == "near"
    assert [f.kind for f in larger.warnings if f.reason == "near-budget"] == ["full"]


def test_a_budgeted_kind_without_documents_still_has_a_row(tmp_path: Path) -> None:
    report = build_report(_manifest(tmp_path, budgets={"snippet": 500}))
    snippet = _row(report, "snippet")
    assert (snippet.documents, snippet.status, snippet.largest_uri) == (0, "ok", None)


# --- baseline -----------------------------------------------------------------------------------


def test_changes_are_matched_by_uri_and_compared_by_sha256(pair: tuple[Path, Path]) -> None:
    base, head = pair
    report = build_report(load_manifest(head), load_manifest(base))
    added = {change.uri for change in report.added}
    removed = {change.uri for change in report.removed}
    assert uri("capabilities/new-thing") in added and uri("capabilities/old-thing") in removed
    assert uri("tools/lookup/alpha-cli/new-thing") in added
    changed = {change.uri: change for change in report.changed}
    grown = changed[uri("agents/alpha-cli")]
    assert (grown.after, grown.delta) == (4_000, 4_000 - grown.before)
    assert uri("agents/beta-ide") not in changed  # same sha256: not a change
    assert all(change.before is None for change in report.added)
    assert all(change.after is None for change in report.removed)


def test_deltas_per_kind_and_growth_warnings(pair: tuple[Path, Path]) -> None:
    base, head = pair
    report = build_report(load_manifest(head), load_manifest(base))
    agent = _row(report, "agent")
    assert agent.total_delta.tokens == agent.tokens[PRIMARY] - agent.total_delta.before
    assert agent.largest_delta.after == 4_000
    assert agent.largest_delta.relative > 0.10
    assert any(f.kind == "agent" and f.reason == "growth" for f in report.warnings)
    summary = _row(report, "summary")
    assert (summary.total_delta.tokens, summary.total_delta.relative) == (0, 0.0)
    assert not any(f.kind == "summary" for f in report.warnings)


def test_a_per_item_kind_warns_of_growth_in_its_largest_document_not_in_its_total(tmp_path: Path) -> None:
    """Every capability added grows the totals of the per-item kinds (capability, lookup, category, …): on a small
    catalog one new capability made a dozen growth warnings, none of them actionable. Growth is warned of where a
    read gets dearer: a per-item kind's largest document (a single document's total, as before)."""
    two = {"mcp-servers": "api-integration", "plugins": "customization"}
    base = _manifest(tmp_path, "base", capabilities=two)
    added = _manifest(tmp_path, "added", capabilities=two | {"hooks": "customization"})
    report = build_report(added, base)
    assert _row(report, "capability").total_delta.relative > 0.10
    assert not [f for f in report.warnings if f.kind == "capability"], report.warnings
    hooks = {"capabilities/hooks": 9_000}
    larger = _manifest(tmp_path, "larger", capabilities=two | {"hooks": "customization"}, tokens=hooks)
    grown = build_report(larger, base)
    largest = _row(grown, "capability").largest_delta
    assert largest.after == 9_000 and largest.relative > 0.10
    assert [f.message for f in grown.warnings if f.kind == "capability"] == [
        f"capability: grew more than 10%: largest {largest.before:,} → 9,000 tokens (▲ +{largest.relative:.1%})"
    ]


def test_growth_of_exactly_ten_percent_is_not_a_warning(tmp_path: Path) -> None:
    base = _manifest(tmp_path, "base", tokens={"full": 10_000})
    head = _manifest(tmp_path, "head", tokens={"full": 11_000})
    assert not build_report(head, base).warnings
    head = _manifest(tmp_path, "head2", tokens={"full": 11_001})
    assert [f.kind for f in build_report(head, base).warnings] == ["full"]


def test_growth_of_a_few_dozen_tokens_is_not_a_warning_however_large_a_share(tmp_path: Path) -> None:
    """One capability added to a catalog of five grew ten kinds by more than 10%, a few dozen tokens each (a snippet
    48 -> 74): ten warnings on every such pull request. Growth is a warning from 200 tokens on."""
    base = _manifest(tmp_path, "base", tokens={"full": 400})
    head = _manifest(tmp_path, "head", tokens={"full": 599})
    assert not build_report(head, base).warnings
    head = _manifest(tmp_path, "head2", tokens={"full": 600})
    assert [f.kind for f in build_report(head, base).warnings] == ["full"]


def test_a_kind_new_in_the_build_has_no_relative_change(tmp_path: Path) -> None:
    base = _manifest(tmp_path, "base", kinds=("summary", "full"))
    head = _manifest(tmp_path, "head")
    agent = _row(build_report(head, base), "agent")
    assert agent.total_delta.before == 0 and agent.total_delta.relative is None
    assert agent.documents_delta.tokens == 3


def test_a_baseline_measured_with_another_encoding_is_refused(tmp_path: Path) -> None:
    base = _manifest(tmp_path, "base", encodings=("o200k_base",))
    with pytest.raises(BaselineError, match="o200k_base"):
        build_report(_manifest(tmp_path, "head"), base)


# --- loading ------------------------------------------------------------------------------------


def test_a_directory_without_manifest_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as caught:
        load_manifest(tmp_path)
    assert caught.value.path == tmp_path / "manifest.json"
    assert "capidx build" in str(caught.value)


def test_a_damaged_or_missing_manifest_says_how_to_get_a_build_back(tmp_path: Path) -> None:
    """`capidx build` replaces only an empty folder or one its manifest proves is a build: the advice says so."""
    (tmp_path / "manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(ManifestError, match=r"delete the folder and run `capidx build`"):
        load_manifest(tmp_path)
    (tmp_path / "manifest.json").unlink()
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "match.json").write_text("{}", encoding="utf-8")  # what is left of a build
    with pytest.raises(ManifestError, match=r"move what it holds away \(or delete it\), then run `capidx build`"):
        load_manifest(tmp_path)


def test_a_file_named_as_the_build_is_not_told_to_delete_a_folder(tmp_path: Path) -> None:
    """`--build capidx.yaml` names the project's configuration by mistake: it is no build's manifest, so the answer
    names where the build is, not 'delete the folder'; a damaged manifest.json given by its path still gets that."""
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: build\n", encoding="utf-8")
    with pytest.raises(ManifestError) as raised:
        load_manifest(tmp_path / "capidx.yaml")
    assert "name the folder `capidx build` wrote" in str(raised.value)
    assert "delete" not in str(raised.value)
    (tmp_path / "manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(ManifestError, match=r"delete the folder and run `capidx build`"):
        load_manifest(tmp_path / "manifest.json")


def test_a_link_to_a_damaged_manifest_keeps_the_advice_for_a_damaged_build(tmp_path: Path) -> None:
    """`--against base.json`, a link to a build's manifest.json: a damaged manifest is a damaged build whatever the
    link is called, not a file named by mistake."""
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "manifest.json").write_text("{", encoding="utf-8")
    (tmp_path / "base.json").symlink_to(tmp_path / "build" / "manifest.json")
    with pytest.raises(ManifestError, match=r"delete the folder and run `capidx build`"):
        load_manifest(tmp_path / "base.json", "--against BASELINE", given=True)


def test_a_folder_with_no_sign_of_a_build_is_not_offered_for_deletion(tmp_path: Path) -> None:
    """`--build agents` names the catalog by mistake: the advice points to the build, never to moving or deleting
    what the named folder holds."""
    (tmp_path / "agents" / "a" / "capabilities").mkdir(parents=True)
    (tmp_path / "agents" / "a" / "capabilities" / "current.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ManifestError) as raised:
        load_manifest(tmp_path / "agents")
    assert "holds no capidx build" in str(raised.value)
    assert "delete" not in str(raised.value) and "move" not in str(raised.value)


def test_a_default_build_folder_holding_something_else_says_how_to_get_a_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`build/` is where a build is looked for when none is named, and where other tools write too (setuptools'
    `build/lib`): it was not named by mistake, and `capidx build` refuses to write over it, so the advice says how to
    get a build elsewhere, still without offering what the folder holds for moving or deleting."""
    (tmp_path / "build" / "lib" / "pkg").mkdir(parents=True)
    (tmp_path / "build" / "lib" / "pkg" / "module.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["report"])
    assert result.exit_code == 2, result.output
    assert "holds no capidx build" in result.output
    assert "`capidx build --out DIR`" in result.output
    assert "delete" not in result.output and "move" not in result.output


@pytest.mark.parametrize("command", ["report", "inject"])
def test_a_build_folder_given_that_holds_no_build_is_not_told_to_pass_it(tmp_path: Path, command: str) -> None:
    """`report --build /tmp` was told to "have it write a new or empty one (`capidx build --out DIR`), or pass
    --build DIR": the user passed --build, and report writes no build. Given, the folder is to be named right; what is
    left of a build is rebuilt there (`--out` it); nothing yet, or an empty folder, is built there."""
    (tmp_path / "other" / "lib").mkdir(parents=True)
    (tmp_path / "other" / "lib" / "module.py").write_text("", encoding="utf-8")
    (tmp_path / "left" / "index").mkdir(parents=True)
    (tmp_path / "left" / "index" / "match.json").write_text("{}", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    memory = ["AGENTS.md"] if command == "inject" else []
    said = {}
    for folder in ("other", "left", "empty", "none"):
        result = run_cli([command, "--build", folder, *memory], cwd=tmp_path)
        assert result.exit_code == 2, result.output
        said[folder] = result.output
        assert "pass --build" not in result.output and "or have it write" not in result.output

    assert "it holds no capidx build: give --build the folder `capidx build` wrote" in said["other"]
    assert "capidx build --out" not in said["other"] and "delete" not in said["other"]
    assert "move what it holds away (or delete it), then run `capidx build --out left`" in said["left"]
    assert "--build needs an existing build (`capidx build --out empty` makes one)" in said["empty"]
    assert "--build needs an existing build (`capidx build --out none` makes one)" in said["none"]


@pytest.mark.parametrize("command", ["report", "inject"])
def test_a_build_path_that_is_a_link_leading_nowhere_is_named_not_built_into(tmp_path: Path, command: str) -> None:
    """`--build dangling` was told "no build at …: `capidx build --out dangling` makes one": the build would fail on the
    link, or write where it points. The link is what to mend (as `capidx serve` says): a dangling one names its target,
    a loop is a loop, also when it is a folder above the path given or the manifest.json in a folder."""
    (tmp_path / "dangling").symlink_to("gone")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "manifest.json").symlink_to("gone.json")
    memory = ["AGENTS.md"] if command == "inject" else []
    said = {}
    for given in ("dangling", "loop", "dangling/sub", "folder", "folder/manifest.json"):
        result = run_cli([command, "--build", given, *memory], cwd=tmp_path)
        assert result.exit_code == 2, result.output
        assert "capidx build --out" not in result.output and "no build at" not in result.output
        said[given] = result.output
    dangling = f"{tmp_path / 'dangling'}: broken symbolic link (target 'gone' does not exist)"
    assert f"{dangling}: point it at a build folder, or pass --build DIR" in said["dangling"]
    assert f"{dangling}: point it at a build folder" in said["dangling/sub"]
    assert f"{tmp_path / 'loop'}: symbolic link loop: point it at a build folder" in said["loop"]
    manifest = f"{tmp_path / 'folder' / 'manifest.json'}: broken symbolic link (target 'gone.json' does not exist)"
    assert f"{manifest}: point it at a build's manifest.json" in said["folder"]
    assert manifest in said["folder/manifest.json"]


def test_a_baseline_that_is_a_link_leading_nowhere_is_named(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build", make_manifest())
    (tmp_path / "base").symlink_to("gone")
    result = _run("--build", str(build), "--against", str(tmp_path / "base"))
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'base'}: broken symbolic link (target 'gone' does not exist)" in result.output
    assert "or pass --against BASELINE" in result.output and "capidx build --out" not in result.output


def test_a_report_is_not_written_into_a_build(tmp_path: Path) -> None:
    """A file the manifest does not list would make the next build refuse to replace the folder."""
    build = write_build(tmp_path / "build", make_manifest())
    args = ["report", "--build", str(build), "--format", "html", "--no-fail", "-o"]
    inside = CliRunner().invoke(cli, [*args, str(build / "report.html")])
    beside = CliRunner().invoke(cli, [*args, str(build / ".." / "report.html")])  # '..' leaves the build
    (tmp_path / "linked.html").symlink_to(build / "linked.html")
    linked = CliRunner().invoke(cli, [*args, str(tmp_path / "linked.html")])  # a link into the build is inside
    assert inside.exit_code == 2 and "is inside the capidx build directory" in inside.output
    assert linked.exit_code == 2 and not (build / "report.html").exists() and not (build / "linked.html").exists()
    assert beside.exit_code == 0 and (tmp_path / "report.html").is_file()
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    looped = CliRunner().invoke(cli, [*args, str(tmp_path / "a" / "out.html")])
    assert looped.exit_code == 2 and "cannot write the report" in looped.output  # said, not a traceback


@pytest.mark.parametrize(
    ("named", "what"),
    [
        ("capidx.yaml", "the capidx.yaml in force"),
        ("agents/aliases.json", "the alias table"),
        ("agents/claude-code/capabilities/current.json", "a capability document"),
    ],
)
def test_a_report_never_overwrites_what_the_build_reads(tmp_path: Path, named: str, what: str) -> None:
    """`-o capidx.yaml` used to replace the project's configuration with a report (exit 0), and the next command
    failed on it: refused, as `inject` refuses to append to these files, and the file is left as it was."""
    from catalog_factory import built_project, run_cli

    project = built_project(tmp_path)
    before = (project / named).read_bytes()
    result = run_cli(["report", "--format", "json", "-o", named], cwd=project)
    assert result.exit_code == 2
    assert f"{named}: it is {what} ({project / named}), which capidx build reads" in result.output
    assert (project / named).read_bytes() == before
    assert run_cli(["report", "-o", "report.txt"], cwd=project).exit_code == 0  # anywhere else: written


@pytest.mark.parametrize(
    "named",
    [
        "agents/claude-code/capabilities/current.yml",
        "agents/new-agent/capabilities/current.json",
        "agents/claude-code/capabilities/report.json",
        "agents/aliases.jsonl",  # one typing error from a read name: validate calls it misplaced, an error
    ],
)
def test_a_report_never_adds_to_the_catalog_a_file_the_build_reads_or_validate_refuses(
    tmp_path: Path, named: str
) -> None:
    """Not only the files the build reads now: a new one in the catalog may be read next time (a report written as
    `current.yml` beside `current.json` broke validate), or refused as misplaced. Another name there is harmless,
    also with the catalog at the project root."""
    from catalog_factory import built_project, run_cli

    project = built_project(tmp_path)
    (project / named).parent.mkdir(parents=True, exist_ok=True)
    result = run_cli(["report", "--format", "json", "-o", named], cwd=project)
    assert result.exit_code == 2 and f"{named}: inside the catalog folder" in result.output
    assert not (project / named).exists()
    assert run_cli(["validate", "-q"], cwd=project).exit_code == 0
    assert run_cli(["report", "--format", "json", "-o", "agents/report.json"], cwd=project).exit_code == 0


def test_the_catalog_line_counts_in_words_a_reader_would_write(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build", make_manifest(agents=["alpha-cli"], capabilities={"hooks": "automation"}))
    text = CliRunner().invoke(cli, ["report", "--build", str(build), "--no-fail"]).output
    assert "1 agent, 1 capability, 1 category" in text  # not '1 agents'
    markdown = CliRunner().invoke(cli, ["report", "--build", str(build), "--no-fail", "--format", "markdown"]).output
    assert "1 agent, 1 capability, 1 category" in markdown


@pytest.mark.parametrize("text", ["title: A\ntitle: B\n", "paths: [\n", "budgts: 1\n"])
def test_a_report_never_overwrites_a_capidx_yaml_that_does_not_load(tmp_path: Path, text: str) -> None:
    """While capidx.yaml does not load, which files the build reads is unknown (it may name any catalog): no file is
    written, the file itself and the catalog's included; standard output still gets the report."""
    from catalog_factory import built_project, run_cli

    project = built_project(tmp_path)
    (project / "capidx.yaml").write_text(text, encoding="utf-8")
    for named in ("capidx.yaml", "agents/aliases.json", "report.txt"):
        before = (project / named).read_bytes() if (project / named).exists() else None
        result = run_cli(["report", "--build", "build", "-o", named], cwd=project)
        assert result.exit_code == 2, result.output
        assert "the files capidx build reads are unknown" in result.output
        assert ((project / named).read_bytes() if (project / named).exists() else None) == before
    assert run_cli(["report", "--build", "build", "-o", "-"], cwd=project).exit_code in (0, 1)


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text('{"format": 1,\n  "capidx": }\n', encoding="utf-8")
    with pytest.raises(ManifestError, match=r"manifest\.json: 2:13: invalid JSON"):
        load_manifest(path)


def test_schema_errors_name_the_json_path(tmp_path: Path) -> None:
    manifest = make_manifest()
    manifest["artifacts"][0]["tokens"][PRIMARY] = -1
    del manifest["budgets"]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    problems = caught.value.problems
    assert any(p.startswith("$.artifacts[0].tokens.cl100k_base: -1 is less than the minimum") for p in problems)
    assert any("'budgets' is a required property" in p for p in problems)


def test_duplicate_uris_and_missing_primary_counts_are_refused(tmp_path: Path) -> None:
    manifest = make_manifest()
    manifest["artifacts"][1]["uri"] = manifest["artifacts"][0]["uri"]
    manifest["artifacts"][2]["tokens"] = {"o200k_base": 5}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    assert [p.split(":")[0] for p in caught.value.problems] == ["$.artifacts[1].uri", "$.artifacts[2].tokens"]


# --- the command: exit codes --------------------------------------------------------------------


def test_within_budget_exits_0(within_budget: Path) -> None:
    result = _run("--build", str(within_budget))
    assert result.exit_code == 0, result.output
    assert "OK: all budgets met" in result.output


def test_a_breach_exits_1_and_no_fail_exits_0(breached: Path) -> None:
    result = _run("--build", str(breached))
    assert result.exit_code == 1
    assert "FAIL: 1 budget breached" in result.output
    assert "full is 24,0" in result.output
    assert _run("--build", str(breached), "--no-fail").exit_code == 0


@pytest.mark.parametrize("output_format", ["text", "markdown", "json", "github", "html"])
def test_every_format_fails_on_a_breach(breached: Path, output_format: str) -> None:
    result = _run("--build", str(breached), "--format", output_format, env={"GITHUB_STEP_SUMMARY": ""})
    assert result.exit_code == 1, result.output


def test_a_missing_build_exits_2_naming_the_manifest(tmp_path: Path) -> None:
    result = _run("--build", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    nowhere = tmp_path / "nowhere"
    assert f"no build at {nowhere}: --build needs an existing build (`capidx build --out {nowhere}` makes one)" in (
        result.output
    )


def test_an_invalid_manifest_exits_2_naming_file_and_problem(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"format": 0}', encoding="utf-8")
    result = _run("--build", str(tmp_path))
    assert result.exit_code == 2
    assert f"{tmp_path / 'manifest.json'}: $.format: " in result.output


def test_a_manifest_this_user_may_not_read_asks_for_permission_not_a_new_build(
    within_budget: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was taken for a damaged build ("delete the folder and run `capidx build`"), which mends no permission:
    said as serve says it, with the exit code of a build that cannot be used. Simulated: root reads a file of mode
    000. The same for a baseline given by --against."""
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / "manifest.json").write_text("{", encoding="utf-8")
    unusable = _run("--build", str(tmp_path / "damaged")).exit_code
    baseline = shutil.copytree(within_budget, tmp_path / "base") / "manifest.json"
    denied: list[Path] = []
    _refuse_writing(monkeypatch, lambda path, flags: path in denied)
    advice = "the user running `capidx report` needs read and search permission on the build and the folders above it"
    for manifest, args in (
        (within_budget / "manifest.json", ("--build", str(within_budget))),
        (baseline, ("--build", str(within_budget), "--against", str(baseline.parent))),
    ):
        denied[:] = [manifest]
        result = _run(*args)
        assert result.exit_code == unusable == 2, result.output
        assert f"{manifest}: cannot read: Permission denied; {advice}" in result.output
        assert "delete" not in result.output and "capidx build" not in result.output


def test_a_build_in_a_folder_this_user_may_not_search_asks_for_permission(
    within_budget: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.11's Path.is_dir raised the PermissionError for a build inside a folder this user may not search:
    report ended in a traceback (exit 1). It is said to be unreadable, with the permission needed, with the exit
    code of a build that cannot be used; for --build and --against alike. Simulated: root searches any folder."""
    locked = tmp_path / "locked"
    build = shutil.copytree(within_budget, locked / "build")
    deny_search(monkeypatch, locked)
    advice = "the user running `capidx report` needs read and search permission on the build and the folders above it"
    for args in (("--build", str(build)), ("--build", str(within_budget), "--against", str(build))):
        result = _run(*args)
        assert result.exit_code == 2, result.output
        assert f"{build}: cannot read: Permission denied; {advice}" in result.output
        assert "delete" not in result.output and "capidx build" not in result.output


def test_an_invalid_baseline_exits_2(within_budget: Path, tmp_path: Path) -> None:
    (tmp_path / "base.json").write_text("[]", encoding="utf-8")
    result = _run("--build", str(within_budget), "--against", str(tmp_path / "base.json"))
    assert result.exit_code == 2
    assert "base.json: $: [] is not of type 'object'" in result.output


def test_an_unknown_format_is_a_usage_error(within_budget: Path) -> None:
    result = _run("--build", str(within_budget), "--format", "yaml")
    assert result.exit_code == 2
    assert "'yaml' is not one of" in result.output


def test_an_output_in_a_folder_not_there_exits_2_naming_the_folder(within_budget: Path, tmp_path: Path) -> None:
    """The folder is not made (a mistyped path would make one), and said: "No such file or directory" alone sent the
    user looking for the file."""
    folder = tmp_path / "no" / "such"
    result = _run("--build", str(within_budget), "--output", str(folder / "dir.txt"))
    assert result.exit_code == 2
    assert f"{folder / 'dir.txt'}: cannot write the report: " in result.output
    assert f"(no folder {folder}: make it first)" in result.output
    assert not folder.exists()


def test_the_build_defaults_to_paths_out_from_capidx_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_build(tmp_path / "site" / "index", make_manifest())
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: site/index\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = _run()
    assert result.exit_code == 0, result.output
    assert f"capidx token report: {Path('site/index/manifest.json')}" in result.output


def test_the_build_defaults_to_build_without_a_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_build(tmp_path / "build", make_manifest())
    monkeypatch.chdir(tmp_path)
    assert _run().exit_code == 0


def test_a_broken_capidx_yaml_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "capidx.yaml").write_text("paths:\n  outt: x\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = _run()
    assert result.exit_code == 2
    assert "'outt' is not a known key: did you mean 'out'?" in result.output


# --- formats ------------------------------------------------------------------------------------


def test_text_columns_are_aligned(pair: tuple[Path, Path]) -> None:
    base, head = pair
    result = _run("--build", str(head), "--against", str(base))
    table = _text_table(result.output)
    header = table[0]
    for column in ("docs", "tokens", "largest", "budget", "200K", "1M"):
        start = header.index(column)
        end = start + len(column)
        for line in table[1:]:
            cell = line[start:end]
            # Right-aligned: a figure ends exactly under the header's last letter (or the cell is blank).
            assert cell.strip() == "" or (cell[-1] != " " and line[end : end + 1] in ("", " ")), (column, line)
    assert "Δ tokens" in header and "▲ +" in result.output


def _text_table(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("kind "))
    end = next(i for i, line in enumerate(lines) if line.startswith("total ")) + 1
    return lines[start:end]


def test_text_has_no_colour_unless_asked(breached: Path) -> None:
    manifest = load_manifest(breached)
    report = build_report(manifest)
    assert "\x1b[" not in render_text(report)
    coloured = render_text(report, color=True)
    assert "\x1b[31m" in coloured  # the breach in red
    assert "\x1b[" not in _run("--build", str(breached)).output  # CliRunner is not a terminal


def test_markdown_has_the_marker_heading_and_a_compact_table(pair: tuple[Path, Path]) -> None:
    base, head = pair
    result = _run("--build", str(head), "--against", str(base), "--format", "markdown")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[:2] == [MARKER, "## capidx token report"]
    table = [line for line in lines if line.startswith("| ")]
    assert table[0].startswith("| Kind | Docs | Tokens | Largest | Budget |")
    assert any(line.startswith("| ✅ agent |") for line in table)
    assert any(line.startswith("| **total** |") for line in table)
    assert "<details><summary>Changes against the baseline:" in result.output
    assert "| added | `capabilities/new-thing` |" in result.output
    assert "| removed | `capabilities/old-thing` |" in result.output
    assert "| changed | `agents/alpha-cli` |" in result.output
    assert "`agents/alpha-cli` 4,000" in result.output  # the largest agent document, named


def test_markdown_lists_at_most_twenty_changes_per_list(tmp_path: Path) -> None:
    base = _manifest(tmp_path, "base", agents=("alpha-cli",))
    head = _manifest(tmp_path, "head", agents=("alpha-cli", *(f"agent-{i}" for i in range(8))))
    data = report_to_dict(build_report(head, base))
    assert len(data["changes"]["added"]) > 20  # JSON lists every change
    result = _run("--build", str(head.path), "--against", str(base.path), "--format", "markdown")
    assert sum(line.startswith("| added |") for line in result.output.splitlines()) == 21
    assert "| added | … " in result.output


def test_json_is_stable_and_complete(pair: tuple[Path, Path]) -> None:
    base, head = pair
    first = _run("--build", str(head), "--against", str(base), "--format", "json").output
    assert first == _run("--build", str(head), "--against", str(base), "--format", "json").output
    data = json.loads(first)
    assert list(data) == [
        "reportFormat",
        "ok",
        "budgeted",
        "encoding",
        "windows",
        "build",
        "baseline",
        "kinds",
        "totals",
        "largest",
        "changes",
        "breaches",
        "warnings",
        "overview",
        "data",
        "heldToBaseline",
    ]
    assert data["ok"] is True and data["baseline"]["manifest"].endswith("manifest.json")
    assert set(data["changes"]) == {"added", "removed", "changed"}
    agent = next(row for row in data["kinds"] if row["kind"] == "agent")
    assert agent["budget"] == {
        "kind": "agent",
        "budget": 10_000,
        "tokens": 4_000,
        "uri": uri("agents/alpha-cli"),
        "ok": True,
        "use": 0.4,
        "over": 0,
    }
    assert set(agent["delta"]) == {"tokens", "largest", "documents"}
    # The factory writes a manifest and no artifact: the data comparison is unavailable, and the report goes on.
    assert data["data"]["available"] is False and "cannot read it" in data["data"]["unavailable"]


def test_json_without_baseline_has_null_baseline_and_empty_changes(within_budget: Path) -> None:
    data = json.loads(_run("--build", str(within_budget), "--format", "json").output)
    assert data["baseline"] is None
    assert data["changes"] == {"added": [], "removed": [], "changed": []}
    assert all(row["delta"] is None for row in data["kinds"]) and data["totals"]["delta"] is None


def test_json_breaches_list_the_budget_rows_that_failed(breached: Path) -> None:
    data = json.loads(_run("--build", str(breached), "--format", "json").output)
    assert data["ok"] is False
    assert [(b["kind"], b["budget"], b["ok"]) for b in data["breaches"]] == [("full", 20_000, False)]
    assert data["breaches"][0]["over"] == data["breaches"][0]["tokens"] - 20_000


def test_github_prints_annotations_and_appends_the_step_summary(tmp_path: Path) -> None:
    head = write_build(tmp_path / "head", make_manifest(budgets={"full": 20_000, "agent": 2_110}))
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    result = _run("--build", str(head), "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("::error title=capidx budget breached (full)::full is 24,0")
    assert lines[1].startswith("::warning title=capidx token report (agent)::agent: agents/")
    assert "%25 of the budget" in lines[1]  # "%" is escaped in workflow commands
    assert lines[-1].startswith("capidx report: 1 budget breached, 1 warning")
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("# earlier step\n" + MARKER + "\n## capidx token report\n")
    _run("--build", str(head), "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert summary.read_text(encoding="utf-8").count(MARKER) == 2  # appended again, never overwritten


SETS_BUDGETS = "# budgets\nbudgets:\n  agent: 10000\n  full: 20000\n"


@pytest.mark.parametrize(
    ("config", "args", "placed"),
    [
        (SETS_BUDGETS, ["--build", "out"], "file=capidx.yaml,line=4,col=3,"),
        (SETS_BUDGETS + "paths: {out: out}\n", [], "file=capidx.yaml,line=4,col=3,"),
        ("budgets: {full: 30000}\n", ["--build", "out"], ""),  # the build was checked against another number
        ("budgets: [\n", ["--build", "out"], ""),  # a file that does not load places nothing, and stops nothing
        (None, ["--build", "out"], ""),
    ],
    ids=["set-here", "set-here-paths-out", "set-otherwise", "broken", "none"],
)
def test_github_places_a_breach_at_the_budget_capidx_yaml_sets(
    tmp_path: Path, config: str | None, args: list[str], placed: str
) -> None:
    """A breach was an annotation with no file or line; the capidx.yaml in force says where its budget is set."""
    write_build(tmp_path / "out", make_manifest(budgets={"full": 20_000, "agent": 10_000}))
    if config is not None:
        (tmp_path / "capidx.yaml").write_text(config, encoding="utf-8")

    result = run_cli(["report", *args, "--format", "github"], cwd=tmp_path)

    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"::error {placed}title=capidx budget breached (full)::full is 24,0")


def test_github_refusing_the_output_appends_nothing_to_the_step_summary(tmp_path: Path) -> None:
    """An -o that is refused (exit 2) leaves the job's summary as it was: no report of a step that failed."""
    head = write_build(tmp_path / "head", make_manifest(budgets={"full": 20_000}))
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    args = ["--build", str(head), "--format", "github", "-o", str(head / "report.txt")]
    result = _run(*args, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 2 and "is inside the capidx build directory" in result.output
    assert summary.read_text(encoding="utf-8") == "# earlier step\n"


def test_github_step_summary_that_cannot_be_written_is_named_and_the_annotations_still_print(
    tmp_path: Path,
) -> None:
    head = write_build(tmp_path / "head", make_manifest(budgets={"full": 20_000}))
    summary = tmp_path / "no-such-folder" / "summary.md"
    result = _run("--build", str(head), "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 2
    assert f"cannot append to $GITHUB_STEP_SUMMARY ({summary})" in result.output
    assert "cannot write the report" not in result.output  # the report was printed: only the summary failed
    assert result.output.startswith("::error title=capidx budget breached (full)::")


def test_github_annotations_past_githubs_ten_per_level_are_counted_in_the_tenth(tmp_path: Path) -> None:
    # every kind at 95 % of its budget: eleven warnings, one more than GitHub shows in a step
    largest = {"agent": 2052, "capability": 971, "category": 1286, "full": 24055, "index": 3065, "stats": 490}
    largest |= {"summary": 1835, "compare": 589, "list": 296, "lookup": 230, "sources": 202}
    head = write_build(tmp_path / "head", make_manifest(budgets={k: round(v / 0.95) for k, v in largest.items()}))
    result = _run("--build", str(head), "--format", "github", env={"GITHUB_STEP_SUMMARY": ""})
    warnings = [line for line in result.output.splitlines() if line.startswith("::warning")]
    assert len(warnings) == 10
    assert "2 warnings more: GitHub shows only 10 annotations" in warnings[-1]
    assert result.output.splitlines()[-1].startswith("capidx report: all budgets met, 11 warnings")
    text = _run("--build", str(head), env={"GITHUB_STEP_SUMMARY": ""}).output
    assert text.count("% of the budget of") >= 11  # the text form still lists every one


def test_github_without_step_summary_only_prints(within_budget: Path) -> None:
    result = _run("--build", str(within_budget), "--format", "github", env={"GITHUB_STEP_SUMMARY": ""})
    assert result.exit_code == 0
    assert result.output.splitlines() == [result.output.splitlines()[-1]]
    assert "::" not in result.output


def test_output_file_gets_the_report(pair: tuple[Path, Path], tmp_path: Path) -> None:
    base, head = pair
    target = tmp_path / "report.md"
    result = _run("--build", str(head), "--against", str(base), "--format", "markdown", "--output", str(target))
    assert result.exit_code == 0 and result.output == ""
    assert target.read_text(encoding="utf-8").startswith(MARKER)


def _report_limited_to(size: int, *args: str) -> subprocess.CompletedProcess[str]:
    """`capidx report <args>` in a process that may write no file past `size` bytes: a write beyond fails (EFBIG,
    the signal ignored) part way, as on a full disk, at the OS boundary rather than in capidx's code."""
    import resource
    import signal

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    command = [sys.executable, "-m", "capidx", "report", *args]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "GITHUB_STEP_SUMMARY": ""}
    return subprocess.run(command, capture_output=True, text=True, env=env, preexec_fn=limit, check=False)


def test_a_report_cut_short_leaves_the_previous_one_whole(within_budget: Path, tmp_path: Path) -> None:
    """The file was truncated and then written: a write that failed part way left an empty or cut report where
    the previous one was. The report is now written beside it and renamed over it."""
    folder = tmp_path / "reports"
    folder.mkdir()
    target = folder / "report.html"
    target.write_text("previous report\n", encoding="utf-8")
    args = ("--build", str(within_budget), "--format", "html", "--no-fail", "-o", str(target))
    assert len(_run(*args[:-2]).output) > 2048  # the page is larger than the limit below

    done = _report_limited_to(2048, *args)
    assert done.returncode == 2, done.stderr
    assert f"{target}: cannot write the report" in done.stderr
    assert target.read_text(encoding="utf-8") == "previous report\n"
    assert sorted(path.name for path in folder.iterdir()) == ["report.html"]  # no temporary file left


def test_a_rewritten_report_keeps_its_mode_and_is_written_through_a_link(within_budget: Path, tmp_path: Path) -> None:
    """Replacing the file by a rename must not change what writing into it kept: its mode, and a link to it."""
    target = tmp_path / "report.txt"
    target.write_text("previous report\n", encoding="utf-8")
    target.chmod(0o640)
    (tmp_path / "link.txt").symlink_to(target)
    for name in ("report.txt", "link.txt"):
        result = _run("--build", str(within_budget), "-o", str(tmp_path / name))
        assert result.exit_code == 0, result.output
    assert (tmp_path / "link.txt").is_symlink() and "OK: all budgets met" in target.read_text(encoding="utf-8")
    assert os.stat(target).st_mode & 0o777 == 0o640
    assert sorted(path.name for path in tmp_path.iterdir()) == ["link.txt", "ok", "report.txt"]


def test_a_report_to_a_link_loop_is_refused_and_the_link_kept(within_budget: Path, tmp_path: Path) -> None:
    """A link that leads back to itself names no file to write: opening it failed (ELOOP), exit 2. Replacing the
    path by a rename must not turn the link into a file holding the report."""
    loop = tmp_path / "report.md"
    loop.symlink_to("report.md")
    result = _run("--build", str(within_budget), "-o", str(loop))
    assert result.exit_code == 2, result.output
    assert f"{loop}: cannot write the report" in result.output
    assert loop.is_symlink() and os.readlink(loop) == "report.md"


def _refuse_writing(monkeypatch: pytest.MonkeyPatch, refused: Callable[[Path, int], bool]) -> None:
    """`os.open` fails with EACCES where `refused(path, flags)`: the suite may run as root, whom modes do not stop."""
    real_open = os.open

    def guarded(path, flags, *args, **kwargs):
        if refused(Path(os.path.abspath(path)), flags):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded)


def _writing(flags: int) -> bool:
    return bool(flags & (os.O_WRONLY | os.O_RDWR))


def test_a_report_this_user_may_not_write_is_not_replaced(
    within_budget: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a file this user may not write failed (exit 2) and left it as it was; a rename needs only the
    folder's permission, so replacing the file would write over a report made read-only. Simulated: as root a
    mode does not stop the write."""
    target = tmp_path / "report.txt"
    target.write_text("previous report\n", encoding="utf-8")
    _refuse_writing(monkeypatch, lambda path, flags: path == target and _writing(flags))
    result = _run("--build", str(within_budget), "-o", str(target))
    assert result.exit_code == 2, result.output
    assert f"{target}: cannot write the report: Permission denied" in result.output
    assert target.read_text(encoding="utf-8") == "previous report\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ok", "report.txt"]


def test_a_read_only_report_is_not_replaced(within_budget: Path, tmp_path: Path) -> None:
    """The same for real, for a user whom mode 0444 stops."""
    target = tmp_path / "report.txt"
    target.write_text("previous report\n", encoding="utf-8")
    target.chmod(0o444)
    if os.access(target, os.W_OK):
        pytest.skip("mode 0444 does not stop this user (root)")
    result = _run("--build", str(within_budget), "-o", str(target))
    assert result.exit_code == 2, result.output
    assert target.read_text(encoding="utf-8") == "previous report\n"


def test_a_report_in_a_folder_that_takes_no_new_file_is_written_into(
    within_budget: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file this user may write in a folder they may not write to (a shared reports folder) was written into;
    a temporary file cannot be made beside it, so the report is written into the file as before rather than
    refused. Simulated: as root a mode does not stop the write."""
    folder = tmp_path / "reports"
    folder.mkdir()
    target = folder / "report.txt"
    target.write_text("previous report\n", encoding="utf-8")
    _refuse_writing(monkeypatch, lambda path, flags: path.parent == folder and bool(flags & os.O_CREAT))
    result = _run("--build", str(within_budget), "-o", str(target))
    assert result.exit_code == 0, result.output
    assert "OK: all budgets met" in target.read_text(encoding="utf-8")
    assert sorted(path.name for path in folder.iterdir()) == ["report.txt"]


def test_a_report_in_a_read_only_folder_is_written_into(within_budget: Path, tmp_path: Path) -> None:
    """The same for real, for a user whom a folder of mode 0555 stops."""
    folder = tmp_path / "reports"
    folder.mkdir()
    target = folder / "report.txt"
    target.write_text("previous report\n", encoding="utf-8")
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("mode 0555 does not stop this user (root)")
        result = _run("--build", str(within_budget), "-o", str(target))
        assert result.exit_code == 0, result.output
        assert "OK: all budgets met" in target.read_text(encoding="utf-8")
        new = _run("--build", str(within_budget), "-o", str(folder / "new.txt"))  # a new file: no way to make it
        assert new.exit_code == 2 and "Permission denied" in new.output, new.output
    finally:
        folder.chmod(0o755)


def test_a_report_whose_name_fits_a_folder_entry_is_written(within_budget: Path, tmp_path: Path) -> None:
    """A name of 250 bytes fits the 255 a folder entry may have; the temporary file beside it was named after it
    with more added, so the write failed (ENAMETOOLONG) for a report that could be written. New and replaced."""
    target = tmp_path / ("r" * 246 + ".txt")
    assert len(os.fsencode(target.name)) == 250
    for _ in range(2):
        result = _run("--build", str(within_budget), "-o", str(target))
        assert result.exit_code == 0, result.output
        assert "OK: all budgets met" in target.read_text(encoding="utf-8")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["ok", target.name])  # nothing left beside


def test_a_report_to_a_device_is_written_into_it(within_budget: Path) -> None:
    """A path that is no regular file (/dev/null here, a pipe elsewhere) cannot be replaced by a rename."""
    assert _run("--build", str(within_budget), "-o", os.devnull).exit_code == 0
    assert Path(os.devnull).is_char_device()


def test_output_dash_is_standard_output(pair: tuple[Path, Path], tmp_path: Path, monkeypatch) -> None:
    """`-o -` prints, as most command-line tools read it, rather than writing a file named '-'."""
    base, head = pair
    monkeypatch.chdir(tmp_path)
    result = _run("--build", str(head), "--against", str(base), "--format", "markdown", "-o", "-")
    assert result.exit_code == 0 and result.output.startswith(MARKER)
    assert not (tmp_path / "-").exists()


def test_output_dash_on_a_terminal_is_coloured_as_without_it(within_budget: Path, monkeypatch) -> None:
    """`-o -` was told apart after the colour was decided (from "no -o"), so it lost the colour on a terminal."""
    monkeypatch.setattr("capidx.compiler.validate.reporters.use_color", lambda *_args, **_kwargs: True)
    runner = CliRunner()
    plain = runner.invoke(cli, ["report", "--build", str(within_budget)], color=True)
    dashed = runner.invoke(cli, ["report", "--build", str(within_budget), "-o", "-"], color=True)
    assert "\x1b[" in plain.output
    assert dashed.output == plain.output and dashed.exit_code == plain.exit_code == 0


# --- HTML ---------------------------------------------------------------------------------------

_VOID = {"meta", "br", "hr", "img", "input", "link", "source", "wbr", "col", "area", "base", "embed", "track"}


class _TagChecker(HTMLParser):
    """Balanced tags, and nothing loaded from elsewhere."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name in {"src", "href"} or (value and "url(" in value):
                self.problems.append(f"external reference <{tag} {name}={value!r}>")
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check_html(page: str) -> _TagChecker:
    checker = _TagChecker()
    checker.feed(page)
    checker.close()
    assert not checker.problems, checker.problems
    assert not checker.stack, f"unclosed: {checker.stack}"
    assert page.startswith("<!DOCTYPE html>")
    assert {"script", "link", "img", "iframe"}.isdisjoint(checker.tags)
    return checker


def test_html_is_one_well_formed_self_contained_page_with_the_figures(pair: tuple[Path, Path]) -> None:
    base, head = pair
    result = _run("--build", str(head), "--against", str(base), "--format", "html")
    assert result.exit_code == 0
    checker = check_html(result.output)
    text = " ".join(" ".join(checker.text).split())
    report = build_report(load_manifest(head), load_manifest(base))
    assert f"{report.totals.tokens[PRIMARY]:,}" in text
    assert "4,000" in text and "10,000" in text  # largest agent document and its budget
    assert "agents/alpha-cli" in text and "capabilities/new-thing" in text
    assert "200K window" in text and "1M window" in text
    assert 'class="fill ok" style="width: 40.00%' in result.output  # 4,000 of 10,000


def test_html_shows_a_breach_beyond_its_budget_mark(breached: Path) -> None:
    result = _run("--build", str(breached), "--format", "html")
    check_html(result.output)
    assert "1 budget breached" in result.output
    assert 'class="fill breach" style="width: 100.00%' in result.output
    assert "over the budget of 20,000" in result.output
    # the share is of the budget, said so: after "over the budget" a bare "(121%)" read as the overage
    assert re.search(r"over the budget of 20,000 \(\d+% of it\)", result.output)


def test_html_escapes_text_from_the_manifest(tmp_path: Path) -> None:
    manifest = make_manifest(budgets={"full": 1})
    manifest["uriPrefix"] = "x://"
    for artifact in manifest["artifacts"]:
        artifact["uri"] = artifact["uri"].replace("capability-index://", "x://<b>")
    manifest["budgets"][0]["uri"] = "x://<b>full"
    result = _run("--build", str(write_build(tmp_path / "b", manifest)), "--format", "html", "--no-fail")
    check_html(result.output)
    assert "<b>" not in result.output and "&lt;b&gt;" in result.output


# --- cheap imports ------------------------------------------------------------------------------


def test_the_report_never_imports_a_tokenizer_or_the_mcp_sdk(within_budget: Path) -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from capidx.cli import cli\n"
        "for fmt in ('text', 'markdown', 'json', 'github', 'html'):\n"
        f"    result = CliRunner().invoke(cli, ['report', '--build', {str(within_budget)!r}, '--format', fmt])\n"
        "    assert result.exit_code == 0, result.output\n"
        "loaded = sorted(name for name in sys.modules if name.split('.')[0] in {'tiktoken', 'mcp'})\n"
        "print(loaded)\n"
    )
    env = {**os.environ, "GITHUB_STEP_SUMMARY": ""}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
