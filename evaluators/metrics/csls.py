"""Cross-domain similarity local scaling (CSLS) and word-level retrieval scores.

CSLS (Conneau et al. 2018, "Word Translation Without Parallel Data", Eq. 6)::

    CSLS(x, y) = 2 cos(x, y) - r_T(x) - r_S(y)

where ``r_T(x)`` is the mean cosine of ``x`` with its ``k`` nearest neighbours
in the target set and ``r_S(y)`` the same for ``y`` in the source set.

Retrieval scores (Gaschi et al. 2022, Section III), queries ``U``, translations ``V``:
    * ``S_weak`` (Eq. 1): ``v_i`` is the nearest neighbour of ``u_i`` among all ``v_j``.
    * ``S_strong`` ``paper`` (Eq. 3 with Eq. 2's CSLS, as the authors compute it in
      ``multilingual_eval/retrieval.py``): ``v_i`` beats every other source word
      ``u_j``; each candidate's neighbourhood is taken over ``U``, so ``u_j``'s
      neighbourhood ``N_U^k(u_j)`` contains ``u_j`` itself (similarity 1).
    * ``S_strong`` ``pooled`` (xlbench's earlier reading): same competitors, but
      every neighbourhood is taken over the pool ``U ∪ V`` minus the point itself.
    * ``S_strong`` ``union``: ``v_i`` is the nearest neighbour of ``u_i`` among all
      of ``U ∪ V`` except ``u_i`` (pooled neighbourhoods; weak and pooled-strong together).

The query's own term ``r(u_i)`` is the same for every candidate of a row, so it
never changes which candidate wins and is left out (as in the authors' code).

Ties: under the default ``strict`` rule the translation must score strictly
higher than every competitor; the ``first`` rule is the authors' ``argmax``,
which returns the first maximal index (the translation sits at position ``i``,
so it wins ties against competitors ``j > i`` only). The tie counts are reported
under both rules.

Every neighbourhood a (layer, sample) needs, for both directions and for
S_weak and all S_strong variants, is computed once by :func:`csls_neighbourhoods`
(one pass over the row blocks of ``U·Uᵀ``, ``U·Vᵀ``, ``V·Uᵀ``, ``V·Vᵀ``) and
shared by :func:`retrieval_counts_pair`. Similarity matrices are computed in row
chunks (never ``n × n`` at once), in numpy, or on a GPU through a backend the caller passes
(:func:`evaluators.compute.knn.similarity_backend`; this module imports no model library).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy
import numpy as np

from evaluators.core.errors import UsageError
from evaluators.metrics.topk import top_per_row
from evaluators.metrics.vectors import normalize

#: Neighbourhood size of CSLS (Conneau et al. 2018 use k = 10; so do Gaschi et al.).
DEFAULT_K = 10
CRITERIA = ("csls", "cosine")
STRONG_MODES = ("paper", "pooled", "union")
#: ``strict``: a tie is a failure; ``first``: the authors' first-index ``argmax``.
TIE_RULES = ("strict", "first")
_CHUNK = 2048


class NumpySimilarity:
    """Matrix products and top-k in numpy: the metric's own backend, pure.

    A GPU backend with the same methods (``to``, ``np``, ``mm``, ``cat``, ``topk_mean``,
    ``topk_values``) comes from :func:`evaluators.compute.knn.similarity_backend`; a
    caller passes it as ``backend``, so this module imports no model library.
    """

    name = "numpy"

    def to(self, x: np.ndarray):
        """Put an array where the products run (here: as is)."""
        return x

    def np(self, x) -> np.ndarray:
        """Bring a block back as a numpy array."""
        return x

    def mm(self, a, b):
        """``a · bᵀ``."""
        return a @ b.T

    def cat(self, parts):
        """Stack row blocks."""
        return np.concatenate(parts)

    def topk_mean(self, sims, k: int):
        """Mean of the ``k`` largest values of each row (all of them when a row is shorter)."""
        k = min(k, sims.shape[1])
        if k <= 0:
            return np.zeros(sims.shape[0], dtype=np.float32)
        part = np.partition(sims, sims.shape[1] - k, axis=1)[:, sims.shape[1] - k :]
        return part.mean(axis=1)

    def topk_values(self, sims, k: int) -> numpy.ndarray:
        """The ``k`` largest values of each row, unordered, as a numpy ``(rows, k)`` array."""
        return np.partition(sims, sims.shape[1] - k, axis=1)[:, sims.shape[1] - k :]


#: The default backend of every function here.
NUMPY = NumpySimilarity()


def neighbourhood(
    queries: np.ndarray,
    base: np.ndarray,
    k: int = DEFAULT_K,
    same: bool = False,
    backend: Any = None,
    chunk: int = _CHUNK,
) -> np.ndarray:
    """Return ``r(q)``: the mean cosine of each query with its ``k`` nearest rows of ``base``.

    Args:
        queries: row vectors whose neighbourhoods are measured (normalised here).
        base: row vectors the neighbours are taken from (normalised here).
        k: neighbourhood size (fewer when ``base`` is smaller).
        same: ``queries`` and ``base`` are the same set: each query's own row is
            excluded from its neighbourhood.
        backend: where the similarity products run (``None``: numpy; a GPU one from
            :func:`evaluators.compute.knn.similarity_backend`).
        chunk: query rows per similarity block.

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> [round(float(r), 4) for r in neighbourhood(q, q, k=1, same=True)]
    [0.7071, 0.7071, 0.7071]
    """
    be = backend or NUMPY
    q, b = normalize(queries), normalize(base)
    if same and q.shape != b.shape:
        raise ValueError("same=True needs queries and base to be the same set")
    bt = be.to(b)
    out = np.empty(len(q), dtype=np.float32)
    for start in range(0, len(q), chunk):
        sims = be.mm(be.to(q[start : start + chunk]), bt)
        if same:
            rows = np.arange(sims.shape[0])
            sims[rows, rows + start] = -np.inf
            out[start : start + chunk] = be.topk_mean(sims, min(k, len(b) - 1))
        else:
            out[start : start + chunk] = be.topk_mean(sims, k)
    return out


def csls_matrix(
    x: np.ndarray, y: np.ndarray, k: int = DEFAULT_K, backend: Any = None
) -> np.ndarray:
    """Return the full ``CSLS(x_i, y_j)`` matrix (two distinct sets; small inputs only).

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> csls_matrix(x, x, k=1).tolist()
    [[0.0, -2.0], [-2.0, 0.0]]
    """
    xn, yn = normalize(x), normalize(y)
    r_x = neighbourhood(xn, yn, k, backend=backend)  # r_T(x): x's neighbourhood among the targets
    r_y = neighbourhood(yn, xn, k, backend=backend)  # r_S(y): y's neighbourhood among the sources
    return 2 * (xn @ yn.T) - r_x[:, None] - r_y[None, :]


#: Similarity blocks of one (layer, sample) are kept between the neighbourhood
#: pass and the scoring pass while ``U·Uᵀ``, ``U·Vᵀ`` and ``V·Vᵀ`` fit in this many
#: bytes (n = 5,000: 300 MB; 3 matrix products instead of 8). Above it (or with
#: ``cache_bytes=0``) every block is recomputed and memory stays at a few
#: ``chunk × n`` blocks whatever ``n`` is.
DEFAULT_CACHE_BYTES = 512 * 2**20


class _Similarities:
    """Row blocks of the four cosine matrices of ``U`` and ``V``, each computed once when they fit.

    What the counting functions read of a (layer, sample): :meth:`diag`, :meth:`topk` and
    :meth:`wins` (:class:`_PoolSample` answers the same three from a :class:`SimilarityPool`).
    """

    def __init__(
        self, un: np.ndarray, vn: np.ndarray, be: NumpySimilarity, chunk: int, cache_bytes: int
    ):
        self.be, self.chunk = be, chunk
        self.t = {"u": be.to(un), "v": be.to(vn)}
        self.full: dict[str, Any] = {}  # numpy arrays or torch tensors
        self._last: dict[str, tuple[int, int, np.ndarray]] = {}
        n, m = len(un), len(vn)
        if 4 * (n * n + n * m + m * m) <= cache_bytes:
            for name in ("uu", "uv", "vv"):
                a, b = self.t[name[0]], self.t[name[1]]
                self.full[name] = be.cat(
                    [be.mm(a[i : i + chunk], b) for i in range(0, len(a), chunk)]
                )

    def block(self, name: str, start: int, stop: int):
        """Rows ``start:stop`` of the ``name`` matrix (``uu``, ``uv``, ``vu``, ``vv``); read-only (may be a view)."""
        if name == "vu" and "uv" in self.full:
            return self.full["uv"][:, start:stop].T
        if name in self.full:
            return self.full[name][start:stop]
        return self.be.mm(self.t[name[0]][start:stop], self.t[name[1]])

    def _numpy_block(self, name: str, start: int, stop: int) -> np.ndarray:
        # the last block of each matrix is kept: the scores read each block twice, and a
        # block that is not kept would otherwise be multiplied twice
        last = self._last.get(name)
        if last is None or last[:2] != (start, stop):
            blk = self.be.np(self.block(name, start, stop)).astype(np.float32, copy=False)
            self._last.pop(name, None)
            if len(self._last) >= 2:  # at most two blocks held, as the scores read them
                del self._last[next(iter(self._last))]
            self._last[name] = last = (start, stop, blk)
        return last[2]

    def diag(self, name: str, start: int, stop: int) -> np.ndarray:
        """The similarity of each row ``start:stop`` with its own column (float32)."""
        rows = np.arange(stop - start)
        last = self._last.get(name)
        if self.be is NUMPY or (last is not None and last[:2] == (start, stop)):
            # on numpy the block is kept for the scores that read it next
            return self._numpy_block(name, start, stop)[rows, rows + start]
        # elsewhere only the diagonal comes back to the host
        return self.be.np(self.block(name, start, stop)[rows, rows + start]).astype(np.float32)

    def topk(self, name: str, start: int, stop: int, k: int) -> np.ndarray:
        """The ``k`` largest values of rows ``start:stop`` of the ``name`` matrix, unordered (numpy)."""
        return self.be.topk_values(self.block(name, start, stop), k)

    def wins(
        self,
        name: str,
        start: int,
        stop: int,
        pen: np.ndarray,
        own: np.ndarray,
        tie_rule: str,
        argmax: bool = False,
    ):
        """``(ok, tied, best, retrieved)`` of rows ``start:stop``: ``own`` against ``sim - pen`` off the own column.

        ``retrieved`` (with ``argmax``) is the winning column: the own one when ``ok``,
        else the first best competitor.
        """
        rows = np.arange(stop - start)
        diag = rows + start
        m = self._numpy_block(name, start, stop) - pen[None, :]
        m[rows, diag] = -np.inf
        ok, tied, best = _wins(own, m, diag, tie_rule)
        return ok, tied, best, (np.where(ok, diag, m.argmax(axis=1)) if argmax else None)


def _transpose(a: np.ndarray, out: np.ndarray, tile: int = 256) -> None:
    """Write ``a.T`` into ``out`` tile by tile.

    Both sides of a tile stay in cache, where one strided pass over a large matrix misses the
    cache on nearly every read.

    >>> a = np.arange(12.0).reshape(3, 4); out = np.empty((4, 3))
    >>> _transpose(a, out, tile=2); bool((out == a.T).all())
    True
    """
    rows, cols = a.shape
    for i in range(0, rows, tile):
        for j in range(0, cols, tile):
            out[j : j + tile, i : i + tile] = a[i : i + tile, j : j + tile].T


class SimilarityPool:
    """The cosine matrices of every pair that some sample of a run draws, computed once (numpy).

    Word retrieval scores several samples of ``n`` pairs drawn from a few more pairs (10
    samples of 4,000 out of 4,114 share nearly every row). The pool multiplies ``U·Uᵀ``,
    ``U·Vᵀ`` and ``V·Vᵀ`` once, and each sample is then counted from lists of each pool
    row's largest values instead of passes over its own ``n × n`` matrices:

    * a row's CSLS neighbours: its ``2k + 10`` largest similarities, walked in order and kept
      while their column is in the sample (the first ``k`` kept are the sample's ``k``
      largest);
    * a row's best competitor: the largest ``cos - r/2`` among its ``depth`` largest values
      of ``cos - b/2``, where ``b`` is the least neighbourhood term a column gets in any
      sample (:meth:`prepare`). A column off the list scores at most the list's last value
      (subtraction rounds monotonically), so a listed best above it is the row's best, ties
      included.

    A row whose list cannot decide (too few of the sample's columns, or a best not above the
    list's last value) is computed from its full row, as without a pool. The counts are those
    of :func:`retrieval_counts_pair` on the sample's own vectors, except that a product of a
    row pair can differ from the sample's own in the last bit (BLAS sums tiles of other
    sizes), like any other BLAS or thread count would.

    Args:
        u: ``(N, dim)`` vectors of every pair any sample draws (normalised here).
        v: ``(N, dim)`` their translations.
        chunk: rows per matrix product and per list.
        depth: values per row in the competitor lists.
    """

    def __init__(self, u: np.ndarray, v: np.ndarray, chunk: int = _CHUNK, depth: int = 32):
        self.chunk, self.depth = chunk, depth
        self.full: dict[str, np.ndarray] = {}
        self.refill(u, v)

    def refill(self, u: np.ndarray, v: np.ndarray) -> SimilarityPool:
        """Make this the pool of other vectors (another layer's), writing over its matrices.

        A pool of the same size reuses its four matrices (68 MB each at 4,114 pairs): fresh
        ones would be fresh pages, zeroed by the kernel, on every layer. What the pool held
        before (its matrices and lists) is gone.
        """
        self.un, self.vn = normalize(u), normalize(v)
        n = len(self.un)
        if "vu" not in self.full or self.full["vu"].shape != (n, n):
            self.full = {name: np.empty((n, n), np.float32) for name in ("uu", "uv", "vv", "vu")}
        pairs = {"uu": (self.un, self.un), "uv": (self.un, self.vn), "vv": (self.vn, self.vn)}
        for name, (a, b) in pairs.items():
            # written in place: a concatenation of row blocks would copy the matrix once more
            out = self.full[name]
            for i in range(0, len(a), self.chunk):
                np.matmul(a[i : i + self.chunk], b.T, out=out[i : i + self.chunk])
        # rows of V·Uᵀ are read as often as those of U·Vᵀ: a contiguous copy, not a strided view
        _transpose(self.full["uv"], self.full["vu"])
        self._neighbour_lists: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        self._lists: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # by :meth:`prepare`
        return self

    def __len__(self) -> int:
        return len(self.un)

    def _top_lists(self, name: str, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """Each pool row's ``depth`` largest values of ``name`` and their columns, largest first (ties by column)."""
        if (name, depth) not in self._neighbour_lists:
            self._neighbour_lists[name, depth] = top_per_row(self.full[name], depth)
        return self._neighbour_lists[name, depth]

    def prepare(self, samples: list[np.ndarray], nbs: list[Neighbourhoods]) -> None:
        """Build each matrix's competitor lists for these samples and their neighbourhoods.

        A column's bound is the least penalty it gets as a candidate of that matrix, in any
        score and any sample that holds it (columns no sample holds are never competitors):
        one list per matrix serves every score that reads it.
        """
        low = {name: np.full(len(self), np.inf, np.float32) for name in self.full}
        for table in _PENALTIES.values():
            for name, attr in table.values():
                for rows, nb in zip(samples, nbs):
                    np.minimum.at(low[name], rows, _half(getattr(nb, attr)))
        self._lists = {name: self._competitor_lists(name, low[name]) for name in self.full}

    def _competitor_lists(self, name: str, low: np.ndarray):
        """Per row: the ``depth`` columns of largest ``sim - low`` (own column out), their ``sim``, and the last ``sim - low``."""
        m = self.full[name]
        n = len(m)
        depth = min(self.depth, n - 1)
        cols = np.empty((n, depth), np.int64)
        for start in range(0, n, self.chunk):
            stop = min(n, start + self.chunk)
            w = m[start:stop] - low[None, :]
            w[np.arange(stop - start), np.arange(start, stop)] = -np.inf
            cols[start:stop] = top_per_row(w, depth)[1]
        sims = np.take_along_axis(m, cols, axis=1)
        floor = (sims - low[cols]).min(axis=1)
        return cols, sims, floor

    @staticmethod
    def fits(rows: int, samples: int, n: int, cache_bytes: int = DEFAULT_CACHE_BYTES) -> bool:
        """Whether a pool of ``rows`` pairs saves work for ``samples`` samples of ``n`` and fits ``cache_bytes``.

        >>> SimilarityPool.fits(4114, 10, 4000), SimilarityPool.fits(32000, 10, 5000)
        (True, False)
        """
        return 16 * rows * rows <= cache_bytes and rows * rows < samples * n * n

    def counts(
        self,
        samples: list[np.ndarray],
        criterion: str = "csls",
        k: int = DEFAULT_K,
        tie_rule: str = "strict",
    ) -> list[dict[str, RetrievalCounts]]:
        """:func:`retrieval_counts_pair` of each sample (pool rows ``samples[i]``), both directions."""
        return self._each(_direction, samples, criterion, k, tie_rule)

    def weak_items(
        self,
        samples: list[np.ndarray],
        criterion: str = "csls",
        k: int = DEFAULT_K,
        tie_rule: str = "strict",
    ) -> list[dict[str, WeakItems]]:
        """:func:`weak_items` of each sample, ``src_tgt`` (queries ``U``) and ``tgt_src``."""
        return self._each(_weak_items, samples, criterion, k, tie_rule)

    def _each(self, score, samples, criterion: str, k: int, tie_rule: str) -> list[dict[str, Any]]:
        """``score(view, direction, n, neighbourhoods, tie_rule)`` of each sample, both directions."""
        for rows in samples:
            _check(self.un[rows], self.vn[rows], criterion, tie_rule)
        views = [_PoolSample(self, np.asarray(rows)) for rows in samples]
        nbs = [
            _neighbourhoods(view, len(view.rows), len(view.rows), k)
            if criterion == "csls"
            else _no_neighbourhoods(len(view.rows))
            for view in views
        ]
        self.prepare([view.rows for view in views], nbs)
        return [
            {d: score(view, d, len(view.rows), nb, tie_rule) for d in _PENALTIES}
            for view, nb in zip(views, nbs)
        ]


class _PoolSample:
    """One sample of a :class:`SimilarityPool`, read as :class:`_Similarities` is (one block: all its rows)."""

    def __init__(self, pool: SimilarityPool, rows: np.ndarray):
        self.pool, self.rows, self.chunk = pool, rows, len(rows)
        self.position = np.full(len(pool), -1, np.int64)
        self.position[rows] = np.arange(len(rows))

    def diag(self, name: str, start: int, stop: int) -> np.ndarray:
        part = self.rows[start:stop]
        return self.pool.full[name][part, part]

    def topk(self, name: str, start: int, stop: int, k: int) -> np.ndarray:
        """The ``k`` largest values of rows ``start:stop`` of ``name`` among the sample's columns.

        Taken from each pool row's largest values, walked in order and kept while their column
        is in the sample: the first ``k`` kept are the sample's ``k`` largest (equal values are
        interchangeable). A row whose list holds fewer than ``k`` of the sample's columns is
        partitioned from its full row in the sample, as without a pool.
        """
        vals, cols = self.pool._top_lists(name, min(len(self.pool), 2 * k + 10))
        part = self.rows[start:stop]
        kept = self.position[cols[part]] >= 0
        rank = np.cumsum(kept, axis=1)
        take = kept & (rank <= k)
        short = rank[:, -1] < k
        out = np.empty((len(part), k), np.float32)
        # exactly k kept per row that is not short; boolean indexing reads them row by row
        out[~short] = vals[part[~short]][take[~short]].reshape(-1, k)
        if short.any():
            out[short] = NUMPY.topk_values(self.pool.full[name][np.ix_(part[short], self.rows)], k)
        return out

    def wins(
        self,
        name: str,
        start: int,
        stop: int,
        pen: np.ndarray,
        own: np.ndarray,
        tie_rule: str,
        argmax: bool = False,
    ):
        cols, sims, floor = self.pool._lists[name]
        part = self.rows[start:stop]
        diag = np.arange(start, stop)
        on_pool = np.full(len(self.pool), np.inf, np.float32)
        on_pool[self.rows] = pen
        listed = cols[part]
        # the sample's scores of the listed columns (-inf off the sample and on the own column,
        # which a list holds only as filler, when its row has fewer candidates than the list)
        cand = sims[part] - on_pool[listed]
        cand[listed == part[:, None]] = -np.inf
        best = cand.max(axis=1)
        at = self.position[listed]
        before = ((cand >= own[:, None]) & (at < diag[:, None])).any(axis=1)
        first = np.where(cand == best[:, None], at, len(self.rows)).min(axis=1)
        # rows the list cannot decide: their full row in the sample
        full = np.flatnonzero(~(best > floor[part]))
        if full.size:
            m = self.pool.full[name][np.ix_(part[full], self.rows)] - pen[None, :]
            m[np.arange(len(full)), diag[full]] = -np.inf
            best[full] = m.max(axis=1)
            before[full] = (
                (m >= own[full, None]) & (np.arange(len(self.rows))[None, :] < diag[full, None])
            ).any(axis=1)
            first[full] = m.argmax(axis=1)
        ok = own > best
        tied = own == best
        if tie_rule == "first":
            ok |= tied & ~before
        return ok, tied, best, (np.where(ok, diag, first) if argmax else None)


@dataclass(frozen=True)
class Neighbourhoods:
    """CSLS neighbourhood means of one (layer, sample), shared by both directions and all scores.

    Each array has one value per point (``n`` floats). ``r_X(p)`` is the mean
    cosine of ``p`` with its ``k`` nearest points of set ``X``.

    Attributes:
        k: neighbourhood size asked for.
        u_in_u: ``r_U(u)`` with ``u`` itself among its neighbours (the authors' strong term).
        u_in_v: ``r_V(u)`` (weak penalty of ``u`` as a candidate for queries from ``V``).
        v_in_u: ``r_U(v)`` (weak penalty of ``v`` as a candidate for queries from ``U``).
        v_in_v: ``r_V(v)`` with ``v`` itself among its neighbours.
        u_pool: ``r_{U ∪ V minus u}(u)`` (pooled variants).
        v_pool: ``r_{U ∪ V minus v}(v)``.
    """

    k: int
    u_in_u: np.ndarray
    u_in_v: np.ndarray
    v_in_u: np.ndarray
    v_in_v: np.ndarray
    u_pool: np.ndarray
    v_pool: np.ndarray

    def swapped(self) -> Neighbourhoods:
        """The same neighbourhoods with the roles of ``U`` and ``V`` exchanged."""
        return Neighbourhoods(
            self.k, self.v_in_v, self.v_in_u, self.u_in_v, self.u_in_u, self.v_pool, self.u_pool
        )


def _mean_topk(values: np.ndarray, k: int) -> np.ndarray:
    """Mean of the ``k`` largest entries of each row of a small ``(rows, m)`` array."""
    m = values.shape[1]
    return (
        np.partition(values, m - k, axis=1)[:, m - k :]
        .mean(axis=1, dtype=np.float64)
        .astype(np.float32)
    )


def csls_neighbourhoods(
    u: np.ndarray,
    v: np.ndarray,
    k: int = DEFAULT_K,
    backend: Any = None,
    chunk: int = _CHUNK,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
) -> Neighbourhoods:
    """Compute every CSLS neighbourhood of ``U`` and ``V`` in one blocked pass.

    For each row block the similarities to ``U`` and to ``V`` are computed
    once; the top-``k`` of the same-set block (self excluded) and of the
    other-set block give all six neighbourhood terms (self-included,
    other-set and pooled) by merging ``k``-value lists.

    Args:
        u: ``(n, dim)`` vectors (normalised here).
        v: ``(m, dim)`` vectors (normalised here).
        k: neighbourhood size (fewer where a set is smaller).
        backend: where the similarity products run (``None``: numpy; a GPU one from
            :func:`evaluators.compute.knn.similarity_backend`).
        chunk: rows per similarity block.
        cache_bytes: keep the similarity matrices when they fit in this many bytes.

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> nb = csls_neighbourhoods(x, x, k=1)
    >>> nb.u_in_u.tolist(), nb.u_in_v.tolist(), nb.u_pool.tolist()
    ([1.0, 1.0], [1.0, 1.0], [1.0, 1.0])
    """
    be = backend or NUMPY
    sims = _Similarities(normalize(u), normalize(v), be, chunk, cache_bytes)
    return _neighbourhoods(sims, len(u), len(v), k)


def _neighbourhoods(
    sims: _Similarities | _PoolSample, n_u: int, n_v: int, k: int
) -> Neighbourhoods:
    chunk = sims.chunk

    def side(q: str, o: str, n_same: int, n_other: int):
        k_same, k_other = min(k, n_same - 1), min(k, n_other)
        k_self, k_pool = min(k, n_same), min(k, n_same - 1 + n_other)
        r_self = np.empty(n_same, np.float32)
        r_other = np.empty(n_same, np.float32)
        r_pool = np.empty(n_same, np.float32)
        for start in range(0, n_same, chunk):
            stop = min(n_same, start + chunk)
            rows = np.arange(stop - start)
            own = sims.diag(q + q, start, stop).astype(np.float32).reshape(-1, 1)
            # Top k+1 with the point itself, then one occurrence of its own value taken out
            # (equal values are interchangeable, so this is the top k without it); the
            # block is never written, so a kept block needs no copy.
            top = sims.topk(q + q, start, stop, k_same + 1).astype(np.float32)
            hit = top == own
            drop = np.where(hit.any(axis=1), hit.argmax(axis=1), top.argmin(axis=1))
            keep = np.ones(top.shape, bool)
            keep[rows, drop] = False
            top_same = top[keep].reshape(len(rows), k_same)
            top_other = sims.topk(q + o, start, stop, k_other).astype(np.float32)
            r_self[start:stop] = _mean_topk(np.concatenate([own, top_same], axis=1), k_self)
            r_other[start:stop] = top_other.mean(axis=1, dtype=np.float64)
            r_pool[start:stop] = _mean_topk(np.concatenate([top_same, top_other], axis=1), k_pool)
        return r_self, r_other, r_pool

    u_in_u, u_in_v, u_pool = side("u", "v", n_u, n_v)
    v_in_v, v_in_u, v_pool = side("v", "u", n_v, n_u)
    return Neighbourhoods(k, u_in_u, u_in_v, v_in_u, v_in_v, u_pool, v_pool)


@dataclass(frozen=True)
class RetrievalCounts:
    """Raw counts of one retrieval direction (queries ``U``, translations ``V``).

    Attributes:
        n: number of pairs.
        weak: queries whose nearest ``V`` is their translation.
        strong_paper: queries whose translation beats every other ``U`` (Eq. 3, ``U`` neighbourhoods, self included).
        strong_union: queries whose translation is nearest among ``U ∪ V`` minus themselves (pooled neighbourhoods).
        strong_pooled: as ``strong_paper`` but with neighbourhoods over ``U ∪ V`` minus the point itself.
        weak_ties: queries whose translation ties the best competitor (counted as failures under ``strict``).
        strong_paper_ties: the same for ``strong_paper``.
        strong_pooled_ties: the same for ``strong_pooled``.
        strong_union_ties: the same for ``strong_union``.
        tie_rule: ``strict`` (a tie fails) or ``first`` (the authors' first-index ``argmax``).
    """

    n: int
    weak: int
    strong_paper: int
    strong_union: int
    strong_pooled: int = 0
    weak_ties: int = 0
    strong_paper_ties: int = 0
    strong_pooled_ties: int = 0
    strong_union_ties: int = 0
    tie_rule: str = "strict"

    @property
    def s_weak(self) -> float:
        """``weak / n``."""
        return self.weak / self.n if self.n else float("nan")

    def s_strong(self, mode: str = "paper") -> float:
        """``strong_<mode> / n`` for ``mode`` in :data:`STRONG_MODES`.

        Raises:
            UsageError: unknown mode.
        """
        if mode not in STRONG_MODES:
            raise UsageError(
                f"Unknown S_strong mode {mode!r}; choose one of {', '.join(STRONG_MODES)}."
            )
        return getattr(self, f"strong_{mode}") / self.n if self.n else float("nan")


def _wins(own: np.ndarray, comp: np.ndarray, diag: np.ndarray, tie_rule: str):
    """Return ``(ok, tied, best)`` per row: the own score against the competitors ``comp`` (own column masked).

    ``diag`` gives each row's own index; under ``first`` a tie counts as a win
    when every tied competitor sits after the own index (first-index argmax).
    """
    best = comp.max(axis=1)
    tied = own == best
    ok = own > best
    if tie_rule == "first" and tied.any():
        for r in np.flatnonzero(tied):
            ok[r] = not (comp[r, : diag[r]] >= own[r]).any()
    return ok, tied, best


#: Per direction, the competitors each score counts against: ``(matrix, neighbourhood)``, the
#: candidates' similarities to the query and the :class:`Neighbourhoods` field whose half is
#: each candidate's penalty. The query's own translation pays the ``weak`` penalty under
#: ``weak`` and ``paper``, the ``union`` one under ``pooled`` and ``union``.
_PENALTIES = {
    "src_tgt": {
        "weak": ("uv", "v_in_u"),
        "paper": ("uu", "u_in_u"),
        "pooled": ("uu", "u_pool"),
        "union": ("uv", "v_pool"),
    },
    "tgt_src": {
        "weak": ("vu", "u_in_v"),
        "paper": ("vv", "v_in_v"),
        "pooled": ("vv", "v_pool"),
        "union": ("vu", "u_pool"),
    },
}


def _half(r) -> np.ndarray:
    """``r / 2`` in float32 (exact)."""
    return (np.asarray(r, np.float32) * np.float32(0.5)).astype(np.float32)


def _no_neighbourhoods(n: int) -> Neighbourhoods:
    """Zero penalties: the cosine criterion."""
    zero = np.zeros(n, np.float32)
    return Neighbourhoods(0, zero, zero, zero, zero, zero, zero)


def _direction(
    sims: _Similarities | _PoolSample, direction: str, n: int, nb: Neighbourhoods, tie_rule: str
) -> RetrievalCounts:
    """Count one direction (``src_tgt``: queries ``u``) from the neighbourhood terms ``nb``.

    Scores are kept at half scale, ``cos - r/2`` (as the authors compute them):
    halving is exact in floating point, so the winners are those of ``2 cos - r``.
    """
    table = _PENALTIES[direction]
    h = {score: _half(getattr(nb, attr)) for score, (_, attr) in table.items()}
    c = dict.fromkeys(
        ("weak", "paper", "pooled", "union", "t_weak", "t_paper", "t_pooled", "t_union"), 0
    )
    for start in range(0, n, sims.chunk):
        stop = min(n, start + sims.chunk)
        diag = np.arange(start, stop)
        own_cos = sims.diag(table["weak"][0], start, stop)
        own = own_cos - h["weak"][diag]
        own_pool = own_cos - h["union"][diag]

        def score(name, own, sims=sims, start=start, stop=stop):
            return sims.wins(table[name][0], start, stop, h[name], own, tie_rule)[:3]

        # Weak: candidates t_j, penalty r_Q(t_j).
        ok, tied, _ = score("weak", own)
        c["weak"] += int(ok.sum())
        c["t_weak"] += int(tied.sum())
        # Paper strong: candidates q_j with self-included r_Q(q_j); own penalty r_Q(t_i).
        ok, tied, _ = score("paper", own)
        c["paper"] += int(ok.sum())
        c["t_paper"] += int(tied.sum())
        # Pooled strong and union: neighbourhoods over U ∪ V minus the point itself.
        ok_pool, tied_pool, best_q = score("pooled", own_pool)
        c["pooled"] += int(ok_pool.sum())
        c["t_pooled"] += int(tied_pool.sum())
        ok_t, _, best_t = score("union", own_pool)
        c["union"] += int((ok_pool & ok_t).sum())
        c["t_union"] += int((own_pool == np.maximum(best_q, best_t)).sum())
    return RetrievalCounts(
        n,
        c["weak"],
        c["paper"],
        c["union"],
        c["pooled"],
        c["t_weak"],
        c["t_paper"],
        c["t_pooled"],
        c["t_union"],
        tie_rule,
    )


def _check(u: np.ndarray, v: np.ndarray, criterion: str, tie_rule: str) -> None:
    if criterion not in CRITERIA:
        raise UsageError(
            f"Unknown retrieval criterion {criterion!r}; choose one of {', '.join(CRITERIA)}."
        )
    if tie_rule not in TIE_RULES:
        raise UsageError(f"Unknown tie rule {tie_rule!r}; choose one of {', '.join(TIE_RULES)}.")
    if u.shape != v.shape or u.ndim != 2:
        raise UsageError(
            f"Retrieval needs two (n, dim) arrays of the same shape, got {u.shape} and {v.shape}."
        )
    if len(u) < 2:
        raise UsageError(f"Retrieval needs at least 2 pairs, got {len(u)}.")


def retrieval_counts_pair(
    u: np.ndarray,
    v: np.ndarray,
    criterion: str = "csls",
    k: int = DEFAULT_K,
    backend: Any = None,
    chunk: int = _CHUNK,
    tie_rule: str = "strict",
    neighbourhoods: Neighbourhoods | None = None,
    directions: tuple[str, ...] = ("src_tgt", "tgt_src"),
    cache_bytes: int = DEFAULT_CACHE_BYTES,
) -> dict[str, RetrievalCounts]:
    """Score retrieval in both directions of one (layer, sample), sharing every neighbourhood.

    Args:
        u: ``(n, dim)`` source vectors.
        v: ``(n, dim)`` vectors; row ``i`` of ``v`` translates row ``i`` of ``u``.
        criterion: ``csls`` or ``cosine``.
        k: CSLS neighbourhood size.
        backend: where the similarity products run (``None``: numpy; a GPU one from
            :func:`evaluators.compute.knn.similarity_backend`).
        chunk: query rows per similarity block.
        tie_rule: ``strict`` or ``first`` (see :data:`TIE_RULES`).
        neighbourhoods: precomputed :func:`csls_neighbourhoods` of ``(u, v, k)``.
        directions: which of ``src_tgt`` (queries ``u``) and ``tgt_src`` to count.
        cache_bytes: keep the similarity matrices between the neighbourhood and
            scoring passes when they fit in this many bytes (0: recompute blocks).

    Returns:
        ``{"src_tgt": counts, "tgt_src": counts}`` (the directions asked for).

    >>> u = np.eye(3)
    >>> retrieval_counts_pair(u, u[[1, 2, 0]], "cosine")["src_tgt"].weak
    0

    Raises:
        UsageError: unknown criterion or tie rule, or mismatched shapes.
    """
    _check(u, v, criterion, tie_rule)
    sims = _Similarities(normalize(u), normalize(v), backend or NUMPY, chunk, cache_bytes)
    if criterion == "csls":
        nb = neighbourhoods or _neighbourhoods(sims, len(u), len(v), k)
    else:
        nb = _no_neighbourhoods(len(u))
    return {d: _direction(sims, d, len(u), nb, tie_rule) for d in directions}


def retrieval_counts(
    u: np.ndarray,
    v: np.ndarray,
    criterion: str = "csls",
    k: int = DEFAULT_K,
    backend: Any = None,
    chunk: int = _CHUNK,
    tie_rule: str = "strict",
) -> RetrievalCounts:
    """Score retrieval of ``v_i`` from ``u_i`` (one direction; :func:`retrieval_counts_pair` does both at once).

    Args:
        u: ``(n, dim)`` query vectors.
        v: ``(n, dim)`` vectors; row ``i`` of ``v`` translates row ``i`` of ``u``.
        criterion: ``csls`` or ``cosine``.
        k: CSLS neighbourhood size.
        backend: where the similarity products run (``None``: numpy; a GPU one from
            :func:`evaluators.compute.knn.similarity_backend`).
        chunk: query rows per similarity block.
        tie_rule: ``strict`` or ``first``.

    >>> u = np.eye(3)
    >>> c = retrieval_counts(u, u, "cosine")
    >>> (c.weak, c.strong_paper, c.strong_pooled, c.strong_union)
    (3, 3, 3, 3)
    >>> retrieval_counts(u, u[[1, 2, 0]], "cosine").weak
    0

    Raises:
        UsageError: unknown criterion or tie rule, or mismatched shapes.
    """
    return retrieval_counts_pair(
        u, v, criterion, k, backend, chunk, tie_rule, directions=("src_tgt",)
    )["src_tgt"]


@dataclass(frozen=True)
class WeakItems:
    """Per-query S_weak outcomes of :func:`retrieval_counts` (``ok.sum()`` equals its ``weak``).

    Attributes:
        ok: the query's translation won.
        tied: the translation tied the best competitor.
        retrieved: index of the winning candidate (the query's own index when ``ok``).
        score: the criterion's value of the winning candidate (``2 cos - r``, the query's own term left out).
    """

    ok: np.ndarray
    tied: np.ndarray
    retrieved: np.ndarray
    score: np.ndarray


def weak_items(
    u: np.ndarray,
    v: np.ndarray,
    criterion: str = "csls",
    k: int = DEFAULT_K,
    backend: Any = None,
    chunk: int = _CHUNK,
    tie_rule: str = "strict",
) -> WeakItems:
    """Return the per-query outcomes behind ``retrieval_counts(u, v, ...).weak`` (same blocks, same decisions).

    >>> u = np.eye(3)
    >>> w = weak_items(u, u[[1, 2, 0]], "cosine")
    >>> (w.ok.tolist(), w.retrieved.tolist())
    ([False, False, False], [2, 0, 1])

    Raises:
        UsageError: unknown criterion or tie rule, or mismatched shapes.
    """
    _check(u, v, criterion, tie_rule)
    sims = _Similarities(normalize(u), normalize(v), backend or NUMPY, chunk, DEFAULT_CACHE_BYTES)
    n = len(u)
    nb = _neighbourhoods(sims, n, len(v), k) if criterion == "csls" else _no_neighbourhoods(n)
    return _weak_items(sims, "src_tgt", n, nb, tie_rule)


def _weak_items(
    sims: _Similarities | _PoolSample, direction: str, n: int, nb: Neighbourhoods, tie_rule: str
) -> WeakItems:
    """The weak score of :func:`_direction`, row by row, with each row's winning candidate."""
    matrix, attr = _PENALTIES[direction]["weak"]
    h = _half(getattr(nb, attr))
    ok_all, tied_all = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    retrieved, score = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.float64)
    for start in range(0, n, sims.chunk):
        stop = min(n, start + sims.chunk)
        own = sims.diag(matrix, start, stop) - h[start:stop]
        ok, tied, best, got = sims.wins(matrix, start, stop, h, own, tie_rule, argmax=True)
        ok_all[start:stop], tied_all[start:stop], retrieved[start:stop] = ok, tied, got
        score[start:stop] = 2.0 * np.where(ok, own, best).astype(np.float64)
    return WeakItems(ok_all, tied_all, retrieved, score)
