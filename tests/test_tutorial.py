"""docs/tutorial.md, followed as a newcomer follows it: its catalog is read from its own code blocks, and what its
build and report blocks show must be what the current code prints (a newcomer found five figures out of date).

The token totals may differ by a few tokens, as the tutorial says (`site/api/index.json` holds a digest of the
files, whose bytes depend on how they were typed); every other figure shown must be printed as shown.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import run_cli

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_TOTAL = re.compile(r"OK: all budgets met; ([\d,]+) cl100k_base tokens in (\d+) documents")
TOTAL_SLACK = 5  # tokens a total may differ by: the digest of the files as typed


def _blocks(language: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(TUTORIAL.read_text("utf-8")) if lang == language]


def _section(title: str) -> str:
    text = TUTORIAL.read_text("utf-8")
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def _catalog() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Anvil, Bellows and the alias table as the tutorial's JSON blocks give them: Anvil's file, its first record's
    sources (a fragment after `"available": true,`), its second record, Bellows's file, the alias table."""
    anvil, sources, second, bellows, aliases = _blocks("json")
    anvil_document = json.loads(anvil)
    anvil_document["capabilities"][0] |= json.loads("{" + sources + "}")
    anvil_document["capabilities"].append(json.loads(second))
    return anvil_document, json.loads(bellows), json.loads(aliases)


def _shown_rows(block: str) -> list[str]:
    """The lines of an output block that the current code must print as they are: table rows and the overview
    lines (not `…`, nor the lines naming the reader's own folder)."""
    return [line for line in block.splitlines() if line.strip() and "…" not in line and not line.startswith("config:")]


@pytest.fixture(name="catalog")
def fixture_catalog(tmp_path: Path) -> Path:
    """Steps 2 to 6: `capidx init my-catalog`, the example agent renamed, both agents' files and the alias table."""
    assert run_cli(["init", "my-catalog"], tmp_path).exit_code == 0
    root = tmp_path / "my-catalog"
    (root / "agents" / "example-agent").rename(root / "agents" / "anvil")
    anvil, bellows, aliases = _catalog()
    (root / "agents" / "anvil" / "capabilities" / "current.json").write_text(json.dumps(anvil, indent=2), "utf-8")
    (root / "agents" / "bellows" / "capabilities").mkdir(parents=True)
    (root / "agents" / "bellows" / "capabilities" / "current.json").write_text(json.dumps(bellows, indent=2), "utf-8")
    (root / "agents" / "aliases.json").write_text(json.dumps(aliases, indent=2), "utf-8")
    return root


def test_the_tutorial_s_build_and_report_print_what_it_shows(catalog: Path) -> None:
    validated = run_cli(["validate"], catalog)
    assert validated.exit_code == 0, validated.output
    assert validated.output.splitlines()[-1] == "3 files valid (3 warnings)"

    built = run_cli(["build"], catalog)
    assert built.exit_code == 0, built.output
    build_block = next(block for block in _blocks("text") if "build written" in block)
    for row in _shown_rows(build_block):
        if row.startswith(("agents/", "build written")):
            continue  # paths and line numbers of the reader's own files
        assert row in built.output.splitlines(), f"{row!r} not printed:\n{built.output}"

    reported = run_cli(["report"], catalog)
    assert reported.exit_code == 0, reported.output
    report_block = next(block for block in _blocks("text") if block.startswith("capidx token report"))
    for row in _shown_rows(report_block):
        if not row.startswith("OK:"):
            assert row in reported.output.splitlines(), f"{row!r} not printed:\n{reported.output}"
    _same_total(report_block, reported.output)


def test_the_tutorial_s_budget_breach_and_fix_print_what_it_shows(catalog: Path) -> None:
    config = catalog / "capidx.yaml"
    text = config.read_text("utf-8")
    assert "  # agent: 6000" in text  # the line the tutorial says to replace
    config.write_text(text.replace("  # agent: 6000", "  agent: 200"), "utf-8")
    section = _section("8. Report and a budget")
    breach_block, fixed_block = [body for lang, body in _FENCE.findall(section) if lang == "text"][1:3]

    breached = run_cli(["build"], catalog)
    assert breached.exit_code == 1, breached.output
    for row in _shown_rows(breach_block):
        assert row in breached.output.splitlines(), f"{row!r} not printed:\n{breached.output}"

    config.write_text(text.replace("  # agent: 6000", "  agent: 300"), "utf-8")
    assert run_cli(["build", "-q"], catalog).exit_code == 0
    reported = run_cli(["report"], catalog)
    assert reported.exit_code == 0, reported.output
    for row in _shown_rows(fixed_block):
        if not row.startswith("OK:"):
            assert row in reported.output.splitlines(), f"{row!r} not printed:\n{reported.output}"
    _same_total(fixed_block, reported.output)


def _same_total(block: str, output: str) -> None:
    shown, printed = _TOTAL.search(block), _TOTAL.search(output)
    assert shown and printed, output
    assert shown.group(2) == printed.group(2)  # documents
    difference = abs(int(shown.group(1).replace(",", "")) - int(printed.group(1).replace(",", "")))
    assert difference <= TOTAL_SLACK, f"the tutorial shows {shown.group(0)!r}, the report {printed.group(0)!r}"
