"""Which files `capidx validate` reads: the configured catalog, or the PATHS given on the command line.

A directory contributes every `*/capabilities/current.{json,yaml,yml}` below it (`paths.out` passed over) and
an alias table: the configured catalog's when it is or holds that catalog (`capidx validate .`), else its own
`aliases.{json,yaml,yml}`; a file is a capability document unless it is named like an alias table.
Paths that do not exist are problems (code `io`, exit 2), reported together with everything else.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from capidx.compiler.config import ALIAS_FILE_NAMES, CONFIG_FILE_NAME, Config
from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.files import FolderUnreadable, TooManyTemplates, shown, walk
from capidx.compiler.validate import configured
from capidx.compiler.validate.load import file_problem, load_file
from capidx.compiler.validate.manifests import is_build
from capidx.schema.above import above_hint, config_near
from capidx.schema.builddir import MANIFEST
from capidx.schema.pathkind import PathKind, folder_kind, refusal
from capidx.schema.realpath import real_path
from capidx.schema.wording import one_edit

CAPABILITY_FILE_NAMES = ("current.json", "current.yaml", "current.yml")
_READ_NAMES = CAPABILITY_FILE_NAMES + ALIAS_FILE_NAMES
_DATA_SUFFIXES = (".json", ".yaml", ".yml")
_MISPLACED = "not read: named like a capability document or alias table, where capidx does not read one"
_UNREAD_HINT = (
    "capidx reads <agent>/capabilities/current.json (or .yaml, .yml) and aliases.json (or .yaml, .yml) at the "
    "catalog's top; "
    "rename or move it, or keep other files outside the catalog folder"
)
_SKIPPED_DIRECTORIES = frozenset({"node_modules", "__pycache__"})


@dataclass(frozen=True)
class Inputs:
    documents: tuple[Path, ...]
    aliases: tuple[Path, ...]
    # When only an alias table is named (pre-commit passes the changed files), its catalog is read
    # too, quietly, so that alias targets can still be checked.
    context: tuple[Path, ...]
    problems: tuple[Diagnostic, ...]
    # When only capability documents are named, their catalog's alias tables: checked for targets alone
    # (a renamed capability must not leave a dangling alias behind a pre-commit hook), with the catalog's
    # other documents read quietly as context.
    related_aliases: tuple[Path, ...] = ()
    # False when the catalog, or a folder in it, could not be looked into or listed: the names of the documents there
    # are unknown, so nothing is said to name none of the catalog's capabilities (alias targets, successors).
    complete: bool = True
    # The capidx.yaml in force, when it was named (a pre-commit hook passes it): checked as it was loaded, and
    # counted among the files checked ('capidx validate capidx.yaml' said "0 files valid").
    configuration: tuple[Path, ...] = ()

    @property
    def checked(self) -> tuple[Path, ...]:
        return self.documents + self.aliases + self.configuration


def collect(config: Config, paths: Sequence[Path], *, templates_listed: bool = False) -> Inputs:
    """The inputs of `paths`, else of the configured catalog, with the problems met finding them. `templates_listed`:
    the caller has listed the templates folder already by `files.walk_templates` (the build, before it validates),
    which raises at every problem a folder in it could have: not walked again (`_templates_problems`)."""
    return _from_paths(paths, config) if paths else _from_config(config, templates_listed)


def agent_id(path: Path) -> str:
    """`agents/<id>/capabilities/current.json` -> `<id>`; any other file is named after itself."""
    folder = agent_folder(path)
    return path.stem if folder is None else folder


def agent_folder(path: Path) -> str | None:
    """`<id>` of `agents/<id>/capabilities/current.json` (None for a file outside a capabilities folder), read from the
    path made absolute: `capabilities/current.json`, given from the agent's folder, has no folder above in its own
    words, and `current.json`, given from its capabilities folder, not even that one."""
    absolute = Path(os.path.abspath(path))
    return absolute.parent.parent.name if absolute.parent.name == "capabilities" else None


def catalog_documents(
    root: Path, refused: Callable[[FolderUnreadable], object] | None = None, skipped: Iterable[Path] = ()
) -> list[Path]:
    """Every `capabilities/current.*` below `root`, sorted; hidden folders, tools' folders (`node_modules`) and the
    `skipped` folders are passed over (`_catalog_walk`). A folder whose manifest.json says it is a build is walked:
    a build holds no capability document, and anyone may put such a manifest in an agent's folder, which would
    otherwise drop the agent from validation and from the build alike, unsaid.

    Symbolic links to folders are not followed (they could loop); linked files are read, and a
    link that loops is reported when it is read. A folder below `root` that cannot be listed raises
    `FolderUnreadable`, or is given to `refused` (`files.walk`).
    """
    found = []
    for folder, _, files in _catalog_walk(root, refused, skipped):
        if os.path.basename(folder) == "capabilities":
            # listed is there too: in a folder this user may list but not search (mode 644) os.path.lexists answers
            # False, and the document, dropped, was said to be misplaced; read, it is said to be unreadable
            there = [name for name in CAPABILITY_FILE_NAMES if name in files or os.path.lexists(Path(folder, name))]
            found += [Path(folder, name) for name in there]
    return found


def _catalog_walk(
    root: Path, refused: Callable[[FolderUnreadable], object] | None, skipped: Iterable[Path]
) -> Iterator[tuple[str, list[str], list[str]]]:
    """`files.walk` of a folder named or configured as a catalog, less what holds no catalog data: hidden folders,
    tools' folders (`_SKIPPED_DIRECTORIES`) and the `skipped` folders the configuration names (the build's
    `paths.out`, the templates folder)."""
    passed = {_key(folder) for folder in skipped}
    for folder, subfolders, files in walk(root, refused):
        kept = (d for d in subfolders if not d.startswith(".") and d not in _SKIPPED_DIRECTORIES)
        subfolders[:] = sorted(d for d in kept if _key(Path(folder, d)) not in passed)
        yield folder, subfolders, files


def confined(paths: Sequence[Path], root: Path) -> tuple[list[Path], list[Diagnostic]]:
    """The paths whose real location is inside `root`, and a problem for each that is a symbolic link
    leading out of it: a catalog arrives in pull requests, and a linked `current.json` would otherwise
    pull any file of the machine that runs CI (its text quoted in errors, or built into the summary)."""
    top = real_path(root)
    kept: list[Path] = []
    problems: list[Diagnostic] = []
    for path in paths:
        real = real_path(path)
        if os.path.commonpath((top, real)) == top:
            kept.append(path)
        else:
            hint = "copy the file into the catalog instead of linking to it"
            problems.append(file_problem(path, f"refused: a symbolic link to {real}, outside the catalog {top}", hint))
    return kept, problems


def _alias_tables(folder: Path) -> list[Path]:
    return [folder / name for name in ALIAS_FILE_NAMES if os.path.lexists(folder / name)]


def tables_beside(read: Path, catalog: Path) -> list[Diagnostic]:
    """An error at each alias table beside the one read (`aliases.yaml` next to `aliases.json`): capidx reads one
    table per catalog, so the other one's phrases would be dropped without a word (as `duplicate-agent` says of
    two documents for one agent). Only a table of a default name in the `catalog`'s top, where capidx looks, has
    rivals: one named by --aliases or paths.aliases, or placed elsewhere, is read alone."""
    if read.name.lower() not in ALIAS_FILE_NAMES or _key(read.parent) != _key(catalog):
        return []
    others = [path for path in _alias_tables(read.parent) if path.name != read.name]
    message = f"second alias table beside {read.name}, which is the one capidx reads"
    hint = f"keep one: move this file's phrases into {read.name}, then remove this file"
    return [Diagnostic(str(path), None, None, "", "error", message, hint, "duplicate-alias-table") for path in others]


def _unlinked(tables: Sequence[Path], boundary: Path | None = None) -> tuple[list[Path], list[Diagnostic]]:
    """The alias tables, less those that are symbolic links out of their own folder, or out of `boundary` (a named
    path's catalog, `_boundary`): refused as `confined` refuses a linked capability document (a table's text is
    quoted in errors and built into every document)."""
    kept: list[Path] = []
    problems: list[Diagnostic] = []
    for table in tables:
        found, refused = confined([table], table.parent)
        kept += found
        problems += refused
    if boundary is not None:
        kept, out = confined(kept, boundary)
        problems += out
    return kept, problems


def _documents_within(folder: Path, boundary: Path, refused: Callable[[FolderUnreadable], object]) -> list[Path]:
    """The capability documents below `folder` that really lie inside `boundary`; none, the folder not even walked,
    when it leads out of it."""
    return confined(_walked(folder, refused), boundary)[0] if confined([folder], boundary)[0] else []


def _walked(folder: Path, refused: Callable[[FolderUnreadable], object]) -> list[Path]:
    """`catalog_documents` of a catalog folder read around a named file, which no caller has looked at: one this user
    may not look into or list is given to `refused` too, as the walk passes its top over in silence (an alias of a
    named table, a successor of a named document, would be said to name no capability)."""
    kind = folder_kind(folder)
    if kind in (PathKind.DENIED, PathKind.UNLISTED):
        refused(FolderUnreadable(str(folder), kind))
        return []
    return catalog_documents(folder, refused)


@dataclass(frozen=True)
class _Table:
    """The alias table a catalog is read with (`_configured_table`, `_folder_table`), and what was met finding it."""

    tables: list[Path]  # the table, or none (`--no-aliases`, `paths.aliases: null`, none there, or refused)
    problems: list[Diagnostic]
    known: list[Path]  # no strays: a second table beside it (said as such) and, `paths.aliases` wrong, the one meant


def _configured_table(config: Config) -> _Table:
    """The catalog's alias table as the configuration names it (`paths.aliases`, `--aliases`, else the catalog's own
    `aliases.*`; none with `--no-aliases`), with the problems of reaching it: what `capidx validate` reads, and a
    named folder holding the catalog (`capidx validate .`) too."""
    table_missing = configured.missing(config, "aliases")
    if table_missing is not None and config.aliases is not None and _unlinked([config.aliases])[1]:
        # a link out of its folder into one this user may not search: refused as such below, as it is when the
        # folder may be searched (no permission would let capidx read it)
        table_missing = None
    tables, problems = _unlinked([config.aliases] if config.aliases and not table_missing else [])
    problems += [problem for table in tables for problem in tables_beside(table, config.agents)]
    problems += [table_missing] if table_missing else []
    beside = [Path(problem.path) for problem in problems if problem.code == "duplicate-alias-table"]
    # With paths.aliases wrong, the table the default would read is what it meant: the error names it, and it is
    # no stray to rename.
    meant = _alias_tables(config.agents) if table_missing else []
    return _Table(tables, problems, [*beside, *meant])


def _not_catalog(config: Config) -> list[Path]:
    """Folders a catalog walk passes over: the templates folder (its files are read as templates) and the build's."""
    return [folder for folder in (config.templates, config.out) if folder is not None]


