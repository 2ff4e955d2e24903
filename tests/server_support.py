"""Test support for `capidx serve`: builds to serve, fixtures and client helpers.

The fixtures are defined here and registered once, in tests/conftest.py; the builds are made once per run and
shared by the parallel workers (`made_once`).

- `catalog_build` (the main fixture): a REAL `capidx build` of a small invented catalog
  (`write_catalog`), built once per session.
- `hand_build`: the same catalog written by hand by `write_build`, following docs/build-directory.md
  (manifest, every artifact kind incl. snippets, `index/match.json` with the enhanced index, correct
  sha256). Used where a test needs a build the compiler would never write (corrupt files, escaping
  paths, quick variants); `write_build(..., enhanced=False)` writes a build from before the enhanced
  index (no snippets, no triggers, useWhen or injection), which must still be served.
- `bundled_build`: a real build of the repository's own `agents/`, for the budget check.

Tests touching only the contract are parametrized over the first two, so they also check that the
compiler's output and the hand-written reading of the contract agree.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import snapshot

from capidx.schema.text import normalize, slugify, terms

PREFIX = "capability-index://"
REPO = Path(__file__).resolve().parent.parent
# Protocol revision -> the `mcp.Client` mode that pins it (in-process: no probe).
REVISIONS = {"2025-11-25": "legacy", "2026-07-28": "2026-07-28"}
# A raw streamable-HTTP initialize request (2025-11-25) and the headers the SDK requires, for tests that
# speak HTTP below the client.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
# Protocol revision -> client mode over a real transport ("auto" probes server/discover first).
TRANSPORT_MODES = {"2025-11-25": "legacy", "2026-07-28": "auto"}


def score_capabilities(index: Any, query: str) -> dict[str, float]:
    """Every capability's ranked confidence (0..1) for a free-text query: the ranking model alone."""
    from capidx.server.query import analyse

    return dict(index.ranker.rank(analyse(query, index.vocabulary).units))


