"""Pearson/Spearman reporting rule and bootstrap F1 spread."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluators.metrics.alignment import score_alignments
from evaluators.metrics.correlation import average_ranks, bootstrap_f1, correlate, sentence_counts


def test_no_correlation_below_three_points():
    assert correlate([0.2, 0.3], [0.9, 0.1]).pearson is None
    got = correlate([0.2, 0.3, 0.5, 0.4], [0.1, 0.2, 0.4, 0.8])
    assert got.pearson == pytest.approx(
        np.corrcoef([0.2, 0.3, 0.5, 0.4], [0.1, 0.2, 0.4, 0.8])[0, 1]
    )
    # Ranks 1,2,4,3 vs 1,2,3,4: rho = 1 - 6*2/(4*15) = 0.8.
    assert got.spearman == pytest.approx(0.8)
    assert correlate([1, 1, 1], [1, 2, 3]).pearson is None


def test_spearman_with_ties_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    x, y = [0.3, 0.1, 0.3, 0.2, 0.9], [1, 2, 2, 3, 5]
    assert correlate(x, y).spearman == pytest.approx(stats.spearmanr(x, y).statistic)
    assert average_ranks([2, 2, 2]).tolist() == [2.0, 2.0, 2.0]


def test_sentence_counts_sum_to_score_alignments():
    rng = np.random.default_rng(0)
    sure = [{(i, i) for i in range(rng.integers(1, 6))} for _ in range(20)]
    pred = [{(i, (i + int(rng.integers(0, 2))) % 5) for i in range(5)} for _ in range(20)]
    c = sentence_counts(sure, None, pred).sum(axis=0)
    s = score_alignments(sure, None, pred)
    assert tuple(c) == (s.a_and_s, s.a_and_p, s.n_pred, s.n_sure)
    spread = bootstrap_f1(sentence_counts(sure, None, pred), np.random.default_rng(1), 300)
    assert spread.f1 == pytest.approx(s.f1)
    assert spread.low <= s.f1 <= spread.high and spread.std > 0
    assert bootstrap_f1(sentence_counts(sure, None, pred), np.random.default_rng(1), 300) == spread


def test_bootstrap_on_real_silver_small(shared_data):
    # Silver_Small eng-deu (227 sentences): a half-right prediction must show a visible spread.
    path = shared_data / "silveralign_small" / "eng_deu" / "gold.txt"
    if not path.exists():
        pytest.skip(f"{path} absent")
    by_sent: dict[int, set] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        sid, _, links = line.partition("\t")
        for link in links.split():
            i, j = link.split("-")
            by_sent.setdefault(int(sid), set()).add((int(i), int(j)))
    sure = [by_sent[k] for k in sorted(by_sent)]
    # A crude "aligner": the gold links of every other sentence only.
    pred = [links if n % 2 else set() for n, links in enumerate(sure)]
    spread = bootstrap_f1(sentence_counts(sure, None, pred), np.random.default_rng(0), 500)
    assert spread.f1 == pytest.approx(score_alignments(sure, None, pred).f1)
    assert 0 < spread.std < 0.5 and spread.low < spread.f1 < spread.high
    assert not math.isnan(spread.std)
