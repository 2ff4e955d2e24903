"""The CI recipe and the report docs cannot drift from the code.

Every `capidx …` command line in docs/ci.md, docs/report.md, docs/cli.md, docs/inject.md, docs/tutorial.md and the
example workflow is checked against click's command tree as it exists at run time: the command must exist, every flag
must be one of its options, and a value of a choice option must be one of its choices.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner
from manifest_factory import make_manifest, write_build

from capidx.cli import cli
from capidx.compiler.report.formats import MARKER

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WORKFLOW = DOCS / "examples" / "capidx.yml"
PRE_COMMIT = DOCS / "examples" / "pre-commit-config.yaml"
CHECKED_DOCS = (DOCS / "ci.md", DOCS / "report.md", DOCS / "cli.md", DOCS / "inject.md", DOCS / "tutorial.md")

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"(?<!`)`(capidx [^`]+)`(?!`)")
_SHELL_SEPARATOR = re.compile(r"\s(?:&&|\|\||\||;)\s|;\s*$")
_SHELL_LANGUAGES = {"", "bash", "sh", "shell", "console"}


# --- collecting command lines -------------------------------------------------------------------


def _workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _run_scripts(node: Any) -> list[str]:
    """Every `run:` value in a parsed workflow."""
    if isinstance(node, dict):
        found = [node["run"]] if isinstance(node.get("run"), str) else []
        return found + [script for value in node.values() for script in _run_scripts(value)]
    if isinstance(node, list):
        return [script for value in node for script in _run_scripts(value)]
    return []


def _commands_in_shell(script: str) -> list[str]:
    """`capidx …` invocations in a shell script: continuations joined, comments and prompts dropped."""
    commands = []
    for raw in script.replace("\\\n", " ").splitlines():
        line = raw.strip().removeprefix("$ ")
        if line.startswith("#"):
            continue
        for segment in _SHELL_SEPARATOR.split(line):
            segment = segment.strip().strip("()").strip()
            if segment.startswith("capidx "):
                commands.append(segment)
    return commands


def _commands_in_markdown(text: str) -> list[str]:
    commands = []
    for language, body in _FENCE.findall(text):
        if language in _SHELL_LANGUAGES:
            commands += _commands_in_shell(body)
        elif language == "yaml":
            for script in _run_scripts(yaml.safe_load(body)):
                commands += _commands_in_shell(script)
    prose = _FENCE.sub("", text)
    return commands + _INLINE.findall(prose)


def _all_commands() -> list[tuple[str, str]]:
    found = [(WORKFLOW.name, command) for script in _run_scripts(_workflow()) for command in _commands_in_shell(script)]
    for path in CHECKED_DOCS:
        found += [(path.name, command) for command in _commands_in_markdown(path.read_text(encoding="utf-8"))]
    return found


# --- checking them against click ---------------------------------------------------------------


def _options(command: click.Command) -> dict[str, click.Option]:
    return {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }


def command_problems(line: str, group: click.Group = cli) -> list[str]:
    """What is wrong with one `capidx …` line, as messages; empty when click would accept it."""
    tokens = [token.strip("[]") for token in shlex.split(line)]
    if tokens[0] != "capidx":
        return [f"not a capidx command: {line}"]
    group_options = _options(group)
    rest = tokens[1:]
    while rest and rest[0] in group_options:
        rest = rest[1:]
    if not rest:
        return []
    name, *arguments = rest
    command = group.commands.get(name)
    if command is None:
        return [f"{line}: no command {name!r} (commands: {', '.join(sorted(group.commands))})"]
    return _argument_problems(line, name, command, arguments)


def _argument_problems(line: str, name: str, command: click.Command, arguments: list[str]) -> list[str]:
    options = _options(command)
    takes_arguments = any(isinstance(param, click.Argument) for param in command.params)
    problems = []
    index = 0
    while index < len(arguments):
        token = arguments[index]
        index += 1
        if token.startswith("$"):
            continue  # a shell expansion such as "$@"
        if not token.startswith("-"):
            if not takes_arguments:
                problems.append(f"{line}: `capidx {name}` takes no argument {token!r}")
            continue
        flag, has_value, value = token.partition("=")
        option = options.get(flag)
        if option is None:
            problems.append(f"{line}: `capidx {name}` has no option {flag} (options: {', '.join(sorted(options))})")
            continue
        if option.is_flag or option.count:
            continue
        if not has_value and index < len(arguments):
            value = arguments[index]
            index += 1
        if isinstance(option.type, click.Choice) and not value.startswith("$"):
            unknown = [v for v in value.split("|") if v not in option.type.choices]
            if unknown:
                problems.append(f"{line}: {flag} of `capidx {name}` does not accept {unknown} ({option.type.choices})")
    return problems


def test_the_checker_catches_drift() -> None:
    assert command_problems("capidx report --format html --no-fail") == []
    assert command_problems("capidx report [--build DIR] [--format text|markdown]") == []
    assert command_problems("capidx --version") == []
    assert "no command 'reprot'" in command_problems("capidx reprot")[0]
    assert "has no option --baseline" in command_problems("capidx report --baseline x")[0]
    assert "does not accept ['yaml']" in command_problems("capidx report --format=yaml")[0]
    assert "takes no argument 'out'" in command_problems("capidx build out")[0]
    script = 'if [ -f x ]; then set -- --against x; fi\ncapidx report "$@" \\\n  --no-fail | jq .'
    assert [command.split() for command in _commands_in_shell(script)] == [["capidx", "report", '"$@"', "--no-fail"]]
    assert _commands_in_shell("(cd a && capidx build -q)\n# capidx not a command") == ["capidx build -q"]


def test_docs_and_workflow_show_capidx_commands() -> None:
    commands = _all_commands()
    used = {(source, command.split()[1]) for source, command in commands}
    assert {("capidx.yml", "validate"), ("capidx.yml", "build"), ("capidx.yml", "report")} <= used
    assert ("report.md", "report") in used and ("ci.md", "report") in used


@pytest.mark.parametrize(("source", "command"), _all_commands(), ids=lambda value: value)
def test_every_documented_command_line_is_real(source: str, command: str) -> None:
    assert command_problems(command) == [], source


# --- the workflow -------------------------------------------------------------------------------


def test_the_workflow_is_valid_yaml_with_the_expected_jobs() -> None:
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request"} <= set(triggers)
    jobs = workflow["jobs"]
    assert set(jobs) == {"validate", "report"}
    assert jobs["report"]["needs"] == "validate"
    assert jobs["report"]["permissions"]["pull-requests"] == "write"
    assert all("runs-on" in job and job["steps"] for job in jobs.values())


def _steps(job: str) -> list[dict[str, Any]]:
    return _workflow()["jobs"][job]["steps"]


def test_validate_annotates_without_failing_on_staleness_warnings() -> None:
    """Time passing must not turn CI red on unchanged data: no --strict in the recipe."""
    runs = [step["run"] for step in _steps("validate") if "run" in step]
    validate_runs = [run for run in runs if run.startswith("capidx validate")]
    assert validate_runs and all("--format github" in run and "--strict" not in run for run in validate_runs)


def test_the_report_job_builds_both_branches_comments_uploads_and_checks_last() -> None:
    steps = _steps("report")
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    assert uses.count("actions/checkout") == 2
    base = next(step for step in steps if step.get("with", {}).get("path") == "base")
    assert base["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    runs = " ".join(step.get("run", "") for step in steps)
    assert "capidx build --out ../out/head" in runs and "capidx build --out ../out/base" in runs
    assert "--against out/base" in runs
    comment = steps[uses.index("actions/github-script")]
    script = comment["with"]["script"]
    assert MARKER in script and "updateComment" in script and "createComment" in script
    upload = steps[uses.index("actions/upload-artifact")]
    assert upload["if"] == "always()" and upload["with"]["path"] == "out/"
    assert "--format github" in steps[-1]["run"]  # last: it fails the job on a breach
    # in the checkout, where ./capidx.yaml is: from the workspace root a breach's annotation named no file
    assert steps[-1]["working-directory"] == "head" and "--build ../out/head" in steps[-1]["run"]


def test_ci_md_shows_the_example_files_verbatim() -> None:
    text = (DOCS / "ci.md").read_text(encoding="utf-8")
    blocks = [body for language, body in _FENCE.findall(text) if language == "yaml"]
    assert WORKFLOW.read_text(encoding="utf-8") in blocks
    assert PRE_COMMIT.read_text(encoding="utf-8") in blocks


def test_the_pre_commit_example_uses_the_capidx_validate_hook() -> None:
    config = yaml.safe_load(PRE_COMMIT.read_text(encoding="utf-8"))
    (repo,) = config["repos"]
    assert repo["repo"] and repo["rev"]
    assert [hook["id"] for hook in repo["hooks"]] == ["capidx-validate"]
    hooks_file = ROOT / ".pre-commit-hooks.yaml"
    if hooks_file.exists():  # written by the packaging work; check the id once it is there
        defined = {hook["id"] for hook in yaml.safe_load(hooks_file.read_text(encoding="utf-8"))}
        assert "capidx-validate" in defined


# --- docs/report.md ----------------------------------------------------------------------------


def test_report_md_documents_every_option() -> None:
    text = (DOCS / "report.md").read_text(encoding="utf-8")
    command = cli.commands["report"]
    for param in command.params:
        if isinstance(param, click.Option) and param.opts[0].startswith("--") and param.name != "help":
            assert f"`{param.opts[0]}" in text, param.opts[0]


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in _keys(item)}
    if isinstance(value, list):
        return {key for item in value for key in _keys(item)}
    return set()


def test_report_md_documents_every_json_key(tmp_path: Path) -> None:
    base = write_build(tmp_path / "base", make_manifest(agents=("alpha-cli",), budgets={"full": 20_000}))
    head = write_build(tmp_path / "head", make_manifest(budgets={"full": 20_000}, encodings=("cl100k_base", "o")))
    result = CliRunner().invoke(cli, ["report", "--build", str(head), "--against", str(base), "--format", "json"])
    keys = _keys(json.loads(result.output)) - {"cl100k_base", "o"}  # encodings are data, not keys
    text = (DOCS / "report.md").read_text(encoding="utf-8")
    undocumented = sorted(key for key in keys if f"`{key}`" not in text and f'"{key}"' not in text)
    assert undocumented == []


# --- docs/cli.md ------------------------------------------------------------------------------------


def _visible_commands(group: click.Group, prefix: str = "capidx") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        if command.hidden:
            continue
        found.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            found += _visible_commands(command, f"{prefix} {name}")
    return found


@pytest.mark.parametrize(("name", "command"), _visible_commands(cli), ids=lambda value: str(value))
def test_cli_md_documents_every_command_and_option(name: str, command: click.Command) -> None:
    """The command reference documents the whole CLI: every visible command has a section, and
    every visible option is named (all its long forms, or its short form)."""
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert f"## `{name}" in text
    missing = []
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden or param.name == "help":
            continue
        flags = (*param.opts, *param.secondary_opts)
        longs, shorts = [f for f in flags if f.startswith("--")], [f for f in flags if not f.startswith("--")]
        if not all(flag in text for flag in longs) and not any(f"`{flag}" in text for flag in shorts):
            missing.append(param.opts[0])
    assert missing == []
