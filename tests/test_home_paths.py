"""A leading `~` in a path flag or argument is the home folder, before click checks that the path exists.

No shell expands it in `--agents=~/cat`, a quoted `'~/new'` or a client's argument list: `build --agents=~/cat`
was refused as missing, `report --build=~/b` looked for a folder named `~` and `capidx init '~/new'` made
`./~/new`. `a/~` and `~user` are taken as written, `-` stays standard output.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_factory import run_cli, write_catalog


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def test_build_agents_and_report_build_take_the_home_folder(home: Path, project: Path) -> None:
    write_catalog(home, agents_dir="cat")

    built = run_cli(["build", "-q", "--agents=~/cat", "--out=~/b"], cwd=project)
    reported = run_cli(["report", "--no-fail", "--build=~/b", "--format=json"], cwd=project)

    assert built.exit_code == 0, built.output
    assert (home / "b" / "manifest.json").is_file()
    assert reported.exit_code == 0, reported.output
    assert not (project / "~").exists()


def test_init_into_a_folder_under_home_writes_there_not_into_a_folder_named_tilde(home: Path, project: Path) -> None:
    result = run_cli(["init", "~/newcat"], cwd=project)

    assert result.exit_code == 0, result.output
    assert (home / "newcat" / "capidx.yaml").is_file()
    assert not (project / "~").exists()


def test_validate_flags_expand_a_leading_tilde_only(home: Path, project: Path) -> None:
    write_catalog(home, agents_dir="other")

    expanded = run_cli(["validate", "-q", "--agents=~/other"], cwd=project)
    as_written = run_cli(["validate", "-q", "--agents=~/other", "--schema=~user/s.json"], cwd=project)

    assert expanded.exit_code == 0, expanded.output
    assert as_written.exit_code == 2
    assert as_written.output.startswith("~user/s.json: ")  # named as given, not looked for under a home


def test_serve_config_takes_the_home_folder(home: Path, project: Path) -> None:
    (home / "c.yaml").write_text("serve:\n  port: 8123\n", encoding="utf-8")

    result = run_cli(["serve", "--config=~/c.yaml", "--print-config"], cwd=project)

    assert result.exit_code == 0, result.output
    assert f"# config file: {home / 'c.yaml'}" in result.output.splitlines()


def test_an_empty_home_leaves_the_tilde_as_written(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python reads `~/q` as `/q` when HOME is set but empty (an MCP client's stripped environment): init wrote a
    scaffold into `/q` and validate walked the whole file system from `/`. Without a home, `~` stays a name."""
    from capidx.schema.homepath import expand_home

    monkeypatch.setenv("HOME", "")
    assert (expand_home("~/q"), expand_home("~")) == ("~/q", "~")
    result = run_cli(["init", "~/q"], cwd=project)
    assert result.exit_code == 0, result.output
    assert (project / "~" / "q" / "capidx.yaml").is_file()  # where it says, inside the project


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "--agents", ""],
        ["build", "--out", " "],
        ["report", "--build", ""],
        ["inject", "--build", "", "AGENTS.md"],
        ["init", ""],
        ["serve", "--build", "", "--print-config"],
        ["serve", "", "--print-config"],
    ],
)
def test_an_empty_path_is_refused_not_read_as_the_current_folder(project: Path, args: list[str]) -> None:
    # `--agents "$AGENTS"` with the variable unset: validate read the whole current folder (every JSON file under
    # it as a capability document) and build --out "" named the project itself.
    result = run_cli(args, cwd=project)

    assert result.exit_code == 2, result.output
    assert "an empty path names nothing: give a path, or leave it out" in result.output  # a flag or [BUILD]
    assert list(project.iterdir()) == []
