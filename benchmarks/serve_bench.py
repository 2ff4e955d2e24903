"""Benchmarks for `capidx serve`: startup, first vs warm read, read latency over stdio, HTTP throughput.

    python benchmarks/serve_bench.py                 # builds the bundled catalog into a temp dir
    python benchmarks/serve_bench.py --build build   # or serve an existing build
    python benchmarks/serve_bench.py --json          # machine-readable
    python benchmarks/serve_bench.py --start-only --build B [--pythonpath OLD]   # start-up, vs a minimal server
    python benchmarks/serve_bench.py --no-http --pythonpath OLD   # the stdio series of the capidx in OLD

Every measurement goes through a real client and a real subprocess (`capidx serve`): the stdio
figures use the MCP Python SDK client (response cache off) and, beside it, raw newline-delimited JSON-RPC
over the same pipes (what the server's round trip costs without the SDK client's own work, with the
server's CPU time per call where /proc shows it); the HTTP figures raw JSON-RPC POSTs with httpx2 against
the stateless streamable-HTTP endpoint. Counts and durations are bounded by the flags.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from checkouts import importing, package_folder  # noqa: E402

CLI = [sys.executable, "-c", "from capidx.cli import main; main()"]
SUMMARY = "capability-index://summary"
FULL = "capability-index://full"
MODES = {"2025-11-25": "legacy", "2026-07-28": "auto"}
SCORED_QUERY = "let the agent review my pull request before I merge"  # no exact name: the scoring path
# The `initialize` a raw client sends (start-up and the raw stdio series).
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "serve_bench", "version": "0"},
}


def start_once(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """Spawn `command`, send `initialize` on its stdin, and time until its answer's line arrives.

    Raw newline-delimited JSON-RPC over the pipes, as a client sends it: this times the server, not a client
    library. Returns (seconds, peak RSS of the server in KiB, from `wait4` after stdin is closed).
    """
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(request) + "\n").encode())
    proc.stdin.flush()
    answer = proc.stdout.readline()
    seconds = time.perf_counter() - started
    if b'"result"' not in answer:
        proc.kill()
        raise SystemExit(f"{command[:4]}: no initialize result: {answer[:300]!r}")
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped above
    return seconds, usage.ru_maxrss


def start_comparison(build: Path, runs: int, pythonpath: Path | None) -> list[dict[str, Any]]:
    """spawn -> `initialize` answered for a minimal SDK server, this capidx and (`--pythonpath`) another one.

    The cases are interleaved run by run, so that load on the (shared) machine hits them alike.
    """
    serve = ["serve", "--build", str(build), "--no-reload", "--expose", "summary,stats,full"]
    env = dict(os.environ)
    cases: list[tuple[str, list[str], dict[str, str]]] = [
        ("minimal SDK server", [sys.executable, str(REPO / "benchmarks" / "minimal_server.py")], env),
        ("capidx serve", [*CLI, *serve], env),
    ]
    if pythonpath is not None:
        cases.append(("capidx serve (--pythonpath)", [*CLI, *serve], importing(pythonpath)))
    samples: dict[str, list[tuple[float, int]]] = {name: [] for name, _, _ in cases}
    for _ in range(runs):
        for name, command, case_env in cases:
            samples[name].append(start_once(command, build.parent, case_env))
    rows = []
    for name, _, _ in cases:
        seconds = sorted(s for s, _ in samples[name])
        rows.append(
            {
                "case": name,
                "n": runs,
                "median_s": round(statistics.median(seconds), 3),
                "min_s": round(seconds[0], 3),
                "max_s": round(seconds[-1], 3),
                "peak_rss_mib": round(max(kib for _, kib in samples[name]) / 1024, 1),
            }
        )
    base = rows[0]["median_s"]
    for row in rows:
        row["vs_minimal"] = round(row["median_s"] / base, 2)
    return rows


def build_bundled(out: Path) -> Path:
    result = subprocess.run(
        [*CLI, "build", "--agents", str(REPO / "agents"), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    if not (out / "manifest.json").is_file():
        raise SystemExit(f"capidx build failed:\n{result.stderr[-2000:]}")
    return out


# Set by --pythonpath outside --start-only: the environment of every stdio server, importing capidx from there.
SERVER_ENV: dict[str, str] | None = None


def stdio_params(build: Path) -> StdioServerParameters:
    command, *args = [*CLI, "serve", "--build", str(build), "--no-reload", "--expose", "summary,stats,full"]
    return StdioServerParameters(command=command, args=args, cwd=str(build.parent), env=SERVER_ENV)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summarize(samples: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 0.50), 3),
        "p99_ms": round(percentile(ms, 0.99), 3),
        "mean_ms": round(statistics.fmean(ms), 3),
    }


async def startup(build: Path, runs: int) -> dict[str, Any]:
    """Spawn -> initialized, the first read after start against warm reads, and the first scored lookup
    against warm ones (the first tool call makes the argument validators and imports rapidfuzz)."""
    spawn, first, warm, first_lookup, warm_lookup = [], [], [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        async with Client(stdio_params(build), mode="legacy", cache=None) as client:
            spawn.append(time.perf_counter() - started)
            t = time.perf_counter()
            await client.read_resource(SUMMARY)
            first.append(time.perf_counter() - t)
            for _ in range(20):
                t = time.perf_counter()
                await client.read_resource(SUMMARY)
                warm.append(time.perf_counter() - t)
            for samples in [first_lookup, *[warm_lookup] * 20]:
                t = time.perf_counter()
                await client.call_tool("lookup_capability", {"agent": "claude", "capability": SCORED_QUERY})
                samples.append(time.perf_counter() - t)
    return {
        "spawn_to_initialized": summarize(spawn),
        "first_read": summarize(first),
        "warm_read": summarize(warm),
        "first_lookup": summarize(first_lookup),
        "warm_lookup": summarize(warm_lookup),
    }


async def stdio_reads(build: Path, reads: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for revision, mode in MODES.items():
        async with Client(stdio_params(build), mode=mode, cache=None) as client:
            # The server loads the embedding model and embeds the catalog in the background as it starts; a scored
            # lookup waits for them, so the series below measure the steady state, not reads racing that start-up.
            await client.call_tool("lookup_capability", {"agent": "claude", "capability": SCORED_QUERY})
            for uri in (SUMMARY, FULL):
                await client.read_resource(uri)  # warm-up
                samples = []
                for _ in range(reads):
                    t = time.perf_counter()
                    await client.read_resource(uri)
                    samples.append(time.perf_counter() - t)
                results[f"{revision} {uri.rsplit('/', 1)[1]}"] = summarize(samples)
            samples = []
            for _ in range(reads):
                t = time.perf_counter()
                await client.call_tool("lookup_capability", {"agent": "claude", "capability": "mcp"})
                samples.append(time.perf_counter() - t)
            results[f"{revision} lookup_capability"] = summarize(samples)
            results[f"{revision} lookup_capability, blind queries"] = await blind_lookups(client, reads)
    return results


async def blind_lookups(client: Client, reads: int) -> dict[str, float]:
    """`lookup_capability` over the blind resolution queries (benchmarks/resolution: exact names, typos,
    identifiers, abbreviations, whole sentences), cycled: the resolver's scoring path, not only lookups."""
    queries = blind_queries()
    samples = []
    for i in range(reads):
        query = queries[i % len(queries)]
        t = time.perf_counter()
        await client.call_tool("lookup_capability", {"agent": query["agent"], "capability": query["query"]})
        samples.append(time.perf_counter() - t)
    return summarize(samples) | {"first_ms": round(samples[0] * 1000, 1), "over_5_ms": sum(s > 0.005 for s in samples)}


