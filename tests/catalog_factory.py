"""A small, valid catalog written into a temporary directory, for build tests.

Three agents whose names exercise nickname derivation ("copilot" is ambiguous, "claude" is not,
"vs code" names one agent), and capabilities that cover every case the build distinguishes: shared
across agents, recorded as unavailable, not recorded at all for an agent, sources with and without
verifiedDate, a URL cited by several capabilities with different details, implementation notes,
aliases/triggers/useWhen, an unknown extra field, text that looks like a special token, non-ASCII.
"""

from __future__ import annotations

import copy
import errno
import json
import os
from pathlib import Path
from typing import Any

MCP_SPEC = "https://modelcontextprotocol.io/specification"
# Agents repeat a capability's vocabulary verbatim (as in the bundled catalog); documents print it once.
MCP_VOCABULARY: dict[str, Any] = {
    "aliases": ["model context protocol", "tool servers"],
    "triggers": ["connect a database", "add a tool server", "use an external tool"],
    "useWhen": [
        {"pattern": r"\b(mcp|model context protocol)\b", "confidence": 0.9},
        {
            "pattern": r"\b(tool servers?|connect (it |the agent )?to (an? |my )?(database|service)s?)\b",
            "confidence": 0.6,
        },
    ],
}
INSTRUCTIONS_VOCABULARY: dict[str, Any] = {
    "triggers": ["always follow these rules", "remember our coding conventions"],
    "useWhen": [{"pattern": r"\b(instructions? files?|project rules|conventions)\b", "confidence": 0.7}],
}


def _source(url: str, description: str, verified: str | None = "2026-01-10", **more: Any) -> dict[str, Any]:
    source: dict[str, Any] = {"url": url, "description": description, "sourceGranularity": "section"}
    if verified:
        source["verifiedDate"] = verified
    source.update(more)
    return source


CLAUDE: dict[str, Any] = {
    "$schema": "../../../schema/capability-schema.json",
    "agent": {"name": "Claude Code", "vendor": "Anthropic", "version": "2.1.0", "lastUpdated": "2026-01-15T09:30:00Z"},
    "capabilities": [
        {
            "category": "api-integration",
            "name": "MCP Servers",
            "description": "Connects external tools and data sources through the Model Context Protocol.",
            "available": True,
            "terminology": "MCP servers",
            "tier": "pro",
            "maturityLevel": "stable",
            "status": "active",
            "introducedIn": "0.2.0",
            "limitations": ["Tool output counts against the context window", "Servers run with your permissions"],
            "requirements": ["Node.js 18 or newer for npx-based servers"],
            **MCP_VOCABULARY,
            "implementationNotes": {
                "setup": "claude mcp add <name> -- <command>",
                "configFile": ".mcp.json",
                "startUrl": "https://docs.anthropic.com/en/docs/claude-code/mcp",
                "gotchas": ["Project-scoped servers need approval on first use"],
            },
            "sources": [
                _source("https://docs.anthropic.com/en/docs/claude-code/mcp", "Claude Code MCP guide"),
                _source(MCP_SPEC, "MCP specification", "2026-01-02", status="active"),
            ],
        },
        {
            "category": "customization",
            "name": "Custom Instructions",
            "description": (
                "Project memory in CLAUDE.md files is loaded into every session — even <|endoftext|> stays text."
            ),
            **INSTRUCTIONS_VOCABULARY,
            "available": True,
            "terminology": "CLAUDE.md memory",
            "tier": "free",
            "maturityLevel": "stable",
            "sources": [_source("https://docs.anthropic.com/en/docs/claude-code/memory", "Memory docs", None)],
        },
        {
            "category": "agent-orchestration",
            "name": "Subagents",
            "description": "Delegates focused tasks to specialised subagents with their own context window.",
            "available": True,
            "terminology": "subagents",
            "maturityLevel": "beta",
            "status": "active",
            "x-reviewNote": "Checked against the Zürich meetup demo",
            "sources": [
                _source(
                    "https://docs.anthropic.com/en/docs/claude-code/sub-agents",
                    "Subagents docs",
                    "2025-06-01",
                    publishedDate="2025-05-20",
                    sourceGranularity="dedicated",
                    excerpt="Custom subagents in Claude Code are specialized AI assistants that can be invoked.",
                )
            ],
        },
        {
            "category": "customization",
            "name": "Hooks",
            "description": "Runs shell commands at lifecycle events such as before a tool call.",
            "available": True,
            "tier": "free",
            "implementationNotes": {
                "configFile": "~/.claude/settings.json",
                "gotchas": ["Hooks run without a sandbox"],
            },
        },
    ],
    "integrations": [
        {"platform": "VS Code", "supported": True, "features": ["diff view", "selection context"]},
        {"platform": "Emacs", "supported": False},
    ],
    "models": [{"name": "Claude Sonnet 4.5", "provider": "Anthropic", "available": True, "tier": "pro"}],
    "documentation": {
        "officialDocs": "https://docs.anthropic.com/en/docs/claude-code/overview",
        "github": "https://github.com/anthropics/claude-code",
    },
}

