"""Training text of a statistical aligner per evaluation setting, the SilverAlign way.

Köksal et al. (2022) train an aligner for each setting on that setting's
evaluation sentences plus extra parallel text, with duplicate sentence pairs
removed (the silver sentences are a subset of the gold ones for several pairs,
and extra corpora repeat lines). :func:`setting_corpus` builds one such corpus:
the evaluation sentences first (so the aligner's output for line ``i`` is the
alignment of evaluation sentence ``i``), then the extra pairs that are neither
an evaluation pair nor already taken. The vocabulary sweep of the paper uses
WordPiece (:data:`PAPER_SWEEP_TOKENIZER`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The tokenizer of the paper's vocabulary-size sweep.
PAPER_SWEEP_TOKENIZER = "wordpiece"


@dataclass(frozen=True)
class SettingCorpus:
    """One setting's aligner training text.

    Attributes:
        src: source sentences (token lists); the first ``n_eval`` are the evaluation sentences.
        tgt: target sentences, line-aligned with ``src``.
        n_eval: evaluation sentences (kept even when repeated, since each is scored).
        n_extra: extra pairs added.
        dropped_duplicates: extra pairs left out because they repeat an evaluation pair or an earlier extra pair.
    """

    src: tuple[tuple[str, ...], ...]
    tgt: tuple[tuple[str, ...], ...]
    n_eval: int
    n_extra: int
    dropped_duplicates: int


def setting_corpus(
    eval_src: Sequence[Sequence[str]],
    eval_tgt: Sequence[Sequence[str]],
    extra_src: Sequence[Sequence[str]] = (),
    extra_tgt: Sequence[Sequence[str]] = (),
    dedup: bool = True,
    lowercase: bool = False,
) -> SettingCorpus:
    """Training text for one setting (silver or gold): its sentences, then de-duplicated extra pairs.

    Args:
        eval_src: the setting's source sentences (tokens).
        eval_tgt: their translations.
        extra_src: extra parallel text (tokens), line-aligned with ``extra_tgt``.
        extra_tgt: its other side.
        dedup: drop extra pairs that repeat an evaluation pair or an earlier extra pair.
        lowercase: compare (and return) lower-cased tokens.

    >>> c = setting_corpus([["a", "b"]], [["x", "y"]], [["a", "b"], ["c"], ["c"]], [["x", "y"], ["z"], ["z"]])
    >>> c.src, c.n_eval, c.n_extra, c.dropped_duplicates
    ((('a', 'b'), ('c',)), 1, 1, 2)

    Raises:
        ValueError: a side has a different number of lines than the other.
    """
    if len(eval_src) != len(eval_tgt) or len(extra_src) != len(extra_tgt):
        raise ValueError("source and target sides must have the same number of sentences")

    def norm(tokens):
        return tuple(t.lower() for t in tokens) if lowercase else tuple(tokens)

    src = [norm(s) for s in eval_src]
    tgt = [norm(t) for t in eval_tgt]
    seen = set(zip(src, tgt))
    dropped = added = 0
    for s, t in zip(extra_src, extra_tgt):
        pair = (norm(s), norm(t))
        if dedup and pair in seen:
            dropped += 1
            continue
        seen.add(pair)
        src.append(pair[0])
        tgt.append(pair[1])
        added += 1
    return SettingCorpus(tuple(src), tuple(tgt), len(eval_src), added, dropped)
