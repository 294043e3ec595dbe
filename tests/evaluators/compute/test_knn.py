"""The blocked, threaded exact kNN index equals the single-pass implementation and brute force."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from evaluators.compute import knn
from evaluators.metrics import mining as M

_REF = Path(__file__).resolve().parents[2] / "oracles" / "knn_reference.py"
_spec = importlib.util.spec_from_file_location("knn_reference", _REF)
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

HAS_FAISS = importlib.util.find_spec("faiss") is not None


def sequential_knn(x, y, kf, kb, chunk=2048):
    """The index before blocking by memory and threads (xlbench <= this change), kept as the reference."""
    n, m = len(x), len(y)
    f_sims = np.empty((n, kf), np.float32)
    f_idx = np.empty((n, kf), np.int64)
    b_sims = np.full((m, kb), -np.inf, np.float32)
    b_idx = np.full((m, kb), -1, np.int64)
    for start in range(0, n, chunk):
        s = x[start : start + chunk] @ y.T
        f_sims[start : start + len(s)], f_idx[start : start + len(s)] = ref.topk_rows(s, kf)
        ref.merge_cols(s, start, b_sims, b_idx, kb)
    return f_sims, f_idx, b_sims, b_idx


def brute(x, y, k):
    s = x @ y.T
    f = np.lexsort((np.broadcast_to(np.arange(s.shape[1]), s.shape), -s), axis=1)[:, :k]
    b = np.lexsort((np.broadcast_to(np.arange(s.shape[0]), s.T.shape), -s.T), axis=1)[:, :k]
    return f, b


def data(n, m, d=16, seed=0, dup=True):
    rng = np.random.default_rng(seed)
    x = M.normalize(rng.standard_normal((n, d)).astype(np.float32))
    y = M.normalize(rng.standard_normal((m, d)).astype(np.float32))
    if dup:  # exact ties in both directions: lower index must win everywhere
        x[7] = x[3]
        y[11] = y[5]
        y[12] = y[5]
    return x, y


@pytest.mark.parametrize("workers,rows", [(1, 64), (2, 64), (3, 100), (2, None)])
def test_blocked_threads_equal_the_sequential_index(workers, rows):
    x, y = data(1000, 700, dup=False)
    fwd, bwd = knn.knn_numpy(x, y, 4, 4, block_rows=rows, workers=workers)
    f_sims, f_idx, b_sims, b_idx = sequential_knn(x, y, 4, 4)
    np.testing.assert_array_equal(fwd.idx, f_idx)
    np.testing.assert_array_equal(bwd.idx, b_idx)
    # BLAS rounds a product's last bit by its position in the block, so other block shapes
    # move similarities by an ulp or two (the old index did the same between chunk sizes)
    np.testing.assert_allclose(fwd.sims, f_sims, rtol=0, atol=5e-7)
    np.testing.assert_allclose(bwd.sims, b_sims, rtol=0, atol=5e-7)
    f_ref, b_ref = brute(x, y, 4)
    assert fwd.idx.tolist() == f_ref.tolist() and bwd.idx.tolist() == b_ref.tolist()


def test_exact_under_ties_up_to_float_rounding():
    x, y = data(1000, 700)  # duplicated rows: exact ties in float64
    fwd, bwd = knn.knn_numpy(x, y, 4, 4, block_rows=64, workers=2)
    s64 = x.astype(np.float64) @ y.astype(np.float64).T
    best_f = -np.sort(-s64, axis=1)[:, :4]
    best_b = -np.sort(-s64.T, axis=1)[:, :4]
    np.testing.assert_allclose(np.take_along_axis(s64, fwd.idx, axis=1), best_f, atol=1e-6)
    np.testing.assert_allclose(np.take_along_axis(s64.T, bwd.idx, axis=1), best_b, atol=1e-6)
    assert all(len(set(r)) == 4 for r in fwd.idx.tolist() + bwd.idx.tolist())


def test_uneven_k_and_tiny_corpora():
    x, y = data(5, 300, dup=False)
    fwd, bwd = knn.knn_numpy(x, y, 4, 5, block_rows=2, workers=2)  # kb = n: every source
    f_ref, b_ref = brute(x, y, 5)
    assert fwd.idx.tolist() == f_ref[:, :4].tolist() and bwd.idx.tolist() == b_ref.tolist()


def test_memory_budget_sets_the_block_and_never_an_n_by_m_matrix():
    # one block shared by the workers: the block and its selection buffers fit the budget,
    # or twice the budget where that gives each worker a slice of 448 rows, never more
    assert knn.block_rows_for(20_000, 2) * 20_000 * 6 <= knn.DEFAULT_BLOCK_BUDGET
    for m, workers in ((100_000, 2), (300_000, 2), (100_000, 8), (60_000, 1)):
        rows = knn.block_rows_for(m, workers)
        assert rows * m * 6 <= 2 * knn.DEFAULT_BLOCK_BUDGET
        assert rows >= min(448 * workers, knn.DEFAULT_BLOCK_BUDGET // (m * 6) * 2)
    assert knn.block_rows_for(10**7, 4) == 64  # a floor keeps the products efficient
    x, y = data(600, 500)
    seen = []
    original = knn.select_block

    def spy(s, *args, **kwargs):
        seen.append(s.shape)
        return original(s, *args, **kwargs)

    knn.select_block = spy
    try:
        knn.knn_numpy(x, y, 4, 4, budget=128 * 500 * 6, workers=2)
    finally:
        knn.select_block = original
    # the budget holds 128 rows; slices that short get twice the budget: 256-row blocks (600 rows:
    # 256, 256, 88), each selected as 128-row slices, one per worker (the last fits one slice)
    assert [r for r, _ in seen] == [128, 128, 128, 128, 88]


def test_mining_through_knn_both_is_unchanged():
    x, y = data(400, 350, dup=False)
    a = M.mine(x, y, k=4)
    fwd, bwd = sequential_knn(x, y, 4, 4)[:2], sequential_knn(x, y, 4, 4)[2:]
    f, b = M.margin_scores(M.Neighbours(*fwd), M.Neighbours(*bwd), "ratio")
    expected = M.retrieve(M.Neighbours(*fwd), M.Neighbours(*bwd), f, b, "max")
    np.testing.assert_array_equal(a.src, expected.src)
    np.testing.assert_array_equal(a.tgt, expected.tgt)
    np.testing.assert_allclose(a.scores, expected.scores, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.skipif(
    not HAS_FAISS, reason="faiss-cpu is not installed (optional: pip install 'xlbench[faiss]')"
)
@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_approximate_faiss_indexes_find_most_exact_neighbours(kind):
    x, y = data(2000, 2000, d=32, dup=False)
    exact, _ = knn.knn_numpy(x, y, 4, 4)
    approx, _ = knn.knn_faiss(x, y, 4, 4, approximate=kind)
    recall = np.mean(
        [len(set(a) & set(e)) / 4 for a, e in zip(approx.idx.tolist(), exact.idx.tolist())]
    )
    assert 0.5 < recall <= 1.0


@pytest.mark.parametrize(
    "c,m,kf,kb,seed",
    [(64, 700, 4, 4, 0), (3, 300, 4, 5, 1), (200, 40_000, 4, 4, 2), (130, 520, 7, 2, 3)],
)
def test_fused_block_selection_equals_the_two_pass_selection(c, m, kf, kb, seed):
    # ties (duplicated rows and columns), signed zeros and several blocks into one running state
    rng = np.random.default_rng(seed)
    x = M.normalize(rng.standard_normal((4 * c, 16)).astype(np.float32))
    y = M.normalize(rng.standard_normal((m, 16)).astype(np.float32))
    x[1], y[2], y[3] = x[0], y[1], y[1]
    old = [np.full((m, kb), -np.inf, np.float32), np.full((m, kb), -1, np.int64)]
    new = [a.copy() for a in old]
    f_sims, f_idx = np.empty((4 * c, kf), np.float32), np.empty((4 * c, kf), np.int64)
    for start in range(0, 4 * c, c):
        s = x[start : start + c] @ y.T
        s[0, :5] = [0.0, -0.0, -0.0, 0.0, -0.0]
        want_sims, want_idx = ref.topk_rows(s, kf)
        ref.merge_cols(s, start, *old, kb)
        knn.select_block(s, start, f_sims, f_idx, *new, kf, kb)
        np.testing.assert_array_equal(f_idx[start : start + c], want_idx)
        np.testing.assert_array_equal(f_sims[start : start + c], want_sims)
        np.testing.assert_array_equal(new[1], old[1])
        np.testing.assert_array_equal(new[0], old[0])


@pytest.mark.parametrize("workers,rows", [(1, 64), (2, 64), (3, 70), (2, 7)])
def test_blocked_equals_unblocked_under_exact_ties(workers, rows):
    """Exact ties in float32 (dyadic entries: every product is exact): the same neighbours, tie for tie."""
    rng = np.random.default_rng(3)
    x = (rng.integers(-2, 3, (300, 8)) / 2).astype(np.float32)
    y = (rng.integers(-2, 3, (260, 8)) / 2).astype(np.float32)
    y[40:50] = y[5]  # whole runs of equal candidates for every query
    x[100:110] = x[9]
    fwd, bwd = knn.knn_numpy(x, y, 5, 6, block_rows=rows, workers=workers)
    one_f, one_b = knn.knn_numpy(x, y, 5, 6, block_rows=len(x), workers=1)  # unblocked: one block
    f_ref, b_ref = brute(x, y, 6)
    assert fwd.idx.tolist() == one_f.idx.tolist() == f_ref[:, :5].tolist()
    assert bwd.idx.tolist() == one_b.idx.tolist() == b_ref.tolist()
    np.testing.assert_array_equal(fwd.sims, one_f.sims)
    np.testing.assert_array_equal(bwd.sims, one_b.sims)


def _dyadic(n, m, d=8, seed=3):
    """Rows of halves: every product is exact in float32 and on any device, so ties are exact."""
    rng = np.random.default_rng(seed)
    x = (rng.integers(-2, 3, (n, d)) / 2).astype(np.float32)
    y = (rng.integers(-2, 3, (m, d)) / 2).astype(np.float32)
    y[40:50] = y[5]
    x[100:110] = x[9]
    return x, y


@pytest.mark.parametrize("chunk", [7, 64, 300])
def test_torch_index_equals_numpy_under_exact_ties(chunk, torch_device):
    """The GPU path (torch.topk + tie re-selection + running merge), on CPU tensors and on CUDA."""
    pytest.importorskip("torch")
    x, y = _dyadic(300, 260)
    t_f, t_b = knn.knn_torch(x, y, 5, 6, chunk, torch_device)
    n_f, n_b = knn.knn_numpy(x, y, 5, 6, block_rows=64, workers=2)
    f_ref, b_ref = brute(x, y, 6)
    assert t_f.idx.tolist() == n_f.idx.tolist() == f_ref[:, :5].tolist()
    assert t_b.idx.tolist() == n_b.idx.tolist() == b_ref.tolist()
    np.testing.assert_array_equal(t_f.sims, n_f.sims)
    np.testing.assert_array_equal(t_b.sims, n_b.sims)
    # mining asks for it by name and device, whatever the machine has (on unit rows)
    m_f, m_b = M.knn_both(x, y, k=5, index="torch", device=torch_device, chunk_size=chunk)
    u_f, u_b = knn.knn_torch(M.normalize(x), M.normalize(y), 5, 5, chunk, torch_device)
    assert m_f.idx.tolist() == u_f.idx.tolist() and m_b.idx.tolist() == u_b.idx.tolist()


def test_similarity_backend_torch_on_request():
    torch = pytest.importorskip("torch")
    from evaluators.core.errors import UsageError
    from evaluators.metrics import csls

    assert knn.similarity_backend("cpu") is csls.NUMPY
    assert knn.similarity_backend(backend="numpy") is csls.NUMPY
    be = knn.similarity_backend("cpu", backend="torch")
    assert isinstance(be, knn.TorchSimilarity) and be.device == "cpu" and be.torch is torch
    with pytest.raises(UsageError, match="Unknown similarity backend"):
        knn.similarity_backend(backend="jax")


def test_column_bound_is_a_lower_bound_of_the_kth_value():
    rng = np.random.default_rng(4)
    block = rng.standard_normal((300, 50)).astype(np.float32)
    block[:, 7] = 1.0  # a column of ties
    kth = -np.sort(-block, axis=0)[3]  # each column's 4th largest
    for rows, groups in ((300, 64), (300, 4), (20, 64), (4, 64)):
        bound = knn._column_kth_bound(block, 4, rows, groups)
        assert (bound <= kth).all()
    np.testing.assert_array_equal(knn._column_kth_bound(block, 4, 300, 300), kth)  # 1-row groups
