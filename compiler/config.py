"""capidx.yaml: a typed, documented configuration with phased validation.

The file is checked against `schema/config-schema.json` (types, unknown keys) and problems come
back as diagnostics, all of them at once, with "did you mean" for mistyped keys. Flags override the
file: callers pass only the flags the user actually gave (`None` means "not given"), as mkdocs does.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.markup import defuse
from capidx.compiler.worktree import named_from_top
from capidx.schema import labels
from capidx.schema.homepath import expand_home
from capidx.schema.pathkind import PathKind, folder_kind
from capidx.schema.realpath import leads_out, real_path, resolve
from capidx.schema.wording import LINKED_OUT, LINKED_OUT_HINT, NOT_SETTINGS
from capidx.schema.yamldata import SourceMap, json_path, whole_numbers

if TYPE_CHECKING:
    from capidx.compiler.validate.load import SourceFile

CONFIG_FILE_NAME = "capidx.yaml"
ALIAS_FILE_NAMES = ("aliases.json", "aliases.yaml", "aliases.yml")
DEFAULT_URI_PREFIX = "capability-index://"
DEFAULT_ENCODING = "cl100k_base"
# The catalog's name, the summary's heading (and a variable of every Markdown template). The default is
# what the bundled catalog describes; another catalog (of MCP servers, of IDE plugins) names itself.
DEFAULT_TITLE = "Coding-agent capabilities"


# Claude Code cuts server instructions (and each tool description) at 2,048 characters; a memory file is
# held to the same size, as it too is read into every session.
DEFAULT_CHARACTER_BUDGETS = {"instructions": 2_048, "memory": 2_048}


@dataclass(frozen=True)
class Staleness:
    warn_days: int = 30
    old_days: int = 90
    error_days: int | None = None


@dataclass(frozen=True)
class Relationships:
    similarity_threshold: float = 0.15
    max_similar: int = 5


@dataclass(frozen=True)
class InjectionLabel:
    label: str
    min_confidence: float


# The server's defaults too (a build without `injection.labels` is served with them): one definition.
DEFAULT_LABELS = tuple(InjectionLabel(label.label, label.min_confidence) for label in labels.DEFAULT_LABELS)


@dataclass(frozen=True)
class Injection:
    max_tokens: int = 500
    max_snippets: int = 3
    labels: tuple[InjectionLabel, ...] = DEFAULT_LABELS


# The path settings: their values name a folder or a file that may turn out wrong only later, so where capidx.yaml
# writes them is kept: a problem found then is reported at that place, not as if a flag had given it. (An unknown
# encoding, the one other such setting, is reported when the file is loaded.)
LOCATED = ("agents", "aliases", "schema", "templates", "out")


@dataclass(frozen=True)
class Origin:
    """Where capidx.yaml writes a value (`parts` is its JSON path), and the value as written."""

    file: Path
    line: int | None
    col: int | None
    parts: tuple[str, ...]
    value: str

    def diagnostic(self, message: str, hint: str | None = None, code: str = "config") -> Diagnostic:
        """An error at the value: a usage error (`config`) by default, as every capidx.yaml problem is."""
        return Diagnostic(str(self.file), self.line, self.col, json_path(self.parts), "error", message, hint, code)

    def place(self) -> str:
        """`capidx.yaml:2:8: $.paths.out`, the file relative to the working directory when it is below it."""
        shown = self.file
        with contextlib.suppress(ValueError):
            shown = self.file.relative_to(Path.cwd())
        where = ":".join(str(part) for part in (shown, self.line, self.col) if part is not None)
        return f"{where}: {json_path(self.parts)}"


@dataclass(frozen=True)
class Config:
    """Effective settings for validate/build/report. Paths are absolute."""

    root: Path
    config_file: Path | None
    agents: Path
    aliases: Path | None
    schema: Path | None  # None: the bundled capability schema
    templates: Path | None
    out: Path
    uri_prefix: str = DEFAULT_URI_PREFIX
    title: str = DEFAULT_TITLE
    encodings: tuple[str, ...] = (DEFAULT_ENCODING,)
    budgets: dict[str, int] = field(default_factory=dict)
    # Characters of the overview artifacts (compiler/render/overview.py); capidx.yaml's values replace these.
    character_budgets: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_CHARACTER_BUDGETS))
    staleness: Staleness = Staleness()
    min_description_entropy: float = 2.5
    relationships: Relationships = Relationships()
    injection: Injection = Injection()
    site: bool = True  # build/site/: JSON API, llms.txt, the page (compiler/render/site.py); `site: false` / --no-site
    serve: dict[str, Any] = field(default_factory=dict)  # read by capidx.server, passed through verbatim
    # The project's build directory as memory.md names it (`build`): capidx.yaml's `paths.out` relative to the
    # project, or its folder name when outside it. `--out` does not change it: a one-off build elsewhere (a CI
    # comparison) must write the same memory block as the project's own build.
    build_label: str = "build"
    # The command that makes that build, as memory.md says it to an agent in the same folder as its label's
    # (`_build_command`): `capidx build`, with `--config` naming the capidx.yaml from the top of the work tree
    # when the project is in a folder below it.
    build_command: str = "capidx build"
    # Setting name -> where capidx.yaml writes it, for the `LOCATED` settings the file gives and no flag overrides.
    origins: dict[str, Origin] = field(default_factory=dict)
    # (`budgets` or `character_budgets`, kind) -> the line and column of its key, for each budget the file writes
    # (`report --format github` annotates a breach there).
    budget_places: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)

    @property
    def primary_encoding(self) -> str:
        return self.encodings[0]

    def origin(self, name: str) -> Origin | None:
        """Where capidx.yaml gives path setting `name`, None when the file does not (or a flag overrides it)."""
        return self.origins.get(name)

    def with_overrides(self, **overrides: Any) -> Config:
        """Apply command-line flags; a `None` value means the flag was not given. An overridden setting is no
        longer the file's: its origin is dropped."""
        given = {key: value for key, value in overrides.items() if value is not None}
        unknown = set(given) - {f.name for f in fields(self)}
        if unknown:
            raise TypeError(f"unknown override(s): {sorted(unknown)}")
        return replace(self, **given, origins=_without(self.origins, given))


