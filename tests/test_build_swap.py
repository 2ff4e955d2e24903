"""How a build takes the place of the previous one, and what a build killed in the middle of it leaves.

Where the OS can exchange two names in one step (Linux renameat2 with RENAME_EXCHANGE), `--out` never stops
existing. Elsewhere the swap takes two renames, and a build killed between them (`kill -9`, a power cut) used to
leave no `--out`, only the previous build set aside as `.capidx-old-*`, which the next build removed as a
leftover before it even validated: a failing build then left nothing at all. Now the next build puts the
previous one back first. The crash is simulated by making exactly the folders it leaves, as the build names
and marks them.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from catalog_factory import built_project, documents, run_cli, tree, write_catalog

from capidx.compiler.emit import pipeline, write
from capidx.compiler.emit.madehere import remember
from capidx.compiler.emit.write import MARKER, MARKER_TEXT, OLD_PREFIX, TEMP_PREFIX

CHANGED = "Connects tool servers; changed so that the next build differs."
PUT_BACK = "was missing: a build was stopped while replacing it; put the previous build back from"
NOT_WRITTEN_BUT_BACK = "build not written; the previous build was put back at"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project (capidx.yaml, catalog) with a real build in build/; tests copy it."""
    return built_project(tmp_path_factory.mktemp("built"))


