"""`capidx verify`, end to end: find the sources, fetch each page once, judge, edit, report.

I/O lives here and in `fetch` (network) and `rewrite.write_file` (disk); `verdicts` and `content`
are pure. The catalog is found exactly as `capidx validate` finds it (capidx.yaml, `--agents`, PATHS).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from capidx.compiler.diagnostics import ExitCode
from capidx.compiler.errors import UsageError
from capidx.compiler.validate import discover
from capidx.compiler.validate.load import SourceFile, load_file
from capidx.compiler.validate.reporters import problem_text
from capidx.compiler.validate.run import ValidateArgs, effective_config
from capidx.compiler.verify.content import Page, parse_page
from capidx.compiler.verify.fetch import FetchJob, FetchResult, FetchRun, FetchSettings, Resolver, resolve
from capidx.compiler.verify.rewrite import FileEdit, RewriteError, changes_for, edit_file, write_file
from capidx.compiler.verify.sources import Source, document_sources
from capidx.compiler.verify.verdicts import GRANULARITIES, Verdict, is_text, judge
from capidx.schema.wording import suggest

FAIL_ON = ("broken", "stale", "never")


class VerifyUsageError(UsageError):
    """Nothing could be verified: a bad option, configuration or input file (exit 2)."""


@dataclass(frozen=True)
class VerifyOptions:
    cwd: Path
    paths: tuple[Path, ...] = ()
    config_file: Path | None = None
    agents: Path | None = None
    agent: str | None = None
    write: bool = False
    fix_redirects: bool = False
    fail_on: str = "broken"
    settings: FetchSettings = field(default_factory=FetchSettings)
    today: date | None = None


@dataclass(frozen=True)
class VerifyResult:
    verdicts: tuple[Verdict, ...]
    fetched: dict[str, FetchResult]
    edits: tuple[FileEdit, ...]
    written: bool
    problems: tuple[str, ...] = ()  # files that could not be edited

    def count(self, outcome: str) -> int:
        return sum(1 for verdict in self.verdicts if verdict.outcome == outcome)


def exit_code(result: VerifyResult, fail_on: str) -> int:
    """0 or 1 by `--fail-on`; 2 when a file could not be edited.

    `broken`: 1 when a source's page could not be had (HTTP error, network failure, refused address...).
    `stale`: 1 when any source did not verify (broken, or the page no longer supports it, or its
    content could not be checked): the catalog holds a claim nobody can currently back.
    `never`: 0 whatever the sources say.
    """
    if result.problems:
        return int(ExitCode.USAGE)
    if fail_on == "broken" and result.count("broken"):
        return int(ExitCode.INVALID)
    if fail_on == "stale" and any(not verdict.passed for verdict in result.verdicts):
        return int(ExitCode.INVALID)
    return int(ExitCode.OK)


def load_sources(options: VerifyOptions) -> tuple[list[SourceFile], list[Source]]:
    """The documents to verify and their sources; `VerifyUsageError` when any cannot be read."""
    args = ValidateArgs(cwd=options.cwd, paths=options.paths, config_file=options.config_file, agents=options.agents)
    config, problems = effective_config(args)
    if problems:
        raise VerifyUsageError([problem_text(problem, options.cwd) for problem in problems])
    inputs = discover.collect(config, [options.cwd / path for path in options.paths])
    if inputs.problems:
        raise VerifyUsageError([problem_text(problem, options.cwd) for problem in inputs.problems])
    paths = list(inputs.documents)
    if options.agent is not None:
        paths = [path for path in paths if discover.agent_id(path) == options.agent]
        if not paths:
            ids = sorted(discover.agent_id(path) for path in inputs.documents)
            meant = _meant_agent(options.agent, ids)
            guess = f"did you mean {meant!r}? " if meant else ""
            raise VerifyUsageError(
                f"no capability document for agent {options.agent!r} ({guess}agents: {', '.join(ids) or 'none'})"
            )
    files: list[SourceFile] = []
    failures: list[str] = []
    for path in paths:
        source, problems = load_file(path)
        failures += [problem_text(problem, options.cwd) for problem in problems if problem.is_error]
        if source is not None and not problems:
            files.append(source)
    if failures:
        raise VerifyUsageError([*failures, "fix these first (capidx validate shows every problem)"])
    sources = [_located(source, found) for source in files for found in _sources_of(source)]
    return files, sources


def _meant_agent(given: str, ids: list[str]) -> str | None:
    """The agent id `given` most likely means: the only one it begins (`acme` for `acme-coder`), else one in another
    case or one edit away (`wording.suggest`, as a misspelled key is told)."""
    folded = given.casefold()
    starting = [agent for agent in ids if folded and agent.casefold().startswith(folded)]
    return starting[0] if len(starting) == 1 else suggest(given, ids, loose=False)


def _sources_of(source: SourceFile) -> list[Source]:
    return document_sources(source.path, discover.agent_id(source.path), source.data)


def _located(file: SourceFile, source: Source) -> Source:
    line, col = file.source_map.locate((*source.parts, "url")) or (None, None)
    return replace(source, line=line, col=col)


def fetch_jobs(sources: Iterable[Source]) -> list[FetchJob]:
    """One job per page (a URL without its fragment), in first-cited order; the body only when needed."""
    need: dict[str, bool] = {}
    for source in sources:
        wanted = source.granularity in GRANULARITIES or bool(source.fragment)
        need[source.page_url] = need.get(source.page_url, False) or wanted
    return [FetchJob(url, body) for url, body in need.items()]


def pages(fetched: dict[str, FetchResult]) -> dict[str, Page | None]:
    """The readable text of every page that answered 2xx with a text body."""
    return {
        url: parse_page(result.body, result.content_type)
        if result.outcome == "ok" and result.body is not None and is_text(result.content_type)
        else None
        for url, result in fetched.items()
    }


def execute(
    options: VerifyOptions,
    *,
    on_start: Callable[[int], None] = lambda _: None,
    on_done: Callable[[FetchResult], None] = lambda _: None,
    resolver: Resolver = resolve,
) -> VerifyResult:
    """Verify every source; with `options.write`, record the results in the files."""
    files, sources = load_sources(options)
    jobs = fetch_jobs(sources)
    on_start(len(jobs))
    run = FetchRun(options.settings, resolver=resolver)
    run.run(jobs, on_done)
    texts = pages(run.results)
    verdicts = tuple(judge(source, run.results[source.page_url], texts[source.page_url]) for source in sources)
    edits, problems = _edit(files, verdicts, options)
    return VerifyResult(verdicts, run.results, tuple(edits), options.write, tuple(problems))


def _edit(
    files: list[SourceFile], verdicts: tuple[Verdict, ...], options: VerifyOptions
) -> tuple[list[FileEdit], list[str]]:
    today = options.today or date.today()
    edits: list[FileEdit] = []
    problems: list[str] = []
    for file in files:
        changes = [
            change
            for verdict in verdicts
            if verdict.source.path == file.path
            for change in changes_for(verdict, today, fix_redirects=options.fix_redirects)
        ]
        try:
            edit = edit_file(file, changes)
            if edit.changed and options.write:
                write_file(file, edit)
        except RewriteError as exc:
            shown = file.path.relative_to(options.cwd) if file.path.is_relative_to(options.cwd) else file.path
            problems.append(f"{shown}: not edited: {exc}")
            continue
        if edit.changed:
            edits.append(edit)
    return edits, problems
