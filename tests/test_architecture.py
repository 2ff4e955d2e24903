"""The layout the architecture promises (docs/architecture.md), checked on the source itself.

- the server imports nothing from the compiler, and the compiler nothing from the server: the build
  directory, described by `capidx.schema`, is their only contract;
- `capidx.schema` imports nothing of ours but itself;
- no import cycles anywhere, lazy (function-level) imports included: a cycle hidden by a lazy import is
  still a cycle a reader must untangle;
- at run time, starting the server loads no compiler module and neither jsonschema nor tiktoken.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Folder -> package, as pyproject.toml's package-dir maps them.
PACKAGES = {"entry": "capidx", "compiler": "capidx.compiler", "server": "capidx.server", "schema": "capidx.schema"}


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path) -> set[str]:
    """The capidx modules `module` imports, anywhere in its body (`from a import b` names a.b when b is a module)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {name for name in found if name in MODULES and name != module}


@functools.cache
def graph() -> dict[str, set[str]]:
    """module -> the modules of ours it imports. Made on first use, not at import: every parallel worker imports
    this file to collect it, one runs it."""
    return {module: _imports(module, path) for module, path in MODULES.items()}


def _offenders(side: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    return {
        module: sorted(name for name in imported if name.startswith(forbidden))
        for module, imported in graph().items()
        if module.startswith(side + ".") and any(name.startswith(forbidden) for name in imported)
    }


def test_the_layout_was_read() -> None:
    assert len([m for m in MODULES if m.startswith("capidx.compiler.")]) > 30
    assert len([m for m in MODULES if m.startswith("capidx.server.")]) > 10
    assert "capidx.compiler.emit.pipeline" in graph()["capidx.compiler.cli"]  # a lazy import is seen


def test_the_server_imports_nothing_from_the_compiler() -> None:
    assert _offenders("capidx.server", ("capidx.compiler",)) == {}


def test_the_compiler_imports_nothing_from_the_server() -> None:
    assert _offenders("capidx.compiler", ("capidx.server",)) == {}


def test_the_contract_package_imports_only_itself() -> None:
    assert _offenders("capidx.schema", ("capidx.compiler", "capidx.server", "capidx.cli")) == {}


def test_no_import_cycles() -> None:
    cycles = [sorted(component) for component in _strongly_connected(graph()) if len(component) > 1]
    assert cycles == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative (the graph is small, but recursion limits are not ours to spend)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [sorted(c) for c in _strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]


def _loaded(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return result.stdout.strip()


def test_starting_the_server_loads_no_compiler_module_nor_jsonschema_or_tiktoken() -> None:
    code = (
        "import sys, capidx.server.serve, capidx.server.cli; "
        "print(sorted(m for m in sys.modules if m.startswith('capidx.compiler') or m in ('jsonschema', 'tiktoken')))"
    )
    assert _loaded(code) == "[]"


def test_building_loads_no_server_module() -> None:
    code = "import sys, capidx.compiler.emit.pipeline; print(sorted(m for m in sys.modules if 'capidx.server' in m))"
    assert _loaded(code) == "[]"


def test_serve_checks_capidx_yaml_without_the_compiler_and_imports_jsonschema_only_for_a_file(tmp_path: Path) -> None:
    """serve validates the whole capidx.yaml through `capidx.schema` (the compiler stays out), and jsonschema is
    imported only when there is a file to check: without one, `--print-config` stays as light as before."""
    code = f"""
import sys
from pathlib import Path
from capidx.server.settings import resolve_settings
project = Path({str(tmp_path)!r})
resolve_settings({{}}, {{}}, project)
without_a_file = 'jsonschema' in sys.modules
(project / 'capidx.yaml').write_text('paths: {{out: site}}\\n', encoding='utf-8')
assert resolve_settings({{}}, {{}}, project).build == project / 'site'
print(without_a_file, 'jsonschema' in sys.modules, sorted(m for m in sys.modules if m.startswith('capidx.compiler')))
"""
    assert _loaded(code) == "False True []"
