"""Data-driven tests for `capidx validate`: one folder per case under tests/cases/validate/{valid,invalid}.

Each case folder is a small project (agents/, maybe capidx.yaml, aliases, a schema) plus `expected.txt`:
every non-comment line must appear within some output line (so it can pin `path:line:col: $.pointer:
message`); directive comments adjust the run:

    # args: --strict            extra command-line arguments (shell syntax)
    # exit: 2                   expected exit code (default: 0 for valid/, 1 for invalid/)
    # today: 2026-01-15         the date freshness is judged against (default below)
    # absent: text              no output line may contain this
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from capidx.cli import cli

CASES = Path(__file__).parent / "cases" / "validate"
DEFAULT_TODAY = "2026-01-15"


@dataclass
class Expectation:
    exit_code: int
    args: list[str] = field(default_factory=list)
    today: str = DEFAULT_TODAY
    present: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)


def parse_expected(path: Path, default_exit: int) -> Expectation:
    expectation = Expectation(default_exit)
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        if not line.startswith("#"):
            expectation.present.append(line)
            continue
        name, _, value = line[1:].strip().partition(":")
        value = value.strip()
        if name == "args":
            expectation.args = shlex.split(value)
        elif name == "exit":
            expectation.exit_code = int(value)
        elif name == "today":
            expectation.today = value
        elif name == "absent":
            expectation.absent.append(value)
    return expectation


def _cases() -> list[pytest.param]:
    return [
        pytest.param(case, 0 if kind == "valid" else 1, id=f"{kind}/{case.name}")
        for kind in ("valid", "invalid")
        for case in sorted((CASES / kind).iterdir())
        if case.is_dir()
    ]


@pytest.mark.parametrize(("case", "default_exit"), _cases())
def test_case(case: Path, default_exit: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expectation = parse_expected(case / "expected.txt", default_exit)
    project = tmp_path / case.name
    shutil.copytree(case, project, ignore=shutil.ignore_patterns("expected.txt"))
    monkeypatch.chdir(project)

    result = CliRunner().invoke(cli, ["validate", "--today", expectation.today, *expectation.args])

    output = result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), output
    assert result.exit_code == expectation.exit_code, output
    lines = output.splitlines()
    for wanted in expectation.present:
        assert any(wanted in line for line in lines), f"missing {wanted!r} in:\n{output}"
    for unwanted in expectation.absent:
        assert not any(unwanted in line for line in lines), f"unexpected {unwanted!r} in:\n{output}"


def test_every_rule_has_a_failing_case() -> None:
    """Each lint code appears in some invalid case's expected output (as its message text)."""
    expected = "\n".join(path.read_text("utf-8") for path in (CASES / "invalid").glob("*/expected.txt"))
    for message in (
        "duplicate capability name",
        "alias target",
        "aliases.json:",
        "but there is no excerpt",
        "invalid regular expression",
        "is not a slug",
        "deprecated capability without deprecatedDate",
        "over the 60-day limit",
        "is in the future",
        "second capability document",
        "duplicate key",
        "may backtrack catastrophically",
        "control character",
        "invisible format character",
        "line break",
        "to form a slug",
        "characters long (at most",
        "lone surrogate",
        "makes the same slug",
        "has category",
        "is not an absolute http(s) URL",
        "empty or only white space",
        "no capabilities recorded",
    ):
        assert message in expected, message
