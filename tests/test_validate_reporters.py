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


def _schema_error(path: str, line: int) -> Diagnostic:
    return Diagnostic(path, line, 3, f"$.capabilities[{line}]", "error", "bad value", None, "schema")


def test_github_annotates_every_error_line_while_under_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_case("invalid/type-hints", tmp_path, monkeypatch, "--format", "github")

    assert result.exit_code == 1
    annotations = _annotations(result.output)
    lines = (4, 5, 10, 11, 12, 13, 14, 17, 22)
    assert [a.split(",col=")[0] for a in annotations] == [
        f"::error file=agents/alpha/capabilities/current.yaml,line={line}" for line in lines
    ]
    assert not any("more of this kind" in a for a in annotations)
    assert annotations == result.output.splitlines()  # nothing grouped: the annotations are the whole output


def test_github_groups_only_what_is_over_the_limit_and_logs_every_problem() -> None:
    diagnostics = tuple(_never_verified("a.json", line) for line in range(1, 41))
    diagnostics += (_schema_error("a.json", 7),)
    text = GithubReporter().render(ValidationResult((), None, diagnostics, (Path("a.json"),)))

    annotations = _annotations(text)
    errors, warnings = annotations[:1], annotations[1:]
    assert errors == ["::error file=a.json,line=7,col=3,title=capidx schema::$.capabilities[7]: bad value"]
    assert len(warnings) == 10  # nine lines alone, then one annotation for the other 31
    assert [w.split(",col=")[0] for w in warnings[:9]] == [f"::warning file=a.json,line={n}" for n in range(1, 10)]
    assert warnings[9].startswith("::warning file=a.json,line=10,col=9,title=capidx never-verified (31)::")
    assert "and 30 more of this kind in this file (lines 11, 12," in warnings[9]
    # The log still has every problem, as the text form says them after the annotations: the sources never verified
    # of a file on one line with their count, as `capidx validate` prints them; each on a line of its own with -v.
    logged = [line for line in text.splitlines() if not line.startswith("::")]
    assert [line for line in logged if "never verified" in line] == [
        "a.json:1:9: warning: 40 sources never verified (add verifiedDate after checking them; -v lists them)"
    ]
    assert any("bad value" in line for line in logged)
    verbose = GithubReporter(verbosity=1).render(ValidationResult((), None, diagnostics, (Path("a.json"),)))
    assert sum("source never verified" in line for line in verbose.splitlines() if not line.startswith("::")) == 40


def test_github_names_one_other_line_as_line() -> None:
    diagnostics = tuple(_schema_error("a.json", line) for line in range(10, 21))  # eleven: two share one
    annotations = _annotations(GithubReporter().render(ValidationResult((), None, diagnostics, ())))

    assert len(annotations) == 10
    assert annotations[-1].startswith("::error file=a.json,line=19,col=3,title=capidx schema (2)::")
    assert annotations[-1].endswith("%0Aand 1 more of this kind in this file (line 20)")


def test_github_fills_the_limit_across_files_and_rules() -> None:
    crowded = tuple(_schema_error("a.json", line) for line in range(1, 13))
    others = (_schema_error("b.json", 5), Diagnostic("c.json", 2, 1, "$", "error", "bad", None, "io"))
    annotations = _annotations(GithubReporter().render(ValidationResult((), None, crowded + others, ())))

    assert len(annotations) == 10
    grouped = [a for a in annotations if "more of this kind" in a]
    assert len(grouped) == 1 and "title=capidx schema (5)" in grouped[0]  # a.json's last five lines
    assert "(lines 9, 10, 11, 12)" in grouped[0]
    assert sum("file=b.json" in a or "file=c.json" in a for a in annotations) == 2


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


