"""docs/clients.md and docs/examples/server.json (issue #15, item 6).

The registry's JSON Schema ships in no installed package and tests do not use the network, so
server.json is checked against the rules read from that schema (2025-10-17) and the registry's
"official registry requirements", as docs/clients.md says; and its arguments against capidx's CLI.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest

from capidx.cli import cli
from capidx.compiler import __version__

ROOT = Path(__file__).resolve().parents[1]
SERVER_JSON = ROOT / "docs" / "examples" / "server.json"
CLIENTS = ROOT / "docs" / "clients.md"
_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
_RANGE = re.compile(r"[\^~<>=*]|\.x\b|^latest$")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def server() -> dict[str, Any]:
    return json.loads(SERVER_JSON.read_text("utf-8"))


def test_server_json_has_the_required_fields_in_the_registrys_shape(server: dict[str, Any]) -> None:
    assert server["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    assert _NAME.match(server["name"]) and 3 <= len(server["name"]) <= 200
    assert server["name"].startswith("io.github.OWNER/")  # the publisher's account, replaced when publishing
    assert 1 <= len(server["description"]) <= 100
    assert server["repository"] == {"url": "https://github.com/OWNER/capidx", "source": "github"}
    assert not _RANGE.search(server["version"])


def test_the_versions_are_capidx_s_version(server: dict[str, Any]) -> None:
    (package,) = server["packages"]
    assert server["version"] == package["version"] == __version__
    assert package["runtimeArguments"][0]["value"] == f"capidx[serve]=={__version__}"


def test_the_package_is_capidx_on_pypi_over_stdio(server: dict[str, Any]) -> None:
    (package,) = server["packages"]
    assert package["registryType"] == "pypi" and package["registryBaseUrl"] == "https://pypi.org"
    assert package["identifier"] == "capidx"
    assert package["transport"] == {"type": "stdio"}
    assert package["runtimeHint"] == "uvx"
    for argument in package["runtimeArguments"] + package["packageArguments"]:
        assert argument["type"] in {"named", "positional"}
        if argument["type"] == "named":
            assert argument["name"].startswith("-")
        else:
            assert "value" in argument or "valueHint" in argument
    for variable in package["environmentVariables"]:
        assert variable["name"] and variable["description"]


def test_the_package_arguments_are_a_real_serve_command_line(server: dict[str, Any], tmp_path: Path) -> None:
    """`serve --build <path>`, and the environment variables are ones `serve` reads, with valid defaults."""
    (package,) = server["packages"]
    words = []
    for argument in package["packageArguments"]:
        if argument["type"] == "positional":
            words.append(argument["value"])
        else:
            words += [argument["name"], argument.get("value", "/abs/path/to/build")]
    command_name, *args = words
    command = cli.get_command(click.Context(cli), command_name)
    assert command is not None
    context = command.make_context(command_name, args)
    assert context.params["build"] == "/abs/path/to/build"

    from capidx.server.settings import resolve_settings

    environment = {variable["name"]: variable["default"] for variable in package["environmentVariables"]}
    settings = resolve_settings({}, environment, tmp_path, None)  # no capidx.yaml there
    assert ",".join(settings.expose) == environment["CAPIDX_EXPOSE"]


def test_clients_md_json_examples_parse_and_run_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = CLIENTS.read_text("utf-8")
    (tmp_path / "tools" / "capidx").mkdir(parents=True)  # the monorepo's capidx.yaml the .mcp.json names, from its top
    (tmp_path / "tools" / "capidx" / "capidx.yaml").write_text("paths:\n  out: build\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    blocks = [json.loads(body) for language, body in _FENCE.findall(text) if language == "json"]
    assert len(blocks) == 3  # Claude Code's .mcp.json for a catalog in a monorepo's folder, VS Code, Gemini CLI
    for block in blocks:
        (entry,) = (block.get("servers") or block["mcpServers"]).values()
        assert entry["command"] == "capidx" and entry["args"][0] == "serve"
        assert entry["args"][1] in ("--build", "--config")
        cli.get_command(click.Context(cli), "serve").make_context("serve", entry["args"][1:])


def test_clients_md_points_at_the_server_json_and_says_how_it_was_checked() -> None:
    text = CLIENTS.read_text("utf-8")
    assert "examples/server.json" in text
    assert "Checked by hand" in text and "test_adoption_clients.py" in text
