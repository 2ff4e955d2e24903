"""Server start in constant work per artifact (issue 13, part 5), with every refusal it had before.

The manifest's rows are checked by hand and only explained by jsonschema; the build root is resolved once
and artifact paths are checked as strings plus one `lstat`; JSON artifacts are parsed when used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from jsonschema.exceptions import best_match
from server_support import (
    rewrite_manifest,
    write_build,
)

from capidx.server import snapshot as snapshot_module
from capidx.server.snapshot import BuildError, load_snapshot

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "schema" / "build-manifest.schema.json").read_text())


@pytest.fixture
def build(tmp_path: Path) -> Path:
    return write_build(tmp_path / "build")


def _artifacts(build: Path) -> list[dict[str, Any]]:
    return json.loads((build / "manifest.json").read_text("utf-8"))["artifacts"]


def test_artifact_paths_are_not_resolved_one_by_one(build: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the build root and each folder are resolved, never each of the artifacts (the server resolves paths
    through `capidx.schema.realpath` only)."""
    calls: list[str] = []
    resolve, real_path = snapshot_module.resolve, snapshot_module.real_path

    def spy_resolve(path: Path, *, strict: bool = False) -> Path:
        calls.append(f"resolve {path}")
        return resolve(path, strict=strict)

    def spy_real_path(path: Any, *, strict: bool = False) -> str:
        calls.append(f"real_path {path}")
        return real_path(path, strict=strict)

    monkeypatch.setattr(snapshot_module, "resolve", spy_resolve)
    monkeypatch.setattr(snapshot_module, "real_path", spy_real_path)
    snapshot = load_snapshot(build)
    rows = _artifacts(build)
    folders = {row["path"].rpartition("/")[0] for row in rows} - {""}
    assert len(snapshot.artifacts) == len(rows) > 2 * (len(folders) + 1)
    assert len([call for call in calls if call.startswith("resolve")]) == 1, calls  # the root, once
    assert len(calls) <= len(folders) + 1, calls  # and each folder once


def _row_rewrite(number: int, key: str, value: Any) -> Any:
    def edit(manifest: dict[str, Any]) -> None:
        if value is _DROP:
            del manifest["artifacts"][number][key]
        else:
            manifest["artifacts"][number][key] = value

    return edit


_DROP = "<dropped>"  # a sentinel with a stable repr: test ids must match across xdist workers
ROW_DEFECTS = [
    ("sha256", "XYZ"),
    ("sha256", None),
    ("path", "a/./b.md"),
    ("path", ".hidden/../x.md"),
    ("path", "with space.md"),
    ("kind", ["summary"]),
    ("kind", "Summary"),
    ("uri", 3),
    ("title", None),
    ("bytes", 1.5),
    ("bytes", False),
    ("words", -1),
    ("lines", "3"),
    ("tokens", {"o200k_base": -2}),
    ("tokens", {"o200k_base": True}),
    ("tokens", []),
    ("params", {"agent": "Bad Slug"}),
    ("params", {"vendor": "x"}),
    ("params", {"agent": 7}),
    ("params", "agent=x"),
    ("extra", 1),
    ("description", _DROP),
]


@pytest.mark.parametrize(("key", "value"), ROW_DEFECTS, ids=[f"{k}={v!r}" for k, v in ROW_DEFECTS])
def test_a_malformed_artifact_row_is_refused_as_jsonschema_would_name_it(build: Path, key: str, value: Any) -> None:
    """Each row defect refuses the build with the JSON path and message a whole-document validation gives."""
    number = len(_artifacts(build)) // 2  # a row in the middle: every row is checked, not a sample
    rewrite_manifest(build, _row_rewrite(number, key, value))
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    expected = best_match(jsonschema.Draft202012Validator(SCHEMA).iter_errors(manifest))
    assert expected is not None  # the defect is one the schema refuses
    pointer = "/" + "/".join(str(part) for part in expected.absolute_path)
    with pytest.raises(BuildError) as caught:
        load_snapshot(build)
    message = str(caught.value)
    assert f"manifest.json: {pointer}:" in message, message
    assert pointer.startswith(f"/artifacts/{number}")
    assert "capidx build" in message


def test_an_integral_float_count_is_accepted_as_the_schema_accepts_it(build: Path) -> None:
    """JSON Schema's `integer` includes 3.0: the hand check is no stricter than the schema."""
    rewrite_manifest(build, lambda m: m["artifacts"][0].update(words=float(m["artifacts"][0]["words"])))
    assert load_snapshot(build).artifacts


