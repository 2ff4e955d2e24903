"""The published pre-commit hook, run by the real `pre-commit` tool from a git repository of this working tree.

pre-commit needs a git repository and a revision to install a hook from; the checkout must not be
committed to, so the working tree is copied and committed in a temporary directory. The hook's
environment (a virtualenv with capidx installed by pip) is built once and shared by both runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

VALID = Path(__file__).parent / "cases" / "validate" / "valid" / "full"
GIT = ["git", "-c", "user.name=capidx tests", "-c", "user.email=tests@capidx.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def hook_source(source_tree_factory: Callable[[str], Path]) -> tuple[Path, str]:
    """(repository, revision) of a commit of the current working tree."""
    repo = source_tree_factory("hook-source")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "working tree under test")
    return repo, git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def make_user_repo(root: Path, hook_source: tuple[Path, str]) -> Path:
    """A project using the hook, with a valid catalog committed."""
    shutil.copytree(VALID, root, ignore=shutil.ignore_patterns("expected.txt"))
    repo, rev = hook_source
    config = {"repos": [{"repo": str(repo), "rev": rev, "hooks": [{"id": "capidx-validate"}]}]}
    (root / ".pre-commit-config.yaml").write_text(json.dumps(config, indent=2))  # JSON is YAML
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "catalog")
    return root


def pre_commit(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        ["pre-commit", "run", "--color", "never", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory: pytest.TempPathFactory, hook_source: tuple[Path, str]) -> Path:
    return make_user_repo(tmp_path_factory.mktemp("user") / "project", hook_source)


def test_hook_passes_on_valid_data(user_repo: Path, pre_commit_home: Path) -> None:
    result = pre_commit(user_repo, pre_commit_home, "--all-files")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "capidx validate" in result.stdout and "Passed" in result.stdout


def test_hook_fails_on_a_broken_file_and_points_at_it(user_repo: Path, pre_commit_home: Path) -> None:
    document = user_repo / "agents" / "alpha" / "capabilities" / "current.json"
    original = document.read_text()
    document.write_text(original.replace('"code-refactoring"', '"code-refactor"', 1))
    git(user_repo, "add", "-A")
    try:
        result = pre_commit(user_repo, pre_commit_home, "--files", "agents/alpha/capabilities/current.json")
    finally:
        document.write_text(original)
        git(user_repo, "add", "-A")

    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Failed" in output
    assert (
        "agents/alpha/capabilities/current.json:11:19: $.capabilities[0].category: 'code-refactor' is not a valid "
        "category (did you mean 'code-refactoring'?)"
    ) in output


def test_hook_ignores_files_it_does_not_own(user_repo: Path, pre_commit_home: Path) -> None:
    (user_repo / "notes.json").write_text("{ this is not checked")
    git(user_repo, "add", "-A")

    result = pre_commit(user_repo, pre_commit_home, "--files", "notes.json")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no files to check" in result.stdout.lower()
