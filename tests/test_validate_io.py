"""`capidx validate` on input that cannot be read as intended: a clear message and exit code, never a traceback.

Cases that a fixture folder cannot hold (links, huge or unreadable files) are made here at run time;
the rest live in tests/cases/validate/invalid/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from catalog_factory import built_project, deny_search, documents, run_cli, write_catalog
from click.testing import CliRunner, Result

from capidx.cli import cli
from capidx.compiler import files
from capidx.compiler.validate import load
from capidx.compiler.validate import run as validate_run
from capidx.schema.pathkind import FILE_PERMISSION
from capidx.schema.yamldata import parse_yaml


@pytest.fixture
def project(valid_project: Path) -> Path:
    return valid_project


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, ["validate", "--today", "2026-01-15", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_the_fixture_project_is_valid(project: Path) -> None:
    assert run().exit_code == 0


@pytest.mark.parametrize("named", ["capabilities/current.json", "./capabilities/current.json"])
def test_a_document_named_from_its_agent_folder_is_that_agent_s(tmp_path: Path, named: str) -> None:
    """From inside `agents/claude-code`, `capidx validate capabilities/current.json` said "agent directory name '' is
    not a slug": the agent was read from the path as given, which names no folder above `capabilities`."""
    agents = write_catalog(tmp_path)
    result = run_cli(["validate", "--format", "json", named], cwd=agents / "claude-code")
    report = json.loads(result.output)
    assert result.exit_code == 0, report
    assert not [d for d in report["diagnostics"] if d["code"] == "agent-dir-slug"]


@pytest.mark.parametrize("cwd", ["Claude_Code", "Claude_Code/capabilities"])
def test_an_agent_folder_not_a_slug_is_an_error_however_its_document_is_named(tmp_path: Path, cwd: str) -> None:
    """Named from its capabilities folder (`capidx validate current.json`), the document was read as no agent's: the
    folder `Claude_Code` passed, which `capabilities/current.json` named from one folder up refused."""
    agents = write_catalog(tmp_path)
    (agents / "claude-code").rename(agents / "Claude_Code")
    named = (agents / "Claude_Code" / "capabilities" / "current.json").relative_to(agents / cwd)
    result = run_cli(["validate", "--format", "json", str(named)], cwd=agents / cwd)
    report = json.loads(result.output)
    assert result.exit_code == 1, report
    assert [d["code"] for d in report["diagnostics"] if d["code"] == "agent-dir-slug"] == ["agent-dir-slug"]


def test_a_file_meant_for_capidx_but_not_read_is_an_error(tmp_path: Path) -> None:
    """A misspelled folder or file name dropped an agent, or every alias, while validation passed (and `-q`, as CI
    runs it, hid the warning); another data file outside a capabilities folder is a warning."""
    agents = write_catalog(tmp_path)
    first = sorted(agents.glob("*/capabilities/current.json"))[0]
    strays = [
        "agent-a/capabilites/current.json",
        "agent-b/capabilities/Current.json",
        "agent-c/capabilities/current.jsn",
        "agent-d/current.json",
        "alias.json",
    ]
    for stray in strays:
        (agents / stray).parent.mkdir(parents=True, exist_ok=True)
        (agents / stray).write_bytes(first.read_bytes())
    # Left alone: not data, an archive beside a read document, hidden.
    (agents / "README.md").write_text("# Our catalog\n")
    (first.parent / "2025-01.json").write_bytes(first.read_bytes())
    (agents / ".drafts").mkdir()
    (agents / ".drafts" / "current.json").write_bytes(first.read_bytes())

    (agents / "agent-e").mkdir()
    (agents / "agent-e" / "notes.json").write_text("{}", encoding="utf-8")  # data, not named like a document

    named = ": not read: named like a capability document or alias table"
    for command in (["validate"], ["validate", "agents"], ["validate", "-q"]):
        result = run_cli(command, cwd=tmp_path)
        refused = sorted(line.split(named)[0] for line in result.output.splitlines() if named in line)
        assert result.exit_code == 1
        assert refused == sorted(f"agents/{stray}" for stray in strays[:-1]), result.output
        for data in ("agents/agent-e/notes.json", "agents/alias.json"):  # data files: a warning, hidden by -q
            assert (f"{data}: warning: not read" in result.output) == ("-q" not in command)
    built = run_cli(["build", "-q"], cwd=tmp_path)
    assert built.exit_code == 1 and f"agents/agent-d/current.json{named}" in built.output


@pytest.mark.parametrize("stray", ["capabilities.json", "current.json", "capabilities.yaml", "data/acme.json"])
def test_an_agent_folder_with_its_data_in_the_wrong_place_is_an_error_naming_the_right_path(
    tmp_path: Path, stray: str
) -> None:
    """`agents/acme-two/capabilities.json` was a "not read" warning, and the agent dropped out of the build while
    validate passed; `agents/acme-two/current.json` was an error. Both are errors now, each naming where the document
    belongs; a data file that holds no capability data (`notes.json`) stays a warning, as in an agent folder that
    has its document."""
    agents = write_catalog(tmp_path)
    document = json.loads(sorted(agents.glob("*/capabilities/current.json"))[0].read_text("utf-8"))
    document["agent"]["name"] = "Acme Two"
    target = agents / "acme-two" / stray
    target.parent.mkdir(parents=True)
    text = json.dumps(document, indent=2)
    target.write_text(text if stray.endswith(".json") else yaml.safe_dump(document), encoding="utf-8")
    (agents / "acme-two" / "notes.json").write_text("{}", encoding="utf-8")
    right = "capidx reads agents/acme-two/capabilities/current.json (or .yaml, .yml): move the agent's data there"
    for command in (["validate"], ["validate", "-q"], ["validate", "agents"]):
        result = run_cli(command, cwd=tmp_path)
        assert result.exit_code == 1, result.output
        (line,) = [line for line in result.output.splitlines() if line.startswith(f"agents/acme-two/{stray}: ")]
        assert ": warning:" not in line and "not read" in line and f"({right}" in line, line
        assert ("agents/acme-two/notes.json: warning: not read" in result.output) == ("-q" not in command)
    found = json.loads(run_cli(["validate", "--format", "json"], cwd=tmp_path).stdout)["diagnostics"]
    assert [d["code"] for d in found if d["path"] == f"agents/acme-two/{stray}"] == ["misplaced"]
    assert run_cli(["build", "-q"], cwd=tmp_path).exit_code == 1


def test_an_agent_folder_put_beside_the_catalog_is_said_to_be_unread(tmp_path: Path) -> None:
    """A maintainer put a new agent's folder at the project's top, beside `agents/`: validate said "5 files valid", the
    agent was not in the build, and nothing said why. A warning names its document and where agent folders go; the
    project's other folders, and those named by a pre-commit hook's file list, are not looked into."""
    agents = write_catalog(tmp_path)
    first = sorted(agents.glob("*/capabilities/current.json"))[0]
    (tmp_path / "forge-cli" / "capabilities").mkdir(parents=True)
    (tmp_path / "forge-cli" / "capabilities" / "current.yaml").write_text("agent: {}\n", encoding="utf-8")
    (tmp_path / "web" / "capabilities").mkdir(parents=True)  # the project's own: no document there
    (tmp_path / "web" / "capabilities" / "list.json").write_text("[]", encoding="utf-8")
    (tmp_path / ".old" / "capabilities").mkdir(parents=True)  # hidden
    (tmp_path / ".old" / "capabilities" / "current.json").write_bytes(first.read_bytes())

    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    named = run_cli(["validate", "--format", "json", str(first.relative_to(tmp_path))], cwd=tmp_path)

    assert result.exit_code == 0, result.output
    said = [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "unread"]
    assert [(d["path"], d["severity"]) for d in said] == [("forge-cli/capabilities/current.yaml", "warning")]
    assert said[0]["message"] == "not read: an agent folder beside the catalog folder agents/"
    assert said[0]["hint"] == "move forge-cli/ into agents/, where capidx reads agent folders"
    assert not [d for d in json.loads(named.output)["diagnostics"] if d["code"] == "unread"]


def test_an_agent_folder_inside_another_agents_folder_is_said(tmp_path: Path) -> None:
    """A second version of an agent put inside its folder (`anvil/v2/capabilities/current.json`) validated and built
    as an agent named 'v2', unsaid (a blind first-hour test). A warning names it, from the catalog and from its file
    named alone; folders that only group agents are not warned of."""
    agents = write_catalog(tmp_path)
    first = sorted(agents.glob("*/capabilities/current.json"))[0]
    outer = first.parent.parent.name
    doc = json.loads(first.read_text(encoding="utf-8"))
    doc["agent"]["name"] = "Second Version"
    inside = agents / outer / "v2" / "capabilities" / "current.json"
    inside.parent.mkdir(parents=True)
    inside.write_text(json.dumps(doc), encoding="utf-8")
    grouped = agents / "vendor" / "tool" / "capabilities" / "current.json"  # a group folder holds no document
    grouped.parent.mkdir(parents=True)
    doc["agent"]["name"] = "Grouped Tool"
    grouped.write_text(json.dumps(doc), encoding="utf-8")

    for args in ([], [str(inside.relative_to(tmp_path))]):
        result = run_cli(["validate", "--format", "json", *args], cwd=tmp_path)
        said = [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "agent-inside-agent"]
        assert [(d["path"], d["severity"]) for d in said] == [(str(inside.relative_to(tmp_path)), "warning")], args
        assert said[0]["message"] == f"agent folder v2/ is inside agent {outer}'s folder: read as agent 'v2'"


