"""Bootstrap confidence intervals and paired significance tests over per-item outcomes.

Pure functions of arrays: items (word pairs, sentence pairs, triplets, gold pairs)
are resampled with replacement; randomness arrives as an ``rng`` argument, so a
seeded stream for the bootstrap never moves the score itself (STYLE §10).

* :func:`bootstrap_ci` — percentile interval of a statistic (Efron & Tibshirani
  1993, §13.3).
* :func:`paired_bootstrap` — two systems scored on the same items; the p-value of
  the observed difference under the bootstrap distribution shifted to mean zero, as
  sacrebleu's ``--paired-bs`` (Koehn 2004; Clark et al. 2011, MultEval) does.
* :func:`approximate_randomization` — swap the two systems' outcomes per item with
  probability 1/2 (Noreen 1989; Riezler & Maxwell 2005; sacrebleu ``--paired-ar``);
  when ``2**n`` is not larger than the number of trials every assignment is
  enumerated and the p-value is exact.

A statistic is a function of a resampled array (items along axis 0) returning a
float; the default is the mean, which is the score for any accuracy-like metric
(``correct`` as 0/1). :func:`f1_from_counts` is the statistic for micro F1 over
items carrying ``(tp, n_pred, n_gold)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluators.core.errors import UsageError

#: Default number of resamples / trials (sacrebleu uses 1000 for both tests).
DEFAULT_RESAMPLES = 1000
#: Default confidence level of an interval.
DEFAULT_LEVEL = 0.95
#: Resamples drawn per vectorised batch for the mean (bounds memory at n * batch indices).
_BATCH = 64

Statistic = Callable[[np.ndarray], float]


@dataclass(frozen=True)
class ConfidenceInterval:
    """A percentile bootstrap interval around a point estimate.

    Attributes:
        estimate: the statistic on the original items.
        low: lower bound (the ``(1 - level) / 2`` quantile of the bootstrap statistics).
        high: upper bound (the ``(1 + level) / 2`` quantile).
        level: confidence level, e.g. 0.95.
        resamples: number of bootstrap resamples.
        n: number of items.
    """

    estimate: float
    low: float
    high: float
    level: float
    resamples: int
    n: int

    def to_fields(self) -> dict[str, float | int]:
        """Return the keys a result entry carries next to its main score.

        >>> ConfidenceInterval(0.5, 0.4, 0.6, 0.95, 1000, 80).to_fields()
        {'ci_low': 0.4, 'ci_high': 0.6, 'ci_level': 0.95, 'ci_resamples': 1000}
        """
        return {
            "ci_low": self.low,
            "ci_high": self.high,
            "ci_level": self.level,
            "ci_resamples": self.resamples,
        }


@dataclass(frozen=True)
class PairedTest:
    """The outcome of a paired significance test of system B against system A.

    Attributes:
        method: ``"paired-bootstrap"``, ``"approximate-randomization"`` or ``"exact-randomization"``.
        score_a: statistic of A on all items.
        score_b: statistic of B on all items.
        delta: ``score_b - score_a``.
        p_value: two-sided p-value of ``delta`` under the null hypothesis of no difference.
        trials: resamples or permutations used.
        n: number of items.
        ci_low: lower bound of the bootstrap interval of ``delta`` (paired bootstrap only).
        ci_high: upper bound of that interval.
        level: level of that interval.
    """

    method: str
    score_a: float
    score_b: float
    delta: float
    p_value: float
    trials: int
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    level: float | None = None

    def significant(self, alpha: float = 0.05) -> bool:
        """Return whether the difference is significant at ``alpha``.

        >>> PairedTest("paired-bootstrap", 0.5, 0.6, 0.1, 0.01, 1000, 50).significant()
        True
        """
        return self.p_value < alpha


def _check(values: np.ndarray, resamples: int, level: float | None = None) -> None:
    if values.ndim == 0 or len(values) == 0:
        raise UsageError("A bootstrap needs at least one item; the predictions hold none.")
    if not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise UsageError(f"The number of resamples must be a positive integer, got {resamples!r}.")
    if level is not None and not 0.0 < level < 1.0:
        raise UsageError(f"The confidence level must lie strictly between 0 and 1, got {level!r}.")


def _resampled_stats(
    values: np.ndarray, statistic: Statistic | None, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    n = len(values)
    if statistic is None:
        out = np.empty(resamples)
        flat = values.astype(float)
        for start in range(0, resamples, _BATCH):
            stop = min(start + _BATCH, resamples)
            idx = rng.integers(0, n, size=(stop - start, n))
            out[start:stop] = (
                flat[idx].mean(axis=1) if flat.ndim == 1 else flat[idx].mean(axis=1).mean(axis=-1)
            )
        return out
    return np.array(
        [statistic(values[rng.integers(0, n, size=n)]) for _ in range(resamples)], dtype=float
    )


def _stat(values: np.ndarray, statistic: Statistic | None) -> float:
    return float(np.mean(values)) if statistic is None else float(statistic(values))


def bootstrap_ci(
    values,
    rng: np.random.Generator,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    statistic: Statistic | None = None,
) -> ConfidenceInterval:
    """Return the percentile bootstrap interval of ``statistic`` over the items in ``values``.

    Args:
        values: per-item outcomes, items along axis 0 (0/1 for accuracy, counts for F1).
        rng: the bootstrap's own seeded generator.
        resamples: number of resamples.
        level: confidence level.
        statistic: function of a resampled array; ``None`` means the mean.

    Returns:
        The point estimate on all items and the interval.

    Raises:
        UsageError: no items, a non-positive number of resamples or a level outside (0, 1).

    >>> ci = bootstrap_ci([1, 1, 1, 1], np.random.default_rng(0), resamples=100)
    >>> (ci.estimate, ci.low, ci.high)
    (1.0, 1.0, 1.0)
    """
    arr = np.asarray(values)
    _check(arr, resamples, level)
    stats = _resampled_stats(arr, statistic, resamples, rng)
    alpha = 1.0 - level
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return ConfidenceInterval(
        _stat(arr, statistic), float(low), float(high), level, int(resamples), len(arr)
    )


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        raise UsageError(
            f"A paired test needs both systems scored on the same items; got {len(x)} and {len(y)} items."
        )
    return x, y


def paired_bootstrap(
    a,
    b,
    rng: np.random.Generator,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    statistic: Statistic | None = None,
) -> PairedTest:
    """Paired bootstrap test of ``b`` against ``a`` on the same items (sacrebleu ``--paired-bs``).

    The same resampled items score both systems; the p-value is the share of the
    zero-centred resampled differences at least as large in magnitude as the observed
    one, ``(c + 1) / (resamples + 1)``.

    Raises:
        UsageError: the systems have different numbers of items, or bad resamples/level.

    >>> t = paired_bootstrap([0, 1, 0, 1], [0, 1, 0, 1], np.random.default_rng(0), resamples=200)
    >>> (t.delta, t.p_value)
    (0.0, 1.0)
    """
    x, y = _pair(a, b)
    _check(x, resamples, level)
    n = len(x)
    observed = _stat(y, statistic) - _stat(x, statistic)
    deltas = np.empty(resamples)
    for i in range(resamples):
        idx = rng.integers(0, n, size=n)
        deltas[i] = _stat(y[idx], statistic) - _stat(x[idx], statistic)
    centred = deltas - deltas.mean()
    count = int(np.sum(np.abs(centred) >= abs(observed) - 1e-12))
    alpha = 1.0 - level
    low, high = np.quantile(deltas, [alpha / 2, 1 - alpha / 2])
    return PairedTest(
        "paired-bootstrap",
        _stat(x, statistic),
        _stat(y, statistic),
        observed,
        (count + 1) / (resamples + 1),
        int(resamples),
        n,
        float(low),
        float(high),
        level,
    )


def approximate_randomization(
    a,
    b,
    rng: np.random.Generator,
    trials: int = DEFAULT_RESAMPLES,
    statistic: Statistic | None = None,
) -> PairedTest:
    """Approximate randomisation test of ``b`` against ``a`` (sacrebleu ``--paired-ar``).

    Each trial swaps the two systems' outcomes on each item with probability 1/2 and
    counts differences at least as large in magnitude as the observed one; the
    p-value is ``(c + 1) / (trials + 1)``. With ``2**n <= trials`` all assignments are
    enumerated and the p-value ``c / 2**n`` is exact.

    Raises:
        UsageError: the systems have different numbers of items, or bad trials.

    Four items A always wrong and B always right: only "swap none" and "swap all"
    reach ``|delta| = 1``, so the exact p-value is 2/16.

    >>> approximate_randomization([0, 0, 0, 0], [1, 1, 1, 1], np.random.default_rng(0)).p_value
    0.125
    """
    x, y = _pair(a, b)
    _check(x, trials)
    n = len(x)
    observed = _stat(y, statistic) - _stat(x, statistic)
    bound = abs(observed) - 1e-12
    if n < 31 and 2**n <= trials:
        masks = np.array(list(itertools.product((False, True), repeat=n)))
        method, total, extra = "exact-randomization", len(masks), 0
    else:
        masks = rng.random((trials, n)) < 0.5
        method, total, extra = "approximate-randomization", trials, 1
    count = 0
    for swap in masks:
        sa = np.where(_expand(swap, x), y, x)
        sb = np.where(_expand(swap, x), x, y)
        count += abs(_stat(sb, statistic) - _stat(sa, statistic)) >= bound
    return PairedTest(
        method,
        _stat(x, statistic),
        _stat(y, statistic),
        observed,
        (count + extra) / (total + extra),
        total,
        n,
    )


def _expand(mask: np.ndarray, like: np.ndarray) -> np.ndarray:
    return mask.reshape(mask.shape + (1,) * (like.ndim - 1))


def f1_from_counts(sample: np.ndarray) -> float:
    """Micro F1 over items with columns ``(tp, n_pred, n_gold)``; 0 when nothing is predicted or gold.

    A fourth column ``tp_p`` gives precision its own hits (word alignment: precision
    ``|A∩P| / |A|``, recall ``|A∩S| / |S|``), so ``F1 = 2PR / (P + R)`` (0 when P or R is 0).

    >>> f1_from_counts(np.array([[1, 1, 1], [0, 1, 0], [0, 0, 1]]))
    0.5
    >>> round(f1_from_counts(np.array([[1, 3, 2, 2]])), 4)
    0.5714
    """
    sums = [float(v) for v in np.asarray(sample).sum(axis=0)]
    tp, pred, gold = sums[:3]
    if len(sums) > 3:
        p = sums[3] / pred if pred else 0.0
        r = tp / gold if gold else 0.0
        return 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0
    return 0.0 if pred + gold == 0 else 2 * tp / (pred + gold)


def stratified_bootstrap_ci(
    groups,
    rng: np.random.Generator,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    statistic: Statistic | None = None,
) -> tuple[ConfidenceInterval, list[ConfidenceInterval]]:
    """Bootstrap a score that is the mean over groups (language pairs) of a per-group statistic.

    Items are resampled within each group (stratified), so every resample keeps the
    groups' sizes; one set of resamples gives both the interval of the mean over
    groups and each group's own interval. With one group this is :func:`bootstrap_ci`.

    Args:
        groups: per-group item arrays (items along axis 0).
        rng: the bootstrap's own seeded generator.
        resamples: number of resamples.
        level: confidence level.
        statistic: per-group function of a resampled array; ``None`` means the mean.

    Returns:
        ``(interval of the mean over groups, [interval of each group])``.

    Raises:
        UsageError: no group, an empty group, or bad resamples/level.

    >>> overall, each = stratified_bootstrap_ci([[1, 1], [0, 0]], np.random.default_rng(0), resamples=50)
    >>> (overall.estimate, overall.low, overall.high, [c.estimate for c in each])
    (0.5, 0.5, 0.5, [1.0, 0.0])
    """
    arrays = [np.asarray(g) for g in groups]
    if not arrays:
        raise UsageError(
            "A bootstrap needs at least one group of items; the predictions hold none."
        )
    alpha = 1.0 - level
    per_group, stats = [], []
    for arr in arrays:
        _check(arr, resamples, level)
        s = _resampled_stats(arr, statistic, resamples, rng)
        stats.append(s)
        low, high = np.quantile(s, [alpha / 2, 1 - alpha / 2])
        per_group.append(
            ConfidenceInterval(
                _stat(arr, statistic), float(low), float(high), level, int(resamples), len(arr)
            )
        )
    mean = np.mean(np.vstack(stats), axis=0)
    low, high = np.quantile(mean, [alpha / 2, 1 - alpha / 2])
    estimate = float(np.mean([c.estimate for c in per_group]))
    overall = ConfidenceInterval(
        estimate, float(low), float(high), level, int(resamples), int(sum(len(a) for a in arrays))
    )
    return overall, per_group