def _from_config(config: Config, templates_listed: bool = False) -> Inputs:
    table = _configured_table(config)
    aliases = tuple(table.tables)
    refused = table.problems + _templates_problems(config, templates_listed)
    kind = folder_kind(config.agents)
    if kind is not PathKind.FOLDER:
        default = config.config_file is None and config.agents == config.root / "agents"  # no --agents elsewhere
        above = config_near(config.root) if default else None
        hint = above_hint(above, config.root) if above is not None else None
        problem = configured.missing(config, "agents") or _no_catalog(config.agents, kind, hint, start=default)
        unseen = kind in (PathKind.DENIED, PathKind.UNLISTED)  # there, but what it holds cannot be told
        return Inputs((), aliases, (), (*refused, problem), complete=not unseen)
    unlisted: list[FolderUnreadable] = []
    found = catalog_documents(config.agents, unlisted.append, [config.out])
    documents, problems = confined(found, config.agents)
    problems += [_unlisted(folder) for folder in unlisted]
    if not documents and not problems:
        problems.append(_nothing_found(config.agents))
    problems += unread(config.agents, [*found, *_configured(config), *table.known], _not_catalog(config))
    problems += _agents_beside(config) + _agents_inside(documents) + _one_of_several(config.agents, documents)
    return Inputs(tuple(documents), aliases, (), (*refused, *problems), complete=not unlisted)


