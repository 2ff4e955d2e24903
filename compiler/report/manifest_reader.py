"""Reading a build's manifest.json for `capidx report`: the contract's reader (`capidx.schema.builddir`),
with problems turned into one `ManifestError` naming the file and listing every problem
(`$.json.path: message`), so the command can exit 2 with a message that says what to fix.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capidx.compiler.diagnostics import visible
from capidx.compiler.errors import UsageError
from capidx.compiler.validate.manifests import manifest_problems
from capidx.schema import builddir
from capidx.schema.above import build_hint
from capidx.schema.homepath import dead_link_on
from capidx.schema.pathkind import PathKind, path_kind
from capidx.schema.realpath import real_path


class ManifestError(UsageError):
    """manifest.json is missing, unreadable or does not follow the build-manifest schema."""

    def __init__(self, path: Path, problems: Sequence[str], *, prefixed: bool = True, hint: str = "") -> None:
        self.path = path
        self.problems = tuple(problems)
        lines = [f"{path}: {problem}" if prefixed else problem for problem in self.problems]
        super().__init__([*lines, hint] if hint else lines)


@dataclass(frozen=True)
class Manifest:
    path: Path  # the manifest.json file
    data: Mapping[str, Any]

    @property
    def encoding(self) -> str:
        return self.data["encodings"][0]

    @property
    def artifacts(self) -> Sequence[Mapping[str, Any]]:
        return self.data["artifacts"]


# What a file given by another name than manifest.json (`--build capidx.yaml`) is told: no folder is to be deleted.
_NOT_A_BUILD = f"name the folder `capidx build` wrote (`build/` unless told otherwise), or its {builddir.MANIFEST}"


def load_manifest(
    location: Path,
    option: str = "--build DIR",
    *,
    given: bool = False,
    command: str = "report",
    above: Path | None = None,
    config: str | None = None,
) -> Manifest:
    """Read and validate the manifest of a build directory (or a manifest.json path).

    `option` is the flag that names `location`, for the hint when there is no build there; `given`: the flag
    was passed (so the hint says how to make a build there rather than to pass it); `command`, the capidx command
    reading it (`report`, `inject`), whose user a manifest that may not be read needs the permission for; `above`,
    the capidx.yaml of a folder above the working one (`schema.above.config_above`), when none is in force and
    `location` is the default `build/`: a missing build there names it (`_no_build`); `config`, the `--config` each
    `capidx build` it suggests needs to work where it is printed (the capidx.yaml in force, when not the working
    folder's)."""
    path = builddir.manifest_path(location)
    # a link to a manifest.json (`--against base.json`) is the build's manifest, whatever the link is called
    named = {path.name, Path(real_path(path)).name}  # not strict: a link loop, or a chain of links, is no crash
    damaged = builddir.REBUILD_DAMAGED if builddir.MANIFEST in named else _NOT_A_BUILD
    try:
        data = builddir.parse_manifest(path, builddir.read_manifest(path, follow_links=True))
    except builddir.ManifestUnreadable as error:
        if dead := dead_link_on(path):  # a link that leads nowhere is to mend, not a folder to build into
            link, problem = dead
            aim = f"a build's {builddir.MANIFEST}" if link.name == builddir.MANIFEST else "a build folder"
            said = f"{link.absolute()}: {problem}: point it at {aim}, or pass {option}"
            raise ManifestError(path, [said], prefixed=False) from None
        if error.missing:
            raise ManifestError(path, [_no_build(location, option, given, above, config)], prefixed=False) from None
        if error.denied:  # not a damaged build: deleting and rebuilding it would not mend a permission
            raise ManifestError(path, [f"{error.reason}; {builddir.read_permission(command)}"]) from None
        raise ManifestError(path, [f"{error.reason}; {damaged}"]) from None
    if newer := builddir.newer_format(data):
        raise ManifestError(path, [newer])
    if problems := manifest_problems(data):
        raise ManifestError(path, problems, hint=f"Not a build manifest: {damaged}.")
    return Manifest(path, data)


def printable(manifest: Manifest) -> Manifest:
    """`manifest` with every text in it (keys too) `visible`, for a report that prints it. The schema leaves titles,
    kinds, URIs and encodings free text, and a build directory may come from anywhere (a baseline committed in a
    pull request, a manifest written by hand): a line break in a kind would start a forged line of the report, an
    escape sequence reach the terminal. A build capidx made holds no such character, so its report is unchanged."""
    return Manifest(manifest.path, _visible_texts(manifest.data))


def _visible_texts(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, Mapping):
        return {visible(key): _visible_texts(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_visible_texts(item) for item in value]
    return value


def _no_build(location: Path, option: str, given: bool, above: Path | None = None, config: str | None = None) -> str:
    """Where it looked, as `capidx serve` says it, and the ways out for a command that reads a build and writes none.
    A folder given by its flag (`given`) is not passed again: it was named by mistake, or not built yet (`capidx
    build --out` it, when it is nothing or empty: the build refuses a folder holding something else). The folder
    looked in when none is given may be another tool's `build/`: a build written elsewhere is then passed. Looked in
    by default from a subfolder of a project (`above`: its capidx.yaml), with nothing of a build there, the project's
    build is (`above_build_hint`). Each `capidx build` said names `config` (`--config`), when given."""
    settings = "" if config is None else f" --config {shlex.quote(config)}"
    folder = path_kind(location) is PathKind.FOLDER
    where = f"no build at {location.absolute()}"
    remains = builddir.build_remains(location) if folder else "empty"
    if folder:
        where += f" ({builddir.MANIFEST} is missing)"
    if above is not None and not given and remains in ("empty", "nothing of a build"):
        return f"{where}: {above_build_hint(above, Path.cwd())}"
    if given and (named := builddir.named_without_build(location, option.split()[0], settings)) is not None:
        return f"{where}: {named}"
    if remains == "nothing of a build":
        return (
            f"{where}: it holds no capidx build: pass {option} naming the folder `capidx build` wrote, or have it"
            f" write one to a new or empty folder (`capidx build --out DIR{settings}`) and pass that"
        )
    if remains == "part of a build":
        if given:
            return f"{where}: {builddir.move_away(f' --out {shlex.quote(str(location))}{settings}')}"
        return f"{where}: {builddir.move_away(settings)}, or pass {option}"
    return f"{where}: run `capidx build{settings}` first, or pass {option}"


def above_build_hint(above: Path, cwd: Path) -> str:
    """`no capidx.yaml here; ../../capidx.yaml is above: run capidx in ../.., or pass --build ../../build`: the build
    folder the capidx.yaml `above` names (`paths.out`), read as `capidx build` there reads it; `--config` and the file
    itself when it does not load without error or may not be read (report and inject take both)."""
    from capidx.compiler.config import load_config

    def build_named(config: Path) -> Path | None:
        settings, problems = load_config(config, cwd)
        return None if any(problem.is_error for problem in problems) else settings.out

    return build_hint(above, cwd, build_named)
