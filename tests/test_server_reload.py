"""Live reload: a new build is swapped in while clients are connected, and they are told."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPError
from server_support import (
    CAPABILITIES,
    PREFIX,
    connect,
    make_hub,
    real_build,
    rewrite_manifest,
    run_capidx,
    swap_in,
    write_build,
    write_catalog,
)

from capidx.server import app, reload, resources, semantic
from capidx.server.reload import Reloader
from capidx.server.snapshot import BuildError, load_snapshot

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


def notifications_heard() -> tuple[list[types.ServerNotification], Callable[[object], Awaitable[None]]]:
    """A list, and a client message handler that appends to it every notification the server sends."""
    heard: list[types.ServerNotification] = []

    async def on_message(message: object) -> None:
        if isinstance(message, types.ServerNotification):
            heard.append(message)

    return heard, on_message


async def test_2025_client_hears_list_changed_and_updated_then_reads_new_bytes(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    heard, on_message = notifications_heard()

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


async def test_a_build_swapped_in_before_the_watch_starts_is_picked_up(tmp_path: Path) -> None:
    """`capidx serve` loads the build, then imports the MCP SDK (about a second) before the reloader starts: a
    rebuild finished in between was taken for the build being served, as the reloader's first look at the folder
    found the new one, and it was never loaded."""
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    rebuild(build, "2")
    stop = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(Reloader(hub, build, poll_seconds=0.1).run, stop)
        await wait_for(lambda: generation(hub.snapshot.artifacts[SUMMARY].text) == "2")
        stop.set()


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


async def test_a_new_build_is_swapped_in_with_its_catalog_embedded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Embedding a catalog takes seconds when it is large: done before the swap, off the event loop, so that no
    # lookup on the new build waits for it, nor leaves the event loop for it (`pending`).
    catalog = write_catalog(tmp_path / "agents")
    build = real_build(catalog, tmp_path / "build")
    hub = make_hub(build)
    write_catalog(catalog, note=" Freshly rebuilt.")
    real_build(catalog, build)
    with caplog.at_level(logging.INFO, logger=semantic.__name__):
        assert await Reloader(hub, build).check() is True
    meanings = hub.snapshot.index.meanings
    assert meanings.texts and not meanings.pending
    assert f"{len(meanings.texts)} capabilities embedded" in caplog.text


async def test_reload_off_keeps_the_first_build(tmp_path: Path) -> None:
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build, {"reload": False})
    assert hub.settings.reload is False
    assert hub.ttl_ms > make_hub(build).ttl_ms  # nothing can change: clients may cache longer


def _with_index(build: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """`build` with its match index edited and the manifest updated to match: only the index's shape is wrong."""
    path = build / "index" / "match.json"
    index = json.loads(path.read_text("utf-8"))
    edit(index)
    data = json.dumps(index).encode("utf-8")
    path.write_bytes(data)

    def listed(manifest: dict[str, Any]) -> None:
        (row,) = [row for row in manifest["artifacts"] if row["path"] == "index/match.json"]
        row.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())

    rewrite_manifest(build, listed)
    return build


def _long_number(build: Path) -> Path:
    manifest = build / "manifest.json"
    manifest.write_text(manifest.read_text("utf-8").replace("{", '{"n": ' + "9" * 5000 + ",", 1), "utf-8")
    return build


BROKEN: dict[str, Callable[[Path], Path]] = {
    "agent names not an object": lambda b: _with_index(b, lambda index: index.update(agentNames=[])),
    "a similarity score not a number": lambda b: _with_index(
        b, lambda index: index["capabilities"][0].update(similarTo=[{"capability": "hooks", "score": "x"}])
    ),
    "a number of 5,000 digits in the manifest": _long_number,
    "a similarity score too large for a float": lambda b: _with_index(
        b, lambda index: index["capabilities"][0].update(similarTo=[{"capability": "hooks", "score": 10**400}])
    ),
    "a similarity score written as text": lambda b: _with_index(
        b, lambda index: index["capabilities"][0].update(similarTo=[{"capability": "hooks", "score": "0.5"}])
    ),
}


