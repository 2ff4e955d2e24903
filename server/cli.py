"""`capidx serve`: option parsing only. Imports click alone; the MCP SDK is imported inside the
command (by `capidx.server.serve`) so other commands stay fast."""

from __future__ import annotations

import dataclasses
import gc
import logging
import os
import shlex
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from capidx.schema.homepath import HomePath, build_argument, one_build
from capidx.schema.printable import visible_lines

if TYPE_CHECKING:
    from capidx.server.settings import Settings
    from capidx.server.signals import Stopped

EXIT_USAGE = 2


class ServeError(click.ClickException):
    """Bad settings, no build or a build that cannot be served: exit 2 with the reasons.

    Printed as the compiler's errors are (`visible_lines`): the reasons quote paths and capidx.yaml's values, whose
    line break would start a forged line in a CI log and whose escape sequence would reach the terminal. Several
    reasons are given as lines."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str | Sequence[str]) -> None:
        super().__init__(visible_lines(message))


@click.command(short_help="Serve a build over MCP (stdio or HTTP).")
@click.option(
    "--build",
    metavar="DIR",
    default=None,
    show_default="serve.build or paths.out of capidx.yaml, else build/ beside it (or here)",
    help="Build directory to serve.",
)
@click.option(
    "--config",
    type=HomePath(path_type=Path, exists=True, dir_okay=False),  # worded as build, report and inject word it
    default=None,
    show_default="./capidx.yaml when it exists",
    help="capidx.yaml to read.",
)
@click.option(
    "--resources/--no-resources",
    default=None,
    show_default="on",
    help="Advertise the resources capability at all.",
)
@click.option(
    "--expose",
    metavar="LIST",
    default=None,
    show_default="all but full",
    help="Comma list of resources to offer: summary, stats, full, agents, capabilities, categories.",
)
@click.option(
    "--index-tool/--no-index-tool",
    default=None,
    show_default="off",
    help="Also offer the tool get_capability_index(variant) for the exposed variants.",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default=None,
    show_default="stdio",
    help="stdio for a client that starts the server, http for streamable HTTP on --host/--port.",
)
@click.option(
    "--host",
    metavar="HOST",
    default=None,
    show_default="127.0.0.1",
    help="HTTP bind address.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    default=None,
    show_default="8000",
    help="HTTP port, 0 = any free.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    metavar="HOST[:PORT]",
    multiple=True,
    help="Host header to accept over HTTP (repeatable; required to bind a non-loopback address).",
)
@click.option(
    "--allowed-origin",
    "allowed_origins",
    metavar="ORIGIN",
    multiple=True,
    help="Origin header to accept over HTTP (repeatable).",
)
@click.option(
    "--reload/--no-reload",
    default=None,
    show_default="on",
    help="Swap in new builds while running.",
)
@click.option(
    "--max-connections",
    metavar="N",
    type=click.IntRange(min=1),
    default=None,
    show_default="100",
    help="HTTP: open connections at most; one more is answered 503 and closed.",
)
@click.option(
    "--idle-timeout",
    metavar="SECONDS",
    type=click.IntRange(min=1, max=86_400),  # settings.MAX_IDLE_TIMEOUT (the CLI imports no server module at start)
    default=None,
    show_default="5",
    help="HTTP: close a connection with no request in progress after this long.",
)
@click.option(
    "--max-message-bytes",
    metavar="BYTES",
    type=click.IntRange(min=65536),
    default=None,
    show_default="4194304",
    help="Largest client message: an HTTP body (413) or one stdio line (JSON-RPC error).",
)
@click.option(
    "--instructions",
    type=click.Choice(["pointer", "summary"]),
    default=None,
    show_default="summary",
    help="Server instructions: summary = the build's overview (instructions.md), pointer = a short text naming "
    "the tools.",
)
@click.option("--print-config", is_flag=True, help="Print the effective settings and their sources, then exit.")
@build_argument()
def serve(config: Path | None, print_config: bool, build_positional: str | None, **flags: object) -> None:
    """Serve a build directory (BUILD, as --build) over MCP: resources, resource templates and four read-only tools.

    \b
    Settings: flags > CAPIDX_* environment > the serve: section of capidx.yaml > defaults.
    Exit codes: 0 stdin ended (stdio), 2 bad settings or no servable build,
    130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.
    """
    from capidx.server.settings import SettingsError, render, resolve_settings

    flags["build"] = one_build(build_positional, flags["build"])
    try:
        settings = resolve_settings(flags, os.environ, Path.cwd(), config)
    except SettingsError as error:
        raise ServeError(error.problems) from None
    if build_positional is not None and settings.sources["build"].startswith("flag "):  # said as it was given
        settings = dataclasses.replace(settings, sources={**settings.sources, "build": "argument BUILD"})
    if print_config:
        click.echo(render(settings), nl=False)
        return
    _run(settings)


def _run(settings: Settings) -> None:
    from capidx.server.instructions import refuse_missing_instructions
    from capidx.server.logs import configure_logging
    from capidx.server.signals import Stopped, raise_on_stop_signals, stop_received
    from capidx.server.snapshot import BuildError, load_snapshot

    stop_logging = configure_logging()
    restore_signals = raise_on_stop_signals()
    # No cyclic collection until the build is served (server/serve.py `run` then freezes what is alive and turns
    # the collector back on): the build's data are trees, with nothing for the collector to find, and walking them
    # as they grow took a third of the time of loading a large build (docs/benchmarks.md, "Serve start").
    gc.disable()
    try:
        # The build is loaded (and refused, if it must be) before the MCP SDK is imported: a missing or
        # damaged build is reported in a fraction of the SDK's import time.
        snapshot = load_snapshot(settings.build)
        refuse_missing_instructions(snapshot, settings)  # refused before the SDK is imported
        from capidx.server.serve import StartupError, run

        try:
            run(settings, snapshot)
        except StartupError as error:
            raise ServeError(str(error)) from None
    except Stopped as stopped:
        raise click.exceptions.Exit(_said_stopped(stopped)) from None
    except KeyboardInterrupt:  # Python's own Ctrl-C handler, once the event loop has put it back
        raise click.exceptions.Exit(_said_stopped(Stopped(signal.SIGINT))) from None
    except Exception as error:
        # After a stop signal, an error is the stop's: its `Stopped`, raised inside a library's callback, can come out
        # as another exception (pydantic-core's SchemaError while the MCP SDK was imported, exit 1 and a traceback).
        signum = stop_received()
        if signum is not None:
            raise click.exceptions.Exit(_said_stopped(Stopped(signum))) from None
        if isinstance(error, BuildError):
            said = (
                _named_no_build(error, settings)
                or _no_build_of(error, settings)
                or _no_build_above(error, settings)
                or str(error)
            )
            raise ServeError(said) from None
        raise
    finally:
        # First: a signal from here on meets the handlers from before serve (the `capidx` command's own, which end it
        # with the signal's code; in another caller, Python's KeyboardInterrupt or a plain exit).
        restore_signals()
        stop_logging()
        # What `run` froze was what the server kept alive; a caller in this process (click's runner) would otherwise
        # keep all its own objects of that moment frozen too, never collected once they become garbage.
        gc.unfreeze()
        gc.enable()


def _said_stopped(stopped: Stopped) -> int:
    """`capidx serve: INFO: stopped by SIGINT`, logged as the server stops on a signal (after a Ctrl-C the terminal
    showed only `^C`, and a supervisor's log ended with the last request), and the command's exit code."""
    logging.getLogger("capidx.server").info("stopped by %s", signal.Signals(stopped.signum).name)
    return stopped.exit_code


def _named_no_build(error: Exception, settings: Settings) -> str | None:
    """`no build at /p/nonexist: --build needs an existing build (`capidx build --out /p/nonexist` makes one)`: a
    folder named with --build (or as BUILD) is not to be passed again, as report and inject say
    (`builddir.named_without_build`). None when the folder was not named so, or holds part of a build."""
    from capidx.schema.builddir import named_without_build
    from capidx.server.snapshot import NoBuildError

    where = error.where if isinstance(error, NoBuildError) else None
    if where is None or not settings.sources.get("build", "").startswith(("flag ", "argument ")):
        return None
    named = named_without_build(settings.build, "--build", _config_option(settings.config_file))
    return f"{where}: {named}" if named else None


def _config_option(given: Path | None) -> str:
    """` --config FILE` for a `capidx build` said to run where serve runs: none when the capidx.yaml in force is the
    working folder's, which a plain `capidx build` reads too."""
    if given is None or Path(os.path.abspath(given)).parent == Path.cwd():
        return ""
    return f" --config {shlex.quote(str(given))}"


def _no_build_of(error: Exception, settings: Settings) -> str | None:
    """`no build at tools/capidx/build: run `capidx build --config tools/capidx/capidx.yaml` first, …`: with a
    `--config` naming a capidx.yaml elsewhere (a monorepo's .mcp.json at the top) and the build it names (or the
    default beside it) missing, the command that makes it, said so that it works where serve runs: a plain `capidx
    build` there reads no capidx.yaml. A `serve.build` of the capidx.yaml in force (that one, or the working folder's)
    is not where `capidx build` writes (its `paths.out`): the command names it with --out. None in every other
    case."""
    from capidx.server.snapshot import NoBuildError

    where = error.where if isinstance(error, NoBuildError) else None
    given = settings.config_file  # as given with --config, else ./capidx.yaml
    source = settings.sources.get("build", "")
    if where is None or given is None or not (source == "default" or source.startswith("file ")):
        return None
    cwd = Path.cwd()
    config = _config_option(given)
    build = settings.build.relative_to(cwd) if settings.build.is_relative_to(cwd) else settings.build
    out = f" --out {shlex.quote(str(build))}" if source.endswith("(serve.build)") else ""
    if not config and not out:  # the plain `capidx build` the build's own error says
        return None
    return f"{where}: run `capidx build{config}{out}` first, or pass --build DIR"


def _no_build_above(error: Exception, settings: Settings) -> str | None:
    """`no build at …/agents/claude-code/build: no capidx.yaml here; ../../capidx.yaml is above: run capidx in ../..,
    or pass --build ../../build`: run from a subfolder of a project, with no capidx.yaml in force and the build
    folder left to the default (`build/`, not named by --build or CAPIDX_BUILD), nothing of a build there, the
    capidx.yaml of a folder above (`schema.above`) is named with the build it names (serve.build, else paths.out, as
    serve reads it there), or with --config when it does not load without error or may not be read (a link out of
    its folder, `above.readable`). None in every other case."""
    from capidx.schema.above import build_hint, config_near
    from capidx.server.settings import from_file
    from capidx.server.snapshot import NoBuildError

    where = error.where if isinstance(error, NoBuildError) else None
    if where is None or settings.config_file is not None or settings.sources.get("build") != "default":
        return None
    cwd = Path.cwd()
    above = config_near(cwd)
    if above is None:
        return None

    def build_named(config: Path) -> Path | None:
        values, problems = from_file(config, cwd)
        return None if problems else values.get("build", config.parent / "build")

    return f"{where}: {build_hint(above, cwd, build_named)}"
