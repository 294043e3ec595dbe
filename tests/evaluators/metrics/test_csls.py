"""CSLS and S_weak / S_strong against brute-force loops written straight from the definitions."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.core.errors import UsageError
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

    def paper_score(i, c):
        # Eq. 3 with Eq. 2: every neighbourhood over U, a point of U counting itself.
        if criterion == "cosine":
            return cos(u[i], pool[c])
        return 2 * cos(u[i], pool[c]) - r_brute(u[i], u, k) - r_brute(pool[c], u, k)

    def pooled_score(i, c):
        if criterion == "cosine":
            return cos(u[i], pool[c])
        return (
            2 * cos(u[i], pool[c])
            - r_brute(u[i], pool, k, skip=i)
            - r_brute(pool[c], pool, k, skip=c)
        )

    weak = paper = pooled = union = 0
    for i in range(n):
        own = weak_score(i, i)
        weak += all(own > weak_score(i, j) for j in range(n) if j != i)
        own_p = paper_score(i, n + i)
        paper += all(own_p > paper_score(i, j) for j in range(n) if j != i)
        own_s = pooled_score(i, n + i)
        beats_u = all(own_s > pooled_score(i, j) for j in range(n) if j != i)
        beats_v = all(own_s > pooled_score(i, n + j) for j in range(n) if j != i)
        pooled += beats_u
        union += beats_u and beats_v
    return weak, paper, pooled, union


def authors_strong(src, tgt, k):
    """Transcription (numpy) of ``evaluate_alignment_with_cosim`` with ``strong_alignment=1.0``.

    Source: posos-tech/multilingual-alignment-and-transfer@3b5c83050d58c15a04d7225bdbb8d1abcbdb8601,
    ``multilingual_eval/retrieval.py`` (Gaschi et al. 2022). ``knn_sim`` is the mean of each
    target's ``k`` best cosines over the sources; ``knn_sim_x`` the same for each source over
    the sources themselves (its own similarity of 1 included); each row of the source-source
    matrix gets the pair's cosine on its diagonal, every column is lowered by half its
    ``knn_sim_x``, the diagonal by half the target's ``knn_sim`` instead, and a query counts
    when ``argmax`` (first maximal index) is its own row.
    """
    x = (src / np.linalg.norm(src, axis=1, keepdims=True)).astype(np.float32)
    y = (tgt / np.linalg.norm(tgt, axis=1, keepdims=True)).astype(np.float32)
    n = len(x)

    def topk_mean(m):
        return np.sort(m, axis=1)[:, ::-1][:, :k].mean(axis=1)

    knn_sim = topk_mean(y @ x.T)
    knn_sim_x = topk_mean(x @ x.T)
    batch = x @ x.T
    batch[range(n), range(n)] = (x * y).sum(axis=1)
    batch -= knn_sim_x[None, :] / 2
    batch[range(n), range(n)] += knn_sim_x / 2
    batch[range(n), range(n)] -= knn_sim / 2
    predictions = np.argmax(batch, axis=1)
    return int((predictions == np.arange(n)).sum())


def authors_weak(src, tgt, k):
    """The same transcription with ``strong_alignment=0.0`` (candidates are the targets)."""
    x = (src / np.linalg.norm(src, axis=1, keepdims=True)).astype(np.float32)
    y = (tgt / np.linalg.norm(tgt, axis=1, keepdims=True)).astype(np.float32)
    knn_sim = np.sort(y @ x.T, axis=1)[:, ::-1][:, :k].mean(axis=1)
    predictions = np.argmax(x @ y.T - knn_sim[None, :] / 2, axis=1)
    return int((predictions == np.arange(len(x))).sum())


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
    assert (got.weak, got.strong_paper, got.strong_pooled, got.strong_union) == brute_counts(
        u, v, criterion, 4
    )
    back = csls.retrieval_counts_pair(u, v, criterion, k=4, chunk=7)["tgt_src"]
    assert (back.weak, back.strong_paper, back.strong_pooled, back.strong_union) == brute_counts(
        v, u, criterion, 4
    )


def test_retrieval_counts_identity_and_permutation():
    u = np.random.default_rng(3).standard_normal((50, 8))
    got = csls.retrieval_counts(u, u)
    assert (got.weak, got.strong_paper, got.strong_pooled, got.strong_union) == (50, 50, 50, 50)
    assert csls.retrieval_counts(u, u[::-1].copy()).weak == 0


def test_strong_paper_differs_from_union():
    # Hand-computed cosines: cos(u0,v0)=.981 < cos(u0,v1)=.994, cos(u1,v1)=.110 < cos(u1,v0)=.196,
    # cos(u0,u1)=0. Each v_i beats the other u_j (paper-strong), but never the other v_j.
    u = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[1.0, 0.2], [0.9, 0.1]])
    got = csls.retrieval_counts(u, v, "cosine")
    assert (got.weak, got.strong_paper, got.strong_pooled, got.strong_union) == (0, 2, 2, 0)
    assert got.s_strong("paper") == 1.0 and got.s_strong("union") == 0.0


def test_retrieval_errors():
    u = np.zeros((3, 2))
    with pytest.raises(
        UsageError, match="Unknown retrieval criterion 'dot'; choose one of csls, cosine"
    ):
        csls.retrieval_counts(u, u, "dot")
    with pytest.raises(UsageError, match="same shape, got \\(3, 2\\) and \\(2, 2\\)"):
        csls.retrieval_counts(u, u[:2])
    with pytest.raises(UsageError, match="at least 2 pairs, got 1"):
        csls.retrieval_counts(u[:1], u[:1])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_paper_strong_equals_authors_function(seed):
    # Fixed vectors: noisy translations, plus a few duplicated rows so near-ties occur.
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((60, 12)).astype(np.float32)
    v = u + 0.9 * rng.standard_normal((60, 12)).astype(np.float32)
    for direction, (q, t) in {"src_tgt": (u, v), "tgt_src": (v, u)}.items():
        got = csls.retrieval_counts_pair(u, v, "csls", k=10, chunk=16, tie_rule="first")[direction]
        assert got.strong_paper == authors_strong(q, t, 10)
        assert got.weak == authors_weak(q, t, 10)


def test_paper_strong_differs_from_pooled_on_clustered_data():
    # The self-included U neighbourhood penalises every u_j by its own similarity of 1,
    # so the paper's S_strong is higher than the pooled variant on the same vectors.
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((8, 16))
    u = np.repeat(centres, 10, axis=0) + 0.6 * rng.standard_normal((80, 16))
    v = u + 0.8 * rng.standard_normal((80, 16))
    got = csls.retrieval_counts(u, v)
    assert got.strong_paper == authors_strong(u, v, 10)
    assert got.strong_paper != got.strong_pooled


def test_ties_strict_and_first_index():
    # Two identical sources: u_1 ties with u_0 for v_0 and v_1 (a duplicated vector).
    u = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    v = u.copy()
    strict = csls.retrieval_counts(u, v, "cosine")
    first = csls.retrieval_counts(u, v, "cosine", tie_rule="first")
    assert (strict.weak, strict.weak_ties) == (1, 2)
    # argmax keeps the first maximal index: row 0 wins its tie (competitor at 1), row 1 loses.
    assert (first.weak, first.weak_ties) == (2, 2)
    assert first.tie_rule == "first"
    with pytest.raises(UsageError, match="Unknown tie rule 'last'"):
        csls.retrieval_counts(u, v, tie_rule="last")


def test_shared_neighbourhoods_match_separate_computation():
    rng = np.random.default_rng(11)
    u, v = rng.standard_normal((30, 5)), rng.standard_normal((30, 5))
    nb = csls.csls_neighbourhoods(u, v, k=4, chunk=7)
    np.testing.assert_allclose(nb.u_in_v, csls.neighbourhood(u, v, 4), atol=1e-6)
    np.testing.assert_allclose(nb.v_in_u, csls.neighbourhood(v, u, 4), atol=1e-6)
    np.testing.assert_allclose(nb.u_in_u, csls.neighbourhood(u, u, 4), atol=1e-6)
    pool = csls.neighbourhood(np.concatenate([u, v]), np.concatenate([u, v]), 4, same=True)
    np.testing.assert_allclose(np.concatenate([nb.u_pool, nb.v_pool]), pool, atol=1e-6)
    with_nb = csls.retrieval_counts_pair(u, v, k=4, neighbourhoods=nb)
    assert with_nb == csls.retrieval_counts_pair(u, v, k=4)


def test_recomputed_blocks_equal_cached_blocks():
    # cache_bytes=0 recomputes every block (bounded memory); the counts must not change.
    rng = np.random.default_rng(12)
    u = rng.standard_normal((45, 6))
    v = u + rng.standard_normal((45, 6))
    cached = csls.retrieval_counts_pair(u, v, chunk=8)
    assert csls.retrieval_counts_pair(u, v, chunk=8, cache_bytes=0) == cached


def test_the_torch_similarity_backend_gives_the_numpy_counts():
    """The GPU path lives behind the compute adapter; run on CPU tensors it counts as numpy does."""
    torch = pytest.importorskip("torch")
    from evaluators.compute.knn import TorchSimilarity, similarity_backend

    assert similarity_backend("cpu") is csls.NUMPY
    rng = np.random.default_rng(3)
    u = rng.normal(size=(40, 8)).astype(np.float32)
    v = (u + 0.7 * rng.normal(size=u.shape)).astype(np.float32)
    on_torch = TorchSimilarity(torch, "cpu")
    for cache_bytes in (0, csls.DEFAULT_CACHE_BYTES):
        got = csls.retrieval_counts_pair(
            u, v, k=4, chunk=16, backend=on_torch, cache_bytes=cache_bytes
        )
        assert got == csls.retrieval_counts_pair(u, v, k=4, chunk=16, cache_bytes=cache_bytes)
    np.testing.assert_allclose(
        csls.neighbourhood(u, v, 4, backend=on_torch), csls.neighbourhood(u, v, 4), atol=1e-6
    )


@pytest.mark.parametrize("criterion", csls.CRITERIA)
@pytest.mark.parametrize("tie_rule", csls.TIE_RULES)
def test_csls_on_the_torch_backend_equals_numpy_under_exact_ties(criterion, tie_rule, torch_device):
    """The GPU backend asked for explicitly (CPU tensors, or CUDA): the same counts, ties included.

    Rows of +-1/4 in 16 dimensions have norm exactly 1 and products that are multiples of 1/16,
    exact on any device: ties are exact and no rounding can split them differently.
    """
    pytest.importorskip("torch")
    from evaluators.compute.knn import TorchSimilarity, similarity_backend

    rng = np.random.default_rng(8)
    u = (rng.choice([-0.25, 0.25], size=(60, 16))).astype(np.float32)
    v = u.copy()
    v[rng.random(v.shape) < 0.2] *= -1  # noisy translations
    v[10:14] = v[3]  # duplicated targets: exact ties for several queries
    u[20:23] = u[7]
    on_torch = similarity_backend(torch_device, backend="torch")
    assert isinstance(on_torch, TorchSimilarity)
    for cache_bytes in (0, csls.DEFAULT_CACHE_BYTES):
        got = csls.retrieval_counts_pair(
            u,
            v,
            criterion,
            k=4,
            backend=on_torch,
            chunk=16,
            tie_rule=tie_rule,
            cache_bytes=cache_bytes,
        )
        want = csls.retrieval_counts_pair(
            u, v, criterion, k=4, chunk=16, tie_rule=tie_rule, cache_bytes=cache_bytes
        )
        assert got == want
    np.testing.assert_array_equal(
        csls.neighbourhood(u, v, 4, backend=on_torch), csls.neighbourhood(u, v, 4)
    )


def test_counts_from_a_similarity_pool_equal_each_samples_own_ties_included():
    # Rows of four +-1 entries have norm 2: every cosine is a sum of +-0.25 terms, exact in any
    # summation order, so the pool's products equal the sample's bit for bit and so must the counts.
    rng = np.random.default_rng(3)
    n_pairs, dim = 300, 12

    def vectors():
        x = np.zeros((n_pairs, dim), np.float32)
        for row in x:
            row[rng.choice(dim, 4, replace=False)] = rng.choice([-1.0, 1.0], 4)
        return x

    u, v = vectors(), vectors()
    v[:200] = u[:200]
    # samples of most of the pool (neighbours from its lists) and of a third (many rows whose
    # lists run short of the sample's columns: partitioned from the sample's rows instead);
    # unsorted rows, so a sample's order is not the pool's
    samples = [rng.choice(n_pairs, size=size, replace=False) for size in (250, 250, 100)]
    ties = decided_by_rows = 0
    # depth 2: competitor lists too short to decide most rows (their full rows are read);
    # depth 40: the lists decide nearly every row
    for depth in (2, 40):
        pool = csls.SimilarityPool(u, v, chunk=64, depth=depth)
        for criterion in csls.CRITERIA:
            for tie_rule in csls.TIE_RULES:
                counted = pool.counts(samples, criterion, k=5, tie_rule=tie_rule)
                items = pool.weak_items(samples, criterion, k=5, tie_rule=tie_rule)
                for rows, got, got_items in zip(samples, counted, items):
                    own = csls.retrieval_counts_pair(
                        u[rows], v[rows], criterion, k=5, chunk=64, tie_rule=tie_rule
                    )
                    assert got == own
                    ties += sum(c.weak_ties for c in own.values())
                    for tag, (q, t) in (("src_tgt", (u, v)), ("tgt_src", (v, u))):
                        want = csls.weak_items(q[rows], t[rows], criterion, k=5, tie_rule=tie_rule)
                        for field in ("ok", "tied", "retrieved", "score"):
                            np.testing.assert_array_equal(
                                getattr(got_items[tag], field), getattr(want, field)
                            )
                        assert got_items[tag].ok.sum() == own[tag].weak
        # how many rows of the last sample the lists left to a full row, in the weak score
        cols, sims, floor = pool._lists["uv"]
        rows = samples[-1]
        on_pool = np.full(n_pairs, np.inf, np.float32)
        on_pool[rows] = 0.0  # cosine: no penalty
        best = (sims[rows] - on_pool[cols[rows]]).max(axis=1)
        decided_by_rows += int((~(best > floor[rows])).sum())
    assert ties > 0  # the data does tie
    assert decided_by_rows > 0  # and the full-row path ran


def test_a_pool_larger_than_its_samples_never_lets_a_pair_compete_with_itself():
    # Columns no sample holds have no bound, so a list deeper than a row's candidates is padded,
    # and the row's own column may be among the padding: it must not count as a competitor.
    rng = np.random.default_rng(0)
    u = rng.standard_normal((12, 4)).astype(np.float32)
    v = u + 0.3 * rng.standard_normal((12, 4)).astype(np.float32)
    pool = csls.SimilarityPool(u, v, depth=11)
    rows = np.arange(6)
    for criterion in csls.CRITERIA:
        got = pool.counts([rows], criterion, k=2)[0]
        assert got == csls.retrieval_counts_pair(u[rows], v[rows], criterion, k=2)
        assert got["src_tgt"].weak > 0


def test_a_refilled_pool_counts_as_a_fresh_one_in_the_same_matrices():
    # word retrieval refills one pool layer after layer: nothing of the previous layer may
    # survive (matrices, neighbour lists, competitor lists), and no new matrix is allocated.
    rng = np.random.default_rng(5)
    first = [rng.standard_normal((60, 8)).astype(np.float32) for _ in range(2)]
    second = [rng.standard_normal((60, 8)).astype(np.float32) for _ in range(2)]
    samples = [rng.choice(60, size=50, replace=False) for _ in range(3)]
    pool = csls.SimilarityPool(*first, depth=6)
    pool.counts(samples, "csls", k=3)  # fills its lists
    held = {name: id(m) for name, m in pool.full.items()}
    assert pool.refill(*second) is pool
    assert {name: id(m) for name, m in pool.full.items()} == held
    fresh = csls.SimilarityPool(*second, depth=6)
    for name in fresh.full:
        np.testing.assert_array_equal(pool.full[name], fresh.full[name])
    np.testing.assert_array_equal(pool.full["vu"], pool.full["uv"].T)
    for criterion in csls.CRITERIA:
        assert pool.counts(samples, criterion, k=3) == fresh.counts(samples, criterion, k=3)
    # another size: new matrices
    smaller = pool.refill(second[0][:40], second[1][:40])
    assert smaller.full["uu"].shape == (40, 40)