def _without(origins: dict[str, Origin], names: Iterable[str]) -> dict[str, Origin]:
    """`origins` less those of the settings `names`."""
    dropped = set(names)
    return {name: at for name, at in origins.items() if name not in dropped}


def find_config_file(start: Path) -> Path | None:
    candidate = start / CONFIG_FILE_NAME
    # Whatever it is: a capidx.yaml that cannot be read (a folder, a pipe, a link loop) is an error, not "none".
    return candidate if os.path.lexists(candidate) else None


def default_config(root: Path) -> Config:
    """Defaults for a project rooted at `root` (the directory holding capidx.yaml, or the cwd)."""
    agents = root / "agents"
    templates = root / "templates"
    return Config(
        root=root,
        config_file=None,
        agents=agents,
        aliases=default_aliases(agents),
        schema=None,
        templates=templates if _is_user_templates(templates) else None,
        out=root / "build",
        build_label=defuse(_label(root, root / "build")),
        build_command=defuse(_build_command(root, None)),
    )


def default_aliases(agents: Path) -> Path | None:
    """The catalog's alias table (`aliases.json`, or `aliases.yaml`/`.yml`) when there is one."""
    # lexists: an aliases.json that cannot be read (a folder, a pipe, a broken link) is reported, not skipped.
    return next((agents / name for name in ALIAS_FILE_NAMES if os.path.lexists(agents / name)), None)


def with_catalog(config: Config, agents: Path | None, aliases: Path | None, no_aliases: bool) -> Config:
    """`--agents DIR`, `--aliases FILE` and `--no-aliases` on top of `config` (absolute paths; None: not given).

    A catalog moved by --agents brings its own alias table, `DIR/aliases.*` or none at all, as
    `paths.agents` does in capidx.yaml: another catalog's table would name capabilities it does not have.
    --aliases names the table instead; --no-aliases drops it."""
    config = config.with_overrides(agents=agents, aliases=aliases)
    if agents is not None and aliases is None:
        config = replace(config, aliases=default_aliases(agents), origins=_without(config.origins, ["aliases"]))
    return replace(config, aliases=None, origins=_without(config.origins, ["aliases"])) if no_aliases else config