def test_one_agent_s_folder_given_as_the_catalog_is_warned_of(tmp_path: Path) -> None:
    """`--agents agents/anvil`: the walk reads that agent alone (its folder holds capabilities/ itself), and a build
    replaced the whole catalog's with it, without the alias table, unsaid (a newcomer's first hour). A warning names
    the parent to pass; an agent kept alone in its own folder, nothing beside it, is not warned of."""
    agents = write_catalog(tmp_path)
    folders = sorted(path.parent.parent for path in agents.glob("*/capabilities/current.json"))
    one = folders[0].relative_to(tmp_path)
    result = run_cli(["validate", "--format", "json", "--agents", str(one)], cwd=tmp_path)
    said = [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "agent-folder-as-catalog"]
    assert [(d["path"], d["severity"]) for d in said] == [(str(one / "capabilities" / "current.json"), "warning")]
    assert f"agent {one.name}'s own folder" in said[0]["message"]
    assert (
        said[0]["hint"] == f"pass --agents agents for the whole catalog: {len(folders) - 1} other agents are beside it"
    )
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.move(folders[1], alone / folders[1].name)
    result = run_cli(["validate", "--format", "json", "--agents", str(alone / folders[1].name)], cwd=tmp_path)
    assert not [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "agent-folder-as-catalog"]
    assert not [
        d
        for d in json.loads(run_cli(["validate", "--format", "json"], cwd=tmp_path).output)["diagnostics"]
        if d["code"] == "agent-folder-as-catalog"
    ]


def test_a_folder_at_the_top_that_cannot_be_searched_leaves_the_agent_folders_beside_the_catalog_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder at the project's top this user may not search (a container's data folder owned by root) ended the
    look for agent folders beside the catalog at the first one met (Path.is_file raised the PermissionError): the
    agent folder listed after it went unsaid. Such a folder is passed over. Simulated: root may search any folder."""
    write_catalog(tmp_path)
    (tmp_path / "forge-cli" / "capabilities").mkdir(parents=True)
    (tmp_path / "forge-cli" / "capabilities" / "current.yaml").write_text("agent: {}\n", encoding="utf-8")
    for number in range(20):  # listed in an order of the file system's: most of them before forge-cli
        (tmp_path / f"data-{number}").mkdir()
        deny_search(monkeypatch, tmp_path / f"data-{number}")

    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)

    said = [d["path"] for d in json.loads(result.output)["diagnostics"] if d["code"] == "unread"]
    assert said == ["forge-cli/capabilities/current.yaml"], result.output


def test_capability_data_linked_in_from_outside_the_catalog_is_not_read(tmp_path: Path) -> None:
    """A data file of an agent folder without its document is read to tell capability data from other data; one that
    is a symbolic link leading out of the catalog is not read (a pull request must not learn, from an error rather
    than a warning, what a file of the machine running CI holds): it stays an `unread` warning, whatever it holds.
    A link that stays inside the catalog is read as the file it names."""
    agents = write_catalog(tmp_path)
    secret = tmp_path / "outside" / "secret.json"
    secret.parent.mkdir()
    secret.write_text('{"agent": "s3cr3t"}', encoding="utf-8")
    (agents / "acme").mkdir()
    (agents / "acme" / "notes.json").symlink_to(secret)
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)["diagnostics"]
    assert [(d["code"], d["severity"]) for d in found if d["path"] == "agents/acme/notes.json"] == [
        ("unread", "warning")
    ]
    inside = agents / "drafts.json"
    inside.write_text('{"agent": {}}', encoding="utf-8")
    (agents / "acme" / "notes.json").unlink()
    (agents / "acme" / "notes.json").symlink_to(inside)
    result = run_cli(["validate", "--format", "json"], cwd=tmp_path)
    found = json.loads(result.stdout)["diagnostics"]
    assert [d["code"] for d in found if d["path"] == "agents/acme/notes.json"] == ["misplaced"]


def test_a_catalog_at_the_project_root_reads_its_config_schema_and_templates(tmp_path: Path) -> None:
    """With `agents: .` the catalog folder holds capidx.yaml, the schema and the templates folder: all read, none
    'not read'."""
    write_catalog(tmp_path, agents_dir=".")
    schema = resources.files("capidx.schema").joinpath("capability-schema.json").read_bytes()
    (tmp_path / "schema.json").write_bytes(schema)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "data.json").write_text("{}", encoding="utf-8")  # what a template may include
    config = "paths:\n  agents: .\n  schema: schema.json\n  templates: templates\n"
    (tmp_path / "capidx.yaml").write_text(config, encoding="utf-8")

    for command in (["validate"], ["validate", "."]):  # the catalog, or the folder named as a pre-commit hook may
        result = run_cli(command, cwd=tmp_path)
        assert result.exit_code == 0, result.output
        assert "not read" not in result.output


def test_symlink_loop_is_reported_by_name(project: Path) -> None:
    document = project / "agents" / "alpha" / "capabilities" / "current.json"
    document.unlink()
    document.symlink_to(document.name)  # current.json -> current.json

    result = run()

    assert result.exit_code == 2
    assert "agents/alpha/capabilities/current.json: symbolic link loop" in result.output


def test_symlink_loop_given_as_path(project: Path) -> None:
    loop = project / "loop.json"
    loop.symlink_to("loop.json")

    result = run("loop.json")

    assert result.exit_code == 2
    assert "loop.json: symbolic link loop" in result.output


def test_broken_symlink(project: Path) -> None:
    (project / "agents" / "alpha" / "capabilities" / "current.json").unlink()
    (project / "agents" / "alpha" / "capabilities" / "current.json").symlink_to("gone.json")

    result = run()

    assert result.exit_code == 2
    assert "current.json: broken symbolic link (target 'gone.json' does not exist)" in result.output


def test_a_file_over_the_size_limit_is_refused_unread(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    huge = project / "agents" / "alpha" / "capabilities" / "current.json"
    with huge.open("r+b") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: instant, and no disk used
    real_open = open

    def refuse_to_read_it(path: object, *args: object, **kwargs: object) -> object:
        assert Path(str(path)) != huge, "a file over the limit must not be opened"
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(files, "open", refuse_to_read_it, raising=False)
    result = run()

    assert result.exit_code == 2
    assert "current.json: file is 50.0 MB, over the 10 MB limit for data files" in result.output
    assert "split the catalog" not in result.output  # one agent's file: it is split already


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_permission(project: Path) -> None:
    document = project / "agents" / "alpha" / "capabilities" / "current.json"
    document.chmod(0)
    try:
        result = run()
    finally:
        document.chmod(0o644)
    assert result.exit_code == 2
    assert "current.json: permission denied" in result.output


def test_unreadable_file_simulated(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same path as above, for runs as root (where chmod 000 does not stop reading). A file looked at but not
    opened names the permission needed in the words used for every other file capidx cannot read."""
    real_open = open

    def deny(path: object, *args: object, **kwargs: object) -> object:
        if str(path).endswith("alpha/capabilities/current.json"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(files, "open", deny, raising=False)
    result = run()

    assert result.exit_code == 2
    assert f"agents/alpha/capabilities/current.json: permission denied ({FILE_PERMISSION})" in result.output


def test_a_path_this_user_may_not_look_at_is_said_to_be_unreadable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PATHS inside a folder this user may not search: a link into it ended validate in a traceback (Python 3.11's
    Path.is_dir raised the PermissionError), a folder or file inside it was said not to exist; so was a folder this
    user may not search itself ("no capability documents found"). Each is said to be unreadable, with the permission
    a folder or a file needs; the folder a link leads to, named too, is said once, by the first name given.
    Simulated (as if of mode 000): root may search any folder."""
    hidden = project / "hidden"
    hidden.mkdir()
    (project / "agents").rename(hidden / "catalog")
    (project / "linked").symlink_to("hidden/catalog")
    (project / "closed").mkdir()
    deny_search(monkeypatch, hidden, project / "linked")
    deny_search(monkeypatch, project / "closed")
    folder = "the user running capidx needs read and search permission on the folder, the folders above it and"
    file = "the user running capidx needs read permission on the file, and search permission on the folders above it"
    named = {
        "linked": folder,
        "hidden/catalog": folder,
        "hidden/catalog/alpha/capabilities/current.json": file,
        "closed": folder,
    }

    result = run(*named)
    alone = run("hidden/catalog")

    assert result.exit_code == 2, result.output
    for path, permission in named.items():
        said = f"{path}: cannot be read: permission denied ({permission}"
        assert (said in result.output) is (path != "hidden/catalog"), result.output  # it is what `linked` names
    assert "does not exist" not in result.output and "no capability documents" not in result.output
    assert alone.exit_code == 2, alone.output
    assert f"hidden/catalog: cannot be read: permission denied ({folder}" in alone.output


def test_a_path_linked_out_of_the_catalog_is_refused_though_this_user_may_not_look_where_it_leads(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PATH that is a link out of the catalog (pre-commit names a fork's changed files) is refused, as the walk of
    the catalog refuses it, whatever the permissions: capidx never reads it. Leading into a folder this user may not
    search, it was said to be unreadable, with a permission to give that would only have led to the refusal.
    Simulated (as if `outside` had mode 000): root may search any folder."""
    outside = project / "outside"
    (outside / "capabilities").mkdir(parents=True)
    (outside / "capabilities" / "current.json").write_text("{}", encoding="utf-8")
    (project / "agents" / "evil").symlink_to(outside, target_is_directory=True)
    document = project / "agents" / "bad" / "capabilities" / "current.json"
    document.parent.mkdir(parents=True)
    document.symlink_to(outside / "capabilities" / "current.json")
    named = {
        "agents/evil": os.path.realpath(outside),
        "agents/bad/capabilities/current.json": os.path.realpath(outside / "capabilities" / "current.json"),
    }
    deny_search(monkeypatch, outside, *(project / name for name in named))

    result = run(*named)

    assert result.exit_code == 2, result.output
    for name, target in named.items():
        assert f"{name}: refused: a symbolic link to {target}, outside the catalog" in result.output, result.output
    assert "cannot be read" not in result.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_not_read(project: Path) -> None:
    """Reading a FIFO would block forever."""
    document = project / "agents" / "alpha" / "capabilities" / "current.json"
    document.unlink()
    os.mkfifo(document)

    result = run()

    assert result.exit_code == 2
    assert "current.json: is not a regular file" in result.output


def test_aliases_option_pointing_at_a_directory(project: Path) -> None:
    result = run("--aliases", "agents")

    assert result.exit_code == 2
    assert "agents: is a directory, expected a file" in result.output


def test_missing_config_file(project: Path) -> None:
    result = run("--config", "nothere.yaml")

    assert result.exit_code == 2
    assert "nothere.yaml: does not exist" in result.output


def test_missing_paths_are_all_reported_with_the_rest(project: Path) -> None:
    result = run("nothere.json", "agents", "gone/")

    assert result.exit_code == 2
    assert "nothere.json: does not exist" in result.output
    assert "gone: does not exist" in result.output or "gone/: does not exist" in result.output
    assert "3 files" in result.output  # the existing catalog was still checked


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("agents/alpha/capabilities/curent.json", "current.json"),
        ("agents/alpha/capabilities/Current.json", "current.json"),
        ("agents/alph", None),
    ],
)
def test_a_path_one_typing_error_from_an_entry_of_its_folder_is_suggested(
    project: Path, typed: str, meant: str | None
) -> None:
    """`capidx validate agents/x/capabilities/curent.json` said only "does not exist"; the entry of the folder the
    name is one typing error (or a change of case) from is suggested; nothing when two entries are as close ('alph':
    'alpha' and 'alphb')."""
    if meant is None:
        (project / "agents" / "alphb").mkdir()
    result = run(typed)
    assert result.exit_code == 2
    line = next(line for line in result.output.splitlines() if line.startswith(f"{typed}: does not exist"))
    if meant is None:
        assert line == f"{typed}: does not exist"
    else:
        assert line == f"{typed}: does not exist (did you mean {Path(typed).parent / meant}?)"


