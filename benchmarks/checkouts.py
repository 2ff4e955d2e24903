"""Another checkout of capidx, timed beside this one: a folder to put first on PYTHONPATH whose `capidx` is it.

Why: a checkout's root is the package itself (setuptools' package-dir maps it to `capidx`), so the checkout cannot
go on PYTHONPATH; a folder holding a `capidx` link to it can. Used by serve_bench.py and resolver_latency.py.
"""

from __future__ import annotations

import os
from pathlib import Path


def package_folder(given: Path, scratch: Path) -> Path:
    """A folder from which `capidx` is imported from `given`: itself when it holds a `capidx` package, else (a
    checkout) a new folder in `scratch` with a `capidx` link to it."""
    given = given.resolve()
    if (given / "capidx").is_dir():
        return given
    if not (given / "server").is_dir():
        raise SystemExit(f"{given}: neither a capidx checkout nor a folder holding a capidx package")
    folder = scratch / "pythonpath"
    folder.mkdir()
    (folder / "capidx").symlink_to(given, target_is_directory=True)
    return folder


def importing(folder: Path) -> dict[str, str]:
    """This process's environment with `folder` first on PYTHONPATH."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}
