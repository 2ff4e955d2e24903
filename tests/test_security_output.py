"""What the commands print of text from a fork's pull request: never a line of its own, never a raw control character.

CI runs `capidx validate` and `capidx build` on forks' pull requests, and on a GitHub runner a line of the log that
starts `::error …` or `::warning …` is a workflow command (an annotation anywhere in the repository, `::add-mask::`
hiding what follows); an escape sequence clears a terminal or sets its title. Every message quoting a file name, a
template's or a library's error, a value of capidx.yaml or of a build's manifest is printed as validate's reports
are (`capidx.schema.printable.visible`): each such character written as an escape, `\\x0a` for a line break.
Everything goes through the command line, on the attacks as they were reported.
"""

from __future__ import annotations

import json
import logging
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import built_project, documents, run_cli, snapshot, write_catalog

from capidx.compiler.emit.madehere import remember

FORGED = "::error file=README.md,line=1,title=capidx::forged annotation"
ESCAPES = "\x1b[2J\x1b]0;owned\x07"  # clear the screen, set the terminal's title, ring the bell


def _forged_lines(text: str) -> list[str]:
    """The lines a GitHub runner would read as workflow commands (it strips the indentation first)."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::")]


def _raw_controls(text: str) -> list[str]:
    return [ch for ch in text if ch != "\n" and not ch.isprintable()]


def _printed(result: Any) -> str:
    return result.stdout + result.stderr


# --- capidx build ---------------------------------------------------------------------------------------------


def test_a_template_error_quoting_a_workflow_command_prints_no_line_of_it(tmp_path: Path) -> None:
    """Jinja's TemplateNotFound quotes the name a template includes, line breaks and all: `build -q` printed the
    error, then a line `::error file=README.md,…`, an annotation on the runner."""
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "summary.md.j2").write_text('{% include "nope\\n' + FORGED + '\\n" %}\n', "utf-8")
    result = run_cli(["build", "-q"], tmp_path)
    assert result.exit_code == 1
    assert _forged_lines(_printed(result)) == []
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error: template error:")]
    assert f"TemplateNotFound: nope\\x0a{FORGED}\\x0a" in error
    assert "Traceback" not in _printed(result)
    assert not (tmp_path / "build").exists()


def test_raw_terminal_escapes_in_a_template_error_are_written_as_escapes(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "summary.md.j2").write_text('{% include "\\x1b[2J\\x1b]0;owned\\x07" %}', "utf-8")
    result = run_cli(["build", "-q"], tmp_path)
    assert result.exit_code == 1
    assert _raw_controls(_printed(result)) == []
    assert "TemplateNotFound: \\x1b[2J\\x1b]0;owned\\x07" in result.stderr


def test_a_syntax_error_in_a_template_named_with_a_line_break_stays_on_its_line(tmp_path: Path) -> None:
    """The other branch: a syntax error is placed at its file, whose name may hold the line break."""
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    part = f"part\n{FORGED}.md.j2"
    (tmp_path / "templates" / part).write_text("{{ unclosed\n", "utf-8")
    (tmp_path / "templates" / "summary.md.j2").write_text("{% include " + json.dumps(part) + " %}\n", "utf-8")
    result = run_cli(["build", "-q"], tmp_path)
    assert result.exit_code == 1
    assert _forged_lines(_printed(result)) == []
    assert f"template error: templates/part\\x0a{FORGED}.md.j2:1: template syntax error:" in result.stderr


def test_a_template_file_named_with_a_line_break_is_warned_about_on_one_line(tmp_path: Path) -> None:
    """The warning about a user template nothing uses names the file: `warning: templates/a`, then a line
    `::warning title=forged::…` of the file's name."""
    write_catalog(tmp_path)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "a\n::warning title=forged::from a file name.md.j2").write_text("x", "utf-8")
    result = run_cli(["build"], tmp_path)
    assert result.exit_code == 0, result.output
    assert _forged_lines(_printed(result)) == []
    assert "warning: templates/a\\x0a::warning title=forged::from a file name.md.j2: overrides no" in result.stderr


