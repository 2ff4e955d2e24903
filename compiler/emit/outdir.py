"""Which folder `capidx build --out` may replace, and which leftovers a build may remove.

A build replaces its output folder as a whole (`compiler/emit/write.py`), so a mistaken `--out` would delete
whatever the folder held: a project root, a web `public/` folder with a PWA `manifest.json` (issue #14).
Two rules keep that from happening, checked before anything is read, written or removed:

- **Where**: `--out` is never `/`, the user's home, the project root (the folder of the capidx.yaml in
  force, or the cwd), the working folder, the catalog folder or the templates folder, nor a parent of any
  of them, nor a folder inside the catalog, nor a folder inside a capidx build (which the next build of
  that one would then refuse to replace, for holding a folder its manifest does not list).
- **What**: a folder that exists must be empty, or provably a capidx build: its `manifest.json` is a
  regular file that parses and is a build manifest by `schema/build-manifest.schema.json`, and the folder
  holds nothing that manifest does not list (no other file, folder, link or device) but the few files an
  operating system's file browser writes into any folder it shows (`os_metadata`), which go with the old build.

Anything else is an `OutputError` (exit 2) naming the folder and the reason. The check is repeated just
before the swap (`recheck`), so a file put into the folder while the build ran is not lost either, and once
more on what the swap moved aside (`removal_problem`), since `out` can be replaced between the two.

Leftovers of killed builds (`.capidx-build-*`, `.capidx-old-*`) are removed only when they are
provably ours: they hold the marker file the build writes into them (`write.MARKER`), or they pass the
same build check (beside, perhaps, a part of the marker). A `.capidx-new-*` folder (a temporary directory
being made) is removed when marked, or when it holds nothing but a part of the marker: that is all a build
killed while making it leaves, and removing it loses nothing. Symbolic links are never followed.

One leftover is not removed: the previous build of a folder that is missing, set aside by a swap that was
killed before the new build took its place (`.capidx-old-<its name>-*`, `write.old_name`). It is the only
copy of that build, so the next build of that folder puts it back first (`restore_interrupted`), once
`check_location` and `check_kind` have accepted the folder, whether that build then succeeds or fails; a build
whose folder is refused, and builds of other folders beside it, leave it alone.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from capidx.compiler.emit.manifest import is_intact, read_previous
from capidx.compiler.emit.write import (
    MARKER,
    MARKER_TEXT,
    NEW_PREFIX,
    OLD_PREFIX,
    TEMP_PREFIX,
    held,
    owner_of,
    owner_tag,
    put_back,
    remove_ours,
)
from capidx.compiler.errors import UsageError
from capidx.compiler.files import version_control_part
from capidx.compiler.validate.manifests import is_build, manifest_problems
from capidx.schema import builddir
from capidx.schema.builddir import MANIFEST
from capidx.schema.realpath import real_path

CHOOSE_FOR = "folder for --out"  # the option a refusal names (the build names `paths.out` instead when it set it)
_CHOOSE = f"Choose a new or empty {CHOOSE_FOR}."
_FOREIGN_NAMED = 5  # entries named of a folder that is no build; the listing stops one past them


class OutputError(UsageError):
    """The output directory may not be used or replaced (exit 2); the previous build stays as it is."""


@dataclass(frozen=True)
class Replaceable:
    """What `check_output_dir` found: the folder's manifest (None: absent or empty folder) and what it lists."""

    manifest: bytes | None = None
    listed: frozenset[str] = frozenset()


