"""capidx side by side with the plain baseline scripts (issue 13, part 6): `python benchmarks/baseline_bench.py`.

Issue 13 sets capidx's targets relative to what catalog maintainers run today: the three plain scripts of
`benchmarks/baseline/` (check, matrix, static JSON API). This script runs, as whole processes, on the same
catalog (the bundled one, then generated ones, `gen_catalog.py`):

- the three baseline scripts together (one after the other) against `capidx build` into a fresh --out
  (target ≤ 2.0×) and against a no-op rebuild (a second build, nothing changed; target ≤ 1.0×);
- `capidx validate -q` against `check.py` (target ≤ 3×);
- the cold build's CPU per 1,000 capabilities (target ≤ 0.75 s) and its peak memory (20,000 capabilities:
  ≤ 600 MiB for all the build's processes together).

Every case runs once per round after `--warmup` discarded rounds, `-n` rounds, interleaved (A B A B ...) so that
load on a shared machine hits every case alike; medians are printed, and each ratio's range over the rounds.
Figures per process: wall time (spawn to exit, `time.perf_counter`), CPU time (user + system from `os.wait4`,
which includes the processes it waited for: a build's worker processes), "max RSS" (wait4's `ru_maxrss`: the largest
single process of the tree, exact) and "tree RSS" / "tree PSS": the sum over the process and all its
descendants of /proc/<pid>/status VmRSS (sampled every 20 ms; a page shared by a fork counts in each
process) and of /proc/<pid>/smaps_rollup Pss (every 100 ms; shared pages divided between the processes
sharing them: what they take together), Linux only, "-" where there were too few samples.

capidx runs as `sys.executable -m capidx`, never from PATH; `--pythonpath DIR` puts another checkout first
(a folder holding `capidx/__main__.py`, `capidx/compiler`, ...) to compare two versions of the code in one
run. Catalogs and outputs live in a temporary folder (under /dev/shm when present, to keep the disk out of
the figures; `--out-root` to choose), removed afterwards. Figures are printed, never asserted.
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
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BASELINE = HERE / "baseline"
CAPIDX = [sys.executable, "-m", "capidx"]
# Generated catalog sizes: label -> (agents, capabilities per agent), as in build_bench.py.
SIZES = {"1k": (5, 200), "2k": (10, 200), "5k": (10, 500), "10k": (10, 1000), "20k": (20, 1000)}
RSS_INTERVAL = 0.02  # seconds between tree RSS samples
PSS_EVERY = 5  # PSS is read on every 5th sample: it walks page tables, which costs the measured process time
MIN_PSS_SAMPLES = 3
TARGETS = {"cold": 2.0, "noop": 1.0, "validate": 3.0}
# (case, the case it is measured against, label): the ratios issue 13 sets targets for.
RATIOS = (
    ("cold", "baseline", "cold build / the three scripts"),
    ("noop", "baseline", "no-op rebuild / the three scripts"),
    ("validate", "check", "validate -q / check.py"),
)
CPU_PER_1K_TARGET = 0.75
MIB = 1024


@dataclass(frozen=True)
class Sample:
    """One run of a case: one process, or several run one after the other (the three baseline scripts)."""

    wall: float
    cpu: float
    max_rss_kib: int
    tree_rss_kib: int
    tree_pss_kib: int | None


@dataclass(frozen=True)
class Catalog:
    label: str
    agents_dir: Path
    capabilities: int
    cwd: Path  # where the commands run: the checkout for the bundled catalog (its capidx.yaml), else a bare folder
    selection: tuple[str, ...]  # how capidx is told which catalog to read


@dataclass(frozen=True)
class Case:
    key: str
    label: str
    commands: tuple[tuple[str, ...], ...]
    reset: Path | None = None  # removed before every run (not timed): a cold build, a fresh output folder


class TreeSampler(threading.Thread):
    """Peak summed VmRSS (and Pss) of a process and all its descendants, sampled until `stop()`."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.rss_peak = 0
        self.pss_peak = 0
        self.pss_samples = 0
        self._stopped = threading.Event()

    def run(self) -> None:
        samples = 0
        while not self._stopped.is_set():
            with_pss = samples % PSS_EVERY == 0
            rss, pss = _tree_kib(self.pid, with_pss)
            self.rss_peak = max(self.rss_peak, rss)
            if with_pss and pss:
                self.pss_peak = max(self.pss_peak, pss)
                self.pss_samples += 1
            samples += 1
            self._stopped.wait(RSS_INTERVAL)

    def stop(self) -> None:
        self._stopped.set()
        self.join()


