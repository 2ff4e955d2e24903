"""Calls into the embedding model's Rust code, waited for at exit: server/semantic.py counts them (`ModelCalls`).

Why its own module: it is about the process's end, not about meaning; the resolver's modules keep to resolving.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# How long the end of the process waits for calls under way: ten times the longest seen (embedding 10,000
# capabilities, 0.3 s), far under what a supervisor allows a stop before it kills (systemd: 90 s, Docker: 10 s).
END_WAIT_SECONDS = 5.0
logger = logging.getLogger(__name__)


class ModelCalls:
    """Which threads are in the model's own code, so that the interpreter does not shut down under them.

    The model runs in daemon threads (loading at start, embedding a new build, resolving in a large catalog), which
    a stop does not wait for. But its tokenizer and weights readers are Rust, and Python 3.11 ends a daemon thread that
    takes the interpreter back during its shutdown by unwinding its stack: met in Rust's frames, that unwinding aborts
    the process ("FATAL: exception not rethrown", SIGABRT instead of the stop's exit code) whenever a stop came while
    the model loaded. At exit (`atexit`, before the shutdown) the calls under way are waited for (loading the model
    takes about 0.2 s, embedding 10,000 capabilities 0.3 s), and no other begins: a thread about to call the model
    waits for the end of the process, outside its code.

    The wait is bounded (`limit`): a call that never returns (a model's code stuck, a machine swapping) must not hold
    a stop for ever. Past it the process exits anyway: an abort at the shutdown is possible then, and is the lesser
    evil, since a server that ignores its stop signal is killed by its supervisor later, or never, by a person."""

    def __init__(self, limit: float = END_WAIT_SECONDS) -> None:
        self._limit = limit
        self._changed = threading.Condition()
        self._running = 0
        self._ending = False

    @contextmanager
    def call(self) -> Iterator[None]:
        """Around one call into the model; never nested (`end` would wait for the outer call for ever)."""
        with self._changed:
            while self._ending:
                self._changed.wait()
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()

    def end(self) -> bool:
        """At exit: let the calls under way end, for `limit` seconds at most, and begin no other. Whether they
        ended."""
        with self._changed:
            self._ending = True
            ended = self._changed.wait_for(lambda: not self._running, timeout=self._limit)
        if not ended:
            logger.warning("exiting while the embedding model is still busy (%g s waited)", self._limit)
        return ended

    @classmethod
    def at_exit(cls) -> ModelCalls:
        """A count whose `end` runs at exit (`atexit`, before the interpreter shuts down)."""
        calls = cls()
        atexit.register(calls.end)
        return calls
