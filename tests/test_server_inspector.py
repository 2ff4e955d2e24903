"""End to end with a client nobody on the team wrote: the official MCP Inspector's CLI, over both transports.

Only the Inspector's CLI package is installed (not the web UI: a quarter of the download), with npm, into
this session's temporary directory, npm's cache included: nothing from an earlier run is used and nothing is
left in the home directory. node and npm are the one optional requirement of the tests found on PATH (they
are not Python packages): without them, or without network to the npm registry, these tests skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from manifest_factory import build_text
from server_support import PREFIX, capidx_command, serving_http

pytestmark = [pytest.mark.slow, pytest.mark.long_setup]
INSPECTOR_CLI = "@modelcontextprotocol/inspector-cli@0.15.0"


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command that runs the Inspector's CLI client (`mcp-inspector --cli` without its launcher process)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not available")
    home = tmp_path_factory.mktemp("inspector")
    install = [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
    options = ["--fetch-retries=1", "--cache", str(home / "npm-cache"), "--prefix", str(home)]
    try:
        subprocess.run([*install, *options, INSPECTOR_CLI], capture_output=True, timeout=300, check=True)
    except (subprocess.SubprocessError, OSError) as error:
        pytest.skip(f"could not install the MCP Inspector: {error}")
    return [node, str(home / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js")]


@pytest.fixture(scope="module")
def http_url(catalog_build: Path) -> Iterator[str]:
    """One `capidx serve --transport http` for the calls over HTTP (each Inspector call is one node process)."""
    with serving_http(catalog_build, "--no-reload") as (_proc, url, _port):
        yield url


def inspect(inspector: list[str], target: list[str], cwd: Path, *method: str) -> subprocess.CompletedProcess[str]:
    # The target (a server command, or a URL) comes first; the Inspector's --tool-arg takes every following key=value.
    command = [*inspector, *target, *method]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, cwd=cwd)


def output(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# Three calls, one per kind of exchange: listing over stdio (the Inspector starts the server, as a desktop client
# does), reading through a template and an alias and a tool call over streamable HTTP, against one server (a stdio
# call costs a node and a server process, ~2.4 s of CPU; an HTTP call only the node, ~0.9 s). What the Inspector
# would add for other methods (templates/list, tools/list, an error for a hidden resource) the SDK client's tests
# check already on both transports (test_server_resources.py, test_server_tools.py, test_server_http.py); the point
# here is a client nobody on the team wrote.


def test_inspector_lists_resources_over_stdio(inspector: list[str], catalog_build: Path) -> None:
    target = capidx_command("serve", "--build", str(catalog_build), "--no-reload")
    resources = output(inspect(inspector, target, catalog_build.parent, "--method", "resources/list"))["resources"]
    assert [r["uri"] for r in resources] == [PREFIX + "summary", PREFIX + "stats"]
    assert resources[0]["size"] == (catalog_build / "summary.md").stat().st_size
    assert resources[0]["_meta"]["capidx/tokens"]["cl100k_base"] > 0


def test_inspector_reads_a_template_through_an_alias_over_http(
    inspector: list[str], http_url: str, catalog_build: Path
) -> None:
    read = ("--method", "resources/read", "--uri", PREFIX + "capabilities/mcp")
    content = output(inspect(inspector, [http_url], catalog_build.parent, *read))["contents"][0]
    assert content["uri"] == PREFIX + "capabilities/mcp-servers"
    assert content["text"] == (catalog_build / "capabilities" / "mcp-servers.md").read_text("utf-8")


def test_inspector_calls_a_tool_over_http(inspector: list[str], http_url: str, catalog_build: Path) -> None:
    call = inspect(
        inspector,
        [http_url],
        catalog_build.parent,
        *("--method", "tools/call", "--tool-name", "lookup_capability"),
        *("--tool-arg", "agent=gemini", "capability=extensions"),
    )
    result = output(call)
    expected = build_text(catalog_build, "tools/lookup/gemini-cli/plugins.json")
    assert result["content"][0]["text"] == expected
    assert result["structuredContent"] == json.loads(expected)
    assert result["_meta"]["capidx/resolution"]["capability"]["resolvedBy"] == "terminology"