COPILOT_CLI: dict[str, Any] = {
    "agent": {
        "name": "GitHub Copilot CLI",
        "vendor": "GitHub",
        "version": "0.0.339",
        "lastUpdated": "2026-01-20T00:00:00Z",
    },
    "capabilities": [
        {
            "category": "api-integration",
            "name": "MCP Servers",
            "description": "Adds MCP servers with the /mcp command; the GitHub MCP server is built in.",
            "available": True,
            **MCP_VOCABULARY,
            "terminology": "MCP servers",
            "tier": "business",
            "maturityLevel": "beta",
            "sources": [_source(MCP_SPEC, "MCP specification", "2025-08-01", status="active")],
        },
        {
            "category": "customization",
            "name": "Custom Instructions",
            "description": "Reads .github/copilot-instructions.md and AGENTS.md files.",
            **INSTRUCTIONS_VOCABULARY,
            "available": True,
            "terminology": "custom instructions",
            "status": "modified",
        },
        {
            "category": "agent-orchestration",
            "name": "Subagents",
            "description": "No user-defined subagents; a single agent loop handles every task.",
            "available": False,
            "sources": [_source("https://docs.github.com/copilot/cli", "Copilot CLI docs", "2025-01-05")],
        },
        {
            "category": "code-explanation",
            "name": "Code Review",
            "description": "Reviews staged changes on request.",
            "available": True,
            "tier": "enterprise",
            "maturityLevel": "deprecated",
            "status": "deprecated",
            "deprecatedDate": "2025-12-01",
            "supersededBy": "Copilot code review on GitHub.com",
        },
    ],
    "integrations": [{"platform": "Terminal", "supported": True}],
    "documentation": {"officialDocs": "https://docs.github.com/copilot/cli"},
}

VSCODE_COPILOT: dict[str, Any] = {
    "agent": {
        "name": "GitHub Copilot in VS Code",
        "vendor": "GitHub",
        "version": "latest",
        "lastUpdated": "2026-01-18T12:00:00+01:00",
    },
    "capabilities": [
        {
            "category": "api-integration",
            "name": "MCP Servers",
            "description": "Uses MCP servers configured in .vscode/mcp.json in agent mode.",
            "available": True,
            **MCP_VOCABULARY,
            "aliases": ["mcp.json"],
            "terminology": "MCP servers",
            "tier": "free",
            "maturityLevel": "stable",
            "implementationNotes": {"setup": "MCP: Add Server command", "configFile": ".vscode/mcp.json"},
            "sources": [_source(MCP_SPEC, "MCP specification", "2026-01-02", status="active")],
        },
        {
            "category": "customization",
            "name": "Custom Instructions",
            "description": "Applies .github/copilot-instructions.md and *.instructions.md files.",
            **INSTRUCTIONS_VOCABULARY,
            "available": True,
            "terminology": "custom instructions",
            "tier": "free",
        },
        {
            "category": "code-completion",
            "name": "Inline Suggestions",
            "description": "Ghost-text completions while typing, accepted with Tab.",
            "available": True,
            "terminology": "inline suggestions",
            "tier": "free",
            "maturityLevel": "stable",
            "triggers": ["autocomplete"],
        },
    ],
    "models": [{"name": "GPT-4.1", "provider": "OpenAI", "available": False}],
}

