"""`capidx build` as a real process: a killed build, determinism across cwd/locale/hash seed/file order."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import ALIASES, documents, run_cli, snapshot, write_catalog

from capidx.compiler.emit.write import OLD_PREFIX, PAUSE_ENV, TEMP_PREFIX

pytestmark = pytest.mark.slow

CAPIDX = [sys.executable, "-c", "from capidx.cli import main; main()"]
# As started from a terminal: Ctrl-C is Python's KeyboardInterrupt even when the test run itself was started with
# SIGINT ignored (a background job of a shell without job control), which its processes would otherwise inherit.
AT_A_TERMINAL = [
    sys.executable,
    "-c",
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); from capidx.cli import main; main()",
]


def _env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != PAUSE_ENV}
    env.update(extra)
    return env


def _paused_build(project: Path, out: Path, stderr: int = subprocess.DEVNULL) -> tuple[subprocess.Popen[bytes], Path]:
    """A build of `project` into `out`, started and waited for until it pauses before the swap (the test
    hook); returns the process (the caller kills it) and its temporary directory."""
    ready = project / f"ready-{out.name}"
    process = subprocess.Popen(
        [*AT_A_TERMINAL, "build", "--out", str(out), "-q"],
        cwd=project,
        env=_env(**{PAUSE_ENV: str(ready)}),
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    deadline = time.monotonic() + 60
    while not ready.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if not ready.exists():
        process.kill()
        process.wait()
        raise AssertionError("the build never reached the swap")
    return process, Path(ready.read_text("utf-8"))


def test_a_killed_build_leaves_the_previous_one_and_the_next_build_cleans_up(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    out = tmp_path / "build"
    assert run_cli(["build", "--out", str(out), "-q"], tmp_path).exit_code == 0
    before = snapshot(out)
    docs = documents()
    docs["claude-code"]["capabilities"][0]["description"] = "Changed, so the new build differs."
    write_catalog(tmp_path, docs)

    process, temp = _paused_build(tmp_path, out)
    try:
        assert temp.name.startswith(TEMP_PREFIX) and (temp / "manifest.json").is_file()
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert snapshot(out) == before  # killed while writing: the previous build is intact
    assert temp.is_dir()  # and the half-finished one is left behind

    assert run_cli(["build", "--out", str(out), "-q"], tmp_path).exit_code == 0
    assert not temp.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith((TEMP_PREFIX, OLD_PREFIX))] == []
    assert "Changed, so the new build differs." in (out / "full.md").read_text("utf-8")


def _project(tmp_path: Path, *, built: bool) -> Path:
    """A catalog in `tmp_path` and its build folder; `built`: built once, then the catalog changed, so that the
    next build has a new build to swap in."""
    write_catalog(tmp_path)
    out = tmp_path / "build"
    if built:
        assert run_cli(["build", "--out", str(out), "-q"], tmp_path).exit_code == 0
        docs = documents()
        docs["claude-code"]["capabilities"][0]["description"] = "Changed, so the new build differs."
        write_catalog(tmp_path, docs)
    return out


@pytest.mark.parametrize("previous", [True, False], ids=["over-a-build", "first-build"])
def test_ctrl_c_during_a_build_says_what_became_of_it_and_exits_130(tmp_path: Path, previous: bool) -> None:
    out = _project(tmp_path, built=previous)
    before = snapshot(out) if previous else None
    process, temp = _paused_build(tmp_path, out, stderr=subprocess.PIPE)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    told = stderr.decode("utf-8")
    assert process.returncode == 130, told
    assert "Traceback" not in told
    if previous:
        assert f"interrupted: build not written; {out} is unchanged" in told
        assert snapshot(out) == before
    else:
        assert f"interrupted: build not written; nothing is at {out}" in told
        assert not out.exists()
    assert not temp.exists()  # its own temporary directory, removed on the way out


@pytest.mark.parametrize("previous", [True, False], ids=["over-a-build", "first-build"])
def test_ctrl_c_just_after_the_swap_says_the_new_build_is_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, previous: bool
) -> None:
    from capidx.compiler.emit import write

    out = _project(tmp_path, built=previous)
    real = write._swap

    def swap_then_ctrl_c(temp: Path, target: Path, *args: object) -> None:
        real(temp, target, *args)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(write, "_swap", swap_then_ctrl_c)
    result = run_cli(["build", "--out", str(out), "-q"], tmp_path)
    assert result.exit_code == 130
    assert f"interrupted: the new build was already in {out}" in result.stderr
    assert "not written" not in result.stderr
    assert previous is False or "Changed, so the new build differs." in (out / "full.md").read_text("utf-8")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith((TEMP_PREFIX, OLD_PREFIX))] == []


def test_ctrl_c_while_the_outcome_prints_says_the_new_build_is_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build is in place before its table and "build written" are printed: a Ctrl-C then says so and exits
    130, like a Ctrl-C just after the swap, not 130 with no word."""
    from capidx.compiler.emit import pipeline

    out = _project(tmp_path, built=True)
    real = pipeline._print_outcome

    def print_then_ctrl_c(*args: object) -> None:
        real(*args)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "_print_outcome", print_then_ctrl_c)
    result = run_cli(["build", "--out", str(out)], tmp_path)
    assert result.exit_code == 130
    assert f"build written: {out}" in result.output
    assert f"interrupted: the new build was already in {out}" in result.stderr
    assert "Changed, so the new build differs." in (out / "full.md").read_text("utf-8")


