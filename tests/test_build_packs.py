"""Tool answers are packed, one file per tool, and served exactly as rendered (issue 13, part 4).

- a build writes a few files per catalog instead of one per answer: every tool answer's row points into
  `tools/<tool>.pack` with an `offset`, and the pack is exactly its answers back to back;
- the server serves each packed answer byte for byte (through a real MCP client), and refuses a pack
  whose answers were changed, that holds bytes no answer owns, or whose rows overlap or point past it,
  even when the tampered rows carry the sha256 of the bytes they name (a neighbour's bytes never leak);
- the writer writes files and packs into a temporary sibling and swaps; a failure or an abort leaves
  the current build as it was and nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from manifest_factory import artifact_bytes
from server_support import (
    connect,
    rewrite_manifest,
)

from capidx.compiler.emit.packs import PACKS
from capidx.compiler.emit.write import TreeWriter
from capidx.server.snapshot import BuildError, load_snapshot


def _rows(build: Path) -> list[dict[str, Any]]:
    return json.loads((build / "manifest.json").read_text("utf-8"))["artifacts"]


def _files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.fixture
def build(catalog_build: Path, tmp_path: Path) -> Path:
    """A copy of a real build, to tamper with."""
    return Path(shutil.copytree(catalog_build, tmp_path / "build"))


def test_tool_answers_are_packed_one_file_per_tool(catalog_build: Path) -> None:
    rows = _rows(catalog_build)
    files = _files(catalog_build)
    packed = [row for row in rows if row["kind"] in PACKS]
    assert packed and all(row["path"] == PACKS[row["kind"]] and "offset" in row for row in packed)
    assert all("offset" not in row for row in rows if row["kind"] not in PACKS)  # resources: a file each
    assert set(files) == {row["path"] for row in rows} | {"manifest.json"}
    # One file per answer before (as many files as rows); the site's files are one per document by design.
    unpacked_site = [path for path in files if path.startswith("site/")]
    assert len(files) - len(unpacked_site) < len(rows) / 4
    for pack in {row["path"] for row in packed}:
        answers = sorted((row for row in packed if row["path"] == pack), key=lambda row: row["offset"])
        assert b"".join(artifact_bytes(catalog_build, row) for row in answers) == files[pack]


@pytest.mark.anyio
async def test_the_server_serves_packed_answers_as_rendered(catalog_build: Path) -> None:
    rows = {row["uri"]: row for row in _rows(catalog_build)}
    lookup = next(row for row in rows.values() if row["kind"] == "lookup" and row["offset"] > 0)
    async with connect(catalog_build) as client:
        result = await client.call_tool("lookup_capability", lookup["params"])
    (block,) = result.content
    assert block.text.encode("utf-8") == artifact_bytes(catalog_build, lookup)
    snapshot = load_snapshot(catalog_build)
    for uri, row in rows.items():
        assert snapshot.artifacts[uri].text.encode("utf-8") == artifact_bytes(catalog_build, row)


def _packed(manifest: dict[str, Any], kind: str = "compare") -> list[dict[str, Any]]:
    return sorted((row for row in manifest["artifacts"] if row["kind"] == kind), key=lambda row: row["offset"])


def test_a_changed_answer_is_refused_naming_the_pack_and_offset(build: Path) -> None:
    row = _packed({"artifacts": _rows(build)})[1]
    pack = build / row["path"]
    data = bytearray(pack.read_bytes())
    data[row["offset"] + 2] ^= 0x01  # same size, one byte of the second answer
    pack.write_bytes(bytes(data))
    with pytest.raises(BuildError, match=rf"compare\.pack \(offset {row['offset']}\): content does not match"):
        load_snapshot(build)


def test_bytes_no_answer_owns_are_refused(build: Path) -> None:
    with (build / PACKS["compare"]).open("ab") as pack:
        pack.write(b'{"hidden": "payload"}')
    with pytest.raises(BuildError, match="end at"):
        load_snapshot(build)


def _claim(row: dict[str, Any], build: Path, offset: int, size: int) -> None:
    """Point `row` at other bytes of its pack, with their true sha256 (what a careful forger would do)."""
    data = (build / row["path"]).read_bytes()[offset : offset + size]
    row.update(offset=offset, bytes=len(data), sha256=hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize(
    ("forge", "message"),
    [
        # the first answer grows over the start of the second: an answer with a neighbour's bytes
        (lambda rows, build: _claim(rows[0], build, 0, rows[0]["bytes"] + 5), "overlaps the answer before it"),
        # the second answer starts late: its first bytes belong to nobody
        (lambda rows, build: _claim(rows[1], build, rows[1]["offset"] + 1, rows[1]["bytes"] - 1), "no answer owns"),
        # the last answer claims bytes past the end of the pack
        (lambda rows, build: rows[-1].update(bytes=rows[-1]["bytes"] + 100), "end at"),
        # two answers at one offset
        (lambda rows, build: rows[1].update(offset=rows[0]["offset"]), r"overlaps|no answer owns"),
    ],
)
def test_rows_that_do_not_tile_their_pack_are_refused(build: Path, forge: Any, message: str) -> None:
    rewrite_manifest(build, lambda manifest: forge(_packed(manifest), build))
    with pytest.raises(BuildError, match=message):
        load_snapshot(build)


def test_offsets_written_as_json_floats_are_integers(build: Path) -> None:
    """JSON Schema counts 3.0 as an integer, so the manifest check lets it through: it must slice as 3."""

    def as_floats(manifest: dict[str, Any]) -> None:
        for row in _packed(manifest):
            row.update(offset=float(row["offset"]), bytes=float(row["bytes"]))

    rewrite_manifest(build, as_floats)
    row = _packed({"artifacts": _rows(build)})[1]
    assert load_snapshot(build).artifacts[row["uri"]].text.encode("utf-8") == artifact_bytes(
        build, {**row, "offset": int(row["offset"]), "bytes": int(row["bytes"])}
    )


def test_a_file_listed_as_a_pack_and_as_a_whole_artifact_is_refused(build: Path) -> None:
    def mix(manifest: dict[str, Any]) -> None:
        row = _packed(manifest)[0]
        del row["offset"]

    rewrite_manifest(build, mix)
    with pytest.raises(BuildError, match="both as a pack and as a whole artifact"):
        load_snapshot(build)


def test_a_pack_outside_the_build_is_refused(build: Path) -> None:
    rewrite_manifest(build, lambda manifest: _packed(manifest)[0].update(path="../compare.pack"))
    with pytest.raises(BuildError, match=r"not a plain relative path|schema"):
        load_snapshot(build)


def test_the_writer_writes_files_and_packs_then_swaps(tmp_path: Path) -> None:
    out = tmp_path / "build"
    writer = TreeWriter(out)
    writer.add("manifest.json", b"{}")
    writer.add("a/x.md", b"x")
    assert [writer.append("tools/t.pack", data) for data in (b"one", b"", "twö".encode())] == [0, 3, 3]
    writer.finish()
    assert _files(out) == {"manifest.json": b"{}", "a/x.md": b"x", "tools/t.pack": "onetwö".encode()}
    assert [path.name for path in tmp_path.iterdir()] == ["build"]  # no temporary directory left


def test_a_failed_write_leaves_the_current_build_and_nothing_behind(tmp_path: Path) -> None:
    out = tmp_path / "build"
    first = TreeWriter(out)
    first.add("manifest.json", b"{}")
    first.finish()
    writer = TreeWriter(out)
    writer.append("tools/t.pack", b"answer")
    writer.add("a", b"a file")
    with pytest.raises(OSError):
        writer.add("a/b.md", b"below a file: cannot be created")
    with pytest.raises(OSError, match="not a path inside the build"):
        writer.add("../escape.md", b"")
    writer.abort()
    assert _files(out) == {"manifest.json": b"{}"}
    assert [path.name for path in tmp_path.iterdir()] == ["build"]
    assert not (tmp_path / "escape.md").exists()
