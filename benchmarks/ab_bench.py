"""Before/after figures of `capidx build` and `capidx validate -q` in one run, runs interleaved.

    python benchmarks/ab_bench.py --before DIR [--runs 5] [--large]

`--before DIR` is a folder holding another checkout's `capidx` package (as `build_bench.py --pythonpath`
takes it); "after" is the capidx installed here. Each case runs before, after, before, after, ... so that
both see the same load, and the median wall and CPU time of each side is printed, with the largest
peak RSS of all its processes together (sampled every 50 ms, `build_bench.py`'s wrapper) and, for cold
builds, the files the build wrote. Cases: the bundled catalog (cold build, no-op rebuild, validate -q)
and 1,000 synthetic capabilities (the same); `--large` adds one cold build of 20,000 capabilities per
side. Figures are printed, never asserted: on a shared machine read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_bench import CAPIDX, REPO, run, synthetic


def _files(folder: Path) -> int:
    return sum(len(names) for _, _, names in os.walk(folder))


def _case(
    label: str,
    envs: dict[str, dict[str, str]],
    cwd: Path,
    command: Callable[[str], list[str]],
    runs: int,
    reset: Callable[[str], Path] | None = None,
    prepare: Callable[[str], None] | None = None,
) -> None:
    """Run `command(side)` `runs` times per side, interleaved; `reset(side)` (a cold build's output folder) is
    removed before each run; `prepare(side)` runs before each."""
    figures: dict[str, list[dict]] = {side: [] for side in envs}
    files: dict[str, int] = {}
    for _ in range(runs):
        for side, env in envs.items():
            if reset is not None:
                shutil.rmtree(reset(side), ignore_errors=True)
            if prepare is not None:
                prepare(side)
            result = run(cwd, command(side), env)
            figures[side].append(result)
            if reset is not None:
                files[side] = _files(reset(side))
    parts = []
    for side, results in figures.items():
        wall = statistics.median(item["seconds"] for item in results)
        cpu = statistics.median(item["cpu"] for item in results)
        peak = max(item["tree_mib"] for item in results)
        written = f", {files[side]:,} files" if side in files else ""
        parts.append(f"{side}: {wall:6.2f} s wall {cpu:6.2f} s cpu {peak:5.0f} MiB{written}")
    ratio = statistics.median(item["cpu"] for item in figures["after"]) / max(
        1e-9, statistics.median(item["cpu"] for item in figures["before"])
    )
    print(f"{label:<34} {' | '.join(parts)} | cpu after/before {ratio:.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="folder holding the 'before' capidx package")
    parser.add_argument("--runs", type=int, default=5, help="runs per side and case (medians are printed)")
    parser.add_argument("--large", action="store_true", help="also one cold build of 20,000 capabilities per side")
    options = parser.parse_args()
    before = dict(os.environ)
    before["PYTHONPATH"] = os.pathsep.join(filter(None, [str(options.before.resolve()), before.get("PYTHONPATH")]))
    envs = {"before": before, "after": dict(os.environ)}
    print(f"cpus: {os.cpu_count()}, load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="capidx-ab-") as temp:
        work = Path(temp)
        # Each side builds into its own folders: a build of one is not a build the other may replace.
        config = ["--config", str(REPO / "capidx.yaml")]

        def bundled(side: str) -> Path:
            return work / side / "bundled"

        def build(side: str) -> list[str]:
            return [*CAPIDX, "build", *config, "--out", str(bundled(side)), "-q"]

        _case("bundled catalog, cold build", envs, REPO, build, options.runs, reset=bundled)
        _case("bundled catalog, no-op rebuild", envs, REPO, build, options.runs, prepare=_rebuild(REPO, build, envs))
        validate = [*CAPIDX, "validate", "-q", *config]
        _case("bundled catalog, validate -q", envs, REPO, lambda side: validate, options.runs)
        _synthetic(work, envs, 5, 200, options.runs, everything=True)
        if options.large:
            _synthetic(work, envs, 20, 1000, 1, everything=False)


def _synthetic(
    work: Path, envs: dict[str, dict[str, str]], agents: int, per_agent: int, runs: int, everything: bool
) -> None:
    catalog = synthetic(work, agents, per_agent)
    size = f"{agents * per_agent:,} capabilities"

    def out(side: str) -> Path:
        return work / side / catalog.name

    def build(side: str) -> list[str]:
        return [*CAPIDX, "build", "--agents", str(catalog), "--out", str(out(side)), "-q"]

    _case(f"{size}, cold build", envs, work, build, runs, reset=out)
    if everything:
        _case(f"{size}, no-op rebuild", envs, work, build, runs, prepare=_rebuild(work, build, envs))
        _case(f"{size}, rebuild, counts known", envs, work, build, runs, prepare=_restyle(work))
        (work / "capidx.yaml").unlink()
        validate = [*CAPIDX, "validate", "-q", "--agents", str(catalog)]
        _case(f"{size}, validate -q", envs, work, lambda side: validate, runs)
    for side in envs:
        shutil.rmtree(out(side), ignore_errors=True)  # keep the disk (and the next case's file system) clean


def _rebuild(cwd: Path, build: Callable[[str], list[str]], envs: dict[str, dict[str, str]]) -> Callable[[str], None]:
    """Before a no-op rebuild: the same build by the same side, from the same folder (builds of the two sides
    differ in input digest, and the folder decides which capidx.yaml applies)."""

    def prepare(side: str) -> None:
        run(cwd, build(side), envs[side])

    return prepare


def _restyle(work: Path) -> Callable[[str], None]:
    """Before a rebuild whose artifacts all exist already: a capidx.yaml that changes no artifact's bytes (a
    budget), changed before every run, so every run re-renders everything and finds every token count in the
    previous manifest."""
    state = {"budget": 5000}

    def prepare(side: str) -> None:
        state["budget"] += 1
        (work / "capidx.yaml").write_text(f"budgets:\n  summary: {state['budget']}\n", encoding="utf-8")

    return prepare


if __name__ == "__main__":
    main()
