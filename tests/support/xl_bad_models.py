"""Models whose output no metric may see (the bad-input matrix's ``callable:`` rows)."""

from __future__ import annotations

import numpy as np


def nan(texts):
    """NaN vectors."""
    return np.full((len(texts), 4), np.nan)


def inf(texts):
    """Vectors with an infinite value."""
    out = np.ones((len(texts), 4))
    out[0, 0] = np.inf
    return out


def zeros(texts):
    """All-zero vectors: no direction for cosine."""
    return np.zeros((len(texts), 4))


def strings(texts):
    """The texts back, not vectors."""
    return [[t] for t in texts]


def raises(texts):
    """A model whose call fails."""
    raise RuntimeError("the API said no")


def flat(texts):
    """One number per text, not a vector."""
    return np.ones(len(texts))
