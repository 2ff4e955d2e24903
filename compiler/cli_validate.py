"""`capidx validate`: option parsing only; the logic lives in `capidx.compiler.validate`.

Imports click alone at module level; validation (jsonschema, yaml) loads inside the command so that
`capidx --help` and the other commands stay fast.
"""

from __future__ import annotations

import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

import click

FORMATS = ("text", "json", "github")  # keys of capidx.compiler.reporters.REPORTER_BY_NAME


def catalog_selection(command: Any) -> Any:
    """PATHS, --config and --agents: how `validate` and `verify` choose the documents they read."""
    options = (
        click.argument("paths", nargs=-1, type=click.Path(path_type=Path)),
        click.option(
            "--config",
            "config_file",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Configuration file (default: ./capidx.yaml when present).",
        ),
        click.option(
            "--agents",
            type=click.Path(path_type=Path),
            metavar="DIR",
            help="Catalog directory (overrides paths.agents).",
        ),
    )
    for option in reversed(options):
        command = option(command)
    return command


@click.command()
@catalog_selection
@click.option(
    "--aliases", type=click.Path(path_type=Path), metavar="FILE", help="Alias table (overrides paths.aliases)."
)
@click.option("--no-aliases", is_flag=True, help="Do not read an alias table.")
@click.option(
    "--schema",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Validate capability documents against this JSON "
    "Schema (draft-07 or 2020-12, by its $schema) instead of the bundled one.",
)
@click.option(
    "--max-age-days",
    type=click.IntRange(min=1),
    metavar="N",
    help="Sources verified longer ago are errors (overrides staleness.error_days; default: age only warns).",
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for people, json for programs, github for workflow annotations.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print errors only, without a summary.")
@click.option("-v", "--verbose", is_flag=True, help="List every warning instead of grouping repetitive ones.")
@click.option("--today", type=click.DateTime(["%Y-%m-%d"]), hidden=True, help="Judge freshness as of this date.")
def validate(
    paths: tuple[Path, ...],
    config_file: Path | None,
    agents: Path | None,
    aliases: Path | None,
    no_aliases: bool,
    schema: Path | None,
    max_age_days: int | None,
    strict: bool,
    output_format: str,
    quiet: bool,
    verbose: bool,
    today: datetime | None,
) -> None:
    """Check capability documents and the alias table; report every problem with file:line:col.

    PATHS are files or directories (default: the project's catalog). A directory contributes every
    */capabilities/current.{json,yaml,yml} below it and its aliases.json; a file is a capability
    document unless it is named aliases.{json,yaml,yml}.

    \b
    Exit codes: 0 valid (warnings allowed), 1 invalid, 2 usage or I/O error.
    """
    if quiet and verbose:
        raise click.UsageError("-q/--quiet and -v/--verbose exclude each other")
    from capidx.compiler.diagnostics import append_step_summary
    from capidx.compiler.errors import UsageError
    from capidx.compiler.reporters import REPORTER_BY_NAME, GithubReporter, use_color
    from capidx.compiler.validate import ValidateArgs, execute

    args = ValidateArgs(
        cwd=Path.cwd(),
        paths=paths,
        config_file=config_file,
        agents=agents,
        aliases=aliases,
        no_aliases=no_aliases,
        schema=schema,
        max_age_days=max_age_days,
        strict=strict,
        today=_as_date(today),
    )
    code, result = execute(args)
    color = use_color(sys.stdout.isatty())
    reporter = REPORTER_BY_NAME[output_format](color=color, verbosity=-1 if quiet else int(verbose), cwd=args.cwd)
    output = reporter.render(result)
    if output:
        click.echo(output, color=color)
    if isinstance(reporter, GithubReporter):
        try:
            append_step_summary(reporter.step_summary(result))
        except OSError as exc:
            raise UsageError(f"cannot append to $GITHUB_STEP_SUMMARY: {exc}") from None
    sys.exit(int(code))


def _as_date(value: datetime | None) -> date | None:
    return value.date() if value is not None else None
