"""Statistical word aligners (eflomal, fast_align) with symmetrisation and subwords.

The one entry point other evaluators call is :func:`align`::

    from evaluators.aligners import align
    links = align(src_tokens, tgt_tokens, method="eflomal", symmetrize="grow-diag-final-and")

It trains the aligner on exactly the sentence pairs given (add more parallel
text to the lists for better alignments, then keep the first ``n`` results)
and returns one set of 0-based ``(src, tgt)`` links per pair.
"""

from __future__ import annotations

from collections.abc import Sequence

from evaluators.aligners.backends import BACKENDS
from evaluators.aligners.subword import map_links_to_words, train_segmenter
from evaluators.aligners.symmetrize import ALIASES, SYMMETRIZERS
from evaluators.aligners.symmetrize import symmetrize as _symmetrize
from evaluators.core.errors import UsageError

Link = tuple[int, int]
METHODS = ("fast_align", "eflomal")


def _check(src_tokens, tgt_tokens, method: str, symmetrize: str) -> str:
    if method not in METHODS:
        raise UsageError(f"Unknown aligner {method!r}; choose one of {', '.join(METHODS)}.")
    sym = ALIASES.get(symmetrize, symmetrize)
    if sym not in SYMMETRIZERS:
        raise UsageError(
            f"Unknown symmetrisation {symmetrize!r}; choose one of {', '.join(SYMMETRIZERS)}."
        )
    if len(src_tokens) != len(tgt_tokens):
        raise UsageError(
            f"align() needs one target sentence per source sentence; got {len(src_tokens)} source and "
            f"{len(tgt_tokens)} target sentences."
        )
    for sent in list(src_tokens[:1]) + list(tgt_tokens[:1]):
        if isinstance(sent, str):
            raise UsageError(
                "align() takes token lists (list[list[str]]), not strings; split the sentences first."
            )
    return sym


def align_directional(
    src_tokens: Sequence[Sequence[str]],
    tgt_tokens: Sequence[Sequence[str]],
    method: str = "fast_align",
    seed: int = 0,
) -> tuple[list[set[Link]], list[set[Link]]]:
    """Run ``method`` forward and reverse; return both link lists (``(src, tgt)`` orientation).

    Pairs with an empty side are left out of training and get empty alignments.

    Raises:
        UsageError: unknown method or mismatched inputs.
        EngineUnavailableError: the aligner package is missing.
    """
    _check(src_tokens, tgt_tokens, method, "forward")
    keep = [k for k, (s, t) in enumerate(zip(src_tokens, tgt_tokens)) if len(s) and len(t)]
    fwd_k, rev_k = BACKENDS[method](
        [list(src_tokens[k]) for k in keep], [list(tgt_tokens[k]) for k in keep], seed=seed
    )
    fwd: list[set[Link]] = [set() for _ in src_tokens]
    rev: list[set[Link]] = [set() for _ in src_tokens]
    for pos, k in enumerate(keep):
        fwd[k], rev[k] = fwd_k[pos], rev_k[pos]
    return fwd, rev


def align(
    src_tokens: list[list[str]],
    tgt_tokens: list[list[str]],
    method: str = "fast_align",
    symmetrize: str = "grow-diag-final-and",
    seed: int = 0,
) -> list[set[tuple[int, int]]]:
    """Word-align sentence pairs with a statistical aligner trained on them.

    Args:
        src_tokens: source sentences as token lists.
        tgt_tokens: target sentences as token lists (same length).
        method: ``fast_align`` (deterministic EM) or ``eflomal`` (Gibbs
            sampling, seeded from /dev/urandom by the tool: ``seed`` is
            recorded only).
        symmetrize: ``grow-diag-final-and`` (default), ``grow-diag-final``,
            ``grow-diag``, ``grow``, ``intersect``, ``union``, ``forward`` or
            ``reverse``.
        seed: passed to the backend.

    Returns:
        One set of 0-based ``(src_index, tgt_index)`` links per pair.

    Raises:
        UsageError: unknown method/symmetrisation or mismatched inputs.
        EngineUnavailableError: the aligner package is missing.
    """
    sym = _check(src_tokens, tgt_tokens, method, symmetrize)
    fwd, rev = align_directional(src_tokens, tgt_tokens, method, seed)
    return [_symmetrize(f, r, sym) for f, r in zip(fwd, rev)]


def align_subwords(
    src_tokens: list[list[str]],
    tgt_tokens: list[list[str]],
    tokenizer: str = "word",
    vocab_size: int = 8000,
    method: str = "fast_align",
    symmetrize: str = "grow-diag-final-and",
    seed: int = 0,
) -> list[set[tuple[int, int]]]:
    """Like :func:`align`, on subwords of a shared tokenizer trained on the input; links mapped back to words.

    Raises:
        UsageError: unknown tokenizer kind, method or symmetrisation.
    """
    sym = _check(src_tokens, tgt_tokens, method, symmetrize)
    seg = train_segmenter(tokenizer, list(src_tokens) + list(tgt_tokens), vocab_size)
    src_seg = [seg.segment(s) for s in src_tokens]
    tgt_seg = [seg.segment(t) for t in tgt_tokens]
    piece_links = align([p for p, _ in src_seg], [p for p, _ in tgt_seg], method, sym, seed)
    return [
        map_links_to_words(links, s[1], t[1]) for links, s, t in zip(piece_links, src_seg, tgt_seg)
    ]


__all__ = ["METHODS", "align", "align_directional", "align_subwords"]
