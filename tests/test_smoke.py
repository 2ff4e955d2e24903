"""The package installs in the card's layout and the CLI answers."""

from click.testing import CliRunner

from capidx.cli import cli


def test_version_names_the_program() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("capidx, version ")


def test_every_command_has_help() -> None:
    for command in ("validate", "build", "serve", "report"):
        result = CliRunner().invoke(cli, [command, "--help"])
        assert result.exit_code == 0, result.output
        assert "Usage: " in result.output
