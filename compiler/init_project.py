"""`capidx init`: scaffold a catalog that validates, builds and serves at once, or adopt an existing one.

The files come from `compiler/scaffold/` (package data, so a wheel has them too). The CI workflow and
the pre-commit configuration are the ones docs/ci.md shows (`docs/examples/`, kept identical by a test):
a maintainer who reads the docs finds the same files in the new repository.

init never replaces or deletes a file, `--force` or not: a maintainer's catalog, alias table and
configuration are theirs. It writes only what is missing, and says per file what it kept and why:
- the project files (capidx.yaml, the pre-commit configuration, the workflow): a file that exists with
  other bytes than the scaffold's stops everything (named; nothing written) unless `--force`, which writes
  the missing files around it and keeps it byte for byte. One with the scaffold's bytes is already done.
- the example agent and the sample alias table are written only into a new catalog: never when the
  catalog folder holds anything, nor next to a capidx.yaml of the maintainer's (whose catalog is theirs).
- `.gitignore`: only one line is ever appended, the build directory: `build/`, or the `paths.out` of a
  capidx.yaml of the maintainer's (not appended, and said, when that file cannot be read).
- a folder below the top of a git work tree (`capidx init tools/catalog` in a monorepo): the workflow and the
  pre-commit configuration go to the top, the only place GitHub Actions and pre-commit read them, running capidx with
  `--config tools/catalog/capidx.yaml` from there (so annotations name files as the repository does); in the folder
  they would never run. A folder name that cannot be written into them as it is keeps them in the folder, and says so.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from capidx.compiler.config import ALIAS_FILE_NAMES, Config, load_config, relative_inside
from capidx.compiler.diagnostics import Diagnostic, plural, visible
from capidx.compiler.errors import UsageError
from capidx.compiler.files import FolderUnreadable, read_at_most, write_whole
from capidx.compiler.validate.discover import catalog_documents
from capidx.compiler.worktree import top_above
from capidx.schema.pathkind import SEARCH_PERMISSION
from capidx.schema.realpath import real_path

EXAMPLE_AGENT = "example-agent"
CATALOG = "agents"  # the default paths.agents, which the scaffold's capidx.yaml names
CONFIG = "capidx.yaml"

# (file in compiler/scaffold/, where it goes in the project): written when missing, never replaced.
PROJECT_FILES: tuple[tuple[str, str], ...] = (
    ("capidx.yaml", CONFIG),
    ("pre-commit-config.yaml", ".pre-commit-config.yaml"),
    ("workflow.yml", ".github/workflows/capidx.yml"),
)
# The example catalog: written only into an empty (or missing) catalog folder, all of it or none.
EXAMPLE_FILES: tuple[tuple[str, str], ...] = (
    ("current.json", f"{CATALOG}/{EXAMPLE_AGENT}/capabilities/current.json"),
    ("aliases.json", f"{CATALOG}/aliases.json"),
)
SCAFFOLD = PROJECT_FILES[:1] + EXAMPLE_FILES + PROJECT_FILES[1:]  # everything a new catalog gets, in order

TRY_IT = "capidx validate && capidx build && capidx serve"
EXAMPLE_STEP = f"""\
Rename {CATALOG}/{EXAMPLE_AGENT}/ to your agent's id and replace its example values; every
     source url is a placeholder (example.com: validate warns, placeholder-url, until you replace
     it) that must point to the page documenting the claim.
     {CATALOG}/aliases.json maps phrases to the example's capability names: keep the entries
     your capabilities have (validate names each one whose capability is gone)."""
CI_STEP = """\
In {files} replace OWNER (the account that
     hosts capidx) and COMMIT (a full commit sha or a release tag){then}."""
HOOK_STEP = """\
{pre_commit} is yours and was kept: add capidx's hook under its `repos:` (replace
     OWNER and COMMIT as the comments say), then `pre-commit install`:"""
WORKFLOW_STEP = """\
{workflow} is yours and was kept: the scaffold's workflow is docs/ci.md's{config}."""
GITIGNORE = ".gitignore"
IGNORED = "build/"  # the default paths.out: output, never committed
_MODE = 0o644  # of a file capidx init creates, whatever the umask
# A paths.out written into .gitignore as it is: no pattern characters, no line break, no leading `#` or `!`; also
# a catalog folder written into the CI files at the top of a work tree (a YAML plain scalar, a regex once escaped).
_PLAIN_OUT = re.compile(r"[\w.-]+(?:/[\w.-]+)*")
_MAX_GITIGNORE = 1 << 20  # a larger .gitignore (or pre-commit config of yours) is not read: the hint says what to add
_MAX_COMPARED = 1 << 20  # a project file larger than this is not the scaffold's (which is a few KiB)

SAME = "same as the scaffold"
THEIRS = "yours (not the scaffold's bytes), left byte for byte"
LINK = "a link: left alone, not followed"
FOLDER = "a folder"


class InitError(UsageError):
    """A project file of the maintainer's is in the way (without --force), or a write fails: exit 2."""


