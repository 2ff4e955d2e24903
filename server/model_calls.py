"""Calls into the embedding model's Rust code, waited for at exit: server/semantic.py counts them (`ModelCalls`).

Why its own module: it is about the process's end, not about meaning; the resolver's modules keep to resolving.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ModelCalls:
    """Which threads are in the model's own code, so that the interpreter does not shut down under them.

    The model runs in daemon threads (loading at start, embedding a new build, resolving in a large catalog), which
    a stop does not wait for. But its tokenizer and weights readers are Rust, and Python 3.11 ends a daemon thread that
    takes the interpreter back during its shutdown by unwinding its stack: met in Rust's frames, that unwinding aborts
    the process ("FATAL: exception not rethrown", SIGABRT instead of the stop's exit code) whenever a stop came while
    the model loaded. At exit (`atexit`, before the shutdown) the calls under way are waited for (loading the model
    takes about 0.2 s, embedding 10,000 capabilities 0.3 s), and no other begins: a thread about to call the model
    waits for the end of the process, outside its code."""

    def __init__(self) -> None:
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

    def end(self) -> None:
        """At exit: let the calls under way end, and begin no other."""
        with self._changed:
            self._ending = True
            self._changed.wait_for(lambda: not self._running)

    @classmethod
    def at_exit(cls) -> ModelCalls:
        """A count whose `end` runs at exit (`atexit`, before the interpreter shuts down)."""
        calls = cls()
        atexit.register(calls.end)
        return calls
