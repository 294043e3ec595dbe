"""TACC on hand-made embeddings with known outcomes (ties included) and its helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluators.core.errors import ConfigError
from evaluators.data.source import select_configs
from evaluators.metrics.correlation import spearman
from evaluators.metrics.triplet import (
    TripletScore,
    cosine_rows,
    length_bin,
    length_thresholds,
    macro_tacc,
    triplet_outcomes,
    triplet_score,
)
from evaluators.tasks.tacc import aggregate, cross_lingual


def test_known_outcomes_with_ties():
    target = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 4.0]])
    orig = np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [3.0, 4.0]])
    foil = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0], [4.0, 3.0]])
    # row 0: cos 1 vs 0.707 -> correct; row 1: equal -> tie; row 2: 0 vs 1 -> wrong;
    # row 3: zero vectors -> 0 vs 0 -> tie; row 4: 1 vs 24/25 -> correct
    out = triplet_outcomes(orig, foil, target)
    assert out.tolist() == [1, 0, -1, 0, 1]
    s = triplet_score(out)
    assert s == TripletScore(n=5, correct=2, ties=2, wrong=1)
    assert s.tacc == 0.4 and s.tie_rate == 0.4


def test_tie_tolerance():
    target = np.array([[1.0, 0.0]])
    orig = np.array([[1.0, 1e-4]])  # cos = 1 - 5e-9
    foil = np.array([[1.0, 0.0]])
    assert triplet_outcomes(orig, foil, target).tolist() == [0]  # within 1e-6: a tie
    assert triplet_outcomes(orig, foil, target, tie_tolerance=0.0).tolist() == [
        -1
    ]  # exact: foil wins


def test_cosine_matches_definition():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 8)), rng.standard_normal((4, 8))
    ref = [float(x @ y / np.linalg.norm(x) / np.linalg.norm(y)) for x, y in zip(a, b)]
    assert cosine_rows(a, b) == pytest.approx(ref, abs=1e-12)


def test_macro_over_present_types_and_empty():
    scores = {
        "PN": TripletScore(4, 3, 0, 1),
        "RS": TripletScore(2, 1, 1, 0),
        "AR": TripletScore(1, 0, 0, 1),
        "HS": TripletScore(5, 5, 0, 0),
    }
    assert macro_tacc(scores) == pytest.approx((0.75 + 0.5 + 0.0 + 1.0) / 4)
    assert math.isnan(macro_tacc({}))
    assert math.isnan(TripletScore(0, 0, 0, 0).tacc)


def test_spearman_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, 12).astype(float)  # with ties
    y = rng.standard_normal(12)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert spearman([1, 1, 1], [1, 2, 3]) is None  # undefined: None, the project's convention


def test_length_bins_match_numpy():
    lengths = [5, 9, 12, 20, 31, 40, 41, 50, 77]
    p33, p66 = length_thresholds(lengths)
    assert (p33, p66) == (float(np.percentile(lengths, 33)), float(np.percentile(lengths, 66)))
    bins = [length_bin(n, p33, p66) for n in lengths]
    assert bins.count("short") == 3 and bins.count("medium") == 3 and bins.count("long") == 3


def test_aggregate_by_language_type_length_level():
    rows = [
        {"lang": "deu_Latn", "perturbation": "PN", "level": "sentence", "en_orig": "a" * 10},
        {"lang": "deu_Latn", "perturbation": "PN", "level": "paragraph", "en_orig": "a" * 50},
        {"lang": "deu_Latn", "perturbation": "RS", "level": "sentence", "en_orig": "a" * 30},
        {"lang": "fra_Latn", "perturbation": "PN", "level": "sentence", "en_orig": "a" * 10},
    ]
    out = aggregate(rows, [1, -1, 0, 1], length_cut=(15.0, 35.0))
    assert out["by_type"]["deu_Latn"] == {
        "PN": TripletScore(2, 1, 0, 1),
        "RS": TripletScore(1, 0, 1, 0),
    }
    assert out["by_type"]["fra_Latn"] == {"PN": TripletScore(1, 1, 0, 0)}
    assert out["by_length"]["deu_Latn"] == {
        "short": TripletScore(1, 1, 0, 0),
        "medium": TripletScore(1, 0, 1, 0),
        "long": TripletScore(1, 0, 0, 1),
    }
    assert out["by_level"]["deu_Latn"]["paragraph"] == TripletScore(1, 0, 0, 1)


def _pick(available: list[str], requested: str | None) -> list[str]:
    """TACC's choice of configs (the one selection, with its cross-lingual filter)."""
    scored = [c for c in available if cross_lingual(c)]
    return select_configs(
        available, scored, requested, dataset="the dataset", what="cross-lingual config"
    )


