"""Symbolic links chained past what the kernel follows: a clear error from every command, never a traceback.

Python 3.11's `os.path.realpath` and `Path.resolve` recurse once per link, so a chain of some 1,000 links (which a
pull request can hold: git stores links) ended init, validate, build, report, inject, verify and serve in a
RecursionError. `capidx.schema.realpath` follows at most `MAX_LINKS` links, as the kernel does, and treats a
longer chain as a loop: each command says of it what it says of a link loop. The chains here are 1,500 links long,
made in `tmp_path` (well under a second).
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from catalog_factory import built_project, snapshot, write_catalog
from click.testing import CliRunner, Result
from manifest_factory import write_memory_build

from capidx.cli import cli
from capidx.schema.realpath import MAX_LINKS, real_path, resolve

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links as POSIX systems make them")

REPO = Path(__file__).resolve().parent.parent
LONG = 1_500  # far past the kernel's limit, and past Python 3.11's recursion limit


def link_chain(link: Path, target: str, links: int = LONG, folder: Path | None = None) -> Path:
    """Make `link` the head of a chain of `links` links (counting `link`) ending at `target`, the others in `folder`
    (by default a hidden folder beside `link`, which no capidx command lists): `link -> l{n-1} -> ... -> l1 ->
    target`. Returns `link`."""
    folder = folder or link.parent / f".{link.name}-chain"
    folder.mkdir(parents=True, exist_ok=True)
    previous = os.path.relpath(link.parent / target, folder) if not os.path.isabs(target) else target
    for number in range(1, links):
        (folder / f"l{number}").symlink_to(previous)
        previous = f"l{number}"
    link.symlink_to(os.path.relpath(folder / previous, link.parent))
    return link


def invoke(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(cli, args)


def assert_refused(result: Result, code: int, *names: str) -> None:
    """Exit `code`, no exception but the exit, no traceback, and each of `names` in the output."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == code, result.output
    for name in names:
        assert name in result.output, result.output


# ---------------------------------------------------------------------------------------------------------------
# The helper


