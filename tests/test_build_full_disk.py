"""`capidx build` on a disk that fills up: one line naming the folder, exit 2, the previous build intact and
no temporary folder of ours left behind, also when removing it fails half-way (issue #31, item 1).

Twice: on a real 2 MiB tmpfs (needs root and a working `mount`; skipped with the reason otherwise), and on
a disk simulated at the OS boundary (`os.write` answers ENOSPC once the test's budget of bytes is spent),
which runs everywhere with /proc.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import documents, run_cli, snapshot, write_catalog

from capidx.compiler.emit.outdir import LEFTOVER_PREFIXES
from capidx.compiler.emit.write import MARKER, TEMP_PREFIX

REPO = Path(__file__).resolve().parent.parent
SLACK = 16 * 1024  # free bytes left on the disk: far less than a build of the test catalog (~290 KB)


@contextlib.contextmanager
def _tmpfs(where: Path) -> Iterator[Path]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a 2 MiB tmpfs needs root")
    mount, umount = shutil.which("mount", path="/usr/bin:/bin"), shutil.which("umount", path="/usr/bin:/bin")
    if mount is None or umount is None:
        pytest.skip("no mount command in /usr/bin or /bin")
    where.mkdir()
    done = subprocess.run([mount, "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:  # lazily when a file is still open there (a failing build may leave one): never a mount behind
        if subprocess.run([umount, str(where)], capture_output=True).returncode != 0:
            subprocess.run([umount, "-l", str(where)], check=True)


@dataclass
class Disk:
    """A folder on a small disk: `fill` leaves `SLACK` bytes free, `release` gives the space back."""

    where: Path
    fill: Callable[[], None]
    release: Callable[[], None]


def _real_disk(where: Path) -> Disk:
    filler = where / "filler"

    def fill() -> None:
        info = os.statvfs(where)
        filler.write_bytes(b"\0" * max(info.f_bavail * info.f_frsize - SLACK, 0))

    return Disk(where, fill, filler.unlink)


class _FakeDisk:
    """`os.write` to files under `root` spends a budget of bytes; beyond it, ENOSPC (a short write first,
    as a real disk does). Unlimited until `fill`; removing files gives nothing back."""

    def __init__(self, root: Path, write: Callable[[int, Any], int]) -> None:
        self.root, self._write, self.free = str(root), write, None

    def fill(self) -> None:
        self.free = SLACK

    def release(self) -> None:
        self.free = None

    def write(self, fd: int, data: Any) -> int:
        if self.free is None or not self._ours(fd):
            return self._write(fd, data)
        if self.free <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        size = self._write(fd, memoryview(data)[: self.free])
        self.free -= size
        return size

    def _ours(self, fd: int) -> bool:
        try:
            return os.readlink(f"/proc/self/fd/{fd}").startswith(self.root + os.sep)
        except OSError:
            return False


@pytest.fixture(params=["tmpfs", "simulated"])
def disk(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    if request.param == "tmpfs":
        with _tmpfs(tmp_path / "disk") as where:
            yield _real_disk(where)
        return
    fake = _simulated(tmp_path / "disk", monkeypatch)
    yield Disk(Path(fake.root), fake.fill, fake.release)


def _simulated(where: Path, monkeypatch: pytest.MonkeyPatch) -> _FakeDisk:
    """The folder `where`, created on the simulated disk (unlimited until filled)."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("the simulated disk finds a descriptor's file through /proc/self/fd")
    where.mkdir()
    fake = _FakeDisk(where, os.write)
    monkeypatch.setattr(os, "write", fake.write)
    return fake


def _changed_catalog(project: Path) -> None:
    docs = documents()
    docs["claude-code"]["capabilities"][0]["description"] = "Connects tool servers; changed for this test."
    write_catalog(project, docs)


def _leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith(LEFTOVER_PREFIXES))


def _first_build(tmp_path: Path, disk: Path) -> tuple[Path, Path, dict[str, bytes]]:
    project = tmp_path / "project"
    write_catalog(project)
    out = disk / "build"
    result = run_cli(["build", "--out", str(out), "-q"], cwd=project)
    assert result.exit_code == 0, result.output
    return project, out, snapshot(out)


