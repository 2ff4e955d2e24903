"""`capidx init` (issue #15, item 6): a scaffold after which validate, build and serve work at once.

The main test does exactly what a new maintainer does, in a subprocess with `python -m capidx`:
`capidx init DIR`, then in DIR `capidx validate && capidx build`, then `capidx serve` over stdio,
driven by the MCP SDK's client, which reads the summary resource.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from catalog_factory import deny_listing, deny_search, run_cli, snapshot, write_catalog
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from capidx.compiler.init_project import SCAFFOLD

PREFIX = "capability-index://"
ROOT = Path(__file__).resolve().parents[1]
TARGETS = [target for _source, target in SCAFFOLD]


def capidx(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capidx", *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_init_then_validate_build_and_serve_work_at_once(tmp_path: Path, anyio_backend: str) -> None:
    initialized = capidx("init", "catalog", cwd=tmp_path)
    assert initialized.returncode == 0, initialized.stderr
    project = tmp_path / "catalog"
    for target in TARGETS:
        assert f"created {target}" in initialized.stdout
        assert (project / target).is_file()

    validated = capidx("validate", cwd=project)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    built = capidx("build", cwd=project)
    assert built.returncode == 0, built.stdout + built.stderr
    assert built.stderr.startswith(f"config: {project / 'capidx.yaml'}")
    reported = capidx("report", cwd=project)
    assert reported.returncode == 0 and "all budgets met" in reported.stdout
    # a one-agent catalog is counted as one: "1 agent", never "1 agents", in every document a model may read
    texts = [
        p.read_text("utf-8") for p in (project / "build").rglob("*") if p.suffix in {".md", ".txt", ".json", ".html"}
    ]
    assert not [text for text in texts if re.search(r"\b1 (agents|capabilities|records)\b", text)]
    assert "which of 1 agent has" in (project / "build" / "memory.md").read_text("utf-8")

    server = StdioServerParameters(command=sys.executable, args=["-m", "capidx", "serve"], cwd=str(project))
    async with Client(server, mode="auto", cache=None) as client:
        listed = [resource.uri for resource in (await client.list_resources()).resources]
        assert PREFIX + "summary" in listed
        summary = await client.read_resource(PREFIX + "summary")
        assert summary.contents[0].text.encode("utf-8") == (project / "build" / "summary.md").read_bytes()
        assert "Example Agent" in summary.contents[0].text
        found = await client.call_tool("lookup_capability", {"agent": "example", "capability": "mcp"})
        assert not found.is_error and "MCP Servers" in found.content[0].text


def test_the_next_steps_say_the_sample_aliases_follow_the_example_and_validate_names_those_left_behind(
    tmp_path: Path,
) -> None:
    """Replacing the example agent leaves the sample alias table pointing at its capabilities: the steps say so, and
    validate names each entry whose capability is gone."""
    result = run_cli(["init"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "agents/aliases.json maps phrases to the example's capability names" in result.output
    example = tmp_path / "agents" / "example-agent" / "capabilities" / "current.json"
    document = json.loads(example.read_text("utf-8"))
    document["capabilities"] = [c for c in document["capabilities"] if c["name"] != "MCP Servers"]
    example.write_text(json.dumps(document), "utf-8")
    aliases = json.loads((tmp_path / "agents" / "aliases.json").read_text("utf-8"))["aliases"]
    gone = sorted(phrase for phrase, name in aliases.items() if name == "MCP Servers")
    assert gone  # the sample table has entries for the example's MCP Servers

    checked = run_cli(["validate"], cwd=tmp_path)
    assert checked.exit_code == 1
    for phrase in gone:
        assert phrase in checked.output


def test_the_instructions_of_a_one_agent_catalog_name_no_name_several_agents_share(tmp_path: Path) -> None:
    """The instructions end saying a name several agents share answers for each: of a catalog where no name is
    shared (the scaffold's one agent) it is untrue, and '(copilot)' names an agent it does not have."""
    assert run_cli(["init"], cwd=tmp_path).exit_code == 0
    built = run_cli(["build"], cwd=tmp_path)
    assert built.exit_code == 0, built.output
    instructions = (tmp_path / "build" / "instructions.md").read_text("utf-8")
    assert instructions.rstrip().endswith("A capability may be asked in your own words.")
    assert "several agents share" not in instructions and "copilot" not in instructions


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text("title: mine\n", encoding="utf-8")
    workflow = tmp_path / ".github" / "workflows" / "capidx.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("name: mine\n", encoding="utf-8")

    result = run_cli(["init"], cwd=tmp_path)

    assert result.exit_code == 2
    assert "capidx.yaml" in result.output and ".github/workflows/capidx.yml" in result.output
    assert "--force" in result.output and "nothing written" in result.output
    assert (tmp_path / "capidx.yaml").read_text("utf-8") == "title: mine\n"
    assert workflow.read_text("utf-8") == "name: mine\n"
    assert not (tmp_path / "agents").exists() and not (tmp_path / ".pre-commit-config.yaml").exists()
    assert not (tmp_path / ".gitignore").exists()


SEVEN_ALIASES = {f"phrase {n}": "MCP Servers" for n in range(7)}


def maintainers_project(root: Path) -> dict[str, bytes]:
    """A catalog in use: the maintainer's capidx.yaml, three agents, seven aliases, their own pre-commit file."""
    write_catalog(root, aliases={"aliases": SEVEN_ALIASES})
    (root / "capidx.yaml").write_text("title: Our agents\nbudgets:\n  summary: 1500\n", encoding="utf-8")
    (root / ".pre-commit-config.yaml").write_text("repos: []\n", encoding="utf-8")
    return snapshot(root)


def test_init_force_in_a_project_keeps_and_adds_nothing_of_the_maintainers(tmp_path: Path) -> None:
    before = maintainers_project(tmp_path)

    result = run_cli(["init", "--force"], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    after = snapshot(tmp_path)
    assert {path: after[path] for path in before} == before  # every file of theirs byte for byte
    assert sorted(set(after) - set(before)) == [".github/workflows/capidx.yml", ".gitignore"]
    assert after[".gitignore"] == b"build/\n"  # their capidx.yaml keeps the default paths.out
    lines = result.output.splitlines()
    assert "kept capidx.yaml: yours (not the scaffold's bytes), left byte for byte" in lines
    assert "kept .pre-commit-config.yaml: yours (not the scaffold's bytes), left byte for byte" in lines
    assert "no example agent or sample aliases added: capidx.yaml is yours, and so is the catalog it names" in lines
    assert "created .github/workflows/capidx.yml" in lines and "replaced" not in result.output
    assert not any("agents/" in line for line in lines if line.startswith("created"))


def test_init_beside_a_capidx_yaml_whose_catalog_is_missing_says_to_create_it(tmp_path: Path) -> None:
    """Their capidx.yaml, no catalog yet: "capidx validate && ..." would fail on a missing folder. The next steps say
    which folder to create, and nothing is written into it (the catalog is theirs)."""
    (tmp_path / "capidx.yaml").write_text("title: mine\npaths:\n  agents: data/agents\n", encoding="utf-8")

    result = run_cli(["init", "--force"], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    assert "# once data/agents/ (your capidx.yaml's catalog) holds an agent" in result.output
    assert "Create data/agents/<agent>/capabilities/current.json: the catalog your capidx.yaml names." in result.output
    assert not (tmp_path / "data").exists() and not (tmp_path / "agents").exists()
    assert "# now on your catalog" not in result.output


def test_init_force_ignores_the_build_directory_the_maintainers_capidx_yaml_names(tmp_path: Path) -> None:
    """Their `paths.out: dist/capidx` once got `build/` appended: their tracked build/ ignored, their output not."""
    maintainers_project(tmp_path)
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: dist/capidx\n", encoding="utf-8")
    (tmp_path / "build").mkdir()

    result = run_cli(["init", "--force"], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    assert (tmp_path / ".gitignore").read_bytes() == b"dist/capidx/\n"
    assert "created .gitignore (dist/capidx/)" in result.output.splitlines()


def test_init_force_leaves_gitignore_alone_when_the_maintainers_capidx_yaml_cannot_be_read(tmp_path: Path) -> None:
    maintainers_project(tmp_path)
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: [dist]\n", encoding="utf-8")

    result = run_cli(["init", "--force"], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    assert not (tmp_path / ".gitignore").exists()
    assert "Add your build directory (paths.out) to .gitignore: capidx.yaml cannot be read" in result.output


def test_init_without_force_in_a_project_names_what_is_there_and_writes_nothing(tmp_path: Path) -> None:
    before = maintainers_project(tmp_path)

    result = run_cli(["init"], cwd=tmp_path)

    assert result.exit_code == 2
    assert snapshot(tmp_path) == before
    assert "capidx.yaml, .pre-commit-config.yaml already there" in result.output
    assert "--force writes only the missing files and keeps these byte for byte" in result.output


def test_init_around_an_existing_catalog_adds_no_example_and_the_build_has_only_its_agents(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    (tmp_path / "agents" / "notes.md").write_text("# our notes\n", encoding="utf-8")
    before = snapshot(tmp_path)

    result = run_cli(["init"], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    after = snapshot(tmp_path)
    assert {path: after[path] for path in before} == before
    assert sorted(set(after) - set(before)) == [
        ".github/workflows/capidx.yml",
        ".gitignore",
        ".pre-commit-config.yaml",
        "capidx.yaml",
    ]
    lines = result.output.splitlines()
    assert "no example agent or sample aliases added: agents/ already holds 3 agents and an alias table" in lines
    assert "created capidx.yaml" in lines and "Rename agents/example-agent" not in result.output
    assert "capidx validate && capidx build && capidx serve   # now on your catalog" in result.output

    built = run_cli(["build", "--no-site"], cwd=tmp_path)
    assert built.exit_code == 0, built.output
    assert "Example Agent" not in (tmp_path / "build" / "summary.md").read_text("utf-8")


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda agents: (agents / "aliases.yaml").write_text("aliases: {}\n", "utf-8"), "an alias table"),
        (lambda agents: (agents / "README.md").write_text("ours\n", "utf-8"), "1 other entry"),
        (lambda agents: (agents / "draft" / "capabilities").mkdir(parents=True), "1 other entry"),
        (lambda agents: write_catalog(agents, aliases=None, agents_dir="vendor"), "3 agents"),  # validate finds them
    ],
    ids=["alias-table", "other-file", "folder-without-document", "nested-agents"],
)
def test_init_adds_no_example_into_a_catalog_folder_that_holds_anything(
    tmp_path: Path, make: Callable[[Path], object], why: str
) -> None:
    (tmp_path / "agents").mkdir()
    make(tmp_path / "agents")
    before = snapshot(tmp_path / "agents")

    result = run_cli(["init"], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    assert snapshot(tmp_path / "agents") == before
    assert f"no example agent or sample aliases added: agents/ already holds {why}" in result.output.splitlines()


def test_init_into_a_catalog_holding_a_folder_this_user_may_not_list_counts_its_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which entries of the catalog folder are agents is told by walking it as validate does; a folder in it this user
    may not list (mode 111) stops that walk, which is validate's to say. init writes the rest of the scaffold and
    counts the entries. Simulated: root lists any folder."""
    write_catalog(tmp_path / "agents", aliases=None, agents_dir="vendor")
    deny_listing(monkeypatch, tmp_path / "agents" / "vendor" / "claude-code")

    result = run_cli(["init"], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    assert "no example agent or sample aliases added: agents/ already holds 1 entry" in result.output.splitlines()
    assert (tmp_path / "capidx.yaml").is_file()


def test_init_adds_the_example_into_a_catalog_folder_holding_only_hidden_files(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / ".gitkeep").write_bytes(b"")
    result = run_cli(["init"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "agents" / "example-agent" / "capabilities" / "current.json").is_file()
    assert "created agents/aliases.json" in result.output and (tmp_path / "agents" / ".gitkeep").read_bytes() == b""


def test_init_run_again_changes_nothing_and_says_why(tmp_path: Path) -> None:
    assert run_cli(["init"], cwd=tmp_path).exit_code == 0
    before = snapshot(tmp_path)

    result = run_cli(["init"], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    assert snapshot(tmp_path) == before
    lines = result.output.splitlines()
    assert [line for line in lines if line.startswith("created")] == []
    assert "kept capidx.yaml: same as the scaffold" in lines
    assert "no example agent or sample aliases added: agents/ already holds 1 agent and an alias table" in lines
    assert "replace OWNER" in result.output  # the CI files still hold the placeholders


def test_init_force_keeps_a_linked_capidx_yaml_and_does_not_follow_it(tmp_path: Path) -> None:
    shared = tmp_path / "shared.yaml"
    shared.write_bytes(b"title: shared\n")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "capidx.yaml").symlink_to(shared)

    refused = run_cli(["init", "project"], cwd=tmp_path)
    forced = run_cli(["init", "project", "--force"], cwd=tmp_path)

    assert refused.exit_code == 2 and forced.exit_code == 0, forced.output
    assert shared.read_bytes() == b"title: shared\n" and (tmp_path / "project" / "capidx.yaml").is_symlink()
    assert "kept capidx.yaml: a link: left alone, not followed" in forced.output.splitlines()
    assert not (tmp_path / "project" / "agents").exists()


def test_init_will_not_replace_a_folder_even_with_force(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").mkdir()
    result = run_cli(["init", "--force"], cwd=tmp_path)
    assert result.exit_code == 2 and "is a folder" in result.output
    assert not (tmp_path / "agents").exists()


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_init_refuses_a_file_where_a_folder_goes_before_writing_anything(tmp_path: Path, force: list[str]) -> None:
    """`.github` a file once got capidx.yaml, .pre-commit-config.yaml and agents/ written, then ".../.github/workflows:
    Not a directory"."""
    (tmp_path / ".github").write_text("mine\n", encoding="utf-8")
    before = snapshot(tmp_path)

    result = run_cli(["init", *force], cwd=tmp_path)

    assert result.exit_code == 2
    assert ".github is a file or a link where a folder goes; nothing written" in result.output
    assert snapshot(tmp_path) == before and sorted(os.listdir(tmp_path)) == [".github"]


@pytest.mark.parametrize("linked", [".github", ".github/workflows"])
def test_init_writes_nothing_through_a_linked_folder(tmp_path: Path, linked: str) -> None:
    """A `.github` (or `.github/workflows`) that is a link to a folder outside the project: the workflow would have
    been written there, and init said 'created .github/workflows/capidx.yml'."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / linked).parent.mkdir(parents=True, exist_ok=True)
    (project / linked).symlink_to(outside, target_is_directory=True)

    result = run_cli(["init"], cwd=project)

    assert result.exit_code == 2 and f"{linked} is a file or a link where a folder goes" in result.output
    assert list(outside.iterdir()) == [] and not (project / "capidx.yaml").exists()


def test_init_writes_a_gitignore_for_the_build(tmp_path: Path) -> None:
    result = run_cli(["init"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".gitignore").read_bytes() == b"build/\n"
    assert "created .gitignore (build/)" in result.output and "Add build/" not in result.output


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b"*.pyc\n.venv/\n", b"*.pyc\n.venv/\nbuild/\n"),
        (b"# mine\r\n*.pyc", b"# mine\r\n*.pyc\nbuild/\n"),  # no final newline: one is added before the line
        (b"", b"build/\n"),
    ],
)
def test_init_adds_build_to_a_gitignore_keeping_every_line(tmp_path: Path, before: bytes, after: bytes) -> None:
    (tmp_path / ".gitignore").write_bytes(before)
    result = run_cli(["init"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".gitignore").read_bytes() == after
    assert "added build/ to .gitignore" in result.output


@pytest.mark.parametrize("line", [b"build/", b"/build", b"  build  ", b"!build/"])
def test_init_never_duplicates_a_build_line(tmp_path: Path, line: bytes) -> None:
    before = b"*.pyc\n" + line + b"\n"
    (tmp_path / ".gitignore").write_bytes(before)
    result = run_cli(["init"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".gitignore").read_bytes() == before
    assert ".gitignore" not in result.output


def test_init_leaves_a_gitignore_link_alone_and_says_what_to_add(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"*.pyc\n")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / ".gitignore").symlink_to(target)
    result = run_cli(["init", "project"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == b"*.pyc\n" and (tmp_path / "project" / ".gitignore").is_symlink()
    assert "Add build/ to .gitignore" in result.output


def test_init_into_a_path_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("", encoding="utf-8")
    result = run_cli(["init", "taken"], cwd=tmp_path)
    assert result.exit_code == 2


@pytest.mark.parametrize("name", ["my catalog's ä", "-catalog", "-"])
def test_the_next_step_quotes_a_folder_name_the_shell_would_split(tmp_path: Path, name: str) -> None:
    """The `cd` line is meant to be pasted into a shell: a folder with a space or a quote must reach `cd` whole, and
    one whose name starts with `-` must not be read as an option (`cd -catalog`) or the previous folder (`cd -`)."""
    result = run_cli(["init", "--", name], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    [line] = [line for line in result.output.splitlines() if "capidx validate && capidx build" in line]
    stub = tmp_path / "bin" / "capidx"  # says where each of the line's three commands runs, and serves nothing
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\npwd\n", encoding="utf-8")
    stub.chmod(0o755)
    environment = {**os.environ, "PATH": f"{stub.parent}{os.pathsep}{os.environ.get('PATH', '')}", "OLDPWD": "/"}
    done = subprocess.run(  # the line as printed, comment and all, as a paste runs it
        ["sh", "-c", line.strip()], cwd=tmp_path, env=environment, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert [Path(folder) for folder in done.stdout.splitlines()] == [tmp_path / name] * 3


def test_the_ci_files_are_the_ones_docs_ci_md_explains() -> None:
    """One workflow and one pre-commit configuration: what the docs show is what init writes."""
    scaffold = ROOT / "compiler" / "scaffold"
    examples = ROOT / "docs" / "examples"
    assert (scaffold / "workflow.yml").read_bytes() == (examples / "capidx.yml").read_bytes()
    assert (scaffold / "pre-commit-config.yaml").read_bytes() == (examples / "pre-commit-config.yaml").read_bytes()


def test_every_workflow_the_docs_show_installs_capidx_pinned_from_its_repository() -> None:
    # capidx is not on the package index: a bare `capidx>=…` there could install anyone's package, in jobs
    # that may push. Every requirement the docs and the scaffold give is the git repository at a commit.
    texts = [*(ROOT / "docs").rglob("*.md"), *(ROOT / "docs" / "examples").glob("*.y*ml")]
    texts += list((ROOT / "compiler" / "scaffold").glob("*.y*ml"))
    found = [
        (path.name, line.split(":", 1)[1].strip())
        for path in texts
        for line in path.read_text("utf-8").splitlines()
        if line.strip().startswith("CAPIDX_REQUIREMENT:")
    ]
    assert len(found) >= 3
    for name, requirement in found:
        assert requirement == '"capidx @ git+https://github.com/OWNER/capidx@COMMIT"', (name, requirement)


def test_the_scaffolded_pre_commit_config_is_valid_for_pre_commit(tmp_path: Path) -> None:
    assert run_cli(["init"], cwd=tmp_path).exit_code == 0
    config = tmp_path / ".pre-commit-config.yaml"
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (repo,) = yaml.safe_load(config.read_text("utf-8"))["repos"]
    assert [hook["id"] for hook in repo["hooks"]] == ["capidx-validate"]


def test_the_example_agent_is_marked_as_an_example_with_placeholder_sources(tmp_path: Path) -> None:
    assert run_cli(["init"], cwd=tmp_path).exit_code == 0
    document = json.loads((tmp_path / "agents/example-agent/capabilities/current.json").read_text("utf-8"))
    assert "EXAMPLE" in document["$comment"] and document["agent"]["name"] == "Example Agent"
    urls = [source["url"] for capability in document["capabilities"] for source in capability["sources"]]
    assert urls and all(url.startswith("https://example.com/replace-with-") for url in urls)
    assert all("verifiedDate" not in source for c in document["capabilities"] for source in c["sources"])


def test_init_files_get_0644_whatever_the_umask_and_a_gitignore_keeps_its_mode(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_bytes(b"*.pyc\n")
    (tmp_path / ".gitignore").chmod(0o600)
    previous = os.umask(0o077)
    try:
        assert run_cli(["init"], cwd=tmp_path).exit_code == 0
    finally:
        os.umask(previous)
    assert {target: stat.S_IMODE((tmp_path / target).stat().st_mode) for target in TARGETS} == dict.fromkeys(
        TARGETS, 0o644
    )
    assert stat.S_IMODE((tmp_path / ".gitignore").stat().st_mode) == 0o600


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(source: object, target: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    result = run_cli(["init"], cwd=tmp_path)

    assert result.exit_code == 2
    assert "cannot write the scaffold" in result.output and "No space left on device" in result.output
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []


def test_a_failed_write_names_the_file_when_the_system_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(source: object, target: object) -> None:
        raise OSError(errno.EACCES, "Permission denied", str(target))

    monkeypatch.setattr(os, "replace", refuse)
    result = run_cli(["init"], cwd=tmp_path)

    assert result.exit_code == 2
    assert f"{tmp_path / 'capidx.yaml'}: Permission denied" in result.output
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []


@pytest.mark.parametrize("denied", [".", ".github"])
def test_a_folder_this_user_may_not_search_is_said_so_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, denied: str
) -> None:
    """`capidx init DIR` with DIR inside a folder this user may not search, or DIR/.github such a folder: checking
    what is there raised the PermissionError (traceback, exit 1). Said, with the permission needed; nothing
    written. Simulated (as if of mode 000): root searches any folder."""
    project = tmp_path / "closed" / "project"
    (project / ".github").mkdir(parents=True)
    deny_search(monkeypatch, tmp_path / "closed" if denied == "." else project / ".github")

    result = run_cli(["init", str(project)], cwd=tmp_path)

    assert result.exit_code == 2, result.output
    assert ": cannot be read: permission denied; nothing written (the user running capidx needs read and search" in (
        result.output
    )
    monkeypatch.undo()
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []


def test_a_folder_name_too_long_for_the_file_system_is_said_so_and_nothing_written(tmp_path: Path) -> None:
    """A folder name of 300 bytes (a folder entry holds 255): looking at what is there raised ENAMETOOLONG, a
    traceback (exit 1)."""
    result = run_cli(["init", "a" * 300], cwd=tmp_path)

    assert result.exit_code == 2, result.output
    assert "; nothing written" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []
    # Below a folder that is not there either, the first write made that folder before failing.
    result = run_cli(["init", str(Path("new") / ("a" * 300) / "project")], cwd=tmp_path)

    assert result.exit_code == 2, result.output
    assert "; nothing written" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_the_example_agent_validates_with_exactly_its_placeholder_warnings(tmp_path: Path) -> None:
    """Each example source is never verified and on example.com: validate says both, and nothing else."""
    assert run_cli(["init"], cwd=tmp_path).exit_code == 0
    result = run_cli(["validate", "-v", "--format", "json"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    found = [(d["severity"], d["code"], d["pointer"]) for d in json.loads(result.stdout)["diagnostics"]]
    assert sorted(found) == [
        ("warning", "never-verified", "$.capabilities[0].sources[0]"),
        ("warning", "never-verified", "$.capabilities[1].sources[0]"),
        ("warning", "placeholder-url", "$.capabilities[0].sources[0].url"),
        ("warning", "placeholder-url", "$.capabilities[1].sources[0].url"),
    ]
    assert run_cli(["build"], cwd=tmp_path).exit_code == 0


# --- a catalog below the top of a git work tree ----------------------------------------------------------------

CI_FILES = (".pre-commit-config.yaml", ".github/workflows/capidx.yml")


@pytest.mark.parametrize("git", ["folder", "file"])  # a clone's .git folder, a worktree's or submodule's .git file
def test_init_below_the_top_of_a_work_tree_puts_the_ci_files_at_the_top(tmp_path: Path, git: str) -> None:
    """GitHub Actions and pre-commit read their files only at the repository's top: `capidx init tools/catalog` in a
    monorepo writes them there, each capidx command given the catalog's capidx.yaml, and none into the catalog, where
    they would never run. Run from the top as CI runs them, those commands work on the new catalog."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir() if git == "folder" else (repo / ".git").write_text("gitdir: ../x\n", encoding="utf-8")
    result = run_cli(["init", "tools/catalog"], cwd=repo)
    assert result.exit_code == 0, result.output
    catalog = repo / "tools" / "catalog"
    assert not any((catalog / name).exists() for name in (*CI_FILES, ".github"))
    assert (catalog / "capidx.yaml").is_file() and (catalog / ".gitignore").read_text("utf-8") == "build/\n"
    lines = result.output.splitlines()
    assert [line for line in lines if line.startswith("created ../../")] == [f"created ../../{f}" for f in CI_FILES]
    assert "they run capidx with --config tools/catalog/capidx.yaml" in result.output
    assert f"the CI files are at the top of the repository, {repo} (../.. from the catalog)" in result.output
    assert "In ../../.pre-commit-config.yaml and ../../.github/workflows/capidx.yml replace OWNER" in result.output

    workflow = (repo / CI_FILES[1]).read_text("utf-8")
    commands = [line.strip() for line in workflow.splitlines() if re.search(r"\bcapidx (validate|build|report)", line)]
    in_checkouts = [command for command in commands if "out/report" not in command]  # the reports' step reads out/
    assert len(in_checkouts) == 4 and all("--config tools/catalog/capidx.yaml" in c for c in in_checkouts)
    yaml.safe_load(workflow)
    (hook,) = yaml.safe_load((repo / CI_FILES[0]).read_text("utf-8"))["repos"][0]["hooks"]
    assert hook["args"] == ["--config", "tools/catalog/capidx.yaml"]
    checked = re.compile(hook["files"])
    assert checked.search("tools/catalog/agents/a/capabilities/current.json")
    assert checked.search("tools/catalog/agents/aliases.json")
    assert not checked.search("web/i18n/aliases.json") and not checked.search("tools/catalogue/aliases.json")
    assert checked.search("tools/catalog/capidx.yaml") and not checked.search("tools/catalog/agents/capidx.yaml")
    hooked = run_cli(["validate", *hook["args"], "tools/catalog/capidx.yaml"], cwd=repo)  # as the hook runs it
    assert hooked.exit_code == 0, hooked.output

    validated = run_cli(["validate", "--config", "tools/catalog/capidx.yaml", "--format", "github"], cwd=repo)
    assert validated.exit_code == 0, validated.output
    assert "file=tools/catalog/agents/example-agent/capabilities/current.json" in validated.output  # as git names it
    again = run_cli(["init", "tools/catalog"], cwd=repo)
    assert again.exit_code == 0 and "kept ../../.github/workflows/capidx.yml: same as the scaffold" in again.output


def test_the_ci_files_at_the_top_are_valid_for_pre_commit(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert run_cli(["init", "catalog"], cwd=tmp_path).exit_code == 0
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(tmp_path / CI_FILES[0])],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_folder_name_the_ci_files_cannot_hold_keeps_them_in_it_and_says_where_they_belong(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    result = run_cli(["init", "my catalog"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert all((tmp_path / "my catalog" / name).is_file() for name in CI_FILES)
    assert not any((tmp_path / name).exists() for name in CI_FILES)
    assert f"the CI files stay here, where nothing reads them: {tmp_path} is the top of the repository" in result.output


def test_init_at_the_top_of_a_work_tree_writes_the_ci_files_as_the_docs_show(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert run_cli(["init"], cwd=tmp_path).exit_code == 0
    assert (tmp_path / CI_FILES[1]).read_bytes() == (ROOT / "docs" / "examples" / "capidx.yml").read_bytes()


@pytest.mark.parametrize("catalog", ["tools/catalog", "tools"])  # a new folder (made by the first write), or one there
def test_init_below_the_top_never_replaces_the_tops_files_nor_writes_through_a_linked_github(
    tmp_path: Path, catalog: str
) -> None:
    """The top's files are looked at where they are, whether the catalog's folder is there yet or not: one of yours
    (another catalog's CI files, too) stops init, and a `.github` that is a link is not followed."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "tools").mkdir()
    (repo / CI_FILES[0]).write_bytes(b"repos: []  # mine\n")
    before = snapshot(repo)
    refused = run_cli(["init", catalog], cwd=repo)
    assert refused.exit_code == 2 and "/.pre-commit-config.yaml already there" in refused.output
    assert snapshot(repo) == before and sorted(os.listdir(repo / "tools")) == []

    (repo / CI_FILES[0]).unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".github").symlink_to(elsewhere)
    linked = run_cli(["init", catalog], cwd=repo)
    assert linked.exit_code == 2 and "/.github is a file or a link where a folder goes" in linked.output
    assert os.listdir(elsewhere) == [] and os.listdir(repo / "tools") == [] and not (repo / CI_FILES[0]).exists()


def test_a_second_catalog_below_the_top_keeps_the_first_ones_ci_files(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert run_cli(["init", "first"], cwd=tmp_path).exit_code == 0
    before = snapshot(tmp_path)
    assert run_cli(["init", "second"], cwd=tmp_path).exit_code == 2
    assert snapshot(tmp_path) == before
    forced = run_cli(["init", "--force", "second"], cwd=tmp_path)
    assert forced.exit_code == 0, forced.output
    assert all("--config first/capidx.yaml" in (tmp_path / name).read_text("utf-8") for name in CI_FILES)
    kept = "(../.pre-commit-config.yaml, ../.github/workflows/capidx.yml)"  # the first catalog's: no --config of second
    assert f"they run capidx with --config second/capidx.yaml; not those kept {kept} until each" in forced.output


def test_init_given_a_path_through_dot_dot_names_the_catalog_as_the_repository_does(tmp_path: Path) -> None:
    """`capidx init ../catalog` from tools/other: the CI files name tools/catalog, the folder git has, not
    tools/other/../catalog, which the pre-commit hook's `files` pattern never matches."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "tools" / "other").mkdir(parents=True)
    result = run_cli(["init", "../catalog"], cwd=tmp_path / "tools" / "other")
    assert result.exit_code == 0, result.output
    assert "created ../../.pre-commit-config.yaml" in result.output
    (hook,) = yaml.safe_load((tmp_path / CI_FILES[0]).read_text("utf-8"))["repos"][0]["hooks"]
    assert hook["args"] == ["--config", "tools/catalog/capidx.yaml"]
    assert re.search(hook["files"], "tools/catalog/agents/aliases.json")
    assert "--config tools/catalog/capidx.yaml --format github" in (tmp_path / CI_FILES[1]).read_text("utf-8")


def test_a_pre_commit_configuration_of_yours_gets_the_hook_to_add_in_the_next_steps(tmp_path: Path) -> None:
    """Kept with --force, your .pre-commit-config.yaml has no capidx hook: the next steps give the entry to add under
    its `repos:` (for a catalog below the top, with its --config and files), which pasted there is a valid
    configuration; the OWNER/COMMIT step names only the files init wrote."""
    (tmp_path / ".git").mkdir()
    mine = "repos:\n  - repo: local\n    hooks:\n      - {id: mine, name: mine, entry: 'true', language: system}\n"
    (tmp_path / CI_FILES[0]).write_text(mine, encoding="utf-8")
    result = run_cli(["init", "--force", "tools/catalog"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / CI_FILES[0]).read_text("utf-8") == mine
    steps = result.output.split("\nNext:\n", 1)[1]
    assert "In ../../.github/workflows/capidx.yml replace OWNER" in steps and "then `pre-commit install`" in steps
    assert "In ../../.pre-commit-config.yaml" not in steps
    lead = "../../.pre-commit-config.yaml is yours and was kept: add capidx's hook under its `repos:`"
    block = steps.split(lead, 1)[1].split(":\n", 1)[1].rstrip("\n")
    assert "args: [--config, tools/catalog/capidx.yaml]" in block and block.startswith("  - repo: ")
    hooks = _pasted(tmp_path, mine, block)
    assert hooks == ["mine", "capidx-validate"]


def test_a_workflow_of_yours_is_pointed_to_the_one_the_docs_show(tmp_path: Path) -> None:
    workflow = tmp_path / CI_FILES[1]
    workflow.parent.mkdir(parents=True)
    workflow.write_text("name: mine\n", encoding="utf-8")
    result = run_cli(["init", "--force"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (
        ".github/workflows/capidx.yml is yours and was kept: the scaffold's workflow is docs/ci.md's." in result.output
    )
    assert "In .pre-commit-config.yaml replace OWNER" in result.output


def test_the_hook_to_add_is_indented_as_the_entries_of_your_repos(tmp_path: Path) -> None:
    """`pre-commit sample-config` writes its entries at the line's start (`-   repo:`): the entry the next steps give
    has its `-` there too, so that pasted at the end of that file it is a valid configuration."""
    (tmp_path / ".git").mkdir()
    mine = (
        "# See https://pre-commit.com for more information\nrepos:\n-   repo: https://github.com/pre-commit/pre-commit-hooks\n"
        "    rev: v3.2.0\n    hooks:\n    -   id: trailing-whitespace\n"
    )
    (tmp_path / CI_FILES[0]).write_text(mine, encoding="utf-8")
    result = run_cli(["init", "--force", "tools/catalog"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    lead = "../../.pre-commit-config.yaml is yours and was kept: add capidx's hook under its `repos:`"
    block = result.output.split(lead, 1)[1].split(":\n", 1)[1].rstrip("\n")
    assert block.startswith("- repo: ") and "\n      args: [--config, tools/catalog/capidx.yaml]" in block
    hooks = _pasted(tmp_path, mine, block)
    assert hooks == ["trailing-whitespace", "capidx-validate"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_kept_as_your_pre_commit_configuration_is_not_read_for_its_indentation(tmp_path: Path) -> None:
    """A FIFO where .pre-commit-config.yaml goes is kept as yours (--force); opened to find its entries' indentation,
    it held init for ever, the scaffold written: the entry the next steps give is then the scaffold's own."""
    os.mkfifo(tmp_path / CI_FILES[0])
    results: list[Any] = []
    worker = threading.Thread(
        target=lambda: results.append(run_cli(["init", "--force", "."], cwd=tmp_path)), daemon=True
    )
    worker.start()
    worker.join(timeout=30)
    waited = worker.is_alive()
    if waited:  # a writer that closes at once lets the blocked read end
        os.close(os.open(tmp_path / CI_FILES[0], os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=10)
    assert not waited, "init waited for a writer of the pipe"
    assert results and results[0].exit_code == 0
    assert f"kept {CI_FILES[0]}: yours (not the scaffold's bytes), left byte for byte" in results[0].output
    assert "\n  - repo: https://github.com/OWNER/capidx" in results[0].output


def _pasted(tmp_path: Path, mine: str, block: str) -> list[str]:
    """The hook ids of `mine` with the printed entry pasted after its last entry, once pre-commit has validated it."""
    (tmp_path / "merged.yaml").write_text(mine + block + "\n", encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(tmp_path / "merged.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    return [hook["id"] for repo in yaml.safe_load(mine + block)["repos"] for hook in repo["hooks"]]
