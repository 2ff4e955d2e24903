"""Every command run from a subfolder of a project, or from the top of a repository whose catalog is in a subfolder,
names the project's capidx.yaml (`capidx.schema.above`).

capidx reads the working folder's capidx.yaml only. Run from `agents/<id>/`, validate and build said where the
capidx.yaml above is, but report, serve and `inject --check` only "no build at …/agents/<id>/build: run `capidx
build` first", which sent the user to build in the wrong place. They now name the capidx.yaml above and the build
it names, relative to the working folder; a --build (or CAPIDX_BUILD) the user gave, a capidx.yaml in force, or no
capidx.yaml above leaves today's message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_factory import built_project, run_cli, write_catalog

from capidx.schema.above import (
    CONFIG_LEVELS_DOWN,
    CONFIG_LEVELS_UP,
    ENTRIES_READ_BELOW,
    above_hint,
    config_above,
    config_below,
)

ABOVE = "no capidx.yaml here; ../../capidx.yaml is above: run capidx in ../.., or pass"
COMMANDS = {"report": ["report"], "serve": ["serve"], "inject": ["inject", "--check", "AGENTS.md"]}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built project (capidx.yaml with `paths.out: build`, build/): the tests only read it."""
    return built_project(tmp_path_factory.mktemp("project"))


def _run(command: str, cwd: Path, *more: str) -> tuple[int, str]:
    """Exit code and everything printed (report and inject print their errors on stdout, serve on stderr)."""
    result = run_cli([*COMMANDS[command], *more], cwd)
    return result.exit_code, result.output


def _no_build(cwd: Path) -> str:
    return f"no build at {cwd.resolve() / 'build'}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_run_from_an_agent_folder_the_build_above_is_named(project: Path, command: str) -> None:
    here = project / "agents" / "claude-code"
    code, output = _run(command, here)
    assert code == 2, output
    assert f"{_no_build(here)}: {ABOVE} --build ../../build" in output, output
    assert not (here / "build").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_build_named_is_the_one_paths_out_names(tmp_path: Path, command: str) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: out/index\n", encoding="utf-8")
    here = tmp_path / "agents" / "copilot-cli"
    code, output = _run(command, here)
    assert code == 2, output
    assert f"{_no_build(here)}: {ABOVE} --build ../../out/index" in output, output


