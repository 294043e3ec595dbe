"""Margin mining: hand-computed cases, brute-force equality, thresholds, errors."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from evaluators.core.errors import UsageError
from evaluators.metrics import mining as M

_REF = Path(__file__).resolve().parents[2] / "oracles" / "mining_reference.py"
_spec = importlib.util.spec_from_file_location("bucc_mining_reference", _REF)
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)
_KNN_REF = Path(__file__).resolve().parents[2] / "oracles" / "knn_reference.py"
_knn_spec = importlib.util.spec_from_file_location("bucc_knn_reference", _KNN_REF)
knn_ref = importlib.util.module_from_spec(_knn_spec)
_knn_spec.loader.exec_module(knn_ref)

HAS_FAISS = importlib.util.find_spec("faiss") is not None
needs_faiss = pytest.mark.skipif(
    not HAS_FAISS, reason="faiss-cpu is not installed (optional: pip install 'xlbench[faiss]')"
)
INDEXES = ["numpy", pytest.param("faiss", marks=needs_faiss)] + (
    ["torch"] if importlib.util.find_spec("torch") else []
)


def planted(n=120, m=100, d=12, n_gold=30, noise=0.35, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    y = rng.standard_normal((m, d))
    src = rng.permutation(n)[:n_gold]
    tgt = rng.permutation(m)[:n_gold]
    y[tgt] = x[src] + noise * rng.standard_normal((n_gold, d))
    return x, y, set(zip(src.tolist(), tgt.tolist()))


def test_knn_hand_made():
    # x0 is closest to y1 then y0; x1 to y2 then y0 (cosines hand-checked below)
    x = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    y = np.array([[0.6, 0.0, 0.8], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    fwd, bwd = M.knn_both(x, y, k=2)
    assert fwd.idx.tolist() == [[1, 0], [2, 0]]
    np.testing.assert_allclose(fwd.sims, [[1.0, 0.6], [1.0, 0.8]], rtol=1e-6)
    assert bwd.idx.tolist() == [[1, 0], [0, 1], [1, 0]]
    np.testing.assert_allclose(bwd.sims, [[0.8, 0.6], [1.0, 0.0], [1.0, 0.0]], atol=1e-6)


def test_margin_ratio_hand_computed():
    x = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    y = np.array([[0.6, 0.0, 0.8], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    fwd, bwd = M.knn_both(x, y, k=2)
    f, b = M.margin_scores(fwd, bwd, "ratio")
    # x0: mean 0.8; y1: mean 0.5 -> 1.0 / 0.65 ; y0: mean 0.7 -> 0.6 / 0.75
    np.testing.assert_allclose(f[0], [1.0 / 0.65, 0.6 / 0.75], rtol=1e-6)
    # x1: mean 0.9; y2: mean 0.5 -> 1.0 / 0.7 ; y0 -> 0.8 / 0.8
    np.testing.assert_allclose(f[1], [1.0 / 0.7, 1.0], rtol=1e-6)
    fd, _ = M.margin_scores(fwd, bwd, "distance")
    np.testing.assert_allclose(fd[0], [1.0 - 0.65, 0.6 - 0.75], atol=1e-6)
    fa, _ = M.margin_scores(fwd, bwd, "absolute")
    np.testing.assert_allclose(fa, fwd.sims, atol=1e-7)
    c = M.retrieve(fwd, bwd, f, b, "max")
    assert list(zip(c.src.tolist(), c.tgt.tolist())) == [(0, 1), (1, 2)]
    np.testing.assert_allclose(c.scores, [1.0 / 0.65, 1.0 / 0.7], rtol=1e-6)


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("margin", M.MARGINS)
@pytest.mark.parametrize("retrieval", M.RETRIEVALS)
def test_matches_brute_force(index, margin, retrieval):
    x, y, gold = planted()
    expected = ref.reference_mine(x, y, 4, margin, retrieval)
    got = M.mine(x, y, k=4, margin=margin, retrieval=retrieval, index=index, chunk_size=32)
    assert list(zip(got.src.tolist(), got.tgt.tolist())) == [(i, j) for i, j, _ in expected]
    np.testing.assert_allclose(got.scores, [s for *_, s in expected], rtol=1e-5, atol=1e-6)
    best_f1, tp, n_pred = ref.reference_best_f1(expected, gold)
    swept = M.sweep_threshold(got, gold)
    assert (swept.tp, swept.n_pred) == (tp, n_pred)
    assert swept.f1 == pytest.approx(best_f1, abs=1e-12)
    assert M.score_at(got, gold, swept.threshold) == swept


def test_probe_paths_match_full_sort():
    rng = np.random.default_rng(3)
    s = rng.standard_normal((37, 300)).astype(np.float32)
    s[5, 10] = s[5, 11] = 9.0  # a tie: the lower column wins
    vals, idx = knn_ref.topk_rows(s, 4, probe=16)
    order = np.lexsort((np.broadcast_to(np.arange(300), s.shape), -s), axis=1)[:, :4]
    assert idx.tolist() == order.tolist()
    np.testing.assert_array_equal(vals, np.take_along_axis(s, order, axis=1))
    best = np.full((300, 3), -np.inf, np.float32)
    best_idx = np.full((300, 3), -1, np.int64)
    for start in range(0, 37, 10):
        knn_ref.merge_cols(s[start : start + 10], start, best, best_idx, 3, probe=4)
    col_order = np.lexsort((np.broadcast_to(np.arange(37)[:, None], s.shape), -s), axis=0)[:3].T
    assert best_idx.tolist() == col_order.tolist()


def test_large_corpus_uses_probe_and_stays_exact():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((300, 8)).astype(np.float32)
    y = rng.standard_normal((5000, 8)).astype(np.float32)  # > the 4096-column probe
    fwd, bwd = M.knn_both(x, y, k=4, index="numpy", chunk_size=128)
    s = M.normalize(x) @ M.normalize(y).T
    assert fwd.idx.tolist() == np.argsort(-s, axis=1, kind="stable")[:, :4].tolist()
    assert bwd.idx.tolist() == np.argsort(-s.T, axis=1, kind="stable")[:, :4].tolist()


def test_duplicates_are_kept_apart_by_index():
    # source sentences 0 and 1 are identical (BUCC has such duplicates); each keeps its own index
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    y = np.array([[1.0, 0.1], [0.0, 1.0]])
    fwd = M.mine(x, y, k=1, retrieval="forward")
    assert sorted(zip(fwd.src.tolist(), fwd.tgt.tolist())) == [(0, 0), (1, 0), (2, 1)]
    # whichever copy the gold names, forward retrieval proposes it
    assert M.score_at(fwd, {(1, 0), (2, 1)}, -1.0).recall == 1.0
    # max uses each sentence once: the first copy (lower index) wins the tie
    mx = M.mine(x, y, k=1, retrieval="max")
    assert sorted(zip(mx.src.tolist(), mx.tgt.tolist())) == [(0, 0), (2, 1)]
    assert M.sweep_threshold(mx, {(0, 0), (2, 1)}).f1 == 1.0


def test_sweep_threshold_midpoint_ties_and_empty():
    c = M.Candidates(np.arange(5), np.arange(5), np.array([5.0, 4.0, 4.0, 2.0, 1.0]))
    # keep 1: P1 R1/3 F.5 ; keep 3 (tie kept together): tp 3 P1 R1 F1
    s = M.sweep_threshold(c, {(0, 0), (1, 1), (2, 2)})
    assert (s.threshold, s.tp, s.n_pred, s.f1) == (3.0, 3, 3, 1.0)
    # gold (1,1) only: the tie makes "keep 2" impossible; keep 3 gives P1/3 R1 F.5
    s = M.sweep_threshold(c, {(1, 1)})
    assert (s.threshold, s.tp, s.n_pred, s.f1) == (3.0, 1, 3, 0.5)
    # nothing right: threshold at the top score, nothing predicted
    s = M.sweep_threshold(c, {(9, 9)})
    assert (s.threshold, s.tp, s.n_pred, s.f1) == (5.0, 0, 0, 0.0)
    assert M.score_at(c, {(9, 9)}, s.threshold).n_pred == 0
    # best is to keep everything: threshold just below the last score
    s = M.sweep_threshold(c, {(i, i) for i in range(5)})
    assert s.n_pred == 5 and s.threshold < 1.0 and s.threshold == np.nextafter(1.0, -np.inf)


def test_score_at_counts():
    c = M.Candidates(np.array([0, 1, 2, 3]), np.array([0, 2, 2, 3]), np.array([0.9, 0.8, 0.7, 0.1]))
    s = M.score_at(c, {(0, 0), (2, 2), (4, 4)}, 0.5)
    assert (s.tp, s.n_pred, s.n_gold) == (2, 3, 3)
    assert (
        s.precision == pytest.approx(2 / 3)
        and s.recall == pytest.approx(2 / 3)
        and s.f1 == pytest.approx(2 / 3)
    )


def test_retrieval_accuracy_cosine_and_margin():
    x, y, _ = planted(n=50, m=50, n_gold=0)
    y = x + 0.2 * np.random.default_rng(1).standard_normal(x.shape)
    for scoring in ("cosine", "ratio", "distance"):
        s = M.retrieval_accuracy(x, y, scoring, k=3, chunk_size=7, candidates="all")
        full = M.normalize(x) @ M.normalize(y).T
        if scoring == "cosine":
            score = full.astype(np.float64)
        else:
            fm = np.sort(full, axis=1)[:, -3:].astype(np.float64).mean(axis=1)
            bm = np.sort(full, axis=0)[-3:].astype(np.float64).mean(axis=0)
            b = (fm[:, None] + bm[None, :]) / 2
            score = full / b if scoring == "ratio" else full - b
        assert s.forward_correct == int((score.argmax(axis=1) == np.arange(50)).sum())
        assert s.backward_correct == int((score.argmax(axis=0) == np.arange(50)).sum())
        assert s.forward_accuracy == s.forward_correct / 50


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: M.knn_both(np.eye(2), np.eye(2), k=0), "k must be at least 1"),
        (lambda: M.knn_both(np.eye(2), np.eye(3), k=1), "Embedding sizes differ"),
        (lambda: M.knn_both(np.zeros((0, 2)), np.eye(2), k=1), "empty corpus"),
        (lambda: M.knn_both(np.eye(2), np.eye(2), index="gpu"), "Unknown kNN index"),
        (lambda: M.knn_both(np.eye(2), np.eye(2), approximate=True), "only offered through faiss"),
        (lambda: M.mine(np.eye(2), np.eye(2), margin="cos"), "Unknown margin 'cos'"),
        (lambda: M.mine(np.eye(2), np.eye(2), retrieval="both"), "Unknown retrieval 'both'"),
        (lambda: M.retrieval_accuracy(np.eye(2), np.eye(3)[:3, :2]), "equal length"),
        (lambda: M.retrieval_accuracy(np.eye(2), np.eye(2), "dot"), "Unknown scoring 'dot'"),
        (lambda: M.normalize(np.zeros(3)), "2-D embedding matrix"),
    ],
)
def test_errors(call, message):
    with pytest.raises(UsageError, match=message):
        call()


@needs_faiss
def test_faiss_approximate_runs_and_is_close():
    x, y, gold = planted(n=200, m=200, n_gold=50, noise=0.1)
    exact = M.mine(x, y, index="faiss")
    approx = M.mine(x, y, index="faiss", approximate=True)
    assert M.sweep_threshold(approx, gold).f1 >= M.sweep_threshold(exact, gold).f1 - 0.1
