"""Install and pin as README documents it (issue #15, item 1), offline, from a local git repository.

The working tree is copied (uncommitted edits included) and committed in a temporary repository, which
stands in for `https://github.com/OWNER/capidx`. pip installs `capidx @ git+file://…@<sha>` into a
virtualenv that sees this interpreter's site-packages, so `--no-deps` leaves the dependencies to those
already installed; only pip's isolated build environment (setuptools, as in tests/test_wheel.py) comes
from the configured index.
`pre-commit autoupdate` moves a full-sha `rev:` to the newest commit, then to a tag once there is one.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from capidx.compiler import __version__

pytestmark = pytest.mark.slow

CATALOG = Path(__file__).parent / "cases" / "validate" / "valid" / "full"
GIT = ["git", "-c", "user.name=capidx tests", "-c", "user.email=tests@capidx.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def upstream(source_tree_factory: Callable[[str], Path]) -> tuple[Path, str]:
    """(repository, full sha) of a commit of the current working tree."""
    repo = source_tree_factory("upstream")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "working tree under test")
    return repo, git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def installed(upstream: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin directory of a virtualenv with `capidx @ git+file://…@<sha>` installed.

    The virtualenv has no pip of its own: a .pth file puts this interpreter's site-packages (pip and
    capidx's dependencies) behind its own, so the install needs no index. Only site directories run .pth
    files, so the checkout's editable install (a .pth hook) stays out of it."""
    repo, sha = upstream
    env = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    windows = sys.platform == "win32"
    (site_packages,) = [env / "Lib" / "site-packages"] if windows else env.glob("lib/python*/site-packages")
    (site_packages / "_running_interpreter.pth").write_text("\n".join(site.getsitepackages()) + "\n", "utf-8")
    bin_dir = env / ("Scripts" if windows else "bin")
    # `file://localhost/…`, not `file:///…`: the requirement parser of pip < 23.3 (what ensurepip installs in
    # Python 3.11) rejects a URL with an empty host; a github.com URL has none of this.
    requirement = f"capidx @ git+file://localhost{repo.as_posix()}@{sha}"
    result = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "-q", requirement],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (site_packages / "capidx" / "__main__.py").is_file()
    return bin_dir


def _run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_dir / "capidx"), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_install_records_the_pinned_commit(installed: Path, upstream: tuple[Path, str], tmp_path: Path) -> None:
    """pip's direct_url.json (PEP 610) names the repository and the exact commit."""
    _repo, sha = upstream
    script = (
        "import json, importlib.metadata as m\n"
        "print(m.version('capidx'))\n"
        "print(m.distribution('capidx').read_text('direct_url.json'))\n"
    )
    version, direct_url = subprocess.run(  # not in the checkout: its capidx.egg-info would be found first
        [str(installed / "python"), "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=120
    ).stdout.split("\n", 1)
    assert version == __version__
    recorded = json.loads(direct_url)
    assert recorded["vcs_info"]["vcs"] == "git" and recorded["vcs_info"]["commit_id"] == sha
    assert recorded["url"].startswith("file://")


def test_the_git_install_runs_the_readme_main_command(installed: Path, tmp_path: Path) -> None:
    project = tmp_path / "catalog"
    shutil.copytree(CATALOG, project, ignore=shutil.ignore_patterns("expected.txt"))
    for command in (["validate", "-q"], ["build"], ["report"]):
        result = _run(installed, *command, cwd=project)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
    modules = subprocess.run(
        [str(installed / "python"), "-c", "import capidx.compiler.cli as c, sys; print(c.__file__, sys.prefix)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert modules[0].startswith(modules[1])  # the installed copy, not the checkout's editable install


def test_the_git_install_has_python_dash_m_and_init(installed: Path, tmp_path: Path) -> None:
    version = subprocess.run(
        [str(installed / "python"), "-m", "capidx", "--version"], capture_output=True, text=True, timeout=120
    )
    assert version.returncode == 0 and version.stdout.strip() == f"capidx, version {__version__}"
    assert _run(installed, "init", "new", cwd=tmp_path).returncode == 0
    assert _run(installed, "validate", cwd=tmp_path / "new").returncode == 0


def _pre_commit(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _rev(project: Path) -> str:
    (repo,) = yaml.safe_load((project / ".pre-commit-config.yaml").read_text("utf-8"))["repos"]
    return str(repo["rev"])


def test_pre_commit_autoupdate_moves_a_full_sha_rev(source_tree_factory: Callable[[str], Path], tmp_path: Path) -> None:
    """With no tag, autoupdate moves `rev:` to the newest commit's sha; once a tag exists, to the tag."""
    repo = source_tree_factory("hook-upstream")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    first = git(repo, "rev-parse", "HEAD")
    project = tmp_path / "project"
    project.mkdir()
    config = {"repos": [{"repo": repo.as_uri(), "rev": first, "hooks": [{"id": "capidx-validate"}]}]}
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    git(project, "init", "-q")

    (repo / "NOTES").write_text("a later commit\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    second = git(repo, "rev-parse", "HEAD")
    result = _pre_commit(project, tmp_path / "home", "autoupdate")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _rev(project) == second and len(second) == 40

    git(repo, "tag", "-a", "v0.1.0", "-m", "capidx 0.1.0")
    result = _pre_commit(project, tmp_path / "home", "autoupdate")
    assert result.returncode == 0, result.stdout + result.stderr
    assert _rev(project) == "v0.1.0"
