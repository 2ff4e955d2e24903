"""`capidx inject`, run: read the build's memory artifact, check every file named, then write or report.

Every file is read and checked before any is written, so a bad one (markers that do not pair, a path out of
the project, bytes that are not UTF-8) leaves all of them untouched; and every new text is written to a
temporary file before any is renamed into place, so one that cannot be written (a full disk) leaves all of
them untouched too. A file already current is not written, and a block capidx did not write as it is (one
quoted by hand, or edited since: `block.edited`) is replaced only with `force`.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capidx.compiler.diagnostics import ExitCode, visible
from capidx.compiler.inject import block
from capidx.compiler.inject.target import InjectError, Input, InputIndex, Target, open_target, write_all
from capidx.compiler.report.artifact_reader import ArtifactUnreadable, read_listed
from capidx.compiler.report.manifest_reader import load_manifest
from capidx.schema import builddir
from capidx.schema.pathkind import PathKind, path_kind
from capidx.schema.printable import unlike_command
from capidx.schema.realpath import real_path

MEMORY_KIND = "memory"


@dataclass(frozen=True)
class InjectOptions:
    """Parsed `capidx inject` options."""

    files: tuple[Path, ...]
    build: Path  # the build directory (or its manifest.json)
    project: Path  # the folder of the capidx.yaml in force, else the working directory
    cwd: Path
    check: bool = False
    force: bool = False  # replace a block edited by hand, or one capidx did not write
    project_out: Path | None = None  # the project's own build directory (paths.out), never written either
    # What the project's build reads (`inputs.build_inputs`), never written.
    inputs: tuple[Input, ...] = ()
    has_catalog: bool = True  # the project has a catalog folder (paths.agents): a build of it is made here
    # Repeated in the commands inject suggests, so that each works pasted in the working folder: `--build` as given,
    # and the capidx.yaml in force when it is not the working folder's own (`--config` as given, else as found).
    given_build: str | None = None
    given_config: str | None = None
    # The capidx.yaml of a folder above, none being in force nor --build given: named if `build` holds no build.
    above: Path | None = None
    # The top of the git work tree the project's folder is below (None: at its top, or in none): where agents read
    # memory files, so the files written may be anywhere under it (`bound`).
    top: Path | None = None

    @property
    def bound(self) -> Path:
        """The folder every memory file written must be in: the work tree's top above the project, else the project."""
        return self.project if self.top is None else self.top


@dataclass(frozen=True)
class Memory:
    text: str
    sha256: str
    folder: Path  # the build it was read from


def _own_build(options: InjectOptions, memory: Memory) -> bool:
    """Whether the build read is this project's: it has a catalog, or the build is inside it. Else the build was
    made from another project's catalog (one kept in its own repository, injected into an app's): the build files
    the block names for details (`build/agents/…`) are that project's, and `capidx build` here would not make it."""
    inside = Path(real_path(memory.folder)).is_relative_to(real_path(options.project))
    return options.has_catalog or inside


def _shown(options: InjectOptions, memory: Memory) -> str:
    """The build read, as `--build` gives it, else where paths.out found it."""
    return options.given_build or str(memory.folder)


@dataclass(frozen=True)
class Plan:
    """One file: what it should hold, why it is not current (None: it is) and what writing it does."""

    target: Target
    new: str
    stale: str | None
    done: str
    edited: bool = False  # its block holds text capidx did not write: replaced only with --force


def _command(*words: str) -> str:
    return " ".join(["capidx", *map(shlex.quote, words)])


def _again(options: InjectOptions, command: str, *words: str, out: bool = True) -> str:
    """`capidx build` or `capidx inject` with the `--build` given (for a build: `--out`; not with `out` false) and the
    capidx.yaml in force (`--config`), as pasted in the working folder."""
    config = ("--config", options.given_config) if options.given_config else ()
    given = options.given_build if out else None
    build = () if given is None else ("--out", given) if command == "build" else ("--build", given)
    return _command(command, *build, *config, *words)


def execute(options: InjectOptions, echo: Callable[[str], Any] = print) -> int:
    """Check (with `check`) or update every file; return the exit code. `InjectError` (exit 2) names every bad
    input at once, before anything is written."""
    say = _printing(echo)
    memory = load_memory(
        options.build, given=options.given_build is not None, above=options.above, config=options.given_config
    )
    plans, again = _plan_all(options, memory)
    same = [f"{name}: the same file as {first}, done once" for name, first in again.items()]
    if options.check:
        code = _report(options, plans, say, other=None if _own_build(options, memory) else _shown(options, memory))
        for line in same:
            say(line)
        return code
    write_all([(plan.target, plan.new.encode("utf-8")) for plan in plans if plan.stale is not None])
    for line in [f"{plan.target.shown}: {plan.done}" for plan in plans] + same:
        say(line)
    out = options.project_out
    if not _own_build(options, memory):
        say(
            f"note: {_shown(options, memory)} is the build of a catalog outside this project, so the build"
            " files the block names for details are not here unless a copy is kept (docs/inject.md): agents here get"
            " the details from the capidx MCP server"
        )
    # the block sends a model to files not there yet (of a folder this user may not look at, nothing can be said)
    elif out is not None and path_kind(options.cwd / out) in (PathKind.NOTHING, PathKind.OTHER):
        seen = out if options.top is None else Path(real_path(options.cwd / out))  # the top is a real path
        shown = seen.relative_to(options.bound) if seen.is_relative_to(options.bound) else seen
        say(
            f"note: the block points at {shown.as_posix()}/ (paths.out), which does not exist yet: run "
            f"`{_again(options, 'build', out=False)}`"
        )
    return int(ExitCode.OK)


