"""How `capidx serve` stops on a signal: SIGINT (Ctrl-C) and SIGTERM end it at once, without a
traceback, with the shell's exit code for the signal (128 + its number: 130, 143).

Two phases, because an exception raised by a signal handler in the middle of the event loop could
leave it half-way through anything: until the loop runs (loading the build, importing the SDK) a stop
signal raises `Stopped` where the main thread is; while it runs, `watch` receives the signals inside
the loop and calls the transport's own stop (cancel the stdio session; let uvicorn shut down).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from types import FrameType

import anyio

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(BaseException):
    """The server was stopped by `signum`. A BaseException, like KeyboardInterrupt, so that no
    `except Exception` on the way out mistakes it for a failure."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def raise_on_stop_signals() -> Callable[[], None]:
    """Until the event loop takes over: a stop signal raises `Stopped` in the main thread. Returns what puts the
    previous handlers back, for when serving is over: a `Stopped` raised later would have nobody to catch it."""
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    for signum in STOP_SIGNALS:
        signal.signal(signum, _raise_stopped)

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: not set from Python

    return restore


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


async def watch(stop: Callable[[int], None], watching: Callable[[], None] = lambda: None) -> None:
    """Call `stop(signum)` for every stop signal, from inside the event loop, until cancelled; `watching()` once the
    loop receives them. Where the loop cannot receive signals (Windows), `raise_on_stop_signals`'s handlers stay in
    place."""
    if sys.platform == "win32":
        watching()
        return
    with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
        watching()
        async for signum in signals:
            stop(signum)
