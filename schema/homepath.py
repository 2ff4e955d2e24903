"""A leading `~` in a configured path means the home folder, for the compiler and the server alike.

capidx.yaml, the serve variables (`CAPIDX_BUILD`) and options passed without a shell (`--out=~/x`, an MCP
client's argument list) reach capidx with the `~` a shell would have expanded. Taken as written it names a
folder called `~` inside the project, which a later `rm -rf ~` meant for it would take for the home folder.
`HomePath` is the click type of every path option and argument of the compiler and the server. One that must
exist is refused as unreadable, with the permission needed, when it is inside a folder this user may not search
(click said it does not exist). Whether a path may be read or listed is left to the command, which says it in the
words every command uses for such a path (`pathkind.refusal`): click's own check said only "Directory 'x' is not
readable.", without the permission needed.

The words for a configured path that is empty or a link leading nowhere live here too, so that validate, build and
serve say the same of the same path.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import click

from capidx.schema.pathkind import FILE_PERMISSION, SEARCH_PERMISSION, PathKind, path_kind
from capidx.schema.realpath import real_path

_HOME_PREFIXES = ("~/", "~" + os.sep)
# What an empty path is told, as an option or as serve's settings take it (`--agents "$AGENTS"` with it unset).
EMPTY_PATH = "an empty path names nothing: give a path, or leave it out"  # a flag, [BUILD] or a setting alike
LINK_LOOP = "symbolic link loop"


def broken_link(path: str | os.PathLike[str]) -> str:
    """What a symbolic link is whose target does not exist, naming the target; through a chain of links, also the
    path at its end, the one missing ('a -> b -> gone': b exists, as a link)."""
    target = os.readlink(path)
    end = real_path(path)
    if os.path.lexists(os.path.join(os.path.dirname(os.fspath(path)), target)) and not os.path.lexists(end):
        return f"broken symbolic link (target {target!r} leads to {end!r}, which does not exist)"
    return f"broken symbolic link (target {target!r} does not exist)"


def dead_link(path: str | os.PathLike[str]) -> str | None:
    """What a symbolic link that leads nowhere is: a `LINK_LOOP`, or a `broken_link`; None for a path that is no such
    link (one that leads somewhere, or none at all). Said instead of "not a folder" or "no build": what to mend is the
    link."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return LINK_LOOP
        if error.errno in (errno.ENOENT, errno.ENOTDIR) and os.path.islink(path):
            return broken_link(path)
    return None


def unreadable(path: str | os.PathLike[str], error: OSError) -> tuple[str, str | None]:
    """Why a file cannot be looked at or opened, and what to do about it (or None), in the words every command uses
    for the same file: validate and build for a data file, serve for its settings."""
    if error.errno == errno.ELOOP:
        return LINK_LOOP, "point the link at a real file"
    if error.errno == errno.ENOENT:
        return (broken_link(path) if os.path.lexists(path) else "does not exist"), None
    if error.errno == errno.EACCES:
        return "permission denied", FILE_PERMISSION
    return f"cannot read: {error.strerror or error}", None


def dead_link_on(path: Path) -> tuple[Path, str] | None:
    """The path, or the nearest folder above it that is there, with what is wrong with it when it is a link that leads
    nowhere (`dead_link`): `no build at dangling/sub` would send the user to a build that cannot be written there."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            problem = dead_link(candidate)
            return (candidate, problem) if problem else None
    return None


def expand_home(text: str) -> str:
    """`text` with a leading `~` or `~/` replaced by the home folder; anything else (`~user`, `a/~`) as written.
    Without a known home folder the text is returned unchanged."""
    if (text == "~" or text.startswith(_HOME_PREFIXES)) and os.environ.get("HOME", "unset").strip():
        return os.path.expanduser(text)  # an empty HOME would make '~/x' '/x' (Python's rule): left as written
    return text


class HomePath(click.Path):
    """`click.Path` that expands a leading `~` first, so that click's own checks (`exists=True`) and every
    command see the path the user meant: `--agents=~/cat` and `capidx init '~/new'` reach us unexpanded
    when no shell stands between (an `=` joined flag, a quoted word, a client's argument list)."""

    def __init__(self, **options: Any) -> None:
        """click's `readable` check off: a folder this user may search but not list (mode 111) or not search (000),
        a file it may not read, is refused by the command that reads it, in capidx's words and with the permission
        needed, with the exit code of an unreadable input (2); click said "is not readable" and printed the usage."""
        super().__init__(**{**options, "readable": False})

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            if not value.strip():  # not the current folder
                self.fail(EMPTY_PATH, param, ctx)
            value = expand_home(value)
        if self.exists and isinstance(value, str | os.PathLike) and path_kind(value) is PathKind.DENIED:
            # click says "does not exist" of a path it may not look at, which sends the user looking for a typo
            needed = SEARCH_PERMISSION if self.dir_okay else FILE_PERMISSION
            shown = click.format_filename(value)
            self.fail(f"{self.name.capitalize()} {shown!r} cannot be read: permission denied ({needed}).", param, ctx)
        return super().convert(value, param, ctx)


def build_argument(**path: Any) -> Any:
    """The optional `[BUILD]` argument of `serve` and `report`: the build directory as `--build` takes it (`path`:
    its click type's settings), for a reader who types `capidx serve build` (click said "Got unexpected extra
    argument"). `one_build` merges the two."""
    return click.argument("build_positional", metavar="[BUILD]", required=False, type=HomePath(**path))


def one_build(argument: Any, option: Any) -> Any:
    """The build directory given as `[BUILD]` or as `--build`: both is refused unless they name the same path, so
    that neither is dropped unsaid."""
    if argument is None or option is None or _folder(argument) == _folder(option):
        return option if argument is None else argument
    raise click.UsageError(f"the build directory is given twice ({argument} and --build {option}): give it once")


def _folder(path: Any) -> Path:
    """The folder a build path names, for `one_build` to compare: `build`, `./build/` and its absolute path are one
    folder, and so is a build's manifest.json, which `report` takes for its folder."""
    folder = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    return folder.parent if folder.name == "manifest.json" and folder.is_file() else folder
