"""Pure construction of BUCC-style mining corpora from parallel text plus distractors.

A constructed corpus hides a small fraction of translation pairs among
monolingual distractor sentences on each side (BUCC: Zweigenbaum et al. 2017,
2018). Everything here takes plain values and a seeded ``np.random.Generator``.

Guarantees (each one is tested):
    * within a side, every text occurs once (exact-duplicate texts are dropped),
      so a gold sentence never has an unlabelled twin;
    * the source pool and the target pool of distractors come from *different*
      parallel units, so no two distractors are unlabelled translations;
    * no text occurs in both splits, on either side;
    * ids are ``<iso3>-<9 digits>``, numbered in shuffled order, train first.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import numpy as np

from builders.bucc.spec import ID_WIDTH
from evaluators.core.errors import InputFileError, UsageError
from evaluators.schema import bucc as schema

Pair = tuple[str, str, str]
"""``(unit_id, src_text, tgt_text)``: one parallel unit (verse, line)."""


@dataclass(frozen=True)
class Pools:
    """Material for one corpus: gold candidates and the two distractor pools.

    Attributes:
        gold: parallel units that may become gold pairs.
        src_pool: distractor texts for the source side.
        tgt_pool: distractor texts for the target side (from other units than ``src_pool``).
        dropped_repeated: units dropped because a text of theirs occurs more than once.
    """

    gold: list[Pair]
    src_pool: list[str]
    tgt_pool: list[str]
    dropped_repeated: int = 0


@dataclass(frozen=True)
class Split:
    """One split of a mining corpus.

    Attributes:
        src: ``(id, text)`` of the source side, in corpus order.
        tgt: ``(id, text)`` of the target side, in corpus order.
        gold: ``(src_id, tgt_id)`` pairs, sorted.
    """

    src: list[tuple[str, str]]
    tgt: list[tuple[str, str]]
    gold: list[tuple[str, str]]


@dataclass(frozen=True)
class Construction:
    """The result of :func:`construct`: splits plus the counts for the manifest."""

    splits: dict[str, Split]
    counts: dict[str, object] = field(default_factory=dict)


def make_id(prefix: str, number: int) -> str:
    """Return a BUCC-style sentence id.

    >>> make_id("deu", 7)
    'deu-000000007'
    """
    return f"{prefix}-{number:0{ID_WIDTH}d}"


def drop_repeated(pairs: Sequence[Pair]) -> tuple[list[Pair], int]:
    """Drop every unit whose source or target text occurs more than once (all copies).

    A repeated verse ("his offering was one silver charger ...", Numbers 7) would
    make two units translations of each other; keeping one copy would still
    leave a near-parallel twin, so all copies go.

    >>> drop_repeated([("1", "a", "A"), ("2", "b", "B"), ("3", "a", "C"), ("4", "d", "B ")])
    ([], 4)
    >>> drop_repeated([("1", "a", "A"), ("2", "b", "B")])
    ([('1', 'a', 'A'), ('2', 'b', 'B')], 0)
    """
    src_n = Counter(_norm(p[1]) for p in pairs)
    tgt_n = Counter(_norm(p[2]) for p in pairs)
    kept = [
        p
        for p in pairs
        if _norm(p[1]) and _norm(p[2]) and src_n[_norm(p[1])] == 1 and tgt_n[_norm(p[2])] == 1
    ]
    return kept, len(pairs) - len(kept)


def _norm(text: str) -> str:
    return " ".join(text.split())


def partition_parallel(
    pairs: Sequence[Pair], gold_mask: Sequence[bool], rng: np.random.Generator
) -> Pools:
    """Split parallel units into gold candidates and two disjoint distractor pools.

    Units with ``gold_mask`` true are gold candidates; the others are shuffled
    and cut in two halves: the first gives source-side distractors, the second
    target-side ones, so no distractor pair is an unlabelled translation.

    >>> pairs = [(str(i), f"s{i}", f"t{i}") for i in range(6)]
    >>> pools = partition_parallel(pairs, [True, True, False, False, False, False], np.random.default_rng(0))
    >>> [p[0] for p in pools.gold], len(pools.src_pool), len(pools.tgt_pool)
    (['0', '1'], 2, 2)
    >>> {t[1:] for t in pools.src_pool} & {t[1:] for t in pools.tgt_pool}
    set()

    Raises:
        UsageError: ``gold_mask`` does not match ``pairs``.
    """
    if len(gold_mask) != len(pairs):
        raise UsageError(
            f"gold_mask has {len(gold_mask)} entries for {len(pairs)} parallel units; they must match."
        )
    masked = {p[0] for p, m in zip(pairs, gold_mask) if m}
    kept, dropped = drop_repeated(pairs)
    gold = [p for p in kept if p[0] in masked]
    rest = [p for p in kept if p[0] not in masked]
    order = rng.permutation(len(rest))
    half = len(rest) // 2
    src_pool = [rest[i][1] for i in order[:half]]
    tgt_pool = [rest[i][2] for i in order[half:]]
    return Pools(gold, src_pool, tgt_pool, dropped)


def dedup(texts: Sequence[str], exclude: AbstractSet[str] = frozenset()) -> list[str]:
    """Return whitespace-normalised, non-empty texts in first-seen order, each once, none in ``exclude``.

    >>> dedup([" a  b", "c", "a b", "", "d"], exclude={"d"})
    ['a b', 'c']
    """
    seen = set(exclude)
    out = []
    for text in texts:
        t = _norm(text)
        if t and t not in seen:
            seen.add(t)
            out.append(t)
    return out


def construct(
    pools: Pools,
    *,
    n_gold: int,
    parallel_fraction: float,
    test_fraction: float,
    src_prefix: str,
    tgt_prefix: str,
    rng: np.random.Generator,
) -> Construction:
    """Insert ``n_gold`` translation pairs into distractors and split train/test.

    Each split's side has ``ceil(gold_in_split / parallel_fraction)`` sentences:
    its gold sentences plus distractors, shuffled together.

    Args:
        pools: gold candidates and distractor pools (see :func:`partition_parallel`).
        n_gold: gold pairs over both splits.
        parallel_fraction: share of each side's sentences that are gold (0 < f <= 1).
        test_fraction: share of gold pairs and distractors going to test (0 < f < 1).
        src_prefix: id prefix of the source side (``deu``).
        tgt_prefix: id prefix of the target side (``eng``).
        rng: the only source of randomness.

    Returns:
        splits ``train``/``test`` and counts.

    Raises:
        UsageError: a fraction is out of range, or there is too little material
            (the message says how much is needed and how to get it).

    >>> pairs = [(str(i), f"quelle {i}", f"source {i}") for i in range(40)]
    >>> pools = partition_parallel(pairs, [i < 10 for i in range(40)], np.random.default_rng(1))
    >>> c = construct(pools, n_gold=4, parallel_fraction=0.25, test_fraction=0.5,
    ...               src_prefix="deu", tgt_prefix="eng", rng=np.random.default_rng(1))
    >>> [(s, len(c.splits[s].src), len(c.splits[s].tgt), len(c.splits[s].gold)) for s in ("train", "test")]
    [('train', 8, 8, 2), ('test', 8, 8, 2)]
    """
    _check_construct(n_gold, parallel_fraction, test_fraction, src_prefix, tgt_prefix)
    # rng draws, in this order: the gold choice, the two distractor pools, then each split's sides.
    gold_all, gold_split = _choose_gold(pools, n_gold, test_fraction, rng)
    src_pool, tgt_pool = _distractor_pools(pools, gold_split, rng)
    need = {s: math.ceil(len(g) / parallel_fraction) - len(g) for s, g in gold_split.items()}
    total_need = sum(need.values())
    for side, pool in (("source", src_pool), ("target", tgt_pool)):
        if len(pool) < total_need:
            raise InputFileError(
                f"The {side} side has {len(pool)} distinct distractor sentences but {total_need} are needed "
                f"for {n_gold} gold pairs at --parallel-fraction {parallel_fraction}; "
                f"give more monolingual text, lower --gold-pairs or raise --parallel-fraction."
            )
    splits_raw = _fill_splits(gold_split, src_pool, tgt_pool, need)
    bad_gold, dropped_cross = _drop_test_shared_with_train(splits_raw)
    out, counts = _shuffle_and_number(splits_raw, src_prefix, tgt_prefix, rng)
    counts["dropped"] = {
        "repeated_text_units": pools.dropped_repeated,
        "test_gold_pairs_sharing_text_with_train": len(bad_gold),
        "test_distractors_sharing_text_with_train": dropped_cross,
    }
    counts["pools"] = {
        "gold_candidates": len(gold_all),
        "src_distractors_available": len(src_pool),
        "tgt_distractors_available": len(tgt_pool),
    }
    return Construction(out, counts)


def _check_construct(
    n_gold: int, parallel_fraction: float, test_fraction: float, src_prefix: str, tgt_prefix: str
) -> None:
    if not 0 < parallel_fraction <= 1:
        raise UsageError(f"--parallel-fraction must be in (0, 1], got {parallel_fraction}.")
    if not 0 < test_fraction < 1:
        raise UsageError(f"--test-fraction must be in (0, 1), got {test_fraction}.")
    if n_gold < 2:
        raise UsageError(f"--gold-pairs must be at least 2 (one per split), got {n_gold}.")
    if src_prefix == tgt_prefix:
        raise UsageError(f"The two sides need different id prefixes, got {src_prefix!r} twice.")


_Gold = list[tuple[str, str, str]]
_Side = list[tuple[str, bool, int]]


def _choose_gold(
    pools: Pools, n_gold: int, test_fraction: float, rng: np.random.Generator
) -> tuple[_Gold, dict[str, _Gold]]:
    """Draw ``n_gold`` usable units (one permutation) and split them train/test; (usable, split)."""
    gold_all = [(pid, _norm(s), _norm(t)) for pid, s, t in pools.gold if _norm(s) and _norm(t)]
    if len(gold_all) < n_gold:
        raise InputFileError(
            f"Only {len(gold_all)} usable parallel units for {n_gold} gold pairs; "
            f"pass a larger parallel corpus or lower --gold-pairs."
        )
    chosen = [gold_all[i] for i in rng.permutation(len(gold_all))[:n_gold]]
    n_test = min(max(1, round(n_gold * test_fraction)), n_gold - 1)
    return gold_all, {"train": chosen[: n_gold - n_test], "test": chosen[n_gold - n_test :]}


def _distractor_pools(
    pools: Pools, gold_split: dict[str, _Gold], rng: np.random.Generator
) -> tuple[list[str], list[str]]:
    """The distinct distractors of each side, none equal to a gold text, shuffled (source, then target)."""
    chosen = gold_split["train"] + gold_split["test"]
    gold_src = {s for _, s, _ in chosen}
    gold_tgt = {t for _, _, t in chosen}
    # A distractor equal to any gold text (either side: "Amen." is German and English)
    # would be an unlabelled twin or translation of a gold sentence.
    src_pool = dedup(pools.src_pool, exclude=gold_src | gold_tgt)
    tgt_pool = dedup(pools.tgt_pool, exclude=gold_src | gold_tgt)
    src_pool = [src_pool[i] for i in rng.permutation(len(src_pool))]
    tgt_pool = [tgt_pool[i] for i in rng.permutation(len(tgt_pool))]
    return src_pool, tgt_pool


def _fill_splits(
    gold_split: dict[str, _Gold], src_pool: list[str], tgt_pool: list[str], need: dict[str, int]
) -> dict[str, tuple[_Side, _Side]]:
    """Each split's sides as ``(text, is_gold, gold index)``: its gold, then its share of distractors."""
    splits_raw: dict[str, tuple[_Side, _Side]] = {}
    start = 0
    for split in ("train", "test"):
        distract_src = src_pool[start : start + need[split]]
        distract_tgt = tgt_pool[start : start + need[split]]
        start += need[split]
        src = [(s, True, k) for k, (_, s, _) in enumerate(gold_split[split])] + [
            (t, False, -1) for t in distract_src
        ]
        tgt = [(t, True, k) for k, (_, _, t) in enumerate(gold_split[split])] + [
            (t, False, -1) for t in distract_tgt
        ]
        splits_raw[split] = (src, tgt)
    return splits_raw