def test_an_up_to_date_build_whose_manifest_was_written_by_hand_prints_its_figures_on_their_lines(
    tmp_path: Path,
) -> None:
    """An up-to-date build prints its manifest's table and budgets. A pull request's `build/` is built again, never
    up to date (test_security_output_dir.py, `test_a_build_capidx_did_not_write_is_never_up_to_date`); a manifest
    edited by hand is printed escaped all the same, here once taken as the build capidx wrote."""
    project = built_project(tmp_path)
    manifest_path = project / "build" / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    for row in manifest["artifacts"]:
        if row["kind"] == "stats":
            row["kind"] = f"stats\n{FORGED}{ESCAPES}"
    manifest["budgets"] = [
        {"kind": f"full\n{FORGED}", "budget": 1, "tokens": 2, "uri": f"x\n{FORGED}", "ok": False},
        *manifest["budgets"],
    ]
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    remember(project / "build")
    result = run_cli(["build"], project)
    assert "up to date" in result.stdout, result.output
    assert _forged_lines(_printed(result)) == [] and _raw_controls(_printed(result)) == []
    assert f"stats\\x0a{FORGED}" in result.stdout


# --- capidx report, inject, init ------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["text", "markdown", "github", "json", "html"])
def test_a_report_of_a_manifest_written_by_hand_prints_no_forged_line(tmp_path: Path, form: str) -> None:
    """A build directory may come from anywhere (`--against` a baseline committed in the pull request): its kinds,
    URIs and titles are free text, and were printed as they are."""
    project = built_project(tmp_path)
    manifest_path = project / "build" / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    for row in manifest["artifacts"]:
        row["title"] += f"\n{FORGED}{ESCAPES}"
        row["uri"] += f"\n{FORGED}"
    manifest["budgets"] = [
        {"kind": f"full\n{FORGED}", "budget": 1, "tokens": 2, "uri": f"x\n{FORGED}{ESCAPES}", "ok": False}
    ]
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    result = run_cli(["report", "--build", "build", "--against", "build", "--format", form, "--no-fail"], project)
    assert result.exit_code == 0, result.output
    printed = _printed(result)
    ours = tuple(f"::{level} title=capidx " for level in ("error", "warning", "notice"))  # --format github's own
    assert [line for line in _forged_lines(printed) if not line.startswith(ours)] == []
    assert _raw_controls(printed) == []
    assert FORGED in printed or "forged annotation" in printed  # still said, on the line it belongs to


def test_a_markdown_report_of_a_manifest_written_by_hand_makes_no_link_or_image(tmp_path: Path) -> None:
    """A budget row's kind and URI are free text in a forged manifest (a baseline committed in the pull request) and
    reach the Markdown report, posted as the pull request's comment: a link or an image there was live (a 'review'
    link to any site, an image fetched from it). Their brackets are escaped now: shown as written, never markup."""
    project = built_project(tmp_path)
    manifest_path = project / "build" / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    link, image = "[review](https://evil.example/x)", "![](https://evil.example/p.png)"
    escaped = "\\[escaped\\](https://evil.example/y)"  # its backslashes would escape the escapes added
    manifest["budgets"] = [
        {"kind": f"full {link} {escaped}", "budget": 1, "tokens": 2, "uri": f"x {image}", "ok": False}
    ]
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    result = run_cli(["report", "--build", "build", "--format", "markdown", "--no-fail"], project)
    assert result.exit_code == 0, result.output
    # no `](` after an even run of backslashes (none, or escaped ones): no link or image is closed
    assert re.findall(r"(?<!\\)(?:\\\\)*\]\(", result.stdout) == []
    assert "\\[review\\](https://evil.example/x)" in result.stdout
    assert "!\\[\\](https://evil.example/p.png)" in result.stdout
    assert "\\\\\\[escaped\\\\\\](https://evil.example/y)" in result.stdout  # shown as written