def dumps(value: Any) -> str:
    """The contract's compact JSON."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Cap:
    name: str
    category: str
    description: str
    aliases: tuple[str, ...] = ()
    # agent id -> per-agent facts; an agent missing here has not recorded the capability at all.
    agents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    triggers: tuple[str, ...] = ()
    use_when: tuple[tuple[str, float], ...] = ()  # (pattern, confidence)

    @property
    def slug(self) -> str:
        return slugify(self.name)


AGENTS: dict[str, tuple[str, str]] = {
    "claude-code": ("Claude Code", "Anthropic"),
    "copilot-cli": ("GitHub Copilot CLI", "GitHub"),
    "gemini-cli": ("Gemini CLI", "Google"),
    "vscode-copilot": ("GitHub Copilot in VS Code", "Microsoft"),
}

_SRC = "https://docs.example.com/"

CAPABILITIES: tuple[Cap, ...] = (
    Cap(
        "MCP Servers",
        "api-integration",
        "Connect external tools and data sources through Model Context Protocol servers.",
        ("model context protocol", "mcp", "tool servers"),
        {
            "claude-code": {"available": True, "tier": "free", "setup": "claude mcp add NAME -- COMMAND"},
            "copilot-cli": {"available": True, "terminology": "MCP servers"},
            "gemini-cli": {"available": True, "setup": "Add mcpServers to ~/.gemini/settings.json"},
            "vscode-copilot": {"available": True, "terminology": "MCP servers in agent mode"},
        },
        ("connect a database server",),
        ((r"\bmcp\b", 0.9),),
    ),
    Cap(
        "Plugins",
        "customization",
        "Install packaged bundles of commands, agents and hooks from a marketplace.",
        ("add-ons", "plugin marketplace"),
        {
            "claude-code": {"available": True},
            "copilot-cli": {"available": False},
            "gemini-cli": {"available": True, "terminology": "Extensions"},
        },
    ),
    Cap(
        "Hooks",
        "customization",
        "Run shell commands automatically at lifecycle events such as before or after a tool call.",
        ("lifecycle hooks",),
        {
            "claude-code": {"available": True, "limitations": ["Hooks run with your shell permissions."]},
            "copilot-cli": {"available": True},
            "gemini-cli": {"available": True},
        },
    ),
    Cap(
        "Plan Mode",
        "agent-orchestration",
        "Draft a step-by-step plan for review before any file is edited.",
        ("planning mode",),
        {
            "claude-code": {"available": True},
            "copilot-cli": {"available": True},
            "gemini-cli": {"available": False},
            "vscode-copilot": {"available": True, "terminology": "Plan agent"},
        },
    ),
    Cap(
        "Web Search",
        "context-awareness",
        "Search the internet and ground answers in current web results.",
        ("internet search", "google search"),
        {
            "claude-code": {"available": True, "terminology": "WebSearch tool"},
            "gemini-cli": {"available": True, "terminology": "Google Search grounding"},
            "copilot-cli": {"available": False},
        },
        ("look it up online",),
        ((r"\b(online|on the web)\b", 0.8),),
    ),
    Cap(
        "Session Resume",
        "context-awareness",
        "Continue an earlier conversation with its full history restored.",
        ("continue conversation",),
        {"claude-code": {"available": True}, "gemini-cli": {"available": True, "terminology": "/chat resume"}},
    ),
    Cap(
        "Context Compaction",
        "context-awareness",
        "Summarize a long conversation to free context space and keep working.",
        ("compact",),
        {"claude-code": {"available": True, "terminology": "/compact"}, "gemini-cli": {"available": True}},
    ),
    Cap(
        "Inline Code Completion",
        "code-completion",
        "Ghost-text suggestions that appear while typing in the editor.",
        ("autocomplete", "ghost text"),
        {
            "claude-code": {"available": False},
            "copilot-cli": {"available": False},
            "vscode-copilot": {"available": True, "tier": "free"},
        },
    ),
)


@dataclass
class _Writer:
    root: Path
    generation: str
    artifacts: list[dict[str, Any]] = field(default_factory=list)

    def add(self, kind: str, path: str, text: str, params: Mapping[str, str], title: str) -> None:
        data = text.encode("utf-8")
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        tokens = max(1, math.ceil(len(data) / 4))  # the fixture estimates; a real build measures
        uri_tail = path.rsplit(".", 1)[0]
        mime = "application/json" if path.endswith(".json") else "text/markdown"
        self.artifacts.append(
            {
                "kind": kind,
                "uri": PREFIX + uri_tail,
                "path": path,
                "mimeType": mime,
                "title": title,
                "description": f"{title} ({tokens} cl100k_base tokens)",
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "tokens": {"cl100k_base": tokens},
                "words": len(text.split()),
                "lines": text.count("\n"),
                "params": dict(params),
            }
        )


def _facts(cap: Cap, agent: str) -> dict[str, Any] | None:
    return dict(cap.agents[agent]) if agent in cap.agents else None


def _lookup(cap: Cap, agent: str) -> dict[str, Any]:
    facts = _facts(cap, agent)
    available_for = sorted(a for a, f in cap.agents.items() if f.get("available"))
    base = {"name": cap.name, "slug": cap.slug, "category": cap.category}
    if facts is None:
        capability = base | {"recorded": False}
    else:
        capability = base | {"available": bool(facts["available"]), "recorded": True, "description": cap.description}
        for key in ("terminology", "tier", "limitations"):
            if key in facts:
                capability[key] = facts[key]
        if "setup" in facts:
            capability["implementationNotes"] = {"setup": facts["setup"]}
        capability["sources"] = [{"url": f"{_SRC}{agent}/{cap.slug}", "verifiedDate": "2026-01-02"}]
    return {"agent": agent, "capability": capability, "availableFor": available_for}


def _compare(cap: Cap) -> dict[str, Any]:
    """As docs/build-directory.md, "compare": a recorded agent's entry (a "no" with its reason), or no data."""
    entries = []
    for agent in sorted(AGENTS):
        facts = _facts(cap, agent)
        if not facts:
            entries.append({"agent": agent, "recorded": False})
            continue
        entry = {"agent": agent, "available": bool(facts["available"]), "description": cap.description}
        for key in ("terminology", "limitations"):
            if key in facts:
                entry[key] = facts[key]
        if "setup" in facts:
            entry["implementationNotes"] = {"setup": facts["setup"]}
        entries.append(entry)
    return {"capability": {"name": cap.name, "slug": cap.slug, "category": cap.category}, "agents": entries}


