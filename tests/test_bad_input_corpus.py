"""The whole bad-input corpus through every command that reads such input: no traceback, the documented exit code.

Issue #14 ("Done when"): exit codes are 1 for invalid data and 2 for usage or I/O problems, in every
command, and no input makes a traceback reach the user. Three families of input:

- `tests/cases/validate/invalid/*`: catalogs. `capidx validate` exits as the case's expected.txt says;
  `capidx build` of the same catalog (the case's options translated to build's) exits exactly as
  `capidx validate` does on it, writes nothing, and prints no traceback.
- Files no repository can hold (a pipe, a directory, a link loop, a chain of more links than the kernel follows,
  `/dev/zero`, a file over the size limit, an unreadable file), made by this module in place of a capability
  document, the alias table, the `--config` file and the `--schema` file: exit 2 from validate and from build,
  with and without a previous build (which stays byte for byte as it was), and nothing hangs.
- `tests/cases/manifest/*`: build directories whose manifest.json is broken (plus pipes and devices made
  here): `capidx report` (as `--build` and as `--against`), `capidx serve` (which must refuse to start) and,
  where expected.txt says `# build: N`, `capidx build --out` into that folder (refused: not a build).
  expected.txt lines: `# exit: N`, `# build: N`, `# nest: N` (the test writes a manifest.json nested N
  levels deep) and fragments the output must contain, either for every command or as `report: text`,
  `serve: text`, `build: text`.

Everything runs in-process through click's runner. Builds count tokens in-process and lazily (no counting
process, no encoding loaded unless an artifact is rendered), which only makes failing builds faster.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from catalog_factory import documents, snapshot, write_catalog
from click.testing import CliRunner, Result
from manifest_factory import make_manifest, write_build
from test_link_chains import link_chain
from test_validate_cases import DEFAULT_TODAY, parse_expected

from capidx.cli import cli
from capidx.compiler import files
from capidx.compiler.validate.load import MAX_FILE_BYTES

CASES = Path(__file__).parent / "cases"
REPO = Path(__file__).resolve().parent.parent


def invoke(args: list[str], cwd: Path) -> Result:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        return CliRunner().invoke(cli, args, catch_exceptions=True)


def assert_clean(result: Result, what: str) -> None:
    """No exception escaped the command and no traceback was printed."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (what, result.exception)
    assert "Traceback" not in result.output, f"{what}:\n{result.output}"


# ---------------------------------------------------------------------------------------------------------------
# Catalogs: tests/cases/validate/invalid


def _catalog_cases() -> list[pytest.param]:
    root = CASES / "validate" / "invalid"
    return [pytest.param(case, id=case.name) for case in sorted(root.iterdir()) if case.is_dir()]


def as_build_options(args: list[str], project: Path) -> list[str]:
    """The options of a validate case that `capidx build` has too; a folder named as PATHS becomes `--agents`.
    Left out: `--max-age-days` (build reads `staleness.error_days` from capidx.yaml only) and files named as
    PATHS (build reads a whole catalog). Both commands then run with exactly these options."""
    options: list[str] = []
    given = iter(args)
    for arg in given:
        if arg in ("--strict", "--no-aliases"):
            options.append(arg)
        elif arg in ("--schema", "--aliases", "--config", "--agents"):
            options += [arg, next(given)]
        elif arg == "--max-age-days":
            next(given)
        elif not arg.startswith("-") and (project / arg).is_dir():
            options += ["--agents", arg]
    return options


@pytest.mark.parametrize("case", _catalog_cases())
def test_a_bad_catalog(case: Path, tmp_path: Path) -> None:
    expectation = parse_expected(case / "expected.txt", 1)
    project = tmp_path / case.name
    shutil.copytree(case, project, ignore=shutil.ignore_patterns("expected.txt"))

    documented = invoke(["validate", "--today", expectation.today or DEFAULT_TODAY, *expectation.args], project)
    assert_clean(documented, "validate")
    assert documented.exit_code == expectation.exit_code, documented.output

    options = as_build_options(expectation.args, project)
    validated = invoke(["validate", *options], project)  # today's date, as build judges freshness
    built = invoke(["build", "--out", str(tmp_path / "out"), "-q", *options], project)
    assert_clean(validated, "validate")
    assert_clean(built, "build")
    assert built.exit_code == validated.exit_code, f"validate:\n{validated.output}\nbuild:\n{built.output}"
    if built.exit_code != 0:
        assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------------