BESIDE_LOOKED_AT = 1_000  # entries of the project's top looked into for an agent folder put beside the catalog


def _agents_beside(config: Config) -> list[Diagnostic]:
    """An agent folder put at the project's top beside the catalog (`forge-cli/capabilities/current.json` next to
    `agents/`), which no walk of the catalog reaches: validate said "5 files valid" and the agent was not in the build,
    with nothing to say why. A warning at its document (other folders there are the project's own). Only where the
    catalog is a folder at the project's top, and at most `BESIDE_LOOKED_AT` of its entries are looked into."""
    top = config.agents.parent
    if _real(top) != _real(config.root):
        return []
    problems = []
    with contextlib.suppress(OSError), os.scandir(top) as entries:  # a top it cannot list: the catalog's walk says it
        for entry in itertools.islice(entries, BESIDE_LOOKED_AT):
            if entry.name.startswith(".") or _key(Path(entry.path)) == _key(config.agents):
                continue
            for document in _beside(entry):
                message = f"not read: an agent folder beside the catalog folder {config.agents.name}/"
                hint = f"move {entry.name}/ into {config.agents.name}/, where capidx reads agent folders"
                problems.append(Diagnostic(str(document), None, None, "", "warning", message, hint, "unread"))
    return problems


def _agents_inside(documents: Sequence[Path], context: Sequence[Path] = ()) -> list[Diagnostic]:
    """An agent folder inside another agent's folder (`anvil/v2/capabilities/current.json`, a second version of
    Anvil): read as an agent of its own, named by its own folder ('v2'), which nothing said. A warning at its
    document; folders that group agents (`openai/codex/`) hold no document of their own and are not warned of."""
    agents = {Path(os.path.abspath(path)).parent.parent for path in (*documents, *context)}
    problems = []
    for document in documents:
        folder = Path(os.path.abspath(document)).parent.parent
        outer = next((parent for parent in folder.parents if parent in agents), None)
        if outer is not None:
            message = (
                f"agent folder {folder.name}/ is inside agent {outer.name}'s folder: read as agent {folder.name!r}"
            )
            hint = f"give it a folder of its own beside {outer.name}/ (a second version: {outer.name}-2/, say)"
            problems.append(Diagnostic(str(document), None, None, "", "warning", message, hint, "agent-inside-agent"))
    return problems


def _one_of_several(catalog: Path, documents: Sequence[Path]) -> list[Diagnostic]:
    """The catalog folder given is one agent's own folder (`--agents agents/anvil`) while the folder above it holds
    other agents' (at most `BESIDE_LOOKED_AT` entries looked into): the build holds that agent alone, without the
    catalog's alias table, and replaced a whole catalog's build with no word said. A warning at its document."""
    folder = Path(os.path.abspath(catalog))
    own = [document for document in documents if Path(os.path.abspath(document)).parent.parent == folder]
    if not own:
        return []
    others = 0
    with contextlib.suppress(OSError), os.scandir(folder.parent) as entries:
        for entry in itertools.islice(entries, BESIDE_LOOKED_AT):
            others += entry.name != folder.name and not entry.name.startswith(".") and bool(_beside(entry))
    if not others:
        return []
    message = f"the catalog folder is agent {folder.name}'s own folder: the build holds that agent alone"
    beside = f"{others} other agent{'s are' if others > 1 else ' is'} beside it"
    hint = f"pass --agents {shown(folder.parent)} for the whole catalog: {beside}"
    return [Diagnostic(str(own[0]), None, None, "", "warning", message, hint, "agent-folder-as-catalog")]


