"""A large catalog is validated in a second process while the build goes on (`compiler/background.py`).

The threshold is lowered to 0 here, so the small factory catalog takes that path; each test compares it
with the in-process path or checks that nothing invalid can land:
- valid data: the same build directory and the same report as validating first;
- invalid data: exit 1, the same errors, the previous build untouched, also when building from the
  invalid data crashes first;
- a file edited between the build's read and the check's read: the build stops and says so;
- a check process that dies: the build validates in-process instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, snapshot, write_catalog

from capidx.compiler import background


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_catalog(tmp_path)
    return tmp_path


def _build(project: Path, out: str = "build") -> Any:
    return run_cli(["build", "--out", str(project / out)], project)


def _in_background(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Send every catalog to the background path; returns a list that counts the checks started."""
    started: list[int] = []
    original = background.BackgroundValidation.__init__

    def counting(self: Any, *args: Any) -> None:
        started.append(1)
        original(self, *args)

    monkeypatch.setattr(background, "LARGE_INPUT", 0)
    monkeypatch.setattr(background.BackgroundValidation, "__init__", counting)
    return started


def test_a_valid_catalog_builds_the_same_directory_and_report(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _build(project, "first")
    assert first.exit_code == 0
    started = _in_background(monkeypatch)
    second = _build(project, "second")
    assert started == [1]
    assert second.exit_code == 0, second.stderr
    assert snapshot(project / "first") == snapshot(project / "second")  # inputDigest included: same inputs
    assert second.stderr == first.stderr and "never verified" in second.stderr
    assert second.stdout.replace("second", "first") == first.stdout


def test_invalid_data_fails_with_the_same_errors_and_keeps_the_previous_build(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _build(project).exit_code == 0
    before = snapshot(project / "build")
    docs = documents()
    del docs["claude-code"]["capabilities"][0]["available"]
    write_catalog(project, docs)
    in_process = _build(project)
    started = _in_background(monkeypatch)
    result = _build(project)
    assert started == [1]
    assert result.exit_code == 1
    assert result.stderr == in_process.stderr and "1 validation error" in result.stderr
    assert "build not written" in result.stderr
    assert snapshot(project / "build") == before
    assert not [path for path in project.iterdir() if path.name.startswith(".capidx-")]


def test_data_that_breaks_the_build_is_reported_as_invalid_not_as_a_crash(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = documents()
    docs["copilot-cli"]["capabilities"] = "not a list"
    write_catalog(project, docs)
    started = _in_background(monkeypatch)
    result = _build(project)
    assert started == [1]
    assert result.exit_code == 1
    assert "$.capabilities" in result.stderr and "validation error" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (project / "build").exists()


def test_a_file_edited_during_the_build_stops_it(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started = _in_background(monkeypatch)
    original = background.load_unchecked
    target = sorted(project.rglob("current.json"))[0]

    def load_then_edit(config: Any) -> Any:
        loaded = original(config)
        target.write_text(target.read_text("utf-8") + "\n", "utf-8")  # still valid, other bytes
        return loaded

    monkeypatch.setattr(background, "load_unchecked", load_then_edit)
    result = _build(project)
    assert started == [1]
    assert result.exit_code == 1
    assert "the catalog changed while it was being built; run capidx build again" in result.stderr
    assert not (project / "build").exists()


def test_a_check_process_that_dies_means_validating_in_process(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _build(project, "reference")
    _in_background(monkeypatch)
    monkeypatch.setattr(background, "_CHILD", "import sys; sys.exit('no checks today')")
    result = _build(project, "reference-2")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == reference.stderr
    assert snapshot(project / "reference-2") == snapshot(project / "reference")