@dataclass(frozen=True)
class Scaffolded:
    root: Path
    written: tuple[str, ...]  # relative POSIX paths, in SCAFFOLD order; never a file that was there
    kept: tuple[tuple[str, str], ...]  # (path, why it was left as it is)
    gitignore: str = "kept"  # created, updated (`ignored` appended), kept (nothing to add) or skipped
    no_example: str = ""  # why the example agent and sample aliases were not written ("": they were)
    no_catalog: str = ""  # the catalog the maintainer's capidx.yaml names, when it is not there ("": it is)
    ignored: str = IGNORED  # the build directory's .gitignore line ("": not known, see `out_unknown`)
    out_unknown: str = ""  # why the build directory is not known, so .gitignore was left alone
    ci_files: tuple[str, ...] = tuple(target for _source, target in PROJECT_FILES[1:])  # where they go, from `root`
    ci_note: str = ""  # below the top of a work tree: where the CI files went and why, or why they stay in `root`
    hook: str = ""  # the scaffold's pre-commit entry (under `repos:`), for a pre-commit configuration of yours
    config_flag: str = ""  # what each capidx command of the CI files is given (`--config tools/catalog/capidx.yaml`)


def scaffold(root: Path, *, force: bool = False) -> Scaffolded:
    """Write what is missing of the scaffold under `root` (created if missing), never replacing a file; the CI files
    at the top of the git work tree `root` is in, when it is below it (`_placed`).

    Every check runs before the first write, so a refusal leaves nothing behind."""
    _check_names(root)
    placed, ci_note, flag = _placed(root)
    project = [(source, placed[source][0]) for source, _target in PROJECT_FILES]
    present = {target: why for source, target in project if (why := _kept_why(_at(root, target), placed[source][1]))}
    folders = [target for target, why in present.items() if why == FOLDER]
    if folders:
        raise InitError(f"{root}: {', '.join(folders)} is a folder, not a file; nothing written (move it away)")
    theirs = [target for target, why in present.items() if why != SAME]
    if theirs and not force:
        raise InitError(
            f"{root}: {', '.join(theirs)} already there, not as the scaffold has it; nothing written (--force"
            " writes only the missing files and keeps these byte for byte: init never replaces a file)"
        )
    no_example = _why_no_example(root, config_is_theirs=CONFIG in theirs)
    loaded = load_config(root / CONFIG, root) if CONFIG in theirs else None  # theirs, read once as capidx reads it
    no_catalog = _their_missing_catalog(root, *loaded) if loaded else ""
    missing = {target for _source, target in project if target not in present}
    missing |= set() if no_example else {target for _source, target in EXAMPLE_FILES}
    planned = [(source, placed[source]) for source, _target in SCAFFOLD if placed[source][0] in missing]
    if blocked := _files_in_the_way(root, [target for _source, (target, _data) in planned]):
        raise InitError(
            f"{root}: {blocked} is a file or a link where a folder goes; nothing written (make it a folder, or move it)"
        )
    ignored, out_unknown = _build_line(root, present.get(CONFIG), loaded)
    done: list[str] = []
    try:
        for _source, (target, data) in planned:
            write_whole(_at(root, target), data, _MODE)  # whole or not at all
            done.append(target)
        gitignore = _ignore_build(root / GITIGNORE, ignored) if ignored else "skipped" if out_unknown else "kept"
    except OSError as exc:
        file = f"{exc.filename}: " if exc.filename else ""  # which file, when the error says
        written = f"; written before it: {', '.join(done)}" if done else "; nothing written"
        raise InitError(f"cannot write the scaffold under {root}: {file}{exc.strerror or exc}{written}") from None
    ci_files = tuple(target for _source, target in project[1:])
    kept_at_top = [target for target in ci_files if target.startswith("../") and present.get(target, SAME) != SAME]
    if kept_at_top:  # yours (another catalog's too), or a link: the --config of the note is not in them
        ci_note += f"; not those kept ({', '.join(kept_at_top)}) until each of their capidx commands has it"
    hook = placed["pre-commit-config.yaml"][1].decode("utf-8").partition("\nrepos:\n")[2]
    pre_commit = ci_files[0]
    if present.get(pre_commit) == THEIRS:  # pasted under their `repos:`, in line with their entries
        hook = _indented_as_theirs(_at(root, pre_commit), hook)
    return Scaffolded(
        root, tuple(done), tuple(present.items()), gitignore, no_example, no_catalog, ignored, out_unknown,
        ci_files, ci_note, hook, flag,
    )  # fmt: skip


