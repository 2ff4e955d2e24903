"""The CLI a new user meets (issue #15, item 6; issue 29, item 9): `python -m capidx`, help for every option, one
way to write defaults and placeholders, shell completion, build and report tables that name columns alike."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from capidx.cli import cli
from capidx.compiler import __version__

ROOT = Path(__file__).resolve().parents[1]
_DEFAULT_ONLY = re.compile(r"\s*\[default: [^\]]*\]\s*")


def _commands() -> list[tuple[str, click.Command]]:
    """Every command under the group, by its full name (`capidx`, `capidx build`, ...)."""
    found = [("capidx", cli)]
    context = click.Context(cli)
    for name in cli.list_commands(context):
        found.append((f"capidx {name}", cli.get_command(context, name)))
    return found


def _undescribed(command: click.Command) -> list[str]:
    """Options whose help is missing or says nothing but the default."""
    return [
        "/".join(param.opts)
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not _DEFAULT_ONLY.sub("", param.help or "").strip()
    ]


def test_python_dash_m_capidx_is_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "capidx", "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"capidx, version {__version__}"


def test_python_dash_m_capidx_passes_exit_codes_through(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "capidx", "report"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and "no build at" in result.stderr


# A Ctrl-C that arrives while the CLI's modules load: an import hook raises what the signal would raise.
_INTERRUPTED_IMPORT = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "capidx.compiler.cli":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
from capidx.__main__ import main
main()
"""


def test_ctrl_c_while_the_cli_loads_ends_with_130_not_a_traceback() -> None:
    result = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT], capture_output=True, text=True, timeout=120)
    assert result.returncode == 130
    assert result.stderr == "\ninterrupted\n"  # no traceback: on a line of its own after the terminal's ^C


def test_ctrl_c_is_said_once_by_every_command(tmp_path: Path) -> None:
    """A Ctrl-C of a command that says nothing of its own (validate) is said `interrupted`, after the terminal's ^C,
    exit 130; a build says what became of the build and nothing more (an empty line followed it)."""
    from capidx.cli import cli

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    catalog = Path(__file__).resolve().parents[1] / "agents"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("capidx.compiler.validate.run.execute", interrupted)
        validated = CliRunner().invoke(cli, ["validate", "--agents", str(catalog)])
    assert validated.exit_code == 130
    assert validated.stderr == "\ninterrupted\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("capidx.compiler.emit.pipeline.run_build", interrupted)
        built = CliRunner().invoke(cli, ["build", "-q", "--agents", str(catalog), "--out", str(tmp_path / "b")])
    assert built.exit_code == 130
    assert built.stderr.startswith("\ninterrupted: ") and built.stderr.count("interrupted") == 1
    assert built.stderr.endswith("\n") and not built.stderr.endswith("\n\n")


def test_output_the_terminal_cannot_encode_is_escaped_not_a_traceback(tmp_path: Path) -> None:
    """A Windows console's cp1252 (or a non-UTF-8 locale) has no ✅: the report is printed with an escape in its
    place, exit 0, not a UnicodeEncodeError's traceback and exit 1, which reads as a breached budget."""
    from manifest_factory import make_manifest, write_build

    build = write_build(tmp_path / "build", make_manifest(budgets={"full": 100_000}))
    env = {**os.environ, "PYTHONIOENCODING": "cp1252", "GITHUB_STEP_SUMMARY": ""}
    result = subprocess.run(
        [sys.executable, "-m", "capidx", "report", "--build", str(build), "--format", "markdown"],
        capture_output=True,
        text=True,
        encoding="cp1252",
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "\\u2705 **all budgets met**" in result.stdout


@pytest.mark.parametrize("encoding", ["cp1252", "cp1251"])  # neither has the emoji; cp1251 has no é
def test_json_on_an_output_that_cannot_encode_it_stays_json(tmp_path: Path, encoding: str) -> None:
    """What standard output cannot encode is escaped, and in `--format json` it lands inside a JSON string: the
    escape must be one JSON reads as the same character (`\\ud83d\\ude00`, `\\u00e9`), not Python's `\\U0001f600` or
    `\\xe9`, which make the whole document unreadable to the program the output is piped to, with exit 0."""
    from manifest_factory import make_manifest, write_build

    build = write_build(tmp_path / "caf\u00e9 \U0001f600" / "build", make_manifest(budgets={"full": 100_000}))
    env = {**os.environ, "PYTHONIOENCODING": encoding, "GITHUB_STEP_SUMMARY": ""}
    result = subprocess.run(
        [sys.executable, "-m", "capidx", "report", "--build", str(build), "--format", "json"],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.decode(encoding))["build"]["manifest"] == str(build / "manifest.json")


def test_the_console_script_is_the_guarded_entry() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^capidx = "capidx\.__main__:main"$', pyproject, re.MULTILINE)


def test_ctrl_c_during_a_command_ends_it_with_130(monkeypatch: pytest.MonkeyPatch) -> None:
    from capidx.compiler.validate import run

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "execute", interrupted)
    result = CliRunner().invoke(cli, ["validate"], catch_exceptions=False)
    assert result.exit_code == 130
    assert "Aborted" not in result.output


