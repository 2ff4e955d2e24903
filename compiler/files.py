"""Files of the user's that capidx reads or replaces, one way each.

Reading a file whose size nobody vouches for: at most a limit, decided by what was read, not by `stat`.
Catalogs, templates and memory files may come from a pull request; a file can grow between `stat` and
`read`, and a pipe or device has no size, so every reader takes one byte more than its limit and checks.

Replacing a file whole or not at all (`capidx init`'s scaffold, `capidx inject`'s memory files, the report of
`capidx report -o`, the documents `capidx verify --write` edits): the new bytes go to a temporary file in the
same folder (a rename across file systems is no rename), created exclusively and never through a link, given
the mode wanted, then renamed over the file; on any failure the temporary file is removed. `write_beside` is
the first half, for a caller that renames several files only once all are written.

Walking a folder the user gives (the catalog, the templates folder): `walk`, without recursion, stopping at a folder
below it that this user may not list (`FolderUnreadable`), which passed over would seem empty. `walk_templates` walks
a templates folder as the build lists it, for the build and for validate alike.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from capidx.compiler.errors import InvalidError, UsageError
from capidx.schema.pathkind import PathKind, folder_kind, path_kind, refusal
from capidx.schema.wording import shown as shown  # where validate's reporters, build and serve find it

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
MAX_TEMPLATE_FILES = 10_000  # in the user's templates folder, subfolders included
# Version control's own folders, at any depth of the user's templates folder: never walked. Their files change with
# every commit (as inputs of a computed include, no build would stay up to date), and `.git` is often another user's
# (a checkout made by CI): one this user may not list stopped the build. Other hidden folders are walked: a template
# may include `.parts/footer.md`. Nor is a file in one ever read as a template (`version_control_part`).
VCS_FOLDERS = frozenset({".git", ".hg", ".svn"})


def read_at_most(path: str | Path, limit: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `limit` bytes; an unreadable file raises `OSError`."""
    with open(path, "rb") as stream:
        data = stream.read(limit + 1)
    return None if len(data) > limit else data


