"""Bootstrap intervals and paired tests: hand-computable cases and coverage on a simulation."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.core.errors import UsageError
from evaluators.metrics.bootstrap import (
    approximate_randomization,
    bootstrap_ci,
    f1_from_counts,
    paired_bootstrap,
)


def test_two_items_interval_is_hand_computable():
    # Resampling [0, 1] gives means 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4: the central 95%
    # reaches both ends; the central 40% (quantiles 0.3 and 0.7) is the single value 0.5.
    rng = np.random.default_rng(1)
    ci = bootstrap_ci([0, 1], rng, resamples=4000, level=0.95)
    assert (ci.estimate, ci.low, ci.high, ci.n, ci.resamples) == (0.5, 0.0, 1.0, 2, 4000)
    ci = bootstrap_ci([0, 1], rng, resamples=4000, level=0.4)
    assert (ci.low, ci.high) == (0.5, 0.5)
    assert ci.to_fields() == {"ci_low": 0.5, "ci_high": 0.5, "ci_level": 0.4, "ci_resamples": 4000}


def test_seeded_and_custom_statistic():
    values = np.arange(30) % 3 == 0
    a = bootstrap_ci(values, np.random.default_rng(7), resamples=300)
    b = bootstrap_ci(values, np.random.default_rng(7), resamples=300)
    assert a == b and a.low < a.estimate < a.high
    counts = np.array([[1, 1, 1]] * 8 + [[0, 1, 0]] * 2 + [[0, 0, 1]] * 2)
    ci = bootstrap_ci(counts, np.random.default_rng(0), resamples=300, statistic=f1_from_counts)
    assert ci.estimate == pytest.approx(2 * 8 / (10 + 10))
    assert ci.low < ci.estimate < ci.high <= 1.0


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_coverage_at_the_stated_rate(level):
    # 300 simulated benchmarks of 150 Bernoulli(0.3) items: the interval covers 0.3 at about `level`.
    sim = np.random.default_rng(42)
    hits = 0
    reps = 300
    for _ in range(reps):
        items = sim.random(150) < 0.3
        ci = bootstrap_ci(items, sim, resamples=400, level=level)
        hits += ci.low <= 0.3 <= ci.high
    # binomial sd of the coverage estimate is ~0.015; allow 3 sd plus the percentile method's small-n slack
    assert abs(hits / reps - level) < 0.05


def test_exact_randomization_four_items():
    t = approximate_randomization([0, 0, 0, 0], [1, 1, 1, 1], np.random.default_rng(0), trials=1000)
    assert t.method == "exact-randomization" and t.trials == 16
    assert (t.delta, t.p_value) == (1.0, 2 / 16)
    assert not t.significant(0.05)


def test_paired_tests_detect_a_real_difference_and_not_a_null_one():
    rng = np.random.default_rng(3)
    a = rng.random(400) < 0.5
    b = a.copy()
    flip = rng.choice(400, 60, replace=False)
    b[flip] = True  # B fixes up to 60 of A's errors and breaks none
    bs = paired_bootstrap(a, b, np.random.default_rng(0), resamples=500)
    ar = approximate_randomization(a, b, np.random.default_rng(0), trials=500)
    assert bs.delta == ar.delta == pytest.approx(b.mean() - a.mean()) and bs.delta > 0.05
    assert bs.p_value < 0.01 and ar.p_value < 0.01 and bs.significant()
    assert bs.ci_low > 0
    c = a.copy()
    c[[0, 1]] = ~c[[0, 1]]  # one item better, one worse: no difference at all
    null = approximate_randomization(a, c, np.random.default_rng(0), trials=500)
    assert null.p_value > 0.5 and not null.significant()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: bootstrap_ci([], np.random.default_rng(0)), "at least one item"),
        (
            lambda: bootstrap_ci([1], np.random.default_rng(0), resamples=0),
            "positive integer, got 0",
        ),
        (
            lambda: bootstrap_ci([1], np.random.default_rng(0), level=1.0),
            "strictly between 0 and 1, got 1.0",
        ),
        (lambda: paired_bootstrap([1, 0], [1], np.random.default_rng(0)), "got 2 and 1 items"),
    ],
)
def test_errors(call, message):
    with pytest.raises(UsageError, match=message):
        call()
