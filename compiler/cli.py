"""The compiler's commands: `init`, `validate`, `build`, `report`, `verify` and `inject` — option parsing only.

Each command parses its options and hands them to its stage, imported inside the command, so that
`capidx --help` and `capidx validate` never pay for Jinja, tiktoken or the MCP SDK (ARCHITECTURE.md,
"Expensive imports"). The `capidx` group that gathers these and the server's `serve` is `capidx.cli`
(folder entry/): neither the compiler nor the server imports the other.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from capidx.compiler import finished
from capidx.compiler.diagnostics import append_step_summary, visible
from capidx.compiler.errors import UsageError
from capidx.schema.homepath import HomePath, build_argument, one_build
from capidx.schema.realpath import real_path, resolve

# ---- capidx init ---------------------------------------------------------------------------------------


@click.command(short_help="Scaffold a catalog and its CI files.")
@click.argument("directory", required=False, default=".", type=HomePath(file_okay=False, path_type=Path))
@click.option(
    "--force",
    is_flag=True,
    help="Write the missing files around ones of yours in the way (kept byte for byte); init never replaces a file.",
)
def init(directory: Path, force: bool) -> None:
    """Scaffold a catalog in DIRECTORY, the current one when not given, or add capidx to an existing one.

    \b
    Writes what is missing of: capidx.yaml (commented), a .pre-commit-config.yaml, a GitHub Actions
    workflow (.github/workflows/capidx.yml, the one docs/ci.md explains; both at the top of the git
    repository when DIRECTORY is a folder below it, given DIRECTORY's capidx.yaml) and, into a new
    catalog only, an example agent and alias table under agents/ (not when agents/ holds anything or
    capidx.yaml is yours). It never replaces or deletes a file, and says per file what it kept and why.

    \b
    Exit codes: 0 written (or nothing missing), 2 a file of yours is in the way without --force (named;
    nothing written), a folder is where a file goes or a file where a folder goes, or a file cannot be written.
    """
    from capidx.compiler.init_project import scaffold, summary

    result = scaffold(directory.absolute(), force=force)  # InitError (exit 2) when a file is in the way
    click.echo("\n".join(summary(result, str(directory))))


# ---- capidx validate -----------------------------------------------------------------------------------

VALIDATE_FORMATS = ("text", "json", "github")  # keys of capidx.compiler.validate.reporters.REPORTER_BY_NAME


def catalog_selection(command: Any) -> Any:
    """PATHS, --config and --agents: how `validate` and `verify` choose the documents they read."""
    options = (
        click.argument("paths", nargs=-1, type=HomePath(path_type=Path)),
        click.option(
            "--config",
            "config_file",
            type=HomePath(path_type=Path),
            metavar="FILE",
            show_default="./capidx.yaml when present",
            help="Configuration file.",
        ),
        click.option(
            "--agents",
            type=HomePath(path_type=Path),
            metavar="DIR",
            help="Catalog directory (overrides paths.agents).",
        ),
    )
    for option in reversed(options):
        command = option(command)
    return command


@click.command(short_help="Check the catalog; report file:line:col.")
@catalog_selection
@click.option("--aliases", type=HomePath(path_type=Path), metavar="FILE", help="Alias table (overrides paths.aliases).")
@click.option("--no-aliases", is_flag=True, help="Do not read an alias table.")
@click.option(
    "--schema",
    type=HomePath(path_type=Path),
    metavar="FILE",
    help="Validate capability documents against this JSON "
    "Schema (draft-07 or 2020-12, by its $schema) instead of the bundled one.",
)
@click.option(
    "--max-age-days",
    type=click.IntRange(min=1),
    metavar="N",
    show_default="age only warns",
    help="Sources verified longer ago are errors (overrides staleness.error_days).",
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(VALIDATE_FORMATS),
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

    PATHS are files or directories; none: the project's catalog. A directory contributes every
    */capabilities/current.{json,yaml,yml} below it and its aliases.json; a file is a capability
    document unless it is named aliases.{json,yaml,yml}.

    \b
    Exit codes: 0 valid (warnings allowed), 1 invalid, 2 usage or I/O error.
    """
    if quiet and verbose:
        raise click.UsageError("-q/--quiet and -v/--verbose exclude each other")
    from capidx.compiler.validate.reporters import REPORTER_BY_NAME, GithubReporter, use_color
    from capidx.compiler.validate.run import ValidateArgs, execute

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
    _finish(int(code))


def _finish(code: int) -> NoReturn:
    """Exit with `code`, the command's outcome printed: a Ctrl-C from here on keeps it (compiler/finished.py)."""
    finished.said(code)
    sys.exit(code)


def _as_date(value: datetime | None) -> date | None:
    return value.date() if value is not None else None


# ---- capidx build --------------------------------------------------------------------------------------

_DIR = HomePath(file_okay=False, path_type=Path)
_EXISTING_DIR = HomePath(exists=True, file_okay=False, path_type=Path)
_EXISTING_FILE = HomePath(exists=True, dir_okay=False, path_type=Path)


def _absolute(path: Path | None) -> Path | None:
    """Absolute, but as given: a link is not followed (messages name the user's path; a link loop is no crash).
    A leading `~` was expanded by HomePath already."""
    return Path(os.path.abspath(path)) if path is not None else None


def config_notice(config_file: Path | None, agents: Path | None) -> str:
    """Which capidx.yaml is in force: like mkdocs, the working directory's (or --config's), never one found
    beside --agents DIR. Said on every build because its budgets and paths apply to whatever catalog is
    built, and a catalog elsewhere may carry its own capidx.yaml that is *not* read (named then)."""
    line = f"config: {config_file}" if config_file else "config: none (no ./capidx.yaml; defaults, no budgets)"
    if agents is not None:
        # os.path: Python 3.11's Path.is_file raises in a catalog this user may not search, which validation reports
        own = [path for path in (agents / "capidx.yaml", agents.parent / "capidx.yaml") if os.path.isfile(path)]
        ignored = [path for path in own if path != config_file]
        if ignored:
            line += f"; not read: {ignored[0]} (pass --config {ignored[0]} to use it)"
    return line


@click.command(short_help="Compile the catalog into a build directory.")
@click.option(
    "--config",
    "config_file",
    type=_EXISTING_FILE,
    metavar="FILE",
    show_default="./capidx.yaml when present",
    help="capidx.yaml to use.",
)
@click.option(
    "--agents",
    type=HomePath(path_type=Path),  # a missing or mistyped folder is said as validate says it, with a way on
    metavar="DIR",
    show_default="paths.agents",
    help="Catalog root holding <agent>/capabilities/current.json.",
)
@click.option(
    "--schema", type=_EXISTING_FILE, metavar="FILE", show_default="the bundled one", help="Capability schema."
)
@click.option(
    "--aliases",
    type=_EXISTING_FILE,
    metavar="FILE",
    show_default="<agents>/aliases.json if it exists",
    help="Alias table.",
)
@click.option("--no-aliases", is_flag=True, help="Build without an alias table.")
@click.option(
    "--templates", type=_EXISTING_DIR, metavar="DIR", help="Folder whose templates override the bundled ones by name."
)
@click.option(
    "--out",
    type=_DIR,
    metavar="DIR",
    show_default="paths.out, else build",
    help="Build directory (replaced atomically).",
)
@click.option(
    "--encoding",
    "encodings",
    multiple=True,
    metavar="NAME",
    show_default="encodings, else cl100k_base",
    help="tiktoken encoding to measure (repeatable; the first is used for budgets).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success; of validation problems, only errors.")
@click.option(
    "-v", "--verbose", is_flag=True, help="List every validation warning instead of grouping repetitive ones."
)
@click.option("--strict", is_flag=True, help="Treat validation warnings as errors.")
@click.option(
    "--no-site", is_flag=True, help="Skip site/ (JSON API, llms.txt, web page); without it, capidx.yaml's site decides."
)
def build(
    config_file: Path | None,
    agents: Path | None,
    schema: Path | None,
    aliases: Path | None,
    no_aliases: bool,
    templates: Path | None,
    out: Path | None,
    encodings: tuple[str, ...],
    quiet: bool,
    verbose: bool,
    strict: bool,
    no_site: bool,
) -> None:
    """Validate the catalog and compile it into a token-measured build directory.

    \b
    The first line (stderr, not with -q) names the capidx.yaml in force: ./capidx.yaml or --config,
    never one beside --agents DIR.

    
    Exit codes: 0 built (or up to date), 1 invalid data, template error, encoding file that cannot
    be used or budget breach (a breaching build is still written), 2 usage or I/O error (bad flag
    or config, missing or unreadable catalog, unknown encoding or one not in tiktoken's cache, an
    --out that is not provably a capidx build or is the project, the catalog or a parent of them).
    """
    from capidx.compiler.config import given_by_flags, load_config, with_catalog
    from capidx.compiler.diagnostics import ExitCode
    from capidx.compiler.validate.reporters import problem_text

    if aliases is not None and no_aliases:
        raise click.UsageError("--aliases and --no-aliases exclude each other")
    try:  # a Ctrl-C before the build starts: nothing was written, and it says so as a later one would
        given = given_by_flags(
            _absolute(agents), _absolute(aliases), no_aliases, _absolute(schema), _absolute(templates)
        )
        config, problems = load_config(_absolute(config_file), Path.cwd(), given)
        for problem in problems:
            click.echo(problem_text(problem), err=True)
        if problems:
            raise SystemExit(ExitCode.USAGE)
        config = with_catalog(config, _absolute(agents), _absolute(aliases), no_aliases)
        config = config.with_overrides(
            schema=_absolute(schema), templates=_absolute(templates), out=_absolute(out), encodings=encodings or None
        )
        if no_site:
            config = config.with_overrides(site=False)
        if quiet and verbose:
            raise click.UsageError("--quiet and --verbose exclude each other")
        if not quiet:
            click.echo(visible(config_notice(config.config_file, _absolute(agents))), err=True)
        from capidx.compiler.emit.pipeline import execute
    except KeyboardInterrupt:
        click.echo("\ninterrupted: build not started; nothing was written", err=True)
        finished.interruption_said()
        raise
    raise SystemExit(execute(config, strict=strict, quiet=quiet, verbose=verbose).exit_code)


# ---- capidx report -------------------------------------------------------------------------------------

REPORT_FORMATS = ("text", "markdown", "json", "github", "html")

_Command = TypeVar("_Command", bound=Callable[..., Any])


def build_option(help_text: str) -> Callable[[_Command], _Command]:
    """--build DIR as `report` and `inject` take it: defined once so that the two cannot drift apart; each says
    in its help what it reads from the build."""
    return click.option(
        "--build",
        "build_dir",
        type=HomePath(path_type=Path),
        metavar="DIR",
        show_default="paths.out, else build",
        help=help_text,
    )


def _not_nan(_ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """`value` of a `FloatRange` option, which lets `nan` through (no comparison with it is true)."""
    if value is not None and math.isnan(value):
        raise click.BadParameter(f"{value} is not a number.", param=param)
    return value


def config_option(help_text: str) -> Callable[[_Command], _Command]:
    """--config FILE as `report` and `inject` take it (read by `_settings`): defined once so that the two cannot
    drift apart; each says in its help what it takes from capidx.yaml."""
    return click.option(
        "--config",
        type=_EXISTING_FILE,
        metavar="FILE",
        show_default="./capidx.yaml when present",
        help=help_text,
    )


@click.command(short_help="Show a build's tokens against budgets.")
@build_option("Build directory (or its manifest.json) to report on.")
@click.option(
    "--against",
    type=HomePath(path_type=Path),
    default=None,
    metavar="BASELINE",
    help="Compare with this build directory or manifest.json, e.g. a build of the base branch.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(REPORT_FORMATS),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a PR comment, github for annotations and the step summary, "
    "json for scripts, html for one self-contained page.",
)
@click.option(
    "--output",
    "-o",
    type=HomePath(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="Write the report to FILE instead of standard output (- is standard output).",
)
@click.option("--no-fail", is_flag=True, help="Exit 0 even when a budget is breached.")
@click.option(
    "--baseline-budgets",
    is_flag=True,
    help="With --against: check the build against the tighter of its own and the baseline's budgets, so that "
    "a change cannot loosen the budgets it is checked against (a pull request's capidx.yaml, in CI).",
)
@click.option(
    "--propose-budgets",
    is_flag=True,
    help="Print a budgets: block for capidx.yaml sized from the build's measured tokens instead (exit 0).",
)
@click.option(
    "--headroom",
    type=click.FloatRange(min=0, max=1000),
    default=None,
    callback=_not_nan,
    metavar="PCT",
    help="With --propose-budgets: percent above the largest document of each kind.  [default: 20]",
)
@config_option(
    "capidx.yaml to take paths.out from; with --build, only where --format github places a budget's annotation."
)
@build_argument(path_type=Path)
def report(
    build_positional: Path | None,
    build_dir: Path | None,
    against: Path | None,
    output_format: str,
    output: Path | None,
    no_fail: bool,
    baseline_budgets: bool,
    propose_budgets: bool,
    headroom: float | None,
    config: Path | None,
) -> None:
    """Show what a build (BUILD, as --build) costs in tokens, per artifact kind, against budgets and context windows.

    Reads only the build's manifest.json. With --against, shows what changed since a baseline build:
    token deltas per kind and the artifacts added, removed or changed, and warns about each budget the
    build sets looser than the baseline (--baseline-budgets holds it to the baseline's). With
    --propose-budgets, prints a budgets: block for capidx.yaml instead: the largest document of each kind
    plus --headroom.

    \b
    Exit codes: 0 within budget (or --no-fail), 1 a budget is breached,
    2 usage error or a missing, unreadable or invalid manifest.
    """
    from capidx.compiler.config import load_config
    from capidx.compiler.report.propose import DEFAULT_HEADROOM
    from capidx.compiler.report.run import ReportOptions, run_report
    from capidx.compiler.validate.reporters import use_color

    build_dir = one_build(build_positional, build_dir)
    if baseline_budgets and against is None:
        raise click.UsageError(
            "--baseline-budgets holds the build to the budgets of the --against baseline: give --against"
        )
    if headroom is not None and not propose_budgets:
        raise click.UsageError("--headroom sizes the budgets --propose-budgets prints: give --propose-budgets too")
    if propose_budgets and (against is not None or output_format != "text"):
        given = "--against" if against is not None else f"--format {output_format}"
        raise click.UsageError(f"--propose-budgets prints YAML for capidx.yaml from one build: drop {given}")
    if output == Path("-"):  # standard output, as most tools read it: coloured on a terminal as without -o
        output = None
    settings = _refuse_build_inputs(output, config) if output is not None else None
    if settings is None and build_dir is None:
        settings = _settings(config)
    if settings is None and output_format == "github":  # only to place annotations: a file that does not load, none
        settings = load_config(_absolute(config), Path.cwd())[0]
    options = ReportOptions(
        build=build_dir if build_dir is not None else _configured_out(config, settings),
        build_given=build_dir is not None,
        above=_config_above(build_dir, settings),
        given_config=None if config is None else str(config),
        budget_places=_budget_places(settings) if output_format == "github" else {},
        config_file=_budget_file(settings) if build_dir is None else None,
        against=against,
        format=output_format,
        output=output,
        fail=not no_fail,
        baseline_budgets=baseline_budgets,
        propose=None if not propose_budgets else (DEFAULT_HEADROOM if headroom is None else headroom),
        color=output is None and use_color(sys.stdout.isatty()),
        step_summary=Path(os.environ["GITHUB_STEP_SUMMARY"]) if os.environ.get("GITHUB_STEP_SUMMARY") else None,
    )
    _finish(run_report(options, echo=click.echo))


def _settings(config: Path | None) -> Any:
    """The capidx.yaml in force (--config, else ./capidx.yaml, else defaults); its errors are usage errors."""
    from capidx.compiler.config import load_config
    from capidx.compiler.validate.reporters import problem_text

    settings, problems = load_config(_absolute(config), Path.cwd())
    errors = [problem for problem in problems if problem.is_error]
    if errors:
        raise UsageError([problem_text(problem) for problem in errors])
    return settings


def _refuse_build_inputs(output: Path, config: Path | None) -> Any:
    """`report -o` never writes over what the project's build reads (capidx.yaml, a capability document, the alias
    table, a template) nor adds to the catalog folder a file named as one (a new `current.yml` is a document), as
    `inject` never appends to it: the next validate would fail on a report. The project is
    the one capidx.yaml names (--config, else ./capidx.yaml). While that file does not load, which files the build
    reads is unknown (it may name any catalog): no file is written. Returns the settings, loaded once."""
    from capidx.compiler.config import load_config
    from capidx.compiler.inject.inputs import build_inputs
    from capidx.compiler.inject.target import InputIndex, input_of
    from capidx.compiler.validate.discover import meant_for_capidx
    from capidx.compiler.validate.reporters import problem_text

    settings, problems = load_config(_absolute(config), Path.cwd())
    if errors := [problem_text(problem) for problem in problems if problem.is_error]:
        raise UsageError(
            [
                f"{output}: not written: while capidx.yaml does not load, the files capidx build reads are unknown "
                "(fix it, or write the report to standard output with -o -)",
                *errors,
            ]
        )
    found = input_of(Path(os.path.abspath(output)), InputIndex.of(build_inputs(settings)))
    if found is not None:
        raise UsageError(
            f"{output}: it is {found.what} ({found.path}), which capidx build reads; write the report elsewhere"
        )
    target = Path(real_path(output))  # a new file there may be one the build reads, or validate refuses
    read = meant_for_capidx(target.name) or target.parent.name == "capabilities"  # 'current.yml', 'aliases.jsonl'
    if read and target.is_relative_to(real_path(settings.agents)):
        raise UsageError(
            f"{output}: inside the catalog folder ({settings.agents}), a file of this name is one capidx build reads "
            "or validate refuses; write the report elsewhere"
        )
    return settings


def _budget_places(settings: Any) -> dict[tuple[str, str], Any]:
    """Where the capidx.yaml in force sets each budget (`Config.budget_places`, found as it was read), named as
    validate names the file, with the number it sets: a breach is annotated there (`report --format github`)."""
    from capidx.compiler.report.model import BudgetPlace
    from capidx.compiler.worktree import annotation_path
    from capidx.schema.wording import shown

    if settings.config_file is None:
        return {}
    file = annotation_path(settings.config_file, shown(settings.config_file, Path.cwd()))
    budgets = {"budgets": settings.budgets, "character_budgets": settings.character_budgets}
    return {
        (section, kind): BudgetPlace(file, line, col, budgets[section][kind])
        for (section, kind), (line, col) in settings.budget_places.items()
        if kind in budgets[section]
    }


def _budget_file(settings: Any) -> str | None:
    """The capidx.yaml whose `paths.out` named the build, which set its budgets: named as validate names files."""
    from capidx.schema.wording import shown

    return shown(settings.config_file, Path.cwd()) if settings is not None and settings.config_file else None


def _config_above(build_dir: Path | None, settings: Any) -> Path | None:
    """The capidx.yaml of a folder above the working one, when the build is the default `build/` because no
    capidx.yaml is in force (none here, no --config): run from a subfolder of a project, a missing build names the
    project's (`manifest_reader.above_build_hint`). A --build the user named is not second-guessed."""
    from capidx.schema.above import config_near

    if build_dir is not None or settings is None or settings.config_file is not None:
        return None
    return config_near(resolve(Path.cwd()))


def _config_building(build: Path) -> Path | None:
    """With `--build DIR` and no capidx.yaml in force (none here, no --config): the capidx.yaml whose `paths.out` is DIR
    (links followed), in DIR's folder or one above it below the working folder: run from the top of a monorepo, `inject
    --build tools/capidx/build` is tools/capidx/capidx.yaml's build, whose files the commands it suggests must read
    (`capidx build --config tools/capidx/capidx.yaml`). None when there is none, or it does not load without error;
    a capidx.yaml that is a link out of its folder is not read (`schema.above.readable`)."""
    from capidx.compiler.config import CONFIG_FILE_NAME, load_config
    from capidx.schema.above import readable
    from capidx.schema.builddir import MANIFEST

    cwd = resolve(Path.cwd())
    where = Path(real_path(build))
    if where.name == MANIFEST and where.is_file():  # --build takes the manifest too
        where = where.parent
    for folder in where.parents:
        if folder == cwd or not folder.is_relative_to(cwd):
            return None
        candidate = folder / CONFIG_FILE_NAME
        if os.path.isfile(candidate) and readable(candidate):
            settings, problems = load_config(candidate, cwd)
            if not problems and Path(real_path(settings.out)) == where:
                return candidate
    return None


def _config_named(config_file: Path | None) -> str | None:
    """The capidx.yaml in force as a command pasted in the working folder names it with --config: None when it is that
    folder's own capidx.yaml (or there is none), which capidx reads without it; else relative to the working folder
    (`tools/capidx/capidx.yaml`), or whole when that is shorter to say (another drive, far above)."""
    from capidx.compiler.config import CONFIG_FILE_NAME

    if config_file is None:
        return None
    cwd = Path.cwd()
    if os.path.abspath(config_file) in (str(cwd / CONFIG_FILE_NAME), str(resolve(cwd) / CONFIG_FILE_NAME)):
        return None
    try:
        relative = os.path.relpath(config_file, cwd)
    except ValueError:  # another drive (Windows)
        return str(config_file)
    return relative if len(relative) <= len(str(config_file)) else str(config_file)


def _configured_out(config: Path | None, settings: Any = None) -> Path:
    settings = settings or _settings(config)
    # Relative to the working directory when possible: the path is printed in PR comments.
    cwd = resolve(Path.cwd())
    return settings.out.relative_to(cwd) if settings.out.is_relative_to(cwd) else settings.out


# ---- capidx verify -------------------------------------------------------------------------------------

VERIFY_FORMATS = ("text", "json", "github", "markdown")  # keys of capidx.compiler.verify.report.RENDERERS
FAIL_ON = ("broken", "stale", "never")  # capidx.compiler.verify.run.FAIL_ON


@click.command(short_help="Check every source against its live page.")
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
    help="broken: exit 1 when a page cannot be had; stale: also when a source does not verify (its page no "
    "longer supports it, or could not be checked); never: exit 0.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(VERIFY_FORMATS),
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
    _finish(exit_code(result, verify_options.fail_on))


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


# ---- capidx inject -------------------------------------------------------------------------------------


@click.command(short_help="Write the overview into AGENTS.md and other memory files.")
@click.argument("files", nargs=-1, required=True, type=HomePath(path_type=Path))
@build_option("Build directory whose memory.md goes into the files.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when a file's block is missing or stale.")
@click.option(
    "--force",
    is_flag=True,
    help="Also replace a block edited by hand or not written by capidx, losing the text in it.",
)
@config_option("capidx.yaml in force; its folder is the project.")
def inject(files: tuple[Path, ...], build_dir: Path | None, check: bool, force: bool, config: Path | None) -> None:
    """Write the index's overview into memory files agents read at start (AGENTS.md, CLAUDE.md, …).

    FILES are Markdown or plain-text memory files: AGENTS.md, CLAUDE.md, .github/copilot-instructions.md,
    .cursor/rules/*.mdc, .windsurfrules and the like. Writes one block between `<!-- capidx:begin … -->` and
    `<!-- capidx:end -->` holding the build's memory.md, creating a missing file; every byte outside the
    block stays as it was. A file already current is not written. Files must be inside the project (the
    folder of the capidx.yaml in force), or, when that folder is below the top of a git work tree (a
    catalog in tools/capidx/ of a monorepo), anywhere under that top. A block is replaced only when capidx
    wrote it and nobody edited it since (its text matches the sha256 in its begin marker); --force
    replaces any other, losing its text.

    \b
    Exit codes: 0 written or current, 1 (--check) a block is missing or stale,
    2 bad input, and nothing is written: a block edited by hand (without
    --force), markers that do not pair, a path out of the project, the
    files the build reads (capidx.yaml, the alias table, capability
    documents, templates), .git, a build, a program (a #! script or a
    binary), a name that is not Markdown or text (.json, .yaml, .py,
    Makefile, …), a file that is not UTF-8 or not a regular file, no build
    or one without memory.md.
    """
    from capidx.compiler.inject.inputs import build_inputs
    from capidx.compiler.inject.run import InjectOptions, execute
    from capidx.schema.pathkind import PathKind, path_kind

    if check and force:
        raise click.UsageError("--check writes nothing, so --force has nothing to replace: give one of them")
    from capidx.compiler.worktree import top_above

    settings = _settings(config)
    if build_dir is not None and settings.config_file is None and (building := _config_building(build_dir)):
        settings = _settings(building)  # --build alone: the project whose build it is (a monorepo's, from its top)
    options = InjectOptions(
        files=files,
        build=build_dir or settings.out,
        project=settings.root,
        cwd=Path.cwd(),
        check=check,
        force=force,
        project_out=settings.out,
        inputs=build_inputs(settings),
        has_catalog=path_kind(settings.agents) is not PathKind.NOTHING,
        given_build=None if build_dir is None else str(build_dir),
        given_config=str(config) if config is not None else _config_named(settings.config_file),
        above=_config_above(build_dir, settings),
        top=top_above(settings.root),
    )
    _finish(execute(options, echo=click.echo))


COMMANDS = (init, validate, build, report, verify, inject)
