"""`capidx build`: option parsing only; the logic lives in `capidx.compiler.build`."""

from __future__ import annotations

import os
from pathlib import Path

import click

_DIR = click.Path(file_okay=False, path_type=Path)
_EXISTING_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
_EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _absolute(path: Path | None) -> Path | None:
    """Absolute, but as given: a link is not followed (messages name the user's path; a link loop is no crash)."""
    return Path(os.path.abspath(path)) if path is not None else None


def config_notice(config_file: Path | None, agents: Path | None) -> str:
    """Which capidx.yaml is in force: like mkdocs, the working directory's (or --config's), never one found
    beside --agents DIR. Said on every build because its budgets and paths apply to whatever catalog is
    built, and a catalog elsewhere may carry its own capidx.yaml that is *not* read (named then)."""
    line = f"config: {config_file}" if config_file else "config: none (no ./capidx.yaml; defaults, no budgets)"
    if agents is not None:
        own = [path for path in (agents / "capidx.yaml", agents.parent / "capidx.yaml") if path.is_file()]
        ignored = [path for path in own if path != config_file]
        if ignored:
            line += f"; not read: {ignored[0]} (pass --config {ignored[0]} to use it)"
    return line


@click.command()
@click.option("--config", "config_file", type=_EXISTING_FILE, help="capidx.yaml to use. Default: ./capidx.yaml if any.")
@click.option("--agents", type=_EXISTING_DIR, help="Catalog root holding <agent>/capabilities/current.json.")
@click.option("--schema", type=_EXISTING_FILE, help="Capability schema. Default: the bundled one.")
@click.option("--aliases", type=_EXISTING_FILE, help="Alias table. Default: <agents>/aliases.json if it exists.")
@click.option("--no-aliases", is_flag=True, help="Build without an alias table.")
@click.option("--templates", type=_EXISTING_DIR, help="Folder whose templates override the bundled ones by name.")
@click.option("--out", type=_DIR, help="Build directory (replaced atomically). Default: build")
@click.option(
    "--encoding",
    "encodings",
    multiple=True,
    metavar="NAME",
    help="tiktoken encoding to measure (repeatable; the first is used for budgets). Default: cl100k_base",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success; of validation problems, only errors.")
@click.option("-v", "--verbose", is_flag=True, help="List every validation warning (default: repetitive ones grouped).")
@click.option("--strict", is_flag=True, help="Treat validation warnings as errors.")
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
    from capidx.compiler.config import load_config, with_catalog
    from capidx.compiler.diagnostics import ExitCode

    if aliases is not None and no_aliases:
        raise click.UsageError("--aliases and --no-aliases exclude each other")
    config, problems = load_config(_absolute(config_file), Path.cwd())
    for problem in problems:
        click.echo(problem.as_text(), err=True)
    if problems:
        raise SystemExit(ExitCode.USAGE)
    config = with_catalog(config, _absolute(agents), _absolute(aliases), no_aliases)
    config = config.with_overrides(
        schema=_absolute(schema), templates=_absolute(templates), out=_absolute(out), encodings=encodings or None
    )
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose exclude each other")
    if not quiet:
        click.echo(config_notice(config.config_file, _absolute(agents)), err=True)
    from capidx.compiler.build import execute

    raise SystemExit(execute(config, strict=strict, quiet=quiet, verbose=verbose).exit_code)
