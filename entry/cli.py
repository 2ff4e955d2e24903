"""The `capidx` command: one click group gathering the compiler's commands and the server's `serve`.

It lives here, in the top package (folder entry/), because it is the one place that knows both sides: the
compiler (`capidx.compiler.cli`) and the server (`capidx.server.cli`) never import each other — the build
directory is their only contract. Each command imports its work lazily, so `capidx validate` pays for
neither the MCP SDK nor a tokenizer.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import importlib.util
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import click

from capidx.compiler import __version__, finished
from capidx.compiler.cli import COMMANDS
from capidx.compiler.errors import UsageError
from capidx.server.cli import serve

# What `capidx serve` needs beyond the compiler: the `serve` extra (pyproject.toml). Kept out of the base
# install so that a pre-commit hook (validate) or a CI build installs the compiler alone.
SERVE_EXTRA = ("mcp", "rapidfuzz", "watchfiles")


class _Capidx(click.Group):
    """The group, with one change to click's way: a Ctrl-C while the arguments are read or a command runs ends
    it with 130 (the shell's code for SIGINT), as `capidx serve` does once it runs, not with click's "Aborted!"
    and 1, the code of a failed build or invalid data. The command's own clean-up has run by then: it is
    unwinding a KeyboardInterrupt."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        finished.begin()
        with _interrupt_exits_130():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _interrupt_exits_130():
            return super().invoke(ctx)


@contextlib.contextmanager
def _interrupt_exits_130() -> Iterator[None]:
    """A Ctrl-C after the command printed its outcome (`finished`) keeps the outcome's code, unsaid."""
    try:
        yield
    except KeyboardInterrupt:
        if (code := finished.code()) is not None:
            raise click.exceptions.Exit(code) from None
        if finished.interruption_unsaid():  # on a line of its own, after the terminal's ^C (a build says more)
            click.echo("\ninterrupted", err=True)
        raise click.exceptions.Exit(130) from None


@click.group(cls=_Capidx, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(version=__version__, prog_name="capidx")
def cli() -> None:
    """capidx: compile a capability catalog into a token-measured index and serve it over MCP.

    \b
    Exit codes: 0 success, 1 invalid data / budget breach / failed build,
    2 usage or I/O error, 130 Ctrl-C.
    """


def _needs_serve_extra(callback: Any) -> Any:
    """`serve`'s callback, first checking that the serve extra is installed (exit 2 with the one-line hint,
    not an ImportError's traceback). `--help` is answered by click before and works without it, and so does
    `--print-config`: the settings (server/settings.py) are read with the base install's packages alone, and
    checking a `serve:` section before installing the server is what a CI job or a new user does first."""

    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("print_config"):
            return callback(*args, **kwargs)
        for name in SERVE_EXTRA:
            if not _installed(name):
                from capidx.install_hint import serve_hint

                raise UsageError(f"{serve_hint()} ({name} is not installed)")
        return callback(*args, **kwargs)

    return checked


def _installed(name: str) -> bool:
    """Whether a top-level module can be found. Found, not imported: each is imported where it is used (rapidfuzz
    on the first lookup, watchfiles only to reload), so that `initialize` does not wait for them, and a build the
    server refuses (reported before the MCP SDK is imported) does not wait for the SDK."""
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # an import hook may refuse the name outright
        return False


for _command in COMMANDS:
    cli.add_command(_command)
serve.callback = _needs_serve_extra(serve.callback)
cli.add_command(serve)


def main() -> None:
    _unencodable_escaped()
    try:
        cli()
    finally:
        _late_ctrl_c_ignored()


def _unencodable_escaped() -> None:
    """A character standard output cannot encode (a report's ✅ or Δ, a capability named in Chinese, on a Windows
    console's cp1252 or a non-UTF-8 locale) is written as an escape (`\\u2705`), as Python writes it on standard
    error, rather than ending the command with a UnicodeEncodeError's traceback and exit 1, the code of invalid data
    or a breached budget. An error handler the user chose (PYTHONIOENCODING=cp1252:replace) is kept.

    The escape is JSON's (`_json_escape`), not Python's backslashreplace: in `--format json` the character is inside
    a JSON string, where `\\U0001f600` or `\\xe9` would make the whole document unreadable with exit 0."""
    stream = sys.stdout
    if stream is not None and getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        codecs.register_error(_JSON_ESCAPE, _json_escape)
        stream.reconfigure(errors=_JSON_ESCAPE)


_JSON_ESCAPE = "capidx-json-escape"


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    """Each character that cannot be encoded as `\\uXXXX`, one per UTF-16 code unit (a pair for one past U+FFFF):
    a JSON string reads it back as the same character, and a person reads it as Python's own escape of it."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be", "surrogatepass")
    escaped = "".join(f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2))
    return escaped, error.end


def _late_ctrl_c_ignored() -> None:
    """Once a command has said what it did, a Ctrl-C while the interpreter shuts down (tens of milliseconds after a
    build) would only replace its exit code with the signal's, a finished build reported as interrupted with no
    word: from here on it is ignored. Not in a test's process (`cli` is called there, never `main`)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
