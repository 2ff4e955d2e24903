"""`capidx report`: option parsing only; the logic lives in `capidx.compiler.report`."""

from __future__ import annotations

import click


@click.command()
def report() -> None:
    """(not implemented yet)"""
    raise click.ClickException("capidx report is not implemented yet")
