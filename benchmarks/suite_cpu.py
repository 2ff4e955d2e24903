"""Where the test suite's CPU goes: a pytest plugin that sums CPU per test file (or per test), and its report.

The suite is CPU-bound on a 2-CPU machine (docs/benchmarks.md, "Test suite"), so wall-clock durations
(`--durations`) mislead: with 4 workers on 2 CPUs every test waits for the others. This plugin reads
`getrusage` of the worker itself (RUSAGE_SELF) and of its finished, reaped child processes (RUSAGE_CHILDREN: the
servers, builds, pip and npm runs a test starts) around each test, fixture set-up and tear-down included, and
writes one JSON file per worker. What a worker spends outside tests (start-up, collection) is its total minus
the sum over its tests.

    python -m pytest -p suite_cpu --suite-cpu-out /tmp/suite-cpu [-n 0] [--suite-cpu-per-test]
    python benchmarks/suite_cpu.py /tmp/suite-cpu            # the report: largest first

(run pytest with `benchmarks/` on PYTHONPATH, e.g. `PYTHONPATH=benchmarks python -m pytest -p suite_cpu ...`).
A child's CPU is counted when it is reaped, so a module-scoped server shows up in the test during whose
tear-down it stopped; per file, that evens out. Not used by the tests; a measuring aid.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

_totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])  # key -> [wall, self, children, tests]
_started: dict[str, tuple[float, float, float]] = {}
_per_test = False


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("suite-cpu")
    group.addoption("--suite-cpu-out", default=None, help="folder for one JSON file per worker")
    group.addoption("--suite-cpu-per-test", action="store_true", help="sum per test instead of per file")


def _now() -> tuple[float, float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic(), own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    _started[item.nodeid] = _now()


def pytest_runtest_logfinish(nodeid: str) -> None:
    if nodeid not in _started:
        return
    before, after = _started.pop(nodeid), _now()
    row = _totals[nodeid if _per_test else nodeid.split("::")[0]]
    for index in range(3):
        row[index] += after[index] - before[index]
    row[3] += 1


def pytest_configure(config: pytest.Config) -> None:
    global _per_test
    _per_test = bool(config.getoption("--suite-cpu-per-test"))


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = session.config.getoption("--suite-cpu-out")
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    own = resource.getrusage(resource.RUSAGE_SELF)
    Path(out).mkdir(parents=True, exist_ok=True)
    document = {"worker": worker, "total_self": own.ru_utime + own.ru_stime, "rows": dict(_totals)}
    (Path(out) / f"{worker}.json").write_text(json.dumps(document), encoding="utf-8")


def report(folder: Path, most: int = 40) -> str:
    rows: dict[str, list[float]] = {}
    outside = 0.0
    for path in sorted(folder.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        outside += document["total_self"] - sum(row[1] for row in document["rows"].values())
        rows.update(document["rows"])
    own, children = sum(r[1] for r in rows.values()), sum(r[2] for r in rows.values())
    lines = [
        f"CPU in tests: {own + children:.1f} s ({own:.1f} s in the workers, {children:.1f} s in child processes); "
        f"processes outside tests (start-up, collection, the xdist controller): {outside:.1f} s",
        f"{'cpu s':>7} {'self':>6} {'child':>6} {'wall s':>7} {'tests':>5}  where",
    ]
    for key, (wall, self_cpu, child_cpu, count) in sorted(rows.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:most]:
        lines.append(f"{self_cpu + child_cpu:7.1f} {self_cpu:6.1f} {child_cpu:6.1f} {wall:7.1f} {int(count):5d}  {key}")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} FOLDER (the --suite-cpu-out of a run)")
    print(report(Path(sys.argv[1])))
