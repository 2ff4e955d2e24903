"""capidx's cache folder for this user, where compiled schema checks and templates are kept between runs.

`$XDG_CACHE_HOME/capidx`, or `~/.cache/capidx` (the XDG default) when XDG_CACHE_HOME is unset or not absolute: never
a folder every user of the machine may write in, such as the temp directory, where another user could put the code
capidx runs (the entries are compiled code) or a folder where an entry belongs (then every run fails). The folder is
made private (mode 0700) and used only while it is a real folder of this user's that nobody else may write in; each
entry is checked to be this user's file before it is read (`fastschema`, `render.environment`). A cache that cannot be
used only means compiling again.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CACHE_ENV = "XDG_CACHE_HOME"


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/capidx`, or `~/.cache/capidx` when it is unset or not absolute."""
    base = os.environ.get(CACHE_ENV, "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "capidx"


def private_cache_dir() -> Path | None:
    """The cache folder, made if missing, when it is a folder (not a link) of this user's that no one else may write
    in; None otherwise, where it cannot be made, or when it is no absolute path (a relative HOME would put it in
    whatever folder a command runs in: a project, a build)."""
    try:
        folder = cache_dir()
        if not folder.is_absolute():
            return None
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = os.lstat(folder)
        mine = info.st_uid == os.getuid()
    except (OSError, RuntimeError, AttributeError):  # RuntimeError: no home folder; AttributeError: no getuid
        return None
    return folder if stat.S_ISDIR(info.st_mode) and mine and not info.st_mode & 0o022 else None


def owned(descriptor: int) -> bool:
    """Whether the open file is this user's: an entry someone else wrote is never executed."""
    try:
        return os.fstat(descriptor).st_uid == os.getuid()
    except (OSError, AttributeError):
        return False
