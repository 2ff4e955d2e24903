"""End to end with a client nobody on the team wrote: the official MCP Inspector in CLI mode.

The Inspector is installed once with npm into a cache directory (`CAPIDX_INSPECTOR_DIR`, default
~/.cache/capidx-tests/inspector) and then runs offline. The tests skip cleanly when node/npm are
missing or the install fails (no network).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from server_support import PREFIX, fixture_catalog_build  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow
INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
SERVE = [sys.executable, "-c", "from capidx.compiler.cli import main; main()", "serve"]


@pytest.fixture(scope="module")
def inspector() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not available")
    home = Path(os.environ.get("CAPIDX_INSPECTOR_DIR", Path.home() / ".cache" / "capidx-tests" / "inspector"))
    binary = home / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        home.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(home), INSPECTOR],
                capture_output=True,
                timeout=300,
                check=True,
            )
        except (subprocess.SubprocessError, OSError) as error:
            pytest.skip(f"could not install the MCP Inspector: {error}")
    return binary


def inspect(inspector: Path, build: Path, *method: str) -> subprocess.CompletedProcess[str]:
    # The server command comes first; the Inspector's --tool-arg takes every following key=value.
    command = [str(inspector), "--cli", *SERVE, "--build", str(build), "--no-reload", *method]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, cwd=build.parent)


def output(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_inspector_lists_resources_and_templates(inspector: Path, catalog_build: Path) -> None:
    resources = output(inspect(inspector, catalog_build, "--method", "resources/list"))["resources"]
    assert [r["uri"] for r in resources] == [PREFIX + "summary", PREFIX + "stats"]
    assert resources[0]["size"] == (catalog_build / "summary.md").stat().st_size
    assert resources[0]["_meta"]["capidx/tokens"]["cl100k_base"] > 0
    templates = output(inspect(inspector, catalog_build, "--method", "resources/templates/list"))
    assert {t["uriTemplate"] for t in templates["resourceTemplates"]} == {
        PREFIX + "agents/{agent}",
        PREFIX + "capabilities/{capability}",
        PREFIX + "categories/{category}",
    }


def test_inspector_reads_a_resource_and_a_template(inspector: Path, catalog_build: Path) -> None:
    read = output(inspect(inspector, catalog_build, "--method", "resources/read", "--uri", PREFIX + "summary"))
    assert read["contents"][0]["text"] == (catalog_build / "summary.md").read_text("utf-8")
    via_alias = inspect(inspector, catalog_build, "--method", "resources/read", "--uri", PREFIX + "capabilities/mcp")
    content = output(via_alias)["contents"][0]
    assert content["uri"] == PREFIX + "capabilities/mcp-servers"
    assert content["text"] == (catalog_build / "capabilities" / "mcp-servers.md").read_text("utf-8")


def test_inspector_sees_hidden_resources_as_errors(inspector: Path, catalog_build: Path) -> None:
    result = inspect(inspector, catalog_build, "--method", "resources/read", "--uri", PREFIX + "full")
    assert result.returncode != 0
    assert "-32602" in result.stdout + result.stderr


def test_inspector_calls_a_tool(inspector: Path, catalog_build: Path) -> None:
    tools = output(inspect(inspector, catalog_build, "--method", "tools/list"))["tools"]
    assert [t["name"] for t in tools] == ["lookup_capability", "compare_capability", "list_capabilities", "get_sources"]
    call = inspect(
        inspector,
        catalog_build,
        *("--method", "tools/call", "--tool-name", "lookup_capability"),
        *("--tool-arg", "agent=gemini", "capability=extensions"),
    )
    result = output(call)
    expected = (catalog_build / "tools" / "lookup" / "gemini-cli" / "plugins.json").read_text("utf-8")
    assert result["content"][0]["text"] == expected
    assert result["structuredContent"] == json.loads(expected)
    assert result["_meta"]["capidx/resolution"]["capability"]["resolvedBy"] == "terminology"