def test_a_ctrl_c_as_a_finished_build_returns_keeps_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C sent as soon as "build written" appeared exited 130 with no word, a finished build
    read as an interrupted one by a script. A Ctrl-C landing once the build has returned keeps its code."""
    from capidx.compiler.emit import pipeline

    write_catalog(tmp_path)
    real = pipeline.execute

    def build_then_ctrl_c(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "execute", build_then_ctrl_c)
    result = run_cli(["build"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "build written" in result.output and "interrupted" not in result.output


@pytest.mark.parametrize(
    "command", [["build", "-q"], ["validate", "-q"], ["report"], ["inject", "--check", "AGENTS.md"]]
)
def test_a_ctrl_c_after_the_outcome_is_printed_keeps_the_commands_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """Every command keeps its outcome's code for a Ctrl-C landing once the outcome is recorded, as it exits."""
    from capidx.compiler import finished

    write_catalog(tmp_path)
    (tmp_path / "AGENTS.md").write_text("# Notes\n", encoding="utf-8")
    assert run_cli(["build", "-q"], tmp_path).exit_code == 0
    expected = run_cli(command, tmp_path).exit_code  # inject --check: 1, no block written yet
    assert expected != 2, "the command ran to its outcome, not a usage error"
    real = finished.said

    def said_then_ctrl_c(code: int) -> None:
        real(code)
        raise KeyboardInterrupt

    monkeypatch.setattr(finished, "said", said_then_ctrl_c)
    result = run_cli(command, tmp_path)
    assert result.exit_code == expected != 130, result.output
    assert "interrupted" not in result.output


def test_once_a_command_has_finished_a_late_ctrl_c_is_ignored(tmp_path: Path) -> None:
    """After the outcome is printed, the interpreter's shutdown takes tens of milliseconds: a Ctrl-C then would turn
    a finished build's exit code into the signal's. Seen from an exit handler, SIGINT is ignored by then."""
    write_catalog(tmp_path)
    probe = (
        "import atexit, signal; "
        "atexit.register(lambda: print('late Ctrl-C ignored:', signal.getsignal(signal.SIGINT) is signal.SIG_IGN)); "
        "from capidx.cli import main; main()"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe, "validate", "-q"], cwd=tmp_path, env=_env(), capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
    assert "late Ctrl-C ignored: True" in completed.stdout


def test_signals_during_the_swap_wait_until_both_renames_are_done() -> None:
    from capidx.compiler.emit import write

    done = []
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal (AT_A_TERMINAL)
    try:
        with pytest.raises(KeyboardInterrupt), write.signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("second rename")
        assert done == ["second rename"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_a_build_started_with_ctrl_c_ignored_keeps_ignoring_it() -> None:
    from capidx.compiler.emit import write

    inherited = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job: Ctrl-C is not for it
    try:
        with write.signals_held():
            os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # nothing raised, and still ignored
    finally:
        signal.signal(signal.SIGINT, inherited)


@pytest.mark.skipif(sys.platform == "win32", reason="builds mark their temporary directory with flock (POSIX)")
def test_a_build_never_removes_the_temporary_directory_of_a_build_running_beside_it(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    running, temp = _paused_build(tmp_path, tmp_path / "one")
    try:
        # A second build into a sibling folder cleans leftovers of the same parent: not this one, in use.
        assert run_cli(["build", "--out", str(tmp_path / "two"), "-q"], tmp_path).exit_code == 0
        assert (temp / "manifest.json").is_file()
    finally:
        running.send_signal(signal.SIGKILL)
        running.wait()
    # Killed, it holds nothing any more: now it is a leftover, and the next build removes it.
    assert run_cli(["build", "--out", str(tmp_path / "two"), "-q"], tmp_path).exit_code == 0
    assert not temp.exists()


def test_builds_are_byte_identical_whatever_the_cwd_locale_hash_seed_or_file_order(tmp_path: Path) -> None:
    first = tmp_path / "first"
    write_catalog(first)
    assert run_cli(["build", "--out", str(first / "build"), "-q"], first).exit_code == 0

    second = tmp_path / "second" / "nested"
    docs = documents()
    order = list(docs.items())
    random.Random(7).shuffle(order)
    write_catalog(second, dict(reversed(order)), aliases=None)  # other creation order
    shutil.copy(first / "agents" / "aliases.json", second / "agents" / "aliases.json")
    cwd = tmp_path / "somewhere-else"
    cwd.mkdir()
    completed = subprocess.run(
        [*CAPIDX, "build", "--agents", str(second / "agents"), "--out", str(second / "build"), "-q"],
        cwd=cwd,
        env=_env(LC_ALL="C", LANG="C", PYTHONHASHSEED="12345", TZ="Pacific/Kiritimati"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert snapshot(second / "build") == snapshot(first / "build")
    assert ALIASES  # the alias table is part of both builds


def test_the_cli_entry_point_builds(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    completed = subprocess.run(
        [*CAPIDX, "build", "--out", str(tmp_path / "site")], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    header = completed.stdout.splitlines()[0].split()
    assert header == ["kind", "docs", "tokens", "largest", "budget", "status"]
    assert f"build written: {tmp_path / 'site'}" in completed.stdout


def test_ctrl_c_while_the_build_loads_its_configuration_says_nothing_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the build starts (reading capidx.yaml, finding the catalog) a Ctrl-C still says what became of it."""
    from capidx.compiler import config

    out = _project(tmp_path, built=True)
    before = (out / "manifest.json").read_bytes()

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(config, "load_config", interrupted)
    result = run_cli(["build", "--out", str(out), "-q"], tmp_path)
    assert result.exit_code == 130
    assert "interrupted: build not started; nothing was written" in result.stderr
    assert (out / "manifest.json").read_bytes() == before
