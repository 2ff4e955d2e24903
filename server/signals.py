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

Once serving has acted on a stop signal, any further one ends the process at once with its own code (`stopping`):
the stop under way (open HTTP requests' grace, a call into the embedding model, the interpreter's shutdown) is
what a second Ctrl-C means not to wait for. Before, it met whatever handler that moment had: asyncio's defaults
once the loop let go of the signals (-15 for SIGTERM instead of 143) or uvicorn's forced exit, which left the
app's lifespan task to be cancelled and logged with a traceback.

A `Stopped` raised in phase 1 where Python can only print an exception (a weak reference's callback in the import
system, an object's `__del__`) is lost as an exception but not as a stop: it is recorded too, and `watch` acts on it
as the loop starts; the "Exception ignored" it would print is not (`_quiet_about_stopped`).
"""

from __future__ import annotations

import os
import signal
import sys

# Imported for annotations only: the command's first line imports this module, and `typing` alone took long enough
# (a few milliseconds) for a signal to land in it with Python's default effect.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

# The stop signals this process takes: one it inherited as ignored stays ignored, as Python itself leaves it (a job
# started in the background by a shell script ignores SIGINT, so that Ctrl-C at the terminal stops the script alone;
# `nohup`-like supervisors may ignore either). Read as the command's first line imports this module.
STOP_SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) is not signal.SIG_IGN)
# The stop signals taken before the event loop receives them, in order: `watch` acts on them once it does.
_RECEIVED: list[int] = []
# The stop signals serving has acted on (`stopping`): while it holds one, a further stop signal ends the process.
_ACTED_ON: list[int] = []


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
    _ACTED_ON.clear()  # a serve starting: no stop is under way
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
    """As the `capidx` command ends, after serving: a stop signal, which no `Stopped` handler is left to catch, ends
    the process at once with its code (`_exit_now`), a Ctrl-C the CLI ignores once a command is over included. The
    exit may still wait for a call into the embedding model, seconds at worst, and a stop means not to wait: after a
    stop signal as after stdin's end (before, SIGTERM then killed the process, -15, and Ctrl-C was ignored)."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _exit_now)


def stopping(signum: int) -> None:
    """Serving acts on the stop signal `signum`: from now on a further stop signal ends the process at once, with
    its own code (`_exit_now`). Called again after the event loop let go of the signals (it puts asyncio's defaults
    back); `raise_on_stop_signals`'s handlers, put back as serving ends, do the same while a stop is under way."""
    if signum not in _ACTED_ON:
        _ACTED_ON.append(signum)
    for stop_signal in STOP_SIGNALS:
        signal.signal(stop_signal, _exit_now)


def stopped_before() -> bool:
    """Whether serving has already acted on a stop signal: the next one ends the process (`_exit_now`)."""
    return bool(_ACTED_ON)


def _exit_now(signum: int, frame: FrameType | None) -> None:
    """End the process with the signal's code, skipping the interpreter's shutdown (and with it what the stop under
    way still waits for: the shutdown is where a thread in the model's Rust code aborted the process)."""
    os._exit(128 + signum)


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
    if _ACTED_ON:  # a stop is under way: this one means now
        _exit_now(signum, frame)
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

    if not STOP_SIGNALS:  # both ignored: nothing to receive
        watching()
        await anyio.sleep_forever()
    try:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            while _RECEIVED:  # recorded while the receiver was being set up
                stop(_RECEIVED.pop(0))
            watching()
            async for signum in signals:
                stop(signum)
    finally:
        if _ACTED_ON:  # the receiver put asyncio's defaults back (-15 for a second SIGTERM): a stop is under way
            stopping(_ACTED_ON[0])
