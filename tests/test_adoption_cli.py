"""The CLI a new user meets (issue #15, item 6): `python -m capidx`, help for every option, shell completion."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

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