@pytest.mark.parametrize("damage", BROKEN.values(), ids=BROKEN.keys())
async def test_a_build_of_another_shape_is_refused_and_the_last_good_one_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: Callable[[Path], Path]
) -> None:
    """A hash-consistent build whose index or manifest has a part of another shape is refused with a clear
    error at start, and ignored by a running server, which keeps serving the last good build."""
    broken = damage(write_build(tmp_path / "broken", generation="2"))
    with pytest.raises(BuildError, match=r"rebuild|not a build manifest"):
        load_snapshot(broken)
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    swap_in(damage(write_build(tmp_path / ".capidx-build-x", generation="2")), build)
    with caplog.at_level(logging.ERROR, logger="capidx.server"):
        assert await Reloader(hub, build, poll_seconds=0.1).check() is False
    assert "ignoring the new build" in caplog.text
    assert generation(hub.snapshot.artifacts[SUMMARY].text) == "1"


async def test_whatever_loading_a_new_build_raises_the_server_keeps_serving(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    rebuild(build, "2")

    def unforeseen(_directory: Path) -> Any:
        raise MemoryError

    monkeypatch.setattr(reload, "load_snapshot", unforeseen)
    with caplog.at_level(logging.ERROR, logger="capidx.server"):
        assert await Reloader(hub, build, poll_seconds=0.1).check() is False
    assert "ignoring the new build: MemoryError() while loading it" in caplog.text
    (record,) = [r for r in caplog.records if "ignoring the new build" in r.getMessage()]
    assert record.exc_info is not None  # not foreseen: logged with its traceback
    assert generation(hub.snapshot.artifacts[SUMMARY].text) == "1"


async def test_whatever_preparing_a_loaded_build_raises_the_server_keeps_serving_the_last_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build that loads, but whose tool list (or anything else clients see of it) cannot be made, is ignored as a
    broken build is: raised while swapping it in, it ended the server."""
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    rebuild(build, "2")

    def unforeseen(*_args: Any) -> Any:
        raise ValueError("no tool list")

    monkeypatch.setattr(app.tools, "tool_list", unforeseen)
    with caplog.at_level(logging.ERROR, logger="capidx.server"):
        assert await Reloader(hub, build, poll_seconds=0.1).check() is False
    (record,) = [r for r in caplog.records if "ignoring the new build" in r.getMessage()]
    assert "ValueError" in record.getMessage() and record.exc_info is not None
    assert generation(hub.snapshot.artifacts[SUMMARY].text) == "1"
    assert [tool.name for tool in hub.view.tools]  # the last build's view, whole


async def test_stopping_does_not_wait_for_a_build_being_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a large build takes seconds (about 9 at 20,000 capabilities) and cannot be interrupted. It ran in an
    AnyIO worker thread, which a stop waited for: once for the cancelled task, and once more at exit, where the
    interpreter joins every thread that is not a daemon. One Ctrl-C or stdin closing took as long as the load."""
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    entered, release = threading.Event(), threading.Event()
    daemon: list[bool] = []

    def endless(_directory: Path) -> Any:
        daemon.append(threading.current_thread().daemon)
        entered.set()
        release.wait(20)
        raise BuildError("released")

    monkeypatch.setattr(reload, "load_snapshot", endless)
    stop = anyio.Event()
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(Reloader(hub, build, poll_seconds=0.1).run, stop)
                rebuild(build, "2")
                await anyio.to_thread.run_sync(entered.wait, 10)
                stop.set()
    finally:
        release.set()
    assert daemon == [True]  # the interpreter does not wait for it at exit
    assert generation(hub.snapshot.artifacts[SUMMARY].text) == "1"


@dataclass
class Held:
    """Resolving one URI, made to wait (up to 20 s) until `release` is set."""

    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    released: list[bool] = field(default_factory=list)  # per wait: ended by `release`, not by waiting 20 s out
    daemon: list[bool] = field(default_factory=list)  # per wait: whether its thread is a daemon


async def test_a_listen_hears_of_a_document_the_catalog_did_not_have_yet(tmp_path: Path) -> None:
    """The URIs a listen names are not checked as `resources/subscribe` checks its URI: one naming a capability the
    catalog does not have yet is acknowledged, and reported as updated by the build that adds it."""
    newest = CAPABILITIES[-1]
    build = write_build(tmp_path / "build", generation="1", caps=CAPABILITIES[:-1])
    hub = make_hub(build)
    uri = PREFIX + "capabilities/" + newest.slug
    async with connect(hub, "2026-07-28") as client:
        with pytest.raises(MCPError):
            await client.read_resource(uri)
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            staging = write_build(tmp_path / ".capidx-build-2", generation="2", caps=CAPABILITIES)
            swap_in(staging, build)
            assert await Reloader(hub, build).check()
            with anyio.fail_after(10):
                async for event in subscription:
                    assert event == ResourceUpdated(uri=uri)
                    break
        assert newest.name in (await client.read_resource(uri)).contents[0].text


async def test_a_subscribed_resource_that_cannot_be_compared_is_told_as_changed_and_the_server_keeps_serving(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Comparing what was subscribed resolves names in both builds, and a new build brings the data the resolver runs
    on: anything but "not found" that a read raises there escaped the swap and ended the reloader, and the server with
    it. Such a URI is told as changed (what a client then reads says what it is now), once logged with its traceback,
    and the other URIs are compared as ever."""
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    served = hub.snapshot.digest
    broken = PREFIX + "capabilities/" + CAPABILITIES[0].slug
    read_resource = resources.read_resource

    def unforeseen(snapshot: Any, kinds: frozenset[str], uri: str) -> Any:
        if uri == broken and snapshot.digest != served:
            raise MemoryError
        return read_resource(snapshot, kinds, uri)

    monkeypatch.setattr(resources, "read_resource", unforeseen)
    heard, on_message = notifications_heard()
    async with connect(hub, "2025-11-25", message_handler=on_message) as client:
        for uri in (broken, SUMMARY):
            subscribe = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
            await client.session.send_request(subscribe, types.EmptyResult)
        rebuild(build, "2")
        with caplog.at_level(logging.ERROR, logger="capidx.server"):
            assert await Reloader(hub, build).check()
        await wait_for(lambda: len([n for n in heard if isinstance(n, types.ResourceUpdatedNotification)]) == 2)
        assert generation((await client.read_resource(SUMMARY)).contents[0].text) == "2"
    assert sorted(n.params.uri for n in heard if isinstance(n, types.ResourceUpdatedNotification)) == sorted(
        [broken, SUMMARY]
    )
    (record,) = [r for r in caplog.records if "could not be read" in r.getMessage()]
    assert "1 subscribed resource(s)" in record.getMessage() and "MemoryError()" in record.getMessage()
    assert record.exc_info is not None  # not foreseen: logged with its traceback


def hold_resolving(monkeypatch: pytest.MonkeyPatch, uri: str, *, first_only: bool = False) -> Held:
    """Resolving `uri` held (`Held`): every time, or with `first_only` the first time only."""
    held = Held()
    read_resource = resources.read_resource

    def resolve(snapshot: Any, kinds: frozenset[str], asked: str) -> Any:
        if asked == uri and not (first_only and held.entered.is_set()):
            held.daemon.append(threading.current_thread().daemon)
            held.entered.set()
            held.released.append(held.release.wait(20))
        return read_resource(snapshot, kinds, asked)

    monkeypatch.setattr(resources, "read_resource", resolve)
    return held


async def test_requests_are_answered_while_a_reload_compares_what_was_subscribed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every subscribed URI is resolved in the old and the new build to tell whether it changed: a free-text one
    takes up to 0.6 s on a large catalog. That ran on the event loop, so no client was answered meanwhile (one listen
    of 4,000 such URIs: 9 s at each rebuild of the bundled build). Here resolving one such URI is held until a read
    and a tools/list have been answered; then the subscribed document that changed is reported."""
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    slow = PREFIX + "capabilities/some%20words"
    held = hold_resolving(monkeypatch, slow)
    async with (
        connect(hub, "2026-07-28") as client,
        anyio.create_task_group() as tg,
        client.listen(resource_subscriptions=[slow, SUMMARY]) as subscription,
    ):
        rebuild(build, "2")
        tg.start_soon(Reloader(hub, build).check)
        try:
            assert await anyio.to_thread.run_sync(held.entered.wait, 10)
            assert generation((await client.read_resource(SUMMARY)).contents[0].text) == "2"
            assert (await client.list_tools()).tools
        finally:
            held.release.set()
        events = []
        with anyio.fail_after(10):
            async for event in subscription:
                events.append(event)
                if event == ResourceUpdated(uri=SUMMARY):
                    break
    assert held.released and all(held.released)  # never waited out: the comparison did not hold the requests up
    assert ResourceUpdated(uri=slow) not in events  # names no document in either build


async def test_changed_lists_are_told_while_a_reload_still_compares_what_was_subscribed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new build is served from the swap on, while the subscribed documents are still being compared (up to
    minutes on a large catalog): its resource list is the one listed from then on, so both revisions are told at
    once that it changed, not once the comparison is done. Here the comparison is held until they have been told;
    the subscribed document that changed is reported after it."""
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    heard, on_message = notifications_heard()

    def legacy_heard(kind: type[types.ServerNotification]) -> bool:
        return any(isinstance(notification, kind) for notification in heard)

    async with (
        connect(hub, "2025-11-25", message_handler=on_message) as legacy,
        connect(hub, "2026-07-28") as client,
        anyio.create_task_group() as tg,
        client.listen(resources_list_changed=True, resource_subscriptions=[SUMMARY]) as subscription,
    ):
        await legacy.session.send_request(
            types.SubscribeRequest(params=types.SubscribeRequestParams(uri=SUMMARY)), types.EmptyResult
        )
        held = hold_resolving(monkeypatch, SUMMARY)
        rebuild(build, "2")
        tg.start_soon(Reloader(hub, build).check)
        try:
            assert await anyio.to_thread.run_sync(held.entered.wait, 10)
            with anyio.fail_after(10):
                async for event in subscription:
                    assert event == ResourcesListChanged()  # the document's update waits for the comparison
                    break
            await wait_for(lambda: legacy_heard(types.ResourceListChangedNotification))
            assert not legacy_heard(types.ResourceUpdatedNotification)
        finally:
            held.release.set()
        with anyio.fail_after(10):
            async for event in subscription:
                assert event == ResourceUpdated(uri=SUMMARY)
                break
        await wait_for(lambda: legacy_heard(types.ResourceUpdatedNotification))
    assert held.released and all(held.released)


async def test_stopping_does_not_wait_for_a_comparison_of_what_was_subscribed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Comparing the subscribed documents of the two builds cannot be interrupted and may take long on a large
    catalog: a stop leaves it to a daemon thread, as it leaves a build being loaded (above)."""
    build = write_build(tmp_path / "build", generation="1")
    hub = make_hub(build)
    slow = PREFIX + "capabilities/some%20words"
    held = hold_resolving(monkeypatch, slow)
    stop = anyio.Event()
    try:
        async with connect(hub, "2026-07-28") as client, client.listen(resource_subscriptions=[slow]):
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(Reloader(hub, build, poll_seconds=0.1).run, stop)
                    rebuild(build, "2")
                    assert await anyio.to_thread.run_sync(held.entered.wait, 10)
                    stop.set()
            assert held.released == []  # stopped while the comparison was still held
    finally:
        held.release.set()
    assert held.daemon == [True]  # the interpreter does not wait for it at exit


MCP_BY_NAME = PREFIX + "capabilities/mcp"  # no document's own URI: subscribing to it resolves the name


def held_subscribe_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any, Held]:
    """A build and its hub whose first check of `MCP_BY_NAME` (resolving it, in a thread, as a large catalog's
    names are) is held until the test releases it."""
    monkeypatch.setattr(app, "INLINE_CAPABILITIES", 0)
    build = write_build(tmp_path / "build", generation="1")
    return build, make_hub(build), hold_resolving(monkeypatch, MCP_BY_NAME, first_only=True)


async def rebuilt_with_mcp_changed(tmp_path: Path, hub: Any, build: Path) -> bool:
    """Swap in a build whose MCP Servers document says " Rebuilt.", and let the reloader take it."""
    mcp, *others = CAPABILITIES
    changed = replace(mcp, description=mcp.description + " Rebuilt.")
    swap_in(write_build(tmp_path / ".capidx-build-2", generation="2", caps=(changed, *others)), build)
    return await Reloader(hub, build).check()


async def test_a_subscribe_still_being_checked_when_a_build_is_swapped_in_hears_of_the_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subscribed URI that names no document as it is (`…/capabilities/mcp`) is checked by resolving it, in a thread
    in a large catalog. It used to be subscribed only once checked: a build swapped in meanwhile did not compare it, so
    a client that sent the subscribe, then a read answered from the old build, was never told the document changed.
    Here the subscribe's check is held while the read is answered and the new build swapped in."""
    build, hub, held = held_subscribe_check(tmp_path, monkeypatch)
    heard, on_message = notifications_heard()
    subscribe = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=MCP_BY_NAME))
    async with connect(hub, "2025-11-25", message_handler=on_message) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.session.send_request, subscribe, types.EmptyResult)
            try:
                assert await anyio.to_thread.run_sync(held.entered.wait, 10)
                read = (await client.read_resource(MCP_BY_NAME)).contents[0].text  # sent after the subscribe
                assert await rebuilt_with_mcp_changed(tmp_path, hub, build)
            finally:
                held.release.set()
        assert "Rebuilt." not in read and "Rebuilt." in (await client.read_resource(MCP_BY_NAME)).contents[0].text
        await wait_for(lambda: any(isinstance(n, types.ResourceUpdatedNotification) for n in heard))
    assert [n.params.uri for n in heard if isinstance(n, types.ResourceUpdatedNotification)] == [MCP_BY_NAME]


