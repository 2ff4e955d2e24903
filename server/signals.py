"""How `capidx serve` stops on a signal: SIGINT (Ctrl-C) and SIGTERM end it at once, without a
traceback, with the shell's exit code for the signal (128 + its number: 130, 143).

Three phases, because an exception raised by a signal handler in the middle of the event loop, or of its
start-up, could leave it half-way through anything:

1. From the `capidx` command's first line (entry/__main__.py, before click is imported) until the event loop is
   about to start (loading the build, importing the SDK), a stop signal raises `Stopped` where the main thread is
   (`raise_on_stop_signals`).
2. While the event loop starts (`anyio.run`'s own set-up, until the loop receives the signals), a stop signal is
   only recorded (`record_stop_signals`): raised there, it ended the process with exit 1, or was printed as
   "Exception ignored in ... BaseEventLoop.__del__" and lost.
3. While the loop runs, `watch` receives the signals inside it and calls the transport's own stop (cancel the stdio
   session; let uvicorn shut down), after acting on any signal recorded before.

A `Stopped` raised in phase 1 where Python can only print an exception (a weak reference's callback in the import
system, an object's `__del__`) is lost as an exception but not as a stop: it is recorded too, and `watch` acts on it
as the loop starts; the "Exception ignored" it would print is not (`_quiet_about_stopped`).
"""

from __future__ import annotations

import signal
import sys

# Imported for annotations only: the command's first line imports this module, and `typing` alone took long enough
# (a few milliseconds) for a signal to land in it with Python's default effect.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The stop signals taken before the event loop receives them, in order: `watch` acts on them once it does.
_RECEIVED: list[int] = []


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
    """Phase 1: a stop signal raises `Stopped` in the main thread (and is recorded). Returns what puts the previous
    handlers (and unraisable-exception hook) back, for when serving is over: a `Stopped` raised later would have
    nobody to catch it, and a signal recorded then belonged to a serve that has ended. Installed twice, by the
    command's first line and by `serve`, the second's restore puts the first's handlers back."""
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    previous_hook = sys.unraisablehook
    for signum in STOP_SIGNALS:
        signal.signal(signum, _raise_stopped)
    sys.unraisablehook = _quiet_about_stopped(previous_hook)

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: not set from Python
        sys.unraisablehook = previous_hook
        _RECEIVED.clear()

    return restore


def stop_received() -> int | None:
    """The first stop signal taken before the event loop received them (and not acted on yet), if any: an error raised
    after it may be the stop's own exception, turned into another by a library it went through."""
    return _RECEIVED[0] if _RECEIVED else None


def stop_raising() -> None:
    """As the command ends, after serving: each stop signal that still raises `Stopped`, which nobody would catch any
    more, gets Python's default back (SIGTERM ends the process, SIGINT raises KeyboardInterrupt)."""
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    for signum, default in defaults.items():
        if signal.getsignal(signum) is _raise_stopped:
            signal.signal(signum, default)


def record_stop_signals() -> None:
    """Phase 2, just before the event loop starts: a stop signal is only recorded, for `watch`. Not where the loop
    cannot receive signals (Windows): there `raise_on_stop_signals`'s handlers stay in place."""
    if sys.platform == "win32":
        return
    for signum in STOP_SIGNALS:
        signal.signal(signum, _record)


def _record(signum: int, frame: FrameType | None) -> None:
    _RECEIVED.append(signum)


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    _RECEIVED.append(signum)
    raise Stopped(signum)


def _quiet_about_stopped(
    hook: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], object]:
    """`hook`, silent about a `Stopped` that Python could not raise (it was recorded, and `watch` acts on it)."""

    def quiet(unraisable: sys.UnraisableHookArgs) -> object:
        if isinstance(unraisable.exc_value, Stopped):
            return None
        return hook(unraisable)

    return quiet


async def watch(stop: Callable[[int], None], watching: Callable[[], None] = lambda: None) -> None:
    """Phase 3: call `stop(signum)` for each stop signal recorded before, then for every stop signal, from inside the
    event loop, until cancelled; `watching()` once the loop receives them. Where the loop cannot receive signals
    (Windows), `raise_on_stop_signals`'s handlers stay in place."""
    while _RECEIVED:
        stop(_RECEIVED.pop(0))
    if sys.platform == "win32":
        watching()
        return
    import anyio  # here, not at the top: the command's first line imports this module, before anything heavy

    with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
        while _RECEIVED:  # recorded while the receiver was being set up
            stop(_RECEIVED.pop(0))
        watching()
        async for signum in signals:
            stop(signum)
