"""A deliberately plain double-loop implementation of margin mining, for checking and timing.

It follows LASER's ``mine_bitexts.py`` step by step with Python loops over
every (source, target) pair (one float64 ``numpy.dot`` per pair), sharing no code with
:mod:`evaluators.metrics.mining`. ``tests/evaluators/metrics/test_mining.py`` checks that the fast
implementation returns the same pairs, scores and F1; ``bench_mining.py``
times it against the fast one.
"""

from __future__ import annotations

import math

import numpy as np


def _unit(rows):
    out = []
    for r in rows:
        v = np.asarray(r, dtype=np.float64)
        norm = math.sqrt(float(np.dot(v, v)))
        out.append(v / norm if norm > 1e-12 else v)
    return out


def _dot(a, b):
    return float(np.dot(a, b))


def reference_mine(x, y, k=4, margin="ratio", retrieval="max"):
    """Return ``[(src, tgt, score), ...]`` best first, exactly as LASER's mine mode would keep them."""
    xs, ys = _unit(x), _unit(y)
    n, m = len(xs), len(ys)
    sim = [[_dot(xs[i], ys[j]) for j in range(m)] for i in range(n)]
    kf, kb = min(k, m), min(k, n)
    fwd = [sorted(range(m), key=lambda j: (-sim[i][j], j))[:kf] for i in range(n)]
    bwd = [sorted(range(n), key=lambda i: (-sim[i][j], i))[:kb] for j in range(m)]
    fmean = [sum(sim[i][j] for j in fwd[i]) / kf for i in range(n)]
    bmean = [sum(sim[i][j] for i in bwd[j]) / kb for j in range(m)]

    def score(i, j):
        a, b = sim[i][j], (fmean[i] + bmean[j]) / 2
        return a / b if margin == "ratio" else a - b if margin == "distance" else a

    f_best, f_score = [], []
    for i in range(n):
        best = None
        for j in fwd[i]:
            s = score(i, j)
            if best is None or s > best[1]:
                best = (j, s)
        f_best.append(best[0])
        f_score.append(best[1])
    b_best, b_score = [], []
    for j in range(m):
        best = None
        for i in bwd[j]:
            s = score(i, j)
            if best is None or s > best[1]:
                best = (i, s)
        b_best.append(best[0])
        b_score.append(best[1])

    if retrieval == "forward":
        out = [(i, f_best[i], f_score[i]) for i in range(n)]
    elif retrieval == "backward":
        out = [(b_best[j], j, b_score[j]) for j in range(m)]
    elif retrieval == "intersection":
        out = [(i, f_best[i], f_score[i]) for i in range(n) if b_best[f_best[i]] == i]
    else:
        pool = [(i, f_best[i], f_score[i]) for i in range(n)] + [
            (b_best[j], j, b_score[j]) for j in range(m)
        ]
        order = sorted(range(len(pool)), key=lambda p: -pool[p][2])
        seen_s, seen_t, out = set(), set(), []
        for p in order:
            i, j, s = pool[p]
            if i not in seen_s and j not in seen_t:
                seen_s.add(i)
                seen_t.add(j)
                out.append((i, j, s))
    return sorted(out, key=lambda c: -c[2])


def reference_best_f1(cands, gold):
    """Try every cut of the score-sorted candidates; return ``(best_f1, tp, n_pred)`` (ties kept together)."""
    gold = set(gold)
    best = (0.0, 0, 0)
    for cut in range(1, len(cands) + 1):
        if cut < len(cands) and cands[cut][2] == cands[cut - 1][2]:
            continue
        tp = sum((i, j) in gold for i, j, _ in cands[:cut])
        if tp == 0:
            continue
        p, r = tp / cut, tp / len(gold)
        f1 = 2 * p * r / (p + r)
        if f1 > best[0]:
            best = (f1, tp, cut)
    return best