def _beside(entry: os.DirEntry[str]) -> list[Path]:
    """The capability documents of a folder at the project's top; none where it cannot be looked into (a folder this
    user may not search, such as a container's data folder owned by root: Path.is_file raises the PermissionError,
    which ended the look at the first such folder, the agent folders listed after it unsaid)."""
    try:
        if not entry.is_dir(follow_symlinks=False):  # a linked folder is not walked, as in the catalog
            return []
        return [
            document for name in CAPABILITY_FILE_NAMES if (document := Path(entry.path, "capabilities", name)).is_file()
        ]
    except OSError:
        return []


def _unlisted(refused: FolderUnreadable) -> Diagnostic:
    """The problem of a folder of the catalog that could not be listed: an agent in it would drop out unsaid."""
    return file_problem(Path(refused.folder), refused.problem, refused.needed)


def _templates_problems(config: Config, listed: bool = False) -> list[Diagnostic]:
    """What would stop the build in the templates folder before it renders: the folder missing, not to be looked
    into or listed, or a folder in it not to be listed (where a template the build would list cannot be told), or
    too many files in it. The last two only by walking it, unless it was `listed` already (`collect`)."""
    if problem := configured.missing(config, "templates") or _unreadable_templates(config.templates):
        return [problem]
    return [] if config.templates is None or listed else _checked_templates(config.templates)


def _checked_templates(templates: Path) -> list[Diagnostic]:
    """What stops the build in the templates folder, said beforehand, from one walk of it (the build's listing,
    `template_listing`): each folder in it that this user may not list; in the build's words, a folder too large to
    be one (`paths.templates: /`), where that walk stops; else each template the build would parse that does not."""
    from capidx.compiler.render.environment import template_listing

    unlisted: list[FolderUnreadable] = []
    try:
        listing = template_listing(templates, unlisted.append)
    except TooManyTemplates as refused:
        return [_unlisted(folder) for folder in unlisted] + [_too_many(refused)]
    return [_unlisted(folder) for folder in unlisted] or _unparsed_templates(templates, listing)


def _unparsed_templates(templates: Path, listing: list[str]) -> list[Diagnostic]:
    """Each template of the folder the build would parse that does not (a tag left open, an unknown filter syntax):
    the build stops at it (exit 1), and a pre-commit hook runs validate, not the build. A template refused for what it
    is (a link out of the folder, too large, not UTF-8) is said as the build says it."""
    from capidx.compiler.render.environment import TemplateFailure, make_environment, syntax_failures

    try:
        failures = syntax_failures(make_environment(templates, cached=False, listed=listing))
    except TemplateFailure as refused:
        return [file_problem(templates, str(refused), code="template")]
    return [
        Diagnostic(path, line, None, "", "error", message, _TEMPLATE_HINT, "template")
        for path, line, message in failures
    ]


_TEMPLATE_HINT = "fix the template: docs/templates.md says what each receives"


def _too_many(refused: TooManyTemplates) -> Diagnostic:
    """The build's error (exit 1) as a problem of the templates folder, not an I/O one (exit 2)."""
    return file_problem(Path(refused.folder), refused.problem, refused.hint, code="templates-folder")


def _unreadable_templates(templates: Path | None) -> Diagnostic | None:
    """The problem of a templates folder not given by capidx.yaml (the default templates/, --templates) that this
    user may not look into, or list, or that is no folder (`--templates` naming a pipe or a device, which click lets
    through as no regular file): which templates it overrides cannot be told, and the bundled ones are not to be
    used in its place in silence."""
    if templates is None:
        return None
    kind = folder_kind(templates)
    if kind is PathKind.OTHER:
        hint = "give --templates a folder of templates, or leave it out for the bundled ones"
        return file_problem(templates, f"templates folder {configured.no_folder(templates)}", hint)
    return _refused_folder(templates, "templates folder", kind)


NAMES_COMPARED = 500  # entries of a folder a missing path's name is compared with, at most


def _named_like(path: Path) -> str | None:
    """'did you mean …/current.json?' for a path named one typing error from an entry of its folder
    ('curent.json'); None when the folder is not there, or nothing there is named alike."""
    try:
        with os.scandir(path.parent if str(path.parent) else ".") as entries:
            names = [entry.name for _, entry in zip(range(NAMES_COMPARED), entries, strict=False)]
    except OSError:
        return None
    typed = path.name.casefold()
    close = [
        name for name in names if name != path.name and (name.casefold() == typed or one_edit(name.casefold(), typed))
    ]
    return f"did you mean {path.parent / close[0]}?" if len(close) == 1 else None


