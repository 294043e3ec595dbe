"""Triplet accuracy (TACC) for (en_orig, en_foil, target_orig) minimal pairs (alee paper).

A triplet is *correct* when ``cos(en_orig, target) > cos(en_foil, target)``
(strict), a *tie* when the two similarities are equal, and *wrong* otherwise.
"Equal" allows a tolerance (default ``1e-6``): embeddings are float32, whose
sums depend on summation order, so a bag-of-words model gives a role-swapped
foil (same tokens, other order) a similarity that differs only by rounding
noise; that is a tie, not a win or a loss. Ties are reported separately; the tie rule says
how TACC counts them: ``strict`` (xlbench's default, a tie fails: ``>``) or ``win``
(Sentence Smith's ``test_process.ipynb``, ``sim_orig_para >= sim_orig_mod``: a tie passes).
Chance level is 0.5. Macro-TACC is the unweighted mean of TACC over the four
perturbations (PN, RS, AR, HS) present.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TripletScore:
    """Outcome counts of a set of triplets.

    Attributes:
        n: triplets scored.
        correct: triplets that pass: ``sim(orig, target) > sim(foil, target)``, plus the
            ties under the tie rule ``win``.
        ties: equal similarities (within the tolerance), whatever the rule made of them.
        wrong: ``sim(orig, target) < sim(foil, target)``.
    """

    n: int
    correct: int
    ties: int
    wrong: int

    @property
    def tacc(self) -> float:
        """Triplet accuracy ``correct / n`` (NaN for no triplets)."""
        return self.correct / self.n if self.n else math.nan

    @property
    def tie_rate(self) -> float:
        """Share of ties ``ties / n`` (NaN for no triplets)."""
        return self.ties / self.n if self.n else math.nan


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the cosine similarity of each row of ``a`` with the same row of ``b`` (float64).

    A zero vector has similarity 0 with everything.

    >>> cosine_rows(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[2.0, 0.0], [-1.0, 0.0]])).round(4).tolist()
    [1.0, -0.7071]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    denom = na * nb
    dots = np.einsum("ij,ij->i", a, b)
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)


#: Similarities closer than this are a tie (float32 rounding noise, ~1e-7 relative).
TIE_TOLERANCE = 1e-6


def triplet_outcomes(
    orig: np.ndarray, foil: np.ndarray, target: np.ndarray, tie_tolerance: float = TIE_TOLERANCE
) -> np.ndarray:
    """Return per triplet ``1`` (correct), ``0`` (tie) or ``-1`` (wrong).

    Args:
        orig: ``(n, d)`` embeddings of the English originals.
        foil: ``(n, d)`` embeddings of the English foils.
        target: ``(n, d)`` embeddings of the target-language originals.
        tie_tolerance: ``|sim_orig - sim_foil| <= tie_tolerance`` is a tie (0 for exact equality only).

    >>> t = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    >>> o = np.array([[1.0, 0.1], [1.0, 1.0], [0.0, 1.0]])
    >>> f = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])
    >>> triplet_outcomes(o, f, t).tolist()
    [1, 0, -1]
    """
    diff = cosine_rows(orig, target) - cosine_rows(foil, target)
    out = np.sign(diff).astype(np.int64)
    out[np.abs(diff) <= tie_tolerance] = 0
    return out


#: How a tie counts: ``strict`` fails it (``>``), ``win`` passes it (``>=``, Sentence Smith).
TIE_RULES = ("strict", "win")


def passes(outcomes: Iterable[int], tie_rule: str = "strict") -> np.ndarray:
    """Return which outcomes (1 / 0 / -1) count as correct under ``tie_rule``.

    >>> passes([1, 0, -1]).tolist(), passes([1, 0, -1], "win").tolist()
    ([True, False, False], [True, True, False])

    Raises:
        ValueError: an unknown tie rule.
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"Unknown tie rule {tie_rule!r}; choose one of {', '.join(TIE_RULES)}.")
    arr = np.asarray(list(outcomes), dtype=np.int64)
    return (arr == 1) | ((arr == 0) & (tie_rule == "win"))


def triplet_score(outcomes: Iterable[int], tie_rule: str = "strict") -> TripletScore:
    """Count outcomes from :func:`triplet_outcomes`; ``tie_rule="win"`` counts ties as correct.

    >>> s = triplet_score([1, 1, 0, -1])
    >>> s, s.tacc, s.tie_rate
    (TripletScore(n=4, correct=2, ties=1, wrong=1), 0.5, 0.25)
    >>> triplet_score([1, 1, 0, -1], "win").tacc
    0.75
    """
    arr = np.asarray(list(outcomes), dtype=np.int64)
    return TripletScore(
        int(arr.size),
        int(passes(arr, tie_rule).sum()),
        int((arr == 0).sum()),
        int((arr == -1).sum()),
    )


def macro_tacc(
    scores: Mapping[str, TripletScore], types: Sequence[str] = ("PN", "RS", "AR", "HS")
) -> float:
    """Return the mean TACC over ``types`` that have triplets (NaN if none has).

    >>> macro_tacc({"PN": TripletScore(2, 2, 0, 0), "RS": TripletScore(4, 1, 1, 2), "AR": TripletScore(0, 0, 0, 0)})
    0.625
    """
    values = [scores[t].tacc for t in types if t in scores and scores[t].n]
    return float(np.mean(values)) if values else math.nan


def length_thresholds(lengths: Sequence[int]) -> tuple[float, float]:
    """Return the 33rd and 66th percentiles (numpy's linear interpolation) of ``lengths``.

    >>> length_thresholds([10, 20, 30, 40])
    (19.9, 29.8)
    """
    arr = np.asarray(lengths, dtype=np.float64)
    return float(np.percentile(arr, 33)), float(np.percentile(arr, 66))


def length_bin(length: int, p33: float, p66: float) -> str:
    """Return ``short`` (<= P33), ``medium`` (<= P66) or ``long``.

    >>> [length_bin(n, 19.9, 29.8) for n in (10, 20, 30)]
    ['short', 'medium', 'long']
    """
    if length <= p33:
        return "short"
    if length <= p66:
        return "medium"
    return "long"