def _placed(root: Path) -> tuple[dict[str, tuple[str, bytes]], str, str]:
    """Each scaffold file (by its name in compiler/scaffold/): where it goes from `root`, and what it holds. Below the
    top of a git work tree, the CI files go to that top, adapted to the catalog's folder (`_for_folder`); the note
    says so, or why they stay in `root` ("": `root` is no work tree's folder below its top); and the `--config` their
    capidx commands are given ("": none)."""
    placed = {source: (target, _bundled(source)) for source, target in SCAFFOLD}
    real = Path(real_path(root))  # as git sees it: `init ../catalog`'s `..` taken away, links followed
    top = top_above(real)
    if top is None:
        return placed, "", ""
    folder = real.relative_to(top).as_posix()
    if not _PLAIN_OUT.fullmatch(folder):
        why = (
            f"the CI files stay here, where nothing reads them: {top} is the top of the repository, the only place "
            f"GitHub Actions and pre-commit read them, and {folder!r} cannot be written into them as it is; move them "
            f"there, adding `{_config_flag('<folder>')}` to each capidx command (docs/ci.md)"
        )
        return placed, why, ""
    up = os.path.relpath(top, real)
    for source, target in PROJECT_FILES[1:]:
        placed[source] = (f"{up}/{target}", _for_folder(source, folder))
    note = (
        f"the CI files are at the top of the repository, {top} ({up} from the catalog), the only place GitHub Actions "
        f"and pre-commit read them; they run capidx with {_config_flag(folder)}"
    )
    return placed, note, _config_flag(folder)


def _at(root: Path, target: str) -> Path:
    """The file `target` names from `root`; one at the top of the work tree (`../../.github/…`) from the real folder
    `_placed` found that top from, its `..` taken away by name, so that it is looked at where it is even before `root`
    is made (by the first write): through a folder not there yet, a file of the top looked missing, and was replaced,
    or a linked `.github` followed."""
    if not target.startswith("../"):
        return root / target
    return Path(os.path.normpath(os.path.join(real_path(root), target)))


def _check_names(root: Path) -> None:
    """Refuse a folder name longer than the file system takes (`PC_NAME_MAX` of the nearest folder that is there: 255
    bytes on most). Where a folder above it is missing too, looking at the project's files says "not found", and the
    first write made the folders above it before failing, leaving them behind."""
    there = next((folder for folder in (root, *root.parents) if os.path.isdir(folder)), Path("."))
    try:
        limit = os.pathconf(there, "PC_NAME_MAX")
    except (OSError, ValueError):  # no such limit to ask for here: the usual one
        limit = 255
    for name in root.parts:
        if len(os.fsencode(name)) > limit:
            raise InitError(
                f"{root}: a folder name is longer than the {limit} bytes a name may have here; nothing written"
            )