def _drop_test_shared_with_train(splits_raw: dict[str, tuple[_Side, _Side]]) -> tuple[set, int]:
    """Drop from test (in place) every text train holds on either side; (dropped gold, distractors)."""
    # A source text may equal a target text ("Amen."); drop from test whatever
    # train already holds on either side so that no text spans two splits.
    train_texts = {t for side in splits_raw["train"] for t, _, _ in side}
    test_src, test_tgt = splits_raw["test"]
    bad_gold = {k for t, g, k in test_src + test_tgt if g and t in train_texts}
    dropped_cross = sum(1 for t, g, _ in test_src + test_tgt if not g and t in train_texts)
    splits_raw["test"] = (
        [(t, g, k) for t, g, k in test_src if t not in train_texts and not (g and k in bad_gold)],
        [(t, g, k) for t, g, k in test_tgt if t not in train_texts and not (g and k in bad_gold)],
    )
    return bad_gold, dropped_cross


def _shuffle_and_number(
    splits_raw: dict[str, tuple[_Side, _Side]],
    src_prefix: str,
    tgt_prefix: str,
    rng: np.random.Generator,
) -> tuple[dict[str, Split], dict[str, object]]:
    """Shuffle each side (train then test, source then target), number the ids across splits."""
    out: dict[str, Split] = {}
    counts: dict[str, object] = {}
    next_src, next_tgt = 1, 1
    for split in ("train", "test"):
        src, tgt = splits_raw[split]
        src = [src[i] for i in rng.permutation(len(src))]
        tgt = [tgt[i] for i in rng.permutation(len(tgt))]
        src_ids = [make_id(src_prefix, next_src + i) for i in range(len(src))]
        tgt_ids = [make_id(tgt_prefix, next_tgt + i) for i in range(len(tgt))]
        next_src += len(src)
        next_tgt += len(tgt)
        src_of = {k: i for i, (_, g, k) in zip(src_ids, src) if g}
        tgt_of = {k: i for i, (_, g, k) in zip(tgt_ids, tgt) if g}
        gold = sorted((src_of[k], tgt_of[k]) for k in src_of)
        out[split] = Split(
            src=[(i, t) for i, (t, _, _) in zip(src_ids, src)],
            tgt=[(i, t) for i, (t, _, _) in zip(tgt_ids, tgt)],
            gold=gold,
        )
        counts[split] = {
            "src_sentences": len(src),
            "tgt_sentences": len(tgt),
            "gold_pairs": len(gold),
            "src_parallel_fraction": len(gold) / len(src) if src else 0.0,
            "tgt_parallel_fraction": len(gold) / len(tgt) if tgt else 0.0,
        }
    return out, counts