HEADER_DEFECTS = {
    "format float": lambda m: m.update(format=1.5),
    "format true": lambda m: m.update(format=True),
    "capidx number": lambda m: m.update(capidx=1),
    "$schema number": lambda m: m.update({"$schema": 3}),
    "digest": lambda m: m.update(inputDigest="sha256:abc"),
    "prefix": lambda m: m.update(uriPrefix="x:/"),
    "encodings": lambda m: m.update(encodings=[1]),
    "catalog slug": lambda m: m["catalog"]["agents"].append("Not A Slug"),
    "catalog extra": lambda m: m["catalog"].update(vendors=[]),
    "catalog list": lambda m: m.update(catalog=[]),
    "template kind": lambda m: m["resourceTemplates"][0].update(kind="tool"),
    "template missing": lambda m: m["resourceTemplates"][0].pop("title"),
    "template name": lambda m: m["resourceTemplates"][0].update(name=None),
    "budget zero": lambda m: m["budgets"].append({"kind": "x", "budget": 0, "tokens": 0, "uri": "u", "ok": True}),
    "budget ok": lambda m: m["budgets"].append({"kind": "x", "budget": 1, "tokens": 0, "uri": "u", "ok": 1}),
    "budgets object": lambda m: m.update(budgets={}),
    "unknown key": lambda m: m.update(extra=1),
    "missing key": lambda m: m.pop("encodings"),
    "artifacts object": lambda m: m.update(artifacts={}),
}


@pytest.mark.parametrize("edit", HEADER_DEFECTS.values(), ids=HEADER_DEFECTS.keys())
def test_a_malformed_header_is_refused_as_jsonschema_would_name_it(build: Path, edit: Any) -> None:
    rewrite_manifest(build, edit)
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    expected = best_match(jsonschema.Draft202012Validator(SCHEMA).iter_errors(manifest))
    assert expected is not None  # the defect is one the schema refuses
    pointer = "/" + "/".join(str(part) for part in expected.absolute_path)
    with pytest.raises(BuildError) as caught:
        load_snapshot(build)
    assert f"manifest.json: {pointer}:" in str(caught.value), str(caught.value)


def test_a_server_is_made_without_jsonschema_or_regex(catalog_build: Path, hand_build: Path) -> None:
    """What `initialize` waits for (the build loaded, the server made) imports neither: jsonschema only explains a
    manifest the server refuses and checks tool arguments, imported by the first call that needs it (a valid
    manifest is checked without jsonschema: ~0.1 s of every start); `regex` the server never needs. Both
    readings of the contract in one process (one SDK import), checked after each."""
    code = (
        "import sys; from pathlib import Path; from capidx.server.settings import resolve_settings; "
        "from capidx.server.snapshot import load_snapshot; from capidx.server.app import Hub, build_server\n"
        "for build in map(Path, sys.argv[1:]):\n"
        "    settings = resolve_settings({'build': str(build), 'reload': False}, {}, build.parent, None)\n"
        "    build_server(Hub(load_snapshot(build), settings))\n"
        "    print(build.name, sorted(name for name in ('jsonschema', 'regex') if name in sys.modules))"
    )
    builds = [catalog_build, hand_build]
    command = [sys.executable, "-c", code, *map(str, builds)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.splitlines() == [f"{build.name} []" for build in builds], result.stdout


def test_a_symlinked_folder_deep_in_the_build_leading_out_is_refused(build: Path, tmp_path: Path) -> None:
    nested = next(row["path"] for row in _artifacts(build) if row["path"].count("/") >= 1)
    folder = build / nested.rpartition("/")[0]
    elsewhere = tmp_path / "elsewhere"
    os.rename(folder, elsewhere)
    os.symlink(elsewhere, folder)
    with pytest.raises(BuildError, match="resolves outside the build directory"):
        load_snapshot(build)


def test_a_symlinked_file_leading_out_through_a_relative_link_is_refused(build: Path, tmp_path: Path) -> None:
    nested = build / next(row["path"] for row in _artifacts(build) if "/" in row["path"])
    outside = tmp_path / "outside.txt"
    outside.write_bytes(nested.read_bytes())  # same bytes: only containment can catch it
    nested.unlink()
    os.symlink(os.path.relpath(outside, nested.parent), nested)
    with pytest.raises(BuildError, match="resolves outside the build directory"):
        load_snapshot(build)


def test_a_symlink_that_stays_inside_the_build_is_still_served(build: Path) -> None:
    target = build / "summary.md"
    os.rename(target, build / "summary-real.md")
    os.symlink("summary-real.md", target)
    assert load_snapshot(build).variant("summary").text == (build / "summary-real.md").read_text("utf-8")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_in_place_of_an_artifact_is_refused_without_blocking(build: Path) -> None:
    (build / "summary.md").unlink()
    os.mkfifo(build / "summary.md")
    with pytest.raises(BuildError, match="not a regular file"):
        load_snapshot(build)


def test_json_documents_are_parsed_when_used_and_equal_their_text(build: Path) -> None:
    snapshot = load_snapshot(build)
    documents = [a for a in snapshot.artifacts.values() if a.mime_type == "application/json"]
    assert documents
    for artifact in documents:
        assert artifact.value == json.loads(artifact.text)
        assert artifact.value is not artifact.value  # a fresh object each time: no caller can alter another's
    markdown = next(a for a in snapshot.artifacts.values() if a.mime_type != "application/json")
    assert markdown.value is None