# Files no repository can hold


@dataclass(frozen=True)
class Target:
    """Which input is replaced, and the options that make the commands read it."""

    name: str
    relative: str
    options: tuple[str, ...] = ()


TARGETS = (
    Target("document", "agents/claude-code/capabilities/current.json"),
    Target("aliases", "agents/aliases.json"),
    Target("config", "capidx.yaml", ("--config", "capidx.yaml")),
    Target("schema", "capability-schema.json", ("--schema", "capability-schema.json")),
)


def _pipe(path: Path) -> None:
    os.mkfifo(path)  # reading it would block forever


def _directory(path: Path) -> None:
    path.mkdir()


def _link_loop(path: Path) -> None:
    path.symlink_to(path.name)


def _link_chain(path: Path) -> None:
    """1,500 links ending at a file: Python 3.11's realpath recursed once per link, to a RecursionError."""
    target = path.with_name(f".{path.name}.target")
    target.write_text("{}\n", encoding="utf-8")
    link_chain(path, target.name)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")  # reading it never ends


def _too_large(path: Path) -> None:
    # Sparse past the limit: capidx refuses the file by its size, and twelve cases no longer write 10 MB each.
    with path.open("wb") as handle:
        handle.write(b'{"padding": "')
        handle.truncate(MAX_FILE_BYTES + 16)


KINDS: dict[str, Callable[[Path], None]] = {
    "pipe": _pipe,
    "directory": _directory,
    "link-loop": _link_loop,
    "link-chain": _link_chain,
    "dev-zero": _dev_zero,
    "too-large": _too_large,
}


