"""The wheel works outside the checkout: schemas (and templates) ship inside it and load via importlib.resources.

The wheel is built from a copy of the working tree (building in place would write build/ into the
checkout), in build's isolated environment: `--no-isolation` would use this interpreter's setuptools,
which may predate the PEP 639 `license = "MIT"` the project declares (setuptools >= 77).

It is installed, without its dependencies and without network, into a fresh virtualenv that has no pip of its
own. The dependencies come from the interpreter running the tests: a `.pth` file in the virtualenv names this
interpreter's site-packages directories. Not `system_site_packages=True`: inside a venv, "system" is the base
interpreter, which need not have any dependency. A `.pth` line that is a plain path adds the directory without
running the `.pth` files inside it, so the editable install of the checkout (an import hook started by a `.pth`
file) stays invisible; `test_installed_code_and_data_come_from_the_wheel` proves it. pip itself is this
interpreter's, reached through the same `.pth` file and run by the virtualenv's python so that it installs
there (scripts included, with the virtualenv's python in their first line).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.long_setup]

REPO = Path(__file__).resolve().parent.parent
CASES = Path(__file__).parent / "cases" / "validate"


@pytest.fixture(scope="module")
def wheel_source(source_tree_factory: Callable[[str], Path]) -> Path:
    return source_tree_factory("wheel-source")


@pytest.fixture(scope="module")
def wheel(wheel_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = wheel_source
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
        # The isolated build environment is thrown away after the build: compiling its setuptools' ~800 modules
        # to bytecode (~0.7 s of CPU) would be wasted. "false": pip reads its negative options from the environment
        # inverted (PIP_NO_COMPILE=1 compiles).
        env={**os.environ, "PIP_NO_COMPILE": "false"},
    )
    (built,) = out.glob("capidx-*.whl")
    return built


def running_site_dirs() -> list[str]:
    """Where the running interpreter's packages (the wheel's dependencies, and pip) are installed."""
    dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if Path(d).is_dir()]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The virtualenv's bin directory, with the wheel installed."""
    env = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    bin_dir = env / ("Scripts" if sys.platform == "win32" else "bin")
    python = bin_dir / "python"
    env_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(env_site) / "running-interpreter.pth").write_text("\n".join(running_site_dirs()) + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "-q", str(wheel)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    return bin_dir


def test_wheel_contains_package_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in ("capability-schema.json", "aliases-schema.json", "config-schema.json"):
        assert f"capidx/schema/{schema}" in names
    templates = sorted(path.name for path in (REPO / "templates").glob("*.j2"))
    for template in templates:  # present once the templates are written
        assert f"capidx/templates/{template}" in names
    for path in sorted((REPO / "templates" / "site").iterdir()):  # the page of build/site and its assets
        assert f"capidx/templates/site/{path.name}" in names
    for init in sorted((REPO / "compiler").rglob("__init__.py")):  # every package pyproject.toml must list
        assert f"capidx/compiler/{init.relative_to(REPO / 'compiler').as_posix()}" in names


def test_installed_wheel_validates_a_catalog_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    project = tmp_path / "elsewhere"
    shutil.copytree(CASES / "valid" / "full", project, ignore=shutil.ignore_patterns("expected.txt"))

    result = subprocess.run(
        [str(installed / "capidx"), "validate", "--today", "2026-01-15"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 files valid" in result.stdout

    broken = project / "agents" / "alpha" / "capabilities" / "current.json"
    broken.write_text(broken.read_text().replace('"code-refactoring"', '"code-refactor"', 1))
    result = subprocess.run(
        [str(installed / "capidx"), "validate", "--format", "json"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["diagnostics"][0]["line"] == 11


def test_installed_code_and_data_come_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    """The running interpreter's site-packages are visible (for the dependencies) but the editable install of the
    checkout is not: every capidx module and data file comes from the virtualenv."""
    script = (
        "import sys, importlib.resources as r\n"
        "import capidx.compiler.validate.run, capidx.compiler.cli, capidx.schema\n"
        "mods = {m.__name__: m.__file__ for m in list(sys.modules.values())"
        " if m.__name__.startswith('capidx.') and getattr(m, '__file__', None)}\n"
        "print(sys.prefix)\n"
        "print(r.files('capidx.schema').joinpath('capability-schema.json'))\n"
        "print('\\n'.join(sorted(mods.values())))\n"
    )
    lines = subprocess.run(
        [str(installed / "python"), "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    prefix, schema, *modules = lines
    assert schema.startswith(prefix) and modules
    assert all(module.startswith(prefix) for module in modules), modules
    # as paths, not strings: a temporary folder named like the checkout plus a suffix ('/tmp/x-tmp') is not in it
    assert not any(Path(line).is_relative_to(REPO) for line in lines)


def test_building_the_package_leaves_build_free_for_capidx(wheel: Path, wheel_source: Path) -> None:
    """setuptools' scratch directory defaults to ./build, where `capidx build` writes the index; a
    `pip install .` then made the README's main command fail (capidx refuses to replace a directory that
    is not a capidx build). setup.cfg moves setuptools' scratch directory out of the way."""
    assert wheel.exists()
    assert not (wheel_source / "build").exists()