ALIASES: dict[str, Any] = {
    "$comment": "what people type -> canonical capability name",
    "aliases": {"memory file": "Custom Instructions", "tab completion": "Inline Suggestions", "mcp": "MCP Servers"},
}

AGENT_IDS = ("claude-code", "copilot-cli", "vscode-copilot")


def documents() -> dict[str, dict[str, Any]]:
    """Fresh copies of the three capability documents, keyed by agent id (safe to mutate).

    Each is copied on its own: one `deepcopy` of the three would keep lists the literals share (hint lists)
    shared between the copies too, so editing one agent's would edit the others'."""
    originals = {"claude-code": CLAUDE, "copilot-cli": COPILOT_CLI, "vscode-copilot": VSCODE_COPILOT}
    return {agent: copy.deepcopy(document) for agent, document in originals.items()}


def write_catalog(
    root: Path,
    docs: dict[str, dict[str, Any]] | None = None,
    aliases: dict[str, Any] | None = ALIASES,
    agents_dir: str = "agents",
) -> Path:
    """Write the catalog under `root/<agents_dir>` (pretty-printed like hand-written files); returns that folder."""
    agents = root / agents_dir
    for agent_id, document in (docs if docs is not None else documents()).items():
        path = agents / agent_id / "capabilities" / "current.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if aliases is not None:
        agents.mkdir(parents=True, exist_ok=True)
        (agents / "aliases.json").write_text(json.dumps(aliases, indent=2) + "\n", encoding="utf-8")
    return agents


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (relative POSIX path -> bytes), to compare builds byte for byte."""
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def tree(root: Path) -> dict[str, object]:
    """Everything under `root` without following links: files by bytes, links by target, folders by name."""
    found: dict[str, object] = {}
    for folder, subfolders, files in os.walk(root):
        for name in subfolders + files:
            path = Path(folder, name)
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[key] = ("link", os.readlink(path))
            elif path.is_dir():
                found[key] = "dir"
            elif path.is_file():
                found[key] = path.read_bytes()
            else:  # a pipe: reading it would block
                found[key] = ("special", path.lstat().st_mode)
    return found


def built_project(root: Path) -> Path:
    """A project at `root` (the catalog, a capidx.yaml with `out: build`) with a real build in build/: tests of what
    a later build does to it copy it (`shutil.copytree(root, target, symlinks=True)`)."""
    write_catalog(root)
    (root / "capidx.yaml").write_text("paths:\n  out: build\n", encoding="utf-8")
    result = run_cli(["build", "-q"], cwd=root)
    assert result.exit_code == 0, result.output
    return root


def run_cli(args: list[str], cwd: Path) -> Any:
    """`capidx <args>` in-process with `cwd` as the working directory (so no capidx.yaml is picked up)."""
    import contextlib

    from click.testing import CliRunner

    from capidx.cli import cli

    with contextlib.chdir(cwd):
        return CliRunner().invoke(cli, args, catch_exceptions=False)


def deny_search(monkeypatch: Any, folder: Path, *links: Path, listable: bool = False) -> None:
    """As if this user might not search `folder` (a mode of 000): nothing inside it can be looked at, opened or
    listed, nor can the folder be listed, though it can be seen from above; each of `links` (a symbolic link into
    it) is there, but cannot be followed. `listable`: as if of mode 644 instead, the names of its entries listed
    (with whether each is a folder, which the listing itself tells), but none of them looked at. `os.access` grants
    read permission on nothing it refuses. Simulated, with EACCES where the system would give it: the suite may run
    as root, whom no mode stops."""
    import builtins

    inside = os.path.abspath(folder) + os.sep
    followed = tuple(os.path.abspath(link) for link in links)

    def refused(path: Any, *, follow: bool = True, listing: bool = False) -> bool:
        if not isinstance(path, str | os.PathLike):
            return False  # a file descriptor
        written = os.fsdecode(path)
        where = os.path.abspath(written)
        if written.endswith(os.sep + ".") or written == ".":  # the folder's own entry: looked up inside it
            where += os.sep + "."
        if where.startswith(inside) or (listing and not listable and where + os.sep == inside):
            return True
        if any(where.startswith(link + os.sep) for link in followed):  # through the link: it is followed
            return True
        return follow and where in followed

    def guard(real: Any, **how: bool) -> Any:
        def guarded(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            follow = kwargs.get("follow_symlinks", True) and how.get("follow", True)
            if refused(path, follow=follow, listing=how.get("listing", False)):
                raise _refused_to(path)
            return real(path, *args, **kwargs)

        return guarded

    monkeypatch.setattr(os, "stat", guard(os.stat))
    monkeypatch.setattr(os, "lstat", guard(os.lstat, follow=False))
    monkeypatch.setattr(os, "open", guard(os.open, listing=True))
    monkeypatch.setattr(builtins, "open", guard(builtins.open, listing=True))
    scandir = guard(os.scandir, listing=True)
    if listable:  # a link's kind is not in the listing: asking it follows the link, from inside the folder
        real_scandir = scandir

        def scandir(path: Any = ".") -> Any:
            entries = real_scandir(path)
            if not isinstance(path, str | os.PathLike) or os.path.abspath(os.fsdecode(path)) + os.sep != inside:
                return entries
            return _UnsearchedEntries(entries)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "listdir", guard(os.listdir, listing=True))
    monkeypatch.setattr(os, "access", _denied_access(os.access, lambda path: refused(path, listing=True)))


class _UnsearchedEntries:
    """`os.scandir` of a folder this user may list but not search (`deny_search(listable=True)`): each entry's name
    and type as listed, but whether a symbolic link is a folder, or a file, asks the system through it (EACCES)."""

    def __init__(self, entries: Any) -> None:
        self._entries = entries

    def __enter__(self) -> Any:
        self._entries.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._entries.__exit__(*exc)

    def __iter__(self) -> Any:
        return (_UnsearchedEntry(entry) for entry in self._entries)

    def close(self) -> None:
        self._entries.close()


class _UnsearchedEntry:
    def __init__(self, entry: Any) -> None:
        self._entry = entry
        self.name, self.path = entry.name, entry.path

    def _refused(self, follow_symlinks: bool) -> None:
        if follow_symlinks and self._entry.is_symlink():
            raise _refused_to(self.path)

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        self._refused(follow_symlinks)
        return self._entry.is_dir(follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        self._refused(follow_symlinks)
        return self._entry.is_file(follow_symlinks=follow_symlinks)

    def is_symlink(self) -> bool:
        return self._entry.is_symlink()

    def __fspath__(self) -> str:
        return self.path


def deny_listing(monkeypatch: Any, folder: Path) -> None:
    """As if this user might search `folder` but not list it (a mode of 111): what is inside can be looked at and
    opened by name, but the folder cannot be listed (`os.scandir`, `os.listdir`, and so `glob` and a walk), nor
    opened (`os.open`, as for a listing by its descriptor), by any name: through a symbolic link to it too; nor
    does `os.access` grant it read permission. Simulated, with EACCES where the system would give it: the suite may
    run as root, whom no mode stops."""
    where = os.path.realpath(folder)

    def unlisted(path: Any) -> bool:
        return isinstance(path, str | os.PathLike) and os.path.realpath(os.fsdecode(path)) == where

    def guard(real: Any) -> Any:
        def guarded(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if unlisted(path):
                raise _refused_to(path)
            return real(path, *args, **kwargs)

        return guarded

    monkeypatch.setattr(os, "scandir", guard(os.scandir))
    monkeypatch.setattr(os, "listdir", guard(os.listdir))
    monkeypatch.setattr(os, "open", guard(os.open))
    monkeypatch.setattr(os, "access", _denied_access(os.access, unlisted))


def _denied_access(real: Any, denied: Any) -> Any:
    """`os.access` answering False for read permission (`os.R_OK`) on a path `denied` says is refused, as the system
    answers a user other than root: click's `readable` check asks it."""

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if mode & os.R_OK and denied(path):
            return False
        return bool(real(path, mode, *args, **kwargs))

    return access


def _refused_to(path: Any) -> PermissionError:
    """The error the system gives a user refused `path` for want of permission."""
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