@pytest.fixture
def project(built: Path, tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(built, target, symlinks=True)
    remember(target / "build")  # a copy is no build capidx wrote there: taken as the one it wrote
    return target


def _change_catalog(project: Path, *, valid: bool = True) -> None:
    docs = documents()
    capability = docs["claude-code"]["capabilities"][0]
    capability["description"] = CHANGED
    if not valid:
        capability["available"] = "yes"
    write_catalog(project, docs)


def _leftovers(project: Path) -> list[str]:
    return sorted(path.name for path in project.iterdir() if path.name.startswith(".capidx-"))


def _killed_between_the_renames(project: Path, marker: bytes | None) -> Path:
    """What a build of a changed catalog killed between its two renames leaves: its finished new build under
    its temporary name (unmarked: the marker goes just before the swap), the previous build under the name the
    swap gives it, with the marker written right after that rename (`marker`: all of it, a part, or none when
    killed before). No build/. Returns the folder holding the previous build."""
    _change_catalog(project)
    assert run_cli(["build", "--out", "next", "-q"], cwd=project).exit_code == 0
    (project / "next").rename(project / f"{TEMP_PREFIX}0123456789ab")
    old = write.old_name(project / "build")
    (project / "build").rename(old)
    if marker is not None:
        (old / MARKER).write_bytes(marker)
    return old


MARKERS = {"marked": MARKER_TEXT, "part-marked": MARKER_TEXT[:9], "unmarked": None}


@pytest.mark.parametrize("marker", MARKERS.values(), ids=MARKERS.keys())
def test_a_failing_build_after_a_kill_between_the_renames_puts_the_previous_build_back(
    project: Path, marker: bytes | None
) -> None:
    before = tree(project / "build")
    old = _killed_between_the_renames(project, marker)
    _change_catalog(project, valid=False)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 1, result.output
    assert f"{PUT_BACK} {old.name}" in result.stderr  # said even with -q
    assert result.stderr.count(PUT_BACK) == 1
    assert "validation error" in result.stderr
    assert f"{NOT_WRITTEN_BUT_BACK} {project / 'build'}" in result.stderr  # not "unchanged": it was missing
    assert "unchanged" not in result.stderr
    assert tree(project / "build") == before  # byte for byte, without the marker
    assert _leftovers(project) == []  # the unpublished new build is removed, as any leftover


def test_a_build_refused_for_its_settings_after_the_put_back_says_the_previous_build_is_back(project: Path) -> None:
    """An unknown encoding is refused once the location of --out is accepted, so the previous build is back
    first, and the last line says so."""
    before = tree(project / "build")
    old = _killed_between_the_renames(project, MARKER_TEXT)
    result = run_cli(["build", "-q", "--encoding", "no_such_base"], cwd=project)
    assert result.exit_code == 2, result.output
    assert f"{PUT_BACK} {old.name}" in result.stderr
    assert "unknown tiktoken encoding 'no_such_base'" in result.stderr
    assert result.stderr.rstrip().endswith(f"{NOT_WRITTEN_BUT_BACK} {project / 'build'}")
    assert tree(project / "build") == before


def test_ctrl_c_after_the_put_back_says_the_previous_build_is_back(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not "the new build was already in build" (the folder now holds another build than when the command
    started), nor "unchanged" (it was missing): what is there is the previous build, put back."""
    before = tree(project / "build")
    _killed_between_the_renames(project, MARKER_TEXT)

    def ctrl_c(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "_validate", ctrl_c)  # the catalog changed: the build validates it
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 130, result.output
    assert f"interrupted: {NOT_WRITTEN_BUT_BACK} {project / 'build'}" in result.stderr
    assert tree(project / "build") == before


REFUSED_PLACES = {"inside-the-catalog": "agents/new-folder", "inside-a-build": "build/inner"}


@pytest.mark.parametrize("out", REFUSED_PLACES.values(), ids=REFUSED_PLACES.keys())
def test_the_previous_build_of_an_out_that_is_refused_stays_where_it_is(project: Path, out: str) -> None:
    """The location of --out is checked before anything is put back: a set-aside build named for a folder the
    build refuses is not renamed into the catalog, nor into another build (which every later build of that one
    would then refuse to replace, for holding a folder its manifest does not list)."""
    old = write.old_name(project / out)
    shutil.copytree(project / "build", old)
    (old / MARKER).write_bytes(MARKER_TEXT)
    before = tree(project)
    result = run_cli(["build", "--out", out, "-q"], cwd=project)
    assert result.exit_code == 2, result.output
    assert "refusing to write there" in result.stderr
    assert PUT_BACK not in result.stderr
    assert f"build not written; nothing is at {project / out}" in result.stderr
    assert tree(project) == before


@pytest.mark.parametrize("marker", MARKERS.values(), ids=MARKERS.keys())
def test_a_succeeding_build_after_a_kill_between_the_renames_starts_from_the_previous_build(
    project: Path, marker: bytes | None
) -> None:
    before = tree(project / "build")
    catalog = tree(project / "agents")
    old = _killed_between_the_renames(project, marker)
    shutil.rmtree(project / "agents")
    write_catalog(project)  # the catalog of the previous build: that build is up to date once it is back
    assert tree(project / "agents") == catalog
    result = run_cli(["build"], cwd=project)
    assert result.exit_code == 0, result.output
    assert f"{PUT_BACK} {old.name}" in result.stderr
    assert "up to date" in result.stdout
    assert tree(project / "build") == before
    assert _leftovers(project) == []

    _change_catalog(project)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 0, result.output
    assert PUT_BACK not in result.stderr
    assert CHANGED in (project / "build" / "full.md").read_text("utf-8")
    assert _leftovers(project) == []


def test_a_folder_missing_for_another_reason_is_simply_built(project: Path) -> None:
    shutil.rmtree(project / "build")
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert (project / "build" / "manifest.json").is_file()


def test_the_previous_build_of_another_folder_waits_for_that_folder_s_build(project: Path) -> None:
    """Two outputs in one folder: a build of one neither takes nor removes what the other's killed swap left."""
    site = project / "site"
    assert run_cli(["build", "--out", "site", "-q"], cwd=project).exit_code == 0
    before = tree(site)
    old = write.old_name(site)
    site.rename(old)
    (old / MARKER).write_bytes(MARKER_TEXT)
    kept = tree(old)

    _change_catalog(project)
    result = run_cli(["build", "-q"], cwd=project)  # into build/, beside the missing site/
    assert result.exit_code == 0, result.output
    assert PUT_BACK not in result.stderr
    assert tree(old) == kept

    _change_catalog(project, valid=False)
    result = run_cli(["build", "--out", "site", "-q"], cwd=project)
    assert result.exit_code == 1, result.output
    assert f"{PUT_BACK} {old.name}" in result.stderr
    assert tree(site) == before
    assert _leftovers(project) == []


def _foreign_file(folder: Path) -> None:
    (folder / "notes.md").write_text("mine\n", encoding="utf-8")


def _foreign_file_unmarked(folder: Path) -> None:
    (folder / MARKER).unlink()
    _foreign_file(folder)


def _removal_begun(folder: Path) -> None:
    (folder / "summary.md").unlink()


def _foreign_marker(folder: Path) -> None:
    (folder / MARKER).write_text("capidx: something else\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("spoil", "removed_later"),
    [(_foreign_file, True), (_foreign_file_unmarked, False), (_foreign_marker, False), (_removal_begun, True)],
    ids=["marked-with-a-foreign-file", "unmarked-with-a-foreign-file", "another-marker", "removal-begun"],
)
def test_a_set_aside_folder_that_is_not_a_whole_build_is_not_put_back(
    project: Path, spoil: Callable[[Path], None], removed_later: bool
) -> None:
    """Not provably ours, or no longer whole: nothing is put back; the build is made afresh. What is ours (our
    marker says so) is removed once build/ exists again, by the build after; what is not stays, byte for byte."""
    old = _killed_between_the_renames(project, MARKER_TEXT)
    spoil(old)
    kept = tree(old)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 0, result.output
    assert PUT_BACK not in result.stderr
    assert CHANGED in (project / "build" / "full.md").read_text("utf-8")
    assert tree(old) == kept  # build/ was missing while this build cleaned up: kept, in case

    assert run_cli(["build", "-q"], cwd=project).exit_code == 0
    assert old.exists() is not removed_later
    if not removed_later:
        assert tree(old) == kept


def test_a_link_named_as_a_set_aside_build_is_never_followed(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (project / "build").rename(elsewhere)
    (elsewhere / MARKER).write_bytes(MARKER_TEXT)
    kept = tree(elsewhere)
    link = write.old_name(project / "build")
    link.symlink_to(elsewhere, target_is_directory=True)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 0, result.output
    assert PUT_BACK not in result.stderr
    assert link.is_symlink() and tree(elsewhere) == kept


def test_a_set_aside_build_that_cannot_be_renamed_back_is_kept_and_named(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _killed_between_the_renames(project, MARKER_TEXT)
    real_rename = os.rename

    def refuse_putting_back(source: object, target: object, *args: object) -> None:
        if Path(os.fsdecode(source)).name.startswith(OLD_PREFIX):  # type: ignore[arg-type]
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        real_rename(source, target, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "rename", refuse_putting_back)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 2, result.output
    assert f"is missing, and its previous build in {old} cannot be put back (Permission denied)" in result.stderr
    assert "$.paths.out" not in result.stderr  # not a problem of the setting (capidx.yaml gives paths.out)
    assert "Traceback" not in result.output
    assert (old / "manifest.json").is_file() and not (project / "build").exists()


def test_old_names_say_whose_previous_build_they_hold(tmp_path: Path) -> None:
    for name in ("build", "site-0123456789ab", "x" * 255):
        old = write.old_name(tmp_path / name)
        assert old.parent == tmp_path and old.name.startswith(OLD_PREFIX)
        assert len(os.fsencode(old.name)) <= 255
        assert write.owner_of(old.name) == write.owner_tag(name)
        assert write.owner_of(old.name) != write.owner_tag(name + "x")
    for name in (f"{OLD_PREFIX}0123456789ab", f"{OLD_PREFIX}unmarked", f"{OLD_PREFIX}-0123456789ab", "build"):
        assert write.owner_of(name) is None


# The exchange, and the two renames where there is none.


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_exchange_swaps_two_folders_in_one_step(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "a.txt").write_text("a\n", encoding="utf-8")
    (second / "b.txt").write_text("b\n", encoding="utf-8")
    assert write.exchange(first, second)
    assert [path.name for path in first.iterdir()] == ["b.txt"]
    assert [path.name for path in second.iterdir()] == ["a.txt"]
    with pytest.raises(FileNotFoundError):
        write.exchange(first, tmp_path / "missing")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_on_linux_the_output_folder_holds_a_build_at_every_step_of_the_swap(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = project / "build" / "manifest.json"
    checked: list[str] = []

    def checking(call: Callable[..., None]) -> Callable[..., None]:
        def checked_call(*args: object, **kwargs: object) -> None:
            assert manifest.is_file(), f"build/ missing before {call.__name__}{args}"
            call(*args, **kwargs)
            assert manifest.is_file(), f"build/ missing after {call.__name__}{args}"
            checked.append(call.__name__)

        return checked_call

    for name in ("rename", "unlink", "rmdir"):
        monkeypatch.setattr(os, name, checking(getattr(os, name)))
    _change_catalog(project)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 0, result.output
    assert CHANGED in manifest.with_name("full.md").read_text("utf-8")
    assert "rmdir" in checked  # the previous build was removed, by name, while build/ held the new one
    assert _leftovers(project) == []


def _renameat2_failing_with(code: int) -> Callable[[], Callable[..., int]]:
    def renameat2(*args: object) -> int:
        ctypes.set_errno(code)
        return -1

    return lambda: renameat2


NOT_HERE = {"ENOSYS": errno.ENOSYS, "EINVAL": errno.EINVAL, "EOPNOTSUPP": errno.EOPNOTSUPP}


@pytest.mark.parametrize("code", NOT_HERE.values(), ids=NOT_HERE.keys())
def test_exchange_says_when_the_system_cannot_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.setattr(write, "_renameat2", _renameat2_failing_with(code))
    assert write.exchange(first, second) is False
    monkeypatch.setattr(write, "_renameat2", lambda: None)  # another OS, or a C library without it
    assert write.exchange(first, second) is False
    assert sorted(path.name for path in tmp_path.iterdir()) == ["first", "second"]


@pytest.mark.parametrize("code", NOT_HERE.values(), ids=NOT_HERE.keys())
def test_without_an_exchange_a_build_still_replaces_the_previous_one(
    project: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    renamed: list[str] = []
    real_rename = os.rename

    def rename(source: object, target: object, *args: object) -> None:
        renamed.append(Path(os.fsdecode(target)).name)  # type: ignore[arg-type]
        real_rename(source, target, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(write, "_renameat2", _renameat2_failing_with(code))
    monkeypatch.setattr(os, "rename", rename)
    _change_catalog(project)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 0, result.output
    assert CHANGED in (project / "build" / "full.md").read_text("utf-8")
    assert [write.owner_of(name) for name in renamed if name.startswith(OLD_PREFIX)] == ["build"]  # two renames
    assert _leftovers(project) == []


def test_without_an_exchange_a_failed_second_rename_puts_the_previous_build_back(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(project / "build")
    real_rename = os.rename

    def fail_moving_in(source: object, target: object, *args: object) -> None:
        if Path(os.fsdecode(source)).name.startswith(TEMP_PREFIX):  # type: ignore[arg-type]
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_rename(source, target, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(write, "_renameat2", lambda: None)
    monkeypatch.setattr(os, "rename", fail_moving_in)
    _change_catalog(project)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert tree(project / "build") == before
    assert _leftovers(project) == []
