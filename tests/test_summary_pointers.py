"""What the summary tells a model is true of the default server (issue 15, item 4).

The summary is injected into conversations; a model follows its pointers. Every resource URI and tool
it names as available must work on a server started with default settings, read through a real MCP
client; the one variant it names as opt-in (`full`) must indeed be hidden by default and served once
exposed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from server_support import connect, make_hub

OPT_IN = "Only if the server exposes it (opt-in):"


def _pointers(summary: str) -> tuple[list[str], list[str], list[str]]:
    """(URIs offered as available, tool names, URIs named as opt-in) from the summary's last line."""
    line = next(line for line in summary.splitlines() if line.startswith("More: "))
    available, _, opt_in = line.partition(OPT_IN)
    uri = re.compile(r"[a-z][a-z0-9+.-]*://[^\s,;()]*[^\s,;().]")  # a sentence's full stop is not part of it
    tools = re.findall(r"\b[a-z]+_[a-z_]+\b", available)
    return uri.findall(available), tools, uri.findall(opt_in)


def _fill(template: str, build: Path) -> str:
    """A concrete URI for a URI template, with a value the build really has."""
    manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    for artifact in manifest["artifacts"]:
        concrete = artifact["uri"]
        pattern = re.escape(template).replace(r"\{", "{").replace(r"\}", "}")
        if re.fullmatch(re.sub(r"\{[a-z]+\}", "[^/]+", pattern), concrete):
            return concrete
    raise AssertionError(f"no artifact of the build matches {template}")


@pytest.mark.anyio
async def test_every_pointer_in_the_summary_works_on_the_default_server(bundled_build: Path) -> None:
    async with connect(make_hub(bundled_build, {"reload": False})) as client:
        summary = (await client.read_resource("capability-index://summary")).contents[0].text
        offered, tools, opt_in = _pointers(summary)
        assert offered and tools and opt_in == ["capability-index://full"]

        for uri in offered:
            concrete = _fill(uri, bundled_build) if "{" in uri else uri
            contents = (await client.read_resource(concrete)).contents
            assert contents[0].text, concrete
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert set(tools) <= listed, set(tools) - listed

        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert not set(opt_in) & resources  # hidden by default, as the summary says
        with pytest.raises(Exception, match=r"full"):
            await client.read_resource("capability-index://full")


@pytest.mark.anyio
async def test_the_opt_in_variant_is_served_once_exposed(bundled_build: Path) -> None:
    hub = make_hub(bundled_build, {"reload": False, "expose": "summary,stats,full"})
    async with connect(hub) as client:
        contents = (await client.read_resource("capability-index://full")).contents
        assert contents[0].text.startswith("#")
