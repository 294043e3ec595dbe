"""top_per_row against a full sort of each row: values, columns and their order, ties, NaN, infinities."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.metrics.topk import top_per_row


def _by_sorting(m: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row sorted by (value descending, column ascending), NaN first (as a partition ranks it)."""
    cols = np.empty((len(m), k), np.int64)
    for r, row in enumerate(m):
        key = np.where(np.isnan(row), -np.inf, -row.astype(np.float64))
        key[np.isnan(row)] = -np.inf
        order = np.lexsort((np.arange(len(row)), np.where(np.isnan(row), 0, 1), key))
        cols[r] = order[:k]
    return np.take_along_axis(m, cols, axis=1), cols


@pytest.mark.parametrize("seed", range(40))
def test_top_per_row_is_each_rows_sorted_head(seed):
    rng = np.random.default_rng(seed)
    rows, n = int(rng.integers(1, 40)), int(rng.integers(1, 300))
    k = int(rng.integers(1, n + 1))
    # few distinct values, so rows are full of ties; some rows all equal
    m = rng.integers(-3, 4, (rows, n)).astype(np.float32) / 2
    m[rng.random(rows) < 0.1] = 1.0
    if seed % 3 == 0:
        m[rng.random(m.shape) < 0.05] = -np.inf
    if seed % 4 == 0:
        m[rng.random(m.shape) < 0.02] = np.inf
    if seed % 5 == 0:
        m[int(rng.integers(rows)), int(rng.integers(n))] = np.nan
    vals, cols = top_per_row(m, k, groups=int(rng.integers(1, 80)))
    want_vals, want_cols = _by_sorting(m, k)
    np.testing.assert_array_equal(cols, want_cols)
    np.testing.assert_array_equal(vals, want_vals)


def test_top_per_row_of_similarities_equals_a_partition():
    rng = np.random.default_rng(0)
    u = rng.standard_normal((500, 32)).astype(np.float32)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    m = u @ u.T
    vals, cols = top_per_row(m, 30)
    part = np.sort(np.partition(m, m.shape[1] - 30, axis=1)[:, -30:], axis=1)[:, ::-1]
    np.testing.assert_array_equal(vals, part)
    np.testing.assert_array_equal(np.take_along_axis(m, cols, axis=1), vals)
    assert (np.diff(vals, axis=1) <= 0).all()


def test_top_per_row_refuses_what_it_cannot_do_exactly():
    with pytest.raises(ValueError, match="float32"):
        top_per_row(np.zeros((2, 3)), 1)
    with pytest.raises(ValueError, match="k=4"):
        top_per_row(np.zeros((2, 3), np.float32), 4)
