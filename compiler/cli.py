"""The click layer: the `capidx` group. Each command lives in its own `cli_*` module, which only
parses options and delegates to the command's logic module, imported inside the command so that
`capidx validate` never pays for the MCP SDK or a tokenizer (ARCHITECTURE.md, "Expensive imports").
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import click

from capidx.compiler import __version__
from capidx.compiler.cli_build import build
from capidx.compiler.cli_init import init
from capidx.compiler.cli_report import report
from capidx.compiler.cli_validate import validate
from capidx.compiler.cli_verify import verify
from capidx.compiler.errors import UsageError
from capidx.server.cli import serve


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(version=__version__, prog_name="capidx")
def cli() -> None:
    """capidx: compile a capability catalog into a token-measured index and serve it over MCP.

    \b
    Exit codes: 0 success, 1 invalid data / budget breach / failed build, 2 usage or I/O error.
    """


cli.add_command(init)
cli.add_command(validate)
cli.add_command(build)
cli.add_command(report)
cli.add_command(verify)
# What `capidx serve` needs beyond the compiler: the `serve` extra (pyproject.toml). Kept out of the base
# install so that a pre-commit hook (validate) or a CI build installs the compiler alone; the compiler
# shares only stdlib-only modules with the server (capidx.server.text, capidx.server.suggest).
SERVE_EXTRA = ("mcp", "rapidfuzz", "watchfiles")
SERVE_HINT = "capidx serve needs the server's dependencies: pip install 'capidx[serve]'"


def _needs_serve_extra(callback: Any) -> Any:
    """`serve`'s callback, first checking that the serve extra is installed (exit 2 with the one-line hint,
    not an ImportError's traceback). `--help` is answered by click before and works without it."""

    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for name in SERVE_EXTRA:
            try:
                importlib.import_module(name)
            except ImportError:
                raise UsageError(f"{SERVE_HINT} ({name} is not installed)") from None
        return callback(*args, **kwargs)

    return checked


serve.callback = _needs_serve_extra(serve.callback)
cli.add_command(serve)


def main() -> None:
    cli()
