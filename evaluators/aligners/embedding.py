"""Word alignment from word-vector similarity (SimAlign, Jalili Sabet et al. 2020) — pure numpy.

* ``argmax``: a link where the source word's most similar target word and the
  target word's most similar source word agree (mutual best).
* ``itermax``: argmax, then up to ``max_count - 1`` more rounds that align
  still-unaligned words, with similarities of rows/columns already aligned
  damped by ``alpha`` (SimAlign's defaults: ``max_count=2``, ``alpha=0.9``;
  matrices with a side of 2 or fewer words stop after argmax).

Both run on SimAlign's similarity ``(cos + 1) / 2`` by default (its
``get_similarity``): argmax is the same on raw cosine, but itermax multiplies
similarities by its damping mask, and on raw cosine a negative similarity times
a zero mask (0) beats the damped negative ones, which changes links.
``similarity="cosine"`` keeps the raw cosine (xlbench's rule before).

Words without a vector (NaN rows, e.g. lost to truncation) are never linked.
"""

from __future__ import annotations

import numpy as np

Link = tuple[int, int]

#: SimAlign's itermax defaults (Jalili Sabet et al. 2020, section 2.3).
ITERMAX_ROUNDS = 2
ITERMAX_ALPHA = 0.9


def cosine_matrix(src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """Cosine similarity of each source row with each target row; NaN rows give -inf.

    >>> cosine_matrix(np.array([[1.0, 0.0]]), np.array([[2.0, 0.0], [0.0, 3.0]])).tolist()
    [[1.0, 0.0]]
    """
    s = src / np.linalg.norm(src, axis=1, keepdims=True).clip(1e-12)
    t = tgt / np.linalg.norm(tgt, axis=1, keepdims=True).clip(1e-12)
    sim = s @ t.T
    return np.where(np.isnan(sim), -np.inf, sim)


#: ``simalign``: ``(cos + 1) / 2`` as SimAlign's ``get_similarity``; ``cosine``: raw cosine.
SIMILARITIES = ("simalign", "cosine")


def similarity_matrix(src: np.ndarray, tgt: np.ndarray, similarity: str = "simalign") -> np.ndarray:
    """The word-similarity matrix the extractors read: SimAlign's ``(cos + 1) / 2`` or raw cosine.

    >>> similarity_matrix(np.array([[1.0, 0.0]]), np.array([[-2.0, 0.0], [0.0, 3.0]])).tolist()
    [[0.0, 0.5]]

    Raises:
        ValueError: an unknown similarity.
    """
    if similarity not in SIMILARITIES:
        raise ValueError(
            f"Unknown similarity {similarity!r}; choose one of {', '.join(SIMILARITIES)}."
        )
    cos = cosine_matrix(src, tgt)
    return (cos + 1.0) / 2.0 if similarity == "simalign" else cos


def _mutual(sim: np.ndarray) -> np.ndarray:
    m, n = sim.shape
    fwd = np.zeros((m, n))
    fwd[np.arange(m), sim.argmax(axis=1)] = 1.0
    bwd = np.zeros((m, n))
    bwd[sim.argmax(axis=0), np.arange(n)] = 1.0
    return fwd * bwd


def _links(matrix: np.ndarray, sim: np.ndarray) -> set[Link]:
    rows, cols = np.nonzero(matrix > 0)
    return {(int(i), int(j)) for i, j in zip(rows, cols) if np.isfinite(sim[i, j])}


def argmax_align(sim: np.ndarray) -> set[Link]:
    """Mutual-best links of a similarity matrix (rows: source words).

    >>> sorted(argmax_align(np.array([[0.9, 0.1], [0.8, 0.2]])))
    [(0, 0)]
    """
    sim = np.asarray(sim, dtype=float)
    if sim.size == 0:
        return set()
    return _links(_mutual(sim), sim)


def itermax_align(
    sim: np.ndarray, max_count: int = ITERMAX_ROUNDS, alpha: float = ITERMAX_ALPHA
) -> set[Link]:
    """SimAlign's itermax: argmax plus rounds that align the words argmax left out.

    >>> sim = np.array([[0.9, 0.1, 0.0], [0.8, 0.3, 0.1], [0.0, 0.1, 0.9]])
    >>> sorted(argmax_align(sim)), sorted(itermax_align(sim))
    ([(0, 0), (2, 2)], [(0, 0), (1, 0), (2, 2)])
    """
    sim = np.asarray(sim, dtype=float)
    if sim.size == 0:
        return set()
    m, n = sim.shape
    inter = _mutual(sim)
    if min(m, n) <= 2:
        return _links(inter, sim)
    finite = np.where(np.isfinite(sim), sim, -1e9)
    count = 1
    while count < max_count:
        free_row = 1.0 - inter.sum(axis=1, keepdims=True).clip(
            0.0, 1.0
        )  # (m, 1): 1 if row unaligned
        free_col = 1.0 - inter.sum(axis=0, keepdims=True).clip(0.0, 1.0)  # (1, n)
        mask = (alpha * free_row + alpha * free_col).clip(0.0, 1.0)
        # A cell may be added only if its row or its column is still unaligned.
        allowed = 1.0 - (1.0 - free_row) * (1.0 - free_col)
        if free_row.sum() < 1.0 or free_col.sum() < 1.0:
            break
        damped = finite * mask
        fwd = np.zeros((m, n))
        fwd[np.arange(m), damped.argmax(axis=1)] = 1.0
        bwd = np.zeros((m, n))
        bwd[damped.argmax(axis=0), np.arange(n)] = 1.0
        new = fwd * bwd * allowed
        if np.array_equal(inter + new, inter) or not new.any():
            break
        inter = (inter + new).clip(0.0, 1.0)
        count += 1
    return _links(inter, sim)


#: name -> extraction function.
EXTRACTORS = {"argmax": argmax_align, "itermax": itermax_align}
