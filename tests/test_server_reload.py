"""Live reload: a new build is swapped in while clients are connected, and they are told."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from server_support import (
    PREFIX,
    connect,
    make_hub,
    real_build,
    swap_in,
    write_build,
    write_catalog,
)

from capidx.server.reload import Reloader

pytestmark = pytest.mark.anyio
SUMMARY = PREFIX + "summary"


def generation(text: str) -> str:
    return text.split("(generation ", 1)[1].split(")", 1)[0]


async def wait_for(predicate, timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)


def rebuild(build: Path, generation: str) -> None:
    """Write a new build beside the served one and swap it in by rename, as `capidx build` does."""
    staging = build.with_name(f".capidx-build-{generation}")
    write_build(staging, generation=generation)
    swap_in(staging, build)


async def test_2025_client_hears_list_changed_and_updated_then_reads_new_bytes(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    heard: list[types.ServerNotification] = []

    async def on_message(message: object) -> None:
        if isinstance(message, types.ServerNotification):
            heard.append(message)

    stop = anyio.Event()
    async with anyio.create_task_group() as tg, connect(hub, "2025-11-25", message_handler=on_message) as client:
        tg.start_soon(Reloader(hub, build, poll_seconds=0.1).run, stop)
        assert generation((await client.read_resource(SUMMARY)).contents[0].text) == "1"
        await client.session.send_request(
            types.SubscribeRequest(params=types.SubscribeRequestParams(uri=SUMMARY)), types.EmptyResult
        )
        rebuild(build, "2")
        await wait_for(lambda: any(isinstance(n, types.ResourceUpdatedNotification) for n in heard))
        kinds = [type(n) for n in heard]
        assert types.ResourceListChangedNotification in kinds
        assert [n.params.uri for n in heard if isinstance(n, types.ResourceUpdatedNotification)] == [SUMMARY]
        assert generation((await client.read_resource(SUMMARY)).contents[0].text) == "2"
        stop.set()


async def test_2026_client_hears_it_through_subscriptions_listen(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    stop = anyio.Event()
    async with anyio.create_task_group() as tg, connect(hub, "2026-07-28") as client:
        tg.start_soon(Reloader(hub, build, poll_seconds=0.1).run, stop)
        async with client.listen(resources_list_changed=True, resource_subscriptions=[SUMMARY]) as subscription:
            rebuild(build, "2")
            events = []
            with anyio.fail_after(10):
                async for event in subscription:
                    events.append(event)
                    if isinstance(event, ResourceUpdated):
                        break
        assert ResourcesListChanged() in events
        assert ResourceUpdated(uri=SUMMARY) in events
        assert generation((await client.read_resource(SUMMARY)).contents[0].text) == "2"
        stop.set()


async def test_a_broken_new_build_is_logged_and_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    reloader = Reloader(hub, build, poll_seconds=0.1)
    staging = write_build(tmp_path / ".capidx-build-x", generation="2")
    (staging / "summary.md").write_text("tampered\n", encoding="utf-8")
    swap_in(staging, build)
    with caplog.at_level(logging.ERROR, logger="capidx.server"):
        assert await reloader.check() is False
    assert "ignoring the new build" in caplog.text and "summary.md" in caplog.text
    async with connect(hub) as client:
        assert generation((await client.read_resource(SUMMARY)).contents[0].text) == "1"
    shutil.rmtree(build)
    with caplog.at_level(logging.ERROR, logger="capidx.server"):
        assert await reloader.check() is False  # gone altogether: still serving
    rebuild(build, "3")
    assert await reloader.check() is True
    assert generation(hub.snapshot.artifacts[SUMMARY].text) == "3"


async def test_an_unchanged_build_is_not_swapped(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    rebuild(build, "1")  # same bytes, new directory
    before = hub.view
    assert await Reloader(hub, build).check() is False
    assert hub.view is before


async def test_a_real_rebuild_by_the_compiler_is_picked_up(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "agents")
    build = real_build(catalog, tmp_path / "build")
    hub = make_hub(build)
    stop = anyio.Event()
    async with anyio.create_task_group() as tg, connect(hub, "2026-07-28") as client:
        tg.start_soon(Reloader(hub, build, poll_seconds=0.2).run, stop)
        uri = PREFIX + "capabilities/mcp-servers"
        assert "Freshly rebuilt" not in (await client.read_resource(uri)).contents[0].text
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            write_catalog(catalog, note=" Freshly rebuilt.")
            await anyio.to_thread.run_sync(real_build, catalog, build)
            with anyio.fail_after(15):
                async for event in subscription:
                    assert event == ResourceUpdated(uri=uri)
                    break
        assert "Freshly rebuilt" in (await client.read_resource(uri)).contents[0].text
        stop.set()


async def test_reload_off_keeps_the_first_build(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build, {"reload": False})
    assert hub.settings.reload is False
    assert hub.ttl_ms > make_hub(build).ttl_ms  # nothing can change: clients may cache longer
