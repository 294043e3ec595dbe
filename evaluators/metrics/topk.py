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
#: Row groups of fewer neighbouring entries than this, when there are at least
#: :data:`_STRIDED_GROUPS` of them, are strided instead (:func:`group_maxima`): numpy pays a
#: fixed cost for each run it reduces, so short runs cost more than their entries, and a strided
#: group's slices are as wide as the group count.
_SHORT_RUN = 256
_STRIDED_GROUPS = 32


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


def group_maxima(m: np.ndarray, k: int, groups: int, axis: int) -> np.ndarray:
    """The maxima of ``G = max(k, min(groups, length))`` disjoint groups of each row (``axis=1``) or column (``axis=0``).

    The groups split the first ``G * (length // G)`` entries along ``axis``. The k largest
    maxima are k distinct entries, so the k-th largest maximum (:func:`kth_largest`) is a lower
    bound of the row's (column's) k-th largest value whatever the split; more groups make it
    tighter, for a partition of more maxima. Requires ``k <= length``.

    Along a row, a group is a run of ``length // G`` neighbouring entries, unless those runs
    are short (under :data:`_SHORT_RUN` entries, with at least :data:`_STRIDED_GROUPS`
    groups): then group ``g`` is the entries ``g, g + G, g + 2G, ...``, whose maxima numpy
    takes as an elementwise maximum of contiguous slices (docs/performance.md: word
    retrieval's lists).

    >>> group_maxima(np.array([[1.0, 5.0, 2.0, 4.0, 9.0]]), 2, 2, axis=1).tolist()
    [[5.0, 4.0]]
    >>> group_maxima(np.arange(128.0)[None, ::-1], 32, 32, axis=1)[0, :3].tolist()  # strided
    [127.0, 126.0, 125.0]
    """
    length = m.shape[axis]
    count = max(k, min(groups, length))
    width = length // count
    if axis == 0:
        return m[: count * width].reshape(count, width, m.shape[1]).max(axis=1)
    if width < _SHORT_RUN and count >= _STRIDED_GROUPS:
        return m[:, : count * width].reshape(len(m), width, count).max(axis=1)
    return m[:, : count * width].reshape(len(m), count, width).max(axis=2)


def kth_largest(maxima: np.ndarray, k: int, axis: int) -> np.ndarray:
    """The k-th largest of each row's (``axis=1``) or column's (``axis=0``) :func:`group_maxima`."""
    at = maxima.shape[axis] - k
    part = np.partition(maxima, at, axis=axis)
    return part[:, at] if axis == 1 else part[at]


def top_per_row(m: np.ndarray, k: int, groups: int = GROUPS) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` largest values, in descending order with ties by column, and their columns.

    Exact, for float32 rows and ``1 <= k <= m.shape[1]``. The k-th largest of a row's
    :func:`group_maxima` is at most its k-th largest value, so every entry of the top k is at
    or above it. Those candidates are sorted by (row, value descending,
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
    maxima = group_maxima(m, k, groups, axis=1)
    bound = kth_largest(maxima, k, axis=1)
    # a NaN propagates into its group's maximum; the last columns, in no group, are looked at
    grouped = maxima.shape[1] * (n // maxima.shape[1])
    tail = np.isnan(m[:, grouped:]).any(axis=1)
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