def check_location(out: Path, protected: Iterable[tuple[Path, str]], catalog: Path) -> None:
    """Refuse an `--out` that is `/`, the home folder, the catalog or another `protected` folder (with what
    it is), a parent of one of them, a folder inside the catalog, or inside version control's folder: a pull
    request's `paths.out: .git/refs/tags` (empty in a fresh clone) became a build there, each of its files a
    broken tag for every later git command of the job; inject, templates and the catalog never touch `.git`
    either."""
    target = _resolved(out)
    if (part := version_control_part(target.parts)) is not None:
        raise OutputError(
            f"{out}: is inside {part}, version control's folder; refusing to write there (a checkout keeps its"
            f" refs, hooks and credentials in it). {_CHOOSE}"
        )
    inside = _resolved(catalog)
    if target != inside and target.is_relative_to(inside):
        raise OutputError(f"{out}: is inside the catalog folder {catalog}; refusing to write there. {_CHOOSE}")
    if (build := enclosing_build(target)) is not None:
        raise OutputError(
            f"{out}: is inside the capidx build directory {build}; refusing to write there (the next build of"
            f" {build} would refuse to replace it, for holding a folder its {MANIFEST} does not list). {_CHOOSE}"
        )
    named = [(Path(target.anchor), "the file system root"), *protected, (catalog, "the catalog folder")]
    if (home := _home()) is not None:
        named.append((home, "your home folder"))
    resolved = [(_resolved(folder), folder, what) for folder, what in named]
    for folder, _, what in resolved:
        if folder == target:
            raise OutputError(f"{out}: is {what}; refusing to replace it. {_CHOOSE}")
    for folder, given, what in resolved:
        if folder.is_relative_to(target):
            raise OutputError(f"{out}: holds {what} ({given}); refusing to replace it. {_CHOOSE}")


def enclosing_build(target: Path) -> Path | None:
    """The nearest folder above `target` that is marked as a capidx build (its manifest.json is a regular
    file and a build manifest), whatever else it holds: a build written inside it would become a folder
    that build's manifest does not list."""
    return next((folder for folder in target.parents if is_build(folder)), None)


def check_kind(out: Path) -> bool:
    """Whether `out` exists; OutputError when it is anything but a directory (a link is not followed)."""
    try:
        info = os.lstat(out)
    except FileNotFoundError:  # to be made: the writer says if it cannot be
        return False
    except NotADirectoryError:  # a folder on the way is a file ('notes.txt/build'): nothing can be made there
        blocker = next((up for up in out.parents if os.path.lexists(up) and not os.path.isdir(up)), out.parent)
        raise OutputError(f"{out}: {blocker} is a file, not a folder. {_CHOOSE}") from None
    except OSError as exc:
        raise OutputError(f"{out}: cannot be examined ({exc.strerror or exc}). {_CHOOSE}") from None
    if stat.S_ISLNK(info.st_mode):
        raise OutputError(f"{out}: is a symbolic link; refusing to replace it. {_CHOOSE}")
    if not stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{out}: exists and is not a directory. {_CHOOSE}")
    return True


def check_output_dir(out: Path) -> Replaceable:
    """Whether the build may replace `out`: it does not exist, is empty, or is provably a capidx build."""
    if not check_kind(out):
        return Replaceable()
    found, reason = examine(out)
    if reason is not None:
        raise OutputError(_newer_build(out) or _not_a_build(out, reason))
    return found


def _newer_build(out: Path) -> str | None:
    """The refusal of a build a newer capidx wrote: it is a build, and upgrading, not deleting it, is the way on."""
    raw, _ = manifest_bytes(out)
    newer = builddir.newer_format(None if raw is None else _parse(raw)[0], "rebuild")
    return newer and f"{out}: refusing to replace a build {newer}; or choose a new or empty {CHOOSE_FOR}."


def check_listing(out: Path, manifest: Mapping[str, Any]) -> None:
    """For a build that is up to date (its manifest is ours: it has this build's input digest), only that
    the folder holds nothing else: the answer must not depend on whether the inputs changed."""
    rows = manifest.get("artifacts", ())
    listed = frozenset([MANIFEST, *(row["path"] for row in rows if isinstance(row, dict) and "path" in row)])
    if (foreign := _foreign(out, listed)) is not None:
        raise OutputError(_not_a_build(out, foreign))


