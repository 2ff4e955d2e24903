"""MCP wiring: a lowlevel `Server` whose handlers answer from the current snapshot.

`Hub` holds the current `View` (a snapshot plus everything listed for it, computed once) and swaps
it atomically on reload: a request reads `hub.view` once at its start, so requests in flight finish
on the snapshot they started with. After a swap the hub notifies clients on both protocol
revisions: 2025-11-25 connections through their own session (`notifications/resources/list_changed`,
`notifications/resources/updated` for URIs they `resources/subscribe`d), 2026-07-28 connections
through the `subscriptions/listen` bus. Which subscribed URIs changed is worked out in a daemon thread
(`in_daemon_thread`): a free-text template URI costs a name resolution in each build.

Per-connection state lives in the server lifespan, which `Server.run` enters once per connection
(stdio, in-memory). Streamable HTTP enters it once for the whole app and runs stateless, so legacy
push notifications are off there (`legacy_push=False`): 2025-11-25 HTTP clients re-list on their own,
2026-07-28 HTTP clients get events through `subscriptions/listen`.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from capidx.server import resources as res
from capidx.server import semantic, tools
from capidx.server.handshake import explain_uninitialized
from capidx.server.instructions import server_instructions
from capidx.server.limits import clip, larger_than
from capidx.server.settings import Settings
from capidx.server.snapshot import Snapshot

logger = logging.getLogger("capidx.server")

SERVER_NAME = "capidx"
# A build never changes under a snapshot; with live reload a new one may replace it at any time,
# so clients that do not listen for change events should not cache for long.
TTL_MS_RELOAD = 60_000
TTL_MS_STATIC = 3_600_000
COMPLETION_VALUES = 100  # the protocol's most values in one completion: `total` and `hasMore` tell of the rest
# Resource URIs one connection may `resources/subscribe` to, and one `subscriptions/listen` may name. Each is resolved
# in the old and the new build at every reload (a free-text one: about 1 ms on the bundled catalog, up to 0.6 s on one
# of thousands of capabilities). A client subscribes to the handful of documents it has read; unbounded, one listen of
# 4,000 free-text URIs kept a reload busy for 9 s on the bundled build.
MAX_SUBSCRIBED_URIS = 100
# Distinct URIs all open `subscriptions/listen` streams may watch together: one listen is bounded above, but a client
# may open many (the SDK allows 1,024 at once), and every watched URI is resolved twice at each reload.
MAX_WATCHED_URIS = 1_000
# Open `subscriptions/listen` streams over stdio: the SDK's own bound (one client, one pipe).
MAX_LISTENS_STDIO = 1_024
# The parameters of one `subscriptions/listen`, at most, in the memory they take parsed (roughly:
# `limits.larger_than`). The SDK holds a request's parameters as parsed until it is answered, and a listen is answered
# only when it ends: a listen carrying 4 MiB of `[]` in a key nobody reads held about 100 MB for as long as its client
# kept it, so that 16 of them held 1.8 GB over stdio (1,024 are allowed) and the 50 HTTP allows 5 GB; now 1,024 hold
# 64 MiB at most. 100 URIs of a few hundred characters and the request's `_meta` take half of it.
MAX_LISTEN_PARAMS_BYTES = 64 * 1024
# Resolving a name (a lookup, a free-text resource URI) in a catalog of more capabilities than this takes milliseconds
# (a question nothing names: about 0.1 ms per capability, 100 ms for 1,250): it runs in a thread of its own, so that
# other requests, of this session or another, are answered meanwhile (a daemon thread, which a stop does not wait for:
# `in_daemon_thread`). Below it, on the event loop: the hop to such a thread and back costs more than the lookup
# (about 0.3 ms against 0.25 ms on the bundled catalog).
INLINE_CAPABILITIES = 100

T = TypeVar("T")


@dataclass(frozen=True)
class View:
    """One snapshot and what a client sees of it, computed once per build."""

    snapshot: Snapshot
    resources: tuple[types.Resource, ...]
    templates: tuple[types.ResourceTemplate, ...]
    tools: tuple[types.Tool, ...]
    instructions: str

    @classmethod
    def of(cls, snapshot: Snapshot, settings: Settings, *, reloaded: bool = False) -> View:
        """`reloaded`: a build swapped in while serving, whose lack of instructions.md is logged (the
        pointer is sent instead), never fatal; at start it is (`server_instructions`)."""
        kinds = settings.exposed_kinds
        return cls(
            snapshot=snapshot,
            resources=tuple(res.list_resources(snapshot, kinds)),
            templates=tuple(res.list_templates(snapshot, kinds)),
            tools=tuple(tools.tool_list(snapshot, settings.tool_variants)),
            instructions=server_instructions(snapshot, settings, kinds, fallback=reloaded),
        )


@dataclass(eq=False)
class Checks:
    """The subscribes of one URI being checked since it was last subscribed to, none of which has succeeded yet."""

    running: int = 0


@dataclass(eq=False)
class Peer:
    """One connection's state: its session (2025-11-25 push) and subscribed URIs.

    `subscriptions` holds a URI from the moment its subscribe arrives (`Hub.subscribe`); `checks` those of them that
    no subscribe has confirmed yet. A subscribe refused or cancelled takes its URI back only when no other subscribe
    of it sent since it was subscribed has succeeded or may still, and an unsubscribe puts the subscribes still being
    checked out of the count: what they end with no longer matters."""

    session: ServerSession | None = None
    subscriptions: set[str] = field(default_factory=set)
    checks: dict[str, Checks] = field(default_factory=dict)


def warn_over_budget(snapshot: Snapshot) -> None:
    """A build over its token budgets is served as built (it is what `capidx build` wrote, for inspection): said once
    per build, at start and at each reload, so that nobody takes it for one that passed."""
    if snapshot.over_budget:
        shown = ", ".join(snapshot.over_budget[:3]) + (", …" if len(snapshot.over_budget) > 3 else "")
        logger.warning(
            "build %s breaches %d token budget(s) (%s tokens): served as built; `capidx report` shows them",
            snapshot.digest[:12],
            len(snapshot.over_budget),
            shown,
        )


class Hub:
    """The current view, the connections and the change-event bus of one running server."""

    def __init__(self, snapshot: Snapshot, settings: Settings, *, legacy_push: bool = True) -> None:
        self.settings = settings
        self.kinds = settings.exposed_kinds
        self.view = View.of(snapshot, settings)
        self.validators = tools.Validators.for_variants(settings.tool_variants)
        self.legacy_push = legacy_push
        self.ttl_ms = TTL_MS_RELOAD if settings.reload else TTL_MS_STATIC
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus, max_subscriptions=max_listens(settings))
        self.peers: set[Peer] = set()
        self.watched: Counter[str] = Counter()  # URIs that 2026-07-28 listeners asked about

    @property
    def snapshot(self) -> Snapshot:
        return self.view.snapshot

    # --- reload ---------------------------------------------------------------------------------------

    def view_of(self, snapshot: Snapshot) -> View:
        """What clients will see of a build swapped in while serving; computed before `swap`, so that whatever it
        raises leaves the served build as it is (server/reload.py reports it as a build it ignores)."""
        return View.of(snapshot, self.settings, reloaded=True)

    async def swap(self, new: View) -> None:
        """Serve `new` (`view_of`) from now on, then tell clients what changed: the lists at once, the subscribed
        documents once compared. The comparison takes up to minutes on a large catalog while requests are answered on
        the new build, so its lists are announced before it: told only after, clients kept using the old lists
        meanwhile."""
        old, snapshot = self.view, new.snapshot
        self.view = new  # one assignment: every later request sees the new build
        listed = _dump(old.resources, old.templates) != _dump(new.resources, new.templates)
        tooled = _dump(old.tools) != _dump(new.tools)
        subscribed = frozenset(self.watched) | {uri for peer in self.peers for uri in peer.subscriptions}
        await self._notify(listed, tooled, set())
        updated: set[str] = set()
        if subscribed:  # off the event loop: requests are answered meanwhile, on the new build
            updated = await in_daemon_thread(functools.partial(self._changed, old, new, subscribed), "capidx-compare")
        logger.info(
            "serving build %s (%d artifacts); %d subscribed resource(s) changed",
            snapshot.digest[:12],
            len(snapshot.artifacts),
            len(updated),
        )
        warn_over_budget(snapshot)
        await self._notify(False, False, updated)

    def _changed(self, old: View, new: View, uris: frozenset[str]) -> set[str]:
        """The URIs among `uris` whose document differs between the two builds. Run off the event loop (`swap`): it
        reads only the two views, which are immutable, the hub's `kinds`, which never changes, and caches that are
        safe across threads (those `tools/call` already shares with requests from a worker thread).

        A URI whose reading raises anything but `ResourceNotFound`, in either build, counts as changed, and one error
        says how many did so, with the first traceback: raised from here it ended the reloader, and the server with
        it. The URIs a listen names are not checked, and the resolver runs on data a new build brings."""
        failed: dict[str, Exception] = {}

        def sha(view: View, uri: str) -> object:
            try:
                return res.read_resource(view.snapshot, self.kinds, uri).artifact.sha256
            except res.ResourceNotFound:
                return None
            except Exception as error:  # not foreseen
                failed.setdefault(uri, error)
                return object()  # equal to nothing: told as changed

        changed = {uri for uri in uris if sha(old, uri) != sha(new, uri)}
        if failed:
            uri, error = next(iter(failed.items()))
            logger.error(
                "comparing build %s with the one it replaces: %d subscribed resource(s) could not be read (%r "
                "reading %s); told as changed",
                new.snapshot.digest[:12],
                len(failed),
                error,
                clip(uri),
                exc_info=error,
            )
        return changed

    async def _notify(self, listed: bool, tooled: bool, updated: set[str]) -> None:
        """Tell both revisions' clients (2026-07-28 through the bus, 2025-11-25 through their sessions)."""
        await self._notify_modern(listed, tooled, updated)
        if self.legacy_push:
            for peer in list(self.peers):
                await self._notify_legacy(peer, listed, tooled, updated)

    async def _notify_modern(self, listed: bool, tooled: bool, updated: set[str]) -> None:
        if listed and self.settings.resources:
            await self.bus.publish(ResourcesListChanged())
        if tooled:
            await self.bus.publish(ToolsListChanged())
        for uri in sorted(updated):
            await self.bus.publish(ResourceUpdated(uri=uri))

    async def _notify_legacy(self, peer: Peer, listed: bool, tooled: bool, updated: set[str]) -> None:
        session = peer.session
        if session is None:
            return
        try:
            if listed and self.settings.resources:
                await session.send_resource_list_changed()
            if tooled:
                await session.send_tool_list_changed()
            for uri in sorted(updated & peer.subscriptions):
                await session.send_resource_updated(uri)
        except Exception as error:  # a closed connection must not stop the others from hearing
            logger.debug("dropping a disconnected client: %r", error)
            self.peers.discard(peer)

    # --- handlers -------------------------------------------------------------------------------------

    async def list_resources(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=list(self.view.resources))

    async def list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=list(self.view.templates))

    async def read_resource(self, ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        read = await self._resolving(functools.partial(self._read, params.uri), params.uri)
        return res.read_result(read, self.ttl_ms)

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        """Subscribe to `params.uri` as the request arrives, then check that it may be read, and take it back if not.

        The check may resolve a name in a thread (`_resolving`): a URI subscribed only once checked was not compared
        by a build swapped in meanwhile, so a client that sent the subscribe and then a read answered from the old
        build was never told of the change; and subscribes sent together each found the room one had left."""
        peer, uri = ctx.lifespan_context, params.uri
        if uri not in peer.subscriptions:
            if len(peer.subscriptions) >= MAX_SUBSCRIBED_URIS:
                raise _too_many_subscriptions(uri)
            peer.subscriptions.add(uri)
            peer.checks[uri] = Checks()
        checks = peer.checks.get(uri)  # None: confirmed already, whatever this check finds
        if checks is not None:
            checks.running += 1
        peer.session = ctx.session
        try:
            await self._resolving(functools.partial(self._read, uri), uri)  # only what may be read
        except BaseException:  # refused, or the request cancelled: not subscribed after all, unless by another
            if checks is not None:
                checks.running -= 1
                if not checks.running and peer.checks.get(uri) is checks:
                    del peer.checks[uri]
                    peer.subscriptions.discard(uri)
            raise
        if checks is not None and peer.checks.get(uri) is checks:  # not unsubscribed meanwhile: confirmed
            del peer.checks[uri]
        return types.EmptyResult()

    async def _resolving(self, call: Callable[[], T], uri: str | None = None) -> T:
        """`call()`, which may resolve a name (a tool, or `uri` when it is no document's own URI), where it keeps
        other requests waiting least: in a thread when it may load the embedding model and embed the catalog (0.4 s;
        seconds for a large one) or when the catalog is large (`INLINE_CAPABILITIES`), else on the loop.

        A daemon thread (`in_daemon_thread`), not an AnyIO worker: a stop (a signal, stdin closing) or a cancelled
        request waited for a worker's lookup to end, and the interpreter joined it at exit. An abandoned lookup only
        computes an answer nobody sends; AnyIO's limiter on threads still bounds how many run at once, held until
        each ends, so a client cancelling its lookups cannot pile up threads.

        While the model is being loaded (the first third of a second after start), every such call waits for it
        first, not only one that needs it: run beside the loading, which holds the interpreter as it imports, a lookup
        took 5-20 ms instead of 2, a few dozen of them in a row, where one wait ends the slow part at once
        (docs/benchmarks.md, "Latency")."""
        index = self.snapshot.index
        named = uri is not None and uri in self.snapshot.artifacts  # read as it is: nothing to resolve
        if not named and (index.meanings.pending or len(index.capabilities) > INLINE_CAPABILITIES):
            run = functools.partial(_after_the_model, call) if index.meanings.pending else call
            return await in_daemon_thread(run, "capidx-resolve", anyio.to_thread.current_default_thread_limiter())
        return call()

    def _read(self, uri: str) -> res.Read:
        try:
            return res.read_resource(self.snapshot, self.kinds, uri)
        except res.ResourceNotFound as error:
            raise MCPError(types.INVALID_PARAMS, error.message, error.data()) from None

    async def unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        """Also a subscribe of the URI still being checked: it was sent before, and ends unsubscribed."""
        ctx.lifespan_context.subscriptions.discard(params.uri)
        ctx.lifespan_context.checks.pop(params.uri, None)
        return types.EmptyResult()

    async def initialized(self, ctx: Ctx, params: types.NotificationParams) -> None:
        """A 2025-11-25 client finished the handshake: keep its session for push notifications."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            ctx.lifespan_context.session = ctx.session

    async def subscriptions_listen(
        self, ctx: Ctx, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """URIs are not checked as `subscribe` checks them: a listen names them all at once and is acknowledged with
        them (a URI that names no document is honored and never fires, as the SDK has it), checking would cost a
        name resolution each before the acknowledgement, and a document the catalog does not have yet is reported
        as updated by the build that adds it."""
        if larger_than(ctx.params, MAX_LISTEN_PARAMS_BYTES):  # refused before it is held
            message = (
                f"subscriptions/listen parameters too large: a listen is held open until it ends, and its parameters "
                f"with it, so they may take at most {MAX_LISTEN_PARAMS_BYTES} bytes of memory; send only its "
                "notifications and _meta"
            )
            raise MCPError(types.INVALID_PARAMS, message, {"limit": MAX_LISTEN_PARAMS_BYTES})
        uris = tuple(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        if len(uris) > MAX_SUBSCRIBED_URIS:
            message = (
                f"Too many resource subscriptions: this subscriptions/listen names {len(uris)} resources, at most "
                f"{MAX_SUBSCRIBED_URIS} may be named in one; name fewer (those whose changes matter)"
            )
            raise MCPError(types.INVALID_PARAMS, message, {"limit": MAX_SUBSCRIBED_URIS})
        if len(self.watched) + sum(uri not in self.watched for uri in uris) > MAX_WATCHED_URIS:
            message = (
                f"Too many watched resources: the open subscriptions/listen streams (over HTTP, every client's) may "
                f"watch at most {MAX_WATCHED_URIS} resources together; end a listen, or try again later"
            )
            raise MCPError(types.INVALID_PARAMS, message, {"limit": MAX_WATCHED_URIS})
        self.watched.update(uris)
        try:
            return await self.listen(ctx, params)
        finally:
            self.watched.subtract(uris)
            for uri in uris:
                if self.watched[uri] <= 0:
                    del self.watched[uri]

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        values: list[str] = []
        if isinstance(params.ref, types.ResourceTemplateReference):
            values = res.complete(self.snapshot, self.kinds, params.ref.uri, params.argument.value)
        shown = values[:COMPLETION_VALUES]
        return types.CompleteResult(
            completion=types.Completion(values=shown, total=len(values), has_more=len(values) > len(shown))
        )

    async def list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(self.view.tools))

    async def call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        call = functools.partial(tools.call_tool, self.snapshot, self.validators, params.name, params.arguments)
        try:
            return await self._resolving(call)
        except tools.UnknownTool as error:
            raise MCPError(types.INVALID_PARAMS, str(error), {"tool": clip(params.name, escape=False)}) from None

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        return next((tool.input_schema for tool in self.view.tools if tool.name == name), None)

    @asynccontextmanager
    async def connection(self, server: Server[Any]) -> AsyncIterator[Peer]:
        """The server lifespan: one `Peer` per connection, forgotten when it closes."""
        peer = Peer()
        self.peers.add(peer)
        try:
            yield peer
        finally:
            self.peers.discard(peer)

    def close(self) -> None:
        """End every open `subscriptions/listen` stream gracefully (shutdown)."""
        self.listen.close()


Ctx = ServerRequestContext[Peer, Any]


def max_listens(settings: Settings) -> int:
    """Open `subscriptions/listen` streams the server holds at once. Over HTTP each holds a connection for as long
    as its client keeps it, sending nothing (the idle timeout cuts no request in progress), so with the SDK's 1,024
    a client's `max_connections` listens held every connection and every other client got 503 until it let go:
    over HTTP at most half of `max_connections` may listen, the other half is left for requests. Over stdio, the
    SDK's bound."""
    if settings.transport != "http":
        return MAX_LISTENS_STDIO
    return settings.max_connections // 2  # one connection (max_connections 1): none, it would hold that one


def _after_the_model(call: Callable[[], T]) -> T:
    """`call()` once the embedding model is loaded, or given up (`semantic.model` waits for a load under way)."""
    semantic.model()
    return call()


async def in_daemon_thread(call: Callable[[], T], name: str, limiter: anyio.CapacityLimiter | None = None) -> T:
    """`call()` in a daemon thread of its own, waited for in a way a stop interrupts; with `limiter`, once it lends
    a token, which the thread gives back when it ends (not when the wait is cancelled: an abandoned thread still
    runs, and still counts).

    Not an AnyIO worker thread: what runs here cannot be interrupted and may take seconds (loading a large build,
    comparing the documents subscribed to, resolving a name in a large catalog), and a stop waited for such a thread
    twice, for the cancelled task and at exit, where the interpreter joins every thread that is not a daemon. A daemon
    thread is left to end with the process; what it returns is then never used: it only reaches the awaiting task,
    which is gone, so an abandoned call cannot answer a client or write anything to a transport."""
    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    outcome: list[T | BaseException] = []
    borrower = object()
    if limiter is not None:
        await limiter.acquire_on_behalf_of(borrower)

    def ended() -> None:
        done.set()
        if limiter is not None:
            limiter.release_on_behalf_of(borrower)

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # raised where the call is awaited
            outcome.append(error)
        finally:
            with suppress(Exception):  # the event loop is gone: the server stopped meanwhile
                anyio.from_thread.run_sync(ended, token=token)

    try:
        threading.Thread(target=run, name=name, daemon=True).start()
    except BaseException:  # no thread to give the token back
        ended()
        raise
    await done.wait()
    if isinstance(result := outcome[0], BaseException):
        raise result
    return result


def _too_many_subscriptions(uri: str) -> MCPError:
    message = (
        f"Too many subscriptions: a connection may subscribe to at most {MAX_SUBSCRIBED_URIS} resources; "
        f"unsubscribe from one (resources/unsubscribe) before subscribing to {clip(uri)}"
    )
    return MCPError(types.INVALID_PARAMS, message, {"uri": clip(uri, escape=False), "limit": MAX_SUBSCRIBED_URIS})


def _dump(*groups: tuple[Any, ...]) -> list[list[dict[str, Any]]]:
    return [[item.model_dump(by_alias=True, exclude_none=True) for item in group] for group in groups]


class CapidxServer(Server[Peer]):
    """`Server` whose default initialization options advertise what the hub really sends."""

    def __init__(self, hub: Hub, **kwargs: Any) -> None:
        self.hub = hub
        super().__init__(**kwargs)

    @property
    def instructions(self) -> str:
        """The current build's: a connection made after a reload gets the new build's instructions."""
        return self.hub.view.instructions

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        """`Server.__init__` sets it; the hub's view is what counts."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        push = self.hub.legacy_push
        default = NotificationOptions(resources_changed=push and self.hub.settings.resources, tools_changed=push)
        return super().create_initialization_options(
            notification_options or default, experimental_capabilities, extensions
        )


def build_server(hub: Hub) -> CapidxServer:
    """The lowlevel server for `hub`. With resources off, no resources handler is registered at all,
    so the capability is not advertised and every resources/* request fails (METHOD_NOT_FOUND)."""
    hint = CacheHint(ttl_ms=hub.ttl_ms, scope="public")
    handlers: dict[str, Any] = {
        "on_list_tools": hub.list_tools,
        "on_call_tool": hub.call_tool,
        "on_subscriptions_listen": hub.subscriptions_listen,
    }
    cache_hints: dict[str, CacheHint] = {"tools/list": hint}
    if hub.settings.resources:
        handlers |= {
            "on_list_resources": hub.list_resources,
            "on_list_resource_templates": hub.list_templates,
            "on_read_resource": hub.read_resource,
            "on_completion": hub.complete,
        }
        if hub.legacy_push:
            handlers |= {"on_subscribe_resource": hub.subscribe, "on_unsubscribe_resource": hub.unsubscribe}
        cache_hints |= {"resources/list": hint, "resources/templates/list": hint, "resources/read": hint}
    server = CapidxServer(
        hub,
        name=SERVER_NAME,
        version=_version(),
        title="capidx capability index",
        cache_hints=cache_hints,
        lifespan=hub.connection,
        get_tool_input_schema=hub.input_schema,
        **handlers,
    )
    if hub.legacy_push:
        server.add_notification_handler("notifications/initialized", types.NotificationParams, hub.initialized)
    server.middleware.append(explain_uninitialized)
    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("capidx")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0"
