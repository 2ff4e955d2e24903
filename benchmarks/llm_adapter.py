"""Invocation accuracy (optional): which tool does a real model pick, and do its arguments resolve?

For each prompt in benchmarks/prompts.json, the prompt is sent once to an OpenAI-compatible chat
completions endpoint together with the server's own tools/list, converted to function tools. The
model's tool calls are compared with the expected ones:

- tool accuracy: the model called the expected tool(s) (for multi-step prompts, every expected tool
  appears among the calls of its first turn);
- argument accuracy: each expected call is matched with a model call of the same tool, that call is
  sent to the real server, and the answer is judged exactly as in prompt_bench (expected agent,
  canonical capability, availability) on the first call;
- no-call rate: the model answered in prose without calling any tool.

Configuration (all from the environment; stdlib `urllib.request`, no extra dependencies):

    CAPIDX_BENCH_LLM_URL    base URL, e.g. https://api.openai.com/v1 (…/chat/completions is appended)
    CAPIDX_BENCH_LLM_MODEL  model name
    CAPIDX_BENCH_LLM_KEY    bearer token (optional for local endpoints that need none)

Without URL and model the script prints a skip message and exits 0. Single turn only: a scenario
is judged on the calls the model makes in its first reply (parallel tool calls).

    python benchmarks/llm_adapter.py [--subset N] [--json] [--mode aliases|no-aliases]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import prompt_bench as bench  # sibling module: benchmarks/ is not a package

ENV_URL = "CAPIDX_BENCH_LLM_URL"
ENV_MODEL = "CAPIDX_BENCH_LLM_MODEL"
ENV_KEY = "CAPIDX_BENCH_LLM_KEY"
SYSTEM_PROMPT = (
    "You help developers with AI coding agents. Use the available tools to answer questions about "
    "what the agents can do; call tools rather than answering from memory."
)
TIMEOUT_SECONDS = 60


def settings_from_env(environ: Mapping[str, str]) -> dict[str, str] | None:
    """URL, model and key, or None when the benchmark is not configured."""
    url, model = environ.get(ENV_URL, "").strip(), environ.get(ENV_MODEL, "").strip()
    if not url or not model:
        return None
    return {"url": url.rstrip("/"), "model": model, "key": environ.get(ENV_KEY, "").strip()}


def openai_tools(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """MCP tools (tools/list) as OpenAI function tools."""
    converted = []
    for tool in tools:
        schema = dict(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
        converted.append(
            {
                "type": "function",
                "function": {"name": tool.name, "description": tool.description or "", "parameters": schema},
            }
        )
    return converted


def chat(settings: Mapping[str, str], prompt: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """One chat completion request; returns the first choice's message."""
    body = {
        "model": settings["model"],
        "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
        "tools": tools,
        "tool_choice": "auto",
        "temperature": 0,
    }
    headers = {"Content-Type": "application/json"}
    if settings.get("key"):
        headers["Authorization"] = f"Bearer {settings['key']}"
    request = urllib.request.Request(
        f"{settings['url']}/chat/completions", data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
        data = json.loads(response.read().decode("utf-8"))
    return data["choices"][0]["message"]


def tool_calls(message: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) for each tool call in a chat message; unparsable arguments become {}."""
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = {}
        calls.append((function.get("name", ""), arguments if isinstance(arguments, dict) else {}))
    return calls


async def judge_prompt(client: Any, prompt: Mapping[str, Any], made: list[tuple[str, dict[str, Any]]]) -> dict:
    """Tool choice and server-judged argument accuracy for one prompt."""
    expected_tools = Counter(call["tool"] for call in prompt["calls"])
    made_tools = Counter(name for name, _ in made)
    tool_ok = bool(made) and all(made_tools[name] >= 1 for name in expected_tools)
    unused = list(made)
    calls = []
    for call in prompt["calls"]:
        match = next((m for m in unused if m[0] == call["tool"]), None)
        if match is None:
            calls.append({"tool": call["tool"], "outcome": "not called"})
            continue
        unused.remove(match)
        try:
            answer = bench.Answer.of(await client.call_tool(match[0], match[1]))
            verdict = bench.judge(match[0], match[1], call["expect"], answer)
            outcome, answered = verdict.outcome, answer.summary()
        except Exception as error:  # a malformed call the client refuses to send
            outcome, answered = "error", repr(error)
        calls.append({"tool": call["tool"], "arguments": match[1], "outcome": outcome, "answered": answered})
    return {
        "id": prompt["id"],
        "kind": prompt["kind"],
        "made": [{"tool": name, "arguments": args} for name, args in made],
        "toolCorrect": tool_ok,
        "argumentsCorrect": tool_ok and all(c["outcome"] == "correct" for c in calls),
        "noCall": not made,
        "calls": calls,
    }


async def run(settings: Mapping[str, str], prompts: Sequence[Mapping[str, Any]], build_dir: Path) -> list[dict]:
    import anyio.to_thread

    results = []
    with tempfile.TemporaryFile(mode="w+") as errlog:
        async with AsyncExitStack() as stack:
            client = await bench.connect(stack, build_dir, "stdio", errlog)
            tools = openai_tools((await client.list_tools()).tools)
            for prompt in prompts:
                try:
                    message = await anyio.to_thread.run_sync(chat, settings, prompt["prompt"], tools)
                except (urllib.error.URLError, TimeoutError, KeyError, IndexError, ValueError) as error:
                    results.append({"id": prompt["id"], "kind": prompt["kind"], "error": repr(error)})
                    continue
                results.append(await judge_prompt(client, prompt, tool_calls(message)))
    return results


def summarize(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    def block(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        n = len(rows)
        answered = [r for r in rows if "error" not in r]
        return {
            "prompts": n,
            "errors": n - len(answered),
            "toolAccuracy": bench.rate(sum(r["toolCorrect"] for r in answered), n),
            "argumentAccuracy": bench.rate(sum(r["argumentsCorrect"] for r in answered), n),
            "noCallRate": bench.rate(sum(r["noCall"] for r in answered), n),
        }

    by_kind: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for result in results:
        by_kind[result["kind"]].append(result)
    return {"total": block(results), "byKind": {k: block(by_kind[k]) for k in bench.KINDS if k in by_kind}}


def render(summary: Mapping[str, Any], results: Sequence[Mapping[str, Any]], model: str) -> str:
    lines = [f"model: {model}", f"{'kind':<16}{'n':>4}{'tool':>9}{'args':>9}{'no call':>9}{'errors':>8}"]
    for kind, row in [*summary["byKind"].items(), ("TOTAL", summary["total"])]:
        lines.append(
            f"{kind:<16}{row['prompts']:>4}{bench.pct(row['toolAccuracy']):>9}"
            f"{bench.pct(row['argumentAccuracy']):>9}{bench.pct(row['noCallRate']):>9}{row['errors']:>8}"
        )
    bad = [r for r in results if "error" in r or not r["argumentsCorrect"]]
    if bad:
        lines.append(f"not correct ({len(bad)}):")
        for result in bad:
            made = result.get("error") or json.dumps(result["made"], ensure_ascii=False)
            lines.append(f"  {result['id']} ({result['kind']}): {made}")
            for call in result.get("calls", ()):
                if call["outcome"] != "correct":
                    lines.append(f"      {call['tool']}: {call['outcome']} {call.get('answered', '')}".rstrip())
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subset", type=int, metavar="N", help="only N prompts, round-robin across kinds")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    parser.add_argument("--mode", choices=bench.MODES, default="aliases", help="build with or without aliases")
    args = parser.parse_args(argv)

    settings = settings_from_env(os.environ if environ is None else environ)
    if settings is None:
        print(f"llm adapter: skipped ({ENV_URL} and {ENV_MODEL} are not set; {ENV_KEY} is optional)")
        return 0
    import anyio

    prompts = bench.load_prompts()
    if args.subset:
        prompts = bench.select_subset(prompts, args.subset)
    with tempfile.TemporaryDirectory(prefix="capidx-llm-bench-") as tmp:
        try:
            build_dir = bench.build_catalog(Path(tmp) / args.mode, aliases=args.mode == "aliases")
        except bench.SetupError as error:
            print(f"llm adapter: {error}", file=sys.stderr)
            return 2
        results = anyio.run(run, settings, prompts, build_dir)
    summary = summarize(results)
    if args.json:
        print(json.dumps({"model": settings["model"], **summary, "results": results}, ensure_ascii=False, indent=2))
    else:
        print(render(summary, results, settings["model"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