def _row(cap: Cap, agent: str | None, facts: Mapping[str, Any]) -> dict[str, Any]:
    row = {"name": cap.name, "slug": cap.slug, "category": cap.category, "available": bool(facts["available"])}
    if agent is not None:
        row["agent"] = agent
    if "tier" in facts:
        row["tier"] = facts["tier"]
    return row


def _sources(pairs: list[tuple[str, Cap]], filt: dict[str, str]) -> dict[str, Any]:
    """A citation names its record's agent and capability only where the filter does not."""
    rows = [
        {
            "url": f"{_SRC}{agent}/{cap.slug}",
            "citations": [
                {
                    **{key: value for key, value in (("agent", agent), ("capability", cap.slug)) if key not in filt},
                    "description": f"{AGENTS[agent][0]} documentation: {cap.name}",
                    "verifiedDate": "2026-01-02",
                    "sourceGranularity": "section",
                }
            ],
        }
        for agent, cap in pairs
    ]
    return {"filter": filt, "sources": sorted(rows, key=lambda r: r["url"])}


DEFAULT_INJECTION = {
    "labels": [
        {"label": "✓ Recommended", "minConfidence": 0.8},
        {"label": "○ Consider", "minConfidence": 0.5},
        {"label": "△ Possible", "minConfidence": 0.0},
    ],
    "maxSnippets": 3,
    "maxTokens": 500,
    "overheadTokens": 9,
}


def _similar(caps: tuple[Cap, ...]) -> dict[str, list[dict[str, Any]]]:
    """Jaccard over each capability's term set (name, description, aliases), like the build's `similarTo`."""
    sets = {cap.slug: set(terms(" ".join([cap.name, cap.description, *cap.aliases]))) for cap in caps}
    similar: dict[str, list[dict[str, Any]]] = {}
    for cap in caps:
        rows = []
        for other in caps:
            union = sets[cap.slug] | sets[other.slug]
            shared = sets[cap.slug] & sets[other.slug]
            score = round(len(shared) / len(union), 3) if union else 0.0
            if other.slug != cap.slug and score >= 0.05:
                rows.append({"capability": other.slug, "name": other.name, "score": score, "shared": sorted(shared)})
        similar[cap.slug] = sorted(rows, key=lambda r: (-r["score"], r["capability"]))[:3]
    return similar