def recheck(out: Path, earlier: Replaceable) -> None:
    """Just before the swap: `out` is still what `check_output_dir` allowed (cheaply when its manifest is the same)."""
    if not os.path.lexists(out):
        return
    if earlier.manifest is not None and manifest_bytes(out)[0] == earlier.manifest:
        if (foreign := next(_unlisted(out, earlier.listed), None)) is None:
            return
        raise OutputError(f"{out}: {foreign} appeared in it during the build; refusing to replace it. {_CHOOSE}")
    check_output_dir(out)


def removal_problem(folder: Path, earlier: Replaceable) -> str | None:
    """Why the folder a swap has just moved out of `out`'s place may not be removed, None when it may (the
    writer's `may_remove`; it has found a directory there, not a link). `out` can be replaced between `recheck`
    and the swap, which moves whatever is there: it must still be what `check_output_dir` lets a build replace,
    an empty folder or provably a capidx build (cheaply, as in `recheck`, when its manifest is the same)."""
    if earlier.manifest is not None and manifest_bytes(folder)[0] == earlier.manifest:
        reason = _foreign(folder, earlier.listed)
    else:
        reason = examine(folder)[1]
    return None if reason is None else f"not a capidx build: {reason}"


def _not_a_build(out: Path, reason: str) -> str:
    """What a folder that is not provably a build is, and the two ways on: a build only replaces what it can prove
    it made, so an earlier build with something added, or with its manifest damaged, needs a person's hand."""
    mend = "If it is an earlier capidx build, move out what was added to it (or delete the folder) and build again;"
    refused = f"{out}: not a capidx build directory ({reason}); refusing to replace it."
    return f"{refused} {mend} or choose a new or empty {CHOOSE_FOR}."


def examine(folder: Path, also: frozenset[str] = frozenset()) -> tuple[Replaceable, str | None]:
    """(what it holds, None) when `folder` is empty (but for `os_metadata`) or provably a capidx build; else
    (_, why not). `also`: names it may hold besides what its manifest lists (a leftover's marker)."""
    try:
        with os.scandir(folder) as entries:
            empty = all(entry.is_file(follow_symlinks=False) and os_metadata(Path(entry.path)) for entry in entries)
    except OSError as exc:
        return Replaceable(), f"cannot list it: {exc.strerror or exc}"
    if empty:  # nothing, or nothing but a file browser's metadata (an empty `build/` opened in Finder)
        return Replaceable(), None
    raw, reason = manifest_bytes(folder)
    if raw is None:
        return Replaceable(), reason
    data, reason = _parse(raw)
    if reason is not None:
        return Replaceable(), reason
    if problems := manifest_problems(data):
        return Replaceable(), f"{MANIFEST} is not a capidx build manifest: {problems[0]}"
    listed = frozenset([MANIFEST, *(row["path"] for row in data["artifacts"])])
    if (foreign := _foreign(folder, listed | also)) is not None:
        return Replaceable(), foreign
    return Replaceable(raw, listed), None


def _foreign(folder: Path, listed: frozenset[str]) -> str | None:
    """ "it holds notes.txt, extra/, which its manifest.json does not list": the first `_FOREIGN_NAMED` entries that
    make `folder` no build, all in one refusal (one a run had a user empty the folder name by name), then "and more"."""
    found = list(islice(_unlisted(folder, listed), _FOREIGN_NAMED + 1))
    if not found:
        return None
    more = " and more" if len(found) > _FOREIGN_NAMED else ""
    return f"it holds {', '.join(found[:_FOREIGN_NAMED])}{more}, which its {MANIFEST} does not list"


def restore_interrupted(out: Path) -> Path | None:
    """When `out` is missing because a build was killed between the two renames of its swap, rename the
    previous build back into place, so that it is never lost: left aside, a later build would remove it as a
    leftover, or fail and leave no build at all. Only a `.capidx-old-*` folder named for `out`
    (`write.old_name`), not a link, that holds a whole build (every listed file at its size) and nothing else
    but our marker or a part of it; the newest when there are several. The folder it came from, None when
    nothing was restored; OutputError when it cannot be renamed back (it then stays where it is)."""
    if os.path.lexists(out):
        return None
    for path in _set_aside(out):
        with held(path) as free:
            if not (free and _is_whole_build(path)):
                continue
            try:
                put_back(path, out)
            except OSError as exc:
                raise OutputError(
                    f"{out}: is missing, and its previous build in {path} cannot be put back"
                    f" ({exc.strerror or exc}); rename that folder to {out.name}, then build again"
                ) from None
            return path
    return None