@pytest.mark.parametrize(
    ("names", "shown", "read"),
    [
        (["agents", "cat2"], "agents", 3),
        (["cat3", "cat2"], "cat3", 3),
        (["cat2", "{project}/agents"], "cat2", 3),
        (["agents", "cat2/alpha/capabilities/current.json", "cat2/aliases.json"], "agents", 3),
        (["cat2/alpha/capabilities/current.json", "agents/alpha/capabilities/current.json"], "cat2", 1),
        (["agents/alpha", "cat2/alpha"], "agents", 1),
        (["cat2", "agents/alpha"], "cat2", 3),
    ],
    ids=[
        "folder-and-link",
        "two-links",
        "link-and-absolute",
        "folder-and-files-through-a-link",
        "one-file-two-names",
        "agent-folder-two-names",
        "catalog-and-its-agent",
    ],
)
def test_one_catalog_named_by_two_names_is_read_once(project: Path, names: list[str], shown: str, read: int) -> None:
    """A catalog folder, or a file or folder in it, named twice through different names (a link to it and the folder
    itself, two links to it): its documents were matched by the path as written, so each was read twice and said to
    be the second capability document of its own agent (exit 1). Each file is read once, by the first name given,
    and a stray file in a named folder is warned of once."""
    (project / "cat2").symlink_to("agents", target_is_directory=True)
    (project / "cat3").symlink_to("agents", target_is_directory=True)
    (project / "agents" / "alpha" / "notes.json").write_text("{}", encoding="utf-8")

    result = run("-v", *(name.format(project=project) for name in names))
    named_files = all(name.endswith(".json") for name in names)  # a catalog walked for context is not searched

    assert result.exit_code == 0, result.output
    assert "second capability document" not in result.output
    strays = [line.split(":")[0] for line in result.output.splitlines() if "notes.json: warning: not read" in line]
    assert strays == ([] if named_files else [str(Path(shown, "alpha", "notes.json"))]), result.output
    assert result.output.splitlines()[-1].startswith(f"{read} file{'s' if read > 1 else ''} valid"), result.output


def test_a_copy_of_the_catalog_named_beside_it_still_has_second_documents(project: Path) -> None:
    """Reading one file once by two names must not take two files for one: a copy of the catalog named with it gives
    each agent a second document (exit 1), and a document linked to another agent's stays that agent's own."""
    shutil.copytree(project / "agents", project / "copy")
    beta = project / "agents" / "beta-2" / "capabilities"
    (beta / "current.yaml").unlink()
    (beta / "current.json").symlink_to(Path("..", "..", "alpha", "capabilities", "current.json"))

    result = run("agents", "copy")

    assert result.exit_code == 1, result.output
    second = [line.split(":")[0] for line in result.output.splitlines() if "second capability document" in line]
    assert second == [
        str(Path("copy", "alpha", "capabilities", "current.json")),
        str(Path("copy", "beta-2", "capabilities", "current.yaml")),
    ]
    linked = f"{Path('agents', 'beta-2', 'capabilities', 'current.json')}:3:13: $.agent.name: warning: agent name"
    assert linked in result.output, result.output  # read as beta-2's document, not dropped as alpha's


# Nesting the json module refuses (its parser stops near 1,000 levels): the whole file, arrays or objects in an `x-`
# value. Each is (text of the nesting, the offset in it of the first value 65 levels down, the JSON path there).
_DEEP_JSON = {
    "file-of-arrays": lambda depth: ("[" * depth + "]" * depth, 65, "$" + "[0]" * 65),
    "arrays": lambda depth: ("[" * depth + "]" * depth, 64, "$.x-nest" + "[0]" * 64),
    "objects": lambda depth: ('{"a": ' * depth + "1" + "}" * depth, 64 * 6, "$.x-nest" + ".a" * 64),
    "mixed": lambda depth: ('[{"a": ' * depth + "1" + "}]" * depth, 64 * 7 // 2, "$.x-nest" + "[0].a" * 32),
}


@pytest.mark.parametrize("folder", ["agents", "templates"])
def test_a_folder_nested_past_python_s_recursion_limit_is_walked(project: Path, folder: str) -> None:
    """A pull request can hold folders nested 1,100 deep: walking the catalog or the templates folder must not end
    in a RecursionError (Python 3.11's os.walk recurses once per level)."""
    made = [project / folder / "deep"]
    (project / folder).mkdir(exist_ok=True)
    for _ in range(1_100):  # os.makedirs recurses once per level too
        made[-1].mkdir()
        made.append(made[-1] / "a")
    try:
        (made[-2] / "current.json").write_text("{}", encoding="utf-8")  # found there, as a misplaced document
        if folder == "templates":  # a folder with a template at its top is the project's templates folder
            (project / "templates" / "summary.md.j2").write_text("# {{ title }}\n", encoding="utf-8")
        validated = run()
        assert validated.exit_code == (1 if folder == "agents" else 0), validated.output
        if folder == "agents":
            assert "current.json: not read: named like a capability document" in validated.output
        built = CliRunner().invoke(cli, ["build", "-q"])
        assert built.exception is None or isinstance(built.exception, SystemExit), built.output
        assert built.exit_code == validated.exit_code, built.output
        assert "Traceback" not in built.output
    finally:  # shutil.rmtree recurses once per level too: pytest could not remove the folder
        (made[-2] / "current.json").unlink(missing_ok=True)
        for deep in reversed(made[:-1]):
            deep.rmdir()


@pytest.mark.parametrize("shape", list(_DEEP_JSON))
def test_json_nested_past_what_the_parser_reads_is_placed_where_it_passes_the_limit(project: Path, shape: str) -> None:
    """5,000 levels made the json module give up with no place ('invalid JSON: nested too deeply'): the problem is
    now put where the nesting passes capidx's limit, at the same line, column and JSON path, in the same words, as
    in a file of 500 levels, which the parser reads and capidx refuses afterwards."""
    path = project / "agents" / "alpha" / "capabilities" / "current.json"
    original = path.read_text("utf-8")
    lines = []
    for depth in (500, 5_000):
        nesting, offset, where = _DEEP_JSON[shape](depth)
        if shape == "file-of-arrays":
            text, start = nesting, 0
        else:
            data = json.loads(original)
            data["x-nest"] = "@"
            text = json.dumps(data, indent=1).replace('"@"', nesting)
            start = text.index(nesting)
        path.write_text(text, encoding="utf-8")

        result = run()

        assert result.exit_code == 1
        line = text.count("\n", 0, start + offset) + 1
        column = start + offset - text.rfind("\n", 0, start + offset)
        expected = f"agents/alpha/capabilities/current.json:{line}:{column}: {where}: nested more than 64 levels deep"
        assert result.output.startswith(expected + " ("), result.output[:500]
        lines.append(result.output)
    assert all(line == lines[0] for line in lines)


@pytest.mark.parametrize("document", ["current.json", "aliases.json"])
def test_nesting_the_parser_accepts_but_no_data_needs_is_refused_with_its_place(project: Path, document: str) -> None:
    """500 levels inside an `x-` value parse (any JSON is allowed there) but broke the build's recursive walks with a
    traceback: validation refuses them, at the line and column and JSON path where the limit is passed, and a build
    stops before writing anything."""
    path = next(project.rglob(document))
    data = json.loads(path.read_text("utf-8"))
    data["x-nest"] = json.loads("[" * 500 + "]" * 500)
    path.write_text(json.dumps(data, indent=1) + "\n")

    result = run()

    assert result.exit_code == 1
    (line,) = [line for line in result.output.splitlines() if "nested more than" in line]
    where = rf"\S*{re.escape(document)}:\d+:\d+: \$\.x-nest(\[0\]){{64}}"
    assert re.fullmatch(rf"{where}: nested more than 64 levels deep.*", line)
    built = CliRunner().invoke(cli, ["build"])
    assert built.exit_code == 1 and "Traceback" not in built.output and not (project / "build").exists()


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000 + "]" * 100_000, "- " * 100_000 + "x\n"],
    ids=["flow-nesting", "block-nesting"],
)
def test_yaml_nested_too_deeply_is_one_clear_error(project: Path, text: str) -> None:
    """Absurd nesting is one error naming the file and its place, never a crash (PyYAML 6.0.3's C composer crashed
    the interpreter here): capidx's guard stops it where it passes 64 levels, also where libyaml's scanner refuses
    compact flow nesting first (near 1,000 levels), and the message is capidx's."""
    (project / "agents" / "alpha" / "capabilities" / "current.json").unlink()
    (project / "agents" / "alpha" / "capabilities" / "current.yaml").write_text(text)

    result = run()

    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if "current.yaml" in line]
    assert len(errors) == 1, result.output
    capidx = r"\$(\[0\]){65}: nested more than 64 levels deep \(no capidx data nests this deep\)"
    assert re.fullmatch(rf"agents/alpha/capabilities/current\.yaml:1:\d+: {capidx}", errors[0])
    assert "1 error, 0 warnings in 3 files" in result.output


