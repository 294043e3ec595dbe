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

The file is ``<result stem>.predictions.parquet`` beside ``<result stem>.json``
(:func:`predictions_path`).
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evaluators.errors import InputFileError, OutputError, SchemaError

#: Required columns, in file order.
COLUMNS: tuple[str, ...] = ("item_id", "subset", "correct", "score", "retrieved", "tie")
#: File name suffix replacing ``.json`` of the result file.
SUFFIX = ".predictions.parquet"


def predictions_path(result_path: str | os.PathLike) -> Path:
    """Return the predictions file that belongs to a result JSON.

    >>> predictions_path("res/bucc__ds@1__m@2.json").as_posix()
    'res/bucc__ds@1__m@2.predictions.parquet'
    """
    p = Path(result_path)
    return p.with_name(p.name[: -len(".json")] + SUFFIX if p.name.endswith(".json") else p.name + SUFFIX)


def _row(raw: Mapping[str, Any], i: int) -> dict[str, Any]:
    missing = [c for c in ("item_id", "subset", "correct") if c not in raw]
    if missing:
        raise SchemaError(f"Prediction row {i} lacks {', '.join(missing)}; each row needs {', '.join(COLUMNS)}.")
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
    schema = pa.schema([("item_id", pa.string()), ("subset", pa.string()), ("correct", pa.bool_()),
                        ("score", pa.float64()), ("retrieved", pa.string()), ("tie", pa.bool_())])
    table = pa.Table.from_pylist([{c: r[c] for c in COLUMNS} for r in table_rows], schema=schema)
    for col in extra:
        table = table.append_column(col, pa.array([r.get(col) for r in table_rows]))
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".tmp-", suffix=".parquet")
        os.close(fd)
        pq.write_table(table, tmp)
        os.replace(tmp, out)
    except OSError as err:
        raise OutputError(f"Cannot write predictions to {str(out)!r} ({err.strerror}); pass a writable --out folder.") from err
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
        raise SchemaError(f"{str(p)!r} lacks the column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}.")
    return table.to_pylist()
