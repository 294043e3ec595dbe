"""Analyses around the grid: correlation, POS probe, frequency bins, training corpora, bootstrap spread."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from evaluators.metrics.aligner_corpus import setting_corpus
from evaluators.metrics.alignment import (
    FREQ_BINS,
    freq_bin_label,
)
from evaluators.metrics.correlation import MIN_N, bootstrap_f1, correlate

if TYPE_CHECKING:
    from evaluators.tasks.aligners import Params


def correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson r from :data:`MIN_N` points on, ``None`` (JSON null) below or where it is undefined.

    >>> round(correlation([0.1, 0.2, 0.4], [0.5, 0.6, 0.8]), 6)
    1.0
    >>> correlation([0.1, 0.2], [0.3, 0.1]) is None
    True
    """
    return correlate(xs, ys, min_n=MIN_N).pearson


def _pos_tagger():
    try:
        import nltk

        nltk.pos_tag(["test"])
        return nltk.pos_tag
    except LookupError:
        return None
    except ImportError:
        return None


def _bins(counts: Counter, words: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {freq_bin_label(lo, hi): set() for lo, hi in FREQ_BINS}
    for w in words:
        c = counts.get(w, 0)
        for lo, hi in FREQ_BINS:
            if c >= lo and (hi is None or c <= hi):
                out[freq_bin_label(lo, hi)].add(w)
    return out


def training_corpora(
    silver: dict, gold: dict | None, extra_src, extra_tgt, args: Params
) -> tuple[dict, dict]:
    """Return the aligner training corpora and, per setting, ``(corpus name, first line)`` of its sentences.

    ``per-setting``: a ``silver`` and a ``gold`` corpus, each its setting's sentences
    then the de-duplicated extra text; ``joint``: one corpus, silver then gold then extra text.
    """
    settings = [("silver", silver)] + ([("gold", gold)] if gold else [])
    if args.training == "per-setting":
        corpora = {
            name: setting_corpus(
                d["src"], d["tgt"], extra_src, extra_tgt, dedup=args.dedup, lowercase=args.lowercase
            )
            for name, d in settings
        }
        return corpora, {name: (name, 0) for name, _ in settings}
    src = silver["src"] + (gold["src"] if gold else [])
    tgt = silver["tgt"] + (gold["tgt"] if gold else [])
    corpora = {
        "joint": setting_corpus(
            src, tgt, extra_src, extra_tgt, dedup=args.dedup, lowercase=args.lowercase
        )
    }
    return corpora, {
        "silver": ("joint", 0),
        **({"gold": ("joint", len(silver["src"]))} if gold else {}),
    }


def _spread(prefix: str, counts, boot_rng, resamples: int) -> dict:
    if not resamples or not len(counts):
        return {}
    sp = bootstrap_f1(counts, boot_rng, resamples)
    return {f"{prefix}_f1_std": sp.std, f"{prefix}_f1_low": sp.low, f"{prefix}_f1_high": sp.high}