def test_inject_names_a_file_given_with_a_line_break_on_one_line(tmp_path: Path) -> None:
    """pre-commit hands `capidx inject` the names of the files a pull request changed."""
    project = built_project(tmp_path)
    name = f"a\n{FORGED}.md"
    result = run_cli(["inject", name], project)
    assert result.exit_code == 0, result.output
    assert (project / name).exists()
    assert _forged_lines(_printed(result)) == []
    assert f"a\\x0a{FORGED}.md: created" in result.stdout
    checked = run_cli(["inject", "--check", name], project)
    assert checked.exit_code == 0 and _forged_lines(_printed(checked)) == []


def test_inject_refusing_a_file_given_with_a_line_break_names_it_on_one_line(tmp_path: Path) -> None:
    project = built_project(tmp_path)
    name = f"a\n{FORGED}.py"  # named as code: refused
    result = run_cli(["inject", name], project)
    assert result.exit_code == 2
    assert _forged_lines(_printed(result)) == []
    assert f"a\\x0a{FORGED}.py" in result.stderr and "nothing written" in result.stderr


def test_init_beside_a_capidx_yaml_of_a_fork_prints_its_paths_on_their_lines(tmp_path: Path) -> None:
    """`capidx init` in a project that has a capidx.yaml says what that file names (a catalog not there yet)."""
    (tmp_path / "capidx.yaml").write_text(f'paths:\n  agents: "catalog\\n{FORGED}"\n', "utf-8")
    result = run_cli(["init", "--force"], tmp_path)  # the capidx.yaml is theirs: kept, the rest written
    assert result.exit_code == 0, result.output
    assert _forged_lines(_printed(result)) == []
    assert f"catalog\\x0a{FORGED}" in result.stdout


# --- capidx serve ---------------------------------------------------------------------------------------------


