"""What reaches the model at session start, checked through the official MCP client: the server instructions
(`--instructions summary|pointer`) and every tool description, each within Claude Code's 2,048-character cut."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_support import (
    REPO,
    TRANSPORT_MODES,
    connect,
    large_catalog_build,
    made_once,
    make_hub,
    real_build,
    run_serve,
    write_build,
)

from capidx.compiler.catalog import build_catalog
from capidx.server.settings import resolve_settings

CUT = 2_048  # Claude Code's cut of server instructions and of each tool description
POINTER_LIMIT = 600
pytestmark = pytest.mark.anyio


def canonical_names(agents: Path) -> list[str]:
    """The canonical capability names of a catalog folder, as the build names them."""
    documents = [
        (path.parent.parent.name, json.loads(path.read_text("utf-8")))
        for path in sorted(agents.glob("*/capabilities/current.json"))
    ]
    return [capability.name for capability in build_catalog(documents, None).capabilities]


def length(text: str) -> int:
    """As a JavaScript client counts (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


@pytest.fixture(scope="module", name="second_build")
def fixture_second_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real build of our second catalog (benchmarks/resolution/catalog2: other agents, other names)."""
    catalog = REPO / "benchmarks" / "resolution" / "catalog2" / "agents"
    yield from made_once(tmp_path_factory, "catalog2", lambda root: real_build(catalog, root / "build"))


@pytest.fixture(scope="module", name="large_build")
def fixture_large_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real build of a synthetic catalog with 250 agents: their ids alone are longer than the cut."""
    yield from large_catalog_build(tmp_path_factory)


async def instructions_and_tools(build: Path, revision: str = "2026-07-28", **flags: Any) -> tuple[str, list[Any]]:
    """The instructions as the client receives them (2025-11-25: the initialize result; 2026-07-28: the
    `server/discover` result, so the client probes instead of pinning the revision) and tools/list."""
    from mcp import Client

    from capidx.server.app import build_server

    mode = TRANSPORT_MODES[revision]
    async with Client(build_server(make_hub(build, flags)), mode=mode, cache=None) as client:
        assert client.protocol_version == revision
        tools = (await client.list_tools()).tools
        return client.instructions or "", list(tools)


@pytest.mark.parametrize("catalog", ["bundled", "second"])
async def test_summary_instructions_fit_the_cut_and_name_every_capability(
    catalog: str, bundled_build: Path, second_build: Path, revision: str
) -> None:
    build, agents = (
        (bundled_build, REPO / "agents")
        if catalog == "bundled"
        else (second_build, REPO / "benchmarks" / "resolution" / "catalog2" / "agents")
    )
    instructions, _ = await instructions_and_tools(build, revision, instructions="summary")
    assert instructions == (build / "instructions.md").read_text("utf-8")  # verbatim
    assert length(instructions) <= CUT
    names = canonical_names(agents)
    assert len(names) >= 30 if catalog == "bundled" else len(names) >= 20
    missing = [name for name in names if name not in instructions]
    assert missing == []
    assert "lookup_capability" in instructions  # how to get details comes with it


async def test_summary_is_the_default(catalog_build: Path) -> None:
    instructions, _ = await instructions_and_tools(catalog_build)
    assert instructions == (catalog_build / "instructions.md").read_text("utf-8")


async def test_pointer_instructions_stay_a_short_pointer(bundled_build: Path, revision: str) -> None:
    instructions, _ = await instructions_and_tools(bundled_build, revision, instructions="pointer")
    assert length(instructions) <= POINTER_LIMIT
    assert "lookup_capability" in instructions and "capability-index://summary" in instructions
    assert "Plan Mode" not in instructions  # a pointer, not the matrix
    assert ".)" not in instructions and ".." not in instructions and instructions.endswith(".")
    for tool in ("lookup_capability", "compare_capability", "list_capabilities", "get_sources"):
        assert tool in instructions
    assert "get_capability_index" not in instructions  # off by default


async def test_the_pointer_names_the_index_tool_where_resources_are_not_read(bundled_build: Path) -> None:
    """The setup for clients that do not read resources: the overview is reached through the tool, and the
    pointer says so instead of naming a resource the server does not offer."""
    flags = {"instructions": "pointer", "resources": False, "index_tool": True, "expose": "summary"}
    instructions, tools = await instructions_and_tools(bundled_build, **flags)
    assert "get_capability_index" in instructions and "get_capability_index" in [tool.name for tool in tools]
    assert "capability-index://" not in instructions and length(instructions) <= POINTER_LIMIT


@pytest.mark.parametrize(
    "flags",
    [{}, {"expose": "summary,stats,full"}, {"expose": "agents"}, {"resources": False}],
    ids=["default", "no-templates", "agents-only", "no-resources"],
)
@pytest.mark.parametrize("form", ["summary", "pointer"])
async def test_the_instructions_name_only_what_the_server_serves(
    bundled_build: Path, form: str, flags: dict[str, Any]
) -> None:
    # The model reads the instructions first and believes them: every tool they name is listed, and every
    # resource they name can be read, whatever the server was started to expose.
    from mcp import Client

    from capidx.server.app import build_server

    hub = make_hub(bundled_build, {"instructions": form, **flags})
    async with Client(build_server(hub), mode="auto", cache=None) as client:
        instructions = client.instructions or ""
        tools = {tool.name for tool in (await client.list_tools()).tools}
        named_tools = set(re.findall(r"\b([a-z]+(?:_[a-z]+)+)\(", instructions)) | set(
            re.findall(r"\b(lookup_capability|compare_capability|list_capabilities|get_sources)\b", instructions)
        )
        assert named_tools and named_tools <= tools
        templates = set()
        if flags.get("resources", True):
            templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        for uri in re.findall(r"capability-index://[\w/{}.-]*[\w}]", instructions):
            assert uri in templates if "{" in uri else (await client.read_resource(uri)).contents, uri


async def test_every_tool_description_fits_the_cut(bundled_build: Path, large_build: Path) -> None:
    for build in (bundled_build, large_build):
        _, tools = await instructions_and_tools(build, index_tool=True)
        assert {tool.name for tool in tools} >= {"lookup_capability", "list_capabilities", "get_capability_index"}
        for tool in tools:
            assert 0 < length(tool.description or "") <= CUT, tool.name
    # the large catalog's agents do not all fit: the description says what the tool does first, then as
    # many agent ids as fit, each whole, and how many more there are
    _, tools = await instructions_and_tools(large_build)
    lookup = next(tool for tool in tools if tool.name == "lookup_capability").description or ""
    assert lookup.startswith("One agent's support for one capability")
    assert "agent-00, agent-01" in lookup and lookup.endswith(" more.")
    listed = lookup.split(" Agents: ")[1].split(" and ")[0].split(", ")
    assert all(name.startswith("agent-") and len(name) >= 8 for name in listed)


async def test_the_large_catalogs_instructions_still_fit(large_build: Path) -> None:
    instructions, _ = await instructions_and_tools(large_build)
    assert length(instructions) <= CUT
    manifest = json.loads((large_build / "manifest.json").read_text("utf-8"))
    row = next(row for row in manifest["overview"] if row["kind"] == "instructions")
    assert row["form"] != "matrix" and row["ok"]  # 250 cells a row do not fit: a shorter form was chosen


# --- settings and older builds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "env", "file", "expected", "source"),
    [
        (None, None, None, "summary", "default"),
        (None, None, "pointer", "pointer", "file"),
        (None, "summary", "pointer", "summary", "env CAPIDX_INSTRUCTIONS"),
        ("pointer", "summary", "summary", "pointer", "flag --instructions"),
    ],
)
def test_instructions_setting_follows_the_precedence(
    tmp_path: Path, flag: str | None, env: str | None, file: str | None, expected: str, source: str
) -> None:
    if file:
        (tmp_path / "capidx.yaml").write_text(f"serve:\n  instructions: {file}\n", "utf-8")
    settings = resolve_settings({"instructions": flag}, {"CAPIDX_INSTRUCTIONS": env} if env else {}, tmp_path, None)
    assert settings.instructions == expected
    assert settings.sources["instructions"].startswith(source)


