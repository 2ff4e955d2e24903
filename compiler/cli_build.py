"""`capidx build`: option parsing only; the logic lives in `capidx.compiler.build`."""

from __future__ import annotations

import click


@click.command()
def build() -> None:
    """(not implemented yet)"""
    raise click.ClickException("capidx build is not implemented yet")
