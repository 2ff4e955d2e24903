"""The capidx.yaml of a folder above or below the working one, named by every command run elsewhere in a project.

capidx reads the working folder's capidx.yaml only (or --config's), like mkdocs: run from a subfolder of a project
(`agents/claude-code/`), or from the top of a repository whose catalog lives in a subfolder (`tools/capidx/`, as
`capidx init tools/capidx` makes it), validate and build find no catalog there, and report, serve and inject no
build. Each names the capidx.yaml of the nearest folder above, else below, and how to use it (`above_hint`), as long
as no capidx.yaml is in force and no flag named the catalog or the build. One lookup for the compiler and the
server, which import nothing of each other.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from capidx.schema.realpath import leads_out

CONFIG_FILE_NAME = "capidx.yaml"
CONFIG_LEVELS_UP = 8  # how far above the working folder a capidx.yaml is looked for, to name it in a hint
CONFIG_LEVELS_DOWN = 3  # and how far below ('tools/capidx/capidx.yaml' is two down)
# Folder entries read looking below, at most: a repository's top may hold thousands (a fork's pull request in CI
# too), and a hint is not worth more. Hidden folders and those of installed packages are not looked into.
ENTRIES_READ_BELOW = 5_000
_NOT_LOOKED_INTO = frozenset({"node_modules", "site-packages", "__pycache__", "venv", "env"})


def config_above(root: Path) -> Path | None:
    """The nearest capidx.yaml in a folder above `root` (no capidx.yaml there): capidx reads only the working
    folder's, like mkdocs, so one run from a subfolder of a project (`agents/`) finds no catalog, or no build; it is
    named."""
    for folder in list(root.parents)[:CONFIG_LEVELS_UP]:
        if os.path.isfile(found := folder / CONFIG_FILE_NAME):
            return found
    return None


def config_near(root: Path) -> Path | None:
    """The nearest capidx.yaml above `root` (`config_above`), else the nearest below it (`config_below`)."""
    return config_above(root) or config_below(root)


def config_below(root: Path) -> Path | None:
    """The capidx.yaml of the shallowest folder below `root` that has one, looked for `CONFIG_LEVELS_DOWN` levels
    down, reading `ENTRIES_READ_BELOW` folder entries at most, never through a symbolic link nor into hidden folders
    or installed packages: a monorepo's top, where `capidx init tools/capidx` put the CI files, names its catalog's.
    None when several folders as shallow have one (a folder of projects, a home folder): which one is meant is not
    ours to guess, and naming the first by name sent users into another project."""
    level, read = [root], 0
    for _ in range(CONFIG_LEVELS_DOWN):
        deeper: list[Path] = []
        for folder in level:
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        read += 1
                        if read > ENTRIES_READ_BELOW:
                            return _the_one(_configs(deeper))
                        looked_into = entry.name[:1] != "." and entry.name not in _NOT_LOOKED_INTO
                        if looked_into and entry.is_dir(follow_symlinks=False):
                            deeper.append(Path(entry.path))
            except OSError:  # not listable: looked past
                continue
        if found := _configs(deeper):
            return _the_one(found)
        level = sorted(deeper)
    return None


def _configs(folders: list[Path]) -> list[Path]:
    return [config for folder in folders if os.path.isfile(config := folder / CONFIG_FILE_NAME)]


def _the_one(found: list[Path]) -> Path | None:
    """The one capidx.yaml found as shallow, or None for several: which is meant is not ours to guess."""
    return found[0] if len(found) == 1 else None


def readable(above: Path) -> bool:
    """Whether the hint may read the capidx.yaml `above` for the build it names: not when it is a symbolic link
    leading out of its folder, as the working folder's is refused (`realpath.leads_out`: a pull request may commit
    one leading to any file of the machine, and the hint would quote that file's `paths.out`); it is then named
    with --config, unread."""
    return leads_out(above) is None


def above_hint(above: Path, cwd: Path, option: str = "--config", value: Path | None = None) -> str:
    """`no capidx.yaml here; ../../capidx.yaml is above: run capidx in ../.., or pass --config ../../capidx.yaml`, the
    capidx.yaml `above` named relative to the working folder `cwd`. `option` and `value` are what to pass instead
    (`--build` and the build folder that capidx.yaml names): `value` relative to `cwd` when it is in that project,
    else by its whole path; the capidx.yaml itself when not given."""
    config = Path(os.path.relpath(above, cwd))
    given = config if value is None else _named(value, above.parent, cwd)
    where = "above" if config.parts[0] == os.pardir else "below"  # `config_near`
    return f"no capidx.yaml here; {config} is {where}: run capidx in {config.parent}, or pass {option} {given}"


def _named(path: Path, project: Path, cwd: Path) -> Path:
    """`path` relative to `cwd` when it lies in the `project` folder (`../../build`), else by its whole path: a build
    written elsewhere (`paths.out: /srv/capidx`) reads better as it is than as `../../../../srv/capidx`."""
    whole = Path(os.path.abspath(path))
    inside = os.path.commonpath((whole, os.path.abspath(project))) == os.path.abspath(project)
    return Path(os.path.relpath(whole, cwd)) if inside else whole


def build_hint(above: Path, cwd: Path, build_named: Callable[[Path], Path | None]) -> str:
    """`above_hint` with the build folder the capidx.yaml `above` names (`build_named`: read by the caller's own
    settings reader, None when the file does not load without error), or with `--config` and the file itself when it
    does not load or may not be read (`readable`: a link out of its folder is named, never read)."""
    out = build_named(above) if readable(above) else None
    return above_hint(above, cwd) if out is None else above_hint(above, cwd, "--build", out)
