"""A catalog in a folder of a monorepo (`tools/capidx/` of a git work tree whose top holds AGENTS.md): the memory
block names the build as agents at the top see it, and `capidx inject` works from the top and from the catalog's
folder, each command it suggests working where it is printed. A `.git` folder is all the work tree needs here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
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


def _serve(where: Path, config: str | None = CONFIG) -> subprocess.CompletedProcess[str]:
    """`capidx serve --config tools/capidx/capidx.yaml` (or another `config`) run in `where` (the top, as a committed
    .mcp.json starts it), or plain `capidx serve` (`config` None); stdin at its end."""
    return subprocess.run(
        [sys.executable, "-m", "capidx", "serve", *(("--config", config) if config else ())],
        cwd=where,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


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


def _built(tmp_path: Path) -> Path:
    top = _monorepo(tmp_path)
    assert run_cli(["build", "-q", "--config", CONFIG], top).exit_code == 0
    (top / "AGENTS.md").write_text("# Our rules\n", "utf-8")
    return top


def test_inject_from_the_top_and_from_the_catalogs_folder(tmp_path: Path) -> None:
    top = _built(tmp_path)
    memory = _memory(top / "tools/capidx/build")
    written = run_cli(["inject", "--config", CONFIG, "AGENTS.md", ".github/copilot-instructions.md"], top)
    assert written.exit_code == 0, written.output
    assert written.output == "AGENTS.md: block added\n.github/copilot-instructions.md: created\n"
    assert (top / "AGENTS.md").read_text("utf-8").startswith("# Our rules\n\n<!-- capidx:begin")
    assert memory in (top / "AGENTS.md").read_text("utf-8")

    folder = top / "tools/capidx"
    again = run_cli(["inject", "../../AGENTS.md", "../../CLAUDE.md"], folder)
    assert again.exit_code == 0, again.output
    assert again.output == "../../AGENTS.md: unchanged (the block is current)\n../../CLAUDE.md: created\n"
    assert run_cli(["inject", "--check", "../../AGENTS.md", "../../CLAUDE.md"], folder).exit_code == 0
    # --build alone, from the top: the capidx.yaml whose paths.out it is is the one in force
    assert run_cli(["inject", "--check", "--build", "tools/capidx/build", "AGENTS.md", "CLAUDE.md"], top).exit_code == 0


def test_every_command_suggested_names_the_capidx_yaml_in_force(tmp_path: Path) -> None:
    top = _built(tmp_path)
    stale = run_cli(["inject", "--check", "--config", CONFIG, "AGENTS.md"], top)
    assert stale.exit_code == 1
    assert stale.output.splitlines()[-1] == (
        f"to update: capidx build --config {CONFIG} (if the catalog changed), then capidx inject --config {CONFIG} "
        "AGENTS.md"
    )
    given = run_cli(["inject", "--check", "--build", "tools/capidx/build", "AGENTS.md"], top)
    assert given.exit_code == 1
    assert given.output.splitlines()[-1] == (
        f"to update: capidx build --out tools/capidx/build --config {CONFIG} (if the catalog changed), then "
        f"capidx inject --build tools/capidx/build --config {CONFIG} AGENTS.md"
    )
    # in the catalog's folder its capidx.yaml is read without --config
    here = run_cli(["inject", "--check", "../../AGENTS.md"], top / "tools/capidx")
    assert here.output.splitlines()[-1] == (
        "to update: capidx build (if the catalog changed), then capidx inject ../../AGENTS.md"
    )
    shutil.rmtree(top / "tools/capidx/build")  # a fresh clone: the build that makes one works from the top
    fresh = run_cli(["inject", "--check", "--build", "tools/capidx/build", "AGENTS.md"], top)
    assert fresh.exit_code == 2
    assert f"(`capidx build --out tools/capidx/build --config {CONFIG}` makes one)" in fresh.output
    missing = run_cli(["inject", "--check", "--config", CONFIG, "AGENTS.md"], top)
    assert f"run `capidx build --config {CONFIG}` first" in missing.output
    made = run_cli(["build", "-q", "--out", "tools/capidx/build", "--config", CONFIG], top)  # as suggested
    assert made.exit_code == 0, made.output


def test_a_ci_checkout_checks_against_a_build_elsewhere(tmp_path: Path) -> None:
    top = _built(tmp_path)
    assert run_cli(["inject", "--config", CONFIG, "AGENTS.md"], top).exit_code == 0
    head = tmp_path / "ci" / "head"  # actions/checkout into head/, with its own .git; the build into ../out/head
    shutil.copytree(top, head, ignore=shutil.ignore_patterns("build"))
    assert run_cli(["build", "-q", "--config", CONFIG, "--out", "../out/head"], head).exit_code == 0
    checked = run_cli(["inject", "--check", "--config", CONFIG, "--build", "../out/head", "AGENTS.md"], head)
    assert checked.exit_code == 0, checked.output
    assert checked.output == "AGENTS.md: current\n"


def test_outside_the_work_tree_and_what_the_build_reads_stay_refused(tmp_path: Path) -> None:
    top = _built(tmp_path)
    for name, said in (
        ("../NOTES.md", "../NOTES.md: it is outside the git work tree the project is in ("),
        (CONFIG, f"{CONFIG}: it is the capidx.yaml in force"),
        (".git/info/x.md", "inside .git"),
        ("tools/capidx/build/x.md", "inside the build directory"),
    ):
        refused = run_cli(["inject", "--config", CONFIG, name], top)
        assert refused.exit_code == 2 and said in refused.output, (name, refused.output)
    assert not (tmp_path / "NOTES.md").exists()
    outside = run_cli(["inject", "../../../NOTES.md"], top / "tools/capidx")
    assert outside.exit_code == 2 and "outside the git work tree the project is in" in outside.output


def test_a_catalog_at_the_top_keeps_its_boundary_and_commands(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    write_catalog(top)
    (top / "capidx.yaml").write_text("title: Ours\n", "utf-8")
    assert run_cli(["build", "-q"], top).exit_code == 0
    check = run_cli(["inject", "--check", "AGENTS.md"], top)
    assert check.output == (
        "AGENTS.md: missing: the file does not exist\n"
        "to update: capidx build (if the catalog changed), then capidx inject AGENTS.md\n"
    )
    outside = run_cli(["inject", "../NOTES.md"], top)
    assert outside.exit_code == 2
    assert f"../NOTES.md: it is outside the project ({top}); name a file inside it" in outside.output


def test_serve_with_a_relative_config_from_the_top_serves_the_catalogs_build(tmp_path: Path) -> None:
    """docs/clients.md's `.mcp.json` at the top: `capidx serve --config tools/capidx/capidx.yaml` run there, its
    capidx.yaml setting `paths.out` (as capidx init's does: serve reads that relative to the file's folder)."""
    import json

    top = _monorepo(tmp_path, "paths:\n  out: build\n")
    assert run_cli(["build", "-q", "--config", CONFIG], top).exit_code == 0
    client = {"name": "t", "version": "1"}
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}]
    served = subprocess.run(
        [sys.executable, "-m", "capidx", "serve", "--config", CONFIG],
        cwd=top,
        input="".join(json.dumps(message) + "\n" for message in messages),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert f"serving {top / 'tools/capidx/build'} " in served.stderr, served.stderr
    answer = json.loads(served.stdout.splitlines()[0])
    assert "Check here before answering from memory." in answer["result"]["instructions"]


def test_the_docs_name_the_work_tree_boundary_and_its_refusals(tmp_path: Path) -> None:
    """A link leading out of the top is refused in its own words, and docs/inject.md's bad-input table and docs/cli.md
    say them, as they say the boundary below the top of a work tree and --build alone."""
    top = _built(tmp_path)
    (tmp_path / "NOTES.md").write_text("# elsewhere\n", "utf-8")
    (top / "NOTES.md").symlink_to(tmp_path / "NOTES.md")
    refused = run_cli(["inject", "--config", CONFIG, "NOTES.md"], top)
    said = "a symbolic link on the way leads out of the git work tree the project is in"
    assert refused.exit_code == 2 and said in refused.output, refused.output
    docs = Path(__file__).resolve().parent.parent / "docs"
    assert f"`{said} (…)`" in (docs / "inject.md").read_text("utf-8")
    cli_md = " ".join((docs / "cli.md").read_text("utf-8").split())
    assert "anywhere under that top" in cli_md
    assert "the `capidx.yaml` whose `paths.out` is `DIR`" in cli_md


def test_report_from_the_top_names_the_capidx_yaml_in_the_build_it_suggests(tmp_path: Path) -> None:
    """As inject's: `report --config tools/capidx/capidx.yaml` with no build yet says the `capidx build` that makes it
    from the top, not a bare `capidx build` (which there reads no capidx.yaml, and no catalog)."""
    top = _monorepo(tmp_path)
    missing = run_cli(["report", "--config", CONFIG], top)
    assert missing.exit_code == 2
    assert f"run `capidx build --config {CONFIG}` first" in missing.output, missing.output
    assert run_cli(["build", "-q", "--config", CONFIG], top).exit_code == 0  # as suggested
    assert run_cli(["report", "--config", CONFIG], top).exit_code == 0
    # the baseline --against names, not built yet: the `capidx build --out` that makes it names the --config too
    base = tmp_path / "base"
    missing = run_cli(["report", "--config", CONFIG, "--against", str(base)], top)
    assert missing.exit_code == 2
    assert f"`capidx build --out {base} --config {CONFIG}` makes one" in missing.output, missing.output
    assert run_cli(["build", "-q", "--out", str(base), "--config", CONFIG], top).exit_code == 0  # as suggested
    assert run_cli(["report", "--config", CONFIG, "--against", str(base)], top).exit_code == 0


def test_serve_from_the_top_without_a_build_says_the_build_command_that_works_there(tmp_path: Path) -> None:
    """The same `.mcp.json` before anyone built: the error names `capidx build --config tools/capidx/capidx.yaml`, which
    run at the top makes the build serve then serves (a plain `capidx build` there reads no capidx.yaml); the
    capidx.yaml names no paths.out: the build beside it is the one served, as `capidx build --config` writes it."""

    top = _monorepo(tmp_path)

    missing = _serve(top)
    assert missing.returncode == 2
    assert f"run `capidx build --config {CONFIG}` first, or pass --build DIR" in missing.stderr, missing.stderr
    assert run_cli(["build", "-q", "--config", CONFIG], top).exit_code == 0  # as suggested, where it was said
    served = _serve(top)
    assert served.returncode == 0 and f"serving {top / 'tools/capidx/build'} " in served.stderr, served.stderr


def test_serve_quotes_the_capidx_yaml_in_the_build_it_suggests_as_report_does(tmp_path: Path) -> None:
    """A catalog folder whose name has a space: the `capidx build --config …` serve says to run works pasted, as the
    one report says for the same file does (each `capidx build` a no-build message suggests is quoted for the shell)."""

    top = _monorepo(tmp_path)
    (top / "tools/capidx").rename(top / "tools/our capidx")
    config = "tools/our capidx/capidx.yaml"
    quoted = "'tools/our capidx/capidx.yaml'"
    served = _serve(top, config)
    assert served.returncode == 2
    assert f"run `capidx build --config {quoted}` first, or pass --build DIR" in served.stderr, served.stderr
    assert f"run `capidx build --config {quoted}` first" in run_cli(["report", "--config", config], top).output


def test_serve_names_the_build_its_serve_build_names_in_the_build_it_suggests(tmp_path: Path) -> None:
    """A capidx.yaml whose `serve.build` is not its `paths.out`: `capidx build --config` alone writes the build serve
    does not read, and serve said to run it again and again; the command it says makes the build it serves."""

    top = _monorepo(tmp_path, "title: Our agents\nserve:\n  build: served\n")

    missing = _serve(top)
    suggested = f"capidx build --config {CONFIG} --out tools/capidx/served"
    assert missing.returncode == 2 and f"run `{suggested}` first" in missing.stderr, missing.stderr
    assert run_cli([*suggested.split()[1:], "-q"], top).exit_code == 0  # as suggested, where it was said
    served = _serve(top)
    assert served.returncode == 0 and f"serving {top / 'tools/capidx/served'} " in served.stderr, served.stderr


def test_serve_names_the_build_its_own_folders_serve_build_names_in_the_build_it_suggests(tmp_path: Path) -> None:
    """Run in the catalog's folder, whose capidx.yaml has a `serve.build` that is not its `paths.out`: a plain
    `capidx build` writes build/, which serve does not read; the command it says makes the build it serves."""
    folder = _monorepo(tmp_path, "title: Our agents\nserve:\n  build: served\n") / "tools/capidx"
    missing = _serve(folder, config=None)
    assert missing.returncode == 2 and "run `capidx build --out served` first" in missing.stderr, missing.stderr
    assert run_cli(["build", "-q", "--out", "served"], folder).exit_code == 0  # as suggested, where it was said
    served = _serve(folder, config=None)
    assert served.returncode == 0 and f"serving {folder / 'served'} " in served.stderr, served.stderr
