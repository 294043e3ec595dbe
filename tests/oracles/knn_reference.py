"""The two-pass exact top-k selection that ``evaluators.compute.knn.select_block`` replaced.

Kept as the reference the fused one-pass selection is checked against
(``tests/evaluators/compute/test_knn.py``, ``tests/evaluators/metrics/test_mining.py``) and timed
against (``bench/bench_mining.py``); it shares no code with the engine.
"""

from __future__ import annotations

import numpy as np


def topk_rows(s: np.ndarray, k: int, probe: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of each row of ``s`` (ties by column index), without a full partition.

    A lower bound of each row's k-th value is taken from the first ``probe``
    columns (all columns when there are fewer); only entries at or above it are sorted.
    """
    c, m = s.shape
    probe = max(probe, k)
    bound = -np.partition(-s[:, :probe], k - 1, axis=1)[:, k - 1]
    # flatnonzero on the flat mask is ~20x faster than 2-D nonzero
    rows, cols = np.divmod(np.flatnonzero(s >= bound[:, None]), m)
    vals = s[rows, cols]
    order = np.lexsort((cols, -vals, rows))
    counts = np.bincount(rows, minlength=c)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    take = (starts[:, None] + np.arange(k)[None, :]).ravel()
    pick = order[take]
    return vals[pick].reshape(c, k), cols[pick].reshape(c, k).astype(np.int64)


def merge_cols(
    s: np.ndarray,
    offset: int,
    best_sims: np.ndarray,
    best_idx: np.ndarray,
    k: int,
    probe: int = 256,
) -> None:
    """Merge chunk ``s`` (rows ``offset..``) into the running column top-k, in place.

    Only chunk entries at or above a lower bound of each column's current k-th
    value (the running one, or one taken from the chunk's first ``probe`` rows)
    are sorted, so after the first chunks little work remains.
    """
    c, m = s.shape
    bound = best_sims[:, k - 1]
    if c >= k and np.isneginf(bound).any():
        head = s[: max(k, min(probe, c))]
        probe_bound = -np.partition(-head, k - 1, axis=0)[k - 1]
        bound = np.maximum(bound, probe_bound)
    rows, cols = np.divmod(np.flatnonzero(s >= bound[None, :]), m)
    if len(cols) == 0:
        return
    # merge only the columns this chunk can change
    touched = np.unique(cols)
    t = len(touched)
    vals = s[rows, cols]
    all_cols = np.concatenate((np.repeat(np.arange(t), k), np.searchsorted(touched, cols)))
    all_vals = np.concatenate((best_sims[touched].ravel(), vals))
    all_idx = np.concatenate((best_idx[touched].ravel(), rows.astype(np.int64) + offset))
    pick = _topk_groups(all_cols, all_vals, all_idx, t, k)
    best_sims[touched] = all_vals[pick].reshape(t, k)
    best_idx[touched] = all_idx[pick].reshape(t, k)


def _topk_groups(
    groups: np.ndarray, vals: np.ndarray, idx: np.ndarray, n_groups: int, k: int
) -> np.ndarray:
    """Positions of the k best (value desc, index asc; placeholders ``-1`` last) of each group."""
    order = np.lexsort((np.where(idx < 0, np.iinfo(np.int64).max, idx), -vals, groups))
    counts = np.bincount(groups, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return order[(starts[:, None] + np.arange(k)[None, :]).ravel()]
