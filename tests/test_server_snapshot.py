"""Loading a build: the manifest is the only index, every byte is verified, nothing escapes."""

from __future__ import annotations

import builtins
import contextlib
import errno
import hashlib
import json
import os
import queue
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from manifest_factory import artifact_bytes
from server_support import (
    forge_artifact,
    rewrite_manifest,
    write_build,
)

from capidx.cli import cli
from capidx.schema import builddir
from capidx.server import tools
from capidx.server.snapshot import BuildDenied, BuildError, NoBuildError, load_snapshot, safe_path


@pytest.fixture
def build(tmp_path: Path) -> Path:
    return write_build(tmp_path / "build")


def test_every_listed_artifact_is_loaded_once_and_verified(any_build: Path) -> None:
    manifest = json.loads((any_build / "manifest.json").read_text("utf-8"))
    snapshot = load_snapshot(any_build)
    assert len(snapshot.artifacts) == len(manifest["artifacts"])
    for entry in manifest["artifacts"]:
        artifact = snapshot.artifacts[entry["uri"]]
        assert artifact.text.encode("utf-8") == artifact_bytes(any_build, entry)
        assert artifact.sha256 == hashlib.sha256(artifact.text.encode("utf-8")).hexdigest()
        if entry["mimeType"] == "application/json":
            assert artifact.value == json.loads(artifact.text)
    assert snapshot.find("lookup", agent="claude-code", capability="mcp-servers") is not None
    assert snapshot.find("list", agent="claude-code", category=None).params == {"agent": "claude-code"}


