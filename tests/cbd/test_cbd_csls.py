"""CSLS and S_weak / S_strong against brute-force loops written straight from the definitions."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.errors import UsageError
from evaluators.metrics import csls


def cos(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def r_brute(x, pool, k, skip=None):
    """Mean cosine of x with its k nearest points of pool (index ``skip`` excluded)."""
    sims = sorted((cos(x, p) for j, p in enumerate(pool) if j != skip), reverse=True)
    return float(np.mean(sims[:k]))


def brute_counts(u, v, criterion, k):
    n = len(u)
    pool = list(u) + list(v)  # candidates U ∪ V; index i is u_i, n + i is v_i

    def weak_score(i, j):
        if criterion == "cosine":
            return cos(u[i], v[j])
        return 2 * cos(u[i], v[j]) - r_brute(u[i], v, k) - r_brute(v[j], u, k)

    def strong_score(i, c):
        if criterion == "cosine":
            return cos(u[i], pool[c])
        return 2 * cos(u[i], pool[c]) - r_brute(u[i], pool, k, skip=i) - r_brute(pool[c], pool, k, skip=c)

    weak = paper = union = 0
    for i in range(n):
        own = weak_score(i, i)
        if all(own > weak_score(i, j) for j in range(n) if j != i):
            weak += 1
        own_s = strong_score(i, n + i)
        beats_u = all(own_s > strong_score(i, j) for j in range(n) if j != i)
        beats_v = all(own_s > strong_score(i, n + j) for j in range(n) if j != i)
        paper += beats_u
        union += beats_u and beats_v
    return csls.RetrievalCounts(n, weak, paper, union)


def test_csls_matrix_matches_brute_force():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((7, 5)), rng.standard_normal((9, 5))
    got = csls.csls_matrix(x, y, k=3)
    for i in range(7):
        for j in range(9):
            want = 2 * cos(x[i], y[j]) - r_brute(x[i], y, 3) - r_brute(y[j], x, 3)
            assert got[i, j] == pytest.approx(want, abs=1e-5)


def test_neighbourhood_excludes_self_within_one_set():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4))
    got = csls.neighbourhood(x, x, k=2, same=True)
    want = [r_brute(x[i], x, 2, skip=i) for i in range(6)]
    np.testing.assert_allclose(got, want, atol=1e-6)
    # Without exclusion every point would count its own similarity of 1.
    assert (csls.neighbourhood(x, x, k=2) > got).all()


@pytest.mark.parametrize("criterion", ["csls", "cosine"])
@pytest.mark.parametrize("noise", [0.3, 1.0, 3.0])
def test_retrieval_counts_match_brute_force(criterion, noise):
    rng = np.random.default_rng(int(noise * 10))
    u = rng.standard_normal((25, 6))
    v = u + noise * rng.standard_normal((25, 6))
    got = csls.retrieval_counts(u, v, criterion, k=4, chunk=7)  # chunk smaller than n on purpose
    assert got == brute_counts(u, v, criterion, 4)


def test_retrieval_counts_identity_and_permutation():
    u = np.random.default_rng(3).standard_normal((50, 8))
    assert csls.retrieval_counts(u, u) == csls.RetrievalCounts(50, 50, 50, 50)
    assert csls.retrieval_counts(u, u[::-1].copy()).weak == 0


def test_strong_paper_differs_from_union():
    # Hand-computed cosines: cos(u0,v0)=.981 < cos(u0,v1)=.994, cos(u1,v1)=.110 < cos(u1,v0)=.196,
    # cos(u0,u1)=0. Each v_i beats the other u_j (paper-strong), but never the other v_j.
    u = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[1.0, 0.2], [0.9, 0.1]])
    got = csls.retrieval_counts(u, v, "cosine")
    assert got == csls.RetrievalCounts(n=2, weak=0, strong_paper=2, strong_union=0)
    assert got.s_strong("paper") == 1.0 and got.s_strong("union") == 0.0


def test_retrieval_errors():
    u = np.zeros((3, 2))
    with pytest.raises(UsageError, match="Unknown retrieval criterion 'dot'; choose one of csls, cosine"):
        csls.retrieval_counts(u, u, "dot")
    with pytest.raises(UsageError, match="same shape, got \\(3, 2\\) and \\(2, 2\\)"):
        csls.retrieval_counts(u, u[:2])
    with pytest.raises(UsageError, match="at least 2 pairs, got 1"):
        csls.retrieval_counts(u[:1], u[:1])
