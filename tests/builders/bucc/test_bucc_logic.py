"""Construction of BUCC-style corpora: insertion, dedup, ids, split disjointness, seeding."""

from __future__ import annotations

import re

import numpy as np
import pytest

from builders.bucc import logic
from evaluators.core.errors import InputFileError, UsageError


def corpus(n=600, extra=()):
    pairs = [(str(i), f"Satz Nummer {i} hier.", f"Sentence number {i} here.") for i in range(n)]
    return pairs + list(extra)


def build(pairs, n_gold=20, fraction=0.1, seed=0, mask=None):
    rng = np.random.default_rng(seed)
    mask = mask if mask is not None else [i < 100 for i in range(len(pairs))]
    pools = logic.partition_parallel(pairs, mask, rng)
    return logic.construct(
        pools,
        n_gold=n_gold,
        parallel_fraction=fraction,
        test_fraction=0.5,
        src_prefix="deu",
        tgt_prefix="eng",
        rng=rng,
    )


def texts(split):
    return {t for _, t in split.src} | {t for _, t in split.tgt}


def test_sizes_fraction_and_ids():
    c = build(corpus())
    for name in ("train", "test"):
        s = c.splits[name]
        assert len(s.gold) == 10
        assert len(s.src) == len(s.tgt) == 100  # ceil(10 / 0.1)
        assert all(re.fullmatch(r"deu-\d{9}", i) for i, _ in s.src)
        assert all(re.fullmatch(r"eng-\d{9}", i) for i, _ in s.tgt)
        assert c.counts[name]["src_parallel_fraction"] == 0.1
    # ids are numbered train first, then test, with no reuse
    assert c.splits["train"].src[0][0] == "deu-000000001"
    assert c.splits["test"].src[0][0] == "deu-000000101"


def test_gold_pairs_are_translations_and_distractors_are_not():
    c = build(corpus())
    for s in c.splits.values():
        src, tgt = dict(s.src), dict(s.tgt)
        for a, b in s.gold:
            assert re.search(r"\d+", src[a]).group() == re.search(r"\d+", tgt[b]).group()
        gold_src = {a for a, _ in s.gold}
        gold_tgt = {b for _, b in s.gold}
        other_src = {re.search(r"\d+", t).group() for i, t in s.src if i not in gold_src}
        other_tgt = {re.search(r"\d+", t).group() for i, t in s.tgt if i not in gold_tgt}
        assert not other_src & other_tgt  # no unlabelled translation pair among distractors
        # gold sentences sit at random positions, not first
        assert [i for i, _ in s.src[: len(s.gold)]] != sorted(gold_src)


def test_splits_share_no_text_even_across_sides():
    # "Amen." is both a German and an English text: as a source distractor in one split and a
    # target distractor in the other it would span two splits; it must be removed from test.
    gold = corpus(20)
    src_pool = ["Amen."] + [f"Quelle {i}." for i in range(179)]
    tgt_pool = ["Amen."] + [f"Target {i}." for i in range(179)]
    dropped = []
    for seed in range(10):
        c = logic.construct(
            logic.Pools(gold, src_pool, tgt_pool),
            n_gold=20,
            parallel_fraction=0.1,
            test_fraction=0.5,
            src_prefix="deu",
            tgt_prefix="eng",
            rng=np.random.default_rng(seed),
        )
        assert not texts(c.splits["train"]) & texts(c.splits["test"])
        n = c.counts["dropped"]["test_distractors_sharing_text_with_train"]
        dropped.append(n)
        assert len(c.splits["test"].src) + len(c.splits["test"].tgt) == 200 - n
    assert 0 < sum(dropped) < 10  # the case occurred and was handled


def test_seeded_and_deterministic():
    a, b, other = build(corpus(), seed=4), build(corpus(), seed=4), build(corpus(), seed=5)
    assert a.splits == b.splits
    assert a.splits["train"].gold != other.splits["train"].gold


def test_repeated_texts_are_dropped_everywhere():
    pairs = corpus(20) + [
        ("r1", "Wiederholt.", "Repeated one."),
        ("r2", "Wiederholt.", "Repeated two."),
    ]
    kept, dropped = logic.drop_repeated(pairs)
    assert dropped == 2 and all(p[0] not in ("r1", "r2") for p in kept)


def test_distractor_equal_to_gold_text_is_removed():
    pairs = corpus(100)
    pools = logic.Pools(
        pairs[:10],
        [pairs[0][1], "Extra eins."] * 3 + [f"d{i}" for i in range(200)],
        [f"e{i}" for i in range(200)],
    )
    c = logic.construct(
        pools,
        n_gold=10,
        parallel_fraction=0.1,
        test_fraction=0.5,
        src_prefix="deu",
        tgt_prefix="eng",
        rng=np.random.default_rng(0),
    )
    src_texts = [t for s in c.splits.values() for _, t in s.src]
    assert src_texts.count(pairs[0][1]) == 1  # only the gold copy
    assert src_texts.count("Extra eins.") <= 1


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"parallel_fraction": 0.0}, UsageError, r"--parallel-fraction must be in \(0, 1\]"),
        ({"test_fraction": 1.0}, UsageError, r"--test-fraction must be in \(0, 1\)"),
        ({"n_gold": 1}, UsageError, "--gold-pairs must be at least 2"),
        ({"n_gold": 500}, InputFileError, "Only 100 usable parallel units for 500 gold pairs"),
        (
            {"parallel_fraction": 0.01},
            InputFileError,
            r"source side has 150 distinct distractor sentences but 1980 are needed",
        ),
        ({"src_prefix": "eng"}, UsageError, "different id prefixes"),
    ],
)
def test_errors(kwargs, error, message):
    pools = logic.partition_parallel(
        corpus(400), [i < 100 for i in range(400)], np.random.default_rng(0)
    )
    args = dict(
        n_gold=20,
        parallel_fraction=0.1,
        test_fraction=0.5,
        src_prefix="deu",
        tgt_prefix="eng",
        rng=np.random.default_rng(0),
    )
    args.update(kwargs)
    with pytest.raises(error, match=message):
        logic.construct(pools, **args)


def test_partition_mask_length_error():
    with pytest.raises(UsageError, match="gold_mask has 1 entries for 2 parallel units"):
        logic.partition_parallel(corpus(2), [True], np.random.default_rng(0))
