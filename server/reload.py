"""Live reload: notice a new build, load and verify it fully, then swap it in.

`capidx build` replaces the whole directory by rename, so the watcher observes the directory's
*parent* (non-recursively, only entries named like the build) with watchfiles, and also polls the
build's `manifest.json` identity once a second: that catches in-place rewrites, platforms without
file-system events and a parent that cannot be watched. Both only wake the reloader; the reloader
loads in a daemon thread (`_load`), skips a build whose manifest digest is unchanged, and logs a broken build
to stderr while the last good one keeps being served.
"""

from __future__ import annotations

import functools
import gc
import logging
from pathlib import Path

import anyio

from capidx.server.app import Hub, in_daemon_thread
from capidx.server.snapshot import BuildError, Snapshot, build_signature, load_snapshot

logger = logging.getLogger("capidx.server")

POLL_SECONDS = 1.0
# A swap is two renames: a check that lands between them sees no build; look again once before
# reporting the build as broken.
SETTLE_SECONDS = 0.3


class Reloader:
    """Watches `directory` and swaps new builds into `hub`."""

    def __init__(self, hub: Hub, directory: Path, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.hub = hub
        self.directory = directory
        self.poll_seconds = poll_seconds
        self._wake = anyio.Event()
        # The served build's, taken when it was loaded: one looked at only now would take a build swapped in since
        # (while the MCP SDK was imported, about a second) for the one served, and never load it.
        self._signature = hub.snapshot.signature
        self._last_error: str | None = None

    def wake(self) -> None:
        self._wake.set()

    async def run(self, stop: anyio.Event) -> None:
        """Watch until `stop` is set."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch_parent, stop)
            tg.start_soon(self._poll, stop)
            tg.start_soon(self._reload_loop)
            await stop.wait()
            tg.cancel_scope.cancel()

    async def _reload_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await self.check()

    async def _poll(self, stop: anyio.Event) -> None:
        while not stop.is_set():
            await anyio.sleep(self.poll_seconds)
            if build_signature(self.directory) != self._signature:
                self.wake()

    async def _watch_parent(self, stop: anyio.Event) -> None:
        from watchfiles import awatch

        name = self.directory.name

        def concerns_build(_change: object, path: str) -> bool:
            return Path(path).name == name

        try:
            async for _changes in awatch(
                self.directory.parent, watch_filter=concerns_build, recursive=False, stop_event=stop, debounce=400
            ):
                self.wake()
        except (OSError, RuntimeError) as error:  # e.g. inotify limits: polling still works
            logger.info("file-system events unavailable for %s (%s); polling every %ss", name, error, self.poll_seconds)

    async def check(self) -> bool:
        """Load the build if it changed; True when a new build was swapped in."""
        signature = build_signature(self.directory)
        try:
            snapshot = await _load(self.directory)
        except Exception:  # a build mid-swap, or any broken one: looked at once more below
            await anyio.sleep(SETTLE_SECONDS)
            signature = build_signature(self.directory)
            try:
                snapshot = await _load(self.directory)
            except Exception as error:  # whatever a hostile build raises, the last good one stays served
                self._signature = signature
                if isinstance(error, BuildError):
                    self._report(str(error))
                else:  # not foreseen: said with its traceback, once
                    self._report(f"{error!r} while loading it", error)
                return False
        self._signature = signature
        self._last_error = None
        if snapshot.digest == self.hub.snapshot.digest:
            return False
        try:
            view = self.hub.view_of(snapshot)
        except Exception as error:  # not foreseen in a build that loaded: raised from here it ended the server
            self._report(f"{error!r} while preparing what clients see of it", error)
            return False
        await in_daemon_thread(snapshot.index.meanings.prepare, "capidx-meanings")  # swapped in ready to order
        await self.hub.swap(view)
        # The old build is let go now: one full collection finds whatever cycles it held, then the new build is
        # kept out of later collections, as the first was (server/serve.py).
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        return True

    def _report(self, message: str, error: BaseException | None = None) -> None:
        if message != self._last_error:  # say it once, not every poll
            serving = self.hub.snapshot.digest[:12]
            logger.error("ignoring the new build: %s; still serving %s", message, serving, exc_info=error)
        self._last_error = message


async def _load(directory: Path) -> Snapshot:
    """`load_snapshot(directory)` in a daemon thread (`in_daemon_thread`): loading cannot be interrupted and takes
    seconds on a large build (about 9 at 20,000 capabilities); one Ctrl-C, or stdin closing, took as long as the load
    when a stop waited for it."""
    return await in_daemon_thread(functools.partial(load_snapshot, directory), "capidx-reload")
