"""Cross-domain similarity local scaling (CSLS) and word-level retrieval scores.

CSLS (Conneau et al. 2018, "Word Translation Without Parallel Data", Eq. 6)::

    CSLS(x, y) = 2 cos(x, y) - r_T(x) - r_S(y)

where ``r_T(x)`` is the mean cosine of ``x`` with its ``k`` nearest neighbours
in the target set and ``r_S(y)`` the same for ``y`` in the source set. When a
point's neighbourhood is taken in the set it belongs to (the strong criteria
below compare ``u_i`` with other source words), the point itself is excluded
from its own neighbourhood; otherwise every point would count its
self-similarity of 1.

Retrieval scores (Gaschi et al. 2022, Section III):
    * ``S_weak``: ``v_i`` is the nearest neighbour of ``u_i`` among all ``v_j``.
    * ``S_strong`` (paper, Eq. 3): ``v_i`` is nearer to ``u_i`` than every
      other source word ``u_j`` (``j != i``).
    * ``S_strong`` (union): ``v_i`` is the nearest neighbour of ``u_i`` among
      all of ``U`` and ``V`` except ``u_i`` itself (weak and paper-strong together).

For the weak score, queries ``U`` and candidates ``V`` are two sets and CSLS is
the usual two-sided formula (``r_V(u)``, ``r_U(v)``). For the strong scores,
queries and candidates come from one pool ``U ∪ V``, so every point's
neighbourhood is the pool minus the point itself: a perfect model (``v_i = u_i``)
then scores 1, since ``v_i`` and ``u_j`` both count their own translation among
their neighbours. A tie is a failure: the translation must score strictly higher.

Everything is vectorised: similarity matrices are computed in row chunks,
with torch on a GPU when one is present, numpy otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluators.errors import UsageError
from evaluators.metrics.vectors import normalize

#: Neighbourhood size of CSLS (Conneau et al. 2018 use k = 10; so do Gaschi et al.).
DEFAULT_K = 10
CRITERIA = ("csls", "cosine")
STRONG_MODES = ("paper", "union")
_CHUNK = 2048


class _Backend:
    """Matrix products and top-k on torch/CUDA when available, numpy otherwise."""

    def __init__(self, device: str | None = None):
        self.torch = None
        if device != "cpu":
            try:
                import torch

                if torch.cuda.is_available() and (device is None or device.startswith("cuda")):
                    self.torch = torch
                    self.device = device or "cuda"
            except ImportError:
                pass

    def to(self, x: np.ndarray):
        return self.torch.from_numpy(x).to(self.device) if self.torch else x

    def np(self, x) -> np.ndarray:
        return x.float().cpu().numpy() if self.torch else x

    def mm(self, a, b):
        return a @ b.T

    def topk_mean(self, sims, k: int):
        """Mean of the ``k`` largest values of each row (all of them when a row is shorter)."""
        k = min(k, sims.shape[1])
        if k <= 0:
            return np.zeros(sims.shape[0], dtype=np.float32)
        if self.torch:
            return self.np(self.torch.topk(sims, k, dim=1).values.mean(dim=1))
        part = np.partition(sims, sims.shape[1] - k, axis=1)[:, sims.shape[1] - k :]
        return part.mean(axis=1)


def neighbourhood(queries: np.ndarray, base: np.ndarray, k: int = DEFAULT_K, same: bool = False,
                  device: str | None = None, chunk: int = _CHUNK) -> np.ndarray:
    """Return ``r(q)``: the mean cosine of each query with its ``k`` nearest rows of ``base``.

    Args:
        queries: row vectors whose neighbourhoods are measured (normalised here).
        base: row vectors the neighbours are taken from (normalised here).
        k: neighbourhood size (fewer when ``base`` is smaller).
        same: ``queries`` and ``base`` are the same set: each query's own row is
            excluded from its neighbourhood.
        device: torch device; ``None`` uses CUDA when present, else numpy.
        chunk: query rows per similarity block.

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> [round(float(r), 4) for r in neighbourhood(q, q, k=1, same=True)]
    [0.7071, 0.7071, 0.7071]
    """
    be = _Backend(device)
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


def csls_matrix(x: np.ndarray, y: np.ndarray, k: int = DEFAULT_K, device: str | None = None) -> np.ndarray:
    """Return the full ``CSLS(x_i, y_j)`` matrix (two distinct sets; small inputs only).

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> csls_matrix(x, x, k=1).tolist()
    [[0.0, -2.0], [-2.0, 0.0]]
    """
    xn, yn = normalize(x), normalize(y)
    r_x = neighbourhood(xn, yn, k, device=device)  # r_T(x): x's neighbourhood among the targets
    r_y = neighbourhood(yn, xn, k, device=device)  # r_S(y): y's neighbourhood among the sources
    return 2 * (xn @ yn.T) - r_x[:, None] - r_y[None, :]


@dataclass(frozen=True)
class RetrievalCounts:
    """Raw counts of one retrieval direction (queries ``U``, translations ``V``).

    Attributes:
        n: number of pairs.
        weak: queries whose nearest ``V`` is their translation.
        strong_paper: queries whose translation beats every other ``U`` (paper Eq. 3).
        strong_union: queries whose translation is nearest among ``U ∪ V`` minus themselves.
    """

    n: int
    weak: int
    strong_paper: int
    strong_union: int

    @property
    def s_weak(self) -> float:
        """``weak / n``."""
        return self.weak / self.n if self.n else float("nan")

    def s_strong(self, mode: str = "paper") -> float:
        """``strong_<mode> / n``."""
        count = self.strong_paper if mode == "paper" else self.strong_union
        return count / self.n if self.n else float("nan")


def retrieval_counts(
    u: np.ndarray,
    v: np.ndarray,
    criterion: str = "csls",
    k: int = DEFAULT_K,
    device: str | None = None,
    chunk: int = _CHUNK,
) -> RetrievalCounts:
    """Score retrieval of ``v_i`` from ``u_i`` (one direction; swap the arguments for the other).

    Args:
        u: ``(n, dim)`` query vectors.
        v: ``(n, dim)`` vectors; row ``i`` of ``v`` translates row ``i`` of ``u``.
        criterion: ``csls`` or ``cosine``.
        k: CSLS neighbourhood size.
        device: torch device; ``None`` uses CUDA when present, else numpy.
        chunk: query rows per similarity block.

    >>> u = np.eye(3)
    >>> retrieval_counts(u, u, "cosine")
    RetrievalCounts(n=3, weak=3, strong_paper=3, strong_union=3)
    >>> retrieval_counts(u, u[[1, 2, 0]], "cosine").weak
    0

    Raises:
        UsageError: unknown criterion or mismatched shapes.
    """
    if criterion not in CRITERIA:
        raise UsageError(f"Unknown retrieval criterion {criterion!r}; choose one of {', '.join(CRITERIA)}.")
    if u.shape != v.shape or u.ndim != 2:
        raise UsageError(f"Retrieval needs two (n, dim) arrays of the same shape, got {u.shape} and {v.shape}.")
    n = len(u)
    if n < 2:
        raise UsageError(f"Retrieval needs at least 2 pairs, got {n}.")
    be = _Backend(device)
    un, vn = normalize(u), normalize(v)
    if criterion == "csls":
        # Weak: queries U against candidates V, two distinct sets.
        row_weak = neighbourhood(un, vn, k, device=device, chunk=chunk)  # r_V(u_i)
        pen_weak = neighbourhood(vn, un, k, device=device, chunk=chunk)  # r_U(v_j)
        # Strong: one pool U ∪ V; every point's neighbourhood is the pool minus itself.
        pool = neighbourhood(np.concatenate([un, vn]), np.concatenate([un, vn]), k, same=True, device=device, chunk=chunk)
        r_u, r_v = pool[:n], pool[n:]
    else:
        row_weak = pen_weak = r_u = r_v = np.zeros(n, np.float32)
    ut, vt = be.to(un), be.to(vn)
    weak = paper = union = 0
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        rows = np.arange(stop - start)
        diag = rows + start
        s_uv = be.np(be.mm(be.to(un[start:stop]), vt)).astype(np.float32)
        s_uu = be.np(be.mm(be.to(un[start:stop]), ut)).astype(np.float32)
        if criterion == "csls":
            weak_scores = 2 * s_uv - row_weak[start:stop, None] - pen_weak[None, :]
            strong_uv = 2 * s_uv - r_u[start:stop, None] - r_v[None, :]
            strong_uu = 2 * s_uu - r_u[start:stop, None] - r_u[None, :]
        else:
            weak_scores, strong_uv, strong_uu = s_uv.copy(), s_uv, s_uu
        own_weak = weak_scores[rows, diag].copy()
        weak_scores[rows, diag] = -np.inf
        ok_weak = own_weak > weak_scores.max(axis=1)
        own_strong = strong_uv[rows, diag].copy()
        strong_uu[rows, diag] = -np.inf
        ok_paper = own_strong > strong_uu.max(axis=1)
        strong_uv[rows, diag] = -np.inf
        ok_union = ok_paper & (own_strong > strong_uv.max(axis=1))
        weak += int(ok_weak.sum())
        paper += int(ok_paper.sum())
        union += int(ok_union.sum())
    return RetrievalCounts(n, weak, paper, union)

