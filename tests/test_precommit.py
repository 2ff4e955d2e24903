"""The published pre-commit hook, run by the real `pre-commit` tool from a git repository of this working tree.

pre-commit needs a git repository and a revision to install a hook from; the checkout must not be
committed to, so the working tree is copied and committed in a temporary directory. The hook's
environment (a virtualenv with capidx installed by pip from the package index) is built once and shared by
every run. `pre-commit` is the one installed for the interpreter running the tests (`python -m pre_commit`),
never a `pre-commit` found on PATH. Every git and pre-commit process runs with HOME, the XDG directories and
PRE_COMMIT_HOME in a temporary directory, so no state or cache from an earlier run (or from the user's
`~/.gitconfig`) is used and nothing is left behind. Only the user's pip configuration is passed on, as it may
name the package index to install from. git itself is a requirement of the tests (README, "Quick start"):
pre-commit cannot work without it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from manifest_factory import write_memory_build

pytestmark = [pytest.mark.slow, pytest.mark.long_setup]

VALID = Path(__file__).parent / "cases" / "validate" / "valid" / "full"
GIT = ["git", "-c", "user.name=capidx tests", "-c", "user.email=tests@capidx.invalid", "-c", "commit.gpgsign=false"]


def user_pip_config() -> dict[str, str]:
    """The user's pip configuration file, if any: HOME moves, and it may name the package index."""
    if "PIP_CONFIG_FILE" in os.environ:
        return {}
    home = Path.home()
    for candidate in (home / ".config" / "pip" / "pip.conf", home / ".pip" / "pip.conf"):
        if candidate.is_file():
            return {"PIP_CONFIG_FILE": str(candidate)}
    return {}