def _match_index(
    caps: tuple[Cap, ...], *, enhanced: bool = True, injection: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    agent_names: dict[str, set[str]] = {}
    for agent_id, (name, vendor) in AGENTS.items():
        spellings = {agent_id, name, " ".join(w for w in name.split() if w.lower() != vendor.lower())}
        for spelling in spellings:
            agent_names.setdefault(normalize(spelling), set()).add(agent_id)
    for word, ids in (("claude", ["claude-code"]), ("gemini", ["gemini-cli"]), ("vscode", ["vscode-copilot"])):
        agent_names.setdefault(word, set()).update(ids)
    agent_names.setdefault("copilot", set()).update(["copilot-cli", "vscode-copilot"])
    aliases = {normalize(alias): cap.slug for cap in caps for alias in cap.aliases}
    terminology: dict[str, list[dict[str, str]]] = {}
    rows = []
    similar = _similar(caps)
    for cap in caps:
        wording = [f["terminology"] for f in cap.agents.values() if "terminology" in f]
        text = " ".join([cap.name, *wording, *cap.aliases, *(cap.triggers if enhanced else ()), cap.description])
        counts = Counter(terms(text))
        for agent, facts in sorted(cap.agents.items()):
            if "terminology" in facts:
                terminology.setdefault(normalize(facts["terminology"]), []).append(
                    {"agent": agent, "capability": cap.slug}
                )
        row: dict[str, Any] = {
            "slug": cap.slug,
            "name": cap.name,
            "category": cap.category,
            "agents": {
                a: {k: v for k, v in f.items() if k in ("available", "terminology")}
                for a, f in sorted(cap.agents.items())
            },
            "terms": dict(sorted(counts.items())),
        }
        if enhanced:
            row |= {
                "aliases": sorted(cap.aliases),
                "similarTo": [{"capability": edge["capability"], "score": edge["score"]} for edge in similar[cap.slug]],
            }
        rows.append(row)
    index: dict[str, Any] = {
        "version": 1,
        "agents": [{"id": a, "name": n_} for a, (n_, _) in sorted(AGENTS.items())],
        "agentNames": {k: sorted(v) for k, v in sorted(agent_names.items())},
        "capabilities": rows,
        "aliases": dict(sorted(aliases.items())),
        "terminology": dict(sorted(terminology.items())),
        "categories": sorted({cap.category for cap in caps}),
    }
    if enhanced:
        index |= {"injection": dict(DEFAULT_INJECTION if injection is None else injection)}
    return index


def snippet_text(cap: Cap, agent: str | None) -> str:
    """A few lines, like the build's snippet template."""
    if agent is None:
        having = ", ".join(a for a, f in sorted(cap.agents.items()) if f["available"]) or "no agent"
        return f"**{cap.name}** ({cap.category}): {having}\n{cap.description}\n"
    facts = cap.agents[agent]
    state = "✓ available" if facts["available"] else "✗ not available"
    setup = f"\nSetup: `{facts['setup']}`" if "setup" in facts else ""
    return f"**{cap.name}** ({agent}): {state}\n{cap.description}{setup}\n"


def write_build(
    out: Path,
    *,
    generation: str = "1",
    caps: tuple[Cap, ...] = CAPABILITIES,
    enhanced: bool = True,
    injection: Mapping[str, Any] | None = None,
) -> Path:
    """Write a complete build directory at `out` (replacing it); `generation` changes the text.

    `enhanced=False`: a build from before the enhanced index (no snippets, no triggers or injection);
    `injection`: match.json's `injection` instead of the defaults.
    """
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    w = _Writer(out, generation)
    categories = sorted({cap.category for cap in caps})
    names = "\n".join(f"- {cap.name} ({cap.category})" for cap in caps)
    w.add("summary", "summary.md", f"# Capability index (generation {generation})\n\n{names}\n", {}, "Summary")
    full = "\n".join(f"## {cap.name}\n\n{cap.description}\n" for cap in caps)
    w.add("full", "full.md", f"# Full capability index (generation {generation})\n\n{full}", {}, "Full index")
    stats = {"agents": len(AGENTS), "capabilities": len(caps), "generation": generation}
    w.add("stats", "stats.json", dumps(stats), {}, "Statistics")
    for agent, (name, _vendor) in sorted(AGENTS.items()):
        mine = "\n".join(
            f"- {c.name}: {'yes' if c.agents[agent]['available'] else 'no'}" for c in caps if agent in c.agents
        )
        w.add("agent", f"agents/{agent}.md", f"# {name}\n\n{mine}\n", {"agent": agent}, name)
    for cap in caps:
        w.add(
            "capability",
            f"capabilities/{cap.slug}.md",
            f"# {cap.name}\n\n{cap.description}\n",
            {"capability": cap.slug},
            cap.name,
        )
    for category in categories:
        listed = "\n".join(f"- {c.name}" for c in caps if c.category == category)
        w.add("category", f"categories/{category}.md", f"# {category}\n\n{listed}\n", {"category": category}, category)
    for agent in sorted(AGENTS):
        for cap in caps:
            doc = _lookup(cap, agent)
            w.add(
                "lookup",
                f"tools/lookup/{agent}/{cap.slug}.json",
                dumps(doc),
                {"agent": agent, "capability": cap.slug},
                f"lookup {agent} {cap.slug}",
            )
    for cap in caps:
        w.add(
            "compare",
            f"tools/compare/{cap.slug}.json",
            dumps(_compare(cap)),
            {"capability": cap.slug},
            f"compare {cap.slug}",
        )
    for agent in sorted(AGENTS):
        rows = [_row(c, None, c.agents[agent]) for c in caps if agent in c.agents]
        w.add(
            "list",
            f"tools/list/{agent}/_all.json",
            dumps({"filter": {"agent": agent}, "capabilities": rows}),
            {"agent": agent},
            f"list {agent}",
        )
        for category in categories:
            rows = [_row(c, None, c.agents[agent]) for c in caps if agent in c.agents and c.category == category]
            if rows:
                doc = {"filter": {"agent": agent, "category": category}, "capabilities": rows}
                w.add(
                    "list",
                    f"tools/list/{agent}/{category}.json",
                    dumps(doc),
                    {"agent": agent, "category": category},
                    f"list {agent} {category}",
                )
    for category in categories:
        rows = [_row(c, a, f) for c in caps if c.category == category for a, f in sorted(c.agents.items())]
        doc = {"filter": {"category": category}, "capabilities": rows}
        w.add("list", f"tools/list/_all/{category}.json", dumps(doc), {"category": category}, f"list {category}")
    for agent in sorted(AGENTS):
        pairs = [(agent, c) for c in caps if agent in c.agents]
        w.add(
            "sources",
            f"tools/sources/{agent}/_all.json",
            dumps(_sources(pairs, {"agent": agent})),
            {"agent": agent},
            f"sources {agent}",
        )
        for cap in caps:
            if agent in cap.agents:
                doc = _sources([(agent, cap)], {"agent": agent, "capability": cap.slug})
                w.add(
                    "sources",
                    f"tools/sources/{agent}/{cap.slug}.json",
                    dumps(doc),
                    {"agent": agent, "capability": cap.slug},
                    f"sources {agent} {cap.slug}",
                )
    for cap in caps:
        pairs = [(a, cap) for a in sorted(cap.agents)]
        w.add(
            "sources",
            f"tools/sources/_all/{cap.slug}.json",
            dumps(_sources(pairs, {"capability": cap.slug})),
            {"capability": cap.slug},
            f"sources {cap.slug}",
        )
    if enhanced:
        for cap in caps:
            for agent in sorted(cap.agents):
                w.add(
                    "snippet",
                    f"tools/snippets/{agent}/{cap.slug}.md",
                    snippet_text(cap, agent),
                    {"agent": agent, "capability": cap.slug},
                    f"snippet {agent} {cap.slug}",
                )
            w.add(
                "snippet",
                f"tools/snippets/_all/{cap.slug}.md",
                snippet_text(cap, None),
                {"capability": cap.slug},
                f"snippet {cap.slug}",
            )
    index = _match_index(caps, enhanced=enhanced, injection=injection)
    w.add("index", "index/match.json", dumps(index), {}, "Match index")
    manifest = {
        "format": 1,
        "capidx": "0.1.0",
        "inputDigest": "sha256:" + hashlib.sha256(generation.encode()).hexdigest(),
        "uriPrefix": PREFIX,
        "encodings": ["cl100k_base"],
        "catalog": {
            "agents": sorted(AGENTS),
            "capabilities": sorted(cap.slug for cap in caps),
            "categories": categories,
        },
        "resourceTemplates": [
            {
                "kind": kind,
                "uriTemplate": f"{PREFIX}{plural}/{{{kind}}}",
                "name": f"{kind}-document",
                "title": f"One {kind}",
                "description": f"One {kind}'s document (Markdown). Values: {', '.join(values)}.",
                "mimeType": "text/markdown",
                "parameter": kind,
            }
            for kind, plural, values in (
                ("agent", "agents", sorted(AGENTS)),
                ("capability", "capabilities", sorted(cap.slug for cap in caps)),
                ("category", "categories", categories),
            )
        ],
        "budgets": [],
        "artifacts": sorted(w.artifacts, key=lambda a: a["path"]),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out


def rewrite_manifest(build: Path, edit: Any) -> None:
    """Apply `edit(manifest)` in place (for corrupt-build tests)."""
    path = build / "manifest.json"
    manifest = json.loads(path.read_text("utf-8"))
    edit(manifest)
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def forge_artifact(build: Path, relative: str, data: bytes) -> None:
    """Write `data` as the build's artifact at `relative` and list its size and hash in the manifest: a forged build
    that passes the integrity checks, for tests of what the server does with the content."""
    (build / relative).write_bytes(data)
    rewrite_manifest(
        build,
        lambda m: next(a for a in m["artifacts"] if a["path"] == relative).update(
            bytes=len(data), sha256=hashlib.sha256(data).hexdigest()
        ),
    )


def swap_in(new_build: Path, target: Path) -> None:
    """Replace `target` by `new_build` the way `capidx build` does: rename aside, rename in, delete."""
    aside = target.with_name(f".capidx-old-{os.getpid()}")
    if target.exists():
        os.rename(target, aside)
    os.rename(new_build, target)
    if aside.exists():
        shutil.rmtree(aside)


@contextmanager
def running(
    command: list[str],
    log: Path,
    pattern: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdout_too: bool = False,
    timeout: float = 30,
) -> Iterator[tuple[subprocess.Popen[bytes], re.Match[str]]]:
    """Run `command` with its standard error (and output, with `stdout_too`) in `log`; yield the process and the
    match of `pattern` once the log shows it (a server's "listening on ... port N"); stop it after, killing it if
    it does not stop. Fails with the log when the process dies first or `timeout` seconds pass."""
    with (
        log.open("w") as output,
        subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=output if stdout_too else None,
            stderr=output if not stdout_too else subprocess.STDOUT,
            env=None if env is None else {**os.environ, **env},
        ) as process,
    ):
        try:
            deadline = time.monotonic() + timeout
            while not (found := re.search(pattern, log.read_text())):
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            yield process, found
        finally:
            process.terminate()  # nothing to do if it exited already
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def capidx_command(*args: str) -> list[str]:
    """Run the installed CLI with the interpreter running the tests."""
    return [sys.executable, "-c", "from capidx.cli import main; main()", *args]


@contextmanager
def serving_stdio(
    build: Path,
    *args: str,
    stdin: Any = subprocess.PIPE,
    stdout: Any = subprocess.PIPE,
    stderr: Any = subprocess.DEVNULL,
    env: Any = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """`capidx serve --build BUILD ARGS...` over stdio, its stdout a pipe (or `stdout`); killed when the block ends."""
    with subprocess.Popen(
        capidx_command("serve", "--build", str(build), *args),
        cwd=build.parent,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=env,
    ) as proc:
        try:
            yield proc
        finally:
            proc.kill()
            proc.wait()


@contextmanager
def serving_http(
    build: Path, *args: str, log: Path | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str, int]]:
    """Start `capidx serve --transport http --port 0`, its log in `log` (default: a new file beside the build);
    yield (process, url, port) once it listens; stop it after."""
    log = log or build.parent / f"http-{time.monotonic_ns()}.log"
    command = capidx_command("serve", "--build", str(build), "--transport", "http", "--port", "0", *args)
    with running(command, log, r"listening on (http://\S+:(\d+)/mcp)", cwd=build.parent) as (proc, found):
        yield proc, found.group(1), int(found.group(2))


def run_capidx(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, stdin: int | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        capidx_command(*args),
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_serve(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`capidx serve` run to its end (it stops at once: the tests give it settings or builds it refuses)."""
    return run_capidx("serve", *args, cwd=cwd, stdin=subprocess.DEVNULL)


# --- a real catalog of the same data, for `capidx build` ----------------------------------------------


def write_catalog(root: Path, caps: tuple[Cap, ...] = CAPABILITIES, *, note: str = "") -> Path:
    """Write agents/<id>/capabilities/current.json for the invented catalog; `note` changes descriptions."""
    for agent, (name, vendor) in AGENTS.items():
        capabilities = []
        for cap in caps:
            facts = cap.agents.get(agent)
            if facts is None:
                continue
            entry: dict[str, Any] = {
                "category": cap.category,
                "name": cap.name,
                "description": cap.description + note,
                "available": bool(facts["available"]),
                "aliases": list(facts.get("aliases", cap.aliases)),  # an agent's own, or the capability's
                "sources": [
                    {
                        "url": f"{_SRC}{agent}/{cap.slug}",
                        "description": f"{name} documentation: {cap.name}",
                        "sourceGranularity": "section",
                        "verifiedDate": "2026-01-02",
                    }
                ],
            }
            for key in ("terminology", "tier", "limitations"):
                if key in facts:
                    entry[key] = facts[key]
            if "setup" in facts:
                entry["implementationNotes"] = {"setup": facts["setup"]}
            if cap.triggers:
                entry["triggers"] = list(cap.triggers)
            if cap.use_when:
                entry["useWhen"] = [{"pattern": p, "confidence": c} for p, c in cap.use_when]
            capabilities.append(entry)
        document = {
            "agent": {"name": name, "vendor": vendor, "version": "latest", "lastUpdated": "2026-01-02T00:00:00Z"},
            "capabilities": capabilities,
        }
        target = root / agent / "capabilities" / "current.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return root


def write_document(root: Path, agent_id: str, document: Mapping[str, Any]) -> None:
    """`document` as the agent's `root/agents/<agent_id>/capabilities/current.json`."""
    target = root / "agents" / agent_id / "capabilities" / "current.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(document), encoding="utf-8")


def real_build(catalog: Path, out: Path) -> Path:
    """Run `capidx build` for real; fail loudly with its output."""
    result = run_capidx("build", "--agents", str(catalog), "--out", str(out), "--no-aliases", cwd=out.parent)
    if result.returncode != 0:
        raise AssertionError(f"capidx build failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return out


# --- fixtures -----------------------------------------------------------------------------------------


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], Path]) -> Iterator[Path]:
    """A directory made once per test run and shared by every pytest-xdist worker, checked unchanged at the end.

    Each worker has its own session, so a session fixture alone runs once per worker; a real build costs a
    subprocess and a second or two of CPU. The first worker to get the lock makes the directory in the run's
    shared temporary directory; the others wait and reuse it. Tests must only read it: every worker checks,
    when its session ends, that no file changed, so a test that writes into a shared build fails loudly
    instead of changing what other tests see. (POSIX `flock`; the suite runs on Linux and macOS.)"""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if "PYTEST_XDIST_WORKER" in os.environ else base
    root = shared / f"made-once-{name}"
    complete = shared / f"made-once-{name}.complete"
    with (shared / f"made-once-{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not complete.exists():
            shutil.rmtree(root, ignore_errors=True)  # left by a worker whose `make` failed: ours to remove
            root.mkdir()
            made = make(root)
            complete.write_text(made.relative_to(root).as_posix(), encoding="utf-8")
    made = root / complete.read_text(encoding="utf-8")
    before = snapshot(made)
    yield made
    assert snapshot(made) == before, f"a test changed the shared directory {made}: copy it before writing"


def _bundled(root: Path) -> Path:
    result = run_capidx("build", "--agents", str(REPO / "agents"), "--out", str(root / "build"), cwd=root)
    if result.returncode not in (0, 1) or not (root / "build" / "manifest.json").is_file():
        raise AssertionError(f"capidx build of the bundled catalog failed:\n{result.stderr[-2000:]}")
    return root / "build"


# Registered once, in tests/conftest.py (a fixture imported into a test module is a separate fixture there, made
# again for that module).
@pytest.fixture(scope="session", name="catalog_build")
def fixture_catalog_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from made_once(
        tmp_path_factory, "catalog", lambda root: real_build(write_catalog(root / "agents"), root / "build")
    )


@pytest.fixture(scope="session", name="hand_build")
def fixture_hand_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from made_once(tmp_path_factory, "hand", lambda root: write_build(root / "build"))


@pytest.fixture(scope="session", name="bundled_build")
def fixture_bundled_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from made_once(tmp_path_factory, "bundled", _bundled)


@pytest.fixture(params=["real", "hand"], name="any_build")
def fixture_any_build(request: pytest.FixtureRequest) -> Path:
    """Both readings of the contract: the compiler's and the hand-written one."""
    return request.getfixturevalue("catalog_build" if request.param == "real" else "hand_build")


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=sorted(REVISIONS), name="revision")
def fixture_revision(request: pytest.FixtureRequest) -> str:
    return request.param


# --- in-memory server ---------------------------------------------------------------------------------


def make_hub(
    build: Path,
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    config: Path | None = None,
) -> Any:
    from capidx.server.app import Hub
    from capidx.server.settings import resolve_settings
    from capidx.server.snapshot import load_snapshot

    settings = resolve_settings({"build": str(build), **(flags or {})}, env or {}, cwd or build.parent, config)
    return Hub(load_snapshot(settings.build), settings)


@asynccontextmanager
async def connect(hub_or_build: Any, revision: str = "2026-07-28", **client_options: Any) -> Any:
    """An `mcp.Client` talking to an in-process server, pinned to `revision`, response cache off."""
    from mcp import Client

    from capidx.server.app import build_server

    hub = make_hub(hub_or_build) if isinstance(hub_or_build, Path) else hub_or_build
    client_options.setdefault("cache", None)
    async with Client(build_server(hub), mode=REVISIONS[revision], **client_options) as client:
        yield client


def large_catalog_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real build of a synthetic catalog with 250 agents of 4 capabilities (benchmarks/gen_catalog.py), made once
    per run: more names than a list, a description or a completion holds."""

    def make(root: Path) -> Path:
        generator = REPO / "benchmarks" / "gen_catalog.py"
        subprocess.run([sys.executable, str(generator), "250", "4", str(root / "agents")], check=True, timeout=120)
        return real_build(root / "agents", root / "build")

    yield from made_once(tmp_path_factory, "large-250-agents", make)
