"""Whole-process time, CPU and peak memory of `capidx build`: `python benchmarks/build_bench.py [--quick]`.

Every figure is one separate process, started from a fresh wrapper process so that `RUSAGE_CHILDREN`
reports that process alone: wall time, CPU time (user + system, all threads and any child processes)
and peak RSS (of its largest process: that is what `RUSAGE_CHILDREN` keeps). "all RSS" is the peak of
the RSS of the build and any processes it starts, sampled every 50 ms from /proc (Linux; 0 elsewhere),
and "all PSS" the peak of the sum of their proportional set sizes, sampled every 250 ms (reading it
costs the measured processes time; "-" for a run under a second, too short for that). Since issue 13
the build runs in one process, so the three agree up to sampling; they were kept for older code
measured with `--pythonpath`. Cases:

- baselines: `python -c pass` (interpreter start) and `capidx --version` (CLI start);
- the bundled catalog, cold (no previous build) and as a no-op rebuild;
- synthetic catalogs (`gen_catalog.py`): 1,000 capabilities cold and no-op, then a curve of cold
  builds at 2k, 5k, 10k and 20k capabilities with the cost per 1,000 capabilities (linear growth
  shows as a flat column). `--quick` stops the curve at 5k (well under a minute).

Figures are printed, never asserted: they depend on the machine and on what else runs on it, so the
load average is printed too, and `--repeat N` keeps each case's fastest of N runs (with the spread).

Two floors of the machine are printed first, to read the figures against: the cost of creating a file
where the builds are written (kernel time; it varies a lot between file systems, and even between
folders of one virtualized ext4 disk: from 0.02 to 0.6 ms per file have been seen on the same machine),
and tiktoken's single-thread throughput. `--out-root` chooses where builds go (e.g. /dev/shm, to take
the file system out of the figures). `--pythonpath DIR` runs another checkout's `capidx` (a folder
holding `capidx/compiler`, ...) for before/after comparisons.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
_WRAPPER = """
import json, os, resource, subprocess, sys, time

def field_kib(path, name):
    with open(path) as lines:
        return next((int(line.split()[1]) for line in lines if line.startswith(name)), 0)

def tree_kib(root, with_pss):
    # Resident memory of `root` and every process below it (Linux /proc; 0 elsewhere): the sum of their RSS,
    # which counts a page shared by several processes (a fork's) in each of them, and (`with_pss`) the sum of
    # their PSS, which divides it between them (what they really take together). Reading PSS walks a
    # process's page tables (~1 ms per 100 MB), so it is sampled less often, not to slow the build measured.
    rss, pss, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        try:
            rss += field_kib(f"/proc/{pid}/status", "VmRSS:")
            pss += field_kib(f"/proc/{pid}/smaps_rollup", "Pss:") if with_pss else 0
            with open(f"/proc/{pid}/task/{pid}/children") as children:
                todo += [int(child) for child in children.read().split()]
        except (OSError, ValueError):
            continue
    return rss, pss

