"""A deprecated record is not shown as plainly available in the matrices a model reads alone (summary.md, the
overview in instructions.md and memory.md, category and capability tables, the site's data): its mark carries
†, and the legend explains † only when some cell shows it, so a catalog without deprecated records pays nothing.
The factory's catalog has one: Copilot CLI's Code Review (status and maturity deprecated, enterprise tier)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, write_catalog

AGENT, NAME = "copilot-cli", "Code Review"


def _build(tmp_path: Path, change: Callable[[dict[str, Any]], None] = lambda record: None) -> Path:
    docs = documents()
    change(next(r for r in docs[AGENT]["capabilities"] if r["name"] == NAME))
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "-q"], tmp_path)
    assert result.exit_code == 0, result.output
    return tmp_path / "build"


def _row(text: str) -> str:
    return next(line for line in text.splitlines() if line.lstrip("- ").startswith(NAME + " "))


def test_the_deprecated_cell_is_marked_in_every_matrix(tmp_path: Path) -> None:
    build = _build(tmp_path)
    summary = (build / "summary.md").read_text("utf-8")
    assert "✓e†" in _row(summary).split()  # the only enterprise-tier deprecated record
    assert "† deprecated" in summary
    overview = (build / "instructions.md").read_text("utf-8")
    assert "✓†" in _row(overview).split() and "† deprecated" in overview
    page = (build / "capabilities" / "code-review.md").read_text("utf-8")
    assert f"| {AGENT} | ✓e† |" in page and "† deprecated" in page
    category = (build / "categories" / "code-explanation.md").read_text("utf-8")
    assert "✓e†" in category and "† deprecated" in category


@pytest.mark.parametrize("field", ["status", "maturityLevel"])
def test_either_field_makes_it_deprecated(tmp_path: Path, field: str) -> None:
    other = {"status": "maturityLevel", "maturityLevel": "status"}[field]
    build = _build(tmp_path, lambda record: record.pop(other))
    assert "✓e†" in _row((build / "summary.md").read_text("utf-8")).split()


def test_without_a_deprecated_record_nothing_changes(tmp_path: Path) -> None:
    def undeprecate(record: dict[str, Any]) -> None:
        for key in ("status", "maturityLevel", "deprecatedDate", "supersededBy"):
            record.pop(key)

    build = _build(tmp_path, undeprecate)
    for path in build.rglob("*.md"):
        assert "†" not in path.read_text("utf-8"), path
    assert "✓e" in _row((build / "summary.md").read_text("utf-8")).split()


def test_a_deprecated_but_unavailable_record_stays_a_plain_cross(tmp_path: Path) -> None:
    build = _build(tmp_path, lambda record: record.update(available=False))
    summary = (build / "summary.md").read_text("utf-8")
    assert "†" not in summary and "✗" in _row(summary).split()


def test_the_site_data_says_deprecated(tmp_path: Path) -> None:
    build = _build(tmp_path)
    matrices = [path for path in build.rglob("*.json") if '"legend"' in path.read_text("utf-8")]
    assert matrices, "no matrix document in the site's data"
    data = json.loads(matrices[0].read_text("utf-8"))
    cell = next(row for row in data["capabilities"] if row["name"] == NAME)["cells"][AGENT]
    assert cell["deprecated"] is True and cell["mark"] == "✓e†"
    assert "†" in data["legend"]


def test_llms_txt_explains_the_mark_its_documents_show(tmp_path: Path) -> None:
    assert "† deprecated" in (_build(tmp_path) / "site" / "llms.txt").read_text("utf-8")


def test_the_page_says_deprecated_and_offers_only_the_tiers_in_use(tmp_path: Path) -> None:
    page = (_build(tmp_path) / "site" / "index.html").read_text("utf-8")
    assert "✓ enterprise, deprecated" in page
    tier_menu = page[page.index('id="filter-tier"') :]
    tier_menu = tier_menu[: tier_menu.index("</select>")]
    used = {r.get("tier") for doc in documents().values() for r in doc["capabilities"] if r["available"]} - {None}
    offered = {part.split('"')[0] for part in tier_menu.split('<option value="')[2:]}
    assert offered == used


def test_without_tiers_the_tier_filter_is_hidden(tmp_path: Path) -> None:
    docs = documents()
    for document in docs.values():
        for record in document["capabilities"]:
            record.pop("tier", None)
    write_catalog(tmp_path, docs)
    assert run_cli(["build", "-q"], tmp_path).exit_code == 0
    page = (tmp_path / "build" / "site" / "index.html").read_text("utf-8")
    assert '<div class="field" hidden><label for="filter-tier">' in page


@pytest.mark.parametrize("available", [True, False])
def test_a_date_without_deprecation_stops_the_build(tmp_path: Path, available: bool) -> None:
    """A deprecatedDate on a record neither status nor maturityLevel calls deprecated would make the agent's
    page say "deprecated <date>" while the matrices show no †: validate refuses it at the date, so no build
    says both."""
    docs = documents()
    record = next(r for r in docs[AGENT]["capabilities"] if r["name"] == NAME)
    record.update(status="active", maturityLevel="stable", available=available)
    write_catalog(tmp_path, docs)
    result = run_cli(["build", "-q"], tmp_path)
    assert result.exit_code == 1
    assert not (tmp_path / "build").exists()
    report = json.loads(run_cli(["validate", "--format", "json"], tmp_path).output)
    [error] = [d for d in report["diagnostics"] if d["code"] == "deprecated-date"]
    assert error["severity"] == "error" and error["pointer"].endswith(".deprecatedDate")
