"""Whole-process time and peak memory of `capidx build`: `python benchmarks/build_bench.py [--quick] [--out-root DIR]`.

Cases: the bundled catalog cold and as a no-op rebuild, a synthetic 1,000-capability catalog, a
20,000-capability one (20 agents × 1,000), and a curve (2k/5k/10k/20k) to show linear growth. Each
build runs in its own process, measured from a fresh wrapper process so `RUSAGE_CHILDREN` reports
that build's peak RSS alone. Figures are printed, never asserted (they depend on the machine).

`--out-root` puts build directories elsewhere (e.g. /dev/shm) to separate capidx's own cost from
the file system's: on some virtualized disks creating a file costs ~1 ms, which dominates.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
_WRAPPER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], cwd=sys.argv[1], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
print(json.dumps({"seconds": elapsed, "peak_mib": peak / 1024, "exit": done.returncode}))
"""
CAPIDX = [sys.executable, "-c", "from capidx.compiler.cli import main; main()"]


def measure(cwd: Path, *args: str) -> dict[str, float]:
    completed = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(cwd), *CAPIDX, "build", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout)


def synthetic(work: Path, agents: int, per_agent: int) -> Path:
    target = work / f"catalog-{agents}x{per_agent}"
    if not target.exists():
        subprocess.run(
            [sys.executable, str(HERE / "gen_catalog.py"), str(agents), str(per_agent), str(target)], check=True
        )
    return target


def report(label: str, figures: dict[str, float]) -> None:
    status = "" if figures["exit"] in (0, 1) else f"  (exit {figures['exit']})"
    print(f"{label:<38} {figures['seconds']:7.2f} s  {figures['peak_mib']:7.0f} MiB{status}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 10k and 20k cases")
    parser.add_argument("--out-root", type=Path, help="where build directories go (default: the work dir)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="capidx-bench-") as temp:
        work = Path(temp)
        outs = Path(tempfile.mkdtemp(prefix="capidx-bench-out-", dir=options.out_root or work))
        try:
            _run(work, outs, options.quick)
        finally:
            shutil.rmtree(outs, ignore_errors=True)


def _run(work: Path, outs: Path, quick: bool) -> None:
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}, out: {outs}")
    bundled = outs / "bundled"
    config = ["--config", str(REPO / "capidx.yaml")]
    report("bundled catalog, cold", measure(REPO, *config, "--out", str(bundled), "-q"))
    report("bundled catalog, no-op rebuild", measure(REPO, *config, "--out", str(bundled), "-q"))
    sizes = [(5, 200)] + ([] if quick else [(10, 200), (10, 500), (10, 1000), (20, 1000)])
    for agents, per_agent in sizes:
        catalog = synthetic(work, agents, per_agent)
        out = outs / catalog.name
        label = f"{agents * per_agent:,} capabilities ({agents} agents × {per_agent}), cold"
        report(label, measure(work, "--agents", str(catalog), "--out", str(out), "-q"))
        if (agents, per_agent) in ((5, 200), (20, 1000)):
            report(
                f"{agents * per_agent:,} capabilities, no-op rebuild",
                measure(work, "--agents", str(catalog), "--out", str(out), "-q"),
            )


if __name__ == "__main__":
    main()
