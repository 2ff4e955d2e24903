"""Shared fixtures. Keep this small: helpers used by one test module live in that module."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# The fixtures the server tests share, registered once here: a fixture imported into a test module is a separate
# fixture of that module, made again there (tests/server_support.py, `made_once`).
from server_support import (  # noqa: F401 (fixtures)
    fixture_any_build,
    fixture_anyio_backend,
    fixture_bundled_build,
    fixture_catalog_build,
    fixture_hand_build,
    fixture_revision,
)

REPO = Path(__file__).resolve().parent.parent

# The servers the tests start stop on SIGINT as one started from a terminal does; a process started with SIGINT
# ignored (a job a shell script puts in the background, `nohup`) passes that on to its children, and `capidx serve`
# keeps an ignored stop signal ignored (docs/server.md, "Stopping"). The suite's processes take SIGINT again, so
# that what their servers inherit is the default, whatever started the suite.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
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


VALID_PROJECT = Path(__file__).parent / "cases" / "validate" / "valid" / "full"


@pytest.fixture
def valid_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of a valid project (tests/cases/validate/valid/full), as the working directory."""
    target = tmp_path / "project"
    shutil.copytree(VALID_PROJECT, target, ignore=shutil.ignore_patterns("expected.txt"))
    monkeypatch.chdir(target)
    return target


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
        if "PIP_CACHE_DIR" not in os.environ and "PIP_NO_CACHE_DIR" not in os.environ:
            # pip's own cache stays where it was (pip keys it by content and checks hashes: it changes what is
            # downloaded, never what is installed), so the tests that install packages do not fetch again
            # what `pip install -e '.[test]'` fetched a minute before.
            patch.setenv("PIP_CACHE_DIR", str(user_pip_cache()))
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


def user_pip_cache() -> Path:
    """Where pip keeps its cache for this user (pip's own rule on Linux and macOS: $XDG_CACHE_HOME/pip, else
    ~/.cache/pip), read before any test moves HOME or XDG_CACHE_HOME."""
    if os.environ.get("PIP_CACHE_DIR"):
        return Path(os.environ["PIP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pip"