def _field_kib(path: str, name: str) -> int:
    with open(path) as lines:
        return next((int(line.split()[1]) for line in lines if line.startswith(name)), 0)


def _tree_kib(root: int, with_pss: bool) -> tuple[int, int]:
    """(sum of VmRSS, sum of Pss) in KiB over `root` and its descendants; children of every thread count."""
    rss = pss = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            rss += _field_kib(f"/proc/{pid}/status", "VmRSS:")
            pss += _field_kib(f"/proc/{pid}/smaps_rollup", "Pss:") if with_pss else 0
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    todo += [int(child) for child in children.read().split()]
        except (OSError, ValueError):
            continue  # the process ended while being read, or /proc is not there
    return rss, pss


def run_process(command: Sequence[str], cwd: Path, env: dict[str, str]) -> Sample:
    """Run one process to its end; raise SystemExit with its stderr if it fails (the figures would be meaningless)."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        sampler = TreeSampler(process.pid)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        sampler.stop()
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped above
        if process.returncode != 0:
            errors.seek(0)
            tail = errors.read()[-2000:].decode(errors="replace")
            raise SystemExit(f"{' '.join(command)} exited {process.returncode}:\n{tail}")
    pss = sampler.pss_peak if sampler.pss_samples >= MIN_PSS_SAMPLES else None
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, sampler.rss_peak, pss)


def run_case(case: Case, cwd: Path, env: dict[str, str]) -> Sample:
    if case.reset is not None:
        shutil.rmtree(case.reset, ignore_errors=True)
    samples = [run_process(command, cwd, env) for command in case.commands]
    pss = [sample.tree_pss_kib for sample in samples]
    return Sample(
        wall=sum(sample.wall for sample in samples),
        cpu=sum(sample.cpu for sample in samples),
        max_rss_kib=max(sample.max_rss_kib for sample in samples),
        tree_rss_kib=max(sample.tree_rss_kib for sample in samples),
        tree_pss_kib=None if None in pss else max(value for value in pss if value is not None),
    )


def cases_for(catalog: Catalog, outs: Path) -> list[Case]:
    def script(name: str, out: Path) -> tuple[str, ...]:
        return (sys.executable, str(BASELINE / name), str(catalog.agents_dir), str(out))

    baseline_out = outs / "baseline"
    build = (*CAPIDX, "build", *catalog.selection, "-q", "--out")
    return [
        Case(
            "baseline",
            "baseline: check + matrix + static_api",
            tuple(script(name, baseline_out) for name in ("check.py", "matrix.py", "static_api.py")),
            reset=baseline_out,
        ),
        Case("cold", "capidx build, cold (fresh --out)", ((*build, str(outs / "cold")),), reset=outs / "cold"),
        Case("noop", "capidx build, no-op rebuild", ((*build, str(outs / "noop")),)),
        Case("check", "baseline: check.py", (script("check.py", outs / "check"),), reset=outs / "check"),
        Case("validate", "capidx validate -q", ((*CAPIDX, "validate", *catalog.selection, "-q"),)),
    ]


def measure(catalog: Catalog, outs: Path, env: dict[str, str], runs: int, warmup: int) -> dict[str, list[Sample]]:
    """Every case `runs` times, interleaved round by round, after `warmup` discarded rounds."""
    cases = cases_for(catalog, outs)
    noop = next(case for case in cases if case.key == "noop")
    run_case(noop, catalog.cwd, env)  # the build the no-op rebuilds find in place
    samples: dict[str, list[Sample]] = {case.key: [] for case in cases}
    for round_index in range(warmup + runs):
        for case in cases:
            sample = run_case(case, catalog.cwd, env)
            if round_index >= warmup:
                samples[case.key].append(sample)
    return samples


def _mib(kib: float | None) -> str:
    return f"{kib / MIB:7.0f} MiB" if kib is not None else f"{'-':>11}"


def summarize(runs: list[Sample]) -> Sample:
    """Medians of wall and CPU time; the largest of each memory figure (a peak is a peak)."""
    pss = [sample.tree_pss_kib for sample in runs if sample.tree_pss_kib is not None]
    return Sample(
        wall=statistics.median(sample.wall for sample in runs),
        cpu=statistics.median(sample.cpu for sample in runs),
        max_rss_kib=max(sample.max_rss_kib for sample in runs),
        tree_rss_kib=max(sample.tree_rss_kib for sample in runs),
        tree_pss_kib=max(pss) if pss else None,
    )


def report(catalog: Catalog, samples: dict[str, list[Sample]], labels: dict[str, str]) -> Sample:
    """Print the catalog's table and ratios; return the cold build's summary (for the table by size)."""
    medians = {key: summarize(runs) for key, runs in samples.items()}
    print(f"\n{catalog.label}: {catalog.capabilities:,} capabilities")
    print(f"{'case':<40} {'wall':>9} {'cpu':>9} {'max RSS':>11} {'tree RSS':>11} {'tree PSS':>11}")
    for key, figures in medians.items():
        print(
            f"{labels[key]:<40} {figures.wall:7.3f} s {figures.cpu:7.3f} s {_mib(figures.max_rss_kib)} "
            f"{_mib(figures.tree_rss_kib)} {_mib(figures.tree_pss_kib)}"
        )
    print(f"{'ratio (of medians)':<40} {'wall':>9} {'cpu':>9}   {'wall, per round':<17} target (wall)")
    for key, base, label in RATIOS:
        wall = medians[key].wall / medians[base].wall
        cpu = medians[key].cpu / medians[base].cpu
        rounds = [mine.wall / theirs.wall for mine, theirs in zip(samples[key], samples[base], strict=True)]
        verdict = "met" if wall <= TARGETS[key] else "missed"
        spread = f"{min(rounds):.2f}–{max(rounds):.2f}×"
        print(f"{label:<40} {wall:8.2f}× {cpu:8.2f}×   {spread:<17} ≤ {TARGETS[key]:.1f}×: {verdict}")
    cpu_per_1k = medians["cold"].cpu / catalog.capabilities * 1000
    print(f"cold build CPU per 1,000 capabilities: {cpu_per_1k:.3f} s (target ≤ {CPU_PER_1K_TARGET} s)")
    return medians["cold"]


def generated(work: Path, label: str) -> Catalog:
    agents, per_agent = SIZES[label]
    target = work / f"catalog-{label}"
    subprocess.run([sys.executable, str(HERE / "gen_catalog.py"), str(agents), str(per_agent), str(target)], check=True)
    return Catalog(
        f"generated {label} ({agents} agents × {per_agent})",
        target,
        agents * per_agent,
        work,
        ("--agents", str(target)),
    )


def bundled() -> Catalog:
    agents = REPO / "agents"
    count = sum(_count_capabilities(path) for path in agents.glob("*/capabilities/current.json"))
    return Catalog("bundled catalog (agents/)", agents, count, REPO, ("--config", str(REPO / "capidx.yaml")))


def _count_capabilities(path: Path) -> int:
    return len(json.loads(path.read_text(encoding="utf-8"))["capabilities"])


def parse_sizes(text: str) -> list[str]:
    if text.strip().lower() in ("", "none"):
        return []
    labels = [label.strip().lower() for label in text.split(",") if label.strip()]
    unknown = [label for label in labels if label not in SIZES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown size {', '.join(unknown)}; choose from {', '.join(SIZES)} or none")
    return labels


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=5, help="measured runs per case (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="discarded rounds before them (default 1)")
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default="1k,5k",
        help=f"generated catalogs after the bundled one, comma-separated from {', '.join(SIZES)}, "
        "or 'none' (default 1k,5k; 20k takes minutes)",
    )
    parser.add_argument("--no-bundled", action="store_true", help="skip the bundled catalog")
    parser.add_argument("--out-root", type=Path, help="where the temporary folder goes (default /dev/shm if present)")
    parser.add_argument("--pythonpath", type=Path, help="run the capidx found in this folder (before/after)")
    options = parser.parse_args(argv)
    if options.runs < 1 or options.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    env = dict(os.environ)
    if options.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(options.pythonpath.resolve()), env.get("PYTHONPATH")]))
    shm = Path("/dev/shm")
    root = options.out_root or (shm if shm.is_dir() and os.access(shm, os.W_OK) else None)
    with tempfile.TemporaryDirectory(prefix="capidx-baseline-bench-", dir=root) as temp:
        _run(Path(temp), env, options)


def _run(work: Path, env: dict[str, str], options: argparse.Namespace) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", "import capidx.compiler as c; print(c.__version__, c.__file__)"],
        capture_output=True,
        text=True,
        env=env,
    )
    if probe.returncode != 0:
        raise SystemExit(f"capidx cannot be imported (PYTHONPATH={env.get('PYTHONPATH', '')}):\n{probe.stderr[-2000:]}")
    where = probe.stdout.strip()
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; cpus: {os.cpu_count()}; load average: {_load()}; "
        f"python {sys.version.split()[0]}"
    )
    print(f"capidx {where}; work folder {work}")
    print(floors(env))
    print(f"{options.runs} runs per case after {options.warmup} warm-up round(s), interleaved; medians shown")
    catalogs = [] if options.no_bundled else [bundled()]
    catalogs += [generated(work, label) for label in options.sizes]
    summary = []
    for catalog in catalogs:
        outs = work / f"out-{len(summary)}"
        labels = {case.key: case.label for case in cases_for(catalog, outs)}
        samples = measure(catalog, outs, env, options.runs, options.warmup)
        summary.append((catalog, report(catalog, samples, labels)))
        shutil.rmtree(outs, ignore_errors=True)
    print(f"\ncold build by size (load average now: {_load()})")
    print("'marginal': CPU per 1,000 capabilities more than the row above (the slope: linear growth keeps it flat)")
    print(
        f"{'catalog':<40} {'caps':>7} {'wall':>9} {'cpu':>9} {'cpu/1k':>9} {'marginal':>9} "
        f"{'max RSS':>11} {'tree RSS':>11} {'tree PSS':>11}"
    )
    previous: tuple[int, float] | None = None
    for catalog, cold in sorted(summary, key=lambda item: item[0].capabilities):
        marginal = f"{'-':>9}"
        if previous is not None and catalog.capabilities > previous[0]:
            marginal = f"{(cold.cpu - previous[1]) / (catalog.capabilities - previous[0]) * 1000:7.3f} s"
        previous = (catalog.capabilities, cold.cpu)
        print(
            f"{catalog.label:<40} {catalog.capabilities:>7,} {cold.wall:7.2f} s {cold.cpu:7.2f} s "
            f"{cold.cpu / catalog.capabilities * 1000:7.3f} s {marginal} "
            f"{_mib(cold.max_rss_kib)} {_mib(cold.tree_rss_kib)} {_mib(cold.tree_pss_kib)}"
        )


def floors(env: dict[str, str], runs: int = 5) -> str:
    """Two gauges of the machine at the time of the run, to read the figures against (a shared machine's CPU
    time grows with contention, not only its wall time): interpreter start, and a fixed pure-Python loop."""
    starts = [run_process([sys.executable, "-c", "pass"], REPO, env) for _ in range(runs)]
    loops = []
    for _ in range(runs):
        started = time.process_time()
        sum(index * index for index in range(1_000_000))
        loops.append(time.process_time() - started)
    return (
        f"floors: python -c pass {statistics.median(s.wall for s in starts) * 1000:.0f} ms wall / "
        f"{statistics.median(s.cpu for s in starts) * 1000:.0f} ms CPU; a fixed loop of 10^6 squares "
        f"{statistics.median(loops) * 1000:.0f} ms CPU (medians of {runs})"
    )


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