def _label(root: Path, out: Path) -> str:
    """`out` as the project names it: relative to `root` when inside it, else its folder name (never an
    absolute path of the machine that built it). A project in a folder below the top of a git work tree (a catalog
    in `tools/capidx/` of a monorepo) is named from that top, where agents read memory files
    (`tools/capidx/build`), when `out` is inside it: a checkout in CI names it as a clone does."""
    from_top = named_from_top(root, out)
    if from_top is not None:
        return from_top
    inside = relative_inside(root, out)
    return Path(os.path.normpath(out)).name if inside is None else inside or "."


def _build_command(root: Path, config_file: Path | None) -> str:
    """How memory.md tells an agent to make the build, in the folder its label is named from: `capidx build`, or
    below the top of a git work tree `capidx build --config tools/capidx/capidx.yaml` (a capidx.yaml there, the
    file the top names) or `cd tools/capidx && capidx build` (none: the folder's defaults)."""
    if config_file is not None:
        named = named_from_top(root, config_file)
        return "capidx build" if named is None else f"capidx build --config {shlex.quote(named)}"
    folder = named_from_top(root, root)
    return "capidx build" if folder is None else f"cd {shlex.quote(folder)} && capidx build"


def relative_inside(root: Path, path: Path) -> str | None:
    """`path` relative to `root` as POSIX text, both normalized without touching the disk ('.' for `root` itself);
    None when it is outside."""
    try:
        return Path(os.path.normpath(path)).relative_to(os.path.normpath(root)).as_posix()
    except ValueError:
        return None


def _is_user_templates(path: Path) -> bool:
    """A `templates/` folder overrides bundled templates only if it holds templates: a `.j2` file at its top or in
    `site/` (a folder holding only `site/index.html.j2` is one, so the build can say that page is not overridable
    instead of passing the folder over in silence).

    In this repository `templates/` *is* the bundled package; treating it as an override folder
    would be harmless but confusing, so a folder with an `__init__.py` is not a user override.

    One this user may not look into (a link into a folder it may not search, or a folder it may not search itself)
    or list (mode 111, where `glob` finds nothing) is taken for one: what it holds cannot be told, and validate and
    build say it cannot be read or listed rather than use the bundled templates in silence. (Python 3.11's
    `Path.is_dir` and `Path.exists` raised that PermissionError.)
    """
    kind = folder_kind(path)
    if kind in (PathKind.DENIED, PathKind.UNLISTED):
        return True
    if kind is not PathKind.FOLDER or os.path.exists(path / "__init__.py"):
        return False
    return any(path.glob("*.j2")) or any((path / "site").glob("*.j2"))


def config_from_mapping(data: dict[str, Any], root: Path, config_file: Path | None) -> Config:
    """Build a Config from an already validated mapping (pure). An integer setting written `500.0` is 500, as
    serve reads it (`whole_numbers`)."""
    from capidx.compiler.validate.schemas import CONFIG_SCHEMA, bundled_schema

    data = whole_numbers(data, bundled_schema(CONFIG_SCHEMA))
    base = default_config(root)
    paths = {key: value if value is None else expand_home(value) for key, value in data.get("paths", {}).items()}
    staleness = data.get("staleness", {})
    relationships = data.get("relationships", {})
    injection = data.get("injection", {})
    # shown before each suggestion a model reads: no live link or image, as the title
    labels = tuple(
        InjectionLabel(defuse(item["label"]), float(item["min_confidence"])) for item in injection.get("labels", [])
    )
    aliases: Path | None = base.aliases
    if "aliases" in paths:
        aliases = None if paths["aliases"] is None else root / paths["aliases"]
    elif "agents" in paths:
        aliases = default_aliases(root / paths["agents"])
    return replace(
        base,
        config_file=config_file,
        agents=root / paths["agents"] if "agents" in paths else base.agents,
        aliases=aliases,
        schema=root / paths["schema"] if paths.get("schema") else None,
        templates=root / paths["templates"] if paths.get("templates") else base.templates,
        out=root / paths["out"] if "out" in paths else base.out,
        build_label=defuse(_label(root, root / paths["out"])) if "out" in paths else base.build_label,  # memory.md's
        build_command=defuse(_build_command(root, config_file)),
        uri_prefix=data.get("uri_prefix", DEFAULT_URI_PREFIX),
        title=defuse(data.get("title", DEFAULT_TITLE)),  # it heads documents models read: no live link or image
        encodings=tuple(data.get("encodings", (DEFAULT_ENCODING,))),
        budgets=dict(data.get("budgets", {})),
        character_budgets={**DEFAULT_CHARACTER_BUDGETS, **data.get("character_budgets", {})},
        staleness=replace(Staleness(), **staleness),
        min_description_entropy=float(
            data.get("lint", {}).get("min_description_entropy", base.min_description_entropy)
        ),
        relationships=replace(Relationships(), **relationships),
        injection=replace(
            Injection(),
            **{key: value for key, value in injection.items() if key != "labels"},
            **({"labels": labels} if labels else {}),
        ),
        site=bool(data.get("site", True)),
        serve=dict(data.get("serve", {})),
    )


