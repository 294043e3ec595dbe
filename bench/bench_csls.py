"""Benchmark: CSLS retrieval of one (layer, sample) at the paper's n = 5,000, both directions.

Baseline: the implementation before neighbourhoods were shared (copied below as
``_old_retrieval_counts``), called once per direction as the word-retrieval
task did: each call recomputed ``r_V(u)``, ``r_U(v)`` and the pooled ``U ∪ V``
neighbourhoods (a ``2n × 2n`` pass). New: :func:`evaluators.metrics.csls.retrieval_counts_pair`,
which computes every neighbourhood once and scores both directions and all
S_strong variants from them (default: the three similarity matrices kept
between its two passes while they fit ``DEFAULT_CACHE_BYTES``, 300 MB at n = 5,000;
also timed with ``cache_bytes=0``, every block recomputed, bounded memory). Both run in the same process on the same vectors;
the script checks that the shared counts (weak, pooled, union) agree and prints
the ratio.

    python bench/bench_csls.py                 # n = 5,000, dim 384, 3 repeats
    python bench/bench_csls.py --n 2000 --repeats 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluators.metrics import csls  # noqa: E402
from evaluators.metrics.vectors import normalize  # noqa: E402


def _old_neighbourhood(queries, base, k, same=False, chunk=2048):
    q, b = normalize(queries), normalize(base)
    out = np.empty(len(q), dtype=np.float32)
    for start in range(0, len(q), chunk):
        sims = q[start : start + chunk] @ b.T
        kk = k
        if same:
            rows = np.arange(sims.shape[0])
            sims[rows, rows + start] = -np.inf
            kk = min(k, len(b) - 1)
        kk = min(kk, sims.shape[1])
        out[start : start + chunk] = np.partition(sims, sims.shape[1] - kk, axis=1)[
            :, sims.shape[1] - kk :
        ].mean(axis=1)
    return out


def _old_retrieval_counts(u, v, k=10, chunk=2048):
    """The numpy path of ``retrieval_counts`` before this change (criterion csls)."""
    n = len(u)
    un, vn = normalize(u), normalize(v)
    row_weak = _old_neighbourhood(un, vn, k, chunk=chunk)
    pen_weak = _old_neighbourhood(vn, un, k, chunk=chunk)
    pool = _old_neighbourhood(
        np.concatenate([un, vn]), np.concatenate([un, vn]), k, same=True, chunk=chunk
    )
    r_u, r_v = pool[:n], pool[n:]
    weak = paper = union = 0
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        rows = np.arange(stop - start)
        diag = rows + start
        s_uv = un[start:stop] @ vn.T
        s_uu = un[start:stop] @ un.T
        weak_scores = 2 * s_uv - row_weak[start:stop, None] - pen_weak[None, :]
        strong_uv = 2 * s_uv - r_u[start:stop, None] - r_v[None, :]
        strong_uu = 2 * s_uu - r_u[start:stop, None] - r_u[None, :]
        own_weak = weak_scores[rows, diag].copy()
        weak_scores[rows, diag] = -np.inf
        ok_weak = own_weak > weak_scores.max(axis=1)
        own_strong = strong_uv[rows, diag].copy()
        strong_uu[rows, diag] = -np.inf
        ok_paper = own_strong > strong_uu.max(axis=1)
        strong_uv[rows, diag] = -np.inf
        ok_union = ok_paper & (own_strong > strong_uv.max(axis=1))
        weak += int(ok_weak.sum())
        paper += int(ok_paper.sum())
        union += int(ok_union.sum())
    return weak, paper, union


def main(argv=None) -> int:
    """Run the benchmark and print old/new seconds and their ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    u = rng.standard_normal((args.n, args.dim)).astype(np.float32)
    v = (u + 5.0 * rng.standard_normal((args.n, args.dim))).astype(np.float32)
    old_t, new_t, bounded_t = [], [], []
    for _ in range(args.repeats):  # interleaved, so load changes hit both alike
        t0 = time.perf_counter()
        fwd_old, bwd_old = _old_retrieval_counts(u, v), _old_retrieval_counts(v, u)
        old_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        pair = csls.retrieval_counts_pair(u, v, backend=csls.NUMPY)
        new_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        bounded = csls.retrieval_counts_pair(u, v, backend=csls.NUMPY, cache_bytes=0)
        bounded_t.append(time.perf_counter() - t0)
    if bounded != pair:
        print("MISMATCH: recomputed blocks give other counts than kept blocks")
        return 1
    for name, old in (("src_tgt", fwd_old), ("tgt_src", bwd_old)):
        c = pair[name]
        new = (c.weak, c.strong_pooled, c.strong_union)
        if new != old:
            print(f"MISMATCH {name}: old (weak, pooled, union) {old} != new {new}")
            return 1
    old_s, new_s, bounded_s = min(old_t), min(new_t), min(bounded_t)
    print(
        f"CSLS retrieval, n={args.n}, dim={args.dim}, k=10, both directions, best of {args.repeats}"
    )
    print(
        f"  old (per direction, neighbourhoods recomputed): {old_s:7.2f} s  (S_weak + pooled + union)"
    )
    print(
        f"  new (neighbourhoods shared, 3 n x n kept):      {new_s:7.2f} s  (S_weak + paper + pooled + union, tie counts)"
    )
    print(
        f"  new, blocks recomputed (cache_bytes=0):         {bounded_s:7.2f} s  ({old_s / bounded_s:.2f}x; a few chunk x n blocks)"
    )
    print(
        f"  speed-up: {old_s / new_s:.2f}x  (target >= 1.5x); counts agree: "
        f"weak {pair['src_tgt'].weak}/{pair['tgt_src'].weak}, paper {pair['src_tgt'].strong_paper}/{pair['tgt_src'].strong_paper}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
