"""A path capidx.yaml names that is not there is reported at its key in capidx.yaml, with the near name meant.

`paths.agents: agnets` used to read "agnets: catalog directory not found (run capidx where agents/ is …)" to a
user who had; `paths.aliases: agents/alias.json` advised renaming the right file, agents/aliases.json.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import deny_listing, deny_search, run_cli, write_catalog

from capidx.compiler import files


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_catalog(tmp_path)  # agents/ with agents/aliases.json
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "caps.json").write_text("{}", encoding="utf-8")
    (tmp_path / "templates").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (
            "agents: agnets",
            "capidx.yaml:2:11: $.paths.agents: catalog directory 'agnets' does not exist (did you mean 'agents'?)",
        ),
        (
            "aliases: agents/alias.json",
            "capidx.yaml:2:12: $.paths.aliases: alias table 'agents/alias.json' does not exist "
            "(did you mean 'agents/aliases.json'?)",
        ),
        (
            "schema: schema/capz.json",
            "capidx.yaml:2:11: $.paths.schema: schema file 'schema/capz.json' does not exist "
            "(did you mean 'schema/caps.json'?)",
        ),
        (
            "templates: tmpls",
            "capidx.yaml:2:14: $.paths.templates: templates folder 'tmpls' does not exist (did you mean 'templates'?)",
        ),
        (
            "agents: elsewhere/catalog",
            "capidx.yaml:2:11: $.paths.agents: catalog directory 'elsewhere/catalog' does not exist "
            "(correct paths.agents, or pass --agents DIR)",
        ),
    ],
    ids=["agents", "aliases", "schema", "templates", "nothing-near"],
)
def test_a_configured_path_that_is_not_there_is_reported_at_its_key(project: Path, setting: str, expected: str) -> None:
    (project / "capidx.yaml").write_text(f"paths:\n  {setting}\n", encoding="utf-8")

    validated = run_cli(["validate"], project)
    built = run_cli(["build", "-q"], project)

    assert validated.exit_code == 2, validated.output
    assert expected in validated.output.splitlines()
    assert "run capidx where agents/ is" not in validated.output
    assert "not read" not in validated.output  # agents/aliases.json is what paths.aliases meant, no stray
    assert built.exit_code == 2, built.output
    assert any(line.endswith(expected[len("capidx.yaml") :]) for line in built.stderr.splitlines()), built.stderr
    assert not (project / "build").exists()


@pytest.mark.parametrize("command", ["validate", "build"])
def test_run_from_a_subfolder_the_capidx_yaml_above_is_named(project: Path, command: str) -> None:
    """capidx reads the working folder's capidx.yaml only; run from `agents/` it found no catalog and said to run
    it "where agents/ is". It now names the capidx.yaml above and how to use it."""
    (project / "capidx.yaml").write_text("title: Agents\n", encoding="utf-8")
    result = run_cli([command], project / "agents")
    assert result.exit_code == 2, result.output
    output = result.output if command == "validate" else result.stderr
    assert (
        "agents: catalog directory not found (no capidx.yaml here; ../capidx.yaml is above: run capidx in .., or pass"
        " --config ../capidx.yaml)"
    ) in output.splitlines()
    # a catalog named by --agents is the user's choice: the capidx.yaml above is nothing to it
    result = run_cli([command, "--agents", "nope"], project / "agents")
    output = result.output if command == "validate" else result.stderr
    said = [line for line in output.splitlines() if line.startswith("nope: ")]
    assert said and said[0].startswith("nope: catalog directory not found (run capidx where agents/ is"), output
    assert "capidx.yaml" not in said[0] and "capidx init" not in said[0], output


def test_a_path_given_by_a_flag_keeps_the_flags_wording(project: Path) -> None:
    """The file's setting is not to blame for a flag, nor for a setting a flag overrides."""
    (project / "capidx.yaml").write_text("paths:\n  agents: agnets\n", encoding="utf-8")

    result = run_cli(["validate", "--agents", "agnetz"], project)

    assert result.exit_code == 2
    assert "agnetz: catalog directory not found" in result.output
    assert "capidx.yaml" not in result.output
    assert run_cli(["validate", "--agents", "agents"], project).exit_code == 0


@pytest.mark.parametrize("command", ["validate", "build"])
def test_a_mistyped_or_missing_catalog_flag_is_said_alike_with_a_way_on(project: Path, command: str) -> None:
    """`build --agents agnets` was click's "Directory 'agnets' does not exist." while validate said the catalog's own
    problem: both say it, with the folder beside it that was meant; and in a folder with nothing of a catalog, how a
    new one starts (a newcomer's empty folder)."""
    mistyped = run_cli([command, "--agents", "agnets"], project)
    assert mistyped.exit_code == 2, mistyped.output
    output = mistyped.output if command == "validate" else mistyped.stderr
    assert "agnets: catalog directory not found (did you mean agents?)" in output, output
    empty = project / "empty"
    empty.mkdir()
    started = run_cli([command], empty)
    assert started.exit_code == 2, started.output
    output = started.output if command == "validate" else started.stderr
    assert "agents: catalog directory not found (" in output and "`capidx init`" in output, output
    assert not (empty / "build").exists()


def test_a_catalog_folder_this_user_may_not_search_asks_for_permission_not_a_catalog(
    project: Path, monkeypatch
) -> None:
    """`--agents DIR`, or the default agents/, a link into a folder this user may not search: "catalog directory not
    found (run capidx where agents/ is, or pass --agents DIR …)" sent the user looking for a catalog where one is.
    Said to be unreadable, with the permission needed. Simulated (as if `hidden` had mode 000)."""
    hidden = project / "hidden"
    hidden.mkdir()
    (project / "agents").rename(hidden / "catalog")
    for link in ("agents", "linked"):
        (project / link).symlink_to("hidden/catalog")
    deny_search(monkeypatch, hidden, project / "agents", project / "linked")
    said = "catalog directory cannot be read: permission denied (" + FOLDER_PERMISSION + ")"

    for args, shown in ((["validate", "--agents", "linked"], "linked"), (["validate"], "agents")):
        result = run_cli(args, project)
        assert result.exit_code == 2, result.output
        assert f"{shown}: {said}" in result.output.splitlines()
    built = run_cli(["build", "-q"], project)
    assert built.exit_code == 2, built.output
    assert f"agents: {said}" in built.stderr.splitlines()
    assert "not found" not in built.stderr and not (project / "build").exists()