def test_serve_names_a_build_directory_of_capidx_yaml_on_one_line(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text(f'serve:\n  build: "nothing\\n{FORGED}\\x1b[2J"\n', "utf-8")
    printed = run_cli(["serve", "--print-config"], tmp_path)
    assert printed.exit_code == 0, printed.output
    assert _forged_lines(printed.stdout) == [] and _raw_controls(printed.stdout) == []
    assert f"nothing\\x0a{FORGED}\\x1b[2J" in printed.stdout
    refused = run_cli(["serve"], tmp_path)
    assert refused.exit_code == 2
    assert _forged_lines(_printed(refused)) == [] and _raw_controls(_printed(refused)) == []
    assert f"nothing\\x0a{FORGED}" in refused.stderr


def test_serve_s_log_lines_quoting_data_stay_one_line_and_so_does_a_traceback() -> None:
    """The server's log (server/logs.py) quotes paths and what loading a new build raised; a traceback keeps its
    lines, each one starting `capidx serve: ` as a record does."""
    from capidx.server import logs

    stream = StringIO()
    handler, stop = logs.start(stream)
    logger = logging.getLogger("capidx.test.output")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("not serving %s: %s", f"site/x\n{FORGED}", ESCAPES)
        try:
            raise ValueError(f"bad build\n{FORGED}{ESCAPES}")
        except ValueError as error:
            logger.error("ignoring the new build: %s", error, exc_info=error)
    finally:
        logger.removeHandler(handler)
        stop()
    written = stream.getvalue()
    assert f"capidx serve: WARNING: not serving site/x\\x0a{FORGED}: \\x1b[2J" in written
    assert "Traceback (most recent call last):" in written
    assert _forged_lines(written) == [] and _raw_controls(written) == []
    assert all(line.startswith(logs.PREFIX) for line in written.splitlines())


# --- the one escaping ---------------------------------------------------------------------------------------


def test_every_command_escapes_with_validate_s_own_function() -> None:
    """One piece of code: validate's reporters, the compiler's errors and the server's log share it."""
    from capidx.compiler import diagnostics
    from capidx.schema import printable

    assert diagnostics.visible is printable.visible
    assert diagnostics.visible_lines is printable.visible_lines


def test_a_message_of_several_lines_keeps_its_own_lines_only() -> None:
    from capidx.compiler.errors import UsageError

    assert str(UsageError(["first: a\nb", "second"])) == "first: a\\x0ab\nsecond"
    assert str(UsageError(f"one\n{FORGED}")) == f"one\\x0a{FORGED}"


def test_the_build_prints_nothing_new_for_a_clean_project(tmp_path: Path) -> None:
    """A project with nothing to escape prints what it printed before: the escaping only touches what it must."""
    project = built_project(tmp_path)
    before = snapshot(project / "build")
    result = run_cli(["build"], project)
    assert result.exit_code == 0
    assert "\\x" not in _printed(result)
    assert snapshot(project / "build") == before


COMMAND_FOLDER = "::error file=README.md,title=capidx::forged"  # a folder's name: one line, no line break needed


def test_a_path_named_as_a_workflow_command_never_begins_a_line(tmp_path: Path) -> None:
    """A line of validate's and build's reports begins with the file's path, relative to the working folder: a
    catalog folder a fork's capidx.yaml names `::error …` (a valid name on Linux and in git) made every line about
    its files an annotation of the pull request's. Such a path is written from the current folder, `./::error …`."""
    docs = documents()
    next(iter(docs.values()))["agent"]["name"] = ""
    write_catalog(tmp_path, docs, agents_dir=COMMAND_FOLDER)
    (tmp_path / "capidx.yaml").write_text(f'paths:\n  agents: "{COMMAND_FOLDER}"\n', "utf-8")
    checked = run_cli(["validate"], tmp_path)
    built = run_cli(["build", "-q"], tmp_path)
    for result in (checked, built):
        assert result.exit_code == 1, _printed(result)
        assert _forged_lines(_printed(result)) == [], _printed(result)
        assert f"./{COMMAND_FOLDER}/" in _printed(result) and "$.agent.name: must not be empty" in _printed(result)


def test_inject_names_a_file_named_as_a_workflow_command_from_the_current_folder(tmp_path: Path) -> None:
    """pre-commit hands `capidx inject` the names of the files a pull request changed; each line of its output
    begins with one."""
    project = built_project(tmp_path)
    for name, code in ((f"{COMMAND_FOLDER}.md", 0), (f" {COMMAND_FOLDER}.py", 2)):  # refused as code: an error line
        result = run_cli(["inject", name], project)
        assert result.exit_code == code, _printed(result)
        assert _forged_lines(_printed(result)) == [] and f"./{name}" in _printed(result), _printed(result)
        checked = run_cli(["inject", "--check", name], project)
        assert _forged_lines(_printed(checked)) == [], _printed(checked)


RUNNER_COMMAND = "##[error]forged annotation"  # the runner's first syntax, read anywhere in a line


def test_the_runner_s_first_command_syntax_is_not_printed_from_data(tmp_path: Path) -> None:
    """A GitHub runner reads `##[command]` anywhere in a line of the log, not only at its start: quoted from a
    template's error (build) or from a value validate refuses, it would be an annotation of the pull request's."""
    docs = documents()
    first = next(iter(docs.values()))
    first["capabilities"][0]["tier"] = RUNNER_COMMAND
    write_catalog(tmp_path, docs)
    checked = run_cli(["validate"], tmp_path)
    assert checked.exit_code == 1 and RUNNER_COMMAND.replace("##[", "#\\x23[") in _printed(checked)
    first["capabilities"][0]["tier"] = "free"
    write_catalog(tmp_path, docs)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "summary.md.j2").write_text('{% include "' + RUNNER_COMMAND + '" %}\n', "utf-8")
    built = run_cli(["build", "-q"], tmp_path)
    assert built.exit_code == 1 and "TemplateNotFound" in built.stderr
    for result in (checked, built):
        assert "##[" not in _printed(result), _printed(result)