def test_pick_configs_errors():
    assert _pick(["eng_Latn", "eng_Latn-fra_Latn", "eng_Latn-deu_Latn"], None) == [
        "eng_Latn-deu_Latn",
        "eng_Latn-fra_Latn",
    ]
    with pytest.raises(
        ConfigError,
        match=r"--config 'eng_Latn' is not a cross-lingual config of the dataset; "
        r"choose one of: eng_Latn-deu_Latn \(eng_Latn is not scored\)\.",
    ):
        _pick(["eng_Latn", "eng_Latn-deu_Latn"], "eng_Latn")
    with pytest.raises(ConfigError, match="'eng_Latn-fra_Latn' is not a cross-lingual config"):
        _pick(["eng_Latn", "eng_Latn-deu_Latn"], "eng_Latn-fra_Latn")
    with pytest.raises(ConfigError, match="the dataset has no cross-lingual config"):
        _pick(["eng_Latn"], None)


class NoTokenizer:
    """A sentence-only encoder (like multilingual USE): embeddings, but no tokenizer."""

    model_id = "fake/sentence-only"
    revision = "r1"

    def sentence_embeddings(self, texts, pooling="model", layer=-1, role=None):
        # "copy" embeddings: a bag of characters, so identical texts are identical vectors
        out = np.zeros((len(texts), 128), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t:
                out[i, ord(ch) % 128] += 1
        return out

    def tokenize(self, texts):
        from evaluators.core.errors import EngineUnavailableError

        raise EngineUnavailableError("no tokenizer")


def test_score_model_without_tokenizer_notes_missing_fertility():
    from evaluators.tasks.tacc import score_model

    rows = [
        {
            "lang": "deu_Latn",
            "perturbation": "PN",
            "level": "sentence",
            "en_orig": "It rains.",
            "en_foil": "It does not rain.",
            "target_orig": "It rains.",
        },
        {
            "lang": "deu_Latn",
            "perturbation": "RS",
            "level": "sentence",
            "en_orig": "dog bites man",
            "en_foil": "man bites dog",
            "target_orig": "Hund beisst Mann",
        },
    ]
    agg = score_model(NoTokenizer(), rows, "model", -1, "query")
    assert agg["by_type"]["deu_Latn"]["PN"] == TripletScore(1, 1, 0, 0)
    assert agg["by_type"]["deu_Latn"]["RS"] == TripletScore(1, 0, 1, 0)  # same characters: a tie
    assert agg["fertility"] == {}
    assert agg["notes"] == [
        "fertility unavailable: the model exposes no tokenizer (EngineUnavailableError)"
    ]


def _sentence_smith_triple_accuracy(sim_orig_para, sim_orig_mod):
    """Sentence Smith ``test_process.ipynb`` (impresso/sentence-smith@b497c3a, cell 8), transcribed:
    "Triple accuracy refers to cases where sim_orig_para >= sim_orig_mod being counted as correct"."""
    correct = 0
    for para, mod in zip(sim_orig_para, sim_orig_mod):
        if para >= mod:
            correct += 1
    return correct / len(sim_orig_para)


def test_tie_rule_win_is_sentence_smiths_rule():
    rng = np.random.default_rng(0)
    target = rng.standard_normal((60, 4))
    orig = rng.standard_normal((60, 4))
    foil = rng.standard_normal((60, 4))
    foil[::3] = orig[::3]  # exact ties (a foil the model cannot tell apart)
    sims = cosine_rows(orig, target), cosine_rows(foil, target)
    out = triplet_outcomes(orig, foil, target, tie_tolerance=0.0)
    assert triplet_score(out, "win").tacc == _sentence_smith_triple_accuracy(*sims)
    assert triplet_score(out).tacc < triplet_score(out, "win").tacc  # strict fails the 20 ties
    assert triplet_score(out).ties == triplet_score(out, "win").ties == 20


def test_aggregate_by_domain_only_where_stated():
    rows = [
        {"lang": "deu_Latn", "perturbation": "PN", "level": "sentence", "en_orig": "a", "domain": "news"},
        {"lang": "deu_Latn", "perturbation": "RS", "level": "paragraph", "en_orig": "b", "domain": "news"},
        {"lang": "deu_Latn", "perturbation": "PN", "level": "sentence", "en_orig": "c", "domain": "social"},
        {"lang": "deu_Latn", "perturbation": "PN", "level": "sentence", "en_orig": "d", "domain": None},
    ]  # fmt: skip
    out = aggregate(rows, [1, -1, 0, 1], length_cut=(1.0, 2.0))
    # news: 1 correct of 2; social: a tie (a failure); the null-domain row is in no group
    assert out["by_domain"] == {
        "deu_Latn": {"news": TripletScore(2, 1, 0, 1), "social": TripletScore(1, 0, 1, 0)}
    }
    assert out["by_level"]["deu_Latn"]["sentence"] == TripletScore(3, 2, 1, 0)
    no_domain = [{k: v for k, v in r.items() if k != "domain"} for r in rows]
    assert aggregate(no_domain, [1, -1, 0, 1], length_cut=(1.0, 2.0))["by_domain"] == {}
