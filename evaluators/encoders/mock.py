"""A seeded random encoder for tests and sanity baselines (mteb's ``mocks``).

Each word-piece gets a vector drawn from a generator seeded by (seed, token),
so equal tokens get equal vectors in every language: a "copy" model for
identical strings and a random model for translated ones. Layer ``l`` adds
``l/L`` of the sentence mean, so layers differ and context matters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from evaluators.encoders.base import TokenEncoderMixin, TokenStates, check_pooling, resolve_layers

_TOKEN_RE = re.compile(r"\w{1,4}|[^\w\s]", re.UNICODE)


class RandomEncoder(TokenEncoderMixin):
    """Deterministic random token-level encoder (no model files needed)."""

    def __init__(self, dim: int = 32, num_layers: int = 2, seed: int = 0, max_tokens: int = 512):
        self.dim = dim
        self.num_layers = num_layers
        self.seed = seed
        self.max_tokens = max_tokens
        self.model_id = f"xlbench/random-d{dim}-l{num_layers}"
        self.revision = f"seed{seed}"
        self._cache: dict[str, np.ndarray] = {}

    def _vec(self, token: str) -> np.ndarray:
        if token not in self._cache:
            digest = hashlib.sha256(f"{self.seed}\0{token}".encode()).digest()
            rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
            self._cache[token] = rng.standard_normal(self.dim).astype(np.float32)
        return self._cache[token]

    def _pieces(self, text: str) -> list[re.Match]:
        return list(_TOKEN_RE.finditer(text))

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """Return the word-pieces of each text."""
        return [[m.group() for m in self._pieces(t)] for t in texts]

    def token_states(self, texts: Sequence[str], layers: Sequence[int]) -> list[TokenStates]:
        """Return per-layer token states."""
        layer_ids = resolve_layers(layers, self.num_layers)
        out = []
        for text in texts:
            pieces = self._pieces(text)
            truncated = len(pieces) > self.max_tokens
            pieces = pieces[: self.max_tokens]
            base = (
                np.stack([self._vec(m.group()) for m in pieces])
                if pieces
                else np.zeros((0, self.dim), dtype=np.float32)
            )
            ctx = base.mean(axis=0, keepdims=True) if len(base) else base
            states = np.stack(
                [base + (layer / self.num_layers) * ctx for layer in layer_ids]
            ).astype(np.float32)
            offsets = np.array([[m.start(), m.end()] for m in pieces], dtype=np.int64).reshape(
                -1, 2
            )
            out.append(TokenStates(states, offsets, [m.group() for m in pieces], truncated))
        return out

    def prompt_for(self, role: str | None) -> str:
        """No prompts: the role changes nothing."""
        return ""

    def sentence_embeddings(
        self, texts: Sequence[str], pooling: str = "model", layer: int = -1, role: str | None = None
    ) -> np.ndarray:
        """Return mean-pooled (or first-token) embeddings at ``layer``."""
        check_pooling(pooling)
        states = self.token_states(texts, [layer])
        rows = []
        for ts in states:
            if ts.states.shape[1] == 0:
                rows.append(np.zeros(self.dim, dtype=np.float32))
            elif pooling == "cls":
                rows.append(ts.states[0, 0])
            else:
                rows.append(ts.states[0].mean(axis=0))
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, self.dim), np.float32)


def from_spec(rest: str | None, **options) -> RandomEncoder:
    """Build from ``random[:dim[:layers[:seed]]]``.

    >>> from_spec("16:3:7").num_layers
    3
    """
    parts = [int(p) for p in rest.split(":")] if rest else []
    names = ("dim", "num_layers", "seed")
    kwargs = dict(zip(names, parts))
    kwargs.update({k: v for k, v in options.items() if k in names + ("max_tokens",)})
    return RandomEncoder(**kwargs)