def split_rows(split: Split) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Return ``(main_rows, gold_rows)`` of one split in the ``bucc`` schema.

    >>> main, gold = split_rows(Split([("deu-1", "a")], [("eng-1", "A")], [("deu-1", "eng-1")]))
    >>> main
    [{'id': 'deu-1', 'side': 'src', 'text': 'a'}, {'id': 'eng-1', 'side': 'tgt', 'text': 'A'}]
    >>> gold
    [{'src_id': 'deu-1', 'tgt_id': 'eng-1'}]
    """
    main = [{schema.ID: i, schema.SIDE: "src", schema.TEXT: t} for i, t in split.src]
    main += [{schema.ID: i, schema.SIDE: "tgt", schema.TEXT: t} for i, t in split.tgt]
    gold = [{schema.SRC_ID: s, schema.TGT_ID: t} for s, t in split.gold]
    return main, gold


def drop_shared(train: Split, test: Split) -> tuple[Split, dict[str, int]]:
    """Drop the test sentences whose text also occurs in train (either side), and gold pairs that lose a side.

    Official BUCC train and test files share some sentences; a shared text would let a
    threshold learned on train leak into test.

    >>> train = Split([("s1", "a")], [("t1", "b")], [("s1", "t1")])
    >>> test = Split([("s2", "a"), ("s3", "c")], [("t3", "d")], [("s2", "t3"), ("s3", "t3")])
    >>> kept, counts = drop_shared(train, test)
    >>> kept.src, kept.gold, counts["test_gold_pairs_dropped"]
    ([('s3', 'c')], [('s3', 't3')], 1)
    """
    texts = {t for _, t in train.src} | {t for _, t in train.tgt}
    bad = {i for i, t in test.src + test.tgt if t in texts}
    kept = Split(
        [(i, t) for i, t in test.src if i not in bad],
        [(i, t) for i, t in test.tgt if i not in bad],
        [(s, t) for s, t in test.gold if s not in bad and t not in bad],
    )
    return kept, {
        "test_sentences_sharing_text_with_train": len(bad),
        "test_gold_pairs_dropped": len(test.gold) - len(kept.gold),
    }


def drop_repeated_texts(split: Split) -> tuple[Split, dict[str, int]]:
    """Drop the sentences whose text repeats on their side, and gold pairs that lose a side.

    LASER's ``bucc.py`` maps a mined text back to an id only when no other sentence of
    that side has the text, so such sentences are never predicted (``--unify``).

    >>> s = Split([("s1", "a"), ("s2", "a"), ("s3", "b")], [("t1", "a")], [("s1", "t1"), ("s3", "t1")])
    >>> kept, counts = drop_repeated_texts(s)
    >>> kept.src, kept.gold, counts
    ([('s3', 'b')], [('s3', 't1')], {'sentences_with_repeated_text': 2, 'gold_pairs_dropped': 1})
    """
    bad: set[str] = set()
    for side in (split.src, split.tgt):
        seen: dict[str, int] = {}
        for _, text in side:
            seen[text] = seen.get(text, 0) + 1
        bad |= {i for i, text in side if seen[text] > 1}
    kept = Split(
        [(i, t) for i, t in split.src if i not in bad],
        [(i, t) for i, t in split.tgt if i not in bad],
        [(s, t) for s, t in split.gold if s not in bad and t not in bad],
    )
    return kept, {
        "sentences_with_repeated_text": len(bad),
        "gold_pairs_dropped": len(split.gold) - len(kept.gold),
    }