def _no_catalog(agents: Path, kind: PathKind, above: str | None = None, start: bool = False) -> Diagnostic:
    """The problem of a catalog folder given by `--agents` or the default `agents/` that is not one: not found, no
    folder (a file, a pipe, a link leading nowhere), or not to be looked into (a link into a folder this user may not
    search, or a folder it may not search itself) or listed, where no other folder would help. `above`: the hint
    naming the capidx.yaml of a folder above (`above.above_hint`), with no capidx.yaml in force. A folder named
    one typing error from one beside it is said to be that one ('--agents agnets'); `start`: the default agents/,
    with nothing above, is missing (a newcomer's empty folder), and how a new catalog starts is said too."""
    if refused := _refused_folder(agents, "catalog directory", kind):
        return refused
    hint = above or "run capidx where agents/ is, or pass --agents DIR, --config FILE or PATHS"
    if kind is PathKind.OTHER:  # there, but no folder: "not found" sent the user looking for a typing error
        return file_problem(agents, f"catalog directory {configured.no_folder(agents)}", hint)
    if above is None and (near := configured.near_name(agents, folder=True)) is not None:
        hint = f"did you mean {shown(agents.with_name(near))}?"  # '--agents agnets' beside agents/
    elif start and above is None:
        hint += "; a new catalog starts with `capidx init`"
    return file_problem(agents, "catalog directory not found", hint)


def _refused_folder(folder: Path, what: str, kind: PathKind) -> Diagnostic | None:
    """The problem of a folder of `kind` (`folder_kind`) this user may not look into, or list (None: it may)."""
    if said := refusal(kind):
        problem, needed = said
        return file_problem(folder, f"{what} {problem}", needed)
    return None


def unread(
    root: Path, read: Sequence[Path], skipped: Iterable[Path] = (), catalog: Path | None = None
) -> list[Diagnostic]:
    """Each file under the catalog that looks meant for capidx but is not read: an error for a name one typing error
    from a document's or alias table's (`capabilites/current.json`, `Current.json`, `current.jsn`, `aliase.json`,
    `<agent>/current.json`), whose agent or aliases would drop out of the build in silence (also with `-q`, as CI
    runs it); a warning for another data file outside a capabilities folder that holds a document (`alias.json`), or
    for an alias table in its place (the top of `root`, or of the configured `catalog` below it) that the
    configuration chose not to read (`--no-aliases`, `paths.aliases`). The `skipped` folders are not walked: the
    templates folder, whose files are read too, as templates, and the build's output folder (`_catalog_walk`). In
    another build directory below `root` (`_in_build`) the data files are the build's, no warning; a misplaced
    document or alias table is still an error there, as a manifest.json anyone may add must not hide one."""
    known = {key for path in read for key in (_key(path), _real(path))}  # and link targets
    tops = {key for top in (root, catalog) if top is not None for key in (_key(top), _real(top))}
    problems = []
    builds: set[str] = set()  # the folders walked that are, or lie in, a build directory
    # a folder it cannot list is said by catalog_documents, which walks every folder this walk does
    for folder, subfolders, files in _catalog_walk(root, lambda _folder: None, skipped):
        problems += [_linked_folder(Path(folder, d)) for d in subfolders if _holds_document(Path(folder, d), known)]
        output = _in_build(folder, files, root, builds)
        # where the folder really is: a file read by another name (the table `paths.aliases` names, reached here
        # through a link to the catalog or to the project) is no file left unread
        there = real_path(Path(folder))
        archive = os.path.basename(folder) == "capabilities" and any(name in files for name in CAPABILITY_FILE_NAMES)
        for name in sorted(files):
            path = Path(folder, name)
            if name.startswith(".") or _key(path) in known or _key(Path(there, name)) in known:
                continue
            misspelled = meant_for_capidx(name)
            # --no-aliases, or paths.aliases
            chosen = name in ALIAS_FILE_NAMES and (_key(Path(folder)) in tops or _key(Path(there)) in tops)
            agent = _agent_without_document(path, catalog or root)
            if misspelled and not chosen:  # a document or alias table misplaced or misspelled: its data would drop
                hint = _document_hint(agent) if agent is not None else _UNREAD_HINT
                problems.append(Diagnostic(str(path), None, None, "", "error", _MISPLACED, hint, "misplaced"))
            elif name.lower().endswith(_DATA_SUFFIXES) and not archive and not output and _capability_data(path, agent):
                assert agent is not None
                message = f"not read: capability data in the agent folder {agent.name}, which has no capability "
                message += "document where capidx reads one: the agent would drop out of the build"
                problems.append(
                    Diagnostic(str(path), None, None, "", "error", message, _document_hint(agent), "misplaced")
                )
            elif name.lower().endswith(_DATA_SUFFIXES) and not archive and not output:
                problems.append(Diagnostic(str(path), None, None, "", "warning", "not read", _UNREAD_HINT, "unread"))
    return problems


def _agent_without_document(path: Path, top: Path) -> Path | None:
    """The agent folder (`<top>/<id>/`, `top` the catalog) `path` lies in, somewhere below it, when that folder holds
    no capability document where capidx reads one (`<id>/capabilities/current.*`): a data file there is the agent's
    data in the wrong place (`agents/acme/capabilities.json`, `agents/acme/current.json`), and the agent drops out
    of the build in silence. None for a file at the catalog's top, or in an agent folder that has its document."""
    try:  # absolute: the walk may name the catalog `agents` that the configuration holds as /project/agents
        parts = Path(os.path.abspath(path)).relative_to(os.path.abspath(top)).parts
    except ValueError:
        return None
    if len(parts) < 2 or parts[0].startswith("."):
        return None
    folder = path.parents[len(parts) - 2]  # named as the walk names `path`
    inside = folder / "capabilities"
    return None if any(os.path.lexists(inside / name) for name in CAPABILITY_FILE_NAMES) else folder