async def from_start(build: Path, reads: int) -> dict[str, Any]:
    """The blind lookups from the moment `initialize` is answered, nothing asked before: a client that asks at once
    meets the server while it loads the embedding model (about a third of a second), which the series above wait
    out. Its first lookup waits for the model; the p99 says whether the rest do."""
    results: dict[str, Any] = {}
    for revision, mode in MODES.items():
        async with Client(stdio_params(build), mode=mode, cache=None) as client:
            results[f"{revision} lookup_capability, blind queries"] = await blind_lookups(client, reads)
    return results


@functools.cache
def blind_queries() -> list[dict[str, Any]]:
    """The bundled catalog's first blind query set (benchmarks/resolution/bundled_queries.json), read once."""
    return json.loads((REPO / "benchmarks" / "resolution" / "bundled_queries.json").read_text("utf-8"))


def raw_round_trips(build: Path, reads: int) -> dict[str, Any]:
    """The stdio series again with raw JSON-RPC lines instead of the SDK client (protocol 2025-11-25): a client
    library's own work per call (about a millisecond of CPU for the Python SDK's) is not the server's."""
    params = stdio_params(build)
    proc = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=params.cwd,
        env=params.env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    sent = 0

    def call(method: str, arguments: dict[str, Any]) -> None:
        nonlocal sent
        sent += 1
        request = {"jsonrpc": "2.0", "id": sent, "method": method, "params": arguments}
        proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.flush()
        while (line := proc.stdout.readline()) and json.loads(line).get("id") != sent:
            pass  # a notification
        if not line or "result" not in json.loads(line):
            raise SystemExit(f"{method}: no result: {line[:300]!r}")

    queries = blind_queries()
    series = {
        "summary read": lambda i: ("resources/read", {"uri": SUMMARY}),
        "lookup_capability": lambda i: (
            "tools/call",
            {"name": "lookup_capability", "arguments": {"agent": "claude", "capability": "mcp"}},
        ),
        "lookup_capability, blind queries": lambda i: (
            "tools/call",
            {
                "name": "lookup_capability",
                "arguments": {
                    "agent": queries[i % len(queries)]["agent"],
                    "capability": queries[i % len(queries)]["query"],
                },
            },
        ),
    }
    results: dict[str, Any] = {}
    try:
        call("initialize", INITIALIZE)
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        # As in the SDK series: a scored lookup waits for the model the server loads as it starts, whose thread's CPU
        # /proc would count in the first series.
        call("tools/call", {"name": "lookup_capability", "arguments": {"agent": "claude", "capability": SCORED_QUERY}})
        for name, request in series.items():
            for i in range(min(reads, len(queries))):  # warm-up (blind series: each query once, model loaded)
                call(*request(i))
            cpu, samples = _cpu_seconds(proc.pid), []
            for i in range(reads):
                t = time.perf_counter()
                call(*request(i))
                samples.append(time.perf_counter() - t)
            results[name] = summarize(samples)
            if cpu is not None and (after := _cpu_seconds(proc.pid)) is not None:
                results[name]["server_cpu_ms"] = round((after - cpu) / reads * 1000, 3)
    finally:
        proc.stdin.close()
        proc.wait(timeout=15)
    return results


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far, from /proc (None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_http(build: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    command = [*CLI, "serve", "--build", str(build), "--no-reload", "--expose", "summary,stats,full"]
    command += ["--transport", "http", "--port", "0"]
    stderr = log.open("w")
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=stderr, cwd=build.parent, env=SERVER_ENV)
    stderr.close()
    deadline = time.monotonic() + 30
    while not (found := re.search(r"listening on (\S+)", log.read_text())):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"HTTP server did not start:\n{log.read_text()}")
        time.sleep(0.05)
    return proc, found.group(1)


