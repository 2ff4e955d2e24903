"""`capidx validate`: option parsing only; the logic lives in `capidx.compiler.validate`."""

from __future__ import annotations

import click


@click.command()
def validate() -> None:
    """(not implemented yet)"""
    raise click.ClickException("capidx validate is not implemented yet")
