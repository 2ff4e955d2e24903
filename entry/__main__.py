"""The `capidx` command (the console script) and `python -m capidx`: the same CLI.

`capidx` has no folder of its own in this repository: its subpackages are top-level folders mapped by
setuptools' package-dir (pyproject.toml). This folder is mapped to `capidx` itself and holds no `__init__.py`,
so `capidx` stays a namespace package in wheels and editable installs alike.

The CLI is imported inside `main`, not at the top of this module: loading click and the commands takes a few
tens of milliseconds, and a Ctrl-C in that time ends the command with 130 like a Ctrl-C later, not with the
traceback of an interrupted import. `capidx serve`, which a supervisor stops with SIGTERM as often as a person
with Ctrl-C, takes both signals from here on (server/signals.py): before, a SIGTERM in its first few hundred
milliseconds killed it by the default action (-15, not 143) and a SIGINT printed a KeyboardInterrupt's traceback.
"""

import sys


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        _serve()
        return
    try:
        from capidx.cli import main as run
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)  # on a line of its own, after the terminal's ^C
        sys.exit(130)
    run()


def _serve() -> None:
    """`capidx serve`: a stop signal raises `Stopped` from before click is imported, which ends the command with
    the signal's code (128 + its number) wherever it is raised on the way to the event loop. `serve` installs the
    same handlers and puts these back when it ends; once the command is over, a stop signal ends the process at
    once (`stop_raising`), rather than raising a `Stopped` that nobody catches (an atexit callback would only print
    it). After a stop signal, an error on the way out is the stop's, and ends the command with its code as well. The
    command then ends without the interpreter's shutdown (`_end`)."""
    try:
        from capidx.server.signals import Stopped, raise_on_stop_signals, stop_raising, stop_received
    except KeyboardInterrupt:  # before the handlers: Python's own
        sys.exit(130)
    try:
        # Inside the statement that catches what a stop signal raises: one landing as the handlers are put in place
        # is a KeyboardInterrupt before them and a `Stopped` after, and ends the command with its code either way.
        raise_on_stop_signals()
        from capidx.cli import main as run

        run()
        code = 0
    except SystemExit as done:  # click ends every command so, serve stopped by a signal included (its code)
        if not isinstance(done.code, int | None):
            stop_raising()
            raise
        code = done.code or 0
    except KeyboardInterrupt:
        code = 130
    except Stopped as stopped:
        code = stopped.exit_code
    except Exception:
        # The stop's own `Stopped`, turned into another exception on its way (Python wraps what a class body's
        # `__set_name__` raises in a RuntimeError, and a module imported then fails with it).
        signum = stop_received()
        if signum is None:
            stop_raising()
            raise
        code = Stopped(signum).exit_code
    stop_raising()
    _end(code)


def _end(code: int) -> None:
    """End `capidx serve`: what exit handlers do (the wait for a call into the embedding model, logging's flush),
    then the exit, without the rest of the interpreter's shutdown. That shutdown collects and frees everything the
    server held (the build, the model: 0.6-1 s after a stop), and gives the signals their defaults back first: a
    second Ctrl-C or SIGTERM meanwhile killed the process (-15) instead of ending it with its code. The server
    writes nothing that the shutdown would have to finish."""
    import atexit
    import contextlib
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):  # (the protocol's replies go to a descriptor of their own, unbuffered)
        with contextlib.suppress(OSError, ValueError):  # closed, or a reader gone
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
