"""Benchmark: exact margin mining against the GEMM bound and faiss, with peak memory; approximate recall.

Every step runs in its own subprocess (so its max RSS is its own) on the same random
unit vectors (``n`` x ``dim`` float32, 2.5 % planted gold pairs, seed 0):

``gemm``        the bound: a plain numpy float32 ``x_block @ y.T`` over the same blocks, into one
                preallocated output block (result discarded);
``xlbench``     ``mining.knn_both`` (blocked, threaded numpy index, one-pass selection per block)
                + ratio margin + ``max`` retrieval;
``perworker``   the index before issue #28's memory change: one block per worker (each a fresh
                ``x_block @ y.T`` on a single-threaded BLAS), blocks sized 512 MiB / (workers x m x 6 B),
                a worker's first column bound from 256 rows; same margin and retrieval;
``sequential``  the index before the threaded one (2,048-row blocks, one thread doing selection
                while the BLAS threads wait), same margin and retrieval;
``faiss``       ``IndexFlatIP`` searched both ways (exact) + the same margin and retrieval;
``hnsw``/``ivf`` faiss approximate indexes on ``--approx-n`` rows: time and recall@4 against exact.

Ratios are printed against the GEMM bound and faiss measured in the same run. ``--big N``
adds a memory check at N x N (target: 300k x 300k within 4 GB): both corpora in memory and
the exact pass over the first blocks of source rows against every target (memory is steady
after each worker's first block), with the time of the full pass and of 1M x 1M
extrapolated and labelled as such.

    OMP_NUM_THREADS=2 .venv/bin/python bench/bench_mining.py                 # 20k x 20k (make bench)
    OMP_NUM_THREADS=2 .venv/bin/python bench/bench_mining.py --n 100000 --steps gemm,xlbench,faiss --approx-n 0
    OMP_NUM_THREADS=2 .venv/bin/python bench/bench_mining.py --n 30000 --big 300000

Each row is printed as its step ends, with the wall time, the CPU time of the step's process
(all threads; it moves less with the machine's load than the wall time) and both ratios to the
bound, and the load average at that moment.

This is a benchmark, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def planted(n: int, dim: int, seed: int = 0, noise: float = 3.0):
    """Random unit vectors; 2.5 % of targets are a source plus Gaussian noise."""
    from evaluators.metrics.vectors import normalize

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim), dtype=np.float32)
    y = rng.standard_normal((n, dim), dtype=np.float32)
    n_gold = max(1, n // 40)
    src = rng.permutation(n)[:n_gold]
    tgt = rng.permutation(n)[:n_gold]
    y[tgt] = x[src] + noise * rng.standard_normal((n_gold, dim), dtype=np.float32)
    return normalize(x), normalize(y)


def sequential_knn(x, y, k):
    """The pre-change index: 2,048-row blocks, selection and merge in the calling thread."""
    import importlib.util

    from evaluators.compute import knn

    spec = importlib.util.spec_from_file_location(
        "knn_reference", REPO / "tests" / "oracles" / "knn_reference.py"
    )
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)

    n, m = len(x), len(y)
    f_sims, f_idx = np.empty((n, k), np.float32), np.empty((n, k), np.int64)
    b_sims, b_idx = np.full((m, k), -np.inf, np.float32), np.full((m, k), -1, np.int64)
    for start in range(0, n, 2048):
        s = x[start : start + 2048] @ y.T
        f_sims[start : start + len(s)], f_idx[start : start + len(s)] = ref.topk_rows(s, k)
        ref.merge_cols(s, start, b_sims, b_idx, k)
    return knn.Neighbours(f_sims, f_idx), knn.Neighbours(b_sims, b_idx)


def perworker_knn(x, y, k):
    """The index before issue #28's memory change: a similarity block per worker thread."""
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    from evaluators.compute import knn

    # its first column bound: the least of k group maxima of 256 rows (this process only)
    knn._column_kth_bound = lambda block, k, rows, groups=64: knn._group_max_bound(
        block, k, 0, max(k, min(rows, len(block)))
    )
    n, m = len(x), len(y)
    workers = knn.blas_threads()
    rows = int(min(4096, max(64, 512 * 1024**2 // (workers * m * 6))))
    starts = iter(range(0, n, rows))
    f_sims, f_idx = np.empty((n, k), np.float32), np.empty((n, k), np.int64)
    states = [
        (np.full((m, k), -np.inf, np.float32), np.full((m, k), -1, np.int64))
        for _ in range(workers)
    ]

    def work(w):
        for start in starts:  # iterating one shared iterator: each start goes to one worker
            s = x[start : start + rows] @ y.T
            knn.select_block(s, start, f_sims, f_idx, *states[w], k, k)
            del s

    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        for future in [pool.submit(work, w) for w in range(workers)]:
            future.result()
    vals = np.concatenate([st[0] for st in states], axis=1)
    idx = np.concatenate([st[1] for st in states], axis=1)
    order = np.lexsort((np.where(idx < 0, np.iinfo(np.int64).max, idx), -vals), axis=1)[:, :k]
    b = knn.Neighbours(np.take_along_axis(vals, order, 1), np.take_along_axis(idx, order, 1))
    return knn.Neighbours(f_sims, f_idx), b


def step(name: str, n: int, dim: int) -> dict:
    """Run one step in this process; return its figures."""
    from evaluators.compute import knn
    from evaluators.metrics import mining

    x, y = planted(n, dim)
    t0, c0 = time.perf_counter(), time.process_time()
    out: dict = {"step": name, "n": n}
    if name == "gemm":
        rows = knn.block_rows_for(n, knn.blas_threads())
        # Into one preallocated block: no page faults of a fresh output, the tightest plain bound.
        buf = np.empty((rows, len(y)), dtype=np.float32)
        for start in range(0, n, rows):
            block = x[start : start + rows]
            np.matmul(block, y.T, out=buf[: len(block)])
    elif name in ("xlbench", "perworker", "sequential", "faiss"):
        if name == "xlbench":
            fwd, bwd = mining.knn_both(x, y, 4, index="numpy")
        elif name == "perworker":
            fwd, bwd = perworker_knn(x, y, 4)
        elif name == "sequential":
            fwd, bwd = sequential_knn(x, y, 4)
        else:
            fwd, bwd = mining.knn_both(x, y, 4, index="faiss")
        out["knn_s"] = time.perf_counter() - t0
        out["knn_cpu_s"] = time.process_time() - c0
        f, b = mining.margin_scores(fwd, bwd, "ratio")
        cands = mining.retrieve(fwd, bwd, f, b, "max")
        out["pairs"] = len(cands)
        np.save(os.environ["XLB_BENCH_OUT"], fwd.idx)
    elif name == "bigmem":
        # memory check at scale: the full corpora in memory, the first blocks of the exact pass;
        # memory is steady after each worker's first block, time is extrapolated from these blocks
        workers = knn.blas_threads()
        rows = knn.block_rows_for(n, workers)
        part = min(n, rows * workers * 4)
        t1 = time.perf_counter()
        mining.knn_both(x[:part], y, 4, index="numpy")
        out["part_rows"] = part
        out["part_s"] = time.perf_counter() - t1
    else:  # hnsw / ivf
        fwd, _ = knn.knn_faiss(x, y, 4, 4, approximate=name)
        exact, _ = knn.knn_numpy(x, y, 4, 4)
        out["recall"] = float(
            np.mean(
                [len(set(a) & set(e)) / 4 for a, e in zip(fwd.idx.tolist(), exact.idx.tolist())]
            )
        )
    out["wall_s"] = time.perf_counter() - t0
    out["cpu_s"] = time.process_time() - c0
    out["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["inputs_mib"] = 2 * x.nbytes / 2**20
    return out


def run(name: str, n: int, dim: int, tmp: Path) -> dict:
    env = dict(os.environ, XLB_BENCH_OUT=str(tmp / f"{name}-{n}.npy"))
    proc = subprocess.run(
        [sys.executable, __file__, "--step", name, "--n", str(n), "--dim", str(dim)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        return {"step": name, "n": n, "error": proc.stderr.strip().splitlines()[-1:] or ["?"]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=20_000, help="rows per side (paper scale: 100000)")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--approx-n", type=int, default=10_000, help="rows for the approximate indexes")
    ap.add_argument(
        "--big", type=int, default=0, help="also one exact mining run of BIG x BIG (memory check)"
    )
    ap.add_argument("--no-faiss", action="store_true")
    ap.add_argument(
        "--steps",
        default="gemm,xlbench,sequential,faiss",
        help="exact steps to run, in order (default gemm,xlbench,sequential,faiss)",
    )
    ap.add_argument("--step", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step:
        print(json.dumps(step(args.step, args.n, args.dim)))
        return 0
    import tempfile

    print(
        f"numpy {np.__version__}, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}, "
        f"load average {os.getloadavg()[0]:.1f} (a loaded machine slows every step alike)"
    )
    steps = [st for st in args.steps.split(",") if not (args.no_faiss and st == "faiss")]
    print(
        f"\nexact k=4 both ways + ratio margin + max retrieval, {args.n:,} x {args.n:,}, dim {args.dim}"
        "\n(CPU s: all threads of the step's process; its ratio moves less with the machine's load)"
    )
    print(
        f"{'step':<11}{'wall s':>9}{'kNN s':>9}{'bound/kNN':>11}{'CPU s':>9}{'bound/CPU':>11}"
        f"{'max RSS MiB':>13}{'load':>6}  note",
        flush=True,
    )
    res: dict = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        base = tmp / f"xlbench-{args.n}.npy"
        for s in steps:
            r = res[s] = run(s, args.n, args.dim, tmp)
            load = os.getloadavg()[0]
            if "error" in r:
                print(f"{s:<11}  failed: {r['error'][0]}", flush=True)
                continue
            gemm, gemm_cpu = res.get("gemm", {}).get("wall_s"), res.get("gemm", {}).get("cpu_s")
            knn_s, knn_cpu = r.get("knn_s", r["wall_s"]), r.get("knn_cpu_s", r["cpu_s"])
            ratio = f"{gemm / knn_s:.2f}" if gemm else ""
            ratio_cpu = f"{gemm_cpu / knn_cpu:.2f}" if gemm_cpu else ""
            note = "bound: plain float32 matmul of the same blocks" if s == "gemm" else ""
            other = tmp / f"{s}-{args.n}.npy"
            if s != "xlbench" and base.is_file() and other.is_file():
                same = float((np.load(base) == np.load(other)).mean())
                note = f"same neighbour indices as xlbench: {same:.4%}"
            print(
                f"{s:<11}{r['wall_s']:>9.1f}{knn_s:>9.1f}{ratio:>11}{knn_cpu:>9.1f}{ratio_cpu:>11}"
                f"{r['max_rss_mib']:>13.0f}{load:>6.1f}  {note}",
                flush=True,
            )
        approx = (
            []
            if args.no_faiss or not args.approx_n
            else [run(s, args.approx_n, args.dim, tmp) for s in ("hnsw", "ivf")]
        )
        big = run("bigmem", args.big, args.dim, tmp) if args.big else None
    ok = {s: r for s, r in res.items() if "knn_s" in r}
    if "xlbench" in ok:
        for s, label in (
            ("faiss", "faiss IndexFlatIP"),
            ("perworker", "the block-per-worker index"),
            ("sequential", "the sequential index"),
        ):
            if s in ok:
                print(f"xlbench kNN is {ok[s]['knn_s'] / ok['xlbench']['knn_s']:.2f}x {label}")
    for r in approx:
        if "error" in r:
            print(f"{r['step']}: failed: {r['error'][0]}")
        else:
            print(
                f"faiss {r['step']} on {r['n']:,} x {r['n']:,}: recall@4 vs exact {r['recall']:.4f} "
                f"(wall {r['wall_s']:.1f} s incl. the exact reference)"
            )
    if big:
        if "error" in big:
            print(f"big run failed: {big['error'][0]}")
        else:
            n, part = big["n"], big["part_rows"]
            full_s = big["part_s"] * n / part
            print(
                f"\nexact mining {n:,} x {n:,} (MEASURED on the first {part:,} source rows against all {n:,} targets, "
                f"both corpora in memory): max RSS {big['max_rss_mib']:.0f} MiB (inputs {big['inputs_mib']:.0f} MiB) -> "
                f"{'within' if big['max_rss_mib'] < 4096 else 'OVER'} 4 GB; {big['part_s']:.1f} s for those rows"
            )
            print(
                f"    full {n:,} x {n:,} EXTRAPOLATED (rows x time per row): ~{full_s / 60:.0f} min; the blocks, "
                f"not n, set the memory above the inputs"
            )
            scale = (1_000_000 / n) ** 2
            print(
                f"1M x 1M EXTRAPOLATED (not measured): ~{full_s * scale / 60:.0f} min (time ~ n^2); memory at most "
                f"~{big['max_rss_mib'] * 1_000_000 / n / 1024:.1f} GiB (every term grows at most linearly with n: "
                f"inputs and their normalised copies, the column top-k state, blocks of at least 64 rows x n)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
