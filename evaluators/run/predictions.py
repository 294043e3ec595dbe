"""Per-item predictions: one parquet next to each result JSON, one row per scored item.

Like lm-eval's ``--log_samples`` and mteb's prediction folder: enough to recompute
the main score, to find a model's errors and to run a paired test between two
models (``xlbench compare``).

Columns (:data:`COLUMNS`; extra columns are kept and ignored by the readers):

``item_id`` (str)
    Stable id of the scored item within the dataset revision: a word-pair id, a
    sentence id, a triplet id, a gold-pair id ``src_id|tgt_id``. Two models on the
    same dataset revision and parameters score the same ``item_id`` set.
``subset`` (str)
    The result entry the item counts towards, as in the result JSON's ``subset``
    (language pair, ``layer:8``, perturbation ...); an item may appear once per subset.
``correct`` (bool)
    Whether the item was scored right (retrieved its translation, original beat the foil, a gold pair was mined).
``score`` (float)
    The similarity or margin behind the decision (NaN when there is none).
``retrieved`` (str)
    What the model chose (an id or index written as text; empty when nothing was retrieved).
``tie`` (bool)
    Whether the decision was a tie within the evaluator's tolerance.

Optional text columns (:data:`TEXT_COLUMNS`), written by evaluators whose ids mean nothing to a
reader (``21227:83-92:72-78`` is a sentence id and two character spans): ``query_text`` (the item:
the word or sentence asked about), ``expected_text`` (its gold answer), ``retrieved_text`` (what
the model chose) and, for words, ``query_context`` / ``expected_context`` / ``retrieved_context``
(the sentence each word came from). The report's error tables show them; files without them show ids.

The file is ``<result stem>.predictions.parquet`` beside ``<result stem>.json``
(:func:`predictions_path`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluators.core.errors import InputFileError, OutputError, SchemaError, cannot_write
from evaluators.core.fileio import atomic_write
from evaluators.metrics.bootstrap import (
    ConfidenceInterval,
    _check,
    _resampled_stats,
    _stat,
    f1_from_counts,
)
from evaluators.metrics.correlation import pearson

#: Required columns, in file order.
COLUMNS: tuple[str, ...] = ("item_id", "subset", "correct", "score", "retrieved", "tie")
#: Optional columns that say an item in words (see the module docstring); ``""`` where unknown.
TEXT_COLUMNS: tuple[str, ...] = (
    "query_text",
    "query_context",
    "expected_text",
    "expected_context",
    "retrieved_text",
    "retrieved_context",
)
#: File name suffix replacing ``.json`` of the result file.
SUFFIX = ".predictions.parquet"


def predictions_path(result_path: str | os.PathLike) -> Path:
    """Return the predictions file that belongs to a result JSON.

    >>> predictions_path("res/bucc__ds@1__m@2.json").as_posix()
    'res/bucc__ds@1__m@2.predictions.parquet'
    """
    p = Path(result_path)
    return p.with_name(
        p.name[: -len(".json")] + SUFFIX if p.name.endswith(".json") else p.name + SUFFIX
    )


#: ``pair id -> ((source text, source context), (target text, target context))``.
PairTexts = Mapping[str, tuple[tuple[str, str], tuple[str, str]]]


def retrieval_texts(
    pair_id: str, retrieved: str, forward: bool, texts: PairTexts
) -> dict[str, str]:
    """The text columns of one retrieval item: the query, its gold translation and what was retrieved.

    Args:
        pair_id: the gold pair the query belongs to.
        retrieved: the pair id whose other side the model retrieved.
        forward: the query is the pair's source side (``False``: its target side).
        texts: every pair's two sides, each ``(text, context)`` (``context``: the sentence a word
            came from; ``""`` for sentences).

    >>> t = {"1": (("Haus", "das Haus"), ("house", "the house")), "2": (("Hund", "ein Hund"), ("dog", "a dog"))}
    >>> retrieval_texts("1", "2", True, t)["retrieved_text"], retrieval_texts("1", "2", False, t)["query_text"]
    ('dog', 'house')
    """
    q, a = (0, 1) if forward else (1, 0)
    pair, got = texts.get(pair_id), texts.get(retrieved)
    out = dict.fromkeys(TEXT_COLUMNS, "")
    if pair is not None:
        out["query_text"], out["query_context"] = pair[q]
        out["expected_text"], out["expected_context"] = pair[a]
    if got is not None:
        out["retrieved_text"], out["retrieved_context"] = got[a]
    return out


def _row(raw: Mapping[str, Any], i: int) -> dict[str, Any]:
    missing = [c for c in ("item_id", "subset", "correct") if c not in raw]
    if missing:
        raise SchemaError(
            f"Prediction row {i} lacks {', '.join(missing)}; each row needs {', '.join(COLUMNS)}."
        )
    score = raw.get("score")
    retrieved = raw.get("retrieved")
    out = dict(raw)
    out.update(
        item_id=str(raw["item_id"]),
        subset=str(raw["subset"]),
        correct=bool(raw["correct"]),
        score=math.nan if score is None else float(score),
        retrieved="" if retrieved is None else str(retrieved),
        tie=bool(raw.get("tie", False)),
    )
    return out


def write_predictions(path: str | os.PathLike, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write per-item predictions as parquet atomically and return the path.

    Args:
        path: the target file (usually :func:`predictions_path` of the result JSON).
        rows: mappings with at least ``item_id``, ``subset``, ``correct``; ``score``,
            ``retrieved``, ``tie`` default to NaN, ``""``, ``False``; extra keys are kept.

    Raises:
        SchemaError: a row lacks a required column.
        OutputError: the file cannot be written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table_rows = [_row(r, i) for i, r in enumerate(rows)]
    extra = sorted({k for r in table_rows for k in r} - set(COLUMNS))
    schema = pa.schema(
        [
            ("item_id", pa.string()),
            ("subset", pa.string()),
            ("correct", pa.bool_()),
            ("score", pa.float64()),
            ("retrieved", pa.string()),
            ("tie", pa.bool_()),
        ]
    )
    table = pa.Table.from_pylist([{c: r[c] for c in COLUMNS} for r in table_rows], schema=schema)
    for col in extra:
        table = table.append_column(col, pa.array([r.get(col) for r in table_rows]))
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, lambda tmp: pq.write_table(table, tmp))
    except OSError as err:
        raise OutputError(
            cannot_write(f"predictions to {str(out)!r}", err, "pass a writable --out folder")
        ) from err
    return out


def read_predictions(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a predictions parquet back as a list of row dicts (extra columns kept).

    Raises:
        InputFileError: the file is missing or not parquet.
        SchemaError: a required column is missing.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = Path(path)
    if not p.is_file():
        raise InputFileError(
            f"No per-item predictions at {str(p)!r}; rerun the evaluator with --save-predictions."
        )
    try:
        table = pq.read_table(p)
    except (OSError, pa.ArrowInvalid) as err:
        raise InputFileError(f"{str(p)!r} is not a readable parquet file ({err}).") from err
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise SchemaError(
            f"{str(p)!r} lacks the column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}."
        )
    return table.to_pylist()


_COUNTS = ("tp", "n_pred", "n_gold")


def main_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Return the rows behind the main score: those with ``main`` true, else every row."""
    if any("main" in r for r in rows):
        return [r for r in rows if r.get("main")]
    return list(rows)