start = time.perf_counter()
child = subprocess.Popen(sys.argv[2:], cwd=sys.argv[1], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
tree_peak = pss_peak = samples = 0
while child.poll() is None:
    rss, pss = tree_kib(child.pid, samples % 5 == 0)
    samples += 1
    tree_peak, pss_peak = max(tree_peak, rss), max(pss_peak, pss)
    time.sleep(0.05)
elapsed = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
pss_mib = pss_peak / 1024 if samples >= 20 else None  # under ~1 s: too few PSS samples to mean anything
print(json.dumps({"seconds": elapsed, "cpu": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024,
                  "tree_mib": tree_peak / 1024, "pss_mib": pss_mib, "exit": child.returncode}))
"""
CAPIDX = [sys.executable, "-c", "from capidx.cli import main; main()"]
# (agents, capabilities per agent): 1k, then the curve.
ONE_K = (5, 200)
CURVE = [(10, 200), (10, 500), (10, 1000), (20, 1000)]
QUICK_CURVE = CURVE[:2]


def run(cwd: Path, command: list[str], env: dict[str, str]) -> dict[str, float]:
    completed = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(cwd), *command], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(completed.stdout)


def measure(cwd: Path, command: list[str], env: dict[str, str], repeat: int, reset: Path | None = None) -> dict:
    """The fastest of `repeat` runs (by wall time); `reset` is removed before each run (a cold build)."""
    runs = []
    for _ in range(repeat):
        if reset is not None:
            shutil.rmtree(reset, ignore_errors=True)
        runs.append(run(cwd, command, env))
    best = min(runs, key=lambda figures: figures["seconds"])
    spread = [figures["seconds"] for figures in runs]
    return {**best, "spread": (min(spread), statistics.median(spread), max(spread)) if repeat > 1 else None}


def synthetic(work: Path, agents: int, per_agent: int) -> Path:
    target = work / f"catalog-{agents}x{per_agent}"
    if not target.exists():
        subprocess.run(
            [sys.executable, str(HERE / "gen_catalog.py"), str(agents), str(per_agent), str(target)], check=True
        )
    return target


def file_creation_us(root: Path, files: int = 3000, size: int = 1600) -> float:
    """Microseconds to create one small file under `root` (what the build does tens of thousands of times)."""
    folder = Path(tempfile.mkdtemp(prefix="capidx-fs-probe-", dir=root))
    try:
        for index in range(20):
            (folder / str(index)).mkdir()
        data = b"x" * size
        start = time.perf_counter()
        for index in range(files):
            with open(folder / str(index % 20) / f"{index}.json", "wb") as handle:
                handle.write(data)
        return (time.perf_counter() - start) / files * 1e6
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def tokenizer_mb_per_s(env: dict[str, str]) -> float:
    sample = REPO / "docs" / "build-directory.md"
    code = (
        "import time; from capidx.compiler.emit.tokens import load_encoding; e = load_encoding('cl100k_base'); "
        f"text = open({str(sample)!r}, encoding='utf-8').read() * 4; start = time.perf_counter(); "
        "e.encode_ordinary(text); print(len(text) / (time.perf_counter() - start) / 1e6)"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return float(completed.stdout)


def row(label: str, figures: dict, per_k: float | None = None) -> None:
    status = "" if figures["exit"] in (0, 1) else f"  (exit {figures['exit']})"
    spread = ""
    if figures.get("spread"):
        low, mid, high = figures["spread"]
        spread = f"  [{low:.2f} / {mid:.2f} / {high:.2f}]"
    cost = f"{per_k:8.2f} s" if per_k is not None else " " * 10
    pss = f"{figures['pss_mib']:7.0f} MiB" if figures["pss_mib"] is not None else f"{'-':>11}"
    print(
        f"{label:<40} {figures['seconds']:7.2f} s {figures['cpu']:7.2f} s {figures['peak_mib']:7.0f} MiB "
        f"{figures['tree_mib']:7.0f} MiB {pss} {cost}{status}{spread}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop the curve at 5k capabilities (skip 10k and 20k)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; the fastest is shown (default 1)")
    parser.add_argument("--out-root", type=Path, help="where build directories go (default: a temporary folder)")
    parser.add_argument("--pythonpath", type=Path, help="run the capidx found in this folder (before/after)")
    options = parser.parse_args()
    env = dict(os.environ)
    if options.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(options.pythonpath.resolve()), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="capidx-bench-") as temp:
        work = Path(temp)
        outs = Path(tempfile.mkdtemp(prefix="capidx-bench-out-", dir=options.out_root or work))
        try:
            _run(work, outs, env, options)
        finally:
            shutil.rmtree(outs, ignore_errors=True)


def _run(work: Path, outs: Path, env: dict[str, str], options: argparse.Namespace) -> None:
    repeat = max(1, options.repeat)
    print(f"cpus: {os.cpu_count()}, load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, out: {outs}")
    print(
        f"floors: creating a 1.6 KB file there takes {file_creation_us(outs):.0f} µs; "
        f"tiktoken encodes {tokenizer_mb_per_s(env):.1f} MB/s on one thread"
    )
    print(f"{'case':<40} {'wall':>9} {'cpu':>9} {'peak RSS':>11} {'all RSS':>11} {'all PSS':>11} {'wall/1k caps':>10}")
    row("python -c pass", measure(REPO, [sys.executable, "-c", "pass"], env, repeat))
    row("capidx --version", measure(REPO, [*CAPIDX, "--version"], env, repeat))
    bundled = outs / "bundled"
    build = [*CAPIDX, "build", "--config", str(REPO / "capidx.yaml"), "--out", str(bundled), "-q"]
    row("bundled catalog, cold", measure(REPO, build, env, repeat, reset=bundled))
    row("bundled catalog, no-op rebuild", measure(REPO, build, env, repeat))
    curve = [ONE_K, *(QUICK_CURVE if options.quick else CURVE)]
    for agents, per_agent in curve:
        catalog = synthetic(work, agents, per_agent)
        out = outs / catalog.name
        total = agents * per_agent
        build = [*CAPIDX, "build", "--agents", str(catalog), "--out", str(out), "-q"]
        cold = measure(work, build, env, repeat, reset=out)
        row(f"{total:,} capabilities ({agents} × {per_agent}), cold", cold, cold["seconds"] / total * 1000)
        if (agents, per_agent) == ONE_K:
            row(f"{total:,} capabilities, no-op rebuild", measure(work, build, env, repeat))
        shutil.rmtree(out, ignore_errors=True)  # keep the disk (and the next case's file system) clean


if __name__ == "__main__":
    main()