async def http_throughput(url: str, uri: str, concurrency: int, seconds: float, cap: int) -> dict[str, Any]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}})
    done = 0
    failures = 0
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def worker(http: httpx2.AsyncClient) -> None:
        nonlocal done, failures
        while time.perf_counter() < deadline and done < cap:
            t = time.perf_counter()
            response = await http.post(url, content=body, headers=headers)
            latencies.append(time.perf_counter() - t)
            if response.status_code != 200 or b'"contents"' not in response.content:
                failures += 1
            done += 1

    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx2.AsyncClient(limits=limits, timeout=30) as http:
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(worker, http)
        elapsed = time.perf_counter() - started
    return {
        "concurrency": concurrency,
        "reads": done,
        "failures": failures,
        "reads_per_second": round(done / elapsed, 1),
        **summarize(latencies),
    }


async def run(args: argparse.Namespace, build: Path) -> dict[str, Any]:
    report: dict[str, Any] = {"build": str(build), "python": sys.version.split()[0]}
    manifest = json.loads((build / "manifest.json").read_text("utf-8"))
    sizes = {a["uri"]: (a["bytes"], a["tokens"]) for a in manifest["artifacts"] if a["uri"] in (SUMMARY, FULL)}
    report["artifacts"] = {uri: {"bytes": b, "tokens": t} for uri, (b, t) in sizes.items()}
    report["startup"] = await startup(build, args.startup_runs)
    report["stdio"] = await stdio_reads(build, args.reads)
    report["stdio_from_start"] = await from_start(build, args.reads)
    report["stdio_raw"] = await anyio.to_thread.run_sync(raw_round_trips, build, args.reads)
    report["http"] = []
    if args.no_http:
        return report
    proc, url = start_http(build, Path(tempfile.mkdtemp()) / "http.log")
    try:
        report["http"] = [
            await http_throughput(url, uri, n, args.http_seconds, args.http_cap)
            for uri in (SUMMARY, FULL)
            for n in args.concurrency
        ]
        for row, uri in zip(report["http"], [u for u in (SUMMARY, FULL) for _ in args.concurrency], strict=True):
            row["uri"] = uri
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    return report