def _pearson(sample: Any) -> float:
    """Pearson's r of a resample of ``(x, y)`` rows; NaN where undefined (``nanquantile`` leaves it out)."""
    import numpy as np

    x, y = np.asarray(sample, dtype=float).T
    r = pearson(x, y)
    return float("nan") if r is None else r


def counts_of(row: Mapping[str, Any], precision_hits: bool) -> list[float]:
    """The F1 columns of a row: ``tp, n_pred, n_gold`` (+ ``tp_p``, precision's own hits, for word alignment)."""
    return [float(row[c]) for c in (*_COUNTS, "tp_p")[: 4 if precision_hits else 3]]


def score_intervals(
    rows: Sequence[Mapping[str, Any]], rng: Any, resamples: int, level: float = 0.95
) -> Any:
    """Bootstrap the main score from its per-item rows.

    The main score is the mean over subsets of each subset's statistic: the mean of
    ``correct``, or micro F1 from ``tp``/``n_pred``/``n_gold`` (and ``tp_p``, see
    :func:`~evaluators.metrics.bootstrap.f1_from_counts`) when the rows carry them
    (threshold-based mining, word alignment: resampling items and recomputing F1 from the counts),
    or Pearson r over ``x``/``y`` (aligners: silver vs gold F1 of each configuration). Rows
    with a ``stratum`` (e.g. TACC's perturbation type) make a subset's statistic the mean
    over its strata (a macro average). Items are resampled within their (subset, stratum).

    Returns:
        ``(interval of the main score, {subset: interval})``, or ``(None, {})`` without rows.
    """
    import numpy as np

    chosen = main_rows(rows)
    if not chosen:
        return None, {}
    counts = all(all(c in r for c in _COUNTS) for r in chosen)
    paired = not counts and all("x" in r and "y" in r for r in chosen)
    statistic = f1_from_counts if counts else (_pearson if paired else None)
    precision_hits = counts and all("tp_p" in r for r in chosen)
    groups: dict[tuple[str, str], list] = {}
    for r in chosen:
        value = (
            counts_of(r, precision_hits)
            if counts
            else ([r["x"], r["y"]] if paired else float(bool(r["correct"])))
        )
        groups.setdefault((str(r["subset"]), str(r.get("stratum", ""))), []).append(value)
    alpha = 1.0 - level
    by_subset: dict[str, list[tuple[float, np.ndarray, int]]] = {}
    for key in sorted(groups):
        arr = np.asarray(groups[key], dtype=float)
        _check(arr, resamples, level)
        by_subset.setdefault(key[0], []).append(
            (_stat(arr, statistic), _resampled_stats(arr, statistic, resamples, rng), len(arr))
        )

    def interval(parts: list[tuple[float, np.ndarray, int]]) -> tuple[float, np.ndarray, int]:
        return (
            float(np.mean([p[0] for p in parts])),
            np.mean(np.vstack([p[1] for p in parts]), axis=0),
            sum(p[2] for p in parts),
        )

    def ci(estimate: float, stats: np.ndarray, n: int) -> ConfidenceInterval:
        # A resample of a correlation can be undefined (all x equal): such resamples are left out.
        low, high = (
            np.nanquantile(stats, [alpha / 2, 1 - alpha / 2])
            if np.isfinite(stats).any()
            else (np.nan, np.nan)
        )
        return ConfidenceInterval(estimate, float(low), float(high), level, int(resamples), n)

    per_subset = {name: interval(parts) for name, parts in by_subset.items()}
    est = float(np.mean([v[0] for v in per_subset.values()]))
    stats = np.mean(np.vstack([v[1] for v in per_subset.values()]), axis=0)
    return ci(est, stats, sum(v[2] for v in per_subset.values())), {
        k: ci(*v) for k, v in per_subset.items()
    }
