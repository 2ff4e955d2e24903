"""`ModelCalls` (server/model_calls.py): the end of the process waits for a call into the embedding model under way,
but not for ever."""

from __future__ import annotations

import threading

from capidx.server.model_calls import ModelCalls


def _held_call(calls: ModelCalls, release: threading.Event) -> tuple[threading.Thread, threading.Event]:
    """A thread inside one call until `release` is set; and the event set once it is inside."""
    inside = threading.Event()

    def call() -> None:
        with calls.call():
            inside.set()
            release.wait()

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    assert inside.wait(60)
    return thread, inside


def test_end_waits_for_a_call_under_way() -> None:
    calls = ModelCalls(limit=60)
    release = threading.Event()
    thread, _ = _held_call(calls, release)
    ended: list[bool] = []
    ending = threading.Thread(target=lambda: ended.append(calls.end()))
    ending.start()
    ending.join(0.2)
    assert ending.is_alive() and not ended  # still waiting for the call under way, whatever the time it took
    release.set()
    ending.join(60)
    thread.join(60)
    assert ended == [True]


def test_end_gives_up_on_a_call_that_never_returns() -> None:
    """A call stuck in the model's code held a stop for ever: the wait is bounded, then the process exits anyway."""
    calls = ModelCalls(limit=0.05)
    release = threading.Event()
    thread, _ = _held_call(calls, release)
    try:
        assert calls.end() is False
        assert thread.is_alive()  # still inside the call: the end did not wait for it
    finally:
        release.set()
        thread.join(60)
