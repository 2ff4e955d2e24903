"""Run the server: load the build, then serve it over stdio or streamable HTTP until stopped.

Everything the server says goes to stderr: on stdio, stdout is the protocol channel. SIGINT and
SIGTERM stop either transport (server/signals.py): `run` then raises `Stopped`.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import logging
import os
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator

import anyio
import anyio.abc

from capidx.server.app import Hub, build_server, warn_over_budget
from capidx.server.reload import Reloader
from capidx.server.settings import Settings
from capidx.server.signals import STOP_SIGNALS, Stopped, record_stop_signals, stopped_before, stopping, watch
from capidx.server.snapshot import Snapshot

logger = logging.getLogger("capidx.server")
WAITING = "waiting for an MCP client on stdin (MCP clients start this command themselves)"


def run(settings: Settings, snapshot: Snapshot) -> None:
    """Blocking entry point: serve `snapshot` (loaded from `settings.build`) until stdin ends (stdio) or
    a signal stops it; then raises `Stopped` with the signal."""
    logger.info(
        "serving %s (build %s, %d artifacts) over %s",
        snapshot.directory,
        snapshot.digest[:12],
        len(snapshot.artifacts),
        settings.transport,
    )
    warn_over_budget(snapshot)
    hub = Hub(snapshot, settings, legacy_push=settings.transport == "stdio")
    # The build and the imports stay alive until the server stops: frozen, no later collection walks them (a full
    # one took 50-200 ms, a pause of every request in flight); what requests make is collected as usual.
    gc.freeze()
    gc.enable()
    main = _serve_http if settings.transport == "http" else _serve_stdio
    # From here until the loop receives the signals, a stop signal is recorded, not raised in the middle of the
    # loop's own set-up (server/signals.py); the loop acts on it as soon as it receives them.
    record_stop_signals()
    try:
        anyio.run(main, hub, settings)
    except BaseExceptionGroup as group:  # task groups wrap what their tasks raise
        error = _sole(group)
        if isinstance(error, StartupError | KeyboardInterrupt | Stopped):
            raise error from None
        raise


def _sole(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


class StartupError(Exception):
    """The transport could not start (e.g. the port is taken)."""


async def _serve_until_stopped(
    hub: Hub,
    settings: Settings,
    serve: Callable[[], Awaitable[None]],
    stop_serving: Callable[[], None],
) -> None:
    """Run `serve` beside the reloader and the signal watcher: a stop signal is noted and calls `stop_serving`.

    The first signal noted is raised as `Stopped` once serving has ended, outside the task group so that no
    exception group wraps it: the transport stops in its own way first (a session cancelled, open HTTP requests
    given their grace), and `run` still ends with the signal that caused it.

    The embedding model starts loading (and the catalog being embedded) in a daemon thread once the loop receives
    the signals, not before: until then a signal raises `Stopped` wherever the main thread is, and with that thread
    importing the model's packages meanwhile, it landed in the import system's own clean-up, where an exception is
    only printed ("Exception ignored in ... _get_module_lock"), leaving the import lock held: the signal was lost
    and the thread hung on the lock (3 stops in 100 within 50 ms of "serving"). A stop signal recorded before the loop
    received the signals stops serving at once, and the model is then not loaded at all."""
    stop = anyio.Event()
    watching = anyio.CancelScope()
    signalled: list[int] = []

    def on_signal(signum: int) -> None:
        if stopped_before():  # a second stop, received by the loop before `stopping`'s handlers: it means now
            os._exit(128 + signum)
        signalled.append(signum)
        stopping(signum)  # a further stop signal ends the process at once
        stop_serving()

    async def watch_signals(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with watching:
            await watch(on_signal, task_status.started)

    async with anyio.create_task_group() as tg:
        await tg.start(watch_signals)
        if not signalled:
            meanings = hub.snapshot.index.meanings
            threading.Thread(target=meanings.prepare, name="capidx-meanings", daemon=True).start()
        if settings.reload:
            tg.start_soon(Reloader(hub, settings.build).run, stop)
        try:
            await serve()
        finally:
            watching.cancel()
            stop.set()
            hub.close()
    if signalled:
        raise Stopped(signalled[0])


async def _serve_stdio(hub: Hub, settings: Settings) -> None:
    from capidx.server.stdio import stdio_transport

    server = build_server(hub)
    serving = anyio.CancelScope()

    async def serve() -> None:
        if os.isatty(0):  # someone typed `capidx serve` in a terminal: say what it waits for, and how it stops
            how = (
                "Ctrl-C stops it" if signal.SIGINT in STOP_SIGNALS else "Ctrl-C is ignored (inherited), Ctrl-D stops it"
            )
            logger.info("%s; %s", WAITING, how)
        with serving:
            async with stdio_transport(settings.max_message_bytes) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

    await _serve_until_stopped(hub, settings, serve, serving.cancel)


def _bind_remedy(host: str, port: int) -> str:
    """What to do about a bind that failed, from a second try's error: uvicorn logs its own and exits, so the
    error line the user reads last said only "cannot listen"."""
    try:
        family = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host.strip("[]"), port))
    except socket.gaierror:
        return ": the host name does not resolve: check --host"
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return ": the port is in use (another server?): choose another --port, or --port 0 for any free one"
        if error.errno == errno.EACCES and port < 1024:
            return ": permission denied (a port below 1024 needs privileges): choose a port from 1024 up"
        if error.errno == errno.EACCES:
            return ": permission denied (a security policy of this machine?): choose another --port"
        if error.errno == errno.EADDRNOTAVAIL:
            return ": no interface of this machine has that address: check --host"
    return ""


async def _serve_http(hub: Hub, settings: Settings) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from capidx.server.browser_page import BrowserPage
    from capidx.server.http import HostGuard, WholeBody, bounded_protocol, ensure_descriptors
    from capidx.server.site_files import SiteFiles

    ensure_descriptors(settings.max_connections)
    hosts, origins = settings.security_hosts()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=list(hosts), allowed_origins=list(origins)
    )
    app = build_server(hub).streamable_http_app(
        stateless_http=True,
        transport_security=security,
        host=settings.host,
        max_request_body_size=settings.max_message_bytes,
    )
    # /site/: the build's site, read-only; /mcp: bodies read whole before the SDK sees them
    site = SiteFiles(WholeBody(app, settings.max_message_bytes), lambda: hub.snapshot, origins)
    config = uvicorn.Config(
        HostGuard(BrowserPage(site, site.has_page), hosts),  # a browser at /mcp gets a page, not a silent stream
        host=settings.host,
        port=settings.port,
        http=bounded_protocol(settings.max_connections, settings.idle_timeout),  # and the request head's size
        # uvicorn counts the connection asking as well: one more lets each allowed connection have a
        # request in flight, and still bounds requests left running by connections already gone.
        limit_concurrency=settings.max_connections + 1,
        timeout_keep_alive=settings.idle_timeout,
        log_config=None,  # uvicorn's records go through our rate-limited handler (capidx.server.logs)
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Open subscriptions/listen streams would hold their connections (and the shutdown)
            # forever: end them gracefully first.
            hub.close()
            await super().shutdown(sockets)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn would catch SIGINT/SIGTERM itself and raise them again once stopped (exit 0 or
            # -15); `_serve_until_stopped` watches them for both transports and calls `stop` below instead.
            yield

    server = Server(config)

    def stop() -> None:
        """Shut down gracefully (open requests get `timeout_graceful_shutdown`); a second stop signal ends the process
        at once (server/signals.py, `stopping`)."""
        server.should_exit = True

    async def announce() -> None:
        """Say where the server listens, once it does. A stop right after uvicorn started may have closed its
        sockets before this looks (it looks every 10 ms): then there is nothing to say, and no IndexError to end the
        stop with exit 1 and a traceback instead of the signal's code."""
        while not server.started:
            await anyio.sleep(0.01)
        sockets = [sock for listening in server.servers for sock in listening.sockets]
        if not sockets:  # stopped already
            return
        host, port = sockets[0].getsockname()[:2]
        if settings.bound_host is None:  # every address: here, a loopback one; elsewhere, a name allowed
            shown = "[::1]" if ":" in host else "127.0.0.1"
            names = ", ".join(settings.allowed_hosts)
            logger.info(
                "listening on http://%s:%d/mcp and port %d of every address (Host: %s)", shown, port, port, names
            )
        else:
            shown = f"[{host}]" if ":" in host else host
            logger.info("listening on http://%s:%d/mcp", shown, port)
        if site.has_page():
            logger.info("site for people: http://%s:%d/site/", shown, port)

    async def serve() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(announce)
            try:
                await server.serve()
            except SystemExit:  # uvicorn exits when it cannot bind; it has logged why
                where = f"{settings.host}:{settings.port}"
                raise StartupError(f"cannot listen on {where}{_bind_remedy(settings.host, settings.port)}") from None
            tg.cancel_scope.cancel()

    await _serve_until_stopped(hub, settings, serve, stop)
