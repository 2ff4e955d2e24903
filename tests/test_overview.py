"""The overview fitter (compiler/render/overview.py): the richest form that fits its character budget, whole.

Synthetic catalogs of growing size exercise each form; the build writes the two artifacts and records the
chosen form in the manifest and its output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capidx.compiler.catalog import Catalog, build_catalog
from capidx.compiler.render.overview import (
    FORMS,
    Frame,
    characters,
    fit,
    instructions_frame,
    memory_frame,
    render,
)
from capidx.schema.text import slugify
from tests.catalog_factory import run_cli, write_catalog

CATEGORIES = ("customization", "security", "testing", "context-awareness", "command-line", "collaboration")
FRAME = Frame(head="What each agent can do.", tail="Details: the tools.")


def synthetic(agents: int, capabilities: int) -> Catalog:
    """`agents` agents recording `capabilities` capabilities spread over the categories; every third is
    unavailable for the second agent, and the last agent does not record every fifth."""
    documents = []
    for agent in range(agents):
        records = []
        for index in range(capabilities):
            if agent == agents - 1 and agents > 1 and index % 5 == 0:
                continue
            records.append(
                {
                    "category": CATEGORIES[index % len(CATEGORIES)],
                    "name": f"Capability Number {index:05d}",
                    "description": "Does one thing well for the benefit of the tests.",
                    "available": not (agent == 1 and index % 3 == 0),
                }
            )
        head = {"name": f"Agent {agent}", "vendor": "Vendor", "version": "1.0", "lastUpdated": "2026-01-01"}
        documents.append((f"agent-{agent}", {"agent": head, "capabilities": records}))
    return build_catalog(documents, None)


def one_agent(records: list[tuple[str, str]]) -> Catalog:
    """One agent with an available capability per (category, name)."""
    head = {"name": "Solo", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01"}
    rows = [{"category": c, "name": n, "description": "x y z", "available": True} for c, n in records]
    return build_catalog([("solo", {"agent": head, "capabilities": rows})], None)


@pytest.mark.parametrize(
    ("capabilities", "form"),
    [(3, "matrix"), (40, "matrix"), (70, "names"), (80, "counts"), (5_000, "counts")],
)
def test_the_richest_form_that_fits_is_chosen(capabilities: int, form: str) -> None:
    catalog = synthetic(3, capabilities)
    fitted = fit(catalog, FRAME, 2_048)
    assert (fitted.form, fitted.ok) == (form, True)
    assert fitted.characters == characters(fitted.text) <= 2_048
    # no richer form would have fitted: the choice is the richest possible
    for richer in FORMS[: FORMS.index(form)]:
        assert characters(render(catalog, FRAME, richer)) > 2_048


def test_the_spare_sentence_is_left_out_before_a_richer_form_is() -> None:
    """The instructions' last sentence ('A capability may be asked in your own words…', about 100 characters) made a
    catalog whose matrix had fitted its budget fall back to the names form on upgrade, losing every ✓ and ✗: it is
    left out first, and said whenever it fits."""
    catalog = synthetic(3, 12)
    frame = Frame(head=FRAME.head, tail=FRAME.tail, spare="A capability may be asked in your own words.")
    with_it, without = render(catalog, frame, "matrix"), render(catalog, frame, "matrix", spare=False)
    assert with_it.rstrip().endswith(f"{FRAME.tail} {frame.spare}") and without.rstrip().endswith(FRAME.tail)
    assert fit(catalog, frame, characters(with_it)).text == with_it  # room for it: said
    squeezed = fit(catalog, frame, characters(with_it) - 1)
    assert (squeezed.form, squeezed.text) == ("matrix", without)  # the matrix kept, the sentence left out
    assert fit(catalog, frame, characters(without) - 1).form != "matrix"


def test_many_categories_fall_back_to_the_total() -> None:
    catalog = one_agent([(f"category-number-{index:03d}", f"Cap {index}") for index in range(200)])
    fitted = fit(catalog, FRAME, 2_048)
    assert fitted.form == "total"
    assert "1 agent, 200 capabilities in 200 categories" in fitted.text


def test_each_form_keeps_head_first_and_tail_last_and_is_never_cut() -> None:
    catalog = synthetic(4, 120)
    for budget in (10**9, 3_000, 1_000, 200):
        fitted = fit(catalog, FRAME, budget)
        lines = fitted.text.splitlines()
        assert lines[0] == FRAME.head
        assert lines[-1] == FRAME.tail
        assert fitted.text.endswith("\n")
    # the shortest form still does not fit 20 characters: it is returned whole, and says it does not fit
    tiny = fit(catalog, FRAME, 20)
    assert (tiny.form, tiny.ok) == ("total", False)
    assert tiny.text == fit(catalog, FRAME, 200).text


def test_naming_forms_name_every_capability_and_cells_follow_the_columns() -> None:
    catalog = synthetic(3, 12)
    matrix = fit(catalog, FRAME, 10**9)
    assert matrix.form == "matrix"
    assert "Columns: agent-0 agent-1 agent-2." in matrix.text
    assert "Capability Number 00000 ✓ ✗ -" in matrix.text  # available, not available, not recorded
    assert "Capability Number 00001 ✓ ✓ ✓" in matrix.text
    names = fit(catalog, FRAME, characters(matrix.text) - 1)
    assert names.form == "names"
    for capability in catalog.capabilities:
        assert capability.name in names.text
    assert "✓" not in names.text


def test_the_matrix_points_at_tiers_only_when_a_record_states_one() -> None:
    """'✓ available (tier: see Details)' promised a tier a catalog without any did not hold (a blind model test looked
    for it in every record): the pointer is there only when some record states a tier."""
    assert "✓ available, ✗ not available" in render(synthetic(2, 3), FRAME, "matrix")
    head = {"name": "Solo", "vendor": "V", "version": "1", "lastUpdated": "2026-01-01"}
    row = {"category": "testing", "name": "Test Writing", "description": "x y z", "available": True, "tier": "pro"}
    tiered = build_catalog([("solo", {"agent": head, "capabilities": [row]})], None)
    assert "✓ available (tier: see Details), ✗ not available" in render(tiered, FRAME, "matrix")


def test_the_head_says_how_old_the_agents_data_is() -> None:
    """A model weighs the overview against what it remembers: the head says the day of the agents' files
    (`lastUpdated`), one day or the first and last, and never the day of the build (a build of the same files is the
    same)."""
    two = synthetic(2, 3)
    assert "(data as of 2026-01-01)." in instructions_frame(two, "Agents").head
    assert "(data as of 2026-01-01; generated by capidx" in memory_frame(two, "Agents", "build").head
    documents = [
        (
            f"agent-{n}",
            {"agent": {"name": f"A{n}", "vendor": "V", "version": "1", "lastUpdated": day}, "capabilities": []},
        )
        for n, day in enumerate(("2026-03-04T10:00:00Z", "2025-12-31"))
    ]
    apart = build_catalog(documents, None)
    assert "(data of 2025-12-31 to 2026-03-04)." in instructions_frame(apart, "Agents").head


@pytest.mark.parametrize(
    ("verified", "said"),
    [
        ((None, None), "sources unverified"),
        (("2026-01-02", None), "1 of 2 sources verified"),
        (("2026-01-02",) * 2, "sources verified"),
    ],
)
def test_the_head_says_how_many_sources_were_verified(verified: tuple[str | None, ...], said: str) -> None:
    """A file's `lastUpdated` says when it was edited, not that its facts were checked: a blind test of what a model
    reads found 'data as of 2026-11-22' read as fresh facts while none of the catalog's 171 sources was verified."""
    sources = [
        {"url": f"https://docs.acmedocs.io/{n}", "description": "d", "sourceGranularity": "dedicated"}
        | ({"verifiedDate": day} if day else {})
        for n, day in enumerate(verified)
    ]
    record = {"name": "Hooks", "category": "customization", "description": "Runs commands.", "available": True}
    document = {
        "agent": {"name": "A", "vendor": "V", "version": "1", "lastUpdated": "2026-01-05"},
        "capabilities": [record | {"sources": sources}],
    }
    catalog = build_catalog([("agent-a", document)], None)
    assert f"(data as of 2026-01-05, {said})." in instructions_frame(catalog, "Agents").head
    assert f"(data as of 2026-01-05, {said}; generated by capidx" in memory_frame(catalog, "Agents", "build").head


