"""The light install (issue #15, item 2): the server's dependencies are the `serve` extra.

`pip install capidx` must still run README's main command (`capidx validate -q && capidx build &&
capidx report`), and `capidx serve` without the extra must exit 2 with a one-line hint. Both are run
in subprocesses whose Python cannot import anything that only the extra brings: a `sitecustomize`
on PYTHONPATH (inherited by the build's helper processes) refuses those modules, as a base install
would not have them.
"""

from __future__ import annotations

import json
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


def test_the_blocker_blocks(base_install_env: dict[str, str]) -> None:
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


def _installed_from(env: dict[str, str], record: dict[str, object] | str | None) -> dict[str, str]:
    """`env` with a capidx distribution record first on the path, as pip leaves it (PEP 610's direct_url.json
    when `record` is given, as JSON or as the file's text; none for an install from a package index)."""
    info = Path(env["PYTHONPATH"].split(os.pathsep)[0]) / "capidx-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: capidx\nVersion: 0.1.0\n", encoding="utf-8")
    if record is not None:
        (info / "direct_url.json").write_text(record if isinstance(record, str) else json.dumps(record), "utf-8")
    return env


@pytest.mark.parametrize(
    ("record", "command"),
    [
        (
            {"url": "file:///src/my%20capidx", "dir_info": {"editable": True}},
            "pip install -e '/src/my capidx[serve]'",
        ),
        ({"url": "file:///src/capidx", "dir_info": {}}, "pip install '/src/capidx[serve]'"),
        (
            {"url": "https://example.org/team/capidx.git", "vcs_info": {"vcs": "git", "requested_revision": "v0.1"}},
            "pip install 'capidx[serve] @ git+https://example.org/team/capidx.git@v0.1'",
        ),
        (
            {"url": "file:///dl/capidx-0.1.0-py3-none-any.whl", "archive_info": {}},
            "pip install '/dl/capidx-0.1.0-py3-none-any.whl[serve]'",
        ),
        (None, ""),
    ],
)
def test_serve_without_the_extra_says_how_to_add_it_from_where_capidx_came(
    base_install_env: dict[str, str], tmp_path: Path, record: dict[str, object] | None, command: str
) -> None:
    env = _installed_from(base_install_env, record)
    result = _capidx("serve", cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    if record is None:  # no record of where it came from: the forms for a source folder and for an index
        assert "pip install -e '<folder>[serve]'" in result.stderr and "pip install 'capidx[serve]'" in result.stderr
    else:
        assert result.stderr.rstrip().endswith(f"{command} (mcp is not installed)"), result.stderr
    assert _capidx("serve", "--help", cwd=tmp_path, env=env).returncode == 0


@pytest.mark.parametrize("text", ["{not json", '["a list"]', '{"url": "file:///x\\u0007y"}', "{}", "x" * 20_000])
def test_a_broken_install_record_gives_the_generic_hint(
    base_install_env: dict[str, str], tmp_path: Path, text: str
) -> None:
    env = _installed_from(base_install_env, text)
    result = _capidx("serve", cwd=tmp_path, env=env)
    assert result.returncode == 2 and "'<folder>[serve]'" in result.stderr and "Traceback" not in result.stderr


def test_print_config_works_without_the_extra(base_install_env: dict[str, str], tmp_path: Path) -> None:
    """Printing the settings needs none of the server's packages: no install hint, the settings as with the extra,
    and a bad setting is reported as such (not as a missing extra)."""
    (tmp_path / "capidx.yaml").write_text("serve:\n  transport: http\n  port: 8123\n", encoding="utf-8")
    result = _capidx("serve", "--print-config", cwd=tmp_path, env=base_install_env)
    assert result.returncode == 0, result.stderr
    assert "transport: http" in result.stdout and "port: 8123" in result.stdout
    assert "[serve]" not in result.stderr and "Traceback" not in result.stderr
    bad = _capidx("serve", "--port", "8000", "--expose", "fulll", "--print-config", cwd=tmp_path, env=base_install_env)
    assert bad.returncode == 2 and "--expose" in bad.stderr and "fulll" in bad.stderr
    assert "[serve]" not in bad.stderr and "Traceback" not in bad.stderr
    assert "[serve]" in _capidx("serve", cwd=tmp_path, env=base_install_env).stderr  # serving still needs it
