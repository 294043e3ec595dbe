"""Analyses around the grid: correlation, POS probe, frequency bins, training corpora, bootstrap spread."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from evaluators.core.optional import find
from evaluators.metrics.aligner_corpus import setting_corpus
from evaluators.metrics.alignment import (
    FREQ_BINS,
    freq_bin_label,
    restrict_source,
    score_alignments,
)
from evaluators.metrics.correlation import MIN_N, bootstrap_f1, correlate

if TYPE_CHECKING:
    import numpy as np

    from evaluators.tasks.aligners import Params

from evaluators.tasks.aligners.grid import config_label


def correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson r from :data:`MIN_N` points on, ``None`` (JSON null) below or where it is undefined.

    >>> round(correlation([0.1, 0.2, 0.4], [0.5, 0.6, 0.8]), 6)
    1.0
    >>> correlation([0.1, 0.2], [0.3, 0.1]) is None
    True
    """
    return correlate(xs, ys, min_n=MIN_N).pearson


def _pos_tagger() -> Any:
    """NLTK's POS tagger when nltk (the ``build`` extra) and its tagger data are installed, else ``None``."""
    nltk = find("nltk")
    if nltk is None:
        return None
    try:
        nltk.pos_tag(["test"])
    except LookupError:  # the tagger's data is not downloaded
        return None
    return nltk.pos_tag


def _bins(counts: Counter, words: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {freq_bin_label(lo, hi): set() for lo, hi in FREQ_BINS}
    for w in words:
        c = counts.get(w, 0)
        for lo, hi in FREQ_BINS:
            if c >= lo and (hi is None or c <= hi):
                out[freq_bin_label(lo, hi)].add(w)
    return out


def training_corpora(
    silver: dict, gold: dict | None, extra_src: Any, extra_tgt: Any, args: Params
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


def _spread(prefix: str, counts: Any, boot_rng: np.random.Generator, resamples: int) -> dict:
    if not resamples or not len(counts):
        return {}
    sp = bootstrap_f1(counts, boot_rng, resamples)
    return {f"{prefix}_f1_std": sp.std, f"{prefix}_f1_low": sp.low, f"{prefix}_f1_high": sp.high}


def frequency_rows(subset: str, method: str, silver: tuple, gold: tuple | None) -> list[dict]:
    """F1 per source-word frequency bin (Figures 4/6), on silver (partial) then on gold.

    ``silver`` and ``gold`` are ``(data, predicted links, source lines, training word counts)``;
    a word belongs to the bins of the setting whose possible links touch it.
    """
    rows = []
    for name, setting, partial in (("silver", silver, True), ("gold", gold, False)):
        if setting is None:
            continue
        data, hyp, src_l, counts = setting
        words = {src_l[k][i] for k, s in enumerate(data["possible"]) for i, _ in s}
        for label, bin_words in _bins(counts, words).items():
            sc = score_alignments(
                restrict_source(data["sure"], src_l, bin_words),
                restrict_source(data["possible"], src_l, bin_words),
                restrict_source(hyp, src_l, bin_words),
                partial=partial,
            )
            rows.append(
                {
                    "subset": subset,
                    "method": method,
                    "data": name,
                    "bin": label,
                    "n_words": len(bin_words),
                    "f1": sc.f1,
                    "n_sure": sc.n_sure,
                    "n_pred": sc.n_pred,
                }
            )
    return rows


def correlation_entry(subset: str, per_pair: list) -> dict:
    """Pearson r and Spearman rho of silver vs gold F1 per group (tokenizer, sweep, all).

    ``per_pair`` holds ``(config, silver score, gold score)``; with gold every config has a gold
    score (a ``None`` one is skipped).
    """
    entry: dict = {"subset": subset}
    for key, group in (("tokenizer", "tokenizer"), ("sweep", "sweep"), ("all", None)):
        chosen = [
            (s, g)
            for c, s, g in per_pair
            if g is not None and (group is None or group in c["groups"])
        ]
        corr = correlate([s.f1 for s, _ in chosen], [g.f1 for _, g in chosen], min_n=MIN_N)
        entry[f"pearson_r_{key}"] = corr.pearson
        entry[f"spearman_rho_{key}"] = corr.spearman
        entry[f"n_configs_{key}"] = corr.n
    return entry


def main_items(subset: str, per_pair: list, main_pair: bool) -> list[dict]:
    """Items of the main score: the tokenizer configurations whose silver and gold F1 it correlates."""
    return [
        {
            "item_id": config_label(c),
            "subset": subset,
            "correct": True,
            "score": g.f1,
            "retrieved": "",
            "tie": False,
            "main": main_pair and "tokenizer" in c["groups"],
            "x": s.f1,
            "y": g.f1,
            "method": c["method"],
        }
        for c, s, g in per_pair
        if g is not None
    ]