def test_characters_count_utf16_code_units() -> None:
    assert characters("✓") == 1
    assert characters("🚀") == 2  # what a JavaScript client's cut counts
    assert characters("abc") == 3


def test_catalog_text_cannot_start_a_block_or_open_html() -> None:
    catalog = one_agent([("security", "# Heading <b>bold</b>")])
    assert "\n\\# Heading \\<b>bold\\</b> ✓" in fit(catalog, FRAME, 10**9).text
    listed = Frame(FRAME.head, FRAME.tail, headings=False)
    assert "\n- \\# Heading \\<b>bold\\</b> ✓" in fit(catalog, listed, 10**9).text


def test_the_frames_say_where_details_live() -> None:
    catalog = synthetic(2, 4)
    served = instructions_frame(catalog, "Coding-agent capabilities")
    assert "lookup_capability" in served.tail
    assert "://" not in served.tail  # which resources are served is chosen when the server starts
    memory = memory_frame(catalog, "Coding-agent capabilities", "out/index")
    # a memory file cannot assume the server is connected: it names the build's files as well
    assert "if the capidx MCP server is connected" in memory.tail
    assert "out/index/agents/{agent}.md" in memory.tail


# --- through `capidx build` -------------------------------------------------------------------------


def _manifest(project: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((project / "build" / "manifest.json").read_text("utf-8"))
    return manifest


def test_build_writes_both_overview_artifacts_and_says_which_form(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    result = run_cli(["build"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "instructions: matrix form, " in result.output
    manifest = _manifest(tmp_path)
    rows = {row["kind"]: row for row in manifest["overview"]}
    assert set(rows) == {"instructions", "memory"}
    for kind, path in (("instructions", "instructions.md"), ("memory", "memory.md")):
        text = (tmp_path / "build" / path).read_text("utf-8")
        assert rows[kind]["characters"] == characters(text) <= 2_048
        assert (rows[kind]["form"], rows[kind]["ok"], rows[kind]["namesEveryCapability"]) == ("matrix", True, True)
        artifact = next(row for row in manifest["artifacts"] if row["kind"] == kind)
        assert artifact["path"] == path and artifact["tokens"]["cl100k_base"] > 0
    memory = (tmp_path / "build" / "memory.md").read_text("utf-8")
    assert "build/agents/{agent}.md" in memory
    # written into someone's Markdown file, the block adds no headings to it; the instructions may have them
    assert not any(line.startswith("#") for line in memory.splitlines())
    assert "\n- MCP Servers ✓ ✓ ✓\n" in memory
    assert "\n## api-integration\nMCP Servers ✓ ✓ ✓\n" in (tmp_path / "build" / "instructions.md").read_text("utf-8")


def test_a_character_budget_chooses_a_shorter_form_and_a_breach_fails_the_build(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("character_budgets:\n  instructions: 650\n  memory: 100\n", "utf-8")
    result = run_cli(["build"], tmp_path)
    assert result.exit_code == 1
    rows = {row["kind"]: row for row in _manifest(tmp_path)["overview"]}
    assert rows["instructions"]["form"] in {"names", "counts", "total"} and rows["instructions"]["ok"]
    assert (rows["memory"]["form"], rows["memory"]["ok"]) == ("total", False)
    assert "memory: " in result.output and "> budget 100 in its shortest form (total)" in result.output
    # the up-to-date rebuild reports the same breach
    again = run_cli(["build"], tmp_path)
    assert again.exit_code == 1 and "> budget 100" in again.output


def test_a_character_budget_must_be_a_positive_integer(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("character_budgets:\n  instructionz: 700\n", "utf-8")
    result = run_cli(["build"], tmp_path)
    assert result.exit_code == 2
    assert "instructionz" in result.output


def test_report_shows_the_form_and_the_per_session_cost(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    assert run_cli(["build"], tmp_path).exit_code == 0
    text = run_cli(["report"], tmp_path)
    assert text.exit_code == 0, text.output
    assert "instructions: matrix form, " in text.output and "--instructions summary" in text.output
    data = json.loads(run_cli(["report", "--format", "json"], tmp_path).output)
    rows = {row["kind"]: row for row in data["overview"]}
    assert rows["instructions"]["form"] == "matrix" and rows["instructions"]["tokens"] > 0
    assert rows["memory"]["characters"] <= rows["memory"]["budget"] == 2_048


def test_report_against_a_baseline_warns_when_an_overview_s_form_changed(tmp_path: Path) -> None:
    """An upgrade whose instructions grew past the team's character budget fell back from the matrix to the names
    form, every ✓ and ✗ gone, and `report --against` showed only 146 tokens saved: the form change is a warning."""
    write_catalog(tmp_path)
    assert run_cli(["build", "--out", "base"], tmp_path).exit_code == 0
    (tmp_path / "capidx.yaml").write_text("character_budgets:\n  instructions: 650\n", "utf-8")
    assert run_cli(["build"], tmp_path).exit_code == 0
    report = run_cli(["report", "--against", "base", "--format", "json"], tmp_path)
    assert report.exit_code == 0, report.output
    warnings = [w for w in json.loads(report.output)["warnings"] if w["reason"] == "overview-form"]
    form = _manifest(tmp_path)["overview"][0]["form"]
    assert [w["message"] for w in warnings] == [
        f"instructions: matrix form → {form} form against the baseline (the richest form that fits its budget)"
    ]
    same = run_cli(["report", "--against", "build", "--format", "json"], tmp_path)
    assert not [w for w in json.loads(same.output)["warnings"] if w["reason"] == "overview-form"]


def test_report_fails_on_a_character_budget_breach(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("character_budgets:\n  instructions: 50\n", "utf-8")
    assert run_cli(["build"], tmp_path).exit_code == 1
    report = run_cli(["report"], tmp_path)
    assert report.exit_code == 1
    assert "instructions: " in report.output and "> budget 50 in its shortest form (total)" in report.output
    assert report.output.rstrip().splitlines()[-1].startswith("FAIL: 1 budget breached")
    github = run_cli(["report", "--format", "github"], tmp_path)
    placed = "file=capidx.yaml,line=2,col=3,"  # at the budget's key in the capidx.yaml in force
    assert f"::error {placed}title=capidx character budget breached (instructions)::" in github.output
    assert run_cli(["report", "--no-fail"], tmp_path).exit_code == 0


def test_summary_fits_600_tokens_on_four_agents_and_28_capabilities(tmp_path: Path) -> None:
    """A catalog the size of the public ai-agent-capabilities one, made of our own bundled data: 4 agents,
    28 canonical capabilities (the first 28 by slug)."""
    repo = Path(__file__).resolve().parent.parent
    documents = {path.parent.parent.name: json.loads(path.read_text("utf-8"))
                 for path in sorted((repo / "agents").glob("*/capabilities/current.json"))}  # fmt: skip
    catalog = build_catalog(list(documents.items()), None)
    kept = {capability.slug for capability in catalog.capabilities[:28]}
    for document in documents.values():
        document["capabilities"] = [c for c in document["capabilities"] if slugify(c["name"]) in kept]
    write_catalog(tmp_path, documents, aliases=None)
    assert run_cli(["build"], tmp_path).exit_code == 0
    manifest = _manifest(tmp_path)
    assert (len(manifest["catalog"]["agents"]), len(manifest["catalog"]["capabilities"])) == (4, 28)
    summary = next(row for row in manifest["artifacts"] if row["kind"] == "summary")
    assert summary["tokens"]["cl100k_base"] <= 600
    text = (tmp_path / "build" / "summary.md").read_text("utf-8")
    names = [capability.name for capability in catalog.capabilities[:28]]
    assert [name for name in names if f"\n{name} " not in text] == []
    assert "Triggers:" not in text


def test_html_report_shows_the_overview_and_its_breach(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("character_budgets:\n  memory: 50\n", "utf-8")
    assert run_cli(["build"], tmp_path).exit_code == 1
    page = run_cli(["report", "--format", "html", "--no-fail"], tmp_path).output
    assert "<h2>Per session</h2>" in page and "instructions: matrix form, " in page
    assert "memory: " in page and "&gt; budget 50 in its shortest form (total)" in page
    assert 'class="verdict fail"' in page


def test_markdown_report_fails_on_a_character_budget_alone(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("character_budgets:\n  memory: 50\n", "utf-8")
    assert run_cli(["build"], tmp_path).exit_code == 1
    comment = run_cli(["report", "--format", "markdown", "--no-fail"], tmp_path).output
    assert "❌ **1 budget breached**" in comment
    assert "- ❌ memory: " in comment and "budget 50 in its shortest form (total)" in comment


def test_memory_names_the_projects_build_directory_whatever_out_says(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: site-build/index\n", "utf-8")
    assert run_cli(["build"], tmp_path).exit_code == 0
    memory = (tmp_path / "site-build" / "index" / "memory.md").read_bytes()
    assert b"site-build/index/agents/{agent}.md" in memory
    # a one-off build elsewhere (a CI comparison) writes the same block, so `inject --check` can compare
    assert run_cli(["build", "--out", str(tmp_path.parent / f"{tmp_path.name}-other")], tmp_path).exit_code == 0
    assert (tmp_path.parent / f"{tmp_path.name}-other" / "memory.md").read_bytes() == memory
    # outside the project, capidx.yaml's folder is named by its name alone, never by an absolute path
    (tmp_path / "capidx.yaml").write_text(f"paths:\n  out: ../{tmp_path.name}-outside\n", "utf-8")
    assert run_cli(["build"], tmp_path).exit_code == 0
    outside = (tmp_path.parent / f"{tmp_path.name}-outside" / "memory.md").read_text("utf-8")
    assert f" {tmp_path.name}-outside/agents/{{agent}}.md" in outside and str(tmp_path.parent) not in outside


def test_many_agents_leave_room_for_the_capability_names() -> None:
    """Where the agent ids alone would crowd the names out (hundreds of agents, a few capabilities), the
    overview still names every capability and counts the agents instead of listing them."""
    catalog = synthetic(300, 10)
    fitted = fit(catalog, FRAME, 2_048)
    assert (fitted.form, fitted.ok) == ("capability-names", True)
    assert "300 agents (ids not listed here)." in fitted.text and "agent-299" not in fitted.text
    for capability in catalog.capabilities:
        assert capability.name in fitted.text
    assert characters(render(catalog, FRAME, "names")) > 2_048
