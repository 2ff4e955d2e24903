"""Shared fixtures. Keep this small: helpers used by one test module live in that module."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# What a copy of the working tree leaves out: VCS data, build output, caches, virtual environments.
_NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    "build",
    "dist",
    ".capidx-build-*",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".venv",
    ".benchmarks",
)


def copy_source_tree(target: Path) -> Path:
    """Copy the working tree (uncommitted edits included) for builds that must not touch the checkout."""
    shutil.copytree(REPO, target, ignore=_NOT_SOURCE, symlinks=True)
    return target


@pytest.fixture(scope="session")
def source_tree_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`make("name")` -> a fresh copy of the working tree in a temporary directory."""
    return lambda name: copy_source_tree(tmp_path_factory.mktemp(name) / "capidx")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files marked `long_setup` first (stable otherwise). With pytest-xdist's loadfile distribution
    (pyproject.toml) each file runs on one worker in this order, so the files that wait longest (package
    installs over the network) start at once instead of ending the run alone."""
    items.sort(key=lambda item: item.get_closest_marker("long_setup") is None)


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A user cache of this session's own (the compiled schema checks, compiler/validate/fastschema.py): tests neither
    write to the real one nor depend on what an earlier run left there. Subprocesses inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield
