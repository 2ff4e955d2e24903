"""The server's own work per `lookup_capability` call, in process: no SDK, no JSON-RPC, no pipe.

    python benchmarks/resolver_latency.py                      # this checkout, on a build of the bundled catalog
    python benchmarks/resolver_latency.py --baseline ../old    # and another checkout, passes alternating

The queries are the bundled ones of every blind set in benchmarks/resolution but the unread check set (exact
names, typos, identifiers, abbreviations, whole sentences, names of things no agent has), each asked of its
agent, several passes. Over stdio the SDK, JSON-RPC and the pipe add 1-3 ms and most of the jitter
(benchmarks/serve_bench.py); this isolates what a change to the resolver does. With `--baseline`, the other
checkout (a folder holding `server/`, `schema/`, ...) is timed in its own process on the same build and
queries, pass for pass in turn, and the ratios are printed. Every pass follows a warm-up pass over the same
queries: the figures are the steady state, with each query's analysis cached (10-20 % below a first sight).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "resolution"))

from check_queries import UNREAD  # noqa: E402
from checkouts import importing, package_folder  # noqa: E402


def queries() -> list[tuple[str, str]]:
    """(agent as written, query) of every blind set's bundled file but the unread one."""
    found = []
    for path in sorted((HERE / "resolution").glob("*bundled_queries.json")):
        if path.name.startswith(f"{UNREAD}_"):
            continue
        found += [(item["agent"], item["query"]) for item in json.loads(path.read_text("utf-8"))]
    return found


def time_pass(build: Path, passes: int) -> list[float]:
    """Seconds per call, every query once per pass, after one warm-up pass (imports, caches)."""
    from capidx.server.snapshot import load_snapshot
    from capidx.server.tools import lookup_capability

    snapshot = load_snapshot(build)
    asked = queries()
    for agent, query in asked:
        lookup_capability(snapshot, agent, query)
    samples = []
    for _ in range(passes):
        for agent, query in asked:
            started = time.perf_counter()
            lookup_capability(snapshot, agent, query)
            samples.append(time.perf_counter() - started)
    return samples


def measure(build: Path, passes: int, checkout: Path) -> list[float]:
    """`time_pass` in a fresh process importing capidx from `checkout`."""
    with tempfile.TemporaryDirectory() as scratch:
        env = importing(package_folder(checkout, Path(scratch)))
        command = [sys.executable, __file__, "--build", str(build), "--passes", str(passes), "--samples"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    at = lambda q: ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000  # noqa: E731
    return {"p50": at(0.5), "p99": at(0.99), "max": ordered[-1] * 1000, "mean": sum(ordered) / len(ordered) * 1000}


def build_bundled(out: Path) -> Path:
    """The bundled catalog built by this checkout's compiler (an older resolver reads what it knows of it)."""
    command = [sys.executable, "-c", "from capidx.cli import main; main()", "build", "--out", str(out), "--quiet"]
    with tempfile.TemporaryDirectory() as scratch:
        env = importing(package_folder(HERE.parent, Path(scratch)))
        subprocess.run(command, cwd=HERE.parent, env=env, check=True, capture_output=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, help="build directory (default: build the bundled catalog)")
    parser.add_argument("--passes", type=int, default=3, help="passes over the queries per series")
    parser.add_argument("--series", type=int, default=3, help="series per checkout (alternating with --baseline)")
    parser.add_argument("--baseline", type=Path, help="another checkout to time in turn")
    parser.add_argument("--samples", action="store_true", help=argparse.SUPPRESS)  # one series as JSON
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        build = args.build.resolve() if args.build else build_bundled(Path(scratch) / "build")
        if args.samples:
            print(json.dumps(time_pass(build, args.passes)))
            return
        cases: dict[str, Path] = {"this checkout": HERE.parent}
        if args.baseline:
            cases["baseline"] = args.baseline
        results: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
        for _ in range(args.series):
            for name, checkout in cases.items():
                # Both in a fresh process, so that neither is timed warmer than the other.
                results[name].append(summary(measure(build, args.passes, checkout)))
    print(f"lookup_capability in process, {len(queries())} queries x {args.passes} passes, build {build}:")
    for name, rows in results.items():
        spans = {k: (min(r[k] for r in rows), max(r[k] for r in rows)) for k in ("p50", "p99", "max", "mean")}
        text = "   ".join(f"{k} {lo:.3f}-{hi:.3f} ms" for k, (lo, hi) in spans.items())
        print(f"  {name:<14} {text}   ({len(rows)} series)")
    if args.baseline:
        for key in ("p50", "p99", "mean"):
            ours = sorted(r[key] for r in results["this checkout"])[args.series // 2]
            theirs = sorted(r[key] for r in results["baseline"])[args.series // 2]
            print(f"  {key}: this checkout / baseline = {ours / theirs:.2f} (medians of the series)")


if __name__ == "__main__":
    main()