def test_files_the_manifest_does_not_list_are_never_read(build: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (build / "secret.md").write_text("not listed", encoding="utf-8")
    (build / "agents" / "intruder.md").write_text("not listed either", encoding="utf-8")
    read: list[Path] = []
    original = os.open

    def spy(path: str | os.PathLike[str], flags: int, *args: int, **options: object) -> int:
        read.append(Path(path))
        return original(path, flags, *args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", spy)
    manifests: list[Path] = []
    original_manifest = builddir.read_manifest

    def spy_manifest(path: Path, **options: object) -> bytes:
        manifests.append(path)
        return original_manifest(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(builddir, "read_manifest", spy_manifest)
    load_snapshot(build)
    listed = {a["path"] for a in json.loads((build / "manifest.json").read_text("utf-8"))["artifacts"]}
    assert {p.relative_to(build.resolve()).as_posix() for p in read} == listed | {"manifest.json"}
    assert [p.relative_to(build.resolve()).as_posix() for p in manifests] == ["manifest.json"]


def test_a_damaged_manifest_is_answered_with_the_way_to_a_new_build(build: Path) -> None:
    """A build replaces only a folder its manifest proves is one: 'rebuild' alone would send the user to a refusal."""
    (build / "manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(BuildError, match=r"delete the folder and run `capidx build`"):
        load_snapshot(build)
    (build / "manifest.json").unlink()
    with pytest.raises(NoBuildError, match=r"move what it holds away \(or delete it\), then run `capidx build`"):
        load_snapshot(build)


def test_sha_mismatch_refuses_naming_the_file(build: Path) -> None:
    target = build / "summary.md"
    target.write_bytes(target.read_bytes().replace(b"Capability", b"Capabilitx"))  # same size
    with pytest.raises(BuildError) as caught:
        load_snapshot(build)
    assert str(target.resolve()) in str(caught.value)
    assert "does not match manifest.json" in str(caught.value)
    assert "capidx build" in str(caught.value)


def test_size_mismatch_refuses(build: Path) -> None:
    with (build / "stats.json").open("a", encoding="utf-8") as handle:
        handle.write(" ")
    with pytest.raises(BuildError, match=r"stats\.json"):
        load_snapshot(build)


def test_missing_artifact_refuses(build: Path) -> None:
    (build / "agents" / "gemini-cli.md").unlink()
    with pytest.raises(BuildError, match=r"gemini-cli\.md: listed in manifest\.json but missing"):
        load_snapshot(build)


def test_no_build(tmp_path: Path) -> None:
    with pytest.raises(NoBuildError, match="run `capidx build`"):
        load_snapshot(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoBuildError, match=r"manifest\.json is missing"):
        load_snapshot(tmp_path / "empty")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(NoBuildError, match="not a directory"):
        load_snapshot(tmp_path / "file")


def test_serve_given_a_builds_manifest_names_the_folder_to_serve(build: Path) -> None:
    # `capidx report build/manifest.json` reads that build; serve was told to run `capidx build`, which cannot help.
    result = CliRunner().invoke(cli, ["serve", str(build / "manifest.json")])

    assert result.exit_code == 2, result.output
    assert f"if it is a build's manifest.json, serve its folder, {build}" in result.output  # a web app's is not
    assert "run `capidx build`" not in result.output


def test_the_build_given_as_an_argument_is_said_so_by_print_config(build: Path) -> None:
    as_argument = CliRunner().invoke(cli, ["serve", str(build), "--print-config"])
    as_flag = CliRunner().invoke(cli, ["serve", "--build", str(build), "--print-config"])

    assert as_argument.exit_code == as_flag.exit_code == 0, as_argument.output + as_flag.output
    assert "# argument BUILD" in as_argument.output and "--build" not in as_argument.output
    assert "# flag --build" in as_flag.output


def test_a_build_path_that_is_a_link_to_nothing_says_which_link_not_that_no_build_is_there(tmp_path: Path) -> None:
    """`no build at` would send the user to run a build that no link loop can hold."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(BuildError, match="symbolic link loop") as loop:
        load_snapshot(tmp_path / "a")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    with pytest.raises(BuildError, match=r"broken symbolic link \(target '.*gone' does not exist\)") as dangling:
        load_snapshot(tmp_path / "dangling")
    (tmp_path / "chained").symlink_to("dangling")  # its target exists, as a link: the missing end is named
    with pytest.raises(BuildError, match=r"target 'dangling' leads to '.*gone', which does not exist") as chained:
        load_snapshot(tmp_path / "chained")
    with pytest.raises(BuildError, match=r"dangling: broken symbolic link") as above:  # a folder above the build's
        load_snapshot(tmp_path / "dangling" / "build")
    for refused in (loop, dangling, chained, above):
        assert not isinstance(refused.value, NoBuildError)
        assert "--build DIR" in str(refused.value)


# --- a build this user may not read: said so, not taken for a missing or damaged one ---------------------------


def _refuse(monkeypatch: pytest.MonkeyPatch, calls: tuple[str, ...], refused: Callable[[str], bool]) -> None:
    """Make the functions named in `calls` ("os.stat", "builtins.open") fail with EACCES for the paths `refused`
    picks, as a permission refuses them. The suite may run as root, whom a mode of 000 stops from nothing."""

    def guard(real: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(path: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(path, str | os.PathLike) and refused(os.fspath(path)):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
            return real(path, *args, **kwargs)

        return guarded

    for call in calls:
        module, name = call.split(".")
        where = builtins if module == "builtins" else os
        monkeypatch.setattr(where, name, guard(getattr(where, name)))


OPENS = ("os.open", "builtins.open")


def _deny_folder(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """`folder` as if of mode 000: it can be looked at (stat), nothing in it can, and it cannot be listed or opened."""
    inside = str(folder.resolve()) + os.sep
    _refuse(monkeypatch, ("os.stat", "os.lstat"), lambda path: path.startswith(inside))
    _refuse(monkeypatch, (*OPENS, "os.scandir", "os.listdir"), lambda path: (path + os.sep).startswith(inside))


def _deny_file(monkeypatch: pytest.MonkeyPatch, file: Path) -> None:
    """`file` as if of mode 000: there (stat), but it cannot be opened."""
    _refuse(monkeypatch, OPENS, lambda path: path == str(file.resolve()))


def _refusal(build: Path) -> BuildError:
    """The error loading `build` ends in."""
    with pytest.raises(BuildError) as caught:
        load_snapshot(build)
    return caught.value


def _serve(build: Path, cwd: Path) -> Result:
    """`capidx serve --build BUILD` in process, from an empty folder (no capidx.yaml read)."""
    cwd.mkdir(exist_ok=True)
    with contextlib.chdir(cwd):
        return CliRunner().invoke(cli, ["serve", "--build", str(build), "--no-reload"])


@contextlib.contextmanager
def _mode(path: Path, mode: int) -> Iterator[None]:
    """`path` with `mode` while the block runs; the test is skipped when that does not stop this user reading it
    (root, or a user with CAP_DAC_OVERRIDE), which the tests with `_deny_folder` and `_deny_file` stand in for."""
    before = stat.S_IMODE(path.stat().st_mode)
    path.chmod(mode)
    try:
        try:
            os.listdir(path) if path.is_dir() else path.read_bytes()
        except PermissionError:
            yield
        else:
            pytest.skip(f"a mode of {mode:03o} does not stop this user reading {path.name}")
    finally:
        path.chmod(before)


def test_a_build_folder_that_cannot_be_read_is_said_to_be_unreadable_not_missing(
    build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its manifest.json was taken for missing ("run `capidx build` first": no help), or Python 3.11's Path.is_file
    raised the PermissionError (a traceback, exit 1). It is a build this user may not read: said so, with why."""
    _deny_folder(monkeypatch, build)
    refused = _refusal(build)
    assert not isinstance(refused, NoBuildError)
    message = str(refused)
    assert message.startswith(
        f"cannot read the build at {build}: {build.resolve() / 'manifest.json'}: Permission denied"
    )
    assert "needs read and search permission" in message
    assert "missing" not in message and "capidx build" not in message


def test_serve_on_a_build_folder_that_cannot_be_read_says_so_and_exits_2(
    build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 2, as for every build that cannot be served; no traceback."""
    _deny_folder(monkeypatch, build)
    result = _serve(build, tmp_path / "elsewhere")
    assert result.exit_code == 2, result.output
    assert f"Error: cannot read the build at {build}: " in result.output
    assert "Permission denied" in result.output and "missing" not in result.output


def test_a_folder_of_mode_000_is_said_to_be_unreadable(build: Path, tmp_path: Path) -> None:
    """The same with real permissions, where they stop this user."""
    with _mode(build, 0):
        result = _serve(build, tmp_path / "elsewhere")
    assert result.exit_code == 2, result.output
    assert f"Error: cannot read the build at {build}: " in result.output
    assert "Permission denied" in result.output and "missing" not in result.output


def test_a_manifest_that_cannot_be_read_is_not_taken_for_a_damaged_build(
    build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged manifest is answered with "delete the folder and run `capidx build`": no way to mend permissions."""
    _deny_file(monkeypatch, build / "manifest.json")
    message = str(_refusal(build))
    assert message.startswith(f"{build.resolve() / 'manifest.json'}: cannot read: Permission denied")
    assert "needs read and search permission" in message and "delete" not in message


def test_a_manifest_that_cannot_be_read_is_refused_as_denied_like_the_rest_of_the_build(
    build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`BuildDenied` is how a caller tells a permission to give from a build that changed or is damaged: a folder or
    an artifact this user may not read was refused with it, the manifest alone with a plain `BuildError`."""
    _deny_file(monkeypatch, build / "manifest.json")
    assert isinstance(_refusal(build), BuildDenied)
    monkeypatch.undo()
    (build / "manifest.json").write_text("{not json", encoding="utf-8")
    assert not isinstance(_refusal(build), BuildDenied)  # damaged, not denied


def test_a_manifest_of_mode_000_is_said_to_be_unreadable(build: Path, tmp_path: Path) -> None:
    with _mode(build / "manifest.json", 0):
        result = _serve(build, tmp_path / "elsewhere")
    assert result.exit_code == 2, result.output
    assert "manifest.json: cannot read: Permission denied" in result.output and "delete" not in result.output


def test_a_folder_in_the_build_that_cannot_be_read_is_not_taken_for_missing_files(
    build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _deny_folder(monkeypatch, build / "index")
    message = str(_refusal(build))
    assert message.startswith(f"{build.resolve() / 'index'}")
    assert "listed in manifest.json but cannot be read: Permission denied" in message
    assert "missing" not in message


def test_an_artifact_that_cannot_be_read_asks_for_permission_not_a_rebuild(
    build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An artifact this user may not open was answered "rebuild with `capidx build`", which mends no permission:
    it gets the advice an unreadable manifest gets. A file that is missing or damaged still asks for a rebuild."""
    summary = build / "summary.md"
    _deny_file(monkeypatch, summary)
    message = str(_refusal(build))
    assert message.startswith(f"{summary.resolve()}: cannot read: Permission denied")
    assert "needs read and search permission" in message and "capidx build" not in message
    result = _serve(build, tmp_path / "elsewhere")
    assert result.exit_code == 2, result.output
    assert "summary.md: cannot read: Permission denied" in result.output and "rebuild" not in result.output
    monkeypatch.undo()
    summary.write_bytes(b"damaged")
    assert "rebuild with `capidx build`" in str(_refusal(build))


def test_invalid_manifest_names_the_json_path(build: Path) -> None:
    rewrite_manifest(build, lambda m: m["artifacts"][0].update(bytes="many"))
    with pytest.raises(BuildError) as caught:
        load_snapshot(build)
    assert "/artifacts/0/bytes" in str(caught.value)
    (build / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BuildError, match=r"manifest\.json: 1:2: invalid JSON"):
        load_snapshot(build)


@pytest.mark.parametrize(
    ("edit", "where", "says"),
    [
        (lambda m: m.update(format=0), ": /format:", "0"),
        (lambda m: m.update(uriPrefix="NOT A PREFIX"), ": /uriPrefix:", "does not match"),
        (lambda m: m.pop("catalog"), ": /:", "'catalog' is a required property"),
        (lambda m: m.update(extra=1), ": /:", "'extra' was unexpected"),
        (lambda m: m["artifacts"][0].update(bytes=-1), ": /artifacts/0/bytes:", "less than the minimum"),
        (lambda m: m["artifacts"][0].update(bytes=True), ": /artifacts/0/bytes:", "not of type 'integer'"),
        (lambda m: m["artifacts"][0].update(kind="nope"), ": /artifacts/0/kind:", "is not one of"),
        (lambda m: m["artifacts"][0]["params"].update(agent="Not A Slug"), ": /artifacts/0/params/agent:", "match"),
        (lambda m: m["encodings"].clear(), ": /encodings:", "should be non-empty"),
        (lambda m: m.update(inputDigest="sha256:XYZ"), ": /inputDigest:", "does not match"),
    ],
)
def test_an_invalid_manifest_refuses_to_start_naming_path_and_problem(build: Path, edit, where: str, says: str) -> None:
    rewrite_manifest(build, edit)
    with pytest.raises(BuildError) as caught:
        load_snapshot(build)
    message = str(caught.value)
    assert f"manifest.json{where}" in message and says in message, message
    assert "capidx build" in message and len(message) < 700  # readable, never the whole manifest


def test_the_server_validates_with_jsonschema_and_imports_it_lazily() -> None:
    import subprocess
    import sys

    code = (
        "import sys, capidx.server.snapshot as s; before = 'jsonschema' in sys.modules; "
        "v = s.manifest_validator(); print(before, type(v).__module__, v.FORMAT_CHECKER is not None)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split() == ["False", "jsonschema.validators", "True"]


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd", "a/../../outside.md", "./summary.md", "a\\b.md"])
def test_manifest_paths_that_could_escape_are_refused(build: Path, path: str) -> None:
    rewrite_manifest(build, lambda m: m["artifacts"][0].update(path=path))
    with pytest.raises(BuildError):
        load_snapshot(build)


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd", "a/../../x", "", "a//b", "a\x00b", "..", "."])
def test_safe_path_refuses_traversal_even_past_the_schema(tmp_path: Path, path: str) -> None:
    with pytest.raises(BuildError):
        safe_path(tmp_path, path)


def test_symlink_pointing_outside_is_refused(build: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes((build / "summary.md").read_bytes())  # same bytes: only containment can catch it
    (build / "summary.md").unlink()
    os.symlink(outside, build / "summary.md")
    with pytest.raises(BuildError, match="resolves outside the build directory"):
        load_snapshot(build)


def test_symlinked_directory_outside_is_refused(build: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    os.rename(build / "agents", elsewhere)
    os.symlink(elsewhere, build / "agents")
    with pytest.raises(BuildError, match="resolves outside the build directory"):
        load_snapshot(build)


def test_a_symlinked_build_directory_itself_is_fine(build: Path, tmp_path: Path) -> None:
    link = tmp_path / "current"
    os.symlink(build, link)
    assert load_snapshot(link).digest == load_snapshot(build).digest


@pytest.mark.parametrize("swapped_in", ["link", "pipe"])
def test_a_manifest_replaced_between_its_check_and_its_open_is_refused(
    build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped_in: str
) -> None:
    """manifest.json is looked at (`lstat`: a regular file, not a link) and then opened. What was put in its place
    between the two was opened as found: a link followed out of the build (here to a copy of the very manifest, so
    the build loaded), a pipe waited on forever. The swap is made by that `lstat` itself, after it looked."""
    if swapped_in == "pipe" and not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    manifest = build.resolve() / "manifest.json"
    outside = tmp_path / "outside.json"
    outside.write_bytes(manifest.read_bytes())
    real_lstat = os.lstat
    swapped: list[str] = []

    def lstat_then_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        info = real_lstat(path, *args, **kwargs)
        if not swapped and isinstance(path, str | os.PathLike) and os.fspath(path) == str(manifest):
            manifest.unlink()
            manifest.symlink_to(outside) if swapped_in == "link" else os.mkfifo(manifest)
            swapped.append(swapped_in)
        return info

    monkeypatch.setattr(os, "lstat", lstat_then_swap)
    outcome: queue.Queue[object] = queue.Queue()

    def load() -> None:
        try:
            outcome.put(load_snapshot(build))
        except Exception as error:  # handed to the test
            outcome.put(error)

    threading.Thread(target=load, daemon=True).start()
    try:
        got = outcome.get(timeout=30)
    except queue.Empty:
        got = "still waiting on the pipe after 30 s"
    finally:
        if swapped_in == "pipe":  # a writer that closes at once ends a read still waiting on the pipe
            with contextlib.suppress(OSError):
                os.close(os.open(manifest, os.O_WRONLY | os.O_NONBLOCK))
    assert swapped == [swapped_in]
    assert isinstance(got, BuildError), got
    why = "(a link: not followed)" if swapped_in == "link" else "(a link, a pipe or a device?)"
    assert str(got).startswith(f"{manifest}: not a regular file {why}")


def test_a_manifest_reached_through_a_linked_folder_is_read(build: Path, tmp_path: Path) -> None:
    """Only the manifest itself is opened without following a link: the folders above it may be links."""
    link = tmp_path / "current"
    os.symlink(build, link)
    assert builddir.read_manifest(link / "manifest.json") == (build / "manifest.json").read_bytes()


def test_duplicate_uris_are_refused(build: Path) -> None:
    def duplicate(manifest: dict) -> None:
        manifest["artifacts"][1]["uri"] = manifest["artifacts"][0]["uri"]

    rewrite_manifest(build, duplicate)
    with pytest.raises(BuildError, match="same URI"):
        load_snapshot(build)


def test_the_match_index_is_required(build: Path) -> None:
    rewrite_manifest(build, lambda m: m.update(artifacts=[a for a in m["artifacts"] if a["kind"] != "index"]))
    with pytest.raises(BuildError, match="expected one artifact of kind 'index'"):
        load_snapshot(build)


def test_a_broken_match_index_is_refused(build: Path) -> None:
    forge_artifact(build, "index/match.json", b'{"version": 1}')
    with pytest.raises(BuildError, match="not a match index"):
        load_snapshot(build)


@pytest.mark.parametrize("ids", [[None, "claude-code"], [1], "claude-code", {"claude-code": 1}])
def test_agent_names_naming_something_other_than_ids_are_refused_at_load(build: Path, ids: object) -> None:
    """`agentNames` maps each spelling to a list of agent ids, read on each lookup of an agent: a null among them
    passed the load and made every lookup of an unknown agent an internal error (sorting None with strings)."""
    value = json.loads((build / "index" / "match.json").read_bytes())
    value["agentNames"][next(iter(value["agentNames"]))] = ids
    forge_artifact(build, "index/match.json", json.dumps(value).encode())
    with pytest.raises(BuildError, match=r"not a match index .*agentNames"):
        load_snapshot(build)


@pytest.mark.parametrize("entry", [None, 1, "claude-code", ["claude-code"]])
def test_a_comparison_entry_that_is_no_object_is_left_out_of_a_comparison_of_some_agents(
    build: Path, entry: object
) -> None:
    """A tool document is parsed when used: a compare document whose `agents` list held a null (a forged build)
    loaded, and compare_capability for some agents was an internal error (`None.get`); the entry is now no asked
    agent's, and the others are answered."""
    value = json.loads((build / "tools" / "compare" / "hooks.json").read_bytes())
    value["agents"].insert(0, entry)
    forge_artifact(build, "tools/compare/hooks.json", json.dumps(value).encode())
    snapshot = load_snapshot(build)
    validators = tools.Validators.for_variants(None)
    result = tools.call_tool(snapshot, validators, "compare_capability", {"capability": "hooks", "agents": ["claude"]})
    assert not result.is_error, result
    assert [row["agent"] for row in result.structured_content["agents"]] == ["claude-code"]


def test_an_oversized_manifest_is_refused_without_being_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server holds at most MAX_MANIFEST_BYTES of a manifest (a lowered limit stands in for 512 MiB)."""
    from capidx.server import snapshot

    build = tmp_path / "build"
    build.mkdir()
    (build / "manifest.json").write_bytes(b"{" + b" " * 4096 + b"}")
    monkeypatch.setattr(snapshot, "MAX_MANIFEST_BYTES", 1024)
    with pytest.raises(BuildError, match="over 0 MiB, not a build manifest"):
        load_snapshot(build)


@pytest.fixture
def site_build(catalog_build: Path, tmp_path: Path) -> Path:
    """A copy of a real build (it has a site/) that a test may damage."""
    copy = tmp_path / "build"
    shutil.copytree(catalog_build, copy, symlinks=True)
    return copy


def _site_artifact(snapshot: Any, path: str) -> Any:
    return next(artifact for artifact in snapshot.artifacts.values() if artifact.path == path)


def test_site_files_are_checked_at_load_and_read_when_asked_for(
    site_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """site/ is served over HTTP only and is most of a large build's bytes: not held in memory."""
    read: list[str] = []
    original = os.open

    def spy(path: str | os.PathLike[str], flags: int, *args: int, **options: object) -> int:
        read.append(Path(path).relative_to(site_build.resolve()).as_posix())
        return original(path, flags, *args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", spy)
    snapshot = load_snapshot(site_build)
    assert read  # the spy sees the reads of the other files
    rows = json.loads((site_build / "manifest.json").read_text("utf-8"))["artifacts"]
    site = [row for row in rows if row["path"].startswith("site/")]
    assert site and not [path for path in read if path.startswith("site/")]
    for row in site:
        text = snapshot.artifacts[row["uri"]].text
        assert text.encode("utf-8") == (site_build / row["path"]).read_bytes()
        assert hashlib.sha256(text.encode("utf-8")).hexdigest() == row["sha256"]


@pytest.mark.skipif(sys.platform != "linux", reason="an address-space limit and sparse files, as on Linux")
def test_a_file_larger_than_listed_is_refused_before_it_is_read(site_build: Path) -> None:
    """A listed file of gigabytes (sparse: it costs no disk) is refused by its size, not read whole first: a process
    that may not hold it in memory still gets the clear refusal."""
    os.truncate(site_build / "summary.md", 4 << 30)
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from pathlib import Path\n"
        "from capidx.server.snapshot import BuildError, load_snapshot\n"
        "try:\n"
        "    load_snapshot(Path(sys.argv[1]))\n"
        "except BuildError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(site_build)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "summary.md: content does not match manifest.json (4294967296 bytes; expected" in result.stdout


def test_a_site_files_listed_size_is_checked_before_it_is_read(site_build: Path) -> None:
    """A size of 2**62 in the manifest never becomes a read that large; 28068.0 is the integer 28068 to JSON Schema."""

    def listed(size: Any) -> Any:
        def edit(manifest: dict[str, Any]) -> None:
            (row,) = [row for row in manifest["artifacts"] if row["path"] == "site/llms.txt"]
            row["bytes"] = size(row["bytes"])

        rewrite_manifest(site_build, edit)
        return _site_artifact(load_snapshot(site_build), "site/llms.txt")

    original = (site_build / "site" / "llms.txt").read_bytes()
    assert listed(float).text.encode("utf-8") == original
    with pytest.raises(BuildError, match=r"llms\.txt: content does not match manifest\.json"):
        _ = listed(lambda _: 2**62).text


def test_a_missing_site_file_still_refuses_the_build(site_build: Path) -> None:
    (site_build / "site" / "llms.txt").unlink()
    with pytest.raises(BuildError, match=r"llms\.txt: listed in manifest\.json but missing"):
        load_snapshot(site_build)


def test_a_site_file_changed_after_loading_is_never_served(site_build: Path) -> None:
    snapshot = load_snapshot(site_build)
    target = site_build / "site" / "llms.txt"
    artifact = _site_artifact(snapshot, "site/llms.txt")
    original = target.read_bytes()
    target.write_bytes(original[:-1] + (b"x" if original[-1:] != b"x" else b"y"))  # same size
    with pytest.raises(BuildError, match=r"llms\.txt: content does not match manifest\.json"):
        _ = artifact.text
    target.write_bytes(original + b"more")  # longer: only size + 1 bytes are read
    with pytest.raises(BuildError, match=r"does not match"):
        _ = artifact.text
    target.write_bytes(original)
    assert artifact.text.encode("utf-8") == original


def test_a_site_file_replaced_by_a_link_out_or_a_pipe_is_refused_on_use(site_build: Path, tmp_path: Path) -> None:
    snapshot = load_snapshot(site_build)
    target = site_build / "site" / "llms.txt"
    outside = tmp_path / "outside.txt"
    outside.write_bytes(target.read_bytes())  # even the right bytes: a link out of the build is not followed
    target.unlink()
    target.symlink_to(outside)
    with pytest.raises(BuildError, match="outside the build"):
        _ = _site_artifact(snapshot, "site/llms.txt").text
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(BuildError, match="not a regular file"):  # and the open does not block
        _ = _site_artifact(snapshot, "site/llms.txt").text
