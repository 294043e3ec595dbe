"""Start-up time of ``xlbench --help`` and ``xlbench list`` against a bare ``python -c pass``.

Each command runs as a fresh subprocess 5 times; the median wall time is
printed with its ratio to the baseline measured in the same run (goal: under 1 s).

    PYTHONPATH=. python bench/bench_startup.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS = 5
COMMANDS = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "xlbench --help": [sys.executable, "-m", "builders", "--help"],
    "xlbench list": [sys.executable, "-m", "builders", "list"],
    "xlbench eval --help": [sys.executable, "-m", "builders", "eval", "--help"],
    "xlbench eval word-retrieval --help": [
        sys.executable,
        "-m",
        "builders",
        "eval",
        "word-retrieval",
        "--help",
    ],
}


def median_wall(argv: list[str], runs: int = RUNS) -> float:
    """Return the median wall time (s) of ``runs`` fresh subprocess runs of ``argv``."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(
            argv,
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    """Measure and print a table."""
    base = None
    print(f"| command | median of {RUNS} (s) | x baseline | under 1 s |")
    print("| --- | ---: | ---: | --- |")
    for label, argv in COMMANDS.items():
        t = median_wall(argv)
        base = base or t
        print(f"| {label} | {t:.3f} | {t / base:.1f} | {'yes' if t < 1 else 'NO'} |")


if __name__ == "__main__":
    main()
