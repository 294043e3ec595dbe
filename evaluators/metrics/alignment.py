"""Word-alignment scores: precision, recall, F1 and AER with sure/possible links.

Definitions follow Och & Ney (2003, "A Systematic Comparison of Various
Statistical Alignment Models", section 5) exactly as awesome-align's
``tools/aer.py`` computes them: counts are summed over the corpus (micro
average) and then

* precision = |A∩P| / |A|
* recall    = |A∩S| / |S|
* F1        = harmonic mean of precision and recall (``aer.py --fAlpha 0.5``)
* AER       = 1 - (|A∩S| + |A∩P|) / (|A| + |S|)

Convention: sure links are also possible (S ⊆ P). Callers pass ``possible``
either with or without the sure links; :func:`score_alignments` adds S to P
itself, as ``aer.py`` does when it reads a ``-`` link into both sets.

Where ``aer.py`` divides by zero (no predicted link, or no sure link), these
functions return 0.0 for precision/recall/F1 and compute AER from the counts
(AER is 1.0 when nothing matched); the raw counts are always kept so nothing is
hidden. Nothing is rounded here.

Partial evaluation (SilverAlign, Köksal et al. 2022, section 4): silver data
decides only some source words, so only predicted links whose source word is
aligned in the silver reference (in S or P) are counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Link = tuple[int, int]

#: The keys of :meth:`AlignmentScore.to_dict`: what every alignment evaluator's entries carry.
SCORE_KEYS = (
    "precision",
    "recall",
    "f1",
    "aer",
    "a_and_s",
    "a_and_p",
    "n_pred",
    "n_sure",
    "n_possible",
    "n_sentences",
    "partial",
    "n_pred_dropped",
)


@dataclass(frozen=True)
class AlignmentScore:
    """Corpus-level alignment scores with the raw counts they come from.

    Attributes:
        a_and_s: |A∩S| summed over sentences.
        a_and_p: |A∩P| summed over sentences.
        n_pred: |A| (after partial filtering, when used).
        n_sure: |S|.
        n_possible: |P| (sure links included).
        n_sentences: sentences scored.
        partial: whether partial (silver) evaluation was used.
        n_pred_dropped: predicted links ignored by partial evaluation.
    """

    a_and_s: int
    a_and_p: int
    n_pred: int
    n_sure: int
    n_possible: int
    n_sentences: int
    partial: bool = False
    n_pred_dropped: int = 0

    @property
    def precision(self) -> float:
        """|A∩P| / |A| (0.0 when nothing was predicted)."""
        return self.a_and_p / self.n_pred if self.n_pred else 0.0

    @property
    def recall(self) -> float:
        """|A∩S| / |S| (0.0 when there is no sure link)."""
        return self.a_and_s / self.n_sure if self.n_sure else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0.0 when either is 0)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0

    @property
    def aer(self) -> float:
        """1 - (|A∩S| + |A∩P|) / (|A| + |S|) (1.0 when |A| + |S| = 0)."""
        denom = self.n_pred + self.n_sure
        return 1.0 - (self.a_and_s + self.a_and_p) / denom if denom else 1.0

    def to_dict(self) -> dict:
        """Return scores and counts (:data:`SCORE_KEYS`) as a JSON-ready dict."""
        return {key: getattr(self, key) for key in SCORE_KEYS}


def partial_filter(
    pred: Iterable[Link], sure: Iterable[Link], possible: Iterable[Link] = ()
) -> set[Link]:
    """Keep the predicted links whose source word is aligned in the reference.

    >>> sorted(partial_filter({(0, 0), (1, 2), (2, 1)}, {(0, 0)}, {(2, 2)}))
    [(0, 0), (2, 1)]
    """
    decided = {i for i, _ in sure} | {i for i, _ in possible}
    return {(i, j) for i, j in pred if i in decided}


def score_alignments(
    sure: Sequence[Iterable[Link]],
    possible: Sequence[Iterable[Link]] | None,
    pred: Sequence[Iterable[Link]],
    partial: bool = False,
) -> AlignmentScore:
    """Score predicted alignments against sure/possible references (micro average).

    Args:
        sure: per sentence, the sure links S.
        possible: per sentence, the possible links (S is added: S ⊆ P);
            ``None`` means P = S.
        pred: per sentence, the predicted links A (may be empty).
        partial: count only predicted links whose source word is aligned in
            the reference (silver data).

    Returns:
        The :class:`AlignmentScore`.

    Raises:
        ValueError: the three sequences differ in length.

    >>> s = score_alignments([{(0, 0), (1, 1)}], [{(1, 2)}], [{(0, 0), (1, 2), (2, 2)}])
    >>> (s.a_and_s, s.a_and_p, s.n_pred, s.n_sure), round(s.precision, 4), s.recall, round(s.aer, 4)
    ((1, 2, 3, 2), 0.6667, 0.5, 0.4)
    >>> score_alignments([{(0, 0)}], None, [{(0, 0), (5, 5)}], partial=True).precision
    1.0
    """
    if possible is None:
        possible = [()] * len(sure)
    if not (len(sure) == len(possible) == len(pred)):
        raise ValueError(
            f"sure, possible and pred must have one entry per sentence; got {len(sure)}, {len(possible)}, {len(pred)}"
        )
    a_s = a_p = n_a = n_s = n_p = dropped = 0
    for s_links, p_links, a_links in zip(sure, possible, pred):
        s = set(s_links)
        p = set(p_links) | s
        a = set(a_links)
        if partial:
            kept = partial_filter(a, s, p)
            dropped += len(a) - len(kept)
            a = kept
        a_s += len(a & s)
        a_p += len(a & p)
        n_a += len(a)
        n_s += len(s)
        n_p += len(p)
    return AlignmentScore(a_s, a_p, n_a, n_s, n_p, len(sure), partial, dropped)


def restrict_source(
    links: Sequence[Iterable[Link]], src_words: Sequence[Sequence[str]], keep: set[str]
) -> list[set[Link]]:
    """Keep only links whose source word (by its string) is in ``keep`` (for per-bin breakdowns).

    >>> restrict_source([{(0, 0), (1, 1)}], [["the", "cat"]], {"cat"})
    [{(1, 1)}]
    """
    return [{(i, j) for i, j in sent if words[i] in keep} for sent, words in zip(links, src_words)]


#: Frequency bins (inclusive bounds) of source words in the aligner's training
#: text, for the breakdown of SilverAlign Figures 4/6.
FREQ_BINS: tuple[tuple[int, int | None], ...] = (
    (1, 1),
    (2, 5),
    (6, 20),
    (21, 100),
    (101, 1000),
    (1001, None),
)


def freq_bin_label(lo: int, hi: int | None) -> str:
    """Return a bin label.

    >>> freq_bin_label(2, 5), freq_bin_label(1, 1), freq_bin_label(1001, None)
    ('2-5', '1', '>1000')
    """
    if hi is None:
        return f">{lo - 1}"
    return str(lo) if lo == hi else f"{lo}-{hi}"
