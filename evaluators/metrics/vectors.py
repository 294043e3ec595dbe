"""Vector helpers shared by the pure metrics."""

from __future__ import annotations

import numpy as np

from evaluators.core.errors import UsageError


def normalize(x: np.ndarray) -> np.ndarray:
    """Return float32 rows scaled to unit L2 norm (zero rows stay zero).

    >>> normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]

    Raises:
        UsageError: ``x`` is not a 2-D matrix.
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise UsageError(f"Expected a 2-D embedding matrix, got shape {x.shape}.")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, np.float32(1e-12))