def _kept_why(path: Path, data: bytes) -> str | None:
    """Why the project file at `path` is left as it is (None: it is missing, so init writes it). A folder
    comes back as FOLDER: capidx cannot work with one there, and init moves nothing."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # a file where a folder should be: _files_in_the_way says so
        return None
    except PermissionError:  # a folder on the way this user may not search: nothing can be checked, nor written
        raise InitError(
            f"{path.parent}: cannot be read: permission denied; nothing written ({SEARCH_PERMISSION})"
        ) from None
    except OSError as exc:  # a name too long for the file system, a loop of links on the way: nothing can be written
        raise InitError(f"{path}: {exc.strerror or exc}; nothing written") from None
    if stat.S_ISLNK(info.st_mode):
        return LINK
    if stat.S_ISDIR(info.st_mode):
        return FOLDER
    return SAME if stat.S_ISREG(info.st_mode) and _holds(path, data) else THEIRS


def _files_in_the_way(root: Path, targets: list[str]) -> str:
    """The folders the `targets` go into that are something else (`.github` a file) or a symbolic link (a write
    through it would land outside the project), as "a, b" ("": none): found before the first write, which would
    otherwise fail, or write elsewhere, after writing the files before it."""
    folders = {parent for target in targets for parent in Path(target).parents if parent.name not in ("", "..")}
    in_the_way = [
        folder.as_posix()
        for folder in folders
        if os.path.islink(path := _at(root, folder.as_posix())) or (os.path.lexists(path) and not path.is_dir())
    ]
    return ", ".join(sorted(in_the_way))


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file at `path` holds exactly `data` (one that cannot be read does not: it is kept)."""
    try:
        return read_at_most(path, _MAX_COMPARED) == data
    except OSError:
        return False


def _their_missing_catalog(root: Path, config: Config, problems: list[Diagnostic]) -> str:
    """The catalog folder the maintainer's capidx.yaml names, as shown from `root`, when there is none yet: the next
    steps cannot run on it ("": it is there, or the file does not load, which validate will say)."""
    if problems or os.path.lexists(config.agents):
        return ""
    folder = Path(os.path.abspath(config.agents))
    return folder.relative_to(root.absolute()).as_posix() if folder.is_relative_to(root.absolute()) else str(folder)


def _why_no_example(root: Path, *, config_is_theirs: bool) -> str:
    """Why the example agent and sample aliases stay out ("": they go in). They would be an agent more in
    the next build, answering questions about "Example Agent", so they go only into a catalog that is new."""
    if config_is_theirs:
        return f"no example agent or sample aliases added: {CONFIG} is yours, and so is the catalog it names"
    folder = root / CATALOG
    if not os.path.lexists(folder):
        return ""
    if folder.is_symlink() or not folder.is_dir():
        return f"no example agent or sample aliases added: {CATALOG} is there and is not a plain folder"
    try:
        names = [entry.name for entry in os.scandir(folder) if not entry.name.startswith(".")]
    except OSError as exc:
        return f"no example agent or sample aliases added: {CATALOG}/ cannot be listed ({exc.strerror or exc})"
    if not names:
        return ""
    return f"no example agent or sample aliases added: {CATALOG}/ already holds {_contents(folder, names)}"


def _contents(folder: Path, names: list[str]) -> str:
    """What the catalog folder holds, for the line saying why no example went in: "4 agents and an alias table"; its
    entries counted when a folder in it cannot be listed (validate says which), as which are agents cannot be told."""
    try:
        agents = len({document.parent.parent for document in catalog_documents(folder)})  # what validate reads
    except FolderUnreadable:
        return plural(len(names), "entry", "entries")
    parts = [plural(agents, "agent")] if agents else []
    parts += ["an alias table"] if any(name in ALIAS_FILE_NAMES for name in names) else []
    return " and ".join(parts) or plural(len(names), "other entry", "other entries")


def _build_line(root: Path, config_why: str | None, loaded: tuple[Config, list[Diagnostic]] | None) -> tuple[str, str]:
    """The .gitignore line of the project's build directory, or "" and why it is not known ("" again: no line is
    needed, the build is outside the project). The scaffold's capidx.yaml builds into build/; a capidx.yaml of the
    maintainer's names its own `paths.out`, read as `capidx build` reads it (their build/ may be tracked)."""
    if config_why in (None, SAME):
        return IGNORED, ""
    if config_why != THEIRS:
        return "", f"{CONFIG} is a link (not followed), so its paths.out is not known"
    assert loaded is not None  # their file: scaffold read it
    config, problems = loaded
    if problems:
        return "", f"{CONFIG} cannot be read (`capidx validate` says why), so its paths.out is not known"
    relative = relative_inside(root, config.out)
    if relative is None:
        return "", ""  # outside the project: nothing of it to ignore
    if relative == ".":
        return "", ""  # the project itself: build refuses it
    if not _PLAIN_OUT.fullmatch(relative):
        return "", f"its paths.out ({relative!r}) is not written into .gitignore as a pattern"
    return f"{relative}/", ""


