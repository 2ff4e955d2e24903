"""`capidx verify`: option parsing only; the work lives in `capidx.compiler.verify` (imported lazily)."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from capidx.compiler.cli_validate import catalog_selection
from capidx.compiler.diagnostics import append_step_summary
from capidx.compiler.errors import UsageError

FORMATS = ("text", "json", "github", "markdown")  # keys of capidx.compiler.verify.report.RENDERERS
FAIL_ON = ("broken", "stale", "never")  # capidx.compiler.verify.run.FAIL_ON


@click.command()
@catalog_selection
@click.option("--agent", "agent", metavar="ID", help="Verify only this agent's document (its directory name).")
@click.option(
    "--write",
    is_flag=True,
    help="Record the results: verifiedDate and status: active for sources that passed, the status "
    "the evidence shows for those that failed. Without it, show the diff and write nothing.",
)
@click.option(
    "--fix-redirects", is_flag=True, help="Replace a URL that redirects permanently (301/308) by its final target."
)
@click.option(
    "--allow-private",
    is_flag=True,
    help="Allow loopback, private, link-local and other non-public addresses (for tests and intranets).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="broken",
    show_default=True,
    help="broken: exit 1 when a page cannot be had; stale: also when a page no longer supports its "
    "source; never: exit 0.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for people, json for programs, github for annotations and the step summary, "
    "markdown for a pull request.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=8,
    show_default=True,
    metavar="N",
    help="Pages fetched at the same time.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.05, max=600),
    default=10.0,
    show_default=True,
    metavar="S",
    help="Seconds to wait for a connection or for data (a page gets at most 6 x S in all).",
)
@click.option(
    "--rate-limit",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    metavar="R",
    help="Requests per second to any one host (0: no limit).",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1024),
    default=5 * 1024 * 1024,
    show_default=True,
    metavar="N",
    help="Largest page read, in bytes (after decompression).",
)
@click.option("--today", type=click.DateTime(["%Y-%m-%d"]), hidden=True, help="The date --write records.")
def verify(paths: tuple[Path, ...], **options: Any) -> None:
    """Check every source against its live page: reachable, and still saying what the source claims.

    For sourceGranularity excerpt the excerpt must be in the page's text; for section and dedicated
    the page must mention the capability (name, alias or terminology); a URL's #fragment must be an
    anchor of the page. Each page is fetched once. Only public http(s) addresses are contacted.

    \b
    Exit codes: 0 ok (per --fail-on), 1 sources failed (per --fail-on), 2 usage or I/O error.
    """
    from capidx.compiler.verify.fetch import FetchSettings
    from capidx.compiler.verify.report import RENDERERS, render_markdown
    from capidx.compiler.verify.run import VerifyOptions, execute, exit_code

    rate = options["rate_limit"]
    settings = FetchSettings(
        timeout=options["timeout"],
        max_bytes=options["max_bytes"],
        concurrency=options["concurrency"],
        per_host_interval=1 / rate if rate > 0 else 0.0,
        allow_private=options["allow_private"],
    )
    today = options["today"]
    verify_options = VerifyOptions(
        cwd=Path.cwd(),
        paths=paths,
        config_file=options["config_file"],
        agents=options["agents"],
        agent=options["agent"],
        write=options["write"],
        fix_redirects=options["fix_redirects"],
        fail_on=options["fail_on"],
        settings=settings,
        today=today.date() if isinstance(today, datetime) else None,
    )
    progress = _Progress(enabled=sys.stderr.isatty())
    try:  # a VerifyUsageError (exit 2) propagates to click
        result = execute(verify_options, on_start=progress.start, on_done=progress.advance)
    finally:
        progress.finish()
    output_format = options["output_format"]
    click.echo(RENDERERS[output_format](result, verify_options.cwd))
    if output_format == "github":
        try:
            append_step_summary(render_markdown(result, verify_options.cwd))
        except OSError as exc:
            raise UsageError(f"cannot append to $GITHUB_STEP_SUMMARY: {exc}") from None
    sys.exit(exit_code(result, verify_options.fail_on))


class _Progress:
    """A progress bar on standard error, only when it is a terminal (logs and pipes stay clean)."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None

    def start(self, total: int) -> None:
        if self.enabled and total:
            self.bar = click.progressbar(length=total, label="fetching pages", file=sys.stderr)
            self.bar.__enter__()

    def advance(self, _: object) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