def test_a_long_chain_is_a_loop_as_the_kernel_says(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    head = link_chain(tmp_path / "head", "f")
    with pytest.raises(OSError) as kernel:
        os.stat(head)
    assert kernel.value.errno == errno.ELOOP
    unresolved = real_path(head)  # not strict: resolved as far as the links go, as realpath leaves a loop
    assert Path(unresolved).is_relative_to(tmp_path) and unresolved != str(tmp_path / "f")
    for call in (lambda: real_path(head, strict=True), lambda: resolve(head), lambda: resolve(head, strict=True)):
        with pytest.raises(OSError) as raised:
            call()
        assert raised.value.errno == errno.ELOOP


def test_a_loop_is_returned_unresolved_or_refused(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    assert real_path(loop) == str(loop)
    assert real_path(loop / "inside" / ".." / "x") == str(loop / "x")  # the rest as written, normalized
    for call in (lambda: real_path(loop, strict=True), lambda: resolve(loop), lambda: resolve(loop, strict=True)):
        with pytest.raises(OSError) as raised:
            call()
        assert raised.value.errno == errno.ELOOP


def test_a_chain_the_kernel_follows_is_followed_to_its_end(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    head = link_chain(tmp_path / "head", "f", links=MAX_LINKS)
    assert head.read_text(encoding="utf-8") == "x"  # the kernel follows it too
    assert real_path(head, strict=True) == str(tmp_path / "f")
    assert resolve(head, strict=True) == tmp_path / "f"


def test_links_and_dots_resolve_as_the_standard_library_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "f").write_text("x", encoding="utf-8")
    (tmp_path / "e").symlink_to("d/e")
    (tmp_path / "d" / "up").symlink_to("../e")
    (tmp_path / "abs").symlink_to(tmp_path / "d")
    monkeypatch.chdir(tmp_path)
    for name in ("e/f", "d/up/f", "abs/e/../e/f", "e/..", "d/up/..", ".", "", "../" + tmp_path.name + "/e"):
        for strict in (False, True):
            assert real_path(name, strict=strict) == os.path.realpath(name, strict=strict), name
            assert resolve(Path(name), strict=strict) == Path(name).resolve(strict=strict), name


def test_a_missing_target_is_kept_unless_strict(tmp_path: Path) -> None:
    dangling = tmp_path / "dangling"
    dangling.symlink_to("missing/file")
    assert real_path(dangling) == str(tmp_path / "missing" / "file")
    assert resolve(dangling / ".." / "other") == tmp_path / "missing" / "other"
    for call in (lambda: real_path(dangling, strict=True), lambda: resolve(dangling, strict=True)):
        with pytest.raises(FileNotFoundError):
            call()


# Random trees of folders, files and links (relative and absolute targets, `..` and `.` in them, trailing and
# repeated slashes, dangling links, loops, links to `/`), and random paths in them, absolute or relative to a random
# working folder: a few thousand paths, each compared with the standard library and with what the kernel opens.
_NAMES = ("a", "b", "c", "l", "m")
_PARTS = (*_NAMES, "..", ".", "", "a", "b")


def _outcome(call: Callable[[], object]) -> tuple[object, ...]:
    """A call's value, or the kind of error it raised (Python 3.11's RuntimeError for a loop is the ELOOP it means)."""
    try:
        return ("value", call())
    except RuntimeError:
        return ("error", OSError, errno.ELOOP)
    except OSError as error:
        return ("error", type(error), error.errno)


def _random_tree(rng: random.Random, base: Path) -> list[Path]:
    """Folders, files and links under `base`: the folders made, `base` first."""
    folders = [base]
    for _ in range(rng.randint(3, 10)):
        path = rng.choice(folders) / rng.choice(_NAMES)
        if os.path.lexists(path):
            continue
        kind, words = rng.random(), "/".join(rng.choice(_PARTS) for _ in range(rng.randint(1, 4)))
        if kind < 0.35:
            path.mkdir()
            folders.append(path)
        elif kind < 0.5:
            path.write_bytes(b"")
        else:
            choice = rng.random()
            target = (
                f"{base}/{words}" if choice < 0.15 else "/" if choice < 0.2 else f"/{words}" if choice < 0.25 else words
            )
            path.symlink_to(target + ("/" if rng.random() < 0.1 else "") or ".")
    return folders


def _random_path(rng: random.Random, base: Path, folders: list[Path], monkeypatch: pytest.MonkeyPatch) -> str:
    words = "/".join(rng.choice(_PARTS) for _ in range(rng.randint(0, 6)))
    if rng.random() < 0.5:
        monkeypatch.chdir(rng.choice(folders))
        return words
    return f"{base}{'//' if rng.random() < 0.1 else '/'}{words}{'/' if rng.random() < 0.2 else ''}"


def _compare(path: str) -> None:
    """`path` resolves as the standard library resolves it, unless it is a loop (or a chain past `MAX_LINKS`): then
    the kernel does not open it either. A path the kernel opens resolves strictly to the file it opens."""
    given_up = _outcome(lambda: resolve(Path(path))) == ("error", OSError, errno.ELOOP)
    kernel = _outcome(lambda: os.stat(path))
    for strict in (False, True):
        ours = _outcome(partial(real_path, path, strict=strict))
        ours_resolved = _outcome(partial(resolve, Path(path), strict=strict))
        if not given_up:
            assert ours == _outcome(partial(os.path.realpath, path, strict=strict)), (path, strict)
            assert ours_resolved == _outcome(partial(Path(path).resolve, strict=strict)), (path, strict)
        elif ours_resolved[0] == "value":
            pytest.fail(f"{path}: a loop resolved (strict={strict})")
    if given_up:
        assert kernel[0] == "error", path
    if kernel[0] == "value":
        assert os.stat(real_path(path, strict=True)) == kernel[1], path
    elif kernel[2] == errno.ELOOP:
        assert _outcome(lambda: real_path(path, strict=True))[0] == "error", path


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_resolve_as_the_standard_library_and_the_kernel(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for tree in range(50):
        rng = random.Random(seed * 1_000 + tree)
        base = Path(os.path.realpath(tmp_path)) / f"t{tree}"
        base.mkdir()
        folders = _random_tree(rng, base)
        for _ in range(20):
            _compare(_random_path(rng, base, folders, monkeypatch))


def test_links_spread_over_a_path_count_together_as_the_kernel_counts_them(tmp_path: Path) -> None:
    """Linux follows `MAX_LINKS` links in all for one path, those of nested targets and repeated hops included:
    a path within that many resolves to the file the kernel opens, one past it is a loop to both."""
    (tmp_path / "d" / "d").mkdir(parents=True)
    (tmp_path / "d" / "d" / "f").write_text("x", encoding="utf-8")
    link_chain(tmp_path / "x", "d", links=12)  # 12 links to d
    (tmp_path / "y").symlink_to("x/../x")  # 1 + 12 + 12
    for path, links in (
        ("x/d/f", 12),
        ("y/d/f", 25),
        ("y/../y/d/f", 50),
        ("x/../y/../x/d/f", 49),
        ("x/../x/../x/d/f", 36),
    ):
        name = str(tmp_path / path)
        if links <= MAX_LINKS:
            assert os.stat(name) == os.stat(tmp_path / "d" / "d" / "f")
            assert real_path(name, strict=True) == str(tmp_path / "d" / "d" / "f"), path
        else:
            with pytest.raises(OSError) as kernel:
                os.stat(name)
            assert kernel.value.errno == errno.ELOOP
            with pytest.raises(OSError) as ours:
                resolve(Path(name))
            assert ours.value.errno == errno.ELOOP, path


# ---------------------------------------------------------------------------------------------------------------
# The commands


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A catalog with a capidx.yaml (`out: build`) and a good build in build/."""
    return built_project(tmp_path / "project")


def _chain_document(project: Path) -> Path:
    """The first agent's document replaced by a long chain ending at a copy of it, the chain inside the catalog."""
    document = project / "agents" / "claude-code" / "capabilities" / "current.json"
    shutil.move(document, document.with_name("copy.json"))
    return link_chain(document, "copy.json")


def test_validate_says_a_chained_document_is_a_loop(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _chain_document(project)
    assert_refused(invoke(["validate"], project, monkeypatch), 2, "claude-code/capabilities/current.json")


@pytest.mark.parametrize("kind", ["chain", "loop"])
def test_a_schema_ref_to_a_chain_or_a_loop_is_no_local_schema(
    kind: str, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resolving a `$ref` ended in a RecursionError for a chain and, in build, a RuntimeError for a loop."""
    schema = json.loads((REPO / "schema" / "capability-schema.json").read_text(encoding="utf-8"))
    schema["properties"]["x-more"] = {"$ref": "more.json"}
    (project / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    if kind == "loop":
        (project / "more.json").symlink_to("more.json")
    else:
        (project / "more-copy.json").write_text("{}", encoding="utf-8")
        link_chain(project / "more.json", "more-copy.json")
    before = snapshot(project / "build")
    for command in ("validate", "build"):
        assert_refused(invoke([command, "--schema", "schema.json"], project, monkeypatch), 2, "more.json")
    assert snapshot(project / "build") == before


def test_build_refuses_a_chained_template_and_keeps_the_previous_build(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(project / "build")
    (project / "templates").mkdir()
    (project / "summary.md.j2").write_text("summary\n", encoding="utf-8")
    link_chain(project / "templates" / "summary.md.j2", "../summary.md.j2")
    assert_refused(invoke(["build", "-q"], project, monkeypatch), 1, "summary.md.j2")
    assert snapshot(project / "build") == before


def test_build_refuses_an_out_folder_given_by_a_chain(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = snapshot(project / "build")
    link_chain(project / "out", "build")
    assert_refused(invoke(["build", "-q", "--out", "out"], project, monkeypatch), 2, "out")
    assert snapshot(project / "build") == before


def test_report_refuses_a_chained_manifest_and_a_chained_output(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = project / "other"
    shutil.copytree(project / "build", other)
    (other / "manifest.json").rename(project / "manifest-copy.json")
    link_chain(other / "manifest.json", "../manifest-copy.json")
    for args in (["report", "--build", "other"], ["report", "--against", "other/manifest.json"]):
        assert_refused(invoke(args, project, monkeypatch), 2, "manifest.json")
    link_chain(project / "report.md", "written.md")
    assert_refused(invoke(["report", "-o", "report.md"], project, monkeypatch), 2, "report.md")
    assert not (project / "written.md").exists()


def test_inject_refuses_a_build_given_by_a_chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_memory_build(tmp_path / "build", "# Capabilities\n")
    link_chain(tmp_path / "chained", "build")
    assert_refused(invoke(["inject", "--build", "chained", "AGENTS.md"], tmp_path, monkeypatch), 2, "chained")
    link_chain(tmp_path / "CLAUDE.md", "memory.md")
    assert_refused(invoke(["inject", "CLAUDE.md"], tmp_path, monkeypatch), 2, "CLAUDE.md")
    assert not (tmp_path / "AGENTS.md").exists() and not (tmp_path / "memory.md").exists()


def test_verify_says_a_chained_document_is_a_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_catalog(tmp_path)
    _chain_document(tmp_path)
    assert_refused(invoke(["verify"], tmp_path, monkeypatch), 2, "claude-code/capabilities/current.json")


def test_serve_refuses_a_build_folder_chained_inside_the_build(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server follows links inside the build only to files inside it: a chained folder is not followed."""
    build = project / "build"
    (build / "agents").rename(build / "agents-copy")
    link_chain(build / "agents", "agents-copy")
    assert_refused(invoke(["serve", "--build", "build", "--no-reload"], project, monkeypatch), 2, "agents")


def test_validate_says_a_document_named_through_a_chained_folder_is_missing(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Telling one document met by two names apart (`_entry`) resolved the named file's folder with realpath."""
    link_chain(project / "agents" / "cc", "claude-code")
    for named in ("agents/cc/capabilities/current.json", "agents/cc/capabilities"):
        assert_refused(invoke(["validate", named], project, monkeypatch), 2, named)


@pytest.mark.parametrize("named", ["catalog", "catalog/sub"])
def test_init_refuses_a_folder_given_by_a_chain(named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below the top of a work tree, init placed the CI files by the catalog folder's real path, taken with realpath:
    a chained folder (or a chain on its way) ended in a RecursionError."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "real").mkdir()
    link_chain(tmp_path / "catalog", "real")
    assert_refused(invoke(["init", named], tmp_path, monkeypatch), 2, f"{named}/capidx.yaml")
    assert sorted(path.name for path in tmp_path.iterdir()) == [".catalog-chain", ".git", "catalog", "real"]
    assert not any((tmp_path / "real").iterdir())