def _capability_data(path: Path, agent: Path | None) -> bool:
    """Whether a data file of an agent folder without its document (`_agent_without_document`) holds capability data:
    an object with `capabilities` or `agent`, as a capability document has (a `notes.json` of `{}` is other data,
    left to the `unread` warning). Read within validate's limits (`load_file`); a file it cannot parse is not, nor
    is one that is a symbolic link leading out of the catalog (`confined`): it holds no catalog data, and an error
    rather than a warning would tell a pull request what a file of the machine that runs CI holds."""
    if agent is None or not confined([path], agent.parent)[0]:
        return False
    source, _problems = load_file(path)
    data = source.data if source is not None else None
    return isinstance(data, dict) and ("capabilities" in data or "agent" in data)


def _document_hint(agent: Path) -> str:
    """Where the agent folder's document belongs, named as the file itself is (relative when the walk was)."""
    return (
        f"capidx reads {shown(agent / 'capabilities' / 'current.json')} (or .yaml, .yml): move the agent's data "
        "there, or keep other files outside the catalog folder"
    )


def _in_build(folder: str, files: Sequence[str], root: Path, builds: set[str]) -> bool:
    """Whether `folder`, met walking `root` top down, is a capidx build directory below `root` (its manifest.json says
    so: `manifests.is_build`) or lies in one met before (`builds`, which it joins): its JSON files are the catalog's
    output, and a "not read" warning for each buried what was wrong."""
    if os.path.dirname(folder) in builds or (
        MANIFEST in files and folder != os.fspath(root) and is_build(Path(folder))
    ):
        builds.add(folder)
        return True
    return False


def meant_for_capidx(name: str) -> bool:
    """Whether a file name is one validate reads in a catalog, or one typing error from one ('current.jsonl',
    'aliase.json'): misplaced, such a file is an error, as its data would drop out of the build."""
    return any(name.lower() == ok or one_edit(name.lower(), ok) for ok in _READ_NAMES)


def _holds_document(folder: Path, known: set[str]) -> bool:
    """Whether `folder` is a symbolic link to a folder that is an agent's (`<agent>/capabilities/current.*`) or its
    `capabilities` folder, whose document is not read under its own name (`known`: a link to another agent's folder
    of the catalog adds nothing): not followed (links to folders could loop, or lead out of the catalog)."""
    if not os.path.islink(folder):  # Path.is_symlink raised PermissionError in a folder this user may not search
        return False
    inside = folder if folder.name == "capabilities" else folder / "capabilities"
    documents = [inside / name for name in CAPABILITY_FILE_NAMES if os.path.lexists(inside / name)]
    return any(_real(document) not in known for document in documents)


def _linked_folder(folder: Path) -> Diagnostic:
    message = "not read: a symbolic link to a folder with a capability document; capidx does not follow linked folders"
    hint = "move the folder into the catalog instead of linking to it"
    return Diagnostic(str(folder), None, None, "", "error", message, hint, "misplaced")


def _unfollowed(
    documents: Sequence[Path], folder: Path, boundary: Path, refused: Callable[[FolderUnreadable], object]
) -> tuple[list[Path], list[Diagnostic]]:
    """The named `documents` (all in or below `folder`) that the walk of the catalog `boundary` would read by these
    names, and a problem for each it would not: one reached through a folder below the catalog that is a symbolic
    link, which the walk does not follow. Named (by hand, or by a hook), such a document must not be read under the
    link's name either (`agents/nick/...` as agent `nick`), but be said to be not read, as `_unread_through`."""
    link = _linked_on_the_way(folder, boundary)
    if link is None or not documents:
        return list(documents), []
    walked = {_real(path): path for path in confined(_walked(boundary, refused), boundary)[0]}
    return [], [_unread_through(link, document, walked.get(_real(document))) for document in documents]


def _unread_through(link: Path, document: Path, read: Path | None) -> Diagnostic:
    """What the walk decides of a linked folder, said at the named `document`: when the walk reads its file under its
    own name (`read`: the link leads to another agent's folder of the catalog), nothing is lost, and a warning names
    that name; else it is the walk's `misplaced` error (`_linked_folder`), as the document would drop out of the
    build in silence. The link and the file are named as the reporter names `document` (`files.shown`): the file the
    catalog reads was made relative to the working directory even where the document was named through `..`, and
    the link named by its whole path where the document was not."""
    message = f"not read: reached through {shown(link)}, a symbolic link to a folder, which capidx does not follow"
    if read is not None:
        message += f"; the catalog reads this file as {shown(read)}"
        return Diagnostic(str(document), None, None, "", "warning", message, "validate it by that name", "unread")
    hint = "move the folder into the catalog instead of linking to it"
    return Diagnostic(str(document), None, None, "", "error", message, hint, "misplaced")


def _linked_on_the_way(folder: Path, boundary: Path) -> Path | None:
    """The first folder below the catalog `boundary`, down to `folder` itself, that is a symbolic link, as the path is
    written (the catalog itself may be reached through a link: `cat2/...` with cat2 a link to it, and the last place
    the path is the catalog counts, as in `_boundary`); None when there is none, or when `folder` is not written
    through the catalog at all."""
    written = Path(os.getcwd(), folder)
    shown = len(written.parts) - len(folder.parts)  # the parts the user wrote start here (all of an absolute path)
    top = _catalog_end(written.parts, boundary)
    if top is None:
        return None
    for end in range(top + 1, len(written.parts) + 1):
        if os.path.islink(Path(*written.parts[:end])):
            return Path(*folder.parts[: end - shown]) if end > shown else Path(*written.parts[:end])
    return None