@pytest.mark.parametrize("unsubscribed", [False, True])
async def test_a_subscribe_cancelled_leaves_the_uri_subscribed_by_another_subscribe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unsubscribed: bool
) -> None:
    """A URI counts as subscribed from the moment its subscribe arrives, and is taken back if that subscribe is
    refused or cancelled. A second subscribe of the same URI answered meanwhile (with or without an unsubscribe
    between them) must keep it: taken back, the client was told it was subscribed, and then never told of a change.
    Here the first subscribe's check is held until the second has been answered, then the first is cancelled."""
    build, hub, held = held_subscribe_check(tmp_path, monkeypatch)
    heard, on_message = notifications_heard()
    subscribe = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=MCP_BY_NAME))
    unsubscribe = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=MCP_BY_NAME))
    async with connect(hub, "2025-11-25", message_handler=on_message) as client:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.session.send_request, subscribe, types.EmptyResult)
                assert await anyio.to_thread.run_sync(held.entered.wait, 10)
                if unsubscribed:
                    await client.session.send_request(unsubscribe, types.EmptyResult)
                await client.session.send_request(subscribe, types.EmptyResult)
                tg.cancel_scope.cancel()  # the client gives the first one up: notifications/cancelled
        finally:
            held.release.set()
        assert (await client.list_tools()).tools  # the server is past the first subscribe's end
        assert await rebuilt_with_mcp_changed(tmp_path, hub, build)
        await wait_for(lambda: any(isinstance(n, types.ResourceUpdatedNotification) for n in heard))
    assert [n.params.uri for n in heard if isinstance(n, types.ResourceUpdatedNotification)] == [MCP_BY_NAME]


async def test_a_build_over_its_budgets_is_served_and_said_to_be(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`capidx build` writes a build that breaches a budget (for inspection) and exits 1: a running server takes it
    as it takes any build, and says at the reload, as at a start, that it is over budget."""
    catalog = write_catalog(tmp_path / "agents")
    build = real_build(catalog, tmp_path / "build")
    hub = make_hub(build)
    reloader = Reloader(hub, build, poll_seconds=0.1)
    config = tmp_path / "capidx.yaml"
    config.write_text("budgets:\n  summary: 10\n", encoding="utf-8")
    made = run_capidx("build", "--agents", str(catalog), "--out", str(build), "--config", str(config), cwd=tmp_path)
    assert made.returncode == 1, made.stderr
    with caplog.at_level(logging.WARNING, logger="capidx.server"):
        assert await reloader.check() is True
    assert "breaches 1 token budget(s) (summary " in caplog.text and "served as built" in caplog.text
    started = run_capidx("serve", "--build", str(build), "--no-reload", stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert "breaches 1 token budget(s) (summary " in started.stderr
