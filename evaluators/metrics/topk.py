"""Exact top-k selection over rows of a similarity matrix, without a partition of every row.

A partition (``np.argpartition``) copies the matrix and walks each row with introselect, whose
cost depends on the data (self-similarity rows are slow ones). :func:`top_per_row` finds the same
values without a copy: a lower bound of each row's k-th largest value from disjoint group maxima,
one comparison against it, and a sort of the few entries at or above it. The mining index
(:mod:`evaluators.compute.knn`) selects its blocks with the same keys.
"""

from __future__ import annotations

import numpy as np

#: Column groups per row whose maxima bound a row's k-th largest value (:func:`top_per_row`):
#: more groups give a tighter bound (fewer entries to sort) for a larger partition of maxima.
GROUPS = 64


def desc_key(groups: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """One int64 sort key per entry: ``groups`` ascending, then float32 ``vals`` descending.

    The float's bits map to an unsigned integer in the float's order (``-0.0`` folded into
    ``0.0`` first, as float comparison treats them); complemented, larger values sort first.

    >>> np.argsort(desc_key(np.array([1, 0, 0]), np.array([5.0, -1.0, 2.0])), kind="stable").tolist()
    [2, 1, 0]
    """
    bits = (vals.astype(np.float32) + np.float32(0.0)).view(np.int32).astype(np.int64)
    ordered = np.where(bits < 0, ~bits & 0xFFFFFFFF, bits | 0x80000000)
    return (groups.astype(np.int64) << 32) | (0xFFFFFFFF - ordered)


def first_k(order: np.ndarray, groups_sorted_counts: np.ndarray, k: int) -> np.ndarray:
    """Positions in ``order`` of the first ``k`` entries of each group (each group has at least k)."""
    starts = np.concatenate(([0], np.cumsum(groups_sorted_counts)[:-1]))
    return order[(starts[:, None] + np.arange(k)[None, :]).ravel()]


def top_per_row(m: np.ndarray, k: int, groups: int = GROUPS) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` largest values, in descending order with ties by column, and their columns.

    Exact, for float32 rows and ``1 <= k <= m.shape[1]``. The first ``g * G`` columns of a row are cut into ``G``
    groups (``G = max(k, min(groups, columns))``); the k-th largest of their maxima is at most
    the row's k-th largest value (the k largest maxima are k distinct entries), so every entry
    of the top k is at or above it. Those candidates are sorted by (row, value descending,
    column) in one stable sort. A row holding NaN (which a partition places above every number)
    is sorted whole on its own, so the values are ``argpartition``'s in every case.

    >>> top_per_row(np.array([[0.1, 0.9, 0.5, 0.9], [3.0, 2.0, 1.0, 0.0]], np.float32), 2)
    (array([[0.9, 0.9],
           [3. , 2. ]], dtype=float32), array([[1, 3],
           [0, 1]]))
    """
    m = np.ascontiguousarray(m)
    rows, n = m.shape
    if m.dtype != np.float32 or not 1 <= k <= n:
        raise ValueError(
            f"top_per_row takes float32 rows and 1 <= k <= {n}, not {m.dtype} and k={k}"
        )
    g_count = max(k, min(groups, n))
    width = n // g_count
    maxima = m[:, : width * g_count].reshape(rows, g_count, width).max(axis=2)
    bound = np.partition(maxima, g_count - k, axis=1)[:, g_count - k]
    # a NaN propagates into its group's maximum; the last columns, in no group, are looked at
    tail = np.isnan(m[:, width * g_count :]).any(axis=1)
    nan_rows = np.flatnonzero(np.isnan(maxima).any(axis=1) | tail)
    bound[nan_rows] = np.nan  # no entry compares >= NaN: none of theirs are candidates here
    flat = np.flatnonzero(m >= bound[:, None])
    at, cols = np.divmod(flat, n)
    vals = m.ravel()[flat]
    counts = np.bincount(at, minlength=rows)
    order = np.argsort(desc_key(at, vals), kind="stable")
    pick = first_k(order, counts[counts > 0], k)
    out_vals = np.empty((rows, k), m.dtype)
    out_cols = np.empty((rows, k), np.int64)
    plain = np.flatnonzero(counts > 0)
    out_vals[plain] = vals[pick].reshape(len(plain), k)
    out_cols[plain] = cols[pick].reshape(len(plain), k)
    for r in nan_rows:
        part = np.argsort(desc_key(np.zeros(n, np.int64), m[r]), kind="stable")[:k]
        out_vals[r], out_cols[r] = m[r, part], part
    return out_vals, out_cols
