"""Sentence-level retrieval with the paper's criterion, and the paper's token poolings.

Gaschi et al. 2022 (Section V.A) retrieve sentence translations with the same
CSLS criterion as words (their Eq. 1 applied to sentence vectors), from either
the CLS token or the mean of the non-special tokens. :func:`sentence_retrieval`
is S_weak of :mod:`evaluators.metrics.csls` over sentence vectors, in both
directions, with the tie count and the tie rule of that module;
:func:`pool_tokens` gives both poolings from one forward pass's token states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluators.core.errors import UsageError
from evaluators.metrics import csls

#: Token poolings of the paper: ``cls`` (first token) and ``mean`` over non-special tokens.
POOLINGS = ("cls", "mean")


@dataclass(frozen=True)
class SentenceRetrieval:
    """Both directions of sentence retrieval.

    Attributes:
        n: sentence pairs.
        correct_src_tgt: source queries whose nearest target is their translation.
        correct_tgt_src: the same from the target side.
        ties_src_tgt: source queries whose translation ties the best other target.
        ties_tgt_src: the same from the target side.
        criterion: ``csls`` or ``cosine``.
        tie_rule: ``strict`` (a tie fails) or ``first`` (the authors' first-index argmax).
    """

    n: int
    correct_src_tgt: int
    correct_tgt_src: int
    ties_src_tgt: int
    ties_tgt_src: int
    criterion: str
    tie_rule: str

    @property
    def accuracy(self) -> float:
        """Mean accuracy of the two directions."""
        return (self.correct_src_tgt + self.correct_tgt_src) / (2 * self.n)


def sentence_retrieval(
    a: np.ndarray,
    b: np.ndarray,
    criterion: str = "csls",
    k: int = csls.DEFAULT_K,
    tie_rule: str = "strict",
    backend: Any = None,
) -> SentenceRetrieval:
    """Retrieve ``b_i`` from ``a_i`` and ``a_i`` from ``b_i`` (the paper's Eq. 1 at sentence level).

    Args:
        a: ``(n, dim)`` source sentence vectors.
        b: ``(n, dim)`` target sentence vectors, row ``i`` translating row ``i`` of ``a``.
        criterion: ``csls`` (the paper's) or ``cosine``.
        k: CSLS neighbourhood size.
        tie_rule: ``strict`` or ``first``.
        backend: where the similarity products run (``None``: numpy; see
            :func:`evaluators.metrics.csls.retrieval_counts_pair`).

    >>> r = sentence_retrieval(np.eye(3), np.eye(3)[[0, 2, 1]], "cosine")
    >>> (r.correct_src_tgt, r.correct_tgt_src, r.ties_src_tgt)
    (1, 1, 0)

    Raises:
        UsageError: unknown criterion or tie rule, or mismatched shapes.
    """
    got = csls.retrieval_counts_pair(a, b, criterion, k, backend=backend, tie_rule=tie_rule)
    fwd, bwd = got["src_tgt"], got["tgt_src"]
    return SentenceRetrieval(
        fwd.n, fwd.weak, bwd.weak, fwd.weak_ties, bwd.weak_ties, criterion, tie_rule
    )


def pool_tokens(states: np.ndarray, special: np.ndarray, pooling: str) -> np.ndarray:
    """Pool one sentence's token states the paper's way.

    Args:
        states: ``(layers, tokens, dim)`` (or ``(tokens, dim)``) states of one sentence, padding removed.
        special: ``(tokens,)`` booleans, true for special tokens (``[CLS]``, ``<s>``, ``</s>``, ...).
        pooling: ``cls`` (the first token's state) or ``mean`` (mean over the non-special tokens).

    Returns:
        ``(layers, dim)`` (or ``(dim,)``) float32 vectors.

    >>> s = np.array([[9.0, 9.0], [1.0, 2.0], [3.0, 4.0], [7.0, 7.0]])
    >>> pool_tokens(s, np.array([True, False, False, True]), "mean").tolist()
    [2.0, 3.0]
    >>> pool_tokens(s, np.array([True, False, False, True]), "cls").tolist()
    [9.0, 9.0]

    Raises:
        UsageError: unknown pooling, mismatched mask, or no non-special token for ``mean``.
    """
    if pooling not in POOLINGS:
        raise UsageError(f"Unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}.")
    states = np.asarray(states, dtype=np.float32)
    special = np.asarray(special, dtype=bool)
    if special.shape != (states.shape[-2],):
        raise UsageError(
            f"The special-token mask has {special.shape} entries for {states.shape[-2]} tokens."
        )
    if pooling == "cls":
        return states[..., 0, :]
    if special.all():
        raise UsageError(
            "A sentence has only special tokens; mean pooling over its words is undefined."
        )
    return states[..., ~special, :].mean(axis=-2)
