"""What a path the user names is, as far as this user may look: a folder, something else, nothing, or refused.

Python 3.11's `Path.is_dir`, `Path.exists` and `Path.is_file` answer False for a path that is not there, but
raise PermissionError for one inside a folder this user may not search (a folder above it, or one a link in it
leads through): a command asking them about a path the user gave ended in a traceback (exit 1). `os.path.isdir`
and `os.path.lexists` answer False instead, which is no better: the user is told the path does not exist, and
looks for a typing error where a permission is missing. `path_kind` tells the four apart, so that a command can
say which permission it needs. `folder_kind`, for a folder capidx looks inside of, tells one more: a folder this
user may search but not list, which `glob` and `os.walk` pass over as if it were empty. Standard library only: the
compiler and the server may both use it.
"""

from __future__ import annotations

import enum
import os
import stat

# What a folder, or a file, this user may not look at needs: one wording for every command that says so.
SEARCH_PERMISSION = (
    "the user running capidx needs read and search permission on the folder, the folders above it and, for a link,"
    " the folders it leads through"
)
FILE_PERMISSION = (
    "the user running capidx needs read permission on the file, and search permission on the folders above it and,"
    " for a link, the folders it leads through"
)
# What a folder this user may search but not list (mode 111) needs: its files can be opened by name, but not found.
LIST_PERMISSION = "the user running capidx needs read permission on the folder, to list what it holds"


class PathKind(enum.Enum):
    FOLDER = "folder"  # a folder, through any links
    OTHER = "other"  # there, and no folder: a file, a device, a link that leads nowhere or round in a loop
    NOTHING = "nothing"  # nothing by that name (or a folder above it is no folder)
    DENIED = "denied"  # this user may not look: a folder above it, or one a link in it leads through, is not searchable
    UNLISTED = "unlisted"  # a folder this user may search but not list (mode 111): only `folder_kind` tells it


def path_kind(path: str | os.PathLike[str]) -> PathKind:
    """What `path` is, following links; never an exception (an embedded NUL is NOTHING, as `os.path.isdir` has it)."""
    try:
        return PathKind.FOLDER if stat.S_ISDIR(os.stat(path).st_mode) else PathKind.OTHER
    except PermissionError:
        return PathKind.DENIED
    except (OSError, ValueError):
        pass
    try:  # not followed: is there an entry at all (a broken link, a loop), or none?
        os.lstat(path)
    except PermissionError:
        return PathKind.DENIED
    except (OSError, ValueError):
        return PathKind.NOTHING
    return PathKind.OTHER


def refusal(kind: PathKind, folder: bool = True) -> tuple[str, str] | None:
    """What is said of a path of `kind` that this user may not look at (DENIED) or list (UNLISTED), and the permission
    it needs (a `folder`'s, or a file's), in the one wording every command uses; None when it may."""
    if kind is PathKind.DENIED:
        return "cannot be read: permission denied", SEARCH_PERMISSION if folder else FILE_PERMISSION
    if kind is PathKind.UNLISTED:
        return "cannot be listed: permission denied", LIST_PERMISSION
    return None


def folder_kind(path: str | os.PathLike[str]) -> PathKind:
    """`path_kind`, for a path capidx means to look inside of: a folder this user may not search itself (mode 000 or
    644) is DENIED too. It is seen from above, so `path_kind` calls it a FOLDER, but nothing in it can be looked at
    (Path.exists of a file in it raises), and walked it would seem empty. A folder this user may search but not list
    (mode 111) is UNLISTED: a file in it can be opened by name, but `os.scandir`, and so `glob` and a walk, find
    none, so it too would seem empty."""
    kind = path_kind(path)
    if kind is not PathKind.FOLDER:
        return kind
    if path_kind(os.path.join(path, ".")) is PathKind.DENIED:
        return PathKind.DENIED
    return PathKind.FOLDER if _listable(path) else PathKind.UNLISTED


def _listable(folder: str | os.PathLike[str]) -> bool:
    """Whether this user may list `folder`; only a refusal says no (a folder gone meanwhile is no matter of
    permission: whoever looks next finds it missing)."""
    try:
        with os.scandir(folder):
            return True
    except PermissionError:
        return False
    except (OSError, ValueError):
        return True
