"""Wall-clock time of a whole `capidx validate` process on the bundled catalog.

Runs each command N times in fresh processes (import time included, as a user or a pre-commit hook
pays it) and prints the median, with `python -c pass` measured in the same run as a baseline.

    python benchmarks/validate_time.py [--runs 10] [--catalog agents]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VALIDATE = "import sys; from capidx.cli import main; sys.argv[0] = 'capidx'; main()"


def measure(command: list[str], runs: int) -> list[float]:
    subprocess.run(command, cwd=REPO, capture_output=True, check=False)  # warm the OS caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=REPO, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--catalog", default="agents", help="catalog directory, relative to the repository")
    args = parser.parse_args()
    catalog = REPO / args.catalog
    files = sorted(catalog.glob("*/capabilities/current.*"))
    size = sum(path.stat().st_size for path in files)
    print(f"catalog: {args.catalog}/ ({len(files)} documents, {size / 1024:.0f} KiB); {args.runs} runs each")
    rows = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("capidx --help", [sys.executable, "-c", VALIDATE, "--help"]),
        ("capidx validate -q", [sys.executable, "-c", VALIDATE, "validate", "-q", "--agents", str(catalog)]),
        ("capidx validate (text)", [sys.executable, "-c", VALIDATE, "validate", "--agents", str(catalog)]),
    ]
    baseline = None
    for label, command in rows:
        median = statistics.median(measure(command, args.runs))
        baseline = baseline if baseline is not None else median
        extra = "" if median is baseline else f"  (+{(median - baseline) * 1000:.0f} ms over the baseline)"
        print(f"{label:<24} median {median * 1000:7.0f} ms{extra}")


if __name__ == "__main__":
    main()