def _deny_reading(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `path` unreadable. As root, permissions do not stop reading: then every way capidx (today or
    before) reads a data file is made to fail for that one path, as a chmod 000 would."""
    if os.geteuid() != 0:
        path.chmod(0)
        return
    denied = os.path.abspath(path)

    def refuse(file: object) -> None:
        if isinstance(file, str | os.PathLike) and os.path.abspath(file) == denied:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(file))

    def guarded_open(file: object, *args: object, **kwargs: object) -> object:
        refuse(file)
        return open(file, *args, **kwargs)  # type: ignore[call-overload]

    real_read_bytes = Path.read_bytes

    def guarded_read_bytes(self: Path) -> bytes:
        refuse(self)
        return real_read_bytes(self)

    monkeypatch.setattr(files, "open", guarded_open, raising=False)
    monkeypatch.setattr(Path, "read_bytes", guarded_read_bytes)


def make_project(root: Path) -> Path:
    write_catalog(root, documents())
    (root / "capidx.yaml").write_text("paths:\n  agents: agents\n", encoding="utf-8")
    shutil.copy(REPO / "schema" / "capability-schema.json", root / "capability-schema.json")
    return root


@pytest.fixture(scope="module")
def previous_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a good build in build/: each test copies it."""
    root = make_project(tmp_path_factory.mktemp("previous"))
    result = invoke(["build", "--out", "build", "-q"], root)
    assert result.exit_code == 0, result.output
    return root


def _special_cases() -> Iterator[pytest.param]:
    for target in TARGETS:
        for kind in (*KINDS, "unreadable"):
            for command in ("validate", "build", "build-over-previous"):
                yield pytest.param(target, kind, command, id=f"{target.name}-{kind}-{command}")


@pytest.mark.parametrize(("target", "kind", "command"), list(_special_cases()))
def test_an_input_that_cannot_be_read(
    target: Target, kind: str, command: str, previous_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    if command == "build-over-previous":
        shutil.copytree(previous_build, project, symlinks=True)
    else:
        make_project(project)
    before = snapshot(project / "build") if (project / "build").exists() else None
    path = project / target.relative
    if kind == "unreadable":
        _deny_reading(path, monkeypatch)
    else:
        path.unlink()
        KINDS[kind](path)

    args = ["validate", *target.options] if command == "validate" else ["build", "-q", *target.options]
    result = invoke(args, project)
    assert_clean(result, command)
    assert result.exit_code == 2, result.output
    assert path.name in result.output
    if before is not None:
        assert snapshot(project / "build") == before
    elif command == "build":
        assert not (project / "build").exists()


# ---------------------------------------------------------------------------------------------------------------
# Build directories: tests/cases/manifest


@dataclass
class ManifestCase:
    exit_code: int = 2
    build_exit: int | None = None
    nest: int | None = None
    everywhere: list[str] = field(default_factory=list)
    per_command: dict[str, list[str]] = field(default_factory=dict)

    def fragments(self, command: str) -> list[str]:
        return self.everywhere + self.per_command.get(command, [])


def parse_manifest_case(path: Path) -> ManifestCase:
    case = ManifestCase()
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            name, _, value = line[1:].strip().partition(":")
            if name == "exit":
                case.exit_code = int(value)
            elif name == "build":
                case.build_exit = int(value)
            elif name == "nest":
                case.nest = int(value)
            continue
        command, sep, fragment = line.partition(": ")
        if sep and command in ("report", "against", "serve", "build"):
            case.per_command.setdefault(command, []).append(fragment)
        else:
            case.everywhere.append(line)
    return case


def _manifest_cases() -> list[pytest.param]:
    root = CASES / "manifest"
    return [pytest.param(case, id=case.name) for case in sorted(root.iterdir()) if case.is_dir()]


def _nested(depth: int) -> str:
    """An object whose `catalog` is `depth` nested arrays (JSON parsers recurse; Python's raises RecursionError)."""
    return '{"format": 1, "catalog": ' + "[" * depth + "]" * depth + "}\n"


def run_manifest_commands(folder: Path, case: ManifestCase, cwd: Path) -> None:
    good = write_build(cwd / "good", make_manifest())
    runs = {
        "report": ["report", "--build", str(folder)],
        "against": ["report", "--build", str(good), "--against", str(folder)],
        "serve": ["serve", "--build", str(folder), "--no-reload"],
    }
    for command, args in runs.items():
        result = invoke(args, cwd)
        assert_clean(result, command)
        assert result.exit_code == case.exit_code, f"{command}:\n{result.output}"
        assert folder.name in result.output, f"{command}:\n{result.output}"
        told = command if command != "against" or "against" in case.per_command else "report"  # else as report
        for fragment in case.fragments(told):
            assert fragment in result.output, f"{command}: {fragment!r} not in\n{result.output}"
    if case.build_exit is not None:
        make_project(cwd / "project")
        before = _listing(folder)
        result = invoke(["build", "--out", str(folder), "-q"], cwd / "project")
        assert_clean(result, "build")
        assert result.exit_code == case.build_exit, f"build:\n{result.output}"
        for fragment in case.fragments("build"):
            assert fragment in result.output, f"build: {fragment!r} not in\n{result.output}"
        assert _listing(folder) == before


def _listing(folder: Path) -> dict[str, object]:
    """Every entry below `folder` with its bytes (regular files) or its mode (anything else), links not followed."""
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        regular = path.is_file() and not path.is_symlink()
        found[path.relative_to(folder).as_posix()] = path.read_bytes() if regular else path.lstat().st_mode
    return found


@pytest.mark.parametrize("case_dir", _manifest_cases())
def test_a_bad_build_directory(case_dir: Path, tmp_path: Path) -> None:
    case = parse_manifest_case(case_dir / "expected.txt")
    folder = tmp_path / case_dir.name
    shutil.copytree(case_dir / "build", folder)
    if case.nest is not None:
        (folder / "manifest.json").write_text(_nested(case.nest), encoding="utf-8")
    run_manifest_commands(folder, case, tmp_path)


SPECIAL_MANIFESTS: dict[str, Callable[[Path], None]] = {
    "pipe": _pipe,
    "dev-zero": _dev_zero,
    "link-loop": _link_loop,
    "link-chain": _link_chain,
}


@pytest.mark.parametrize("kind", SPECIAL_MANIFESTS)
def test_a_manifest_that_is_not_a_regular_file(kind: str, tmp_path: Path) -> None:
    """A pipe would block the reader forever and /dev/zero never ends: both are refused without reading; a link loop
    and a chain of too many links cannot be read."""
    folder = tmp_path / f"manifest-{kind}"
    folder.mkdir()
    SPECIAL_MANIFESTS[kind](folder / "manifest.json")
    run_manifest_commands(folder, ManifestCase(exit_code=2, build_exit=2), tmp_path)
    # Named directly (not its folder), by report and as a baseline:
    good = write_build(tmp_path / "good", make_manifest())
    for args in (
        ["report", "--build", str(folder / "manifest.json")],
        ["report", "--build", str(good), "--against", str(folder / "manifest.json")],
    ):
        result = invoke(args, tmp_path)
        assert_clean(result, "report")
        assert result.exit_code == 2, result.output