def _real(path: Path) -> str:
    return _key(Path(real_path(path)))


def _catalog_end(parts: tuple[str, ...], catalog: Path) -> int | None:
    """How many of the `parts` of an absolute path, as written, lead to the folder `catalog` the last time they do
    (by any name: a link to it counts); None when they never do."""
    try:
        target = os.stat(catalog)
    except OSError:
        return None
    for end in range(len(parts), 0, -1):
        try:
            if os.path.samestat(os.stat(Path(*parts[:end])), target):
                return end
        except OSError:
            continue
    return None


def _configured(config: Config) -> list[Path]:
    """The files the configuration names, which the catalog folder may hold (`paths.agents: .`): read, not strays."""
    return [path for path in (config.aliases, config.config_file, config.schema) if path is not None]


def _from_paths(paths: Sequence[Path], config: Config) -> Inputs:
    documents: dict[str, Path] = {}
    aliases: dict[str, Path] = {}
    context: dict[str, Path] = {}
    related: dict[str, Path] = {}
    problems: list[Diagnostic] = []
    roots: set[str] = set()  # catalog roots already walked for a named document
    walked: set[str] = set()  # named folders walked, by their real location: one folder named twice is read once
    unlisted: list[FolderUnreadable] = []  # folders of a catalog walked (named, or read for context) not listed
    refused_named: list[Diagnostic] = []  # named files and folders this user may not look at or list
    configuration: dict[str, Path] = {}  # the capidx.yaml in force, named
    for path in paths:
        kind = folder_kind(path)  # Python 3.11's Path.is_dir raised a PermissionError; os.path.lexists said "absent"
        # UNLISTED: walked, it would hold no capability documents
        if said := refusal(kind, folder=path.suffix.lower() not in _DATA_SUFFIXES):
            if out := confined([path], _boundary(path, _named_root(path), config.agents))[1]:
                problems += out  # a link out of its catalog is refused as such: no permission would let it be read
                continue
            refused_named.append(file_problem(path, *said))
        elif kind is PathKind.NOTHING:
            problems.append(file_problem(path, "does not exist", _named_like(path)))
        elif kind is PathKind.FOLDER:
            boundary = _boundary(path, path, config.agents)
            if out := confined([path], boundary)[1]:  # a folder linked out is refused whole, never walked
                problems += out
                continue
            if _real(path) in walked:  # `agents cat2`, cat2 a link to agents: read by the first name alone
                continue
            walked.add(_real(path))
            candidates = catalog_documents(path, unlisted.append, [config.out])
            found, refused = confined(candidates, boundary)
            found, unfollowed = _unfollowed(found, path, boundary, unlisted.append)  # named through a linked folder
            table = _folder_table(path, boundary, config)
            problems += refused + unfollowed + table.problems
            _add(documents, found)
            _add(aliases, table.tables)
            catalog = config.agents if _holds_catalog(path, config) else None
            read = [*candidates, *table.tables, *table.known, *_configured(config)]
            problems += unread(path, read, _not_catalog(config), catalog)
            if config.templates is not None and _holds(path, config.templates):  # the project's top: as without PATHS
                problems += _templates_problems(config)
            if not found and not table.tables and not table.problems and not refused and not unfollowed:
                problems.append(_nothing_found(path))
        elif path.name.lower() in ALIAS_FILE_NAMES:
            boundary = _boundary(path, path.parent, config.agents)
            tables, linked = _unlinked([path], boundary)
            problems += linked
            problems += next((tables_beside(table, path.parent) for table in _alias_tables(path.parent)), [])
            _add(aliases, tables)
            _add(context, _documents_within(path.parent, boundary, unlisted.append))
        elif path.name == CONFIG_FILE_NAME:  # a pre-commit hook passes capidx.yaml when it changes
            if config.config_file is None or _real(path) != _real(config.config_file):
                hint = f"validate checks the capidx.yaml in force, which this one is with --config {path}"
                problems.append(file_problem(path, "a capidx configuration, not a capability document", hint))
            else:  # the one in force was checked as it was loaded, before any document: nothing more to read here
                configuration[_real(path)] = path
        elif path.suffix.lower() not in _DATA_SUFFIXES:  # 'capidx validate README.md': no YAML error about Markdown
            hint = "name an agent's capabilities/current.json (or .yaml), or a catalog folder"
            problems.append(file_problem(path, "not a capability document: capidx reads .json, .yaml and .yml", hint))
        else:
            layout = path.parent.name == "capabilities"  # <catalog>/<agent>/capabilities/current.*
            root = _named_root(path)
            boundary = _boundary(path, root, config.agents)
            named, linked = confined([path], boundary)  # named or found, a link out of the catalog is not read
            named, unfollowed = _unfollowed(named, path.parent, boundary, unlisted.append)  # nor through a linked one
            problems += linked + unfollowed
            _add(documents, named)
            if unfollowed:  # not read: its catalog is not read for it either
                continue
            if layout and _real(root) not in roots and confined([root], boundary)[0]:  # not walked when linked out
                roots.add(_real(root))
                configured_catalog = _real(root) == _real(config.agents)  # its table is the configuration's
                theirs = _configured_table(config).tables if configured_catalog else _alias_tables(root)
                tables, linked = _unlinked(theirs, None if configured_catalog else boundary)
                problems += linked
                _add(related, tables)
                _add(context, _documents_within(root, boundary, unlisted.append))
    problems += _refused_once(refused_named, unlisted)  # also of the catalog read for context: it is incomplete
    quiet = tuple(p for key, p in context.items() if key not in documents)
    problems += _agents_inside(list(documents.values()), quiet)
    others = tuple(p for key, p in related.items() if key not in aliases)
    unique = _once(problems)
    return Inputs(
        tuple(documents.values()),
        tuple(aliases.values()),
        quiet,
        unique,
        others,
        complete=not unlisted,
        configuration=tuple(configuration.values()),
    )


