"""`capidx report`: option parsing only; the logic lives in `capidx.compiler.report`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from capidx.compiler.errors import UsageError

FORMATS = ("text", "markdown", "json", "github", "html")


@click.command()
@click.option(
    "--build",
    "build_dir",
    type=click.Path(path_type=Path),
    default=None,
    metavar="DIR",
    help="Build directory (or its manifest.json) to report on. Default: paths.out from capidx.yaml, else build.",
)
@click.option(
    "--against",
    type=click.Path(path_type=Path),
    default=None,
    metavar="BASELINE",
    help="Compare with this build directory or manifest.json, e.g. a build of the base branch.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a PR comment, github for annotations and the step summary, "
    "json for scripts, html for one self-contained page.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="Write the report to FILE instead of standard output.",
)
@click.option("--no-fail", is_flag=True, help="Exit 0 even when a budget is breached.")
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="capidx.yaml to take paths.out from (default: ./capidx.yaml when it exists). Ignored with --build.",
)
def report(
    build_dir: Path | None,
    against: Path | None,
    output_format: str,
    output: Path | None,
    no_fail: bool,
    config: Path | None,
) -> None:
    """Show what a build costs in tokens, per artifact kind, against budgets and context windows.

    Reads only the build's manifest.json. With --against, shows what changed since a baseline build:
    token deltas per kind and the artifacts added, removed or changed.

    \b
    Exit codes: 0 within budget (or --no-fail), 1 a budget is breached,
    2 usage error or a missing, unreadable or invalid manifest.
    """
    from capidx.compiler.report import ReportOptions, run_report
    from capidx.compiler.reporters import use_color

    options = ReportOptions(
        build=build_dir if build_dir is not None else _configured_out(config),
        against=against,
        format=output_format,
        output=output,
        fail=not no_fail,
        color=output is None and use_color(sys.stdout.isatty()),
        step_summary=Path(os.environ["GITHUB_STEP_SUMMARY"]) if os.environ.get("GITHUB_STEP_SUMMARY") else None,
    )
    click.get_current_context().exit(run_report(options, echo=click.echo))


def _configured_out(config: Path | None) -> Path:
    from capidx.compiler.config import load_config

    settings, problems = load_config(config, Path.cwd())
    errors = [problem for problem in problems if problem.is_error]
    if errors:
        raise UsageError("\n".join(problem.as_text() for problem in errors))
    # Relative to the working directory when possible: the path is printed in PR comments.
    cwd = Path.cwd().resolve()
    return settings.out.relative_to(cwd) if settings.out.is_relative_to(cwd) else settings.out
