"""The paper's fertility analysis (one tokenizer, TACC averaged over models)."""

from __future__ import annotations

import csv

import pytest

from evaluators.metrics.fertility import OFFLINE_SUBSTITUTE, paper_fertility


def test_average_over_models_not_per_model():
    texts = {"a": ["x y", "x y z"], "b": ["x"], "c": ["x y z w v"]}
    tacc = {"m1": {"a": 0.6, "b": 0.9, "c": 0.2}, "m2": {"a": 0.8, "b": 0.7, "c": 0.4}}
    r = paper_fertility(texts, tacc, lambda ts: [t.split() for t in ts], "whitespace")
    assert r.mean_tacc == pytest.approx((0.7, 0.8, 0.3))
    assert r.fertility == (2.5, 1.0, 5.0) and r.spearman == pytest.approx(-1.0)
    # A language no model scored is left out; under 3 languages no correlation is reported.
    r2 = paper_fertility(
        {"a": ["x"], "b": ["x y"], "z": ["q"]},
        {"m1": {"a": 0.5, "b": 0.4}},
        lambda ts: [t.split() for t in ts],
    )
    assert r2.languages == ("a", "b") and r2.spearman is None
    assert "XLM-R" in OFFLINE_SUBSTITUTE


def test_real_pawsx_targets_with_character_tokenizer(shared_data):
    folder = shared_data / "pawsx"
    if not (folder / "test-de.tsv").exists():
        pytest.skip(f"{folder} absent")
    texts = {}
    for lang in ("de", "fr", "ja", "zh"):
        with open(folder / f"test-{lang}.tsv", encoding="utf-8") as fh:
            texts[lang] = [row[0] for _, row in zip(range(200), csv.reader(fh, delimiter="\t"))]
    tacc = {"m": {"de": 0.6, "fr": 0.65, "ja": 0.3, "zh": 0.35}}
    r = paper_fertility(texts, tacc, lambda ts: [t.split() for t in ts], "whitespace")
    # Whitespace "subtokens": Japanese/Chinese sentences are single chunks, far fewer than German/French words.
    by = dict(zip(r.languages, r.fertility))
    assert by["ja"] < by["de"] and by["zh"] < by["fr"] and r.spearman is not None