def _folder_table(folder: Path, boundary: Path, config: Config) -> _Table:
    """The alias table a named folder contributes: when it is or holds the configured catalog (`agents`, or `.` at the
    project's top), that catalog's table as `capidx validate` reads it (`_configured_table`), so that naming the
    folder never skips it; else the folder's own `aliases.*` at its top (the first; a second is said beside it)."""
    if _holds_catalog(folder, config):
        return _configured_table(config)
    every = _alias_tables(folder)
    tables, linked = _unlinked(every[:1], boundary)
    return _Table(tables, linked + (tables_beside(every[0], folder) if every else []), every)


def _holds_catalog(folder: Path, config: Config) -> bool:
    """Whether the configured catalog is there, and is `folder` or lies below it. Where it is not (a catalog validated
    from its own top, `paths.agents` left at the default `agents/`), the named folder is a catalog of its own."""
    return os.path.lexists(config.agents) and _holds(folder, config.agents)


def _holds(folder: Path, inner: Path) -> bool:
    """Whether `inner` is `folder` or lies below it, as written or where both really are."""
    pairs = ((_key(inner), _key(folder)), (_real(inner), _real(folder)))
    return any(os.path.commonpath((below, top)) == top for below, top in pairs)


def _add(found: dict[str, Path], paths: Iterable[Path]) -> None:
    """Each of `paths` into `found` by the folder entry it names (`_entry`), unless one is there already: a file met by
    two names (`agents/x/...` and `cat2/x/...`, cat2 a link to agents; a folder and a document in it named through
    the link) is one document, read once by the first name, not the second document of its agent."""
    for path in paths:
        found.setdefault(_entry(path), path)


def _once(problems: Sequence[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Each problem once, by the first name its file was met by (`_entry`): two tables named side by side give one
    error at the second, and a stray file below two named folders that are one (`agents`, `cat2/x`) one warning."""
    once: dict[Diagnostic, Diagnostic] = {}
    for problem in problems:
        once.setdefault(replace(problem, path=_entry(Path(problem.path))), problem)
    return tuple(once.values())


def _refused_once(named: Sequence[Diagnostic], walked: Sequence[FolderUnreadable]) -> list[Diagnostic]:
    """Each file or folder this user may not look at or list, named or met by a walk, said once, by the first name it
    was met by: one folder named twice (`agents` and its absolute path, a link to it, the catalog of a named file) was
    said once per name, and the reporters show each name below the working directory alike."""
    once: dict[str, Diagnostic] = {}
    for problem in [*named, *(_unlisted(folder) for folder in walked)]:
        once.setdefault(_real(Path(problem.path)), problem)
    return list(once.values())


def _named_root(path: Path) -> Path:
    """The catalog folder of a path named on the command line, by its name alone (what it is cannot always be told: a
    link into a folder this user may not search): a capability document's catalog (<catalog>/<agent>/capabilities/
    current.json, else its own folder), an alias table's folder, or a folder itself."""
    if path.name.lower() in ALIAS_FILE_NAMES:
        return path.parent
    if path.suffix.lower() in _DATA_SUFFIXES:
        return path.parent.parent.parent if path.parent.name == "capabilities" else path.parent
    return path


def _boundary(path: Path, root: Path, catalog: Path) -> Path:
    """The folder a named file or folder must really be inside: the configured catalog when the path is written
    through it, by any name (a linked folder within the catalog, 'agents/evil/...', would otherwise take the boundary
    out with it; 'cat2/evil/...' with cat2 a link to the catalog too), else the named file's own catalog folder."""
    parts = Path(os.getcwd(), path).parts  # as written: '..' after a link is the link's target's parent, not undone
    return root if _catalog_end(parts, catalog) is None else catalog


def _key(path: Path) -> str:
    return os.path.normcase(os.path.abspath(path))


def _entry(path: Path) -> str:
    """The folder entry `path` names, by whatever name it was reached: its folder's real location and its own name.
    Not the file's real location: a document of the catalog that is a link to another agent's is that agent's own
    document, its entry another; nor its path as written: `cat2/x/capabilities/current.json`, cat2 a link to the
    catalog, is the entry `agents/x/capabilities/current.json` names."""
    if path.name in ("", ".", ".."):  # a folder named by `.` or `..`: no entry of its own to name
        return _real(path)
    return _key(Path(real_path(path.parent), path.name))


def _nothing_found(folder: Path) -> Diagnostic:
    return file_problem(folder, "no capability documents found", "expected <agent>/capabilities/current.json below it")