def _set_aside(out: Path) -> list[Path]:
    """The folders beside `out` that `write.old_name` named for it, newest first (never a link)."""
    tag = owner_tag(out.name)
    found = []
    for path in _leftover_candidates(out.parent):
        if owner_of(path.name) == tag:
            with suppress(OSError):
                found.append((os.lstat(path).st_ctime_ns, path.name, path))
    return [path for *_, path in sorted(found, reverse=True)]


def _is_whole_build(folder: Path) -> bool:
    """Whether `folder` is a set-aside build that may be put back as it is: a provable build beside our
    marker, and every file its manifest lists there at its size (not one whose removal had begun)."""
    if not _build_beside_marker(folder):
        return False
    previous = read_previous(folder)
    return previous is not None and is_intact(folder, previous)


def remove_leftovers(parent: Path) -> None:
    """Remove the temporary folders of killed builds next to the output folder, when provably ours and
    not in use by a build running beside this one (held while removed, so none starts using it). Anything
    else is left alone, and so is the previous build of a folder that is missing (see the module's
    docstring): the next build of that folder puts it back."""
    owners = {owner_tag(name) for name in _names(parent) or () if not name.startswith(LEFTOVER_PREFIXES)}
    for path in _leftover_candidates(parent):
        if (owner := owner_of(path.name)) is not None and owner not in owners:
            continue
        with held(path) as free:
            if free and _is_ours(path):
                remove_ours(path)


def _is_ours(path: Path) -> bool:
    if path.name.startswith(NEW_PREFIX):
        return _has_marker(path) or _is_unfinished(path)
    return _has_marker(path) or _build_beside_marker(path)


def _build_beside_marker(folder: Path) -> bool:
    """Whether `folder` is provably a capidx build but for our marker, whole or in part (a build killed while
    marking a build it had set aside leaves part of it)."""
    part = _marker_part(folder)
    marker_is_ours = MARKER_TEXT.startswith(part) if part is not None else not os.path.lexists(folder / MARKER)
    if not marker_is_ours:  # another text, a link, a folder by that name: not a folder we may touch
        return False
    found, reason = examine(folder, also=frozenset([MARKER]))
    return reason is None and found.manifest is not None


def _names(parent: Path) -> list[str] | None:
    try:
        with os.scandir(parent) as entries:
            return [entry.name for entry in entries]
    except OSError:
        return None


def _leftover_candidates(parent: Path) -> Iterator[Path]:
    names = sorted(name for name in _names(parent) or () if name.startswith(LEFTOVER_PREFIXES))
    for name in names:
        path = parent / name
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):  # a link is never followed
                yield path
        except OSError:
            continue


# How the folders a build leaves while it runs are named (one it was stopped in may stay).
LEFTOVER_PREFIXES = (TEMP_PREFIX, OLD_PREFIX, NEW_PREFIX)


def _has_marker(folder: Path) -> bool:
    return _marker_part(folder) == MARKER_TEXT


def _is_unfinished(folder: Path) -> bool:
    """Whether `folder` holds nothing, or nothing but the beginning of our marker (a build killed while
    writing it)."""
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries]
    except OSError:
        return False
    if not names:
        return True
    part = _marker_part(folder) if names == [MARKER] else None
    return part is not None and MARKER_TEXT.startswith(part)


def _marker_part(folder: Path) -> bytes | None:
    """The marker file's bytes when it is a regular file no longer than the marker, else None."""
    marker = folder / MARKER
    try:
        info = os.lstat(marker)
        if not stat.S_ISREG(info.st_mode) or info.st_size > len(MARKER_TEXT):
            return None
        with open(marker, "rb") as handle:
            return handle.read(len(MARKER_TEXT) + 1)
    except OSError:
        return None


