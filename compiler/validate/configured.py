"""A path capidx.yaml names that is not there: reported at its key, with the near name the user most likely meant.

`paths.agents: agnets` used to surface as the catalog's own problem (`agnets: catalog directory not found (run
capidx where agents/ is …)`), as if the user had run capidx in the wrong folder; the mistake is the setting, so
the problem is put where the setting is written: `capidx.yaml:2:11: $.paths.agents: …`. Paths from flags keep
their own wording (the user sees the flag they typed).
"""

from __future__ import annotations

import difflib
import itertools
import os
from pathlib import Path, PurePath

from capidx.compiler.config import Config
from capidx.compiler.diagnostics import Diagnostic
from capidx.schema.homepath import dead_link
from capidx.schema.pathkind import PathKind, folder_kind, path_kind, refusal

_MAX_ENTRIES = 10_000  # entries of one folder compared with a misspelled name: bounded work in a huge folder
# setting -> (what it names, whether it is a folder, the way out when no near name exists)
_WHAT = {
    "agents": ("catalog directory", True, "correct paths.agents, or pass --agents DIR"),
    "aliases": ("alias table", False, "correct paths.aliases, or set it to null for no alias table"),
    "schema": ("schema file", False, "correct paths.schema, or remove it to use the bundled schema"),
    "templates": ("templates folder", True, "correct paths.templates, or remove it to use the bundled templates"),
}


def missing(config: Config, name: str) -> Diagnostic | None:
    """The problem of setting `name` (`agents`, `aliases`, `schema`, `templates`) when capidx.yaml gives it and
    nothing is there, or a file where a folder belongs (`paths.templates` naming one template would otherwise be
    passed over in silence, the bundled templates used); None when the file does not give it (a flag did, or the
    default applies) or it exists. (A folder where a file belongs is said when the file is read.)"""
    origin = config.origin(name)
    path = getattr(config, name)
    if origin is None or path is None:
        return None
    what, folder, way_out = _WHAT[name]
    kind = folder_kind(path) if folder else path_kind(path)
    if said := refusal(kind, folder):
        # not absent, nor empty (walked, a folder not listed would seem so): no correction of the setting would help
        problem, needed = said
        return origin.diagnostic(f"{what} '{origin.value}' {problem}", needed)
    if kind is PathKind.NOTHING:
        near = near_name(Path(path), folder)
        hint = f"did you mean '{PurePath(origin.value).with_name(near).as_posix()}'?" if near else way_out
        return origin.diagnostic(f"{what} '{origin.value}' does not exist", hint)
    if folder and kind is PathKind.OTHER:
        return origin.diagnostic(f"{what} '{origin.value}' {no_folder(path)}", way_out)
    return None


def no_folder(path: Path) -> str:
    """Why `path`, which is there, is no folder. A link that leads nowhere is said to be one, naming where it points,
    as a broken link to a file is when it is read (`load.read_limited`): "is not a folder" sent the user looking for a
    file where there is none. For a folder capidx.yaml names, and one a flag names (`discover`)."""
    problem = dead_link(path)
    return f"is a {problem}" if problem else "is not a folder"


def near_name(path: Path, folder: bool) -> str | None:
    """The name in `path`'s folder closest to its own (a folder, or a file, as `folder` says), if any is close."""
    try:
        with os.scandir(path.parent) as entries:
            names = [entry.name for entry in itertools.islice(entries, _MAX_ENTRIES) if _kind(entry) == folder]
    except OSError:
        return None
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    return close[0] if close else None


def _kind(entry: os.DirEntry[str]) -> bool | None:
    """Whether an entry is a folder (True) or a file (False); None when it is neither or cannot be told."""
    try:
        return True if entry.is_dir() else False if entry.is_file() else None
    except OSError:
        return None
