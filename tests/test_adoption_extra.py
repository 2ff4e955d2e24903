"""The light install (issue #15, item 2): the server's dependencies are the `serve` extra.

`pip install capidx` must still run README's main command (`capidx validate -q && capidx build &&
capidx report`), and `capidx serve` without the extra must exit 2 with a one-line hint. Both are run
in subprocesses whose Python cannot import anything that only the extra brings: a `sitecustomize`
on PYTHONPATH (inherited by the build's helper processes) refuses those modules, as a base install
would not have them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

import pytest
from catalog_factory import write_catalog

# Top-level modules of the distributions that only `capidx[serve]` installs (mcp and its closure,
# rapidfuzz, watchfiles), computed from the installed metadata when this test was written.
SERVE_ONLY_MODULES = (
    "annotated_types anyio h11 httpcore2 httpx2 jwt mcp mcp_types multipart opentelemetry pydantic pydantic_core "
    "python_multipart rapidfuzz sse_starlette starlette truststore typing_inspection uvicorn watchfiles"
).split()

_BLOCKER = f"""
import sys

class _NotInstalled:
    \"\"\"Pretends the serve extra is not installed: its modules cannot be imported.\"\"\"
    blocked = {set(SERVE_ONLY_MODULES)!r}

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""


@pytest.fixture
def base_install_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_BLOCKER, encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def _capidx(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capidx", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_blocker_blocks(base_install_env: dict[str, str], tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import mcp"], env=base_install_env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0 and "No module named 'mcp'" in result.stderr


def test_serve_is_an_extra_and_the_test_extra_brings_it() -> None:
    requirements = requires("capidx") or []
    names = {re.split(r"[ ;<>=!~\[]", requirement)[0]: requirement for requirement in requirements}
    for name in ("mcp", "rapidfuzz", "watchfiles"):
        assert 'extra == "serve"' in names[name], names[name]
    assert any(r.startswith("capidx[serve]") and 'extra == "test"' in r for r in requirements)


@pytest.mark.slow
def test_readme_main_command_works_without_the_serve_extra(base_install_env: dict[str, str], tmp_path: Path) -> None:
    write_catalog(tmp_path)
    for command in (["validate", "-q"], ["build"], ["report"]):
        result = _capidx(*command, cwd=tmp_path, env=base_install_env)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
    assert (tmp_path / "build" / "manifest.json").is_file()


def test_serve_without_the_extra_exits_2_with_a_one_line_hint(base_install_env: dict[str, str], tmp_path: Path) -> None:
    result = _capidx("serve", cwd=tmp_path, env=base_install_env)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "pip install 'capidx[serve]'" in result.stderr
    assert "Traceback" not in result.stderr
    assert _capidx("serve", "--help", cwd=tmp_path, env=base_install_env).returncode == 0