# YAML nested past what PyYAML's composer can follow (it recurses, and gave up near 1,000 levels with no place),
# and the same nesting 100 levels deep, which it reads (and capidx refuses afterwards).
_DEEP_YAML = {
    "flow-lists": lambda depth: "[" * depth + "]" * depth + "\n",
    "block-lists": lambda depth: "- " * depth + "x\n",
    "flow-mappings": lambda depth: "{a: " * depth + "1" + "}" * depth + "\n",
    "block-mappings": lambda depth: "".join(" " * level + "a:\n" for level in range(depth)) + " " * depth + "b: 1\n",
}


@pytest.mark.parametrize("shape", list(_DEEP_YAML))
def test_yaml_nested_past_what_the_composer_follows_is_placed_where_it_passes_the_limit(
    project: Path, shape: str
) -> None:
    """900 levels are within libyaml's own limit (1,000) but were past the Python composer's recursion: refused with
    the file's name only ('invalid YAML: nested too deeply'). capidx's guard now stops the composer where the
    nesting passes 64 levels: the same line, column, JSON path and words as for 100 levels, which it reads; also
    for compact flow nesting of 2,000 levels, which libyaml's scanner refuses in its own words first."""
    (project / "agents" / "alpha" / "capabilities" / "current.json").unlink()
    path = project / "agents" / "alpha" / "capabilities" / "current.yaml"
    lines = []
    for depth in (100, 900, 2_000) if shape.startswith("flow") else (100, 900):
        path.write_text(_DEEP_YAML[shape](depth), encoding="utf-8")

        result = run()

        assert result.exit_code == 1
        assert re.match(r"agents/alpha/capabilities/current\.yaml:\d+:\d+: \$\S+: nested more than 64", result.output)
        lines.append(result.output)
    assert all(line == lines[0] for line in lines)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # merge keys nest no data: counted apart, with a limit of their own
            "a: " + "{<<: " * 3_000 + "{}" + "}" * 3_000 + "\n",
            r"current\.yaml:1:\d+: \$\.a: written nested more than 128 levels deep, merge keys \(<<\) and keys",
        ),
        (  # anchors first met in merges, each holding an alias of the last: 2,200 levels once expanded
            "x0: {<<: &a0 {k: [1]}}\n"
            + "".join(f"x{n}: {{<<: &a{n} {{k: [[[[[[[[[[*a{n - 1}]]]]]]]]]]}}}}\n" for n in range(1, 200))
            + "y: *a199\n",
            r"current\.yaml:\d+:\d+: \$\.x6(\.k(\[0\]){10}){5}\.k(\[0\]){8}: nested more than 64 levels deep",
        ),
    ],
    ids=["merges", "aliases-through-merges"],
)
def test_yaml_nested_through_merges_is_placed(project: Path, text: str, expected: str) -> None:
    """Nesting a recursive walk could not follow, where the composer does not count it as data: merge keys in
    merge keys, and aliases expanding past the limit. Both ended in 'invalid YAML: nested too deeply' with no
    place; both are placed now (the second at the first value too deep, in the order the file has them)."""
    (project / "agents" / "alpha" / "capabilities" / "current.json").unlink()
    (project / "agents" / "alpha" / "capabilities" / "current.yaml").write_text(text, encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    assert re.match(rf"agents/alpha/capabilities/{expected}", result.output), result.output[:500]


def test_a_yaml_key_that_is_not_a_string_hides_no_other_problem_of_the_document(project: Path) -> None:
    """`on:` (read as true) was said alone: the document was set aside, so its misspelled key and its value outside
    the enum were said only once `on` was quoted, one run later, though validate says every problem in one run."""
    path = project / "agents" / "beta-2" / "capabilities" / "current.yaml"
    text = path.read_text(encoding="utf-8").replace(
        "    available: true\n", "    available: true\n    terminolgy: reviews\n    on: true\n    maturityLevel: GA\n"
    )
    path.write_text(text, encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    said = [line.split(": ", 1)[1] for line in result.output.splitlines() if line.startswith("agents/beta-2/")]
    assert [line.split(":")[0] for line in said] == [
        "$.capabilities[0].terminolgy",
        "$.capabilities[0].on",
        "$.capabilities[0].maturityLevel",
    ]
    assert "key 'on' is not a string" in said[1] and "'GA' is not a valid maturityLevel" in said[2]
    assert "3 errors" in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &a\n  b: *a\n", "current.yaml:1:4: unusable YAML: recursive alias: a value contains itself"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefg", "bcdefgh", strict=True)),
            "unusable YAML: aliases expand to more than 1,000,000 values",
        ),
        ("agent: {}\n1: one\n", "current.yaml:2:1: $['1']: key '1' is not a string (quote it"),
        (  # few values, but each alias repeats a long text: 3 MB of text read 8 times
            f'a: &a "{"x" * 3_000_000}"\nb: [{", ".join(["*a"] * 8)}]\n',
            "current.yaml:2:4: unusable YAML: aliases expand to more than 20,971,520 characters of text",
        ),
        ("a: 1_" + "0_" * 5000 + "0\n", "current.yaml:1:4: $.a: unusable YAML: an integer of over 3,000 digits"),
        ("a: 0x" + "f" * 4000 + "\n", "current.yaml:1:4: $.a: unusable YAML: an integer of over 3,000 digits"),
        ("? " + "9" * 5000 + "\n: x\n", "current.yaml:1:3: unusable YAML: an integer of over 3,000 digits"),
        (  # merged mappings and keys are expanded text too
            f'a: &a {{k: "{"x" * 3_000_000}"}}\nb: [{", ".join(["{<<: *a}"] * 8)}]\n',
            "unusable YAML: aliases expand to more than 20,971,520 characters of text",
        ),
        (
            f'k: &k "{"x" * 3_000_000}"\nb: [{", ".join(["{*k : 1}"] * 8)}]\n',
            "unusable YAML: aliases expand to more than 20,971,520 characters of text",
        ),
        # types JSON does not have: a set reached the artifacts as a Python repr in an order that changed between
        # runs, NaN passed `minimum` and `maximum`
        ("a:\n  b: !!set {x, y}\n", "current.yaml:2:6: $.a.b: unusable YAML: a value tagged !!set has no JSON form"),
        ("a: !!binary aGVsbG8=\n", "current.yaml:1:4: $.a: unusable YAML: a value tagged !!binary has no JSON form"),
        ("a: !!omap [{x: 1}]\n", "current.yaml:1:4: $.a: unusable YAML: a value tagged !!omap has no JSON form"),
        ("a: [1, .NaN]\n", "current.yaml:1:8: $.a[1]: unusable YAML: '.NaN' is not a number JSON can hold"),
        ("a: -.inf\n", "current.yaml:1:4: $.a: unusable YAML: '-.inf' is not a number JSON can hold"),
        ("a:\n  b: 1.0e+999\n", "current.yaml:2:6: $.a.b: unusable YAML: '1.0e+999' is not a number JSON can hold"),
        (
            "a: !!float .na_n\n",
            "current.yaml:1:4: $.a: unusable YAML: '.na_n' is not a number JSON can hold",
        ),  # as read
        ("a: !!float nan\n", "current.yaml:1:4: $.a: unusable YAML: 'nan' is not a number JSON can hold"),
        ("a: " + "9" * 330 + ":00.0\n", "current.yaml:1:4: $.a: unusable YAML: '9999"),  # base 60, past a double
        (
            "a: 1" + ":0" * 180 + ".5\n",
            "current.yaml:1:4: $.a: unusable YAML: '1:0:0",
        ),  # base 60, too many parts to read
        (
            "a: !!float abc\n",
            "current.yaml:1:4: $.a: unusable YAML: 'abc' is not a number JSON can hold",
        ),  # was a traceback
        ("a: !!int abc\n", "current.yaml:1:4: $.a: unusable YAML: 'abc' is not a whole number"),
        ('a: !!int ""\n', "current.yaml:1:4: $.a: unusable YAML: '' is not a whole number"),
        ("a: !!bool maybe\n", "current.yaml:1:4: $.a: unusable YAML: 'maybe' is not a boolean (true or false)"),
        (  # a long scalar through many aliases: each read once (each reference re-read 4 MB)
            f"a: &x 1.{'0' * 400_000}1\nb: [{', '.join(['*x'] * 100_000)}]\n",
            "unusable YAML: aliases expand to more than 20,971,520 characters of text",
        ),
    ],
    ids=[
        "recursive-alias",
        "billion-laughs",
        "non-string-key",
        "text-bomb",
        "long-number",
        "long-hex",
        "long-key",
        "merge-bomb",
        "key-bomb",
        "set",
        "binary",
        "omap",
        "nan",
        "infinity",
        "overflow",
        "nan-underscored",
        "nan-tagged",
        "base-60-overflow",
        "base-60-parts",
        "float-tagged-text",
        "int-tagged-text",
        "int-tagged-empty",
        "bool-tagged-text",
        "scalar-alias-bomb",
    ],
)
def test_yaml_that_is_not_json_data(project: Path, text: str, message: str) -> None:
    (project / "agents" / "alpha" / "capabilities" / "current.json").unlink()
    (project / "agents" / "alpha" / "capabilities" / "current.yaml").write_text(text)

    result = run()

    assert result.exit_code == 1
    assert message in result.output


@pytest.mark.parametrize("key", ["? !!set {a}\n: 1", ".nan: 1", "? !!binary aGk=\n: 1"])
def test_a_key_json_cannot_hold_is_said_once(project: Path, key: str) -> None:
    """Said as a value JSON cannot hold, not also as a key that is not a string ("key '?' is not a string")."""
    (project / "agents" / "alpha" / "capabilities" / "current.json").unlink()
    (project / "agents" / "alpha" / "capabilities" / "current.yaml").write_text(f"agent: {{}}\n{key}\n")

    result = run()

    assert result.exit_code == 1
    said = [line for line in result.output.splitlines() if "current.yaml:2:" in line]
    assert len(said) == 1 and "unusable YAML" in said[0], result.output


