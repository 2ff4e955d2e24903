"""The server depends on the build directory only: it imports nothing from the compiler."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parent.parent / "server"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add("." * node.level + node.module)
    return found


def test_no_server_module_imports_the_compiler() -> None:
    files = sorted(SERVER.glob("*.py"))
    assert len(files) > 5
    offenders = {
        path.name: sorted(m for m in imported_modules(path) if "compiler" in m or m.startswith("..")) for path in files
    }
    assert {name: mods for name, mods in offenders.items() if mods} == {}


def test_nor_does_any_of_it_at_runtime() -> None:
    code = (
        "import sys, capidx.server.serve, capidx.server.cli; "
        "print(sorted(m for m in sys.modules if m.startswith('capidx.compiler')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


def test_the_server_does_not_import_jsonschema_or_tiktoken() -> None:
    code = "import sys, capidx.server.serve; print(sorted({'jsonschema', 'tiktoken'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
