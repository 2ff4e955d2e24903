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
)
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
        assert characters(form_text(catalog, richer)) > 2_048


def form_text(catalog: Catalog, form: str) -> str:
    """The text of one form, whatever its size: the smallest budget for which `fit` chooses it."""
    for budget in range(100, 10**6, 50):
        fitted = fit(catalog, FRAME, budget)
        if fitted.form == form:
            return fitted.text
    raise AssertionError(f"{form} is never chosen")


def test_many_categories_fall_back_to_the_total() -> None:
    catalog = one_agent([(f"category-number-{index:03d}", f"Cap {index}") for index in range(200)])
    fitted = fit(catalog, FRAME, 2_048)
    assert fitted.form == "total"
    assert "1 agents, 200 capabilities in 200 categories" in fitted.text


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


def test_characters_count_utf16_code_units() -> None:
    assert characters("✓") == 1
    assert characters("🚀") == 2  # what a JavaScript client's cut counts
    assert characters("abc") == 3


def test_catalog_text_cannot_start_a_block_or_open_html() -> None:
    text = fit(one_agent([("security", "# Heading <b>bold</b>")]), FRAME, 10**9).text
    assert "\\# Heading \\<b>bold\\</b> ✓" in text


def test_the_frames_say_where_details_live() -> None:
    catalog = synthetic(2, 4)
    served = instructions_frame(catalog, "Coding-agent capabilities", "capability-index://")
    assert "lookup_capability" in served.tail and "capability-index://agents/{agent}" in served.tail
    memory = memory_frame(catalog, "Coding-agent capabilities", "out/index")
    # a memory file cannot assume the server is connected: it names the build's files as well
    assert "if the capidx MCP server is connected" in memory.tail
    assert "out/index/agents/<agent>.md" in memory.tail


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
    assert "build/agents/<agent>.md" in (tmp_path / "build" / "memory.md").read_text("utf-8")


def test_a_character_budget_chooses_a_shorter_form_and_a_breach_fails_the_build(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("character_budgets:\n  instructions: 700\n  memory: 100\n", "utf-8")
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
