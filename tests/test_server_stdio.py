"""`capidx serve` as a real subprocess over stdio, driven by the SDK client on both revisions."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from manifest_factory import build_text
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from server_support import (
    PREFIX,
    TRANSPORT_MODES,
    capidx_command,
    run_serve,
    swap_in,
    write_build,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def server(build: Path, *args: str, cwd: Path | None = None) -> StdioServerParameters:
    command, *rest = capidx_command("serve", "--build", str(build), *args)
    return StdioServerParameters(command=command, args=rest, cwd=cwd or build.parent)


async def check_serving(client: Client, build: Path, revision: str) -> None:
    """What a real subprocess serves a client of `revision` from `build` (a real build of the test catalog)."""
    assert client.protocol_version == revision
    listed = (await client.list_resources()).resources
    assert [r.uri for r in listed] == [PREFIX + "summary", PREFIX + "stats"]
    summary = await client.read_resource(PREFIX + "summary")
    assert summary.contents[0].text.encode("utf-8") == (build / "summary.md").read_bytes()
    templates = (await client.list_resource_templates()).resource_templates
    assert len(templates) == 3
    result = await client.call_tool("lookup_capability", {"agent": "claude", "capability": "mcp"})
    expected = build_text(build, "tools/lookup/claude-code/mcp-servers.json")
    assert result.content[0].text == expected
    bad = await client.call_tool("lookup_capability", {"agent": 1})
    assert bad.is_error
    huge = await client.call_tool("lookup_capability", {"agent": "claude", "capability": "x" * 1_000_000})
    assert huge.is_error and "Arguments too large" in huge.content[0].text
    with pytest.raises(MCPError) as caught:
        await client.read_resource(PREFIX + "agents/../manifest")
    assert caught.value.code == -32602
    assert (await client.list_tools()).tools  # still up


# One server process per revision, each checked first on what it serves, then on what a new build swapped in does
# to it: with reload (the default) the client hears of it and reads the new build, with --no-reload nothing changes.
# A copy of the shared real build, since the swap replaces it.


async def test_a_2025_client_of_a_real_subprocess_is_served_and_hears_a_reload(
    catalog_build: Path, tmp_path: Path
) -> None:
    build = shutil.copytree(catalog_build, tmp_path / "build")
    heard: list[object] = []

    async def on_message(message: object) -> None:
        heard.append(message)

    async with Client(
        server(build), mode=TRANSPORT_MODES["2025-11-25"], cache=None, message_handler=on_message
    ) as client:
        await check_serving(client, build, "2025-11-25")
        swap_in(write_build(tmp_path / ".capidx-build-2", generation="2"), build)
        with anyio.fail_after(15):
            while not any(isinstance(m, types.ResourceListChangedNotification) for m in heard):
                await anyio.sleep(0.05)
        assert "generation 2" in (await client.read_resource(PREFIX + "summary")).contents[0].text


async def test_a_2026_client_of_a_real_subprocess_is_served_and_no_reload_keeps_the_first_build(
    catalog_build: Path, tmp_path: Path
) -> None:
    build = shutil.copytree(catalog_build, tmp_path / "build")
    first_summary = (build / "summary.md").read_text("utf-8")
    async with Client(server(build, "--no-reload"), mode=TRANSPORT_MODES["2026-07-28"], cache=None) as client:
        await check_serving(client, build, "2026-07-28")
        swap_in(write_build(tmp_path / ".capidx-build-2", generation="2"), build)
        await anyio.sleep(1.5)  # longer than the poll interval
        assert (await client.read_resource(PREFIX + "summary")).contents[0].text == first_summary


def test_sha_mismatch_refuses_to_start(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build")
    target = build / "agents" / "claude-code.md"
    target.write_bytes(target.read_bytes().replace(b"Claude", b"Claudx"))
    result = run_serve("--build", str(build), cwd=tmp_path)
    assert result.returncode == 2
    assert "claude-code.md" in result.stderr and "does not match manifest.json" in result.stderr
    assert result.stdout == ""


# Said at exit by the process below: whether the MCP SDK was imported.
_SAYS_IF_THE_SDK_WAS_IMPORTED = (
    "import atexit, sys; atexit.register(lambda: print('sdk imported:', 'mcp' in sys.modules, file=sys.stderr))"
)


def test_no_build_exits_2_suggesting_capidx_build_before_importing_the_sdk(tmp_path: Path) -> None:
    """A missing build is refused first: the user does not wait for the MCP SDK's import to hear it."""
    code = f"{_SAYS_IF_THE_SDK_WAS_IMPORTED}; from capidx.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", code, "serve"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert f"no build at {tmp_path / 'build'}" in result.stderr
    assert "capidx build" in result.stderr
    assert result.stdout == ""
    assert "sdk imported: False" in result.stderr


def test_stdin_closing_stops_the_server_cleanly(catalog_build: Path) -> None:
    result = run_serve("--build", str(catalog_build), cwd=catalog_build.parent)
    assert result.returncode == 0
    assert result.stdout == ""  # stdout is the protocol channel: nothing else is ever written there
    assert "serving" in result.stderr


def test_help_does_not_import_the_sdk() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from capidx.cli import cli; "
        "CliRunner().invoke(cli, ['serve', '--help']); print('mcp' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "False"
