"""Synthetic, schema-valid build manifests for the report tests.

Every manifest this module returns is validated against `schema/build-manifest.schema.json`, so the
synthetic data cannot drift from the contract `capidx build` writes. Token counts are deterministic
functions of the artifact's URI (and an optional per-URI override), so tests can state exact figures.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

PREFIX = "capability-index://"
PRIMARY = "cl100k_base"

DEFAULT_AGENTS = ("alpha-cli", "beta-ide", "gamma-web")
DEFAULT_CAPABILITIES = {
    "mcp-servers": "api-integration",
    "plugins": "customization",
    "test-generation": "testing",
    "inline-completion": "code-completion",
}

# A base token count per kind; each document adds a few tokens derived from its URI.
_BASE_TOKENS = {
    "summary": 1_800,
    "full": 24_000,
    "stats": 400,
    "agent": 2_000,
    "capability": 900,
    "category": 1_200,
    "lookup": 150,
    "compare": 500,
    "list": 200,
    "sources": 120,
    "index": 3_000,
}


@cache
def manifest_schema() -> dict[str, Any]:
    text = resources.files("capidx.schema").joinpath("build-manifest.schema.json").read_text("utf-8")
    return json.loads(text)


def check(manifest: Mapping[str, Any]) -> None:
    """Raise `jsonschema.ValidationError` unless `manifest` follows the build-manifest schema."""
    _check_json(json.dumps(manifest, sort_keys=True))


@cache
def _check_json(text: str) -> None:
    """Each distinct manifest is validated once per process: most tests make the same few, and jsonschema takes
    tens of milliseconds for one."""
    jsonschema.Draft202012Validator(manifest_schema()).validate(json.loads(text))


def make_manifest(
    agents: Sequence[str] = DEFAULT_AGENTS,
    capabilities: Mapping[str, str] | None = None,
    *,
    budgets: Mapping[str, int] | None = None,
    tokens: Mapping[str, int] | None = None,
    encodings: Sequence[str] = (PRIMARY,),
    kinds: Sequence[str] | None = None,
    capidx_version: str = "0.1.0",
) -> dict[str, Any]:
    """A manifest for `agents` × `capabilities` (slug → category).

    `tokens` overrides the primary-encoding count of artifacts by URI suffix (`"full"`,
    `"agents/alpha-cli"`); `budgets` (kind → tokens) adds budget rows computed like the build does;
    `kinds` keeps only the listed artifact kinds.
    """
    capabilities = dict(DEFAULT_CAPABILITIES if capabilities is None else capabilities)
    overrides = dict(tokens or {})
    artifacts = [
        _artifact(kind, name, path, params, encodings, overrides)
        for kind, name, path, params in _layout(sorted(agents), capabilities)
        if kinds is None or kind in kinds
    ]
    artifacts.sort(key=lambda item: item["path"])
    manifest = {
        "format": 1,
        "capidx": capidx_version,
        "inputDigest": "sha256:" + _sha256(json.dumps([agents, capabilities, overrides], sort_keys=True)),
        "uriPrefix": PREFIX,
        "encodings": list(encodings),
        "catalog": {
            "agents": sorted(agents),
            "capabilities": sorted(capabilities),
            "categories": sorted(set(capabilities.values())),
        },
        "resourceTemplates": _resource_templates(),
        "budgets": budget_rows(artifacts, budgets or {}, encodings[0]),
        "artifacts": artifacts,
    }
    check(manifest)
    return manifest


def budget_rows(artifacts: Sequence[Mapping[str, Any]], budgets: Mapping[str, int], encoding: str) -> list[dict]:
    """Budget results as the build computes them: the largest document of each budgeted kind."""
    rows = []
    for kind, budget in sorted(budgets.items()):
        of_kind = [item for item in artifacts if item["kind"] == kind]
        largest = max(of_kind, key=lambda item: (item["tokens"][encoding], item["uri"]), default=None)
        tokens = largest["tokens"][encoding] if largest else 0
        uri = largest["uri"] if largest else ""
        rows.append({"kind": kind, "budget": budget, "tokens": tokens, "uri": uri, "ok": tokens <= budget})
    return rows


def write_build(directory: Path, manifest: Mapping[str, Any]) -> Path:
    """Write `manifest` as `directory/manifest.json` (the report reads nothing else); return the directory."""
    check(manifest)
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    (directory / "manifest.json").write_text(text, encoding="utf-8")
    return directory


def write_memory_build(directory: Path, text: str | bytes, **options: Any) -> Path:
    """A build (`make_manifest(**options)`) whose manifest also lists a `memory` artifact, `memory.md` holding
    `text`, measured like the build measures it: what `capidx inject` reads."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    manifest = make_manifest(**options)
    row = _artifact("summary", "memory", "memory.md", {}, manifest["encodings"], {"memory": len(data) // 4})
    row.update(kind="memory", bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), title="Memory")
    manifest["artifacts"] = sorted([*manifest["artifacts"], row], key=lambda item: item["path"])
    manifest["inputDigest"] = "sha256:" + hashlib.sha256(manifest["inputDigest"].encode() + data).hexdigest()
    write_build(directory, manifest)
    (directory / "memory.md").write_bytes(data)
    return directory


def uri(suffix: str) -> str:
    return PREFIX + suffix


def _layout(agents: Sequence[str], capabilities: Mapping[str, str]):
    """(kind, uri suffix, path, params) for every artifact, following docs/build-directory.md."""
    categories = sorted(set(capabilities.values()))
    yield "summary", "summary", "summary.md", {}
    yield "full", "full", "full.md", {}
    yield "stats", "stats", "stats.json", {}
    yield "index", "index/match", "index/match.json", {}
    for agent in agents:
        yield "agent", f"agents/{agent}", f"agents/{agent}.md", {"agent": agent}
        yield "list", f"tools/list/{agent}/_all", f"tools/list/{agent}/_all.json", {"agent": agent}
        yield "sources", f"tools/sources/{agent}/_all", f"tools/sources/{agent}/_all.json", {"agent": agent}
        for category in categories:
            suffix = f"tools/list/{agent}/{category}"
            yield "list", suffix, suffix + ".json", {"agent": agent, "category": category}
    for category in categories:
        yield "category", f"categories/{category}", f"categories/{category}.md", {"category": category}
        yield "list", f"tools/list/_all/{category}", f"tools/list/_all/{category}.json", {"category": category}
    for slug in sorted(capabilities):
        yield "capability", f"capabilities/{slug}", f"capabilities/{slug}.md", {"capability": slug}
        yield "compare", f"tools/compare/{slug}", f"tools/compare/{slug}.json", {"capability": slug}
        suffix = f"tools/sources/_all/{slug}"
        yield "sources", suffix, suffix + ".json", {"capability": slug}
        for agent in agents:
            params = {"agent": agent, "capability": slug}
            yield "lookup", f"tools/lookup/{agent}/{slug}", f"tools/lookup/{agent}/{slug}.json", params
            suffix = f"tools/sources/{agent}/{slug}"
            yield "sources", suffix, suffix + ".json", params


def _artifact(
    kind: str,
    suffix: str,
    path: str,
    params: Mapping[str, str],
    encodings: Sequence[str],
    overrides: Mapping[str, int],
) -> dict[str, Any]:
    primary = overrides.get(suffix, _BASE_TOKENS[kind] + _spread(suffix))
    # Other encodings count a little fewer tokens, as o200k_base does on English text.
    counts = {name: primary if i == 0 else primary * 9 // 10 for i, name in enumerate(encodings)}
    mime = "application/json" if path.endswith(".json") else "text/markdown"
    return {
        "kind": kind,
        "uri": PREFIX + suffix,
        "path": path,
        "mimeType": mime,
        "title": suffix.rsplit("/", 1)[-1].replace("-", " ").title(),
        "description": f"{kind} document ({primary} tokens)",
        "bytes": primary * 4,
        "sha256": _sha256(f"{suffix}:{primary}"),
        "tokens": counts,
        "words": primary * 3 // 4,
        "lines": max(1, primary // 12),
        "params": dict(params),
    }


def _spread(suffix: str) -> int:
    """A stable 0..99 offset so documents of one kind differ in size."""
    return int(_sha256(suffix)[:4], 16) % 100


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _resource_templates() -> list[dict[str, str]]:
    return [
        {
            "kind": kind,
            "uriTemplate": f"{PREFIX}{folder}/{{{kind}}}",
            "name": kind,
            "title": f"One {kind}",
            "description": f"One {kind}'s document.",
            "mimeType": "text/markdown",
            "parameter": kind,
        }
        for kind, folder in (("agent", "agents"), ("capability", "capabilities"), ("category", "categories"))
    ]


def artifact_bytes(build: Path, row: Mapping[str, Any]) -> bytes:
    """The bytes of one manifest row of a build: its file, or its slice of a pack (a row with `offset`)."""
    data = (build / row["path"]).read_bytes()
    if "offset" not in row:
        return data
    return data[row["offset"] : row["offset"] + row["bytes"]]


def build_text(build: Path, path: str, prefix: str = PREFIX) -> str:
    """A file of a build by its path, or a packed tool answer by the path it had as a file of its own
    (`tools/lookup/<agent>/<capability>.json`: its URI's tail, with the extension)."""
    if not path.startswith("tools/"):
        return (build / path).read_text("utf-8")
    uri = prefix + path.rpartition(".")[0]
    rows = json.loads((build / "manifest.json").read_text("utf-8"))["artifacts"]
    (row,) = [row for row in rows if row["uri"] == uri]
    return artifact_bytes(build, row).decode("utf-8")
