"""Margin-based bitext mining, after Artetxe & Schwenk (2019) and LASER ``mine_bitexts.py``.

Reference: "Margin-based Parallel Corpus Mining with Multilingual Sentence Embeddings" (ACL 2019).

Given sentence embeddings ``x`` (source corpus) and ``y`` (target corpus):

1. exact k nearest neighbours by cosine in both directions (:func:`knn_both`);
2. every neighbour becomes a candidate scored with a margin (:func:`margin_scores`):
   ``ratio``: ``cos(x, y) / ((mean_k cos(x, NN_k(x)) + mean_k cos(y, NN_k(y))) / 2)``,
   ``distance``: ``cos(x, y) - (...)/2``, ``absolute``: ``cos(x, y)``;
3. candidates are kept by a retrieval rule (:func:`retrieve`): ``forward`` (each
   source's best), ``backward`` (each target's best), ``intersection`` (mutual
   best) or ``max`` (both directions merged, greedy by score, each sentence used
   at most once);
4. pairs scoring above a threshold are predicted; :func:`sweep_threshold` picks
   the threshold with the best F1 on labelled data, :func:`score_at` applies one.

Sentences are indices into ``x``/``y`` (ids upstream), never texts: duplicated
sentences stay distinct and can each be found. Scores are never rounded.

Determinism: neighbours are ordered by (similarity desc, index asc); ``max``
breaks score ties by (forward before backward, index asc).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from evaluators.compute.knn import (
    Neighbours,
    cuda_available,
    knn_faiss,
    knn_numpy,
    knn_torch,
)
from evaluators.core.errors import UsageError
from evaluators.metrics.vectors import normalize

MARGINS = ("ratio", "distance", "absolute")
RETRIEVALS = ("forward", "backward", "intersection", "max")
#: kNN indexes (the library that searches: :mod:`evaluators.compute.knn`).
INDEXES = ("auto", "numpy", "torch", "faiss")
#: Neighbourhood size of the margin (Artetxe & Schwenk 2019, Sec. 3.1: k = 4).
DEFAULT_K = 4


@dataclass(frozen=True)
class Candidates:
    """Candidate pairs after retrieval, best first.

    Attributes:
        src: ``(c,)`` source indices.
        tgt: ``(c,)`` target indices.
        scores: ``(c,)`` margin scores, descending.
    """

    src: np.ndarray
    tgt: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class MiningScore:
    """Precision, recall and F1 of the pairs scoring strictly above ``threshold``.

    Attributes:
        threshold: pairs with score > threshold are predicted.
        tp: predicted pairs that are gold.
        n_pred: predicted pairs.
        n_gold: gold pairs.
        precision: ``tp / n_pred`` (0 when nothing is predicted).
        recall: ``tp / n_gold`` (0 when there is no gold).
        f1: harmonic mean of precision and recall (0 when both are 0).
    """

    threshold: float
    tp: int
    n_pred: int
    n_gold: int
    precision: float
    recall: float
    f1: float


def _prf(threshold: float, tp: int, n_pred: int, n_gold: int) -> MiningScore:
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return MiningScore(float(threshold), int(tp), int(n_pred), int(n_gold), precision, recall, f1)


# --------------------------------------------------------------------------- kNN


def knn_both(
    x: np.ndarray,
    y: np.ndarray,
    k: int = DEFAULT_K,
    *,
    index: str = "auto",
    approximate: bool | str = False,
    chunk_size: int | None = None,
    device: str | None = None,
    workers: int | None = None,
) -> tuple[Neighbours, Neighbours]:
    """Return the k nearest neighbours of ``x`` in ``y`` and of ``y`` in ``x`` (cosine).

    Exact unless ``approximate`` (faiss: ``True``/``"hnsw"`` or ``"ivf"``). ``numpy``
    makes one pass of blocked matrix products serving both directions, on
    ``workers`` threads, with blocks sized so that memory stays bounded (never an
    ``n x m`` matrix; :func:`evaluators.compute.knn.knn_numpy`); ``torch`` does the same on
    a GPU; ``faiss`` uses ``IndexFlatIP`` (two searches). ``auto`` is ``torch`` when
    a CUDA device is present, else ``numpy``. ``chunk_size`` is the rows per block
    (default: from the memory budget for numpy, 2048 for torch). ``k`` is capped
    at the corpus size.

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = np.array([[0.9, 0.1], [0.1, 0.9]])
    >>> fwd, bwd = knn_both(x, y, k=1)
    >>> fwd.idx[:, 0].tolist(), bwd.idx[:, 0].tolist()
    ([0, 1, 0], [0, 1])

    Raises:
        UsageError: ``k < 1``, an unknown index, mismatched dimensions, or
            ``approximate`` without faiss.
    """
    if k < 1:
        raise UsageError(f"k must be at least 1, got {k}.")
    if index not in INDEXES:
        raise UsageError(f"Unknown kNN index {index!r}; choose one of {', '.join(INDEXES)}.")
    x, y = normalize(x), normalize(y)
    if x.shape[1] != y.shape[1]:
        raise UsageError(
            f"Embedding sizes differ: source {x.shape[1]}, target {y.shape[1]}; use one model for both."
        )
    if len(x) == 0 or len(y) == 0:
        raise UsageError(
            f"Cannot mine with an empty corpus ({len(x)} source, {len(y)} target sentences)."
        )
    if approximate and index != "faiss":
        raise UsageError(
            "Approximate search is only offered through faiss; pass --faiss with --approximate."
        )
    kf, kb = min(k, len(y)), min(k, len(x))
    if index == "auto":
        index = "torch" if cuda_available() else "numpy"
    if index == "faiss":
        return knn_faiss(x, y, kf, kb, approximate)
    if index == "torch":
        return knn_torch(x, y, kf, kb, chunk_size or 2048, device)
    return knn_numpy(x, y, kf, kb, block_rows=chunk_size, workers=workers)


# ------------------------------------------------------------------ margins


def margin_scores(
    fwd: Neighbours, bwd: Neighbours, margin: str = "ratio"
) -> tuple[np.ndarray, np.ndarray]:
    """Score every neighbour candidate with a margin (LASER ``score_candidates``).

    For source ``i`` and candidate ``j = fwd.idx[i, c]``: ``a = cos(x_i, y_j)`` and
    ``b = (mean(fwd.sims[i]) + mean(bwd.sims[j])) / 2``; the score is ``a / b``
    (ratio), ``a - b`` (distance) or ``a`` (absolute). The backward scores are
    the same formula seen from each target.

    Here source 0 has mean neighbour similarity 0.7, targets 0.5 and 0.4, so the
    ratio of candidate 0 is 0.9 / ((0.7 + 0.5) / 2) = 1.5.

    >>> fwd = Neighbours(np.array([[0.9, 0.5]]), np.array([[0, 1]]))
    >>> bwd = Neighbours(np.array([[0.9, 0.1], [0.5, 0.3]]), np.array([[0, 0], [0, 0]]))
    >>> f, b = margin_scores(fwd, bwd, "ratio")
    >>> [round(v, 4) for v in f[0].tolist()], [round(v, 4) for v in b[:, 0].tolist()]
    ([1.5, 0.9091], [1.5, 0.9091])
    >>> margin_scores(fwd, bwd, "distance")[0].round(4).tolist()
    [[0.3, -0.05]]

    Raises:
        UsageError: unknown margin.
    """
    if margin not in MARGINS:
        raise UsageError(f"Unknown margin {margin!r}; choose one of {', '.join(MARGINS)}.")
    f_mean = fwd.sims.astype(np.float64).mean(axis=1)
    b_mean = bwd.sims.astype(np.float64).mean(axis=1)
    fa = fwd.sims.astype(np.float64)
    fb = (f_mean[:, None] + b_mean[fwd.idx]) / 2
    ba = bwd.sims.astype(np.float64)
    bb = (b_mean[:, None] + f_mean[bwd.idx]) / 2
    return _apply(fa, fb, margin), _apply(ba, bb, margin)


def _apply(a: np.ndarray, b: np.ndarray, margin: str) -> np.ndarray:
    if margin == "ratio":
        return a / b
    if margin == "distance":
        return a - b
    return a


# ---------------------------------------------------------------- retrieval


def retrieve(
    fwd: Neighbours,
    bwd: Neighbours,
    fwd_scores: np.ndarray,
    bwd_scores: np.ndarray,
    retrieval: str = "max",
) -> Candidates:
    """Turn scored neighbours into candidate pairs (LASER ``mine_bitexts.py --mode mine``).

    Each sentence's best candidate is the neighbour with the highest margin
    score (first in neighbour order on ties).

    >>> fwd = Neighbours(np.array([[0.9, 0.2], [0.8, 0.7]]), np.array([[0, 1], [0, 1]]))
    >>> bwd = Neighbours(np.array([[0.9, 0.8], [0.7, 0.2]]), np.array([[0, 1], [1, 0]]))
    >>> f, b = margin_scores(fwd, bwd, "absolute")
    >>> c = retrieve(fwd, bwd, f, b, "forward"); list(zip(c.src.tolist(), c.tgt.tolist()))
    [(0, 0), (1, 0)]
    >>> c = retrieve(fwd, bwd, f, b, "max"); list(zip(c.src.tolist(), c.tgt.tolist()))
    [(0, 0), (1, 1)]
    >>> c = retrieve(fwd, bwd, f, b, "intersection"); list(zip(c.src.tolist(), c.tgt.tolist()))
    [(0, 0)]

    Raises:
        UsageError: unknown retrieval.
    """
    if retrieval not in RETRIEVALS:
        raise UsageError(f"Unknown retrieval {retrieval!r}; choose one of {', '.join(RETRIEVALS)}.")
    n, m = len(fwd.idx), len(bwd.idx)
    f_arg = fwd_scores.argmax(axis=1)
    b_arg = bwd_scores.argmax(axis=1)
    f_best = fwd.idx[np.arange(n), f_arg]
    b_best = bwd.idx[np.arange(m), b_arg]
    f_score = fwd_scores[np.arange(n), f_arg]
    b_score = bwd_scores[np.arange(m), b_arg]
    if retrieval == "forward":
        src, tgt, scores = np.arange(n), f_best, f_score
    elif retrieval == "backward":
        src, tgt, scores = b_best, np.arange(m), b_score
    elif retrieval == "intersection":
        keep = b_best[f_best] == np.arange(n)
        src, tgt, scores = np.arange(n)[keep], f_best[keep], f_score[keep]
    else:
        all_src = np.concatenate((np.arange(n), b_best))
        all_tgt = np.concatenate((f_best, np.arange(m)))
        all_scores = np.concatenate((f_score, b_score))
        order = np.argsort(-all_scores, kind="stable")
        used_src = np.zeros(n, bool)
        used_tgt = np.zeros(m, bool)
        keep = []
        for p in order.tolist():
            s, t = all_src[p], all_tgt[p]
            if not used_src[s] and not used_tgt[t]:
                used_src[s] = used_tgt[t] = True
                keep.append(p)
        keep = np.asarray(keep, dtype=np.int64)
        src, tgt, scores = all_src[keep], all_tgt[keep], all_scores[keep]
    order = np.argsort(-scores, kind="stable")
    return Candidates(
        np.asarray(src)[order].astype(np.int64),
        np.asarray(tgt)[order].astype(np.int64),
        scores[order],
    )


def mine(
    x: np.ndarray,
    y: np.ndarray,
    *,
    k: int = DEFAULT_K,
    margin: str = "ratio",
    retrieval: str = "max",
    index: str = "auto",
    approximate: bool | str = False,
    chunk_size: int | None = None,
) -> Candidates:
    """Embeddings in, scored candidate pairs out (kNN -> margins -> retrieval).

    >>> x = np.eye(3)
    >>> y = np.eye(3)[[2, 0, 1]] + 0.1
    >>> c = mine(x, y, k=2)
    >>> sorted(zip(c.src.tolist(), c.tgt.tolist()))
    [(0, 1), (1, 2), (2, 0)]
    """
    if margin not in MARGINS:
        raise UsageError(f"Unknown margin {margin!r}; choose one of {', '.join(MARGINS)}.")
    if retrieval not in RETRIEVALS:
        raise UsageError(f"Unknown retrieval {retrieval!r}; choose one of {', '.join(RETRIEVALS)}.")
    fwd, bwd = knn_both(x, y, k, index=index, approximate=approximate, chunk_size=chunk_size)
    f, b = margin_scores(fwd, bwd, margin)
    return retrieve(fwd, bwd, f, b, retrieval)


# ------------------------------------------------------------ unify (LASER)


def unify(texts: Sequence[str]) -> tuple[list[int], np.ndarray]:
    """LASER's text de-duplication (``mine_bitexts.py --unify`` + ``bucc.py``): which rows to mine, and back.

    Returns the row of each distinct text's first occurrence (the rows to embed and
    mine, in order) and, per distinct text, its row when the text occurs once or
    ``-1`` when it repeats: LASER's ``bucc.py`` maps a mined text back to an id only
    if no other sentence has that text, so a repeated text is never predicted.

    >>> rows, single = unify(["a", "b", "a", "c"])
    >>> rows, single.tolist()
    ([0, 1, 3], [-1, 1, 3])
    """
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for row, text in enumerate(texts):
        first.setdefault(text, row)
        count[text] = count.get(text, 0) + 1
    rows = list(first.values())
    single = np.array([first[t] if count[t] == 1 else -1 for t in first], dtype=np.int64)
    return rows, single


def restore_unified(
    cands: Candidates, src_single: np.ndarray, tgt_single: np.ndarray
) -> Candidates:
    """Map candidates over distinct texts back to rows, dropping those with a repeated text (LASER ``bucc.py``).

    >>> c = Candidates(np.array([0, 1]), np.array([1, 0]), np.array([2.0, 1.0]))
    >>> r = restore_unified(c, np.array([-1, 4]), np.array([7, 5]))
    >>> r.src.tolist(), r.tgt.tolist(), r.scores.tolist()
    ([4], [7], [1.0])
    """
    s, t = src_single[cands.src], tgt_single[cands.tgt]
    keep = (s >= 0) & (t >= 0)
    return Candidates(s[keep], t[keep], cands.scores[keep])


# ------------------------------------------------------------------ scoring


def gold_mask(cands: Candidates, gold: Collection[tuple[int, int]]) -> np.ndarray:
    """Return which candidates are gold pairs ``(src_index, tgt_index)``.

    >>> c = Candidates(np.array([0, 1]), np.array([1, 1]), np.array([2.0, 1.0]))
    >>> gold_mask(c, {(0, 1), (2, 2)}).tolist()
    [True, False]
    """
    gold = set(gold)
    return np.array(
        [(s, t) in gold for s, t in zip(cands.src.tolist(), cands.tgt.tolist())], dtype=bool
    )


def score_at(cands: Candidates, gold: Collection[tuple[int, int]], threshold: float) -> MiningScore:
    """Precision/recall/F1 of the candidates scoring strictly above ``threshold``.

    >>> c = Candidates(np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([3.0, 2.0, 1.0]))
    >>> s = score_at(c, {(0, 0), (2, 2), (3, 3)}, 1.5)
    >>> (s.tp, s.n_pred, s.n_gold, s.precision, s.recall)
    (1, 2, 3, 0.5, 0.3333333333333333)
    """
    gold = set(gold)
    keep = cands.scores > threshold
    tp = int(gold_mask(cands, gold)[keep].sum())
    return _prf(threshold, tp, int(keep.sum()), len(gold))


def sweep_threshold(cands: Candidates, gold: Collection[tuple[int, int]]) -> MiningScore:
    """Return the threshold with the best F1 and its score (BUCC threshold optimisation).

    Every distinct candidate score is a possible cut; the threshold is the
    midpoint between the lowest kept score and the highest dropped one (below
    the lowest score: the next float down; nothing kept: the highest score).
    Tied scores are kept or dropped together. Among equal F1, the highest
    threshold wins.

    >>> c = Candidates(np.arange(4), np.arange(4), np.array([4.0, 3.0, 2.0, 1.0]))
    >>> s = sweep_threshold(c, {(0, 0), (2, 2)})
    >>> (s.threshold, s.tp, s.n_pred, round(s.f1, 4))
    (1.5, 2, 3, 0.8)
    >>> s = sweep_threshold(c, {(0, 0), (1, 1), (3, 3)})
    >>> (s.threshold < 1.0, s.tp, s.n_pred, round(s.f1, 4))
    (True, 3, 4, 0.8571)
    """
    gold = set(gold)
    n = len(cands)
    if n == 0 or not gold:
        top = float(cands.scores[0]) if n else 0.0
        return _prf(top, 0, 0, len(gold))
    scores = np.asarray(cands.scores, dtype=np.float64)
    hits = np.cumsum(gold_mask(cands, gold))
    # a cut after position p (keeping p + 1 candidates) is valid when the next score is lower
    valid = np.ones(n, dtype=bool)
    valid[:-1] = scores[:-1] > scores[1:]
    kept = np.arange(1, n + 1)
    precision = hits / kept
    recall = hits / len(gold)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(hits > 0, 2 * precision * recall / (precision + recall), 0.0)
    f1 = np.where(valid, f1, -1.0)
    best = int(np.argmax(f1))
    if f1[best] <= 0:
        return _prf(float(scores[0]), 0, 0, len(gold))
    threshold = (scores[best] + scores[best + 1]) / 2 if best + 1 < n else scores[best]
    if not threshold < scores[best]:  # last candidate, or neighbours too close for a float midpoint
        threshold = float(np.nextafter(scores[best], -np.inf))
    return _prf(float(threshold), int(hits[best]), best + 1, len(gold))


# ------------------------------------------------------- aligned retrieval


@dataclass(frozen=True)
class RetrievalScore:
    """Top-1 retrieval on an aligned pair of lists (item ``i`` translates item ``i``).

    Attributes:
        scoring: ``cosine`` or a margin name (``ratio`` ...).
        n: aligned pairs.
        forward_correct: sources whose best target is their own translation.
        backward_correct: targets whose best source is their own translation.
        forward_accuracy: ``forward_correct / n``.
        backward_accuracy: ``backward_correct / n``.
    """

    scoring: str
    n: int
    forward_correct: int
    backward_correct: int
    forward_accuracy: float
    backward_accuracy: float


#: Margin retrieval's candidates: each sentence's k nearest cosine neighbours (LASER's
#: ``xsim.py`` and ``mine_bitexts.py``) or every sentence of the other side.
MARGIN_CANDIDATES = ("knn", "all")


def retrieval_accuracy(
    x: np.ndarray,
    y: np.ndarray,
    scoring: str = "cosine",
    k: int = DEFAULT_K,
    chunk_size: int = 2048,
    candidates: str = "knn",
) -> RetrievalScore:
    """Tatoeba-style top-1 accuracy in both directions, by cosine or by margin.

    With a margin, a pair is scored ``margin(cos, (mean_k(x) + mean_k(y)) / 2)``.
    ``candidates="knn"`` (LASER's xSIM, ``xsim.py: _score_knn``) takes each
    sentence's best among its ``k`` nearest cosine neighbours; ``"all"`` takes
    the best over the whole other list, which can pick a sentence outside the
    neighbourhood whose own neighbours are far (a low mean). Cosine scoring
    looks at every sentence either way. Correctness is by index, never by text:
    a duplicated target sentence counts as wrong unless its own index is
    retrieved. Ties go to the lower index (``knn``: the nearer neighbour).

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    >>> y = np.array([[1.0, 0.1], [0.1, 1.0], [1.0, 0.0]])
    >>> s = retrieval_accuracy(x, y)

    Source 0 prefers target 2 (exactly parallel), source 2 ties targets 0 and 1
    (lower index wins); targets 0 and 1 find their sources, target 2 finds source 0:

    >>> (s.forward_correct, s.backward_correct)
    (1, 2)

    Raises:
        UsageError: lists of different lengths, empty lists, an unknown scoring or candidates.
    """
    if scoring != "cosine" and scoring not in MARGINS:
        raise UsageError(
            f"Unknown scoring {scoring!r}; choose cosine or one of {', '.join(MARGINS)}."
        )
    if candidates not in MARGIN_CANDIDATES:
        raise UsageError(
            f"Unknown margin candidates {candidates!r}; choose one of {', '.join(MARGIN_CANDIDATES)}."
        )
    x, y = normalize(x), normalize(y)
    if len(x) != len(y) or len(x) == 0:
        raise UsageError(
            f"Aligned retrieval needs two non-empty lists of equal length, got {len(x)} and {len(y)}."
        )
    if scoring != "cosine" and candidates == "knn":
        return _knn_accuracy(x, y, scoring, k, chunk_size)
    return _all_accuracy(x, y, scoring, k, chunk_size)


def _knn_accuracy(
    x: np.ndarray, y: np.ndarray, margin: str, k: int, chunk_size: int
) -> RetrievalScore:
    """Margin over each sentence's k cosine neighbours, in both directions (LASER's xSIM)."""
    n = len(x)
    fwd, bwd = knn_both(x, y, k, index="numpy", chunk_size=chunk_size)
    f, b = margin_scores(fwd, bwd, margin)
    f_best = fwd.idx[np.arange(n), f.argmax(axis=1)]
    b_best = bwd.idx[np.arange(n), b.argmax(axis=1)]
    f_ok = int((f_best == np.arange(n)).sum())
    b_ok = int((b_best == np.arange(n)).sum())
    return RetrievalScore(margin, n, f_ok, b_ok, f_ok / n, b_ok / n)


def _all_accuracy(
    x: np.ndarray, y: np.ndarray, scoring: str, k: int, chunk_size: int
) -> RetrievalScore:
    """Cosine, or a margin with every sentence of the other side as a candidate."""
    n = len(x)
    if scoring != "cosine":
        fwd, bwd = knn_both(x, y, k, index="numpy", chunk_size=chunk_size)
        f_mean = fwd.sims.astype(np.float64).mean(axis=1)
        b_mean = bwd.sims.astype(np.float64).mean(axis=1)
    col_best = np.full(n, -np.inf)
    col_arg = np.zeros(n, dtype=np.int64)
    f_ok = 0
    for start in range(0, n, chunk_size):
        s = (x[start : start + chunk_size] @ y.T).astype(np.float64)
        if scoring != "cosine":
            s = _apply(s, (f_mean[start : start + len(s), None] + b_mean[None, :]) / 2, scoring)
        f_ok += int((s.argmax(axis=1) == np.arange(start, start + len(s))).sum())
        arg = s.argmax(axis=0)
        val = s[arg, np.arange(n)]
        better = val > col_best
        col_best[better] = val[better]
        col_arg[better] = arg[better] + start
    b_ok = int((col_arg == np.arange(n)).sum())
    return RetrievalScore(scoring, n, f_ok, b_ok, f_ok / n, b_ok / n)