def test_ctrl_c_while_the_arguments_are_read_ends_with_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(type(cli), "parse_args", interrupted)  # what the signal raises while click parses
    result = CliRunner().invoke(cli, ["validate"], catch_exceptions=False)
    assert result.exit_code == 130
    assert "Aborted" not in result.output


def test_the_walk_covers_every_command() -> None:
    assert {name for name, _command in _commands()} >= {
        "capidx",
        "capidx init",
        "capidx validate",
        "capidx build",
        "capidx report",
        "capidx serve",
    }


def test_the_check_catches_an_option_without_a_description() -> None:
    @click.command()
    @click.option("--described", help="Does a thing.")
    @click.option("--bare")
    @click.option("--only-default", help="[default: stdio]")
    def sample(described: str, bare: str, only_default: str) -> None:
        """A command."""

    assert _undescribed(sample) == ["--bare", "--only-default"]


@pytest.mark.parametrize("name", [name for name, _command in _commands()])
def test_every_option_has_a_description(name: str) -> None:
    command = dict(_commands())[name]
    assert command.help, f"{name} has no help text"
    assert _undescribed(command) == [], f"{name}: options without a description"


@pytest.mark.parametrize("name", [name for name, _command in _commands()])
def test_every_command_shows_its_help(name: str) -> None:
    from click.testing import CliRunner

    args = name.split()[1:]
    result = CliRunner().invoke(cli, [*args, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


def test_bash_completion_as_docs_cli_md_documents_it() -> None:
    """`_CAPIDX_COMPLETE=bash_source capidx` prints a completion script; completing `capidx re` offers
    `report` (click's protocol: COMP_WORDS / COMP_CWORD, answers as `type,value` lines)."""
    reference = (ROOT / "docs" / "cli.md").read_text("utf-8")
    assert "_CAPIDX_COMPLETE=bash_source capidx" in reference
    base = {key: value for key, value in os.environ.items() if not key.startswith("_CAPIDX_COMPLETE")}
    command = [sys.executable, "-c", "from capidx.cli import cli; cli(prog_name='capidx')"]
    source = subprocess.run(
        command, env={**base, "_CAPIDX_COMPLETE": "bash_source"}, capture_output=True, text=True, timeout=120
    )
    assert source.returncode == 0 and "complete -o nosort -F _capidx_completion capidx" in source.stdout
    answer = subprocess.run(
        command,
        env={**base, "_CAPIDX_COMPLETE": "bash_complete", "COMP_WORDS": "capidx re", "COMP_CWORD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert answer.returncode == 0
    assert "plain,report" in answer.stdout.splitlines()


_HAND_WRITTEN_DEFAULT = re.compile(r"(?<!\[)\bdefault\s*:", re.IGNORECASE)
_RAW_TYPES = ("INTEGER RANGE", "FLOAT RANGE", "INTEGER", "FLOAT", "DIRECTORY", "PATH", "TEXT")


def _help(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name", [name for name, _command in _commands()])
def test_defaults_are_written_one_way(name: str) -> None:
    """Issue 29, item 9: click's `[default: …]` only, never a "(default: …)" or "Default: …" by hand."""
    text = " ".join(_help(*name.split()[1:]).split())  # click wraps lines: "[default:" may end one
    assert not _HAND_WRITTEN_DEFAULT.findall(text), text


@pytest.mark.parametrize("name", [name for name, _command in _commands()])
def test_placeholders_are_named(name: str) -> None:
    options = _help(*name.split()[1:]).split("\nOptions:\n", 1)[1]
    for raw in _RAW_TYPES:
        assert not re.search(rf"--[\w-]+ {raw}\b", options), (raw, options)


def test_one_metavar_per_meaning() -> None:
    metavars: dict[str, set[str]] = {}
    for _name, command in _commands():
        for param in command.params:
            if isinstance(param, click.Option) and not param.is_flag and param.opts[0] in ("--agents", "--config"):
                metavars.setdefault(param.opts[0], set()).add(param.make_metavar(click.Context(command)))
    assert metavars == {"--agents": {"DIR"}, "--config": {"FILE"}}


def test_the_command_list_is_not_cut() -> None:
    listing = _help().split("\nCommands:\n", 1)[1]
    rows = [line.split(None, 1) for line in listing.splitlines() if line.strip()]
    assert {row[0] for row in rows} == set(cli.commands)
    assert all(not row[1].endswith("...") for row in rows), rows


def test_build_and_report_name_their_columns_alike(tmp_path: Path) -> None:
    """The quick start prints build's table and then report's: the same figure has the same name."""
    from catalog_factory import run_cli, write_catalog

    write_catalog(tmp_path)
    built = run_cli(["build"], cwd=tmp_path)
    assert built.exit_code == 0, built.output
    build_header = next(line for line in built.stdout.splitlines() if line.startswith("kind ")).split()
    reported = run_cli(["report"], cwd=tmp_path)
    assert reported.exit_code == 0, reported.output
    report_header = next(line for line in reported.stdout.splitlines() if line.startswith("kind ")).split()
    shared = [name for name in report_header if name in build_header]
    assert shared == build_header, (build_header, report_header)  # every build column, in report's order
    assert build_header[:4] == ["kind", "docs", "tokens", "largest"]
