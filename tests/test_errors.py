"""One error tree (capidx.compiler.errors): every compiler error a user can see is a `CapidxError` carrying
its exit code, it reaches click (or `capidx build`'s one handler) as raised, and nothing translates one
error type into another by hand."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from catalog_factory import run_cli, write_catalog

import capidx.compiler
from capidx.compiler.diagnostics import ExitCode
from capidx.compiler.errors import CapidxError, InvalidError, UsageError

COMPILER = Path(capidx.compiler.__file__).resolve().parent

# Exceptions that never reach a user: each is caught inside the compiler and turned into something the
# user reads in its own form (a diagnostic with file:line:col, a verdict, or a CapidxError with a better
# message). Deriving them from CapidxError would suggest they may travel to click; they may not.
INTERNAL = {
    # markers that do not pair in one memory file: inject.run collects it with the other files' problems (exit 2)
    "capidx.compiler.inject.block.MarkerError": "caught in inject.run",
    # the tiktoken file is not in the cache: tokens.py words it as EncodingUnavailable (exit 2)
    "capidx.compiler.emit.tokens._NotCached": "caught in tokens.load_encoding",
    # stops a runaway render early: render.py words it as TemplateFailure (exit 1)
    "capidx.compiler.render.environment._OutputTooLarge": "caught in render.get_renderer",
    # a $id or $ref urllib cannot read as a URI: schemarefs.py turns it into a diagnostic at its place
    "capidx.compiler.validate.schemarefs.MalformedUri": "caught in schemarefs.py",
    # a $ref capidx will not follow: schemarefs.py turns it into a diagnostic naming the reference
    "capidx.compiler.validate.schemarefs.NonLocalReference": "caught in schemarefs.py",
    # checking a document against a user's schema took too long: schemas.py says it as an error of the schema file
    "capidx.compiler.validate.schemacost.TooCostly": "caught in schemas.schema_diagnostics",
    # one match of a user schema's regex took too long: said as an error at the value it was matched against
    "capidx.compiler.validate.schemacost.SlowPattern": "caught in schemas.schema_diagnostics and validate.run",
    # a schema file referencing cannot read: schemarefs.py turns it into a diagnostic of that file
    "capidx.compiler.validate.schemarefs.UnreadableSchema": "caught in schemarefs.py",
    # a baseline whose documents cannot be read: the report says its data comparison is unavailable, and why
    "capidx.compiler.report.artifact_reader.ArtifactUnreadable": "caught in report.run",
    "capidx.compiler.report.datadiff.DataUnavailable": "caught in report.datadiff",
    # a page that cannot be fetched is a verdict on that source (broken), reported with the others
    "capidx.compiler.verify.fetch.FetchFailure": "caught in verify.fetch",
    # a file verify --write cannot edit safely: listed as "not edited: ..." with the other problems
    "capidx.compiler.verify.rewrite.RewriteError": "caught in verify.run",
    # a schema's category defined in a way not read (an alternative, another file): defined_categories gives none
    "capidx.compiler.validate.schemacategories._Unread": "caught in schemacategories.defined_categories",
}


def _compiler_modules() -> list[str]:
    names = [capidx.compiler.__name__]
    for info in pkgutil.walk_packages(capidx.compiler.__path__, prefix="capidx.compiler."):
        names.append(info.name)
    return names


def _compiler_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a compiler module, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for name in _compiler_modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return found


def test_every_compiler_exception_is_a_capidx_error_or_listed_as_internal() -> None:
    found = _compiler_exceptions()
    assert "capidx.compiler.render.environment.TemplateFailure" in found  # the walk does see the modules
    stray = sorted(name for name, cls in found.items() if not issubclass(cls, CapidxError) and name not in INTERNAL)
    assert not stray, f"derive these from capidx.compiler.errors (or list them in INTERNAL, saying why): {stray}"
    assert not set(INTERNAL) - set(found), "INTERNAL lists classes that no longer exist"
    for name, cls in found.items():
        if name in INTERNAL:
            assert not issubclass(cls, click.ClickException), f"{name} is internal but would print as a user error"
        else:
            assert int(cls.exit_code) in (ExitCode.INVALID, ExitCode.USAGE), name


def test_the_codes_are_on_the_tree() -> None:
    assert UsageError("x").exit_code == ExitCode.USAGE == 2
    assert InvalidError("x").exit_code == ExitCode.INVALID == 1
    assert CapidxError("x", ExitCode.USAGE).exit_code == 2  # an error whose code is known only when raised
    from capidx.compiler.emit.outdir import OutputError
    from capidx.compiler.emit.tokens import EncodingUnavailable
    from capidx.compiler.render.environment import TemplateFailure

    assert OutputError("x").exit_code == 2 and TemplateFailure("x").exit_code == 1
    assert EncodingUnavailable("x", ExitCode.INVALID).exit_code == 1
    assert str(TemplateFailure("t.md.j2:1: boom")) == "t.md.j2:1: boom"
    assert TemplateFailure("t.md.j2:1: boom").format_message() == "template error: t.md.j2:1: boom"


def test_exit_code_is_defined_once() -> None:
    definitions = [
        f"{path.relative_to(COMPILER)}"
        for path in COMPILER.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and node.name == "ExitCode"
    ]
    assert definitions == ["diagnostics.py"]


# --- no hand translation -----------------------------------------------------------------------------


def _translations(source: str, capidx_errors: set[str]) -> list[str]:
    """`except SomeCapidxError: raise Other(...)` handlers in `source` ("line: caught -> raised")."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler) or node.type is None:
            continue
        caught_nodes = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        caught = {
            item.id if isinstance(item, ast.Name) else item.attr
            for item in caught_nodes
            if isinstance(item, ast.Name | ast.Attribute)
        }
        ours = caught & capidx_errors
        if not ours:
            continue
        for inner in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(inner, ast.Raise) and inner.exc is not None:
                found.append(f"{node.lineno}: {sorted(ours)} -> {ast.unparse(inner.exc)}")
    return found