def test_serve_names_serve_build_before_paths_out(tmp_path: Path) -> None:
    """serve's default build is serve.build of capidx.yaml, else paths.out: read there, it names that one."""
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: out\nserve:\n  build: served\n", encoding="utf-8")
    here = tmp_path / "agents" / "copilot-cli"
    code, output = _run("serve", here)
    assert code == 2, output
    assert f"{_no_build(here)}: {ABOVE} --build ../../served" in output, output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_capidx_yaml_above_that_does_not_load_is_passed_by_config(tmp_path: Path, command: str) -> None:
    write_catalog(tmp_path)
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: [build\n", encoding="utf-8")
    here = tmp_path / "agents" / "claude-code"
    code, output = _run(command, here)
    assert code == 2, output
    assert f"{_no_build(here)}: {ABOVE} --config ../../capidx.yaml" in output, output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_folder_of_another_tool_where_the_build_is_looked_for_names_the_build_above(
    project: Path, tmp_path: Path, command: str
) -> None:
    """A `build/` of another tool in the subfolder holds nothing of a build: the project's build is still meant."""
    here = project / "agents" / "vscode-copilot"
    (here / "build").mkdir()
    try:
        (here / "build" / "notes.txt").write_text("another tool's\n", encoding="utf-8")
        code, output = _run(command, here)
    finally:
        (here / "build" / "notes.txt").unlink()
        (here / "build").rmdir()
    assert code == 2, output
    assert f"{_no_build(here)} (manifest.json is missing): {ABOVE} --build ../../build" in output, output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_build_named_is_the_project_s(project: Path, command: str) -> None:
    """Following the hint works: the build it names is there."""
    here = project / "agents" / "claude-code"
    if command == "serve":
        code, output = _run(command, here, "--build", "../../build", "--print-config")
    else:
        code, output = _run(command, here, "--build", "../../build")
    # inject --check: AGENTS.md holds no block yet (exit 1); report: within budget (exit 0)
    assert code == (1 if command == "inject" else 0), output
    assert "no capidx.yaml here" not in output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_build_folder_given_by_flag_is_not_second_guessed(project: Path, command: str) -> None:
    here = project / "agents" / "claude-code"
    code, output = _run(command, here, "--build", "build")
    assert code == 2, output
    assert _no_build(here) in output, output
    assert "capidx.yaml" not in output, output


def test_a_build_folder_given_by_capidx_build_is_not_second_guessed(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("CAPIDX_BUILD", "build")
    here = project / "agents" / "claude-code"
    code, output = _run("serve", here)
    assert code == 2, output
    assert f"{_no_build(here)}: run `capidx build` first, or pass --build DIR" in output, output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_capidx_yaml_in_force_is_not_second_guessed(project: Path, tmp_path: Path, command: str) -> None:
    """--config names the capidx.yaml in force: its build is the one looked for, and nothing is said of another."""
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: nowhere\n", encoding="utf-8")
    here = project / "agents" / "claude-code"
    code, output = _run(command, here, "--config", str(tmp_path / "capidx.yaml"))
    assert code == 2, output
    assert f"no build at {tmp_path / 'nowhere'}" in output, output
    assert "no capidx.yaml here" not in output, output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_without_a_capidx_yaml_above_the_message_is_today_s(tmp_path: Path, command: str) -> None:
    write_catalog(tmp_path)
    here = tmp_path / "agents" / "claude-code"
    assert config_above(here) is None  # nothing above the test's folder either
    code, output = _run(command, here)
    assert code == 2, output
    assert f"{_no_build(here)}: run `capidx build` first, or pass --build DIR" in output, output
    assert "capidx.yaml" not in output, output


@pytest.mark.parametrize("command", ["validate", "build"])
def test_validate_and_build_from_an_agent_folder_name_the_capidx_yaml_above(project: Path, command: str) -> None:
    here = project / "agents" / "claude-code"
    result = run_cli([command], here)
    assert result.exit_code == 2, result.output
    assert f"agents: catalog directory not found ({ABOVE} --config ../../capidx.yaml)" in result.output.splitlines()
    assert not (here / "build").exists()


def test_the_lookup_stops_some_levels_up(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text("title: T\n", encoding="utf-8")
    deep = tmp_path.joinpath(*["d"] * CONFIG_LEVELS_UP)
    assert config_above(deep) == tmp_path / "capidx.yaml"
    assert config_above(deep / "d") is None


def test_a_build_outside_the_project_is_named_by_its_whole_path(tmp_path: Path) -> None:
    above = tmp_path / "project" / "capidx.yaml"
    here = tmp_path / "project" / "agents"
    hint = above_hint(above, here, "--build", tmp_path / "shared" / "build")
    shared = tmp_path / "shared" / "build"
    assert hint == f"no capidx.yaml here; ../capidx.yaml is above: run capidx in .., or pass --build {shared}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_capidx_yaml_above_linked_out_of_its_folder_is_named_unread(tmp_path: Path, command: str) -> None:
    """The working folder's capidx.yaml that is a link out of its folder is refused unread: a pull request may commit
    one leading to any file of the machine. The one above was read through such a link, and its `paths.out` (or
    `serve.build`) quoted; it is named with --config, nothing of it said."""
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("paths:\n  out: secret-out\nserve:\n  build: secret-build\n", encoding="utf-8")
    project = tmp_path / "project"
    write_catalog(project)
    (project / "capidx.yaml").symlink_to(elsewhere)
    here = project / "agents" / "claude-code"
    code, output = _run(command, here)
    assert code == 2, output
    assert f"{_no_build(here)}: {ABOVE} --config ../../capidx.yaml" in output, output
    assert "secret" not in output, output


BELOW = "no capidx.yaml here; tools/capidx/capidx.yaml is below: run capidx in tools/capidx, or pass"


@pytest.fixture(scope="module")
def monorepo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose catalog is in tools/capidx (`capidx init tools/capidx`), built there."""
    top = tmp_path_factory.mktemp("monorepo")
    built_project(top / "tools" / "capidx")
    (top / "src").mkdir()
    return top


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_run_at_the_top_of_a_monorepo_the_build_below_is_named(monorepo: Path, command: str) -> None:
    """From the repository's top, where init put the CI files, report, serve and inject said only "no build at
    …/build: run `capidx build` first", and that build said it found no catalog: neither named tools/capidx."""
    code, output = _run(command, monorepo)
    assert code == 2, output
    assert f"{_no_build(monorepo)}: {BELOW} --build tools/capidx/build" in output, output


@pytest.mark.parametrize("command", ["validate", "build"])
def test_validate_and_build_at_the_top_of_a_monorepo_name_the_capidx_yaml_below(monorepo: Path, command: str) -> None:
    result = run_cli([command], monorepo)
    assert result.exit_code == 2, result.output
    said = f"agents: catalog directory not found ({BELOW} --config tools/capidx/capidx.yaml)"
    assert said in result.output.splitlines(), result.output
    assert not (monorepo / "build").exists()


def test_the_lookup_below_takes_the_shallowest_and_stops_some_levels_down(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["d"] * CONFIG_LEVELS_DOWN)
    deep.mkdir(parents=True)
    (deep / "capidx.yaml").write_text("title: T\n", encoding="utf-8")
    assert config_below(tmp_path) == deep / "capidx.yaml"
    assert config_below(tmp_path.parent) is None or config_below(tmp_path.parent) != deep / "capidx.yaml"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "capidx.yaml").write_text("title: T\n", encoding="utf-8")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "capidx.yaml").write_text("title: T\n", encoding="utf-8")
    assert config_below(tmp_path) is None  # two as shallow: neither is guessed


@pytest.mark.parametrize("command", sorted([*COMMANDS, "validate", "build"]))
def test_a_folder_of_several_projects_names_none_of_them(tmp_path: Path, command: str) -> None:
    """Run from a folder holding several projects (a home folder), each command named the first by name of their
    capidx.yaml files, another project than the user's perhaps: which one is meant is not for capidx to guess."""
    for project in ("alpha", "beta"):
        built_project(tmp_path / project)
    if command in COMMANDS:
        code, output = _run(command, tmp_path)
    else:
        result = run_cli([command], tmp_path)
        code, output = result.exit_code, result.output
    assert code == 2, output
    assert "alpha" not in output and "beta" not in output, output
    assert "is below" not in output, output
    if command in COMMANDS:  # validate and build name the capidx.yaml in force: none here
        assert "capidx.yaml" not in output.replace(f"{tmp_path}", ""), output


def test_the_lookup_below_skips_hidden_folders_links_and_installed_packages(tmp_path: Path) -> None:
    for folder in (".git", "node_modules", "venv"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "capidx.yaml").write_text("title: T\n", encoding="utf-8")
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "capidx.yaml").write_text("title: T\n", encoding="utf-8")
    (tmp_path / "linked").symlink_to(elsewhere, target_is_directory=True)
    assert config_below(tmp_path) is None


