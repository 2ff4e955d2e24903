"""Output formats of `capidx validate`: text (grouping, quiet, verbose, colour), json and github."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from capidx.cli import cli
from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.validate.reporters import REPORTER_BY_NAME, GithubReporter, TextReporter, use_color
from capidx.compiler.validate.run import ValidationResult

CASES = Path(__file__).parent / "cases" / "validate"


def run_case(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    project = tmp_path / "project"
    shutil.copytree(CASES / case, project, ignore=shutil.ignore_patterns("expected.txt"))
    monkeypatch.chdir(project)
    return CliRunner().invoke(cli, ["validate", "--today", "2026-01-15", *args])


def test_json_output_is_one_stable_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_case("invalid/many-errors", tmp_path, monkeypatch, "--format", "json")

    assert result.exit_code == 1
    report = json.loads(result.output)
    assert list(report) == ["ok", "errors", "warnings", "files", "diagnostics"]
    assert (report["ok"], report["errors"], report["warnings"], report["files"]) == (False, 7, 0, 2)
    first = report["diagnostics"][0]
    assert first == {
        "path": "agents/alpha/capabilities/current.json",
        "line": 11,
        "col": 19,
        "pointer": "$.capabilities[0].category",
        "severity": "error",
        "code": "schema",
        "message": "'review' is not a valid category",
        "hint": first["hint"],
    }
    assert first["hint"].startswith("allowed values: code-completion, ")


def test_json_lists_every_warning_even_when_text_would_group_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_case("valid/warnings-grouped", tmp_path, monkeypatch, "--format", "json")

    assert result.exit_code == 0
    report = json.loads(result.output)
    assert report["ok"] is True
    codes = [d["code"] for d in report["diagnostics"]]
    assert codes.count("never-verified") == 5
    assert {"verified-age", "stale"} <= set(codes)


def test_github_annotations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_case("invalid/use-when-regex", tmp_path, monkeypatch, "--format", "github")

    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == (
        "::error file=agents/alpha/capabilities/current.json,line=16,col=22,title=capidx use-when-regex::"
        "$.capabilities[0].useWhen[0].pattern: invalid regular expression: missing ), unterminated subpattern at "
        "position 0 (patterns are Python regular expressions)"
    )
    assert lines[1].startswith("::warning file=agents/alpha/capabilities/current.json,line=20,col=22,")
    assert len(lines) == 2  # annotations only


def test_github_escaping() -> None:
    diagnostic = Diagnostic("a,b:c.json", None, None, "", "error", "100% sure\nreally", None, "io")
    line = GithubReporter().render(ValidationResult((), None, (diagnostic,)))
    assert line == "::error file=a%2Cb%3Ac.json,title=capidx io::100%25 sure%0Areally"


def test_text_groups_only_repetitive_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    diagnostics = tuple(
        Diagnostic(
            "x.json",
            line,
            9,
            f"$.capabilities[{line}].sources[0]",
            "warning",
            "source never verified",
            None,
            "never-verified",
        )
        for line in (1, 2, 3)
    )
    text = TextReporter().render(ValidationResult((), None, diagnostics, (Path("x.json"),)))
    assert text.count("source never verified") == 3  # three are listed, more would be grouped
    more = (*diagnostics, Diagnostic("x.json", 4, 9, "$", "warning", "source never verified", None, "never-verified"))
    text = TextReporter().render(ValidationResult((), None, more, (Path("x.json"),)))
    assert text.splitlines()[0] == (
        "x.json:1:9: warning: 4 sources never verified (add verifiedDate after checking them; -v lists them)"
    )


def test_quiet_shows_errors_without_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_case("invalid/strict", tmp_path, monkeypatch, "-q")

    assert result.exit_code == 0  # without --strict the two problems are warnings
    assert result.output == ""


def test_quiet_and_verbose_exclude_each_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_case("valid/full", tmp_path, monkeypatch, "-q", "-v")

    assert result.exit_code == 2
    assert "exclude each other" in result.output


def test_no_colour_when_not_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_case("invalid/many-errors", tmp_path, monkeypatch)
    assert "\x1b[" not in result.output


def test_colour_rules() -> None:
    assert use_color(True, {}.items())
    assert not use_color(False, {}.items())
    assert not use_color(True, {"NO_COLOR": "1"}.items())
    assert use_color(True, {"NO_COLOR": ""}.items())  # no-color.org: set *and non-empty*


def test_text_colour_marks_errors_and_warnings() -> None:
    diagnostics = (
        Diagnostic("x.json", 1, 2, "$.a", "error", "bad", "fix it"),
        Diagnostic("x.json", 3, 4, "$.b", "warning", "meh"),
    )
    text = TextReporter(color=True).render(ValidationResult((), None, diagnostics, (Path("x.json"),)))
    assert "\x1b[31m" in text and "\x1b[33m" in text  # red, yellow
    plain = TextReporter().render(ValidationResult((), None, diagnostics, (Path("x.json"),)))
    assert plain.splitlines() == [
        "x.json:1:2: $.a: bad (fix it)",
        "x.json:3:4: $.b: warning: meh",
        "1 error, 1 warning in 1 file",
    ]


def test_every_format_is_registered() -> None:
    from capidx.compiler.cli import VALIDATE_FORMATS as FORMATS

    assert set(FORMATS) == set(REPORTER_BY_NAME)


def _never_verified(path: str, line: int) -> Diagnostic:
    pointer = f"$.capabilities[{line}]"
    return Diagnostic(path, line, 9, pointer, "warning", "source never verified", None, "never-verified")


def _annotations(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("::")]


def test_github_groups_one_annotation_per_file_and_rule_and_logs_every_diagnostic() -> None:
    diagnostics = tuple(_never_verified("a.json", line) for line in range(1, 41))
    diagnostics += (Diagnostic("a.json", 7, 3, "$.x", "error", "bad value", None, "schema"),)
    text = GithubReporter().render(ValidationResult((), None, diagnostics, (Path("a.json"),)))

    annotations = _annotations(text)
    assert len(annotations) == 2  # one per (file, rule), errors first
    assert annotations[0].startswith("::error file=a.json,line=7,col=3,title=capidx schema::")
    assert annotations[1].startswith("::warning file=a.json,line=1,col=9,title=capidx never-verified (40)::")
    assert "and 39 more of this kind in this file (lines 2, 3," in annotations[1]
    # The log still has every diagnostic, as text lines after the annotations.
    assert sum("source never verified" in line for line in text.splitlines() if not line.startswith("::")) == 40


def test_github_caps_annotations_per_level_at_what_github_shows() -> None:
    diagnostics = tuple(
        Diagnostic(f"f{n:02}.json", 1, 1, "$", "error", "bad", None, "schema") for n in range(15)
    ) + tuple(_never_verified(f"f{n:02}.json", 2) for n in range(3))
    text = GithubReporter().render(ValidationResult((), None, diagnostics, ()))

    annotations = _annotations(text)
    errors = [a for a in annotations if a.startswith("::error")]
    assert len(errors) == 10  # nine files, then one annotation counting the rest
    assert errors[-1].startswith("::error title=capidx validate::6 errors more in f09.json, f10.json")
    assert len([a for a in annotations if a.startswith("::warning")]) == 3
    assert sum(line.startswith("f") and ": bad" in line for line in text.splitlines()) == 15


def test_github_step_summary_lists_every_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_case("valid/warnings-grouped", tmp_path, monkeypatch, "--format", "github")

    assert result.exit_code == 0
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### capidx validate: ✅ valid")  # appended, not overwritten
    table = [line for line in text.splitlines() if line.startswith("| warning |")]
    annotations = _annotations(result.output)
    assert len(table) > len(annotations)  # everything the annotations group is listed one by one
    assert sum("never-verified" in row for row in table) == 5


def test_github_step_summary_escapes_table_cells() -> None:
    hostile = Diagnostic("a.json", 1, 1, "$", "error", "a | b\n# heading", None, "schema")
    markdown = GithubReporter().step_summary(ValidationResult((), None, (hostile,), (Path("a.json"),)))
    row = markdown.splitlines()[-1]
    assert row.startswith("| error | a.json:1:1 | schema | ")
    assert row.count(" | ") == 3  # the message's pipe cannot open a fifth cell
    assert "\n# heading" not in markdown


def test_github_without_a_step_summary_writes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = run_case("valid/warnings-grouped", tmp_path, monkeypatch, "--format", "github")
    assert result.exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]