def test_the_translation_check_finds_a_translation() -> None:
    source = "try:\n    f()\nexcept OutputError as exc:\n    raise BuildFailure(str(exc), 2) from None\n"
    assert _translations(source, {"OutputError"}) == ["3: ['OutputError'] -> BuildFailure(str(exc), 2)"]
    assert _translations("try:\n    f()\nexcept OutputError:\n    raise\n", {"OutputError"}) == []
    assert _translations("try:\n    f()\nexcept OSError as e:\n    raise OutputError(e)\n", {"OutputError"}) == []


def test_no_module_translates_a_capidx_error_into_another() -> None:
    """A CapidxError is raised once, where the problem is known, with its message and code: nothing catches
    it to raise another (the hand translation this tree replaced: `except OutputError: raise BuildFailure`)."""
    names = {cls.__name__ for cls in _compiler_exceptions().values() if issubclass(cls, CapidxError)}
    names |= {"CapidxError", "UsageError", "InvalidError", "ClickException"}
    found = {
        str(path.relative_to(COMPILER)): hits
        for path in sorted(COMPILER.rglob("*.py"))
        if (hits := _translations(path.read_text(encoding="utf-8"), names))
    }
    assert not found, found


# --- end to end ----------------------------------------------------------------------------------------


def test_a_missing_build_exits_2_with_one_error_line(tmp_path: Path) -> None:
    """A real process: click prints `Error: <message>` and exits with the error's code, no traceback."""
    missing = tmp_path / "nowhere"
    result = subprocess.run(
        [sys.executable, "-m", "capidx", "report", "--build", str(missing)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("Error: ") and str(missing) in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_init_over_existing_files_exits_2(tmp_path: Path) -> None:
    (tmp_path / "capidx.yaml").write_text("# mine\n", encoding="utf-8")
    result = run_cli(["init", str(tmp_path)], cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ") and "capidx.yaml" in result.stderr and "--force" in result.stderr
    assert (tmp_path / "capidx.yaml").read_text(encoding="utf-8") == "# mine\n"


def test_an_unwritable_step_summary_is_an_io_error_for_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 2 like `verify` and `report` (it was 1 for validate alone): an output that cannot be written."""
    write_catalog(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a folder: cannot be appended to
    result = run_cli(["validate", "--format", "github", "agents"], cwd=tmp_path)
    assert result.exit_code == 2
    assert "Error: cannot append to $GITHUB_STEP_SUMMARY" in result.stderr


def test_build_over_a_foreign_folder_exits_2_and_says_nothing_was_written(tmp_path: Path) -> None:
    """An OutputError propagates from outdir.py to `capidx build`'s one handler: `error:` and the note."""
    write_catalog(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    result = run_cli(["build", "--out", str(out), "-q"], cwd=tmp_path)
    assert result.exit_code == 2
    assert f"error: {out}: not a capidx build directory" in result.stderr
    assert f"build not written; {out} is unchanged" in result.stderr
    assert [path.name for path in out.iterdir()] == ["notes.txt"]


def test_a_broken_template_exits_1_with_file_and_line(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "category.md.j2").write_text("line one\n{% if %}\n", encoding="utf-8")
    out = tmp_path / "build"
    result = run_cli(["build", "--out", str(out), "--templates", str(templates), "-q"], cwd=tmp_path)
    assert result.exit_code == 1
    assert "error: template error: " in result.stderr and "category.md.j2:2: template syntax error" in result.stderr
    assert f"build not written; nothing is at {out}" in result.stderr
    assert not out.exists()
