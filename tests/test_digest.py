"""The input digest covers every piece of code that shapes build output, so a no-op rebuild is never stale."""

from __future__ import annotations

import ast
from pathlib import Path

from capidx.compiler.build import digest

COMPILER = Path(__file__).resolve().parent.parent / "compiler"
# `capidx serve` is only registered as a command by the compiler's CLI; it does not shape build output.
NOT_OUTPUT_SHAPING = {"cli"}


def _server_modules_imported_by_the_compiler() -> set[str]:
    found: set[str] = set()
    for path in COMPILER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("capidx.server."):
                found.add(node.module.removeprefix("capidx.server."))
            elif isinstance(node, ast.ImportFrom) and node.module == "capidx.server":
                found.update(alias.name for alias in node.names)
    return found - NOT_OUTPUT_SHAPING


def test_every_server_module_the_compiler_uses_is_fingerprinted() -> None:
    used = _server_modules_imported_by_the_compiler()
    assert used, "the compiler is expected to share at least server.text"
    assert {f"{name}.py" for name in used} <= digest._SHARED_SERVER_MODULES
