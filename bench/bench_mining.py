"""Benchmark: margin mining on two 100,000-sentence corpora of 384-dim embeddings.

Measures, on whatever CPU cores this process may use (``OMP_NUM_THREADS``, default 2):

1. the full pipeline of ``xlbench eval bucc`` after encoding: exact k=4 kNN in both
   directions (one pass of chunked matrix products), ratio margins, ``max``
   retrieval and the train threshold sweep, on random unit vectors with 2,500
   planted gold pairs (a gold target is its source plus 3x-stronger noise: cosine ~0.32,
   near the top random cosines; 2.5% parallel as in BUCC);
   wall time and peak memory (tracemalloc for numpy buffers, ru_maxrss for the process);
2. a plain double loop (``bench/mining_reference.py``: one ``numpy.dot`` per pair)
   timed on a 1,000 x 1,000 subset and EXTRAPOLATED quadratically to 10,000 x 10,000,
   against the fast code measured on 10,000 x 10,000;
3. the check that both give identical pairs and F1 on the 1,000 x 1,000 subset.

Usage: ``OMP_NUM_THREADS=2 python bench/bench_mining.py [--n 100000] [--dim 384]``
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mining_reference import reference_best_f1, reference_mine  # noqa: E402

from evaluators.metrics import mining  # noqa: E402


def planted(n: int, dim: int, n_gold: int, rng: np.random.Generator, noise: float = 3.0):
    """Random unit vectors; target ``tgt[g]`` is source ``src[g]`` plus Gaussian noise."""
    x = rng.standard_normal((n, dim), dtype=np.float32)
    y = rng.standard_normal((n, dim), dtype=np.float32)
    src = rng.permutation(n)[:n_gold]
    tgt = rng.permutation(n)[:n_gold]
    y[tgt] = x[src] + noise * rng.standard_normal((n_gold, dim), dtype=np.float32)
    return mining.normalize(x), mining.normalize(y), set(zip(src.tolist(), tgt.tolist()))


def pipeline(x, y, gold, k=4):
    fwd, bwd = mining.knn_both(x, y, k, backend="numpy")
    f, b = mining.margin_scores(fwd, bwd, "ratio")
    cands = mining.retrieve(fwd, bwd, f, b, "max")
    return cands, mining.sweep_threshold(cands, gold)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--subset", type=int, default=10_000)
    ap.add_argument("--loop-n", type=int, default=1_000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"python {platform.python_version()}, numpy {np.__version__}, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}, "
          f"cpus visible {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")

    # 1. the full size
    x, y, gold = planted(args.n, args.dim, args.n // 40, rng)
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    cands, best = pipeline(x, y, gold)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n[1] {args.n:,} x {args.n:,}, dim {args.dim}, k=4 both directions + ratio margin + max retrieval + threshold sweep")
    print(f"    wall time {wall:.1f} s; CPU time {cpu:.1f} s over all threads (on a shared, loaded machine "
          f"wall > CPU / threads); peak traced numpy memory {peak / 2**20:.0f} MiB (embeddings {2 * x.nbytes / 2**20:.0f} MiB "
          f"included); process max RSS {rss:.0f} MiB")
    print(f"    {len(cands):,} candidates; planted {len(gold):,} gold: F1 {best.f1:.4f} (P {best.precision:.4f}, "
          f"R {best.recall:.4f}, threshold {best.threshold:.4f})")
    del x, y

    # 2. fast vs double loop
    xs, ys, gs = planted(args.subset, args.dim, args.subset // 40, rng)
    t0, c0 = time.perf_counter(), time.process_time()
    pipeline(xs, ys, gs)
    fast_sub, fast_cpu = time.perf_counter() - t0, time.process_time() - c0
    xl, yl, gl = planted(args.loop_n, args.dim, args.loop_n // 40, rng)
    t0, c0 = time.perf_counter(), time.process_time()
    ref = reference_mine(xl, yl, 4, "ratio", "max")
    loop, loop_cpu = time.perf_counter() - t0, time.process_time() - c0
    scale = (args.subset / args.loop_n) ** 2
    print(f"\n[2] double loop on {args.loop_n:,} x {args.loop_n:,}: {loop:.1f} s wall / {loop_cpu:.1f} s CPU measured -> "
          f"EXTRAPOLATED x{scale:.0f} (quadratic) to {args.subset:,} x {args.subset:,}: ~{loop * scale:.0f} s wall / "
          f"~{loop_cpu * scale:.0f} s CPU")
    print(f"    fast pipeline on {args.subset:,} x {args.subset:,}: {fast_sub:.2f} s wall / {fast_cpu:.2f} s CPU measured; "
          f"speed-up ~{loop * scale / fast_sub:.0f}x wall, ~{loop_cpu * scale / fast_cpu:.0f}x CPU (extrapolated / measured)")

    # 3. identical results on the small case
    small, small_best = pipeline(xl, yl, gl)
    same_pairs = list(zip(small.src.tolist(), small.tgt.tolist())) == [(i, j) for i, j, _ in ref]
    max_diff = float(np.abs(small.scores - np.array([s for *_, s in ref])).max())
    ref_f1, ref_tp, ref_pred = reference_best_f1(ref, gl)
    same_f1 = (small_best.tp, small_best.n_pred) == (ref_tp, ref_pred) and abs(small_best.f1 - ref_f1) < 1e-12
    print(f"\n[3] {args.loop_n:,} x {args.loop_n:,}: identical pairs: {same_pairs}; identical best F1 ({small_best.f1:.4f}, "
          f"tp {small_best.tp}, predicted {small_best.n_pred}): {same_f1}; max score difference {max_diff:.1e} "
          f"(float32 vs float64)")
    return 0 if same_pairs and same_f1 else 1


if __name__ == "__main__":
    sys.exit(main())
