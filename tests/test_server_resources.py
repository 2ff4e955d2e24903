"""Resources and resource templates through a real MCP client, on both protocol revisions."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from server_support import (
    PREFIX,
    Cap,
    connect,
    large_catalog_build,
    make_hub,
    real_build,
    write_catalog,
)

from capidx.server.app import MAX_SUBSCRIBED_URIS, MAX_WATCHED_URIS

pytestmark = pytest.mark.anyio

INVALID_PARAMS = -32602
BOTH = {"claude-code": {"available": True}, "gemini-cli": {"available": True}}
METHOD_NOT_FOUND = -32601


def manifest_entry(build: Path, uri: str) -> dict:
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    return next(a for a in manifest["artifacts"] if a["uri"] == uri)


async def test_default_listing_is_summary_and_stats_with_every_field(any_build: Path, revision: str) -> None:
    async with connect(any_build, revision) as client:
        listed = (await client.list_resources()).resources
    assert [r.uri for r in listed] == [PREFIX + "summary", PREFIX + "stats"]
    for resource in listed:
        entry = manifest_entry(any_build, resource.uri)
        assert resource.title == entry["title"]
        assert resource.description == entry["description"]
        assert resource.mime_type == entry["mimeType"]
        assert resource.size == entry["bytes"]
        assert resource.annotations.audience == ["assistant"]
        assert resource.meta["capidx/tokens"] == entry["tokens"]
        assert resource.meta["capidx/sha256"] == entry["sha256"]
    assert listed[0].annotations.priority == 1.0  # summary: read it first
    assert 0.3 <= listed[1].annotations.priority <= 0.7  # stats: medium


async def test_full_is_listed_only_when_asked_for_and_has_low_priority(any_build: Path, revision: str) -> None:
    hub = make_hub(any_build, {"expose": "summary,stats,full"})
    async with connect(hub, revision) as client:
        listed = {r.name: r for r in (await client.list_resources()).resources}
    assert set(listed) == {"summary", "stats", "full"}
    assert 0.1 <= listed["full"].annotations.priority <= 0.2
    assert listed["full"].meta["capidx/tokens"]["cl100k_base"] > listed["summary"].meta["capidx/tokens"]["cl100k_base"]


async def test_templates_come_from_the_manifest(any_build: Path, revision: str) -> None:
    manifest = json.loads((any_build / "manifest.json").read_text("utf-8"))
    async with connect(any_build, revision) as client:
        templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == [t["uriTemplate"] for t in manifest["resourceTemplates"]]
    assert [t.description for t in templates] == [t["description"] for t in manifest["resourceTemplates"]]


@pytest.mark.parametrize("variant", ["summary", "stats", "full"])
async def test_reads_return_the_bytes_unchanged(any_build: Path, revision: str, variant: str) -> None:
    entry = manifest_entry(any_build, PREFIX + variant)
    hub = make_hub(any_build, {"expose": "summary,stats,full"})
    async with connect(hub, revision) as client:
        result = await client.read_resource(PREFIX + variant)
    (content,) = result.contents
    assert content.text.encode("utf-8") == (any_build / entry["path"]).read_bytes()
    assert content.mime_type == entry["mimeType"]
    assert content.uri == entry["uri"]


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("agents/claude-code", "agents/claude-code"),
        ("agents/claude", "agents/claude-code"),
        ("agents/Claude%20Code", "agents/claude-code"),
        ("agents/gemini", "agents/gemini-cli"),
        ("capabilities/mcp", "capabilities/mcp-servers"),
        ("capabilities/model%20context%20protocol", "capabilities/mcp-servers"),
        ("capabilities/Extensions", "capabilities/plugins"),
        ("capabilities/hoks", "capabilities/hooks"),
        ("categories/customization", "categories/customization"),
        ("categories/api", "categories/api-integration"),
    ],
)
async def test_template_values_resolve_like_the_tools(any_build: Path, revision: str, uri: str, expected: str) -> None:
    async with connect(any_build, revision) as client:
        result = await client.read_resource(PREFIX + uri)
    (content,) = result.contents
    entry = manifest_entry(any_build, PREFIX + expected)
    assert content.uri == PREFIX + expected
    assert content.text.encode("utf-8") == (any_build / entry["path"]).read_bytes()
    if uri != expected:
        assert result.meta["capidx/resolution"]["value"] == expected.split("/")[1]


async def test_an_unknown_agent_is_said_to_be_outside_the_catalog(any_build: Path) -> None:
    """As the tools say it: the ids the catalog covers, not the agents merely spelled like it ('cursor' is not
    close to copilot-cli in any sense a model could use)."""
    async with connect(any_build) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(PREFIX + "agents/cursor")
    assert caught.value.code == INVALID_PARAMS
    assert "unknown agent 'cursor': this catalog covers claude-code, " in caught.value.message
    assert "closest" not in caught.value.message.lower()


async def test_ambiguous_template_value_lists_the_candidates(any_build: Path, revision: str) -> None:
    async with connect(any_build, revision) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(PREFIX + "agents/copilot")
    assert caught.value.code == INVALID_PARAMS
    assert PREFIX + "agents/copilot-cli" in caught.value.message
    assert PREFIX + "agents/vscode-copilot" in caught.value.message
    assert caught.value.data["uri"] == PREFIX + "agents/copilot"


async def test_an_agent_value_joining_several_names_names_each_agents_resource(any_build: Path) -> None:
    """'claude vs gemini' or 'claude, copilot' as an agent value was 'unknown agent': read as the tools read it, the
    error now names each agent's resource URI (in `data.candidates` too); a name among them that is no agent is said
    as the tools say it, with the others' URIs."""
    said, data = {}, {}
    async with connect(any_build) as client:
        for value in ("claude%20vs%20gemini", "claude,%20copilot", "copilot%20and%20cursor"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(PREFIX + "agents/" + value)
            assert caught.value.code == INVALID_PARAMS
            said[value], data[value] = caught.value.message, caught.value.error.data
    claude, gemini = PREFIX + "agents/claude-code", PREFIX + "agents/gemini-cli"
    copilots = [PREFIX + "agents/copilot-cli", PREFIX + "agents/vscode-copilot"]
    assert said["claude%20vs%20gemini"].endswith(
        f": 'claude vs gemini' names 2 agents, a resource each: {claude}, {gemini}"
    )
    assert data["claude%20vs%20gemini"]["candidates"] == [claude, gemini]
    assert data["claude,%20copilot"]["candidates"] == [claude, *copilots]
    unknown = said["copilot%20and%20cursor"]
    assert ": unknown agent 'cursor': this catalog covers claude-code, " in unknown
    assert unknown.endswith(f" The others' resources: {', '.join(copilots)}")


async def test_a_template_value_that_names_no_one_document_says_why(tmp_path: Path) -> None:
    """As the tools say it: a category's name given as a capability points to the category and lists its
    capabilities; free words that match nothing clearly are not "more than one capability"; a capability's name given
    as a category points to the capability; words that match nothing are not said to be a no; a category nothing is in
    is said to have no data."""
    caps = (
        Cap("Code Review", "collaboration", "Reviews a diff for security bugs: a security review.", agents=BOTH),
        Cap("Sandboxing", "security", "Runs commands in an isolated container.", agents=BOTH),
        Cap("Tool Permissions", "security", "Decides which tools run without a prompt.", agents=BOTH),
    )
    build = real_build(write_catalog(tmp_path / "agents", caps), tmp_path / "build")
    said, data = {}, {}
    async with connect(make_hub(build, {"expose": "summary,stats,agents,capabilities,categories"})) as client:
        for value in (
            "capabilities/security",
            "capabilities/voice%20telepathy",
            "categories/sandboxing",
            "categories/debugging",
            "capabilities/Debugging",
            "categories/debuging",
        ):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(PREFIX + value)
            said[value] = caught.value.message
            data[value] = caught.value.error.data
    category = said["capabilities/security"]
    assert f"is a category (read {PREFIX}categories/security); its capabilities: {PREFIX}capabilities/" in category
    assert category.count(f"{PREFIX}capabilities/") == 3  # the resource's own URI, then its two capabilities
    assert "more than one" not in said["capabilities/voice%20telepathy"]
    # only these words matched nothing: not said as a no, nor as the catalog having no data on it
    unmatched = said["capabilities/voice%20telepathy"]
    assert "not a no" in unmatched and "no data" not in unmatched
    assert "closely enough to answer" in unmatched  # not "its words", which a record may share weakly
    assert f"'sandboxing' is a capability (read {PREFIX}capabilities/sandboxing)" in said["categories/sandboxing"]
    assert not (data["categories/sandboxing"] or {}).get("candidates")  # no category merely spelled like it
    # a category the schema defines and nothing here is in: the catalog has no data there, said of the category
    # (mistyped as a category, as list_capabilities reads it)
    asked_as = (
        ("categories/debugging", "debugging"),
        ("capabilities/Debugging", "Debugging"),
        ("categories/debuging", "debuging"),
    )
    for value, asked in asked_as:
        named = ", debugging," if asked == "debuging" else ""
        assert said[value].endswith(
            f"{asked!r} is a category{named} and this catalog records no capability in debugging: it has no data on "
            "it, which is not a no"
        )


@pytest.mark.parametrize(
    "uri",
    [
        PREFIX + "nothing",
        PREFIX + "full",  # hidden by default: indistinguishable from missing
        PREFIX + "index/match",  # internal artifacts are never resources
        PREFIX + "tools/lookup/claude-code/mcp-servers",
        PREFIX + "agents/nobody-at-all",
        "file:///etc/passwd",
        "capability-index:/summary",
        "",
    ],
)
async def test_unknown_or_hidden_uri_is_invalid_params_naming_what_is_readable(
    any_build: Path, revision: str, uri: str
) -> None:
    async with connect(any_build, revision) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        assert (await client.read_resource(PREFIX + "summary")).contents  # still serving
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.data["uri"] == uri
    if "agents/" not in uri:
        assert PREFIX + "summary" in caught.value.message
        assert PREFIX + "agents/{agent}" in caught.value.message


@pytest.mark.parametrize(
    "value",
    [
        "..",
        "../manifest",
        "..%2Fmanifest",
        "%2e%2e",
        "%2E%2E%2Fsummary",
        "claude-code/../../manifest",
        "%2Fetc%2Fpasswd",
        "/etc/passwd",
        "..\\\\manifest",
        "claude%5Ccode",
        "claude-code%00",
        ".hidden",
        "~root",
        "a" * 300,
        "%ff%fe",
    ],
)
async def test_path_traversal_is_refused_the_same_way(any_build: Path, value: str) -> None:
    async with connect(any_build) as client:
        for kind in ("agents", "capabilities", "categories"):
            uri = f"{PREFIX}{kind}/{value}"
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.code == INVALID_PARAMS
            assert caught.value.data["uri"] == uri


@pytest.mark.parametrize(
    ("flags", "listed", "templates", "readable", "hidden"),
    [
        ({"expose": "summary"}, ["summary"], [], ["summary"], ["stats", "full", "agents/claude-code"]),
        ({"expose": "full"}, ["full"], [], ["full"], ["summary", "stats", "capabilities/mcp-servers"]),
        ({"expose": "agents,categories"}, [], ["agents", "categories"], ["agents/claude-code"], ["summary"]),
        (
            {"expose": "capabilities"},
            [],
            ["capabilities"],
            ["capabilities/mcp"],
            ["agents/claude-code", "categories/customization"],
        ),
        (
            {},
            ["summary", "stats"],
            ["agents", "capabilities", "categories"],
            ["summary", "stats", "agents/claude-code", "categories/customization"],
            ["full"],
        ),
    ],
)
async def test_exposure_is_enforced_on_list_and_read(
    any_build: Path, revision: str, flags: dict, listed: list, templates: list, readable: list, hidden: list
) -> None:
    hub = make_hub(any_build, flags)
    async with connect(hub, revision) as client:
        assert [r.name for r in (await client.list_resources()).resources] == listed
        got = [
            t.uri_template.removeprefix(PREFIX).split("/")[0]
            for t in (await client.list_resource_templates()).resource_templates
        ]
        assert got == templates
        for uri in readable:
            assert (await client.read_resource(PREFIX + uri)).contents
        for uri in hidden:
            with pytest.raises(MCPError) as caught:
                await client.read_resource(PREFIX + uri)
            assert caught.value.code == INVALID_PARAMS


async def test_no_resources_turns_the_capability_off(any_build: Path, revision: str) -> None:
    hub = make_hub(any_build, {"resources": False})
    async with connect(hub, revision) as client:
        assert client.server_capabilities.resources is None
        for call in (
            client.list_resources(),
            client.list_resource_templates(),
            client.read_resource(PREFIX + "summary"),
        ):
            with pytest.raises(MCPError) as caught:
                await call
            assert caught.value.code == METHOD_NOT_FOUND
        assert (await client.list_tools()).tools  # tools are unaffected


async def test_environment_and_file_settings_reach_the_server(any_build: Path, tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text("serve:\n  expose: [summary, full]\n", encoding="utf-8")
    from_file = make_hub(any_build, cwd=tmp_path)
    from_env = make_hub(any_build, env={"CAPIDX_EXPOSE": "stats"}, cwd=tmp_path)
    from_flag = make_hub(any_build, {"expose": "agents"}, env={"CAPIDX_EXPOSE": "stats"}, cwd=tmp_path)
    for hub, names in ((from_file, ["summary", "full"]), (from_env, ["stats"]), (from_flag, [])):
        async with connect(hub) as client:
            assert [r.name for r in (await client.list_resources()).resources] == names


async def test_reads_and_lists_carry_a_public_cache_hint_on_2026(any_build: Path) -> None:
    async with connect(any_build, "2026-07-28") as client:
        listed = await client.list_resources()
        read = await client.read_resource(PREFIX + "summary")
        templates = await client.list_resource_templates()
    for result in (listed, read, templates):
        assert result.cache_scope == "public"
        assert result.ttl_ms > 0
    static = make_hub(any_build, {"reload": False})
    async with connect(static, "2026-07-28") as client:
        assert (await client.read_resource(PREFIX + "summary")).ttl_ms >= listed.ttl_ms


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_subscribe_to_unknown_uri_is_refused(any_build: Path) -> None:
    async with connect(any_build, "2025-11-25") as client:
        with pytest.raises(MCPError) as caught:
            await client.session.subscribe_resource(PREFIX + "full")
        assert caught.value.code == INVALID_PARAMS
        await client.session.subscribe_resource(PREFIX + "summary")


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_connection_subscribes_to_at_most_so_many_resources(hand_build: Path) -> None:
    """Each subscribed URI is resolved in the old and the new build at every reload: a connection may subscribe to
    `MAX_SUBSCRIBED_URIS` (spellings of one agent's name are as many URIs), one already subscribed to does not count
    again, and one more is refused, saying the limit and what to do, until one is unsubscribed."""
    spellings = ("".join(s) for s in itertools.product(*((c, c.upper()) if c.isalpha() else c for c in "claude-code")))
    uris = [PREFIX + "agents/" + spelling for spelling in itertools.islice(spellings, MAX_SUBSCRIBED_URIS + 1)]
    async with connect(hand_build, "2025-11-25") as client:
        for uri in uris[:-1]:
            await client.session.subscribe_resource(uri)
        await client.session.subscribe_resource(uris[0])
        with pytest.raises(MCPError) as caught:
            await client.session.subscribe_resource(uris[-1])
        assert caught.value.code == INVALID_PARAMS
        assert f"at most {MAX_SUBSCRIBED_URIS} resources" in caught.value.message
        assert "unsubscribe from one" in caught.value.message
        await client.session.unsubscribe_resource(uris[0])
        await client.session.subscribe_resource(uris[-1])


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_subscribe_being_checked_holds_its_place_in_the_bound(
    hand_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subscribed name is checked by resolving it, in a thread in a large catalog. It took its place only once
    checked, so subscribes sent together each found the room that one had left, and all were let through. Here one
    subscribe's check is held while another, with no room left for it, is answered."""
    from capidx.server import app, resources

    monkeypatch.setattr(app, "INLINE_CAPABILITIES", 0)  # names resolve in a thread, as in a large catalog
    spellings = ("".join(s) for s in itertools.product(*((c, c.upper()) if c.isalpha() else c for c in "claude-code")))
    uris = [PREFIX + "agents/" + spelling for spelling in itertools.islice(spellings, MAX_SUBSCRIBED_URIS + 1)]
    held, last = uris[-2:]
    entered, release, read_resource = threading.Event(), threading.Event(), resources.read_resource

    def hold(snapshot: Any, kinds: frozenset[str], uri: str) -> Any:
        if uri == held:
            entered.set()
            release.wait(20)
        return read_resource(snapshot, kinds, uri)

    async with connect(hand_build, "2025-11-25") as client:
        for uri in uris[:-2]:
            await client.session.subscribe_resource(uri)
        monkeypatch.setattr(resources, "read_resource", hold)
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.session.subscribe_resource, held)
            try:
                assert await anyio.to_thread.run_sync(entered.wait, 10)
                with pytest.raises(MCPError) as caught:
                    await client.session.subscribe_resource(last)
            finally:
                release.set()
        assert caught.value.code == INVALID_PARAMS
        assert f"at most {MAX_SUBSCRIBED_URIS} resources" in caught.value.message


async def test_a_listen_names_at_most_so_many_resources_and_they_are_not_checked(hand_build: Path) -> None:
    """`subscriptions/listen` is bounded as `resources/subscribe` is (a URI named twice counts once); its URIs are
    acknowledged as named, readable or not (tests/test_server_reload.py: one fires once a build has its document)."""
    named = [PREFIX + f"capabilities/not%20yet%20{n}" for n in range(MAX_SUBSCRIBED_URIS + 1)]
    async with connect(hand_build, "2026-07-28") as client:
        with pytest.raises(MCPError) as caught:
            async with client.listen(resource_subscriptions=named):
                pass
        assert caught.value.code == INVALID_PARAMS
        assert f"names {MAX_SUBSCRIBED_URIS + 1} resources, at most {MAX_SUBSCRIBED_URIS}" in caught.value.message
        assert "name fewer" in caught.value.message
        async with client.listen(resource_subscriptions=[*named[:-1], *named[:3]]) as subscription:
            assert subscription.honored is not None
            assert set(subscription.honored.resource_subscriptions or ()) == set(named[:-1])
            assert (await client.read_resource(PREFIX + "summary")).contents


async def test_open_listens_watch_at_most_so_many_resources_together(hand_build: Path) -> None:
    """One listen names at most `MAX_SUBSCRIBED_URIS`, but a client may open many: together they watch at most
    `MAX_WATCHED_URIS` distinct resources. A listen over the bound is refused, saying it; one naming only what is
    watched already adds nothing and is honored; once a listen ends, its resources may be watched again."""
    per_listen = MAX_SUBSCRIBED_URIS
    batches = [
        [PREFIX + f"capabilities/watched%20{b}%20{n}" for n in range(per_listen)]
        for b in range(MAX_WATCHED_URIS // per_listen)
    ]
    one_more = [PREFIX + "capabilities/one%20more"]
    async with connect(hand_build, "2026-07-28") as client:
        async with AsyncExitStack() as listens:
            for batch in batches:
                await listens.enter_async_context(client.listen(resource_subscriptions=batch))
            with pytest.raises(MCPError) as caught:
                async with client.listen(resource_subscriptions=one_more):
                    pass
            assert caught.value.code == INVALID_PARAMS
            assert f"at most {MAX_WATCHED_URIS} resources together" in caught.value.message
            async with client.listen(resource_subscriptions=batches[0][:3]) as again:
                assert again.honored is not None
        async with client.listen(resource_subscriptions=one_more) as subscription:
            assert subscription.honored is not None
            assert list(subscription.honored.resource_subscriptions or ()) == one_more


async def test_template_values_complete_for_exposed_templates_only(any_build: Path, revision: str) -> None:
    import mcp_types as types

    hub = make_hub(any_build, {"expose": "agents"})
    async with connect(hub, revision) as client:
        agents = await client.complete(
            types.ResourceTemplateReference(uri=PREFIX + "agents/{agent}"), {"name": "agent", "value": "c"}
        )
        hidden = await client.complete(
            types.ResourceTemplateReference(uri=PREFIX + "capabilities/{capability}"),
            {"name": "capability", "value": ""},
        )
    assert agents.completion.values == ["claude-code", "copilot-cli"]
    assert (agents.completion.total, agents.completion.has_more) == (2, False)
    assert hidden.completion.values == []


@pytest.fixture(scope="module", name="large_build")
def fixture_large_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from large_catalog_build(tmp_path_factory)


async def test_a_completion_past_a_hundred_values_says_how_many_there_are(large_build: Path, revision: str) -> None:
    """The protocol sends at most 100 values: with 250 agents, the first 100, `total` 250 and `hasMore` (the
    answer said 100 and no more)."""
    import mcp_types as types

    async with connect(make_hub(large_build, {"expose": "agents"}), revision) as client:
        every = await client.complete(
            types.ResourceTemplateReference(uri=PREFIX + "agents/{agent}"), {"name": "agent", "value": ""}
        )
        few = await client.complete(
            types.ResourceTemplateReference(uri=PREFIX + "agents/{agent}"), {"name": "agent", "value": "agent-01"}
        )
    assert len(every.completion.values) == 100 and every.completion.total == 250 and every.completion.has_more
    assert few.completion.total == len(few.completion.values) < 100 and not few.completion.has_more


async def test_a_capability_no_name_clearly_matches_is_not_found_and_not_a_no(bundled_build: Path) -> None:
    """A template value whose words match a few capabilities weakly ('voice mode') said only "no capability clearly
    matches 'voice mode'; the closest: …", where a value that matches nothing says "Resource not found" and that it
    is not a no: said alike now, with the closest still listed."""
    async with connect(bundled_build) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(PREFIX + "capabilities/voice%20mode")
    message = caught.value.message
    assert message.startswith(f"Resource not found: {PREFIX}capabilities/voice%20mode: no capability clearly matches")
    assert "'voice mode', which is not a no (the catalog may word it otherwise); the closest: " + PREFIX in message