@pytest.mark.parametrize("verbose", [False, True])
def test_github_step_summary_lists_every_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verbose: bool
) -> None:
    """Every problem has a row; a file's sources never verified share one with their count unless -v (a catalog's
    171 unverified sources made a 44 KB table of them, every other problem lost among its rows)."""
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    flags = ("-v",) if verbose else ()
    result = run_case("valid/warnings-grouped", tmp_path, monkeypatch, "--format", "github", *flags)

    assert result.exit_code == 0
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### capidx validate: ✅ valid")  # appended, not overwritten
    table = [line for line in text.splitlines() if line.startswith("| warning |")]
    annotations = _annotations(result.output)
    assert len(annotations) == 7  # under GitHub's limits: an annotation for each
    unverified = [row for row in table if "never-verified" in row]
    others = [row for row in table if "never-verified" not in row]
    assert len(others) == 2
    if verbose:
        assert len(unverified) == 5
    else:
        (row,) = unverified
        assert "| 5 sources never verified (add verifiedDate after checking them; -v lists them) |" in row


def test_github_step_summary_escapes_table_cells() -> None:
    hostile = Diagnostic("a.json", 1, 1, "$", "error", "a | b\n# heading", None, "schema")
    markdown = GithubReporter().step_summary(ValidationResult((), None, (hostile,), (Path("a.json"),)))
    row = markdown.splitlines()[-1]
    assert row.startswith("| error | a.json:1:1 | schema | ")
    assert row.count(" | ") == 3  # the message's pipe cannot open a fifth cell
    assert "\n# heading" not in markdown


def test_github_step_summary_shows_no_image_or_link_from_the_data() -> None:
    """The job's page renders the summary as Markdown: a category quoted from a fork's data,
    '![x](https://attacker.example/p.png)', showed an image there (and a link would have been one to follow)."""
    quoted = "'![x](https://attacker.example/p.png)' is not a valid category; see [docs](https://attacker.example)"
    hostile = Diagnostic("[a](https://attacker.example).json", 1, 1, "$", "error", quoted, None, "schema")
    markdown = GithubReporter().step_summary(ValidationResult((), None, (hostile,), (Path("a.json"),)))
    assert "attacker.example/p.png" in markdown and "](https://attacker" not in markdown


def test_github_without_a_step_summary_writes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = run_case("valid/warnings-grouped", tmp_path, monkeypatch, "--format", "github")
    assert result.exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]


def test_github_annotations_name_files_from_the_top_of_their_work_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub places an annotation by its path from the repository's top, whatever folder the step ran in: run in a
    subfolder (`working-directory: agents/alpha`), or above a checkout in `head/`, validate named the files by their
    absolute path or from the working folder, and the annotations landed on no file."""
    repository = tmp_path / "head"
    shutil.copytree(CASES / "valid/warnings-grouped", repository, ignore=shutil.ignore_patterns("expected.txt"))
    (repository / ".git").mkdir()
    (repository / "capidx.yaml").write_text("# defaults\n", "utf-8")
    (document,) = sorted(repository.glob("agents/*/capabilities/current.json"))
    expected = f"file={document.relative_to(repository).as_posix()},"

    monkeypatch.chdir(document.parent.parent)  # the agent's folder
    below = CliRunner().invoke(cli, ["validate", "--config", "../../capidx.yaml", "--format", "github"])
    monkeypatch.chdir(tmp_path)  # the workspace above the checkout
    above = CliRunner().invoke(cli, ["validate", "--config", "head/capidx.yaml", "--format", "github"])

    for result in (below, above):
        annotations = _annotations(result.output)
        assert annotations and all(expected in line for line in annotations), result.output


def test_an_annotated_folder_holding_its_own_git_is_named_from_the_work_tree_above(tmp_path: Path) -> None:
    """A diagnostic's folder that is a nested work tree's top (a submodule: `.git` a file) is named from the top of
    the checkout that holds it, as GitHub places annotations: not as shown."""
    from capidx.compiler.worktree import annotation_path

    (tmp_path / ".git").mkdir()
    nested = tmp_path / "vendor" / "catalog"
    nested.mkdir(parents=True)
    (nested / ".git").write_text("gitdir: ../../.git/modules/catalog\n", "utf-8")
    assert annotation_path(nested, "shown") == "vendor/catalog"
    assert annotation_path(nested / "a.json", "shown") == "a.json"  # a file in it: from its own work tree's top
