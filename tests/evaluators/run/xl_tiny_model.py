"""A tiny model as users hold it, for the API tests (importable as ``callable:xl_tiny_model:encode``)."""

from __future__ import annotations

import zlib

import numpy as np


class TinyModel:
    """A model as users hold them (sentence-transformers style): ``encode(sentences, batch_size=...)``.

    Bag of character trigrams hashed into 64 dimensions: deterministic, and a
    sentence is nearest to itself (a copy language is retrieved perfectly).
    """

    def __init__(self, dim: int = 64):
        self.dim = dim
        self.calls = 0

    def encode(self, sentences, batch_size=32):
        self.calls += 1
        return encode(sentences, self.dim)


def encode(texts, dim: int = 64):
    """The function behind :class:`TinyModel` (also reachable as ``callable:`` spec)."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        padded = f"  {text}  "
        for j in range(len(padded) - 2):
            out[i, zlib.crc32(padded[j : j + 3].encode("utf-8")) % dim] += 1.0
    return out
