"""The top of the git work tree a folder is in: where GitHub Actions and pre-commit read their files (`capidx init`),
where agents read the memory files (`capidx inject`), and what the paths in memory.md are relative to.

Found as git finds it, on the real path: a folder reached through a symbolic link (or named with `..` after one) is in
the work tree of the folder it really is, so each function takes the folder's real path (`real_path`: no more links
followed than the kernel would, where `os.path.realpath` recursed into a RecursionError on a long chain) and answers in
real paths; a caller relating a lexical path to the top (`paths.out` below the project) applies it to the project's
real path first (`named_from_top`).
"""

from __future__ import annotations

import os
from pathlib import Path

from capidx.schema.realpath import real_path

GIT = ".git"  # a folder, or a worktree's or submodule's file: the top of a work tree


def top_above(folder: Path) -> Path | None:
    """The top of the git work tree `folder` is below (real path); None when `folder` is the top, or in no work
    tree."""
    return _top_above(Path(real_path(folder)))


def _top_above(real: Path) -> Path | None:
    """`top_above` of a real path: the nearest folder above it holding `.git`, unless it holds one itself."""
    if os.path.lexists(real / GIT):
        return None
    return next((place for place in real.parents if os.path.lexists(place / GIT)), None)


def named_from_top(project: Path, path: Path) -> str | None:
    """`path` (a path the project folder `project` names, such as its `paths.out`, lexical) as the top of the work
    tree above `project` names it, POSIX (`tools/capidx/build`): its relation to `project` taken as written, then
    applied to the project's real folder, as the system resolves `..` after a link. None when `project` is at the top
    or in no work tree (names are the project's own then), or when `path` is outside that top."""
    real = Path(real_path(project))
    top = _top_above(real)
    if top is None:
        return None
    written = os.path.relpath(os.path.normpath(os.path.abspath(path)), os.path.normpath(os.path.abspath(project)))
    seen = Path(os.path.normpath(real / written))
    return seen.relative_to(top).as_posix() if seen.is_relative_to(top) else None


def annotation_path(path: str | Path, shown: str) -> str:
    """A file as a GitHub annotation names it: relative to the top of the git work tree holding it, POSIX, which is
    where GitHub places annotations whatever folder the step ran in (`working-directory: tools/catalog`, a checkout
    in `head/`); `shown` (the path as the text form shows it) for a file in no work tree."""
    if not os.path.isabs(path):
        path = os.path.abspath(path)
    real = Path(real_path(Path(path)))
    # the nearest folder above that holds `.git`; not `_top_above`, which answers None for a folder holding one
    # itself (a submodule's top, named from the checkout's)
    top = next((place for place in real.parents if os.path.lexists(place / GIT)), None)
    return real.relative_to(top).as_posix() if top is not None else shown