def test_a_catalog_folder_this_user_may_not_search_itself_is_not_empty(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog folder this user may see but not search (mode 000) was walked, nothing found in it, and said to
    hold no capability documents: the default agents/, --agents and paths.agents alike. Said to be unreadable, with
    the permission needed. Simulated: root searches any folder."""
    deny_search(monkeypatch, project / "agents")
    said = "catalog directory cannot be read: permission denied (" + FOLDER_PERMISSION + ")"

    for args in (["validate"], ["validate", "--agents", "agents"]):
        result = run_cli(args, project)
        assert result.exit_code == 2, result.output
        assert f"agents: {said}" in result.output.splitlines()
    built = run_cli(["build", "-q"], project)
    assert built.exit_code == 2, built.output
    assert f"agents: {said}" in built.stderr.splitlines() and "no capability documents" not in built.stderr
    (project / "capidx.yaml").write_text("paths:\n  agents: agents\n", encoding="utf-8")
    unreadable = said.replace("catalog directory", "catalog directory 'agents'")
    _refused_by_validate_and_build(project, f"capidx.yaml:2:11: $.paths.agents: {unreadable}")


def test_build_says_which_config_is_read_beside_a_catalog_this_user_may_not_search(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`capidx build --agents DIR` first says which capidx.yaml is in force, and whether DIR holds one it does not
    read: asked with Path.is_file, a DIR this user may see but not search ended the build in a traceback. The build
    goes on to say the catalog cannot be read. Simulated (as if agents/ had mode 000)."""
    deny_search(monkeypatch, project / "agents")

    built = run_cli(["build", "--agents", "agents"], project)

    assert built.exit_code == 2, built.output
    assert "config: none" in built.stderr
    assert f"agents: catalog directory cannot be read: permission denied ({FOLDER_PERMISSION})" in built.stderr


def test_a_path_option_that_must_exist_in_a_folder_this_user_may_not_search_asks_for_permission(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """build's --agents, --templates, --config and the like, and serve's --config, must name something there: click
    said a path inside a folder this user may not search "does not exist". It is said to be unreadable, with the
    permission needed, a folder's or a file's. Simulated (as if `hidden` had mode 000)."""
    hidden = project / "hidden"
    hidden.mkdir()
    (project / "agents").rename(hidden / "catalog")
    (project / "linked").symlink_to("hidden/catalog")
    (hidden / "capidx.yaml").write_text("title: x\n", encoding="utf-8")
    deny_search(monkeypatch, hidden, project / "linked")

    linked = run_cli(["build", "--agents", "linked"], project)  # the catalog's own problem, as validate says it
    assert linked.exit_code == 2, linked.output
    assert f"linked: catalog directory cannot be read: permission denied ({FOLDER_PERMISSION})" in linked.output
    for args, permission in [
        (["build", "--templates", "hidden/templates"], FOLDER_PERMISSION),
        (["build", "--config", "hidden/capidx.yaml"], FILE_PERMISSION),
        (["serve", "--config", "hidden/capidx.yaml", "--print-config"], FILE_PERMISSION),
    ]:
        result = run_cli(args, project)
        assert result.exit_code == 2, result.output
        assert f"'{args[2]}' cannot be read: permission denied ({permission})." in result.output, result.output
    assert not (project / "build").exists()


@pytest.mark.parametrize("how", ["link", "folder"])
def test_a_templates_folder_this_user_may_not_look_into_is_said_to_be_unreadable(
    project: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The default templates/, a link into a folder this user may not search or a folder it may not search itself:
    Python 3.11's Path.is_dir or Path.exists raised the PermissionError, and validate and build ended in a traceback.
    Which templates it holds cannot be told: said to be unreadable, with the permission needed, rather than passed
    over for the bundled ones. Given by capidx.yaml, the folder was passed over in silence: said at its key. Simulated
    (as if of mode 000): root may search any folder."""
    (project / "templates").rmdir()
    (project / "hidden" / "templates").mkdir(parents=True)
    (project / "hidden" / "templates" / "summary.md.j2").write_text("# {{ title }}\n", encoding="utf-8")
    if how == "link":
        (project / "templates").symlink_to("hidden/templates")
        deny_search(monkeypatch, project / "hidden", project / "templates")
    else:
        (project / "hidden" / "templates").rename(project / "templates")
        deny_search(monkeypatch, project / "templates")
    unreadable = f"cannot be read: permission denied ({FOLDER_PERMISSION})"
    said = f"templates folder {unreadable}"

    validated = run_cli(["validate"], project)
    assert validated.exit_code == 2, validated.output
    assert f"templates: {said}" in validated.output.splitlines()
    built = run_cli(["build", "-q"], project)
    assert built.exit_code == 2, built.output
    assert f"templates: {said}" in built.stderr.splitlines()
    assert not (project / "build").exists()
    (project / "capidx.yaml").write_text("paths:\n  templates: templates\n", encoding="utf-8")
    expected = f"capidx.yaml:2:14: $.paths.templates: templates folder 'templates' {unreadable}"
    _refused_by_validate_and_build(project, expected)


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (
            "templates: templates/summary.md.j2",
            "capidx.yaml:2:14: $.paths.templates: templates folder 'templates/summary.md.j2' is not a folder "
            "(correct paths.templates, or remove it to use the bundled templates)",
        ),
        (
            "agents: agents/aliases.json",
            "capidx.yaml:2:11: $.paths.agents: catalog directory 'agents/aliases.json' is not a folder "
            "(correct paths.agents, or pass --agents DIR)",
        ),
    ],
    ids=["templates", "agents"],
)
def test_a_configured_folder_that_is_a_file_is_reported_at_its_key(project: Path, setting: str, expected: str) -> None:
    """A file where a folder belongs: `paths.templates` naming one template was passed over in silence (the bundled
    templates were used, exit 0), `paths.agents` naming a file was "not found" at no place in capidx.yaml."""
    (project / "templates" / "summary.md.j2").write_text("# {{ title }}\n", encoding="utf-8")
    (project / "capidx.yaml").write_text(f"paths:\n  {setting}\n", encoding="utf-8")

    _refused_by_validate_and_build(project, expected)


def test_a_templates_folder_given_by_flag_that_is_a_pipe_or_device_stops_the_build(project: Path) -> None:
    """click's check of `--templates` refuses a regular file only: a pipe (or `/dev/null`) passed, the templates
    folder's walk found nothing in it, and the build used the bundled templates in silence (exit 0). It is said to be
    no folder (exit 2), as `paths.templates` naming one is, nothing built."""
    if not hasattr(os, "mkfifo"):  # pragma: no cover - Windows
        pytest.skip("no named pipes here")
    os.mkfifo(project / "pipe")

    built = run_cli(["build", "-q", "--templates", "pipe"], project)

    assert built.exit_code == 2, built.output
    hint = "give --templates a folder of templates, or leave it out for the bundled ones"
    assert f"pipe: templates folder is not a folder ({hint})" in built.stderr.splitlines()
    assert not (project / "build").exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("agents/aliases.json", "is not a folder"),
        ("dangling", "is a broken symbolic link (target 'gone/folder' does not exist)"),
        ("looping", "is a symbolic link loop"),
    ],
    ids=["a-file", "a-broken-link", "a-link-loop"],
)
def test_a_catalog_folder_given_by_flag_that_is_no_folder_is_not_said_to_be_missing(
    project: Path, name: str, why: str
) -> None:
    """`validate --agents` (which click checks not at all) naming a file, a link to nothing or a loop was "catalog
    directory not found", which sent the user looking for a typing error: it is said to be what it is (exit 2)."""
    (project / "dangling").symlink_to("gone/folder")
    (project / "looping").symlink_to("looping")

    validated = run_cli(["validate", "--agents", name], project)

    assert validated.exit_code == 2, validated.output
    hint = "run capidx where agents/ is, or pass --agents DIR, --config FILE or PATHS"
    assert f"{name}: catalog directory {why} ({hint})" in validated.output.splitlines()


@pytest.mark.parametrize(
    ("key", "column", "what", "way_out"),
    [
        ("templates", 14, "templates folder", "correct paths.templates, or remove it to use the bundled templates"),
        ("agents", 11, "catalog directory", "correct paths.agents, or pass --agents DIR"),
    ],
    ids=["templates", "agents"],
)
def test_a_configured_folder_that_is_a_broken_link_is_said_to_be_one(
    project: Path, key: str, column: int, what: str, way_out: str
) -> None:
    """A link to nothing, or to itself, was told "is not a folder", as if a file stood there: it is said to be a
    broken link naming where it points (as a broken link to a file is when read), or a loop."""
    (project / "dangling").symlink_to("gone/folder")
    (project / "looping").symlink_to("looping")
    for name, why in [
        ("dangling", "is a broken symbolic link (target 'gone/folder' does not exist)"),
        ("looping", "is a symbolic link loop"),
    ]:
        (project / "capidx.yaml").write_text(f"paths:\n  {key}: {name}\n", encoding="utf-8")
        expected = f"capidx.yaml:2:{column}: $.paths.{key}: {what} '{name}' {why} ({way_out})"

        _refused_by_validate_and_build(project, expected)


@pytest.mark.parametrize(
    ("key", "column", "what"), [("templates", 14, "templates folder"), ("agents", 11, "catalog directory")]
)
def test_a_configured_link_into_a_folder_this_user_may_not_search_asks_for_permission(
    project: Path, monkeypatch: pytest.MonkeyPatch, key: str, column: int, what: str
) -> None:
    """A link whose folder cannot be looked into: Python 3.11's Path.is_dir raised the PermissionError, and validate
    and build ended in a traceback. It is said at its key, with the permission needed. Simulated (as if `hidden` had
    mode 000): root may look into any folder."""
    (project / "hidden" / "folder").mkdir(parents=True)
    (project / "linked").symlink_to("hidden/folder")
    refused = str(project / "linked")
    inside = str(project / "hidden") + os.sep

    def guard(real: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(path: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(path, str | os.PathLike):
                where = os.path.abspath(path)
                if where == refused or where.startswith(inside):
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
            return real(path, *args, **kwargs)

        return guarded

    for name in ("stat", "scandir", "listdir"):
        monkeypatch.setattr(os, name, guard(getattr(os, name)))
    (project / "capidx.yaml").write_text(f"paths:\n  {key}: linked\n", encoding="utf-8")
    expected = (
        f"capidx.yaml:2:{column}: $.paths.{key}: {what} 'linked' cannot be read: permission denied (the user running "
        "capidx needs read and search permission on the folder, the folders above it and, for a link, the folders it "
        "leads through)"
    )

    _refused_by_validate_and_build(project, expected)


FOLDER_PERMISSION = (
    "the user running capidx needs read and search permission on the folder, the folders above it and, for a link, "
    "the folders it leads through"
)
FILE_PERMISSION = (
    "the user running capidx needs read permission on the file, and search permission on the folders above it and, "
    "for a link, the folders it leads through"
)


@pytest.mark.parametrize(
    ("key", "column", "what", "permission"),
    [
        ("agents", 11, "catalog directory", FOLDER_PERMISSION),
        ("aliases", 12, "alias table", FILE_PERMISSION),
        ("schema", 11, "schema file", FILE_PERMISSION),
        ("templates", 14, "templates folder", FOLDER_PERMISSION),
    ],
)
def test_a_configured_path_in_a_folder_this_user_may_not_search_is_not_said_to_be_missing(
    project: Path, monkeypatch: pytest.MonkeyPatch, key: str, column: int, what: str, permission: str
) -> None:
    """A path whose folder cannot be searched cannot be looked at: os.path.lexists answered False, and the setting
    was said not to exist, with a correction to make. It is said to be unreadable, with the permission needed.
    Simulated (as if `hidden` had mode 000): root may search any folder."""
    hidden = project / "hidden"
    (hidden / "catalog").mkdir(parents=True)
    (hidden / "templates").mkdir()
    (hidden / "aliases.json").write_text("{}", encoding="utf-8")
    (hidden / "caps.json").write_text("{}", encoding="utf-8")
    value = {"agents": "hidden/catalog", "templates": "hidden/templates"}.get(key, f"hidden/{key}.json")
    value = "hidden/caps.json" if key == "schema" else value
    (project / "capidx.yaml").write_text(f"paths:\n  {key}: {value}\n", encoding="utf-8")
    deny_search(monkeypatch, hidden)
    expected = (
        f"capidx.yaml:2:{column}: $.paths.{key}: {what} '{value}' cannot be read: permission denied ({permission})"
    )

    _refused_by_validate_and_build(project, expected)


def test_a_configured_alias_table_linked_out_of_its_folder_is_refused_whatever_its_target(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`paths.aliases` naming a link that leads out of the table's folder is refused as such: capidx never reads it,
    whatever the permissions. Into a folder this user may not search, it was said to be unreadable at its key, with a
    permission to give that would only have led to the refusal. Simulated (as if `hidden` had mode 000)."""
    hidden = project / "hidden"
    hidden.mkdir()
    (hidden / "aliases.json").write_text("{}", encoding="utf-8")
    real = os.path.realpath(hidden / "aliases.json")
    (project / "agents" / "linked.json").symlink_to(hidden / "aliases.json")
    (project / "capidx.yaml").write_text("paths:\n  aliases: agents/linked.json\n", encoding="utf-8")
    deny_search(monkeypatch, hidden, project / "agents" / "linked.json")

    validated = run_cli(["validate"], project)
    built = run_cli(["build", "-q"], project)
    for result, output in [(validated, validated.output), (built, built.stderr)]:
        assert result.exit_code == 2, output
        assert f"agents/linked.json: refused: a symbolic link to {real}, outside the catalog" in output, output
        assert "cannot be read" not in output
    assert not (project / "build").exists()


@pytest.mark.parametrize("key", ["agents", "aliases", "schema", "templates", "out"])
def test_an_empty_configured_path_is_an_error_at_its_key(project: Path, key: str) -> None:
    """`paths.agents: ""` read the whole project as the catalog, `paths.out: ""` named the project as the build and
    `paths.templates: ""` meant the bundled templates: an empty path names nothing (null says so in a file)."""
    (project / "capidx.yaml").write_text(f'paths:\n  {key}: ""\n', encoding="utf-8")

    before = sorted(project.rglob("*"))
    validated = run_cli(["validate"], project)
    built = run_cli(["build", "-q"], project)

    assert validated.exit_code == 2, validated.output
    assert f"$.paths.{key}: must not be empty" in validated.output
    assert built.exit_code == 2, built.output
    assert f"$.paths.{key}: must not be empty" in built.stderr
    assert sorted(project.rglob("*")) == before


def _refused_by_validate_and_build(project: Path, expected: str) -> None:
    """validate says `expected` (a capidx.yaml problem, exit 2); build stops with it, building nothing."""
    validated = run_cli(["validate"], project)
    built = run_cli(["build", "-q"], project)
    assert validated.exit_code == 2, validated.output
    assert expected in validated.output.splitlines()
    assert built.exit_code == 2, built.output
    assert any(line.endswith(expected[len("capidx.yaml") :]) for line in built.stderr.splitlines()), built.stderr
    assert not (project / "build").exists()


LIST_PERMISSION = "the user running capidx needs read permission on the folder, to list what it holds"


@pytest.mark.parametrize(
    ("folder", "what", "column"), [("agents", "catalog directory", 11), ("templates", "templates folder", 14)]
)
def test_a_catalog_or_templates_folder_this_user_may_not_list_is_not_passed_over(
    project: Path, monkeypatch: pytest.MonkeyPatch, folder: str, what: str, column: int
) -> None:
    """A catalog or templates folder this user may search but not list (mode 111): the catalog was walked, nothing
    found in it, and every alias of its table said to name no capability; the default templates/ was passed over for
    the bundled templates in silence (validate and build exit 0). Said not to be listable, with the permission needed
    (exit 2): the default folder, and the one capidx.yaml names, at its key. Simulated: root lists any folder."""
    (project / "templates" / "summary.md.j2").write_text("# {{ title }}\n", encoding="utf-8")
    deny_listing(monkeypatch, project / folder)
    said = f"{what} cannot be listed: permission denied ({LIST_PERMISSION})"

    validated = run_cli(["validate"], project)
    assert validated.exit_code == 2, validated.output
    assert f"{folder}: {said}" in validated.output.splitlines()
    assert "alias target" not in validated.output
    built = run_cli(["build", "-q"], project)
    assert built.exit_code == 2, built.output
    assert f"{folder}: {said}" in built.stderr.splitlines()
    assert not (project / "build").exists()
    (project / "capidx.yaml").write_text(f"paths:\n  {folder}: {folder}\n", encoding="utf-8")
    unlisted = said.replace(what, f"{what} '{folder}'")
    _refused_by_validate_and_build(project, f"capidx.yaml:2:{column}: $.paths.{folder}: {unlisted}")


@pytest.mark.parametrize(
    ("deny", "said"),
    [
        (deny_listing, f"cannot be listed: permission denied ({LIST_PERMISSION})"),
        (deny_search, f"cannot be read: permission denied ({FOLDER_PERMISSION})"),
    ],
    ids=["mode-111", "mode-000"],
)
@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["build", "-q", "--templates", "tpl"], "templates folder "),
        (["build", "-q", "--agents", "tpl"], "catalog directory "),
        (["validate", "--agents", "tpl"], "catalog directory "),
        (["validate", "tpl"], ""),
        (["verify", "tpl"], ""),
    ],
    ids=["build-templates", "build-agents", "validate-agents", "validate-paths", "verify-paths"],
)
def test_a_folder_given_on_the_command_line_that_this_user_may_not_list_is_said_so_in_capidx_s_words(
    project: Path, monkeypatch: pytest.MonkeyPatch, deny: Callable[..., None], said: str, args: list[str], what: str
) -> None:
    """A folder given by --templates, --agents or as PATHS that this user may search but not list (mode 111), or not
    search (000), was refused by click's own check before capidx looked: "Directory 'tpl' is not readable.", after
    the usage line, naming no permission. It is said as a folder capidx.yaml names is, with the permission needed
    (exit 2). Simulated: root lists and searches any folder."""
    (project / "tpl").mkdir()
    deny(monkeypatch, project / "tpl")

    result = run_cli(args, project)

    assert result.exit_code == 2, result.output
    assert "not readable" not in result.output
    assert any(line.endswith(f"tpl: {what}{said}") for line in result.output.splitlines()), result.output
    assert not (project / "build").exists()


@pytest.mark.parametrize(
    ("deny", "said"),
    [
        (deny_listing, f"cannot be listed: permission denied ({LIST_PERMISSION})"),
        (deny_search, f"cannot be read: permission denied ({FOLDER_PERMISSION})"),
    ],
    ids=["mode-111", "mode-000"],
)
def test_an_agent_folder_this_user_may_not_list_does_not_drop_out_of_the_build(
    project: Path, monkeypatch: pytest.MonkeyPatch, deny: Callable[..., None], said: str
) -> None:
    """A folder inside the catalog that this user may not list (an agent's, of mode 111 or 000) was passed over by
    the walk: the agent dropped out of validate and build, which exited 0. Said to be unreadable, with the
    permission needed (exit 2), whether the catalog is the configured one or named on the command line; the other
    agents are checked, and no alias is said to name no capability, as the agent's capabilities are unknown.
    Simulated: root lists any folder."""
    deny(monkeypatch, project / "agents" / "vscode-copilot")  # the one agent with the capability an alias names
    expected = f"agents/vscode-copilot: {said}"

    for args in (["validate"], ["validate", "agents"], ["validate", "agents/copilot-cli/capabilities/current.json"]):
        result = run_cli(args, project)
        assert result.exit_code == 2, result.output
        assert expected in result.output.splitlines(), result.output
        assert "alias target" not in result.output  # its capabilities are unknown, not missing
    built = run_cli(["build", "-q"], project)
    assert built.exit_code == 2, built.output
    assert expected in built.stderr.splitlines()
    assert not (project / "build").exists()


@pytest.mark.parametrize(
    ("deny", "said"),
    [
        (deny_listing, f"cannot be listed: permission denied ({LIST_PERMISSION})"),
        (deny_search, f"cannot be read: permission denied ({FOLDER_PERMISSION})"),
    ],
    ids=["mode-111", "mode-000"],
)
def test_a_folder_of_the_templates_folder_this_user_may_not_list_stops_validate_and_the_build(
    project: Path, monkeypatch: pytest.MonkeyPatch, deny: Callable[..., None], said: str
) -> None:
    """The build lists its templates folder for the templates it holds (overrides, files a template includes under
    a computed name); a folder in it this user may search but not list (mode 111) was passed over. The build stops
    with the permission needed (exit 2), nothing written. validate, which says what the templates folder itself
    lacks, said nothing of it (exit 0): it says it as the build does, and the build names the folder as validate does
    (it named it by its whole path). Simulated: root lists any folder."""
    (project / "templates" / "summary.md.j2").write_text("# {{ title }}\n", encoding="utf-8")
    (project / "templates" / "site").mkdir()
    deny(monkeypatch, project / "templates" / "site")
    expected = f"{Path('templates', 'site')}: {said}"

    validated = run_cli(["validate"], project)
    built = run_cli(["build", "-q"], project)

    assert validated.exit_code == 2, validated.output
    assert expected in validated.output.splitlines()
    assert built.exit_code == 2, built.output
    assert f"error: {expected}" in built.stderr.splitlines()  # named as validate names it, not by its whole path
    assert not (project / "build").exists()


def test_a_templates_folder_too_large_to_be_one_stops_validate_as_it_stops_the_build(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build refuses a templates folder of more than 10,000 files (`paths.templates: /`) with an error (exit 1);
    validate, which says beforehand what stops the build in the templates folder, stopped its walk there in silence
    (exit 0). It says the build's error, in the build's words, both naming the folder relative to the working folder.
    The limit is lowered: 10,001 files take seconds to make on a slow disk."""
    monkeypatch.setattr(files, "MAX_TEMPLATE_FILES", 3)
    (project / "templates" / "summary.md.j2").write_text("# {{ title }}\n", encoding="utf-8")
    (project / "templates" / "notes" / "more").mkdir(parents=True)
    for index in range(3):
        (project / "templates" / "notes" / "more" / f"part{index}.md").write_text("x", encoding="utf-8")

    validated = run_cli(["validate", "-q"], project)
    built = run_cli(["build", "-q"], project)

    said = validated.output.splitlines()
    assert validated.exit_code == 1, validated.output
    assert said[0].startswith("templates: more than 3 files: not a templates folder ("), validated.output
    assert validated.output.count("more than 3 files") == 1, validated.output
    assert built.exit_code == 1, built.output
    assert built.stderr.splitlines()[0] == f"error: {said[0]}", built.stderr  # one wording, one name
    assert not (project / "build").exists()


def test_a_templates_folder_at_the_limit_is_walked_whole(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the limit, not past it, the folder is a templates folder: validate and the build pass."""
    monkeypatch.setattr(files, "MAX_TEMPLATE_FILES", 3)
    (project / "templates" / "summary.md.j2").write_text("# Ours {{ title }}\n", encoding="utf-8")
    (project / "templates" / "notes").mkdir()
    for index in range(2):
        (project / "templates" / "notes" / f"part{index}.md").write_text("x", encoding="utf-8")

    assert run_cli(["validate", "-q"], project).exit_code == 0
    built = run_cli(["build", "-q"], project)
    assert built.exit_code == 0, built.output
    assert (project / "build" / "summary.md").read_text("utf-8").startswith("# Ours ")


def test_the_build_walks_the_templates_folder_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build listed its templates folder for the template names, again for its warnings of unused files, again
    for every file a computed include may name, and validation walked it once more (and once more on the way to
    "up to date") for the problems the first listing had already raised at. One walk serves them all; validate,
    which lists no templates, still walks it."""
    (project / "templates" / "summary.md.j2").write_text("# {{ title }}\n{% include 'parts/' ~ 'x.md' %}\n", "utf-8")
    (project / "templates" / "parts").mkdir()
    (project / "templates" / "parts" / "x.md").write_text("part\n", encoding="utf-8")
    walked: list[str] = []
    walk = files.walk

    def counted(top: str | Path, *args: Any, **kwargs: Any) -> Any:
        if Path(top) == project / "templates":
            walked.append(str(top))
        return walk(top, *args, **kwargs)

    monkeypatch.setattr(files, "walk", counted)
    for command, outcome in ((["build"], "build written"), (["build"], "inputs unchanged"), (["validate"], "valid")):
        walked.clear()
        result = run_cli(command, project)
        assert result.exit_code == 0, result.output
        assert outcome in result.output, result.output
        assert len(walked) == 1, (command, walked)
    assert (project / "build" / "summary.md").read_text("utf-8").endswith("part\n")


@pytest.mark.parametrize("command", ["validate", "build", "report", "verify"])
@pytest.mark.parametrize("given", ["bad.yaml", "{project}/bad.yaml"], ids=["relative", "absolute"])
def test_a_config_file_that_does_not_load_is_named_as_validate_names_it(
    project: Path, command: str, given: str
) -> None:
    """build, report and verify held the --config file by its whole path and printed its problems so
    (`/home/…/bad.yaml:2:1: invalid YAML …`), where validate, through its reporter, named it `bad.yaml`. Each names it
    relative to the working folder, whether given so or by its whole path (exit 2)."""
    (project / "bad.yaml").write_text("paths: [\n", encoding="utf-8")

    result = run_cli([command, "--config", given.format(project=project)], project)

    assert result.exit_code == 2, result.output
    said = [line.removeprefix("Error: ") for line in result.output.splitlines() if "invalid YAML" in line]
    assert len(said) == 1 and said[0].startswith("bad.yaml:2:"), result.output
    assert str(project) not in result.output


MISSPELLED_KEY = "capidx.yaml:2:11: $.budgets.sumary: 'sumary' is not a known key: did you mean 'summary'?"


@pytest.mark.parametrize("command", ["validate", "build", "serve"])
@pytest.mark.parametrize("given", [[], ["--config", "{project}/capidx.yaml"]], ids=["found", "absolute"])
def test_a_misspelled_key_reads_the_same_in_validate_build_and_serve(
    project: Path, command: str, given: list[str]
) -> None:
    """One mistake, one wording: build named capidx.yaml by its whole path, and serve (which checks the file itself,
    not through the compiler) by its whole path and in words of its own (`unknown key 'sumary' (did you mean …)`)."""
    (project / "capidx.yaml").write_text("# budgets\nbudgets: {sumary: 500}\n", encoding="utf-8")

    result = run_cli([command, *(part.format(project=project) for part in given)], project)

    assert result.exit_code == 2, result.output
    said = [line.removeprefix("Error: ") for line in result.output.splitlines() if "sumary" in line]
    assert said == [MISSPELLED_KEY], result.output
    assert str(project) not in result.output.replace(f"config: {project}", "")  # build's notice names the file in force


@pytest.mark.parametrize("command", ["validate", "serve"])
def test_a_budget_named_by_the_catalog_s_plural_suggests_its_kind(project: Path, command: str) -> None:
    """Budgets are per artifact kind, in the singular (`capability`), where the catalog's words are plural: a blind
    test wrote `capabilities: 300` and got the list of known keys, no suggestion (three edits apart)."""
    (project / "capidx.yaml").write_text("budgets:\n  capabilities: 300\n  categories: 5\n", encoding="utf-8")

    result = run_cli([command], project)

    assert result.exit_code == 2, result.output
    assert "'capabilities' is not a known key: did you mean 'capability'?" in result.output
    assert "'categories' is not a known key: did you mean 'category'?" in result.output


BROKEN_FILES = {
    "bracket": (b"budgets:\n  summary: [5\n", "is the bracket opened at line 2, column 12 closed"),
    "bracket-value-missing": (b"budgets: {summary: \n", "is the bracket opened at line 1, column 10 closed"),
    "quote": (b"budgets:\n  summary: 'x\nencodings: []\n", "is a closing quote missing?"),
    "tab": (b"budgets:\n\tsummary: 5\n", "YAML indents with spaces only"),
    "utf8": (b"budgets:\n  summary: \xff\n", "save the file as UTF-8"),
    "list": (b"- budgets\n", "capidx.yaml must be a mapping of settings"),
    "utf16": ("budgets: {}\n".encode("utf-16"), "the file is UTF-16 or UTF-32"),
}


@pytest.mark.parametrize("broken", sorted(BROKEN_FILES))
def test_a_capidx_yaml_that_does_not_parse_reads_the_same_in_validate_build_and_serve(
    project: Path, broken: str
) -> None:
    """serve read capidx.yaml with its own words for a file that is not a mapping of settings in YAML and UTF-8:
    `not valid YAML` without validate's hint (which bracket is open, a tab), an open quote placed at the end of the
    file rather than where it opens, `not valid UTF-8` without saying to save the file as UTF-8."""
    text, hint = BROKEN_FILES[broken]
    (project / "capidx.yaml").write_bytes(text)

    said = {}
    for command in ("validate", "build", "serve"):
        result = run_cli([command], project)
        assert result.exit_code == 2, result.output
        said[command] = [line.removeprefix("Error: ") for line in result.output.splitlines() if "capidx.yaml:" in line]

    assert len(said["validate"]) == 1 and hint in said["validate"][0], said
    assert said["build"] == said["validate"] and said["serve"] == said["validate"], said


def test_a_yaml_boolean_word_meant_as_text_reads_the_same_in_validate_build_and_serve(project: Path) -> None:
    """`title: off` said "write text in quotes" and not why: YAML 1.1 reads off, on, yes and no as booleans. The hint
    quotes the word as written, in serve (which checks the file itself) as in validate and build."""
    (project / "capidx.yaml").write_text("budgets: {summary: 500}\ntitle: Off\n", encoding="utf-8")
    expected = [
        "capidx.yaml:2:8: $.title: expected string, received boolean "
        "('Off' is read as false in YAML: write \"Off\" in quotes)"
    ]

    for command in ("validate", "build", "serve"):
        result = run_cli([command], project)
        assert result.exit_code == 2, result.output
        said = [line.removeprefix("Error: ") for line in result.output.splitlines() if "capidx.yaml:" in line]
        assert said == expected, (command, result.output)


def test_a_yaml_boolean_word_given_for_a_listed_value_says_how_yaml_read_it(project: Path) -> None:
    """`serve: {instructions: off}` said "false is not a valid instructions": the user wrote off, not false. The hint
    says how YAML read the word, then the allowed values, in every command that checks the file."""
    (project / "capidx.yaml").write_text("budgets: {summary: 500}\nserve:\n  instructions: off\n", encoding="utf-8")

    for command in ("validate", "build", "serve"):
        result = run_cli([command], project)
        assert result.exit_code == 2, result.output
        said = [line for line in result.output.splitlines() if "capidx.yaml:3:17: $.serve.instructions" in line]
        assert len(said) == 1, (command, result.output)
        assert "('off' is read as false in YAML; allowed values: pointer, summary)" in said[0], (command, said)


def test_a_yaml_boolean_word_refused_by_an_enum_of_numbers_says_how_yaml_read_it() -> None:
    """An enum of a user's schema holding 0 or 1: `off` is refused (jsonschema tells false from 0), and the hint says
    how YAML read it there too; a Python `in` test took false for 0 and said only the allowed values."""
    from jsonschema import Draft202012Validator

    from capidx.schema.wording import describe

    error = next(Draft202012Validator({"enum": [0, 1]}).iter_errors(False))
    (problem,) = describe(error, lambda parts, value: "off")
    assert problem.hint == "'off' is read as false in YAML; allowed values: 0, 1"


def test_a_catalog_folder_that_is_not_there_is_not_called_a_validation_error(project: Path) -> None:
    """`paths.agents: nope` stops the build with exit 2, as validate: a configuration error, not invalid data (1)."""
    (project / "capidx.yaml").write_text("paths:\n  agents: nope\n", encoding="utf-8")

    result = run_cli(["build"], project)

    assert result.exit_code == 2, result.output
    assert "error: 1 configuration or input error\n" in result.stderr
    assert "validation error" not in result.stderr


def test_verify_names_the_documents_it_cannot_read_as_validate_does(project: Path) -> None:
    """verify stops at a document it cannot read, listing the problems: the configured catalog is held by its whole
    path, and they named `/home/…/agents/…`, where validate names `agents/…` (verify exits 2, nothing fetched)."""
    document = project / "agents" / "claude-code" / "capabilities" / "current.json"
    document.write_text("{\n", encoding="utf-8")

    verified = run_cli(["verify"], project)
    validated = run_cli(["validate", "-q"], project)

    assert verified.exit_code == 2 and validated.exit_code == 1, verified.output + validated.output
    named = str(Path("agents", "claude-code", "capabilities", "current.json"))
    assert f"Error: {validated.output.splitlines()[0]}" in verified.output.splitlines(), verified.output
    assert validated.output.startswith(f"{named}:2:"), validated.output
    assert str(project) not in verified.output


@pytest.mark.parametrize("given", ["--templates", "capidx.yaml"])
def test_a_templates_folder_this_user_may_list_but_not_search_is_named_not_a_folder_in_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """A templates folder of mode 644 holding a folder: the build lists its templates before validating, and the walk
    stopped at the folder in it ("tpl/site: cannot be read"), never naming the templates folder, whose permission is
    what is missing. It is passed over as a templates folder not listed is, and validation names it (exit 2).
    Simulated: root searches any folder."""
    (project / "tpl" / "site").mkdir(parents=True)
    (project / "tpl" / "summary.md.j2").write_text("# {{ title }}\n", encoding="utf-8")
    args = ["build", "-q", "--templates", "tpl"] if given == "--templates" else ["build", "-q"]
    if given == "capidx.yaml":
        (project / "capidx.yaml").write_text("paths:\n  templates: tpl\n", encoding="utf-8")
    deny_search(monkeypatch, project / "tpl", listable=True)

    built = run_cli(args, project)

    assert built.exit_code == 2, built.output
    assert "site" not in built.stderr, built.stderr
    folder = "tpl: templates folder" if given == "--templates" else "$.paths.templates: templates folder 'tpl'"
    assert f"{folder} cannot be read: permission denied ({FOLDER_PERMISSION})" in built.stderr, built.stderr
    assert not (project / "build").exists()


@pytest.mark.parametrize("deny", [deny_listing, deny_search], ids=["mode-111", "mode-000"])
@pytest.mark.parametrize("folder", [".git", "site/.git", ".svn"])
def test_version_control_s_folder_in_the_templates_folder_is_not_walked(
    project: Path, monkeypatch: pytest.MonkeyPatch, deny: Callable[..., None], folder: str
) -> None:
    """A `.git` inside the templates folder (one checked out by CI as another user, or `paths.templates: .`), which
    this user may not list (mode 111) or search (000), stopped the build (exit 2), though no file of version
    control's is ever an input of the build. It is not walked: the build uses the templates beside it. Simulated:
    root lists and searches any folder."""
    (project / "templates" / "summary.md.j2").write_text("# Ours {{ title }}\n", encoding="utf-8")
    (project / "templates" / folder / "objects").mkdir(parents=True)
    deny(monkeypatch, project / "templates" / folder)

    validated = run_cli(["validate", "-q"], project)
    built = run_cli(["build", "-q"], project)

    assert validated.exit_code == 0, validated.output
    assert built.exit_code == 0, built.output
    assert (project / "build" / "summary.md").read_text("utf-8").startswith("# Ours ")


@pytest.mark.parametrize("named", ["agents/copilot-cli/capabilities/current.json", "agents/aliases.json"])
def test_a_named_file_of_a_catalog_this_user_may_not_list_does_not_find_its_catalog_empty(
    project: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """A document or alias table named on the command line (as the pre-commit hook names the files changed) is read
    with its catalog's other documents for context; a catalog folder this user may search but not list (mode 111)
    was walked to nothing, so every alias of its table was said to name no capability (exit 1). The catalog is said
    not to be listable, with the permission needed (exit 2), as when validate walks it unnamed. Simulated: root lists
    any folder."""
    deny_listing(monkeypatch, project / "agents")

    result = run_cli(["validate", named], project)

    assert result.exit_code == 2, result.output
    assert f"agents: cannot be listed: permission denied ({LIST_PERMISSION})" in result.output.splitlines()
    assert "alias target" not in result.output  # the other agents' capabilities are unknown, not missing


@pytest.mark.parametrize(
    "names",
    [
        ["agents", "{project}/agents"],
        ["agents/aliases.json", "{project}/agents/aliases.json"],
        ["agents", "linked"],
        ["agents/aliases.json", "linked/copilot-cli/capabilities/current.json"],
    ],
    ids=["relative-and-absolute", "two-tables", "a-link", "a-file-through-a-link"],
)
def test_a_catalog_folder_this_user_may_not_list_named_by_two_names_is_said_so_once(
    project: Path, monkeypatch: pytest.MonkeyPatch, names: list[str]
) -> None:
    """One catalog folder of mode 111 (searchable, not listable) reached by two names on the command line (as written
    and as an absolute path, or through a link to it; itself, or the catalog of a file named in it) was said not to be
    listable once per name: the same line twice, `agents` and `agents`, or `agents` and `linked`. It is said once, by
    the first name (exit 2). Simulated: root lists any folder."""
    (project / "linked").symlink_to("agents")
    deny_listing(monkeypatch, project / "agents")

    result = run_cli(["validate", *(name.format(project=project) for name in names)], project)

    assert result.exit_code == 2, result.output
    refused = [line for line in result.output.splitlines() if "cannot be listed" in line]
    assert refused == [f"agents: cannot be listed: permission denied ({LIST_PERMISSION})"], result.output


@pytest.mark.parametrize("folder", ["agents/vscode-copilot", "agents/vscode-copilot/capabilities"])
def test_an_agent_folder_this_user_may_list_but_not_search_is_said_to_be_unreadable(
    project: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    """A folder of the catalog this user may list but not search (mode 644): its entries are named, but none can be
    looked at. An agent's folder of that mode ended validate in a PermissionError traceback (asked whether its
    `capabilities` folder is a link); its `capabilities` folder of that mode hid the document, which was then said
    to be misplaced, "where capidx does not read one" (exit 1). Each is said to be unreadable (exit 2), and no alias
    is said to name no capability. Simulated: root searches any folder."""
    deny_search(monkeypatch, project / folder, listable=True)

    result = run_cli(["validate"], project)

    assert result.exit_code == 2, result.output
    assert "permission denied" in result.output
    assert "where capidx does not read one" not in result.output
    assert "alias target" not in result.output


def test_a_catalog_named_through_a_link_to_a_folder_this_user_may_not_list_is_said_so(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`paths.agents` a symbolic link to a catalog folder this user may search but not list (mode 111): the folder
    is refused its listing by whatever name, so it is said not to be listable at its key, as when named directly.
    Simulated: root lists any folder."""
    (project / "linked").symlink_to("agents")
    (project / "capidx.yaml").write_text("paths:\n  agents: linked\n", encoding="utf-8")
    deny_listing(monkeypatch, project / "agents")
    said = f"catalog directory 'linked' cannot be listed: permission denied ({LIST_PERMISSION})"

    _refused_by_validate_and_build(project, f"capidx.yaml:2:11: $.paths.agents: {said}")


def test_an_agent_folder_this_user_may_list_but_not_search_holding_a_linked_capabilities_folder_is_said_so(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's folder of mode 644 whose `capabilities` is a symbolic link to a folder: the listing does not say
    whether a link is a folder, and asking follows it from inside the folder, which is refused. The link was taken
    for a file, so neither walked nor said to be a linked folder: the agent dropped out of validate and build, which
    exited 0 (readable, the link is said not to be read, exit 1). The agent's folder is said to be unreadable, with
    the permission needed (exit 2). Simulated: root searches any folder."""
    agent = project / "agents" / "vscode-copilot"
    (project / "elsewhere").mkdir()
    (agent / "capabilities").rename(project / "elsewhere" / "capabilities")
    (agent / "capabilities").symlink_to(project / "elsewhere" / "capabilities")
    assert "a symbolic link to a folder with a capability document" in run_cli(["validate"], project).output
    deny_search(monkeypatch, agent, listable=True)

    for command in ("validate", "build"):
        result = run_cli([command], project)

        assert result.exit_code == 2, result.output
        assert f"{Path('agents', 'vscode-copilot')}: cannot be read: permission denied" in result.output
        assert "alias target" not in result.output


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
@pytest.mark.parametrize("setting", ["agents", "aliases", "schema", "templates"])
@pytest.mark.parametrize("way", ["absolute", "dot-dot", "a-link", "home"])
def test_a_configured_path_leading_outside_the_project_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, way: str
) -> None:
    """A fork's capidx.yaml named any file of the CI machine (`paths.schema: /etc/passwd`, `~/.ssh/…`): it was read,
    and its keys quoted in errors the job's public log shows (`$.token_abc: 'token_abc' is not a known key`), or a
    name near a missing one suggested from that folder. A path capidx.yaml gives to read from must lead, after
    symbolic links, inside the folder holding capidx.yaml: else it is a configuration error at its key (exit 2),
    nothing read; a flag naming the same path is the user's own choice, and is read (its error quotes the file)."""
    project = tmp_path / "project"
    write_catalog(project)
    secret = tmp_path / "home" / "secret"
    secret.mkdir(parents=True)
    (secret / "token.json").write_text('{"token_abc": {"x": 1}}', encoding="utf-8")
    (secret / "current.json").write_text('{"token_abc": 1}', encoding="utf-8")
    (secret / "x.j2").write_text("{{ token_abc }", encoding="utf-8")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    target = secret if setting in ("agents", "templates") else secret / "token.json"
    (project / "link").symlink_to(target)
    value = {
        "absolute": str(target),
        "dot-dot": os.path.relpath(target, project),
        "a-link": "link",
        "home": "~/" + target.relative_to(tmp_path / "home").as_posix(),
    }[way]
    (project / "capidx.yaml").write_text(f"paths:\n  {setting}: '{value}'\n", encoding="utf-8")
    for command in ("validate", "build"):
        result = run_cli([command], cwd=project)
        assert result.exit_code == 2, (command, result.output)
        assert f"capidx.yaml:2:{len(setting) + 5}: $.paths.{setting}: " in result.output, result.output
        assert "is outside the project folder" in result.output, result.output
        assert "token_abc" not in result.output and "token.json" not in result.output.replace(value, ""), result.output
    assert not (project / "build").exists()
    (project / "capidx.yaml").write_text("title: Mine\n", encoding="utf-8")
    flagged = run_cli(["validate", f"--{setting}", str(target)], cwd=project)
    assert "is outside the project folder" not in flagged.output, flagged.output


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_a_found_capidx_yaml_linked_out_of_the_project_is_refused_unread(tmp_path: Path) -> None:
    """A pull request may commit capidx.yaml as a symbolic link to any file of the CI machine (`~/.docker/config.json`):
    every command read it, and quoted its keys in errors (`'auths' is not a known key`). The capidx.yaml a command
    finds must lead, after links, inside its own folder (exit 2, nothing of it said, in validate, build, report and
    serve); one linked inside the project is read, and so is any file named by --config."""
    project = tmp_path / "project"
    write_catalog(project)
    secret = tmp_path / "secret.json"
    secret.write_text('{"auths_token_abc": {"x": 1}}', encoding="utf-8")
    (project / "capidx.yaml").symlink_to(secret)
    for command in (["validate"], ["build"], ["report"], ["serve", "--print-config"]):
        result = run_cli(command, cwd=project)
        assert result.exit_code == 2, (command, result.output)
        refused = f"capidx.yaml: refused: a symbolic link to {secret}, outside the project folder {project} "
        assert refused + "(make capidx.yaml a file of the project, or name the file with --config)" in result.output
        assert "auths_token_abc" not in result.output.replace(str(secret), ""), (command, result.output)
    assert not (project / "build").exists()
    named = run_cli(["validate", "--config", "capidx.yaml"], cwd=project)
    assert "'auths_token_abc' is not a known key" in named.output, named.output
    (project / "settings").mkdir()
    (project / "settings" / "capidx.yaml").write_text("title: Linked\n", encoding="utf-8")
    (project / "capidx.yaml").unlink()
    (project / "capidx.yaml").symlink_to(Path("settings", "capidx.yaml"))
    assert run_cli(["validate", "-q"], cwd=project).exit_code == 0


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
@pytest.mark.parametrize("setting", ["agents", "aliases", "schema", "templates"])
def test_a_flag_replaces_a_configured_path_leading_outside_the_project(tmp_path: Path, setting: str) -> None:
    """The refusal of `paths.<setting>` leading outside the project says to name such a path with the flag; a flag
    naming one inside did not help, the key was refused all the same. The flag replaces the key, which is then
    neither read nor judged (a monorepo's capidx.yaml naming `../shared`, overridden in one job)."""
    project = tmp_path / "project"
    agents = write_catalog(project)
    outside = tmp_path / "shared"
    outside.mkdir()
    (outside / "aliases.json").write_text('{"aliases": {}}', encoding="utf-8")
    (project / "capidx.yaml").write_text(f"paths:\n  {setting}: '{outside / 'aliases.json'}'\n", encoding="utf-8")
    inside = {"agents": agents, "aliases": agents / "aliases.json", "schema": None, "templates": None}[setting]
    if setting == "schema":
        inside = project / "schema.json"
        inside.write_text('{"type": "object"}', encoding="utf-8")
    if setting == "templates":
        inside = project / "mine"
        inside.mkdir()
        (inside / "agent.md.j2").write_text("# {{ agent.name }}\n", encoding="utf-8")
    commands = [["build", "-q"]] if setting == "templates" else [["validate", "-q"], ["build", "-q"]]
    for command in commands:
        result = run_cli([*command, f"--{setting}", str(inside)], cwd=project)
        assert "is outside the project folder" not in result.output, (command, result.output)
        assert result.exit_code == 0, (command, result.output)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
@pytest.mark.parametrize("config", ["", "title: Mine\n"])
@pytest.mark.parametrize("folder", ["agents", "templates"])
def test_the_projects_own_folder_linked_out_of_it_is_refused_unread(tmp_path: Path, config: str, folder: str) -> None:
    """`paths.agents: agents` was refused when `agents` is a link out of the project, but without the key (or
    without capidx.yaml) the same link was read, and the files it led to quoted (`'token_abc' is not a known key`):
    a pull request commits the link as readily as the key. The default `agents` and `templates` are refused the
    same way (exit 2, nothing read); the flag naming the same folder reads it."""
    project = tmp_path / "project"
    write_catalog(tmp_path / "elsewhere")
    secret = tmp_path / "elsewhere" / "agents"
    (secret / "aliases.json").write_text('{"token_abc": {}}', encoding="utf-8")
    (secret / "agent.md.j2").write_text("{{ token_abc }", encoding="utf-8")
    if folder == "templates":
        write_catalog(project)
    project.mkdir(exist_ok=True)
    (project / folder).symlink_to(secret)
    if config:
        (project / "capidx.yaml").write_text(config, encoding="utf-8")
    commands = [["validate"], ["build"]] if folder == "agents" else [["build"]]
    for command in commands:
        result = run_cli(command, cwd=project)
        assert result.exit_code == 2, (command, result.output)
        assert f"{folder}: refused: a symbolic link to {secret}, outside the project folder" in result.output
        assert "token_abc" not in result.output, (command, result.output)
    assert not (project / "build").exists()
    flagged = run_cli(["validate" if folder == "agents" else "build", f"--{folder}", folder], cwd=project)
    assert "refused" not in flagged.output
    read = "'token_abc' is not a known key" if folder == "agents" else "agent.md.j2:1: template syntax error"
    assert read in flagged.output, flagged.output
