"""A catalog in a folder of a monorepo (`tools/capidx/` of a git work tree whose top holds AGENTS.md): the memory
block names the build as agents at the top see it, and `capidx inject` works from the top and from the catalog's
folder, each command it suggests working where it is printed. A `.git` folder is all the work tree needs here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from catalog_factory import run_cli, write_catalog

CONFIG = "tools/capidx/capidx.yaml"


def _monorepo(tmp_path: Path, config: str = "title: Our agents\n") -> Path:
    """A work tree at `repo/` with the catalog, and its capidx.yaml, in `repo/tools/capidx/`."""
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    folder = top / "tools" / "capidx"
    write_catalog(folder)
    (folder / "capidx.yaml").write_text(config, "utf-8")
    return top


def _memory(build: Path) -> str:
    return (build / "memory.md").read_text("utf-8")


def test_the_block_names_the_build_from_the_top_of_the_work_tree(tmp_path: Path) -> None:
    top = _monorepo(tmp_path)
    built = run_cli(["build", "-q", "--config", CONFIG], top)
    assert built.exit_code == 0, built.output
    memory = _memory(top / "tools/capidx/build")
    assert "read tools/capidx/build/capabilities/{capability}.md" in memory
    assert "tools/capidx/build/agents/{agent}.md" in memory
    assert f"(after `capidx build --config {CONFIG}`)" in memory
    assert " build/capabilities" not in memory

    # built from the catalog's folder, or in a CI checkout (`head/`, its own .git) into ../out/head: the same block
    again = run_cli(["build", "-q", "--out", str(tmp_path / "again")], top / "tools/capidx")
    assert again.exit_code == 0, again.output
    assert _memory(tmp_path / "again") == memory
    head = tmp_path / "ci" / "head"
    shutil.copytree(top, head, ignore=shutil.ignore_patterns("build"))
    ci = run_cli(["build", "-q", "--config", CONFIG, "--out", "../out/head"], head)
    assert ci.exit_code == 0, ci.output
    assert _memory(tmp_path / "ci/out/head") == memory


def test_paths_out_and_no_capidx_yaml_below_the_top(tmp_path: Path) -> None:
    top = _monorepo(tmp_path, "paths:\n  out: ../../.capidx\n")
    assert run_cli(["build", "-q", "--config", CONFIG], top).exit_code == 0
    memory = _memory(top / ".capidx")
    assert "read .capidx/capabilities/{capability}.md" in memory
    assert f"(after `capidx build --config {CONFIG}`)" in memory

    (top / CONFIG).unlink()  # the folder's defaults: the command goes there
    assert run_cli(["build", "-q"], top / "tools/capidx").exit_code == 0
    memory = _memory(top / "tools/capidx/build")
    assert "(after `cd tools/capidx && capidx build`) read tools/capidx/build/capabilities/" in memory


def test_a_catalog_at_the_top_or_in_no_work_tree_names_its_build_as_before(tmp_path: Path) -> None:
    for top, git in ((tmp_path / "at-top", True), (tmp_path / "no-git", False)):
        write_catalog(top)
        if git:
            (top / ".git").mkdir()
        assert run_cli(["build", "-q"], top).exit_code == 0
        memory = _memory(top / "build")
        assert "otherwise (after `capidx build`) read build/capabilities/{capability}.md" in memory
        assert "build/categories/{category}.md or build/agents/{agent}.md" in memory
