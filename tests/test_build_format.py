"""The build directory's format version (`capidx.schema.builddir.FORMAT`): a build says which layout it has,
and every reader accepts the layouts it knows and refuses the others by name.

Version 2 packs tool answers (rows may have `offset`); version 1 had one file per answer. `capidx build` writes
the newest; the server, `capidx report` and the build's own --out check read both (the hand-made builds of the
other tests are version 1, unpacked)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from catalog_factory import run_cli, write_catalog
from server_support import rewrite_manifest

from capidx.schema import builddir
from capidx.server.snapshot import BuildError, load_snapshot


def test_the_schema_and_the_contract_name_the_same_versions() -> None:
    assert tuple(builddir.manifest_schema()["properties"]["format"]["enum"]) == builddir.READABLE_FORMATS
    assert max(builddir.READABLE_FORMATS) == builddir.FORMAT


def test_a_build_writes_the_newest_format_and_a_packed_row_has_an_offset(catalog_build: Path) -> None:
    manifest = json.loads((catalog_build / "manifest.json").read_text("utf-8"))
    assert manifest["format"] == builddir.FORMAT
    assert any("offset" in row for row in manifest["artifacts"])


def test_every_reader_accepts_a_version_1_build(hand_build: Path, tmp_path: Path) -> None:
    manifest = json.loads((hand_build / "manifest.json").read_text("utf-8"))
    assert manifest["format"] == 1 and not any("offset" in row for row in manifest["artifacts"])
    assert load_snapshot(hand_build).artifacts
    assert run_cli(["report", "--build", str(hand_build)], cwd=tmp_path).exit_code == 0


@pytest.mark.parametrize("unknown", [3, 0, True, "2"])
def test_a_format_no_reader_knows_is_refused_by_name(catalog_build: Path, tmp_path: Path, unknown: object) -> None:
    build = Path(shutil.copytree(catalog_build, tmp_path / "build"))
    rewrite_manifest(build, lambda manifest: manifest.update(format=unknown))
    said = "upgrade capidx to read it" if unknown == 3 else None  # a newer capidx's build: not to be rebuilt
    with pytest.raises(BuildError, match=said or "/format"):
        load_snapshot(build)
    report = run_cli(["report", "--build", str(build)], cwd=tmp_path)
    assert report.exit_code == 2 and (said or "$.format") in report.output
    # the build's --out check: a newer capidx's build is not replaced (upgrading is the way on, not deleting it);
    # any other unknown format is not provably a capidx build
    agents = write_catalog(tmp_path / "project")
    rebuilt = run_cli(["build", "--agents", str(agents), "--out", str(build), "-q"], cwd=tmp_path)
    refused = "upgrade capidx to rebuild it" if unknown == 3 else "not a capidx build"
    assert rebuilt.exit_code == 2 and refused in rebuilt.output
    assert ("delete" in rebuilt.output) == (unknown != 3)


def test_nothing_is_written_inside_a_newer_capidx_s_build(catalog_build: Path, tmp_path: Path) -> None:
    """A build a newer capidx wrote is still a build: a report or another build put inside it would make its
    next build refuse to replace it."""
    newer = Path(shutil.copytree(catalog_build, tmp_path / "newer"))
    rewrite_manifest(newer, lambda manifest: manifest.update(format=3))
    (newer / "sub").mkdir()
    report = run_cli(["report", "--build", str(catalog_build), "-o", str(newer / "sub" / "r.md")], cwd=tmp_path)
    assert report.exit_code == 2 and "inside the capidx build directory" in report.output
    agents = write_catalog(tmp_path / "project")
    built = run_cli(["build", "--agents", str(agents), "--out", str(newer / "sub" / "b"), "-q"], cwd=tmp_path)
    assert built.exit_code == 2 and "inside the capidx build directory" in built.output
    assert sorted(p.name for p in (newer / "sub").iterdir()) == []


def test_a_newer_capidx_s_version_is_quoted_only_when_it_is_a_plain_version(
    catalog_build: Path, tmp_path: Path
) -> None:
    """The version comes from the manifest: escape sequences or line breaks in it never reach a terminal or a log."""
    build = Path(shutil.copytree(catalog_build, tmp_path / "build"))
    rewrite_manifest(build, lambda manifest: manifest.update(format=3, capidx="9.9\x1b[2J\r\nFAKE: ok"))
    with pytest.raises(BuildError) as caught:
        load_snapshot(build)
    assert "written by a newer capidx (build format 3" in str(caught.value) and "\x1b" not in str(caught.value)
