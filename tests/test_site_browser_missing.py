"""Without a browser the browser tests skip and say how to install one; CAPIDX_REQUIRE_BROWSER=1 makes that a
failure (issue 17, item 3). Checked by running tests/test_site_browser.py in a child pytest whose CAPIDX_BROWSER
names a file that does not exist: no browser is started and nothing is built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
TESTS = Path(__file__).resolve().parent
MISSING = "/nonexistent/capidx-test/chromium"


def _run_browser_tests(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    # The child pytest is configured by its command line only: not by the caller's CAPIDX_ settings, nor by
    # PYTEST_ADDOPTS / PYTEST_PLUGINS (options such as -rA would change the output checked below).
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("CAPIDX_") and key not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}  # fmt: skip
    environment.update(env, CAPIDX_BROWSER=MISSING)
    command = [sys.executable, "-m", "pytest", str(TESTS / "test_site_browser.py"), "-n", "0", "-rsf",
               "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'basetemp'}"]  # fmt: skip
    return subprocess.run(command, cwd=TESTS.parent, env=environment, capture_output=True, text=True, timeout=300)


def test_without_a_browser_the_tests_skip_saying_how_to_install_one(tmp_path: Path) -> None:
    result = _run_browser_tests(tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    browser_tests = (TESTS / "test_site_browser.py").read_text("utf-8").count("\ndef test_")
    assert f"{browser_tests} skipped in" in result.stdout and browser_tests >= 4
    assert "apt-get install --no-install-recommends chromium-headless-shell" in result.stdout
    assert MISSING in result.stdout  # the paths it looked at
    assert not list((tmp_path / "basetemp").rglob("manifest.json"))  # looked for before anything is built


def test_capidx_require_browser_turns_the_skip_into_a_failure(tmp_path: Path) -> None:
    result = _run_browser_tests(tmp_path, CAPIDX_REQUIRE_BROWSER="1")
    assert result.returncode == 1, result.stdout[-3000:]
    assert "skipped" not in result.stdout
    assert "CAPIDX_REQUIRE_BROWSER=1 but no headless Chromium found" in result.stdout
    assert not list((tmp_path / "basetemp").rglob("manifest.json"))