def print_report(report: dict[str, Any]) -> None:
    print(f"build: {report['build']}")
    for uri, info in report["artifacts"].items():
        print(f"  {uri}: {info['bytes']:,} bytes, {info['tokens']}")
    print("startup (stdio, legacy handshake):")
    for name, row in report["startup"].items():
        print(f"  {name:<22} p50 {row['p50_ms']:>9.2f} ms   p99 {row['p99_ms']:>9.2f} ms   (n={row['n']})")
    print("stdio round trips (SDK client, cache off):")
    for name, row in report["stdio"].items():
        print(f"  {name:<30} p50 {row['p50_ms']:>7.3f} ms   p99 {row['p99_ms']:>7.3f} ms   (n={row['n']})")
    print("stdio round trips from the `initialize` answer on (SDK client; no lookup before, the model loading):")
    for name, row in report["stdio_from_start"].items():
        print(
            f"  {name:<30} p50 {row['p50_ms']:>7.3f} ms   p99 {row['p99_ms']:>7.3f} ms   first {row['first_ms']:.1f} ms"
            f"   over 5 ms: {row['over_5_ms']}   (n={row['n']})"
        )
    print("stdio round trips (raw JSON-RPC, 2025-11-25; the server's CPU per call):")
    for name, row in report["stdio_raw"].items():
        cpu = f"   server CPU {row['server_cpu_ms']:.3f} ms" if "server_cpu_ms" in row else ""
        print(f"  {name:<32} p50 {row['p50_ms']:>7.3f} ms   p99 {row['p99_ms']:>7.3f} ms{cpu}   (n={row['n']})")
    print("HTTP resources/read (stateless, raw JSON-RPC POSTs, keep-alive):")
    for row in report["http"]:
        print(
            f"  {row['uri'].rsplit('/', 1)[1]:<8} x{row['concurrency']:<3} {row['reads_per_second']:>8.1f} reads/s   "
            f"p50 {row['p50_ms']:>7.2f} ms   p99 {row['p99_ms']:>7.2f} ms   ({row['reads']} reads, "
            f"{row['failures']} failed)"
        )


def print_start(build: Path, rows: list[dict[str, Any]]) -> str:
    lines = [f"spawn -> initialize answered (raw JSON-RPC over stdio), build {build}:"]
    for row in rows:
        lines.append(
            f"  {row['case']:<50} median {row['median_s']:>7.3f} s  (min {row['min_s']:.3f}, max {row['max_s']:.3f},"
            f" n={row['n']})  {row['vs_minimal']:>5.2f}x minimal   peak RSS {row['peak_rss_mib']:>7.1f} MiB"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, help="build directory (default: build the bundled catalog)")
    parser.add_argument("--reads", type=int, default=1000, help="reads per stdio latency series")
    parser.add_argument("--startup-runs", type=int, default=5)
    parser.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 16])
    parser.add_argument("--http-seconds", type=float, default=5.0, help="time limit per HTTP series")
    parser.add_argument("--http-cap", type=int, default=20_000, help="read limit per HTTP series")
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP throughput series")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--start-only", action="store_true", help="only spawn -> initialize, against benchmarks/minimal_server.py"
    )
    parser.add_argument(
        "--pythonpath",
        type=Path,
        help="a capidx checkout (or a folder holding a capidx package): with --start-only also timed, else it serves"
        " every series",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        build = args.build.resolve() if args.build else build_bundled(Path(scratch) / "build")
        pythonpath = package_folder(args.pythonpath, Path(scratch)) if args.pythonpath else None
        if args.start_only:
            rows = start_comparison(build, args.startup_runs, pythonpath)
            print(json.dumps(rows, indent=2) if args.json else print_start(build, rows))
            return
        if pythonpath:
            global SERVER_ENV
            SERVER_ENV = importing(pythonpath)
        report = anyio.run(run, args, build)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