@pytest.fixture(scope="module")
def isolated_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of every git and pre-commit process: home, caches and pre-commit's store are temporary
    (pip's download cache excepted: tests/conftest.py keeps PIP_CACHE_DIR where pip had it)."""
    home = tmp_path_factory.mktemp("home")
    env = {
        **os.environ,
        **user_pip_config(),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PRE_COMMIT_HOME": str(home / "pre-commit"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "NO_COLOR": "1",
        # Installing the hook's environment is most of this module's time. pip reads its negative options from
        # the environment inverted: PIP_NO_COMPILE=1 means "compile", pip's default (what this set before, meaning
        # the opposite), "false" means --no-compile. Not compiling every dependency's bytecode: ~1.7 s of CPU less
        # (0.88x the module's CPU in three interleaved pairs); the hook imports few of them.
        "PIP_NO_COMPILE": "false",
        # pip builds capidx with the setuptools that virtualenv seeds into the hook's environment (named: from
        # Python 3.12 on it seeds none by default) instead of installing one into an isolated build environment,
        # which took ~2.5 s of CPU (inverted as above: "false" is --no-build-isolation). The isolated build is what
        # tests/test_wheel.py and tests/test_adoption_install.py check.
        "VIRTUALENV_SETUPTOOLS": "bundle",
        "PIP_NO_BUILD_ISOLATION": "false",
    }
    env.pop("VIRTUAL_ENV", None)
    return env


def git(env: dict[str, str], cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def hook_source(source_tree_factory: Callable[[str], Path], isolated_env: dict[str, str]) -> tuple[Path, str]:
    """(repository, revision) of a commit of the current working tree."""
    repo = source_tree_factory("hook-source")
    git(isolated_env, repo, "init", "-q")
    git(isolated_env, repo, "add", "-A")
    git(isolated_env, repo, "commit", "-q", "-m", "working tree under test")
    return repo, git(isolated_env, repo, "rev-parse", "HEAD")


def make_user_repo(root: Path, hook_source: tuple[Path, str], env: dict[str, str]) -> Path:
    """A project using the hook, with a valid catalog committed."""
    shutil.copytree(VALID, root, ignore=shutil.ignore_patterns("expected.txt"))
    repo, rev = hook_source
    config = {"repos": [{"repo": str(repo), "rev": rev, "hooks": [{"id": "capidx-validate"}]}]}
    (root / ".pre-commit-config.yaml").write_text(json.dumps(config, indent=2))  # JSON is YAML
    git(env, root, "init", "-q")
    git(env, root, "add", "-A")
    git(env, root, "commit", "-q", "-m", "catalog")
    return root


def pre_commit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--color", "never", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def user_repo(
    tmp_path_factory: pytest.TempPathFactory, hook_source: tuple[Path, str], isolated_env: dict[str, str]
) -> Path:
    return make_user_repo(tmp_path_factory.mktemp("user") / "project", hook_source, isolated_env)


def test_hook_passes_on_valid_data(user_repo: Path, isolated_env: dict[str, str]) -> None:
    result = pre_commit(user_repo, isolated_env, "--all-files")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "capidx validate" in result.stdout and "Passed" in result.stdout


def test_hook_fails_on_a_broken_file_and_points_at_it(user_repo: Path, isolated_env: dict[str, str]) -> None:
    document = user_repo / "agents" / "alpha" / "capabilities" / "current.json"
    original = document.read_text()
    document.write_text(original.replace('"code-refactoring"', '"code-refactor"', 1))
    git(isolated_env, user_repo, "add", "-A")
    try:
        result = pre_commit(user_repo, isolated_env, "--files", "agents/alpha/capabilities/current.json")
    finally:
        document.write_text(original)
        git(isolated_env, user_repo, "add", "-A")

    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Failed" in output
    assert (
        "agents/alpha/capabilities/current.json:11:19: $.capabilities[0].category: 'code-refactor' is not a valid "
        "category (did you mean 'code-refactoring'?)"
    ) in output


def test_hook_ignores_files_it_does_not_own(user_repo: Path, isolated_env: dict[str, str]) -> None:
    (user_repo / "notes.json").write_text("{ this is not checked")
    # a draft beside a capability document: neither validate nor build reads it, so neither does the hook
    draft = user_repo / "agents" / "alpha" / "capabilities" / "draft-old.json"
    draft.parent.mkdir(parents=True, exist_ok=True)
    draft.write_text("{ nor is this")
    git(isolated_env, user_repo, "add", "-A")

    result = pre_commit(user_repo, isolated_env, "--files", "notes.json", str(draft.relative_to(user_repo)))

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no files to check" in result.stdout.lower()


def test_inject_check_hook_passes_when_current_and_fails_when_the_build_moved_on(
    tmp_path_factory: pytest.TempPathFactory, hook_source: tuple[Path, str], isolated_env: dict[str, str]
) -> None:
    """`capidx-inject-check` with the memory files in `args`: it runs on every commit (the build, not a staged
    file, makes a block stale) and only checks."""
    root = tmp_path_factory.mktemp("inject") / "project"
    root.mkdir()
    repo, rev = hook_source
    hook = {"id": "capidx-inject-check", "args": ["AGENTS.md"]}
    config = {"repos": [{"repo": str(repo), "rev": rev, "hooks": [hook]}]}
    (root / ".pre-commit-config.yaml").write_text(json.dumps(config))
    (root / ".gitignore").write_text("build/\n")
    (root / "AGENTS.md").write_text("# Rules\n\nOurs.\n")
    write_memory_build(root / "build", "# Capabilities\n\n- hooks: alpha\n")
    injected = subprocess.run([sys.executable, "-m", "capidx", "inject", "AGENTS.md"], cwd=root, capture_output=True)
    assert injected.returncode == 0, injected.stderr
    git(isolated_env, root, "init", "-q")
    git(isolated_env, root, "add", "-A")
    git(isolated_env, root, "commit", "-q", "-m", "memory file")

    current = pre_commit(root, isolated_env, "--all-files")
    assert current.returncode == 0, current.stdout + current.stderr
    assert "capidx inject --check" in current.stdout and "Passed" in current.stdout

    before = (root / "AGENTS.md").read_bytes()
    write_memory_build(root / "build", "# Capabilities\n\n- hooks: alpha, beta\n")  # the catalog changed, rebuilt
    stale = pre_commit(root, isolated_env, "--all-files")
    output = stale.stdout + stale.stderr
    assert stale.returncode == 1, output
    assert "AGENTS.md: stale" in output
    assert (root / "AGENTS.md").read_bytes() == before