def manifest_bytes(folder: Path) -> tuple[bytes | None, str]:
    """The bytes of `folder`'s manifest.json, or (None, why not): never from a link, a pipe or a device."""
    try:
        return builddir.read_manifest(folder / MANIFEST), ""
    except builddir.ManifestUnreadable as error:
        return None, f"it is not empty and has no {MANIFEST}" if error.missing else f"its {MANIFEST}: {error.reason}"


def _parse(raw: bytes) -> tuple[Any, str | None]:
    try:
        return builddir.parse_manifest(Path(MANIFEST), raw), None
    except builddir.ManifestUnreadable as error:
        return None, f"its {MANIFEST}: {error.reason}"


def _unlisted(folder: Path, listed: frozenset[str]) -> Iterator[str]:
    """Entries of `folder` (relative POSIX paths) that are not `listed` files or their folders; links,
    devices and pipes are never listed. Stops at the first when the caller wants only one."""
    folders = {path.rsplit("/", 1)[0] for path in listed if "/" in path}
    folders |= {prefix for path in folders for prefix in _prefixes(path)}
    stack = [""]
    while stack:
        base = stack.pop()
        try:
            with os.scandir(folder / base if base else folder) as entries:
                items = [
                    (entry.name, entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False))
                    for entry in entries
                ]
        except OSError as exc:
            yield f"{base or '.'} (cannot list it: {exc.strerror or exc})"
            return
        for name, is_dir, is_file in sorted(items):
            relative = f"{base}/{name}" if base else name
            if is_dir and relative in folders:
                stack.append(relative)
            elif not (is_file and (relative in listed or os_metadata(folder / relative))):
                yield relative + ("/" if is_dir else "")


# Files a file browser writes by itself into a folder it shows: Finder's view settings (`.DS_Store`, in every
# folder opened, `build/site` included) and Windows Explorer's thumbnail cache (`Thumbs.db`).
OS_METADATA_NAMES = frozenset([".DS_Store", "Thumbs.db"])
APPLEDOUBLE_PREFIX = "._"
_APPLEDOUBLE_MAGIC = b"\x00\x05\x16\x07"  # the AppleDouble format's first four bytes


def os_metadata(path: Path) -> bool:
    """Whether `path` (a regular file, checked by the caller) is operating-system metadata that does not make a
    build directory foreign: it holds nothing of a person's, appears without anyone asking (opening `build/site`
    in Finder writes `.DS_Store`), and a refusal for it would stop every build until it is deleted by hand.

    The set is small and explicit, each name one that a file browser writes on its own: `.DS_Store` (Finder),
    `Thumbs.db` (Explorer), and a `._NAME` AppleDouble file (macOS keeps a file's extended attributes in one on
    a disk or share that cannot store them) only when its first bytes are the AppleDouble signature, since
    `._` alone would also match a file a person named. Left out: `desktop.ini`, which Explorer writes only when a
    person customizes a folder and which holds that choice, and folders and links by any of these names, which
    no file browser makes: they stay foreign, as does everything else."""
    name = path.name
    if name in OS_METADATA_NAMES:
        return True
    return name.startswith(APPLEDOUBLE_PREFIX) and _starts_with(path, _APPLEDOUBLE_MAGIC)


def _starts_with(path: Path, signature: bytes) -> bool:
    """Whether the regular file at `path` begins with `signature`: opened without following a link or blocking,
    and checked again once open, so a link or a pipe put in its place is never read."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(signature)) == signature
    except OSError:
        return False
    finally:
        os.close(fd)


def _prefixes(path: str) -> Iterator[str]:
    parts = path.split("/")
    for end in range(1, len(parts)):
        yield "/".join(parts[:end])


def _resolved(path: Path) -> Path:
    return Path(real_path(path))


def _home() -> Path | None:
    try:
        return _resolved(Path.home())
    except (RuntimeError, KeyError, OSError):  # no HOME and no passwd entry
        return None
