"""The click layer: the `capidx` group. Each command lives in its own `cli_*` module, which only
parses options and delegates to the command's logic module, imported inside the command so that
`capidx validate` never pays for the MCP SDK or a tokenizer (ARCHITECTURE.md, "Expensive imports").
"""

from __future__ import annotations

import click

from capidx.compiler import __version__
from capidx.compiler.cli_build import build
from capidx.compiler.cli_init import init
from capidx.compiler.cli_report import report
from capidx.compiler.cli_validate import validate
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
cli.add_command(serve)


def main() -> None:
    cli()
