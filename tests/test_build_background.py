"""Validation in a child process while the build goes on (`compiler/emit/background.py`).

Each test runs both ways of starting the check: a fork of the build (where `can_fork` allows it: every
catalog) and a new Python (elsewhere: large catalogs only; the threshold is lowered to 0 here so that the
small factory catalog takes that path). Each compares with the in-process path or checks that nothing
invalid can land:
- valid data: the same build directory and the same report as validating first;
- invalid data: exit 1, the same errors, the previous build untouched, also when building from the
  invalid data crashes first;
- a file edited between the build's read and the check's read: the build stops and says so;
- a check process that dies: the build validates in-process instead.
And for the fork: the child never returns into the caller's code, `close` stops and reaps it, and no
fork is made with a second thread alive or on macOS.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, snapshot, write_catalog

from capidx.compiler.config import load_config
from capidx.compiler.emit import background

HAS_FORK = hasattr(os, "fork") and sys.platform != "darwin"
START_METHODS = [
    pytest.param("fork", marks=pytest.mark.skipif(not HAS_FORK, reason="no safe fork here")),
    "python",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_catalog(tmp_path)
    return tmp_path


def _build(project: Path, out: str = "build") -> Any:
    return run_cli(["build", "--out", str(project / out)], project)


def _in_background(monkeypatch: pytest.MonkeyPatch, method: str) -> list[int]:
    """Send every catalog to the background path, started by `method`; returns a list that counts the checks
    started."""
    started: list[int] = []
    original = background.BackgroundValidation.__init__

    def counting(self: Any, *args: Any) -> None:
        started.append(1)
        original(self, *args)

    monkeypatch.setattr(background, "can_fork", lambda: method == "fork")
    monkeypatch.setattr(background, "LARGE_INPUT", 0)
    monkeypatch.setattr(background.BackgroundValidation, "__init__", counting)
    return started


@pytest.mark.parametrize("method", START_METHODS)
def test_a_valid_catalog_builds_the_same_directory_and_report(
    project: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    first = _build(project, "first")
    assert first.exit_code == 0
    started = _in_background(monkeypatch, method)
    second = _build(project, "second")
    assert started == [1]
    assert second.exit_code == 0, second.stderr
    assert snapshot(project / "first") == snapshot(project / "second")  # inputDigest included: same inputs
    assert second.stderr == first.stderr and "never verified" in second.stderr
    assert second.stdout.replace("second", "first") == first.stdout


@pytest.mark.parametrize("method", START_METHODS)
def test_invalid_data_fails_with_the_same_errors_and_keeps_the_previous_build(
    project: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    assert _build(project).exit_code == 0
    before = snapshot(project / "build")
    docs = documents()
    del docs["claude-code"]["capabilities"][0]["available"]
    write_catalog(project, docs)
    in_process = _build(project)
    started = _in_background(monkeypatch, method)
    result = _build(project)
    assert started == [1]
    assert result.exit_code == 1
    assert result.stderr == in_process.stderr and "1 validation error" in result.stderr
    assert "build not written" in result.stderr
    assert snapshot(project / "build") == before
    assert not [path for path in project.iterdir() if path.name.startswith(".capidx-")]


@pytest.mark.parametrize("method", START_METHODS)
def test_data_that_breaks_the_build_is_reported_as_invalid_not_as_a_crash(
    project: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    docs = documents()
    docs["copilot-cli"]["capabilities"] = "not a list"
    write_catalog(project, docs)
    started = _in_background(monkeypatch, method)
    result = _build(project)
    assert started == [1]
    assert result.exit_code == 1
    assert "$.capabilities" in result.stderr and "validation error" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (project / "build").exists()


@pytest.mark.parametrize("method", START_METHODS)
def test_a_file_edited_during_the_build_stops_it(project: Path, monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    started = _in_background(monkeypatch, method)
    original = background.load_unchecked
    target = sorted(project.rglob("current.json"))[0]

    def load_then_edit(config: Any, fork: bool) -> Any:
        loaded = original(config, fork)
        target.write_text(target.read_text("utf-8") + "\n", "utf-8")  # still valid, other bytes
        return loaded

    monkeypatch.setattr(background, "load_unchecked", load_then_edit)
    result = _build(project)
    assert started == [1]
    assert result.exit_code == 1
    assert "the catalog changed while it was being built; run capidx build again" in result.stderr
    assert not (project / "build").exists()


@pytest.mark.parametrize("method", START_METHODS)
def test_a_check_process_that_dies_means_validating_in_process(
    project: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    reference = _build(project, "reference")
    _in_background(monkeypatch, method)
    if method == "fork":
        monkeypatch.setattr(background, "_verdict", _no_checks_today)
    else:
        monkeypatch.setattr(background, "_CHILD", "import sys; sys.exit('no checks today')")
    result = _build(project, "reference-2")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == reference.stderr
    assert snapshot(project / "reference-2") == snapshot(project / "reference")


def _no_checks_today(*args: Any) -> Any:
    sys.exit("no checks today")


# --- the fork -----------------------------------------------------------------------------------------


def test_a_small_catalog_is_checked_in_a_fork_by_default(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not background.can_fork():
        pytest.skip("no safe fork in this process")
    started: list[bool] = []
    original = background.BackgroundValidation.__init__

    def recording(self: Any, config: Any, strict: bool, verbosity: int, fork: bool) -> None:
        started.append(fork)
        original(self, config, strict, verbosity, fork)

    monkeypatch.setattr(background.BackgroundValidation, "__init__", recording)
    assert _build(project).exit_code == 0
    assert started == [True]


@pytest.mark.skipif(not HAS_FORK, reason="no safe fork here")
@pytest.mark.parametrize("failure", [SystemExit, KeyboardInterrupt, RuntimeError])
def test_a_failing_forked_check_never_returns_into_the_build(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, failure: type[BaseException]
) -> None:
    """Whatever the child raises, it exits (with its reason for the parent) instead of running the caller's code:
    the build validates in-process, and only one process reports."""
    reference = _build(project, "reference")
    _in_background(monkeypatch, "fork")
    pid_file = tmp_path / "child.pid"

    def failing(*args: Any) -> Any:
        pid_file.write_text(str(os.getpid()), "utf-8")
        raise failure("checks failed")

    monkeypatch.setattr(background, "_verdict", failing)
    result = _build(project, "again")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == reference.stderr
    assert snapshot(project / "again") == snapshot(project / "reference")
    child = int(pid_file.read_text("utf-8"))
    assert child != os.getpid()
    with pytest.raises(ProcessLookupError):  # exited and reaped
        os.kill(child, 0)


@pytest.mark.skipif(not HAS_FORK, reason="no safe fork here")
def test_the_reason_a_forked_check_failed_is_reported(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "_verdict", _no_checks_today)
    config, _ = load_config(None, project)
    loaded = background.load_unchecked(config, True)
    assert loaded is not None
    checker = background.BackgroundValidation(config, False, 0, True)
    try:
        with pytest.raises(OSError, match="the validation process stopped: SystemExit: no checks today"):
            checker.verdict(loaded)
    finally:
        checker.close()


@pytest.mark.skipif(not HAS_FORK, reason="no safe fork here")
def test_closing_stops_and_reaps_a_forked_check(project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"

    def slow(*args: Any) -> Any:
        # Written whole, then renamed: the parent polls for the file and must never read it half written.
        pid_file.with_suffix(".tmp").write_text(str(os.getpid()), "utf-8")
        pid_file.with_suffix(".tmp").replace(pid_file)
        time.sleep(60)

    monkeypatch.setattr(background, "_verdict", slow)
    config, _ = load_config(None, project)
    checker = background.BackgroundValidation(config, False, 0, True)
    deadline = time.monotonic() + 10
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    child = int(pid_file.read_text("utf-8"))
    checker.close()
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    checker.close()  # harmless twice


def test_no_fork_with_a_second_thread_alive_or_on_macos(monkeypatch: pytest.MonkeyPatch) -> None:
    if not background.can_fork():
        pytest.skip("no safe fork in this process")
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not background.can_fork()
    finally:
        release.set()
        thread.join()
    assert background.can_fork()
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not background.can_fork()


def test_without_a_fork_a_small_catalog_is_validated_first_in_process(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no fork is safe, a small catalog is not worth a new Python: validated before the build, same result."""
    reference = _build(project, "reference")
    started: list[int] = []
    monkeypatch.setattr(background, "can_fork", lambda: False)
    monkeypatch.setattr(background.BackgroundValidation, "__init__", lambda *args: started.append(1))
    result = _build(project, "again")
    assert started == []
    assert result.exit_code == 0 and result.stderr == reference.stderr
    assert snapshot(project / "again") == snapshot(project / "reference")


def test_without_a_fork_only_a_large_catalog_is_loaded_for_the_background(project: Path) -> None:
    config, _ = load_config(None, project)
    assert background.load_unchecked(config, False) is None  # the factory catalog is far below LARGE_INPUT
    loaded = background.load_unchecked(config, True)
    assert loaded is not None and len(loaded.documents) == len(documents())