def _printing(echo: Callable[[str], Any]) -> Callable[[str], Any]:
    """`echo` of one line, `visible`: the lines name the files given, which pre-commit takes from a pull request."""
    return lambda line: echo(visible(line))


def _report(options: InjectOptions, plans: list[Plan], echo: Callable[[str], Any], *, other: str | None) -> int:
    """`--check`: one verdict a file, then the commands that make every file current; an edited block's
    command says `--force`, as a plain `capidx inject` refuses to replace it. Another project's build (`other`, as
    shown) is rebuilt there: this project has no catalog for a `capidx build` here."""
    for plan in plans:
        echo(f"{plan.target.shown}: {plan.stale or 'current'}")
    stale = [plan.target.shown for plan in plans if plan.stale and not plan.edited]
    edited = [plan.target.shown for plan in plans if plan.edited]
    if stale:
        inject = _again(options, "inject", *stale)
        build = _again(options, "build") if other is None else f"rebuild {other} in its catalog's project"
        echo(f"to update: {build} (if the catalog changed), then {inject}")
    if edited:
        force = _again(options, "inject", "--force", *edited)
        echo(f"to replace the blocks edited by hand, losing their text: {force}")
    return int(ExitCode.INVALID if stale or edited else ExitCode.OK)


def _plan_all(options: InjectOptions, memory: Memory) -> tuple[list[Plan], dict[str, str]]:
    """A plan for each file named, each file once, and the names of a file named again (through a link)."""
    plans: dict[Path, Plan] = {}
    again: dict[str, str] = {}  # a name -> the name of the same file planned first
    problems = []
    inputs = InputIndex.of(options.inputs)  # what the build reads, as the files are now: once for all files named
    for name in options.files:
        try:
            target = open_target(
                name, options.bound, options.cwd, options.build, options.project_out, inputs, options.top
            )
            if target.path not in plans:  # the same file twice (or through a link) is done once
                plans[target.path] = plan = _plan(target, memory)
                if plan.edited and not (options.check or options.force):
                    problems.append(_refusal(options, plan))
            elif target.shown != plans[target.path].target.shown:  # said, not passed over: 'AGENTS.md: … CLAUDE.md'
                again[target.shown] = plans[target.path].target.shown
        except InjectError as error:
            problems.append(error.message)
        except block.MarkerError as error:
            problems.append(f"{unlike_command(str(name))}: {error}")
    if problems:
        raise InjectError([*problems, "nothing written"])
    return list(plans.values()), again


def _refusal(options: InjectOptions, plan: Plan) -> str:
    """Why an edited block is kept, and the two ways on: keep its text elsewhere, or replace it."""
    return (
        f"{plan.target.shown}: {plan.stale}. To keep that text, move it out of the block (to quote the markers, "
        f"put them within a line of text); to replace the block with the build's memory, losing that text: "
        f"{_again(options, 'inject', '--force', plan.target.shown)}"
    )


def _plan(target: Target, memory: Memory) -> Plan:
    found = block.find_block(target.text) if target.text else None  # the file's markers, read once
    rendered = block.expected_block(target.text, memory.text, memory.sha256)
    stale = block.staleness(target.text, found, rendered, memory.sha256)
    if stale is None:
        return Plan(target, "", None, "unchanged (the block is current)")
    edited = target.text is not None and found is not None and block.edited(target.text, found) is not None
    done = "created" if target.text is None else "block updated" if found else "block added"
    if edited:  # only planned with --force (`_plan_all` refuses it otherwise): say what went
        done = "block replaced (--force: the text that was in it is gone)"
    return Plan(target, block.splice(target.text, found, rendered), stale, done, edited)


def load_memory(location: Path, *, given: bool = False, above: Path | None = None, config: str | None = None) -> Memory:
    """The build's memory artifact, checked against its sha256 in the manifest (`given`: --build named it; `above`:
    the capidx.yaml of a folder above, named when there is no build; `config`: the `--config` a `capidx build` it
    suggests needs; `load_manifest`)."""
    manifest = load_manifest(location, given=given, command="inject", above=above, config=config)
    row = _memory_row(manifest.artifacts)
    if row is None:
        raise InjectError(
            f"{manifest.path}: the build has no {MEMORY_KIND} artifact (made by an older capidx?): run `capidx build`"
        )
    path = manifest.path.parent / row["path"]
    try:  # as `capidx report` and `capidx serve` read a build: a regular file inside it, no more than its row lists
        (data,) = read_listed(path, Path(real_path(manifest.path.parent)), [row], str(path))
    except ArtifactUnreadable as error:
        raise InjectError(f"{error}; {builddir.REBUILD}") from None
    if hashlib.sha256(data).hexdigest() != row["sha256"]:
        raise InjectError(f"{path}: does not match its sha256 in {builddir.MANIFEST}; {builddir.REBUILD}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InjectError(f"{path}: not UTF-8; {builddir.REBUILD}") from None
    if line := block.marker_line(text):  # it would end the block early on the next run: the catalog's text is refused
        raise InjectError(f"{path}:{line}: a line starting with a capidx marker; remove it from the catalog")
    return Memory(text, row["sha256"], manifest.path.parent)


def _memory_row(rows: Any) -> Mapping[str, Any] | None:
    return next((row for row in rows if row["kind"] == MEMORY_KIND), None)
