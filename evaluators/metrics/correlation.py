"""Correlation and resampling spread for small aligner comparisons (SilverAlign, Koksal et al. 2022).

SilverAlign ranks aligner configurations by F1 on silver data and checks the
ranking against gold with a correlation. Over two configurations Pearson's r
is always ±1, so it is reported only from :data:`MIN_N` points on, with
Spearman's ρ beside it (the ranking itself). Silver sets can be tiny (80 links
for eng-tur Silver_Small): :func:`bootstrap_f1` resamples sentences to show how
far each F1 would move with other sentences, so a reader can see when two
configurations' order is noise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from evaluators.metrics.alignment import partial_filter

#: Fewest points for which a correlation is reported (with 2 it is always ±1).
MIN_N = 3
#: Bootstrap resamples of :func:`bootstrap_f1`.
DEFAULT_RESAMPLES = 1000

Link = tuple[int, int]


@dataclass(frozen=True)
class Correlation:
    """Pearson's r and Spearman's ρ of paired values, ``None`` where undefined.

    Attributes:
        n: pairs of values.
        pearson: Pearson's r (``None`` for ``n < min_n`` or a constant side).
        spearman: Spearman's ρ with average ranks for ties (same conditions).
    """

    n: int
    pearson: float | None
    spearman: float | None


def pearson(xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray) -> float | None:
    """Pearson's r of two equally long sequences; ``None`` where it is undefined.

    THE Pearson of the project (correlations, the report's scatters, the bootstrap of a
    correlation). Undefined means fewer than two points or a constant side, and it is
    ``None``, never NaN, so that it survives JSON and is never averaged by accident; a
    caller that needs a float (``numpy.nanquantile``) turns ``None`` into NaN itself.

    >>> pearson([1, 2, 3], [2, 4, 7])
    0.9933992677987828
    >>> pearson([1, 1], [2, 3]) is None, pearson([1], [2]) is None
    (True, True)

    Raises:
        ValueError: the sequences differ in length.
    """
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if len(x) != len(y):
        raise ValueError(f"pearson needs equally long sequences; got {len(x)} and {len(y)}")
    if len(x) < 2:
        return None
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(dx @ dx), float(dy @ dy)
    if sxx == 0 or syy == 0:
        return None
    return float(dx @ dy) / math.sqrt(sxx * syy)


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing the mean of their ranks (THE average ranks of the project).

    >>> average_ranks([0.3, 0.1, 0.3, 0.2]).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def correlate(xs: Sequence[float], ys: Sequence[float], min_n: int = MIN_N) -> Correlation:
    """Pearson's r and Spearman's ρ of ``xs`` against ``ys`` (``None`` below ``min_n`` points).

    >>> correlate([0.1, 0.2, 0.4], [0.5, 0.6, 0.9])
    Correlation(n=3, pearson=0.9958705948858224, spearman=1.0)
    >>> correlate([0.1, 0.2], [0.3, 0.1])
    Correlation(n=2, pearson=None, spearman=None)

    Raises:
        ValueError: the sequences differ in length.
    """
    if len(xs) != len(ys):
        raise ValueError(f"correlate needs equally long sequences; got {len(xs)} and {len(ys)}")
    n = len(xs)
    if n < max(min_n, 2):
        return Correlation(n, None, None)
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    return Correlation(n, pearson(x, y), spearman(x, y))


def spearman(xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray) -> float | None:
    """Spearman's ρ: :func:`pearson` of the :func:`average_ranks` (``scipy.stats.spearmanr``'s definition).

    ``None`` where it is undefined (as :func:`pearson`); :func:`correlate` also asks for
    :data:`MIN_N` points.

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 40])
    1.0
    >>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.8
    >>> spearman([1, 1, 1], [1, 2, 3]) is None
    True
    """
    return pearson(average_ranks(xs), average_ranks(ys))


def finite_pairs(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    """Return the pairs of ``xs`` and ``ys`` where neither value is NaN (as two lists).

    >>> finite_pairs([1.0, float("nan"), 3.0], [4.0, 5.0, 6.0])
    ([1.0, 3.0], [4.0, 6.0])
    """
    kept = [(x, y) for x, y in zip(xs, ys) if not (math.isnan(x) or math.isnan(y))]
    return [x for x, _ in kept], [y for _, y in kept]


@dataclass(frozen=True)
class F1Spread:
    """An F1 with its bootstrap spread over sentences.

    Attributes:
        f1: F1 on all sentences.
        std: standard deviation of the resampled F1s.
        low: 2.5th percentile of the resampled F1s.
        high: 97.5th percentile.
        resamples: number of resamples.
        sentences: sentences resampled.
    """

    f1: float
    std: float
    low: float
    high: float
    resamples: int
    sentences: int


def sentence_counts(
    sure: Sequence[Iterable[Link]],
    possible: Sequence[Iterable[Link]] | None,
    pred: Sequence[Iterable[Link]],
    partial: bool = False,
) -> np.ndarray:
    """Per sentence ``(|A∩S|, |A∩P|, |A|, |S|)`` as an ``(n, 4)`` array (inputs as :func:`score_alignments`).

    >>> sentence_counts([{(0, 0), (1, 1)}], [{(1, 2)}], [{(0, 0), (1, 2), (2, 2)}]).tolist()
    [[1, 2, 3, 2]]
    """
    if possible is None:
        possible = [()] * len(sure)
    rows = []
    for s_links, p_links, a_links in zip(sure, possible, pred, strict=True):
        s, a = set(s_links), set(a_links)
        p = set(p_links) | s
        if partial:
            a = partial_filter(a, s, p)
        rows.append((len(a & s), len(a & p), len(a), len(s)))
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


def _f1(c: np.ndarray) -> np.ndarray:
    a_s, a_p, n_a, n_s = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n_a > 0, a_p / np.maximum(n_a, 1), 0.0)
        r = np.where(n_s > 0, a_s / np.maximum(n_s, 1), 0.0)
        return np.where((p > 0) & (r > 0), 2 * p * r / np.maximum(p + r, 1e-300), 0.0)


def bootstrap_f1(
    counts: np.ndarray, rng: np.random.Generator, resamples: int = DEFAULT_RESAMPLES
) -> F1Spread:
    """Resample sentences with replacement and report the spread of the micro F1.

    Args:
        counts: :func:`sentence_counts` of one configuration.
        rng: the seeded generator (same seed, same spread).
        resamples: bootstrap resamples.

    >>> c = np.array([[1, 1, 1, 1], [0, 0, 1, 1], [1, 1, 1, 1]])
    >>> s = bootstrap_f1(c, np.random.default_rng(0), 200)
    >>> round(s.f1, 4), s.low <= s.f1 <= s.high, s.sentences
    (0.6667, True, 3)

    Raises:
        ValueError: no sentence.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = len(counts)
    if n == 0:
        raise ValueError("bootstrap_f1 needs at least one sentence")
    full = float(_f1(counts.sum(axis=0)))
    idx = rng.integers(0, n, size=(resamples, n))
    sample = _f1(counts[idx].sum(axis=1))
    low, high = np.percentile(sample, [2.5, 97.5])
    return F1Spread(full, float(sample.std()), float(low), float(high), resamples, n)
