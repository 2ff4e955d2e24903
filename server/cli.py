"""`capidx serve`: option parsing only. Imports click alone; the MCP SDK is imported inside the
command so other commands stay fast."""

from __future__ import annotations

import click


@click.command()
def serve() -> None:
    """(not implemented yet)"""
    raise click.ClickException("capidx serve is not implemented yet")