def _ignore_build(path: Path, ignored: str) -> str:
    """Make `path` (.gitignore) ignore the build directory (line `ignored`): create it, or append one line to it,
    keeping every other line byte for byte. A link, a folder or a file too large to read is left alone
    ("skipped")."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        write_whole(path, f"{ignored}\n".encode(), _MODE)
        return "created"
    if not stat.S_ISREG(info.st_mode) or (data := read_at_most(path, _MAX_GITIGNORE)) is None:
        return "skipped"
    lines = data.decode("utf-8", "replace").splitlines()
    name = ignored.removesuffix("/")
    forms = {name, f"{name}/", f"/{name}", f"/{name}/"}  # lines that already ignore it
    if any(line.strip().removeprefix("!") in forms for line in lines):  # "!build/": theirs to decide
        return "kept"
    separator = b"" if not data or data.endswith(b"\n") else b"\n"
    write_whole(path, data + separator + f"{ignored}\n".encode(), info.st_mode & 0o777)
    return "updated"


def _indented_as_theirs(path: Path, hook: str) -> str:
    """The scaffold's entry (its `- repo:` two spaces in) with its `-` where the entries of the `repos:` of the
    pre-commit configuration at `path` have theirs (`pre-commit sample-config` writes them at the line's start); as
    it is when that file cannot be read or has no entry. Only a regular file is read, opened without following a link
    or blocking: a FIFO kept as yours (`_kept_why`) would have held init for ever once it had written the scaffold."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return hook
    with os.fdopen(descriptor, "rb") as stream:
        try:
            data = stream.read(_MAX_GITIGNORE + 1) if stat.S_ISREG(os.fstat(descriptor).st_mode) else b""
        except OSError:
            return hook
    if len(data) > _MAX_GITIGNORE:
        return hook
    found = re.search(rb"^repos:[ \t]*(?:#.*)?\r?\n(?:[ \t]*(?:#.*)?\r?\n)*( *)- ", data, re.MULTILINE)
    if found is None:
        return hook
    shift = len(found.group(1)) - 2
    lines = hook.splitlines(keepends=True)
    return "".join(" " * shift + line if shift >= 0 else line[-shift:] for line in lines)


def _config_flag(folder: str) -> str:
    """What each capidx command of the CI files at the top is given for a catalog in `folder`."""
    return f"--config {folder}/{CONFIG}"


def _bundled(name: str) -> bytes:
    return resources.files("capidx.compiler").joinpath("scaffold", name).read_bytes()


def _for_folder(source: str, folder: str) -> bytes:
    """A CI file of the scaffold for the top of a work tree whose catalog is in `folder` (a `_PLAIN_OUT` path): each
    capidx command that reads the catalog from a checkout's top gets `--config <folder>/capidx.yaml`, and the
    pre-commit hook checks only the catalog's files (a monorepo has other `aliases.json`)."""
    config = _config_flag(folder)
    if source == "workflow.yml":
        edits = [
            ("capidx validate --format", f"capidx validate {config} --format", 1),
            ("capidx build --out", f"capidx build {config} --out", 2),
            (
                'capidx report --build ../out/head "$@" --format github',
                f'capidx report {config} --build ../out/head "$@" --format github',
                1,
            ),
        ]
    else:
        top = rf"^{re.escape(folder)}/"
        files = rf"{top}(.*/)?(capabilities/current\.(json|ya?ml)|aliases\.(json|ya?ml))$|{top}{re.escape(CONFIG)}$"
        hook = "      - id: capidx-validate\n"
        edits = [(hook, f"{hook}        args: [--config, {folder}/{CONFIG}]\n        files: {files}\n", 1)]
    text = _bundled(source).decode("utf-8")
    for old, new, count in edits:
        if text.count(old) != count:  # the scaffold changed: these edits must follow it (a test runs them)
            raise AssertionError(f"compiler/scaffold/{source}: {old!r} is there {text.count(old)} times, not {count}")
        text = text.replace(old, new)
    heading = f"# The catalog is in {folder}/: capidx runs from here with {config}.\n"
    return (heading + text).encode("utf-8")


def _gitignore_lines(result: Scaffolded) -> list[str]:
    """What init did to .gitignore, when it did something."""
    if result.gitignore == "created":
        return [f"created {GITIGNORE} ({result.ignored})"]
    return [f"added {result.ignored} to {GITIGNORE}"] if result.gitignore == "updated" else []


def summary(result: Scaffolded, shown_root: str) -> Sequence[str]:
    """What `capidx init` prints: each file written or kept (and why), then what to do next. What comes from the
    project (the paths its capidx.yaml names, why a file of it was kept) is printed `visible`: the project may be a
    fork's, whose line break would start a line of its own; the steps' own line breaks stay."""
    result = _printable(result)
    lines = [f"created {target}" for target in result.written]
    lines += [f"kept {target}: {why}" for target, why in result.kept]
    lines += [result.no_example] if result.no_example else []
    lines += _gitignore_lines(result)
    lines += [result.ci_note] if result.ci_note else []
    return [f"capidx init: a catalog in {result.root}", *lines, "", *_next_steps(result, visible(shown_root))]


def _printable(result: Scaffolded) -> Scaffolded:
    """`result` with every text that names or quotes the project's files `visible`."""
    return replace(
        result,
        root=Path(visible(str(result.root))),
        written=tuple(visible(target) for target in result.written),
        kept=tuple((visible(target), visible(why)) for target, why in result.kept),
        no_example=visible(result.no_example),
        no_catalog=visible(result.no_catalog),
        ignored=visible(result.ignored),
        out_unknown=visible(result.out_unknown),
        ci_files=tuple(visible(target) for target in result.ci_files),
        ci_note=visible(result.ci_note),
    )


def _next_steps(result: Scaffolded, shown_root: str) -> list[str]:
    """The steps left to do, numbered; only those about files init wrote (an example, the CI placeholders). The
    `cd` is quoted as a shell reads it: the line is meant to be pasted, and `my catalog` must reach `cd` whole.
    A relative folder starting with `-` is written `./-x`: quoting keeps the dash, and `cd -x` is an option to
    `cd`, `cd -` the previous folder."""
    folder = f"./{shown_root}" if shown_root.startswith("-") else shown_root
    where = "" if shown_root == "." else f"cd {shlex.quote(folder)} && "
    on_what = "works now, on the example agent" if not result.no_example else "now on your catalog"
    if result.no_catalog:
        on_what = f"once {result.no_catalog}/ (your capidx.yaml's catalog) holds an agent"
    steps = [f"  {where}{TRY_IT}   # {on_what}"]
    todo = [EXAMPLE_STEP] if not result.no_example else []
    if result.no_catalog:
        todo.append(
            f"Create {result.no_catalog}/<agent>/capabilities/current.json: the catalog your capidx.yaml names."
        )
    scaffolded = {*result.written, *(target for target, why in result.kept if why == SAME)}
    pre_commit, workflow = result.ci_files
    ours = [target for target in result.ci_files if target in scaffolded]
    then = ", then `pre-commit install`" if pre_commit in ours else ""
    todo += [CI_STEP.format(files=" and ".join(ours), then=then)] if ours else []  # OWNER, COMMIT
    theirs = {target for target, why in result.kept if why != SAME}
    if pre_commit in theirs and result.hook:
        todo.append(HOOK_STEP.format(pre_commit=pre_commit) + "\n" + result.hook.rstrip("\n"))
    if workflow in theirs:
        config = f", with {result.config_flag} in each capidx command run from a checkout" if result.config_flag else ""
        todo.append(WORKFLOW_STEP.format(workflow=workflow, config=config))
    if result.out_unknown:
        todo.append(f"Add your build directory (paths.out) to {GITIGNORE}: {result.out_unknown}.")
    elif result.gitignore == "skipped":
        todo.append(f"Add {result.ignored} to {GITIGNORE}: it is output.")
    return ["Next:", *steps, *(f"  {number}. {step}" for number, step in enumerate(todo, 1))]
