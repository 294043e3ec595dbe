"""What a reader compares models by: parameters, embedding size, layers, maximum tokens.

Read from a loaded encoder after it scored (its torch module, its config-derived attributes),
never from its name, and recorded in a result's ``model_facts`` beside (not inside) the model's
identity: a fact never enters a signature, a request key or a file name, so results written
before facts were recorded stay the same computation. A fact the encoder does not expose is
left out rather than guessed (an ONNX export holds no torch module to count; a function
model says nothing about its layers). Duck-typed: nothing here imports model code, so the
report reads facts back without the encoders.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The facts, in the order pages show them, with their column heads.
FACTS: dict[str, str] = {
    "parameters": "parameters",
    "embedding_dim": "embedding size",
    "layers": "layers",
    "max_tokens": "max tokens",
}


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _attr(encoder: Any, *names: str) -> int | None:
    """The first of ``names`` the encoder (or what it wraps) has as a positive int."""
    for name in names:
        try:
            value = _positive_int(getattr(encoder, name, None))
        except (AttributeError, TypeError, ValueError):  # a property that cannot answer
            value = None
        if value is not None:
            return value
    return None


def _parameter_count(encoder: Any) -> int | None:
    """The torch module's parameter count (``None`` without one: ONNX, functions, random)."""
    module = getattr(encoder, "model", None)
    params = getattr(module, "parameters", None)
    if not callable(params):
        return None
    try:
        return _positive_int(sum(int(p.numel()) for p in params()))
    except (AttributeError, TypeError):
        return None


def model_facts(encoder: Any) -> dict[str, int]:
    """Return the facts the encoder exposes (``FACTS`` keys), each a positive int.

    ``embedding_dim`` is the size of the model's own sentence embedding (a sentence-transformers
    Dense head included), else its hidden size; ``layers`` the transformer blocks (a
    sentence-only model has none to report); ``max_tokens`` the tokens it reads per text.

    >>> class Random:
    ...     dim, num_layers, max_tokens = 32, 2, 512
    >>> model_facts(Random())
    {'embedding_dim': 32, 'layers': 2, 'max_tokens': 512}
    >>> model_facts(object())
    {}
    """
    found = {
        "parameters": _parameter_count(encoder),
        "embedding_dim": _attr(encoder, "model_dim", "dim"),
        "layers": _attr(encoder, "num_layers"),
        "max_tokens": _attr(encoder, "max_length", "max_tokens"),
    }
    return {k: v for k, v in found.items() if v is not None}


def read_facts(raw: Any) -> dict[str, int]:
    """The known facts of a result's ``model_facts`` (untrusted: anything else is dropped).

    >>> read_facts({"layers": 12, "parameters": "many", "x": 3}), read_facts(None)
    ({'layers': 12}, {})
    """
    if not isinstance(raw, Mapping):
        return {}
    return {k: v for k in FACTS if (v := _positive_int(raw.get(k))) is not None}


def count_label(n: int | None) -> str:
    """A parameter count as people write it.

    >>> count_label(117_653_760), count_label(1_100_000_000), count_label(5_300), count_label(None)
    ('118M', '1.1B', '5.3K', '–')
    """
    if n is None:
        return "–"
    for size, unit in ((10**9, "B"), (10**6, "M"), (10**3, "K")):
        if n >= size:
            value = n / size
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return str(n)


def fact_label(key: str, value: int | None) -> str:
    """One fact as a table cell shows it (``–`` when unknown).

    >>> fact_label("parameters", 278_000_000), fact_label("layers", 12), fact_label("max_tokens", None)
    ('278M', '12', '–')
    """
    if value is None:
        return "–"
    return count_label(value) if key == "parameters" else str(value)