@pytest.mark.parametrize(
    ("text", "opened"),
    [
        ('{"agent": \n', "line 1, column 1"),  # a value missing at the end: libyaml's context is line 2
        ("agent: {name: A}\ncapabilities: [\n", "line 2, column 15"),
        ("agent:\n  name: {x: 1, y: [1, \n", "line 2, column 19"),  # the innermost
        ("capabilities:\n  - {a: [1, {b: \n", "line 2, column 13"),
        ("agent: {name: A, \n", "line 1, column 8"),
        ("agent: {name: '[x', vendor: [\n", "line 1, column 29"),  # a bracket in quotes opens nothing
        ("capabilities: [a, b\n", "line 1, column 15"),  # the parser's own context
        ("agent: {name: A\n", "line 1, column 8"),
    ],
    ids=["mapping-value", "sequence", "nested", "in-block-list", "after-comma", "quoted", "sequence-item", "mapping"],
)
def test_an_unclosed_yaml_bracket_is_named_where_it_opens(project: Path, text: str, opened: str) -> None:
    """For a node missing in brackets (`{"agent": ` and the end of the file), the parser's context is where the node
    was due, often the next line: the hint named a bracket at line 2, column 1, where there is none."""
    (project / "agents" / "beta-2" / "capabilities" / "current.yaml").write_text(text, encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    assert f"(is the bracket opened at {opened} closed, and a comma between its items?)" in result.output


# Beta's document with three values JSON cannot hold in one capability and a schema error in another.
UNUSABLE_VALUES = """\
agent:
  name: Beta Agent
  vendor: Example Corp
  version: "2.1"
  lastUpdated: 2026-01-10T00:00:00Z
capabilities:
  - name: Code Review
    category: code-refactoring
    description: Reviews a diff, explains each finding and offers a patch that fixes the problem it found.
    available: .nan
    introducedIn: !!binary aGVsbG8=
    tier: !!int abc
    sources:
      - url: https://example.com/beta/review
        description: Beta review guide
        sourceGranularity: dedicatd
        verifiedDate: 2026-01-14
"""
UNUSABLE_SAID = [
    "current.yaml:10:16: $.capabilities[0].available: unusable YAML: '.nan' is not a number JSON can hold",
    "current.yaml:11:19: $.capabilities[0].introducedIn: unusable YAML: a value tagged !!binary has no JSON form",
    "current.yaml:12:11: $.capabilities[0].tier: unusable YAML: 'abc' is not a whole number",
    "current.yaml:16:28: $.capabilities[0].sources[0].sourceGranularity: 'dedicatd' is not a valid",
]


@pytest.mark.parametrize("command", ["validate", "build"])
def test_every_yaml_value_json_cannot_hold_is_said_in_one_run_with_the_schema_s_errors(
    project: Path, command: str
) -> None:
    """Validate stopped at the first value JSON cannot hold: the others, and the schema's errors, came one a run.
    Every one is said at its place now, and the document is checked with null in their places, of which nothing
    is said (null is not a boolean, nor one of the tiers). The build refuses the file as before."""
    yaml_file = project / "agents" / "beta-2" / "capabilities" / "current.yaml"
    yaml_file.write_text(UNUSABLE_VALUES, encoding="utf-8")

    result = run() if command == "validate" else run_cli(["build", "--out", "out"], cwd=project)

    assert result.exit_code == 1
    said = [line for line in result.output.splitlines() if "current.yaml:" in line and "warning:" not in line]
    assert len(said) == len(UNUSABLE_SAID), result.output
    for line, expected in zip(said, UNUSABLE_SAID, strict=True):
        assert expected in line
    assert not (project / "out").exists()


def test_a_yaml_value_json_cannot_hold_used_through_aliases_is_said_once(project: Path) -> None:
    """Where it is written, and nothing of the nulls the aliases stand for (nor of the merged member)."""
    text = UNUSABLE_VALUES.replace("available: .nan", "available: &nan .nan\n    x-also: [*nan, *nan]")
    text = text.replace("    introducedIn: !!binary aGVsbG8=\n    tier: !!int abc\n", "")
    text += (
        "  - {<<: {available: *nan}, name: Copy, category: testing,\n"
        "     description: Writes the tests a change needs and runs them until they pass.}\n"
    )
    (project / "agents" / "beta-2" / "capabilities" / "current.yaml").write_text(text, encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    said = [line for line in result.output.splitlines() if "current.yaml:" in line and "warning:" not in line]
    assert said[0].endswith(
        "current.yaml:10:16: $.capabilities[0].available: unusable YAML: '.nan' is not a number "
        "JSON can hold: write a finite number"
    ), result.output
    assert "'dedicatd' is not a valid" in said[1]
    assert len(said) == 2, result.output


def test_a_capability_name_json_cannot_hold_makes_no_alias_target_unknown(project: Path) -> None:
    """Read as null, the name is not known: an alias naming it is not said to name no capability (as when the
    document could not be read at all)."""
    text = UNUSABLE_VALUES.replace("name: Code Review", "name: !!binary QmV0YSBPbmx5")  # "Beta Only"
    (project / "agents" / "beta-2" / "capabilities" / "current.yaml").write_text(text, encoding="utf-8")
    (project / "agents" / "aliases.json").write_text('{"aliases": {"beta": "Beta Only"}}\n', encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    assert "$.capabilities[0].name: unusable YAML: a value tagged !!binary has no JSON form" in result.output
    assert "alias target" not in result.output


def test_a_misspelled_key_holding_a_value_json_cannot_hold_is_said_in_the_same_run(project: Path) -> None:
    """What is said of the null is left out, not what is said of its key: the unknown key and its did-you-mean come
    with the value's own error, not a run later."""
    text = UNUSABLE_VALUES.replace("tier: !!int abc", "tierr: !!int abc")
    (project / "agents" / "beta-2" / "capabilities" / "current.yaml").write_text(text, encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    assert "current.yaml:12:12: $.capabilities[0].tierr: unusable YAML: 'abc' is not a whole number" in result.output
    assert "current.yaml:12:5: $.capabilities[0].tierr: 'tierr' is not a known key" in result.output


@pytest.mark.parametrize(
    ("written", "nulled"),
    [
        ("status: !!binary aGk=\n    deprecatedDate: 2025-06-01", "status"),
        ("status: deprecated\n    deprecatedDate: !!binary aGk=", "deprecatedDate"),
        ("maturityLevel: deprecated\n    deprecatedDate: .nan", "deprecatedDate"),
    ],
)
def test_a_deprecation_half_json_cannot_hold_makes_no_deprecated_date_error(
    project: Path, written: str, nulled: str
) -> None:
    """Read as null, a status is not "not deprecated" and a date is not missing: nobody wrote either."""
    text = UNUSABLE_VALUES.replace("    introducedIn: !!binary aGVsbG8=\n    tier: !!int abc\n", "")
    text = text.replace("available: .nan", f"available: true\n    {written}")
    (project / "agents" / "beta-2" / "capabilities" / "current.yaml").write_text(text, encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    assert f"$.capabilities[0].{nulled}: unusable YAML" in result.output
    assert "deprecated-date" not in run("--format", "json").output


def test_a_value_json_cannot_hold_elsewhere_than_a_name_leaves_alias_targets_checked(project: Path) -> None:
    """Only a null where a capability's name may be makes the catalog's names unknown: a `.nan` tier does not hide
    an alias target that names no capability until the next run."""
    (project / "agents" / "beta-2" / "capabilities" / "current.yaml").write_text(UNUSABLE_VALUES, encoding="utf-8")
    (project / "agents" / "aliases.json").write_text('{"aliases": {"beta": "Beta Only"}}\n', encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    assert "alias target 'Beta Only' is not the name of any capability" in result.output


def test_a_flat_yaml_alias_table_with_a_value_json_cannot_hold_is_still_one_error(project: Path) -> None:
    (project / "agents" / "aliases.json").unlink(missing_ok=True)
    table = project / "agents" / "aliases.yaml"
    table.write_text("review: .nan\npr review: Code Review\n", encoding="utf-8")

    result = run()

    assert result.exit_code == 1
    assert "aliases.yaml:1:1: $: missing required key 'aliases': the phrases are written at the top" in result.output
    assert "aliases.yaml:1:9: $.review: unusable YAML: '.nan' is not a number JSON can hold" in result.output
    assert "is not a known key" not in result.output


def test_yaml_values_json_cannot_hold_in_capidx_yaml_are_all_said(project: Path) -> None:
    """capidx.yaml is not checked further (its settings are used at once), but each value is said in the one run."""
    (project / "capidx.yaml").write_text("title: !!set {a}\nbudgets:\n  summary: .inf\n", encoding="utf-8")

    result = run()

    assert result.exit_code == 2
    assert "capidx.yaml:1:8: $.title: unusable YAML: a value tagged !!set has no JSON form" in result.output
    assert "capidx.yaml:3:12: $.budgets.summary: unusable YAML: '.inf' is not a number JSON can hold" in result.output


def test_a_json_number_python_would_refuse_is_an_error_with_its_place(project: Path) -> None:
    """Placed at the number (its sign), not at a string or a float of as many digits before it, which are fine."""
    text = '{\n  "s": "' + "9" * 5000 + '", "f": 0.' + "9" * 5000 + ',\n  "a": -' + "9" * 5000 + "\n}\n"
    (project / "agents" / "alpha" / "capabilities" / "current.json").write_text(text)

    result = run()

    assert result.exit_code == 1
    assert "agents/alpha/capabilities/current.json:3:8: invalid JSON: a number of over 4,300 digits" in result.output


def test_a_json_number_beyond_a_double_s_range_is_an_error_with_its_place(project: Path) -> None:
    """`-1e999` is read as minus infinity by every JSON reader: full.md showed `-inf`, and validate said nothing. A
    string that looks like one, and a large finite number, are fine."""
    text = '{\n  "s": "-1e999", "f": 1.7e308,\n  "x-far": -1e999\n}\n'
    (project / "agents" / "alpha" / "capabilities" / "current.json").write_text(text)

    result = run()

    assert result.exit_code == 1
    assert "current.json:3:12: invalid JSON: -1e999 is beyond a number's range (read as infinity)" in result.output


@pytest.mark.parametrize("parser", ["this Python's", "Python 3.13's"])
def test_a_trailing_comma_is_said_at_the_comma_whichever_python_reads_the_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, parser: str
) -> None:
    """Up to Python 3.12 the json module says "Expecting property name" at the bracket after the comma; from 3.13 it
    says "Illegal trailing comma before end of object" at the comma, which was passed on as it was, without the hint
    (capidx runs on 3.11 and later). The stand-in raises what 3.13's parser raises, for this document only."""
    text = '{\n  "agent": {"name": "Alpha"},\n  "capabilities": [],\t\n}\n'
    (project / "agents" / "alpha" / "capabilities" / "current.json").write_text(text)
    if parser == "Python 3.13's":
        real = json.loads

        def newer(document: str, **options: object) -> object:
            if document != text:
                return real(document, **options)
            raise json.JSONDecodeError("Illegal trailing comma before end of object", document, text.index(",\t"))

        monkeypatch.setattr(json, "loads", newer)

    result = run()

    assert result.exit_code == 1
    assert (
        "agents/alpha/capabilities/current.json:3:21: invalid JSON: a trailing comma (remove the comma after the last "
        "item: JSON allows none)"
    ) in result.output


def test_a_duplicate_key_in_an_anchor_first_met_in_a_merge_is_placed_where_it_is_aliased() -> None:
    document = parse_yaml("a:\n  <<: &m {p: 1, p: 2}\nb: *m\n")
    assert [(d.parts, d.position) for d in document.source_map.duplicates] == [(("b", "p"), (2, 17))]


def test_json_is_read_with_positions_only_when_needed(project: Path) -> None:
    """A valid JSON file is never scanned for positions (the scanner is the slow part of loading)."""
    source, problems = load.load_file(project / "agents" / "alpha" / "capabilities" / "current.json")
    assert source is not None and not problems
    assert source._map is None
    assert json.loads(source.raw) == source.data


def test_over_long_names_are_not_compared_for_a_near_miss(tmp_path: Path) -> None:
    # A name is at most 200 characters; a longer one is an error of its own. Comparing it letter by letter
    # (every string one letter shorter) would cost the square of its length: a hostile 1 MB name, terabytes.
    docs = documents()
    names = ["x" * 1_000 + "a", "x" * 1_000 + "b"]  # one letter apart
    for agent, name in zip(list(docs)[:2], names, strict=True):
        docs[agent]["capabilities"][0]["name"] = name
    write_catalog(tmp_path, docs)
    result = run_cli(["validate", "agents"], tmp_path)
    assert result.exit_code == 1
    assert "1,001 characters long (at most 200" in result.output
    assert "spelled almost like" not in result.output


# --- a named folder that holds the configured catalog -----------------------------------------------------------

_TODAY = ("--today", "2026-02-01")  # after every lastUpdated of the catalog
_BROKEN_ALIASES = {"aliases": {"mcp": "MCP Server", "memory file": "Custom Instructions"}}  # 'MCP Server': no such


@pytest.mark.parametrize(
    ("config", "table", "named"),
    [
        ("paths:\n  out: build\n", "agents/aliases.json", [".", "agents", "{root}"]),
        ("paths:\n  out: build\n  aliases: data/aliases.json\n", "data/aliases.json", [".", "agents", "{root}"]),
        # the templates folder is checked when the named folder holds it: the project's top, not the catalog
        ("paths:\n  out: build\n  templates: nowhere\n", "agents/aliases.json", [".", "{root}"]),
    ],
)
def test_naming_the_project_or_its_catalog_validates_what_validate_does(
    tmp_path: Path, config: str, table: str, named: list[str]
) -> None:
    """`capidx validate .` at the project's top passed ("3 files valid") while the catalog's alias table had errors:
    the table is the catalog's, not the named folder's, and the build folder was walked for stray files instead.
    Naming the project, or the catalog, now says what `capidx validate` says, word for word."""
    built_project(tmp_path)
    (tmp_path / "capidx.yaml").write_text(config, encoding="utf-8")
    (tmp_path / table).parent.mkdir(exist_ok=True)
    (tmp_path / table).write_text(json.dumps(_BROKEN_ALIASES), encoding="utf-8")
    unnamed = run_cli(["validate", *_TODAY], cwd=tmp_path)
    assert f"{table}:" in unnamed.output and "'MCP Server' is not the name of any capability" in unnamed.output
    for name in named:
        result = run_cli(["validate", *_TODAY, name.format(root=tmp_path)], cwd=tmp_path)
        assert (result.exit_code, result.output) == (unnamed.exit_code, unnamed.output), name
    assert unnamed.exit_code == (2 if "nowhere" in config else 1)


def test_a_named_document_checks_the_configured_alias_tables_targets(tmp_path: Path) -> None:
    """A pre-commit hook names the changed documents: the catalog's table (here `paths.aliases`) is checked for aliases
    their capabilities leave without a target."""
    built_project(tmp_path)
    (tmp_path / "capidx.yaml").write_text("paths:\n  out: build\n  aliases: data/aliases.json\n", encoding="utf-8")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "aliases.json").write_text(json.dumps(_BROKEN_ALIASES), encoding="utf-8")
    result = run_cli(["validate", *_TODAY, "agents/claude-code/capabilities/current.json"], tmp_path)
    assert result.exit_code == 1
    assert "data/aliases.json:" in result.output and "'MCP Server' is not the name of any capability" in result.output


def test_no_aliases_leaves_the_catalogs_table_unread_whichever_folder_is_named(tmp_path: Path) -> None:
    built_project(tmp_path)
    (tmp_path / "agents" / "aliases.json").write_text(json.dumps(_BROKEN_ALIASES), encoding="utf-8")
    for named in ([], ["."], ["agents"]):
        result = run_cli(["validate", *_TODAY, "--no-aliases", *named], cwd=tmp_path)
        assert result.exit_code == 0, result.output
        assert "agents/aliases.json: warning: not read" in result.output


def test_build_directories_are_not_walked_for_stray_files(tmp_path: Path) -> None:
    """`capidx validate .` reported each JSON file of build/ as "not read" (18 warnings burying what mattered): the
    build folder (`paths.out`) and any other capidx build below the named folder are not walked. A folder whose
    manifest.json is not a capidx build's is walked as any other."""
    built_project(tmp_path)
    assert run_cli(["build", "-q", "--out", "dist/old"], cwd=tmp_path).exit_code == 0  # a build paths.out does not name
    (tmp_path / "build" / "stray.json").write_text("{}", encoding="utf-8")  # what paths.out holds is never walked
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "manifest.json").write_text('{"name": "app"}', encoding="utf-8")
    (tmp_path / "notes.json").write_text("{}", encoding="utf-8")
    result = run_cli(["validate", *_TODAY, "."], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    stray = sorted(line.split(":")[0] for line in result.output.splitlines() if "warning: not read" in line)
    assert stray == ["notes.json", "web/manifest.json"]
    below = run_cli(["validate", *_TODAY, "dist"], cwd=tmp_path)  # nothing there but a build
    assert "dist: no capability documents found" in below.output and "not read" not in below.output


def test_a_catalog_named_from_its_own_top_reads_its_own_alias_table(tmp_path: Path) -> None:
    """Without a configured catalog there (no agents/ below the working folder), `validate .` in a catalog folder
    reads the table at its top, as before."""
    catalog = write_catalog(tmp_path, aliases=_BROKEN_ALIASES)
    result = run_cli(["validate", *_TODAY, "."], cwd=catalog)
    assert result.exit_code == 1
    assert "aliases.json:" in result.output and "'MCP Server' is not the name of any capability" in result.output
    assert "not read" not in result.output


# --- a manifest.json anyone may put in the catalog ---------------------------------------------------------------

_NEWER_BUILD = {"artifacts": [], "format": 99}  # a build of a newer capidx: a manifest that is easy to write


@pytest.mark.parametrize("marker", ["copied", "newer"])
def test_a_build_manifest_in_an_agents_folder_hides_nothing(tmp_path: Path, marker: str) -> None:
    """A manifest.json saying "build" in an agent's folder made validation pass over the folder, and the build, which
    reads what validation reads, dropped the agent: its invalid document was neither reported nor built, exit 0. The
    documents under such a folder are read; only its other data files go unwarned."""
    built_project(tmp_path)
    copied = (tmp_path / "build" / "manifest.json").read_text(encoding="utf-8")
    manifest = copied if marker == "copied" else json.dumps(_NEWER_BUILD)
    agent = tmp_path / "agents" / "copilot-cli"
    (agent / "manifest.json").write_text(manifest, encoding="utf-8")
    (agent / "notes.json").write_text("{}", encoding="utf-8")
    document = agent / "capabilities" / "current.json"
    data = json.loads(document.read_text(encoding="utf-8"))
    data["capabilities"][0]["category"] = "no-such-category"
    document.write_text(json.dumps(data), encoding="utf-8")
    for named in ([], ["."], ["agents"]):
        result = run_cli(["validate", *_TODAY, *named], cwd=tmp_path)
        assert result.exit_code == 1, (named, result.output)
        assert "agents/copilot-cli/capabilities/current.json:" in result.output
        assert "not read" not in result.output
    built = run_cli(["build", "-q", "--out", "again"], cwd=tmp_path)
    assert built.exit_code == 1 and "no-such-category" in built.output
    assert not (tmp_path / "again").exists()


def test_a_misspelled_document_below_a_build_manifest_is_still_an_error(tmp_path: Path) -> None:
    """The error that says an agent drops out of the build (`capabilites/`) is not silenced by a manifest beside it."""
    agents = write_catalog(tmp_path)
    (agents / "copilot-cli" / "capabilities").rename(agents / "copilot-cli" / "capabilites")
    (agents / "copilot-cli" / "manifest.json").write_text(json.dumps(_NEWER_BUILD), encoding="utf-8")
    result = run_cli(["validate", *_TODAY, "-q"], cwd=tmp_path)
    assert result.exit_code == 1
    assert "agents/copilot-cli/capabilites/current.json: not read" in result.output


def test_a_large_manifest_json_that_is_no_build_is_not_read_for_its_every_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a folder met in the catalog is a build is a yes or no: listing every schema error of a manifest.json
    of a few MB that is no build manifest took jsonschema minutes, in `capidx validate` and in every build."""
    from capidx.schema import builddir

    def listed(_data: object) -> list[str]:
        raise AssertionError("the manifest's schema errors were listed")

    monkeypatch.setattr(builddir, "manifest_problems", listed)
    agents = write_catalog(tmp_path)
    (agents / "notes").mkdir()
    stray = {"format": 1, "artifacts": [{"n": n} for n in range(20_000)]}
    (agents / "notes" / "manifest.json").write_text(json.dumps(stray), encoding="utf-8")
    result = run_cli(["validate", *_TODAY], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "agents/notes/manifest.json: warning: not read" in result.output


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe not utf-8", b"{" * 100_000, b"[" * 50_000 + b"]" * 50_000, b'{"artifacts": "x", "format": 99}', b"7"],
)
def test_a_manifest_json_that_is_no_manifest_is_walked_as_any_file(tmp_path: Path, content: bytes) -> None:
    agents = write_catalog(tmp_path)
    (agents / "notes").mkdir()
    (agents / "notes" / "manifest.json").write_bytes(content)
    (agents / "notes" / "other.json").write_text("{}", encoding="utf-8")
    result = run_cli(["validate", *_TODAY], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "agents/notes/other.json: warning: not read" in result.output


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_the_catalog_or_project_named_through_a_link_reads_the_table_once(tmp_path: Path) -> None:
    """`capidx validate cat`, cat a link to the catalog (or the project named through a link), read the configured
    table by the name the configuration gives it, then said it was "not read" under the link's name: a warning, and
    for the project an error (a table misplaced)."""
    project = tmp_path / "project"
    built_project(project)
    (project / "agents" / "aliases.json").write_text(json.dumps(_BROKEN_ALIASES), encoding="utf-8")
    (project / "cat").symlink_to("agents", target_is_directory=True)
    (tmp_path / "link").symlink_to(project, target_is_directory=True)
    for named in ("cat", str(tmp_path / "link"), str(tmp_path / "link" / "agents")):
        result = run_cli(["validate", *_TODAY, named], cwd=project)
        assert result.exit_code == 1, (named, result.output)
        assert result.output.count("'MCP Server' is not the name of any capability") == 1, (named, result.output)
        assert "not read" not in result.output, (named, result.output)
        unread = run_cli(["validate", *_TODAY, "--no-aliases", named], cwd=project)
        assert unread.exit_code == 0, (named, unread.output)
        assert unread.output.count("aliases.json: warning: not read") == 1, (named, unread.output)


def test_a_document_with_thousands_of_warnings_says_the_first_thousand(tmp_path: Path) -> None:
    """A pull request's document makes as many warnings as it has items: one alias written 120,000 times (0.8 MB)
    made 120,000 `alias-repeated` warnings, 4 s and 120,000 lines, where its errors were bounded. A file's first
    1,000 warnings are said, then one counting the rest; the exit code is the one every warning would have made (0,
    and 1 with --strict, which makes the count an error too), in validate and build."""
    agents = write_catalog(tmp_path / "project")
    path = sorted(agents.glob("*/capabilities/current.json"))[0]
    document = json.loads(path.read_text("utf-8"))
    document["capabilities"][0]["aliases"] = ["the same phrase"] * 3_001
    path.write_text(json.dumps(document), "utf-8")
    named = path.relative_to(tmp_path / "project").as_posix()
    for command, strict, code in (("validate", [], 0), ("validate", ["--strict"], 1), ("build", [], 0)):
        result = run_cli([command, *strict], tmp_path / "project")
        assert result.exit_code == code, (command, strict, result.output[-2000:])
        lines = [line for line in result.output.splitlines() if line.startswith(named)]
        assert len(lines) <= 1_001, (command, strict, len(lines))
        assert sum("more warnings than the first 1,000, which are said" in line for line in lines) == 1, lines[:3]


def _said_and_made(project: Path, named: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], int, list[str]]:
    """`capidx validate`'s lines about `named`, how many diagnostics its rules made, and its lines with every warning
    said (the cap lifted)."""
    made = 0
    diagnostic = load.SourceFile.diagnostic

    def counted(self: load.SourceFile, *args: Any, **kwargs: Any) -> Any:
        nonlocal made
        made += 1
        return diagnostic(self, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(load.SourceFile, "diagnostic", counted)
        said = [line for line in run_cli(["validate", "-v"], project).output.splitlines() if line.startswith(named)]
        made_said = made
        patched.setattr(validate_run, "MAX_SAID_WARNINGS", 100_000)
        every = [line for line in run_cli(["validate", "-v"], project).output.splitlines() if line.startswith(named)]
    return said, made_said, every


def test_warnings_past_the_cap_are_counted_not_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a file's first 1,000 warnings, the rules that make theirs in reading order only count them: a 9 MB
    document of one alias written 500,000 times took 19 s and 460 MB to make 500,000 warnings of which 1,000 are said
    (one alias in two records: 21 s and 940 MB). What is said is what every warning made and then capped says."""
    agents = write_catalog(tmp_path / "project")
    path = sorted(agents.glob("*/capabilities/current.json"))[0]
    document = json.loads(path.read_text("utf-8"))
    first, second = document["capabilities"][:2]
    first["aliases"] = second["aliases"] = ["the same phrase"] * 4_000  # alias-repeated, and alias-shared in one
    document["capabilities"][2]["aliases"] = [document["capabilities"][2]["name"]] * 2_000  # alias-own-name
    path.write_text(json.dumps(document), "utf-8")
    named = path.relative_to(tmp_path / "project").as_posix()
    said, made, every = _said_and_made(tmp_path / "project", named, monkeypatch)
    assert made < 5_000, made  # each rule's first 1,000 at most, and the rest of the document's few
    assert len(every) > 15_000, len(every)
    more = f"{len(every) - 1_000:,} more warnings than the first 1,000, which are said"
    assert said == [f"{named}: warning: {more} (fix those and validate again)", *every[:1_000]]


def test_sources_past_the_warning_cap_are_counted_not_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record citing 85,000 sources on example.com, none verified (9 MB), took validate 22 s and 260 MB to make
    170,000 `placeholder-url` and `never-verified` warnings, of which 1,000 are said: these rules too count theirs
    past a file's cap of each, and say the same."""
    agents = write_catalog(tmp_path / "project")
    path = sorted(agents.glob("*/capabilities/current.json"))[0]
    document = json.loads(path.read_text("utf-8"))
    cited = {"description": "Where it is said", "sourceGranularity": "section"}
    sources = [{"url": f"https://example.com/{number}", **cited} for number in range(2_500)]
    sources += [
        {"url": f"https://docs.invalid/{number}", "verifiedDate": "2020-01-02", **cited} for number in range(1_500)
    ]
    document["capabilities"][1]["sources"] = sources
    path.write_text(json.dumps(document), "utf-8")
    named = path.relative_to(tmp_path / "project").as_posix()
    said, made, every = _said_and_made(tmp_path / "project", named, monkeypatch)
    assert made < 5_000, made
    assert len(every) > 6_000, len(every)
    more = f"{len(every) - 1_000:,} more warnings than the first 1,000, which are said"
    assert said == [f"{named}: warning: {more} (fix those and validate again)", *every[:1_000]]


def test_warnings_through_a_yaml_alias_are_made_before_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The values of a YAML alias all stand where the alias is, in the order of their messages, not of the rule that
    makes them: past the cap of a rule's warnings, the next may still be among the file's first 1,000. A document
    using an alias has its warnings made, then capped (one list of 1,100 aliases used through an alias said the
    1,000 'zzz' repeats, not the 'aaa' that comes first)."""
    agents = write_catalog(tmp_path / "project")
    path = sorted(agents.glob("*/capabilities/current.json"))[0]
    document = json.loads(path.read_text("utf-8"))
    phrases = ["zzz"] * 1_100 + ["aaa", "aaa"]
    document = {"x-phrases": phrases, **document}  # anchored first, so that the aliases are used through an alias
    document["capabilities"][0]["aliases"] = phrases
    path.unlink()
    path = path.with_suffix(".yaml")
    path.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    assert "aliases: *" in path.read_text("utf-8")
    named = path.relative_to(tmp_path / "project").as_posix()
    said, _, every = _said_and_made(tmp_path / "project", named, monkeypatch)
    more = f"{len(every) - 1_000:,} more warnings than the first 1,000, which are said"
    assert said == [f"{named}: warning: {more} (fix those and validate again)", *every[:1_000]]
    assert any("alias 'aaa' is given twice" in line for line in said)


def test_an_alias_written_in_many_records_makes_no_more_than_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a YAML file that writes an alias, a warning past its rule's cap is still made where the cap's last one
    stands (those there are sorted by message), not after it: with the cap lifted for any alias, one list of phrases
    used through an alias by each of many records made every warning (900 records of 900: 40 s and 1.4 GB)."""
    agents = write_catalog(tmp_path / "project")
    path = sorted(agents.glob("*/capabilities/current.json"))[0]
    document = json.loads(path.read_text("utf-8"))
    phrases = [f"phrase {number}" for number in range(60)] * 2  # 60 alias-repeated in each record
    records = [{**document["capabilities"][0], "name": f"Capability {number}"} for number in range(40)]
    for record in records:
        record["aliases"] = phrases
    document = {"x-phrases": phrases, **document, "capabilities": records}
    path.unlink()
    path = path.with_suffix(".yaml")
    path.write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
    assert path.read_text("utf-8").count("aliases: *") == 40
    named = path.relative_to(tmp_path / "project").as_posix()
    said, made, every = _said_and_made(tmp_path / "project", named, monkeypatch)
    more = f"{len(every) - 1_000:,} more warnings than the first 1,000, which are said"
    assert said == [f"{named}: warning: {more} (fix those and validate again)", *every[:1_000]]
    assert len(every) > 40 * 60 + 40 * 60  # alias-repeated, and alias-shared of each record's 60 phrases
    assert made < 2 * (1_000 + 120), made  # two rules: their first 1,000, and those where the 1,000th stands


def test_warnings_placed_out_of_the_rule_s_order_are_made_before_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule's warnings are made in the data's order, which is not always where they are placed: with `capabilities`
    written twice, the records kept are placed through the aliases of the first list where it wrote one. Past the
    cap, one placed before the last place of the rule's first 1,000 is made, not only the 1,000th's: one placed
    after the 1,000th (through an alias) but before the 999 made first was counted, and a later one said instead."""
    agents = write_catalog(tmp_path / "project")
    path = sorted(agents.glob("*/capabilities/current.json"))[0]
    document = json.loads(path.read_text("utf-8"))
    record = {key: value for key, value in document["capabilities"][0].items() if key != "aliases"}

    def records(aliases: list[str]) -> str:
        listed = [{**record, "name": f"Capability {number}", "aliases": []} for number in range(len(aliases))]
        listed = json.loads(json.dumps(listed))  # no value shared: no anchor of PyYAML's
        written = yaml.safe_dump({"capabilities": listed}, sort_keys=False, width=1_000_000)
        return written.replace("aliases: []", "aliases: {}").format(*aliases)

    def repeated(phrase: str, times: int) -> str:
        return "[" + ", ".join([phrase] * times) + "]"

    path.unlink()
    path = path.with_suffix(".yaml")
    rest = yaml.safe_dump({key: value for key, value in document.items() if key != "capabilities"}, sort_keys=False)
    written_first = records(["[a]", "[a]", "[a]", "*phrases", "*phrases", "[a]"])  # not kept: the second is
    kept = records([repeated("qq", 334)] * 3 + [repeated("zz", 400)] * 2 + ["[b]"])  # 999 repeats, then 800
    path.write_text(f"x-phrases: &phrases {repeated('rr', 2)}\n{rest}{written_first}{kept}", "utf-8")
    named = path.relative_to(tmp_path / "project").as_posix()
    said = [line for line in run_cli(["validate", "-v"], tmp_path / "project").output.splitlines()]
    monkeypatch.setattr(load.SourceFile, "past_cap", lambda *_: False)  # every warning made, then capped
    every = [line for line in run_cli(["validate", "-v"], tmp_path / "project").output.splitlines()]
    assert said == every
    assert any(line.startswith(named) and "'zz' is given twice in 'Capability 4'" in line for line in said)


@pytest.mark.parametrize(
    ("shape", "more"),
    [
        ("unknown keys", "2,900 more unknown keys than the first 100, which are said"),
        ("capabilities missing their keys", "more schema errors than the first 1,000"),
        ("duplicate keys", "1,999 more duplicate keys than the first 1,000"),
    ],
)
def test_a_document_with_thousands_of_errors_says_the_first_thousand(tmp_path: Path, shape: str, more: str) -> None:
    """A pull request's document makes as many errors as it has keys or items: 100,000 capabilities missing their
    keys (3 MB, within the 10 MB a file may have) took 69 s and 2 GB of memory, and printed 600,000 lines. The first
    1,000 errors of a kind are said, then one line that there are more: build and validate the same. An object's unknown
    keys are said up to 100: at 1,000 they filled the file's bound, and the line counting the rest was cut off."""
    agents = write_catalog(tmp_path / "project")
    path = sorted(agents.glob("*/capabilities/current.json"))[0]
    document = json.loads(path.read_text("utf-8"))
    if shape == "unknown keys":
        document.update({f"k{number}": 1 for number in range(3_000)})
        path.write_text(json.dumps(document), "utf-8")
    elif shape == "capabilities missing their keys":
        document["capabilities"] = [{f"z{number}": 1} for number in range(3_000)]
        path.write_text(json.dumps(document), "utf-8")
    else:
        path.write_text(json.dumps(document)[:-1] + ', "x-a": 1' * 3_000 + "}", "utf-8")
    for command in ("validate", "build"):
        result = run_cli([command], tmp_path / "project")
        assert result.exit_code in (1, 2), result.output
        named = path.relative_to(tmp_path / "project").as_posix()
        lines = [line for line in result.output.splitlines() if line.startswith(named) and "warning:" not in line]
        assert len(lines) <= 1_002, (command, len(lines))
        assert any(more in line for line in lines), (command, result.output[-2000:])


def _counted_ratios(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one at each letter-by-letter comparison of two strings for a 'did you mean'."""
    import difflib

    calls: list[int] = []
    real = difflib.SequenceMatcher.ratio

    def ratio(self: difflib.SequenceMatcher[str]) -> float:
        calls.append(1)
        return real(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", ratio)
    return calls


def test_successors_naming_no_capability_are_compared_with_a_bounded_number_of_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each supersededBy naming no capability was compared with every name of the catalog for its 'did you mean':
    2,000 records took validate 78 s, quadratic. Now the first `MAX_SPELLINGS_SOUGHT` are looked up, each within a
    bounded work, and every one is still said."""
    from capidx.compiler.validate.lint import MAX_SPELLINGS_SOUGHT

    count = 600
    docs = documents()
    description = "Runs the project's unit tests in a sandbox and reports each failure with its stack trace."
    docs["claude-code"]["capabilities"] = [
        {
            "name": f"Feature number {n:04d} of the catalog",
            "category": "testing",
            "description": description,
            "available": False,
            "supersededBy": f"Feature numbr {n:04d} of the",
        }
        for n in range(count)
    ]
    write_catalog(tmp_path, docs, aliases=None)
    calls = _counted_ratios(monkeypatch)
    result = run_cli(["validate", "--format", "json"], tmp_path)
    said = _claude_s(result, lambda problem: problem["code"] == "successor")
    assert len(said) == count
    assert said[0]["hint"].startswith("did you mean 'Feature number ")
    assert said[-1]["hint"] == "use the name of a capability in some agent's document"
    assert len(calls) <= MAX_SPELLINGS_SOUGHT * count // 2  # every pair: count * count


def _claude_s(result: Any, wanted: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """The problems `validate --format json` said in claude-code's document that `wanted` picks."""
    problems = json.loads(result.stdout)["diagnostics"]
    return [problem for problem in problems if "claude-code" in problem["path"] and wanted(problem)]


def test_a_value_a_schema_s_long_enum_refuses_is_compared_with_a_bounded_number_of_its_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request's schema (`paths.schema`) with a category enum of 5,000 values of 60 letters took 3.8 s per
    category it refused to find a 'did you mean' among them (a document's 1,000 errors: an hour). Each value refused
    is compared with the enum's values within `CLOSE_MATCH_WORK`; a typo of one near the start is still found."""
    from capidx.schema.wording import CLOSE_MATCH_WORK

    letters = "abcdefghij" * 6
    allowed = [letters[n % 60 :] + letters[: n % 60] + f"{n:05d}" for n in range(3_000)]
    schema = json.loads((Path(__file__).parents[1] / "schema" / "capability-schema.json").read_text("utf-8"))
    schema["$defs"]["category"] = {"type": "string", "enum": allowed}
    schema.pop("$id", None)
    (tmp_path / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    (tmp_path / "capidx.yaml").write_text("paths:\n  schema: schema.json\n", encoding="utf-8")
    docs = documents()
    records = docs["claude-code"]["capabilities"]
    for number, record in enumerate(records):
        record["category"] = allowed[1][:-1] + "9" if number == 0 else letters[::-1] + f"{number:05d}"
    write_catalog(tmp_path, docs, aliases=None)
    calls = _counted_ratios(monkeypatch)
    result = run_cli(["validate", "--format", "json"], tmp_path)
    refused = _claude_s(result, lambda problem: "not a valid category" in problem["message"])
    assert len(refused) == len(records)
    assert refused[0]["hint"] == f"did you mean '{allowed[1]}'?"
    assert len(calls) <= len(docs) * len(records) * CLOSE_MATCH_WORK // (65 * 65)


def test_a_word_longer_than_a_did_you_mean_s_work_is_compared_with_nothing() -> None:
    """A value no candidate can be compared with within `CLOSE_MATCH_WORK` (each comparison costs both lengths'
    product) was still indexed by difflib first, some 40 bytes per character: a template's key of 20 million
    characters (`catalog['a' * 20000000]`) took 2 s and 800 MB, a refused enum value of 4.8 MB 215 MB, for no
    suggestion. It is compared with nothing and indexed not at all; a word within the work still finds its match."""
    import tracemalloc

    from capidx.schema.wording import CLOSE_MATCH_WORK, close_match

    word = "ab" * 1_000_000
    candidates = ["agents", "ab" * 999_990, word[:-1]]
    tracemalloc.start()
    try:
        found = close_match(word, candidates)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found is None
    assert peak < 1_000_000, peak
    assert close_match("capabilites", ["agents", "capabilities"]) == "capabilities"
    longest = "x" * (CLOSE_MATCH_WORK // 1_000)
    assert close_match(longest + "y", [longest]) == longest


def test_alias_phrases_of_one_wording_are_compared_with_its_uses_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`alias-wording` looked at every record using a wording for each alias phrase that reads as it, normalizing the
    record's name each time: 19,000 phrases written apart in spaces and hyphens (one wording) and 1,000 records
    sharing it took validate 49 s, growing with the product. Each phrase is still said, naming the first record."""
    from capidx.compiler.validate import lint

    calls: list[int] = []
    real = lint.normalize

    def normalize(text: str) -> str:
        calls.append(1)
        return real(text)

    monkeypatch.setattr(lint, "normalize", normalize)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    phrases = [
        words[0] + "".join(("-" if bit == "1" else " ") + word for bit, word in zip(f"{n:09b}", words[1:], strict=True))
        for n in range(400)
    ]
    records, description = (
        300,
        "Runs the project's unit tests in a sandbox and reports each failure with its stack trace.",
    )
    docs = documents()
    docs["claude-code"]["capabilities"] = [
        {
            "name": f"Feature number {n:04d}",
            "category": "testing",
            "description": description,
            "available": False,
            "terminology": " ".join(words),
        }
        for n in range(records)
    ]
    write_catalog(tmp_path, docs, aliases={"aliases": dict.fromkeys(phrases, "Hooks")})
    result = run_cli(["validate", "--format", "json"], tmp_path)
    said = [problem for problem in json.loads(result.stdout)["diagnostics"] if problem["code"] == "alias-wording"]
    assert len(said) == len(phrases)
    assert f"claude-code's wording '{' '.join(words)}' uses it for 'Feature number 0000'" in said[0]["message"]
    assert len(calls) < 10 * (len(phrases) + records)  # each phrase and each use: not their product (240,000)