def check_config_mapping(data: Any, path: str, source: SourceFile | None = None) -> list[Diagnostic]:
    """Problems of a parsed capidx.yaml, in two phases: each option (types, unknown keys with "did you
    mean"), then options against each other. With the file's `source`, every problem has a line:col.
    """
    from capidx.compiler.validate.load import SourceFile
    from capidx.compiler.validate.schemas import CONFIG_SCHEMA, bundled_validator, schema_diagnostics

    if data is None:
        return []
    source = source or SourceFile(Path(path), b"", "", data, SourceMap())
    if not isinstance(data, dict):
        return [source.diagnostic((), "error", NOT_SETTINGS, code="config")]
    found = schema_diagnostics(bundled_validator(CONFIG_SCHEMA), source, code="config")
    found += _check_encodings(data, source)  # names, whatever else is wrong
    problems = sorted(found, key=lambda problem: (problem.line or 0, problem.col or 0))  # as the file reads
    return problems or _check_across_options(data, source)


def _check_encodings(data: dict[str, Any], source: SourceFile) -> list[Diagnostic]:
    """Each encoding name tiktoken does not know, at its place: `validate` says so, not only `build`. A list that
    is no list of names is the schema's to report."""
    from capidx.compiler.emit.tokens import unknown_names

    names = data.get("encodings", ())
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return []
    found = unknown_names(names)
    return [source.diagnostic(("encodings", index), "error", *found[index], "config") for index in sorted(found)]


def _check_across_options(data: dict[str, Any], source: SourceFile) -> list[Diagnostic]:
    problems = []
    staleness = data.get("staleness", {})
    warn_days, old_days = staleness.get("warn_days", Staleness.warn_days), staleness.get("old_days", Staleness.old_days)
    if old_days < warn_days:
        where = ("staleness", "old_days" if "old_days" in staleness else "warn_days")
        problems.append(
            source.diagnostic(
                where,
                "error",
                f"old_days ({old_days}) is less than warn_days ({warn_days})",
                "old_days is the stronger warning: make it at least warn_days",
                "config",
            )
        )
    thresholds = [label["min_confidence"] for label in data.get("injection", {}).get("labels", [])]
    if thresholds != sorted(thresholds, reverse=True):
        problems.append(
            source.diagnostic(
                ("injection", "labels"),
                "error",
                "labels are not ordered by min_confidence",
                "list the highest min_confidence first",
                "config",
            )
        )
    return problems


def load_config(config_path: Path | None, cwd: Path, given: Iterable[str] = ()) -> tuple[Config, list[Diagnostic]]:
    """Read capidx.yaml (given, or found in `cwd`); defaults when there is none.

    Returns the config and any problems, each with the file's line:col; on problems the returned config
    is the defaults, so a caller can still report everything before deciding to stop. Every problem has
    the code `config` or `io`: a broken configuration is a usage error (exit 2). `given` names the settings of
    `READ_SETTINGS` a flag gives (`given_by_flags`): where those lead is the user's own choice (`outside_project`).
    """
    from capidx.compiler.validate.load import load_file

    path = config_path or find_config_file(cwd)
    if path is None:
        config = default_config(resolve(cwd))
        return config, outside_project(config, given)
    path = Path(os.path.abspath(path))  # not resolved: a link loop is reported by load_file, not raised here
    if config_path is None and (out := leads_out(path)) is not None:  # found, not named: the project's own
        message, hint = LINKED_OUT.format(*out), LINKED_OUT_HINT
        return default_config(path.parent), [Diagnostic(str(path), None, None, "", "error", message, hint, "config")]
    source, problems = load_file(path, allow_empty=True)
    if source is not None:  # parsed (a duplicate key is reported, not fatal): its settings are checked too
        problems += check_config_mapping(source.data, str(path), source)
    problems = [problem if problem.code == "io" else replace(problem, code="config") for problem in problems]
    if source is None or problems:
        return default_config(path.parent), problems
    config = config_from_mapping(source.data or {}, path.parent, path)
    config = replace(config, origins=_origins(source, path), budget_places=_budget_places(source))
    if outside := outside_project(config, given):
        return default_config(path.parent), outside
    return config, []


