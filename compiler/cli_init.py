"""`capidx init`: option parsing only; the logic lives in `capidx.compiler.init`."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace scaffold files that exist (default: refuse and write nothing).")
def init(directory: Path, force: bool) -> None:
    """Scaffold a catalog in DIRECTORY (default: the current one).

    \b
    Writes capidx.yaml (commented), one example agent and the alias table under agents/, a
    .pre-commit-config.yaml and a GitHub Actions workflow (.github/workflows/capidx.yml, the one
    docs/ci.md explains). Then `capidx validate && capidx build && capidx serve` work at once.

    \b
    Exit codes: 0 written, 2 a file exists (named; nothing written) or cannot be written.
    """
    from capidx.compiler.init import scaffold, summary

    result = scaffold(directory.absolute(), force=force)  # InitError (exit 2) when a file is in the way
    click.echo("\n".join(summary(result, str(directory))))