def write_beside(path: Path, data: bytes, mode: int | None, tag: str = "capidx", *, make_folder: bool = True) -> Path:
    """A new temporary file `.<tag>-<16 hex digits>.tmp` in `path`'s folder (created, with its parents, when
    missing, unless `make_folder` is false: then a missing folder is the `OSError`) holding `data`, with `mode`
    (None: what the umask gives a new file); the caller renames it over `path` or removes it. On failure nothing
    is left and the `OSError` is raised.

    Given a `mode`, the file is made for its owner alone (0600) and given `mode` only once it holds `data`: a file
    made with the umask's mode (0644) would let anyone open it, and keep reading it, while the text of a document
    only its owner may read (0600) is written into it.

    The name is short and of fixed length, not `path`'s name with more added: a file name of 245 bytes fits the
    255 a folder entry may have, a temporary name built from it did not (ENAMETOOLONG), so the file could not be
    written at all. 64 random bits and an exclusive create keep it unique."""
    folder = path.parent
    if make_folder:
        folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{tag}-{secrets.token_hex(8)}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666 if mode is None else 0o600)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
        if mode is not None:
            os.chmod(temporary, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary


def write_whole(path: Path, data: bytes, mode: int | None, *, make_folder: bool = True) -> None:
    """Replace (or create) `path` with `data` in one rename (`write_beside`, then `os.replace`)."""
    temporary = write_beside(path, data, mode, make_folder=make_folder)
    try:
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class FolderUnreadable(UsageError):
    """A folder below a walked one that this user may not list (exit 2): `problem` and `needed` say it as the
    diagnostics of validate say a catalog folder that cannot be read, and the message names it as they do
    (`shown`)."""

    def __init__(self, folder: str, kind: PathKind) -> None:
        self.folder = folder
        # not listed (UNLISTED), or not searchable either (DENIED, mode 000): its entries could not be looked at
        said = refusal(kind if kind is PathKind.DENIED else PathKind.UNLISTED)
        assert said is not None  # both kinds are refusals
        self.problem, self.needed = said
        super().__init__(f"{shown(folder)}: {self.problem} ({self.needed})")


class TooManyTemplates(InvalidError):
    """A templates folder holding more than MAX_TEMPLATE_FILES files, subfolders included (`paths.templates: /`): no
    folder of templates, and one the build would otherwise walk to its end. The build stops at it (exit 1), and
    validate says it beforehand in the same words (`problem`, `hint`), the folder named as validate names it
    (`shown`)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = os.fspath(folder)
        self.problem = f"more than {MAX_TEMPLATE_FILES:,} files: not a templates folder"
        self.hint = "give paths.templates or --templates a folder of templates and the files they include"
        super().__init__(f"{shown(folder)}: {self.problem} ({self.hint})")


def walk(
    top: str | Path, refused: Callable[[FolderUnreadable], object] | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top)` as capidx uses it (top down, links to folders listed but not followed; the caller may prune
    `subfolders` in place), in the same order, without recursion. Python 3.11's `os.walk` recurses once per level, so
    a catalog or templates folder nested some 1,000 folders deep (which a pull request can hold) would end `validate`
    and `build` in a RecursionError.

    A folder below `top` that this user may not list (mode 111, or 000), or may list but not search and so cannot tell
    what an entry of it is (mode 644, with a symbolic link in it), raises `FolderUnreadable`, or is given to
    `refused` and passed over: `os.walk` passes it over in silence, and an agent's folder of the catalog dropped out
    of the build unsaid. `top` itself, and a folder that cannot be listed for another reason (removed meanwhile), are
    passed over: the caller says what `top` is (`folder_kind`), in its own words, before or after the walk. So is a
    `top` this user may list but not search (mode 644): walked, its first subfolder was said not to be readable, where
    the build's listing of a templates folder came before validate could name the templates folder itself."""
    start = os.fspath(top)
    if path_kind(os.path.join(start, ".")) is PathKind.DENIED:
        return
    stack = [start]
    while stack:
        folder = stack.pop()
        subfolders: list[str] = []
        files: list[str] = []
        untold = False  # an entry whose kind this user may not look at
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError as error:
                        is_dir, untold = False, untold or isinstance(error, PermissionError)
                    (subfolders if is_dir else files).append(entry.name)
            if untold and folder != start and path_kind(os.path.join(folder, ".")) is PathKind.DENIED:
                # listed but not searchable (mode 644): a link in it, the agent's `capabilities` folder, was taken for
                # a file, neither walked nor said to be a linked folder, and its agent dropped out unsaid
                raise PermissionError(folder)
        except PermissionError:
            if folder == start:
                continue
            if refused is None:
                raise FolderUnreadable(folder, folder_kind(folder)) from None
            refused(FolderUnreadable(folder, folder_kind(folder)))
            continue
        except OSError:
            continue
        yield folder, subfolders, files
        stack += [path for name in reversed(subfolders) if not os.path.islink(path := os.path.join(folder, name))]


def walk_templates(
    top: str | Path, refused: Callable[[FolderUnreadable], object] | None = None
) -> Iterator[tuple[str, list[str]]]:
    """(folder, files) of a templates folder, as `walk` gives them, less version control's folders (`VCS_FOLDERS`):
    one walk for the build, which lists the templates, and for validate, which says beforehand what would stop it.
    Past MAX_TEMPLATE_FILES files it raises `TooManyTemplates`, before giving the folder that passes the limit."""
    seen = 0
    for folder, subfolders, files in walk(top, refused):
        subfolders[:] = [name for name in subfolders if version_control_part([name]) is None]
        seen += len(files)
        if seen > MAX_TEMPLATE_FILES:
            raise TooManyTemplates(top)
        yield folder, files


def version_control_part(parts: Iterable[str]) -> str | None:
    """The first of a path's `parts` that is version control's folder (`VCS_FOLDERS`), in any case, or None. A
    template may not be read from one: a pull request's template naming `.git/config` (with `paths.templates: .`)
    would copy into the build what a CI checkout keeps there, its token among it. Any case, as a file system that
    ignores case (macOS, Windows) opens `.GIT/config` as `.git/config`."""
    return next((part for part in parts if part.casefold() in VCS_FOLDERS), None)