def test_the_lookup_below_reads_a_bounded_number_of_entries(tmp_path: Path) -> None:
    """A repository's top with more entries than it reads: what lies past them is not looked for (a hint is not
    worth reading a huge tree; a fork's pull request controls the tree in CI). Folders are read in name order, so
    the crowded one comes first."""
    crowded = tmp_path / "a"
    crowded.mkdir()
    for number in range(ENTRIES_READ_BELOW):
        (crowded / f"f{number}").touch()
    (tmp_path / "b" / "c").mkdir(parents=True)
    (tmp_path / "b" / "c" / "capidx.yaml").write_text("title: T\n", encoding="utf-8")
    assert config_below(tmp_path) is None  # past the entries read
    for number in range(3):  # 2 entries at the top, all but three of the limit in a/, 1 in b/: the limit read
        (crowded / f"f{number}").unlink()
    assert config_below(tmp_path) == tmp_path / "b" / "c" / "capidx.yaml"  # within them


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_project_folder_named_as_the_build_names_its_build(project: Path, command: str) -> None:
    """`serve --build my-catalog` (the project, whose build/ holds the build) was told to "name the folder `capidx
    build` wrote": the build is right there, and the answer names it."""
    code, output = _run(command, project.parent, "--build", project.name)
    assert code == 2, output
    inside = project.resolve() / "build" if command == "serve" else Path(project.name) / "build"  # a path to paste
    assert f"it holds no capidx build, its build/ folder does: give --build {inside}" in output, output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_project_folder_with_a_space_names_its_build_shell_quoted(tmp_path: Path, command: str) -> None:
    """The build/ of a project folder given as the build is named as a path to paste into a shell: `--build my
    catalog/build` split at the space."""
    project = built_project(tmp_path / "my catalog")
    code, output = _run(command, tmp_path, "--build", project.name)
    assert code == 2, output
    inside = project.resolve() / "build" if command == "serve" else Path(project.name) / "build"
    assert f"its build/ folder does: give --build '{inside}'" in output, output