# The settings naming what capidx reads (`paths.out` is written, and only when it is provably a build), with the flag
# that names the same from outside the project.
READ_SETTINGS = {
    "agents": ("catalog directory", "--agents DIR"),
    "aliases": ("alias table", "--aliases FILE"),
    "schema": ("schema file", "--schema FILE"),
    "templates": ("templates folder", "--templates DIR"),
}


def given_by_flags(
    agents: Path | None,
    aliases: Path | None,
    no_aliases: bool,
    schema: Path | None = None,
    templates: Path | None = None,
) -> frozenset[str]:
    """The settings of `READ_SETTINGS` the flags give (None: not given), for `load_config`: --agents brings its own
    alias table (`with_catalog`), and --no-aliases reads none."""
    flags = {"agents": agents, "aliases": aliases, "schema": schema, "templates": templates}
    names = {name for name, value in flags.items() if value is not None}
    return frozenset(names | ({"aliases"} if agents is not None or no_aliases else set()))


def outside_project(config: Config, given: Iterable[str] = ()) -> list[Diagnostic]:
    """A problem at each path capidx.yaml gives to read from that leads, after symbolic links, outside the project
    (the folder holding capidx.yaml). A fork's `paths.schema: /etc/passwd` (or `~/.ssh/…`) was read in CI, and its
    keys and fragments quoted in errors the job's public log shows; a name near a missing one was suggested from
    any folder of the machine. So are the project's own `agents` and `templates` read when capidx.yaml does not name
    them, when they are links out of it: a pull request commits one as readily as it writes `paths.agents`. A flag's
    path (the settings `given`) is the user's own choice, and is not limited, nor is what it replaces."""
    root = real_path(config.root)
    found = []
    for name, (what, flag) in READ_SETTINGS.items():
        origin, path = config.origin(name), getattr(config, name)
        if name in given or path is None:
            continue
        if origin is not None and os.path.commonpath([root, real_path(path)]) != root:
            message = f"{what} '{origin.value}' is outside the project folder, the one holding capidx.yaml"
            hint = f"paths.{name} must lead there, also through symbolic links; name one elsewhere with {flag}"
            found.append(origin.diagnostic(message, hint))
        elif origin is None and name in ("agents", "templates") and (out := leads_out(path)) is not None:
            message, hint = (
                LINKED_OUT.format(*out),
                f"make {path.name} a folder of the project, or name the {what} with {flag}",
            )
            found.append(Diagnostic(str(path), None, None, "", "error", message, hint, "config"))
    return found


BUDGET_SECTIONS = ("budgets", "character_budgets")


def _budget_places(source: SourceFile) -> dict[tuple[str, str], tuple[int, int]]:
    """Where the file writes each budget's key, from the map made as it was read (nothing is read again)."""
    data = source.data if isinstance(source.data, dict) else {}
    found: dict[tuple[str, str], tuple[int, int]] = {}
    for section in BUDGET_SECTIONS:
        for kind in data.get(section) or {}:
            if (at := source.source_map.locate((section, kind), key=True)) is not None:
                found[section, kind] = at
    return found


def _origins(source: SourceFile, path: Path) -> dict[str, Origin]:
    """Where the file writes each `LOCATED` setting it gives (`paths.<name>`, a string once validated)."""
    paths = source.data.get("paths") if isinstance(source.data, dict) else None
    found: dict[str, Origin] = {}
    for name in LOCATED:
        value = paths.get(name) if isinstance(paths, dict) else None
        if isinstance(value, str):
            line, col = source.source_map.locate(("paths", name)) or (None, None)
            found[name] = Origin(path, line, col, ("paths", name), value)
    return found