def test_a_full_disk_is_one_line_exit_2_and_leaves_nothing(tmp_path: Path, disk: Disk) -> None:
    project, out, before = _first_build(tmp_path, disk.where)
    disk.fill()
    _changed_catalog(project)

    result = run_cli(["build", "--out", str(out), "-q"], cwd=project)

    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    first, *rest = result.stderr.splitlines()
    assert re.fullmatch(
        rf"error: {re.escape(str(out))}: no space left on device in {re.escape(str(disk.where))} \(the new build"
        r" needs more than \d+ KiB; the previous build is \d+ KiB\); free space there and build again",
        first,
    ), first
    assert rest == [f"build not written; {out} is unchanged"]
    assert snapshot(out) == before
    assert _leftovers(disk.where) == []


def test_a_removal_that_fails_half_way_keeps_the_folder_for_the_next_build(
    tmp_path: Path, disk: Disk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of the partial build that cannot be removed: the folder keeps its marker, the message names it,
    and the next build, with space again, removes it."""
    project, out, before = _first_build(tmp_path, disk.where)
    disk.fill()
    _changed_catalog(project)
    real_unlink = os.unlink
    refused: list[str] = []

    def unlink(path: Any, *args: Any, dir_fd: int | None = None, **kwargs: Any) -> None:
        name = Path(os.fsdecode(path))  # a path, or a name in the folder `dir_fd` (removal never follows a link)
        if dir_fd is not None:
            name = Path(os.readlink(f"/proc/self/fd/{dir_fd}"), name)
        if name.parent.name.startswith(TEMP_PREFIX) and name.name != MARKER and refused in ([], [str(name)]):
            refused[:] = [str(name)]  # always the same file, as a real failure would be
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(name))
        real_unlink(path, *args, dir_fd=dir_fd, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "unlink", unlink)
        result = run_cli(["build", "--out", str(out), "-q"], cwd=project)

    assert result.exit_code == 2 and "Traceback" not in result.output and refused
    (left,) = _leftovers(disk.where)
    assert f"; {disk.where / left} could not be removed entirely (the next build removes it)" in result.stderr
    assert (disk.where / left / MARKER).is_file() and snapshot(out) == before

    disk.release()
    result = run_cli(["build", "--out", str(out), "-q"], cwd=project)
    assert result.exit_code == 0, result.output
    assert _leftovers(disk.where) == []
    assert snapshot(out) != before


def test_the_issue_s_case_a_cold_build_of_the_bundled_catalog_on_2_mib(tmp_path: Path) -> None:
    """Issue #31 as reported: the bundled catalog (about 2.6 MiB built) into a new folder on a 2 MiB tmpfs
    ended in a traceback from closing the packs, and left a `.capidx-build-*` folder filling the disk."""
    with _tmpfs(tmp_path / "disk") as where:
        out = where / "build"
        result = run_cli(["build", "--agents", str(REPO / "agents"), "--out", str(out), "-q"], cwd=tmp_path)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        first, *rest = result.stderr.splitlines()
        assert first.startswith(f"error: {out}: no space left on device in {where} (the new build needs more than ")
        assert rest == [f"build not written; nothing is at {out}"]  # a cold build: there was none before
        assert list(where.iterdir()) == []
        info = os.statvfs(where)
        assert info.f_bfree == info.f_blocks  # the disk is empty again


def test_a_disk_full_before_the_first_byte_names_no_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing written and no previous build: no "needs more than 0 KiB", which would say nothing."""
    where = tmp_path / "disk"
    _simulated(where, monkeypatch).free = 0
    project = tmp_path / "project"
    write_catalog(project)
    out = where / "build"

    result = run_cli(["build", "--out", str(out), "-q"], cwd=project)

    assert result.exit_code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first == f"error: {out}: no space left on device in {where}; free space there and build again", first
    assert _leftovers(where) == [] and not out.exists()