def test_print_config_shows_the_instructions_and_their_source(tmp_path: Path) -> None:
    result = run_serve("--instructions", "pointer", "--print-config", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert any(line.split("#")[0].strip() == "instructions: pointer" and "--instructions" in line
               for line in result.stdout.splitlines())  # fmt: skip


@pytest.mark.parametrize(
    ("args", "env", "file"),
    [((), {"CAPIDX_INSTRUCTIONS": "summry"}, None), ((), {}, "instructions: full")],
)
def test_a_bad_instructions_value_is_refused(tmp_path: Path, args: tuple[str, ...], env: dict[str, str],
                                             file: str | None) -> None:  # fmt: skip
    from server_support import run_capidx

    if file:
        (tmp_path / "capidx.yaml").write_text(f"serve:\n  {file}\n", "utf-8")
    result = run_capidx("serve", *args, "--print-config", cwd=tmp_path, env=env, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "instructions" in result.stderr and "summary" in result.stderr
    if env:
        assert "CAPIDX_INSTRUCTIONS" in result.stderr and "did you mean 'summary'" in result.stderr


def test_an_older_build_with_explicit_summary_is_refused_at_start(tmp_path: Path) -> None:
    old = write_build(tmp_path / "build")  # written as capidx wrote builds before instructions.md existed
    assert not (old / "instructions.md").exists()
    result = run_serve("--build", str(old), "--instructions", "summary", cwd=tmp_path)
    assert result.returncode == 2
    assert "no instructions.md" in result.stderr and "capidx build" in result.stderr
    assert "--instructions pointer" in result.stderr


def test_an_older_build_with_the_default_is_warned_about_once_at_start(tmp_path: Path) -> None:
    old = write_build(tmp_path / "build")
    result = run_serve("--build", str(old), "--no-reload", cwd=tmp_path)  # stdin closed: serves, then ends
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("no instructions.md") == 1, result.stderr


async def test_an_older_build_with_the_default_falls_back_to_the_pointer(
    hand_build: Path, caplog: pytest.LogCaptureFixture
) -> None:
    instructions, _ = await instructions_and_tools(hand_build)
    assert length(instructions) <= POINTER_LIMIT and "lookup_capability" in instructions
    assert "no instructions.md" in caplog.text and "sending the pointer" in caplog.text


async def test_a_reloaded_build_sends_its_own_instructions_to_new_connections(tmp_path: Path) -> None:
    from mcp import Client
    from server_support import CAPABILITIES, write_catalog

    from capidx.server.app import build_server
    from capidx.server.snapshot import load_snapshot

    catalog = write_catalog(tmp_path / "agents", CAPABILITIES[:2])
    build = real_build(catalog, tmp_path / "build")
    hub = make_hub(build)
    server = build_server(hub)  # one server, as `capidx serve` keeps while builds come and go
    async with Client(server, mode="auto", cache=None) as client:
        before = client.instructions or ""
    assert CAPABILITIES[0].name in before and CAPABILITIES[2].name not in before

    shutil.rmtree(catalog)
    write_catalog(catalog, CAPABILITIES)
    real_build(catalog, build)
    await hub.swap(hub.view_of(load_snapshot(build)))
    async with Client(server, mode="auto", cache=None) as client:
        after = client.instructions or ""
    assert after == (build / "instructions.md").read_text("utf-8") and CAPABILITIES[2].name in after


async def test_a_reloaded_build_without_instructions_falls_back_to_the_pointer(
    catalog_build: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from capidx.server.snapshot import load_snapshot

    hub = make_hub(catalog_build, {"instructions": "summary"})  # asked for explicitly
    await hub.swap(hub.view_of(load_snapshot(write_build(tmp_path / "old"))))  # an older build appears: not fatal now
    assert "lookup_capability" in hub.view.instructions and length(hub.view.instructions) <= POINTER_LIMIT
    assert "no instructions.md" in caplog.text


def test_names_in_a_description_are_listed_whole_as_far_as_they_fit() -> None:
    from capidx.server.tools import named

    names = [f"name-{index:03d}" for index in range(100)]
    assert named(" Agents: ", names[:3], 100) == " Agents: name-000, name-001, name-002."
    clipped = named(" Agents: ", names, 120)
    assert len(clipped) <= 120 and clipped.endswith(" more.")
    shown = clipped.removeprefix(" Agents: ").split(" and ")[0].split(", ")
    assert shown == names[: len(shown)] and f"and {100 - len(shown)} more." in clipped
    assert named(" Agents: ", names, 20) == ""  # not even one name and the count fit: nothing, never a cut name


async def test_an_unknown_agent_in_a_large_catalog_points_at_the_list_instead_of_repeating_it(
    large_build: Path,
) -> None:
    async with connect(large_build, "2026-07-28") as client:
        result = await client.call_tool("lookup_capability", {"agent": "cursor", "capability": "hooks"})
    (block,) = result.content
    assert result.is_error
    assert block.text.startswith("Unknown agent 'cursor': not among this catalog's 250 agents.")
    assert len(block.text) < 400  # not 250 ids


async def test_an_agent_id_with_another_number_is_not_taken_for_a_typo(large_build: Path) -> None:
    """'agent-99' differs from 'agent-09' by one character, but a typo does not change a number."""
    async with connect(large_build, "2026-07-28") as client:
        result = await client.call_tool("lookup_capability", {"agent": "agent-999", "capability": "hooks"})
    (block,) = result.content
    assert result.is_error and block.text.startswith("Unknown agent 'agent-999'")


async def test_the_figures_readme_and_server_md_give_are_what_the_bundled_build_sends(bundled_build: Path) -> None:
    """README and docs/server.md state the instructions' size for the bundled catalog: a reader takes them as
    what a session costs, so they must be the build's (a change to the catalog changes them)."""
    from capidx.compiler.emit.tokens import load_encoding

    encoding = load_encoding("cl100k_base")
    summary, _ = await instructions_and_tools(bundled_build)
    pointer, _ = await instructions_and_tools(bundled_build, instructions="pointer")
    sizes = {
        form: (length(text), len(encoding.encode_ordinary(text))) for form, text in [("s", summary), ("p", pointer)]
    }
    (chars, tokens), (pointer_chars, pointer_tokens) = sizes["s"], sizes["p"]
    readme = (REPO / "README.md").read_text("utf-8")
    server_md = (REPO / "docs" / "server.md").read_text("utf-8")
    assert f"{chars:,} characters and {tokens:,} tokens" in readme
    assert f"{pointer_chars:,}-character pointer" in readme
    assert f"| {chars:,} characters, {tokens:,} tokens (cl100k_base) |" in server_md
    assert f"| {pointer_chars:,} characters, {pointer_tokens:,} tokens |" in server_md


async def test_lookup_description_names_only_tiers_a_record_can_have(bundled_build: Path) -> None:
    """The tier legend a model reads in tools/list speaks only of values the schema allows, and says what a record
    without a tier means: a blind model test read "none: …" as a tier value no answer carries, and "not free" as paid,
    while such a record (every gemini-cli one) says nothing about the plan."""
    _, tools = await instructions_and_tools(bundled_build)
    (lookup,) = [tool.description or "" for tool in tools if tool.name == "lookup_capability"]
    legend = lookup[lookup.index("Tier:") :].split(" Agents:")[0]
    schema = json.loads((REPO / "schema" / "capability-schema.json").read_text("utf-8"))
    allowed = set(schema["$defs"]["tier"]["enum"])
    named = set(re.findall(r"(\w+(?: \w+)?): ", legend)) - {"Tier"}
    assert named and named <= allowed | {"no tier"}, named
    assert "no tier" in named and "not free" not in legend and "unknown" in legend
