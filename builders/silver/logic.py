"""The SilverAlign decision rule (Köksal et al. 2022, §3 and Figure 2), as pure functions.

Given the tokens of the translation ``t`` of a source sentence and the tokens
of the translations of the alternatives made for one source word ``w_j``:

1. an alternative is *valid* when its translation has as many tokens as ``t``
   and keeps at least one of them (the authors' cell 5 keeps an alternative only
   when ``len(changed_words) != sum(changed_words)``: one that changes every
   token is left out of the count, so a one-token translation is never linked);
2. ``w_j`` is aligned when at least ``min_valid`` alternatives are valid and
   every valid alternative changes exactly the same set of target positions,
   of size 1 to ``max_targets`` (1 in the paper and its code, which drops a
   source word as soon as two target positions change);
3. the links of one sentence are merged into a partial alignment. Two source
   words may link to the same target word (many-to-one, Figure 2): each word
   is decided on its own.

A valid alternative whose translation equals ``t`` changes no position, so it
breaks the consistency of step 2 (the reference code counts it in the
denominator but never in the numerator). Nothing here does I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from builders.silver.tokenize import Tokenizer, is_word

#: Alternatives per source word and how many must be valid: "at least 4 of 5" (the paper, §3).
N_ALTERNATIVES = 5
MIN_VALID = 4
#: One target word per source word, as in the paper's released silver sets.
MAX_TARGETS = 1
#: Punctuation is substituted (and so can be aligned) like any token, as in the
#: authors' code, which masks every whitespace token; their silver sets align
#: punctuation (5 of 80 eng-tur Silver_Small links).
SUBSTITUTE_PUNCTUATION = True

KEPT = "kept"
DROPPED = "dropped"
#: Reasons, in the order they are checked; the details table stores one of these.
NOT_A_WORD = "not_a_word"
TOO_FEW_ALTERNATIVES = "too_few_alternatives"
TOO_FEW_VALID = "too_few_valid"
UNCHANGED = "unchanged_translation"
INCONSISTENT = "inconsistent_positions"
TOO_MANY_TARGETS = "too_many_targets"
REASONS = (
    KEPT,
    NOT_A_WORD,
    TOO_FEW_ALTERNATIVES,
    TOO_FEW_VALID,
    UNCHANGED,
    INCONSISTENT,
    TOO_MANY_TARGETS,
)


@dataclass(frozen=True)
class WordDecision:
    """The fate of one source word.

    Attributes:
        status: ``kept`` or ``dropped``.
        reason: ``kept`` or one of the drop reasons in :data:`REASONS`.
        targets: the target positions the word is linked to (empty when dropped).
        n_alternatives: alternatives that were translated.
        n_valid: alternatives whose translation kept the length of ``t``.
    """

    status: str
    reason: str
    targets: tuple[int, ...]
    n_alternatives: int
    n_valid: int


def changed_positions(base: Sequence[str], alt: Sequence[str]) -> tuple[int, ...] | None:
    """Return the positions where ``alt`` differs from ``base``; ``None`` when ``alt`` is not valid.

    Not valid, as in the authors' notebook (cell 5): the lengths differ, or every
    token changed (which includes any change of a one-token translation, and an
    empty translation).

    >>> changed_positions(["Amo", "la", "pizza"], ["Odio", "la", "pizza"])
    (0,)
    >>> changed_positions(["Amo", "la", "pizza"], ["Amo", "pizza"]) is None
    True
    >>> changed_positions(["Amo", "la"], ["Odio", "el"]) is None, changed_positions(["Sí"], ["No"])
    (True, None)
    """
    if len(base) != len(alt):
        return None
    changed = tuple(i for i, (a, b) in enumerate(zip(base, alt)) if a != b)
    return None if len(changed) == len(base) else changed


def decide_word(
    base: Sequence[str],
    alternatives: Sequence[Sequence[str]],
    min_valid: int = MIN_VALID,
    max_targets: int = MAX_TARGETS,
) -> WordDecision:
    """Apply the SilverAlign rule to one source word.

    Args:
        base: tokens of the translation of the original sentence.
        alternatives: tokens of the translation of each alternative sentence.
        min_valid: valid alternatives needed (4 of 5 in the paper).
        max_targets: largest set of target positions one word may change.

    >>> base = ["Amo", "la", "pizza", "."]
    >>> alts = [["Odio", "la", "pizza", "."], ["Como", "la", "pizza", "."],
    ...         ["Veo", "la", "pizza", "."], ["Hago", "la", "pizza", "."],
    ...         ["Quiero", "comer", "la", "pizza", "."]]
    >>> decide_word(base, alts)
    WordDecision(status='kept', reason='kept', targets=(0,), n_alternatives=5, n_valid=4)
    >>> decide_word(base, alts[:3] + [["Amo", "el", "pan", "."]]).reason
    'inconsistent_positions'
    """
    n = len(alternatives)
    if n < min_valid:
        return WordDecision(DROPPED, TOO_FEW_ALTERNATIVES, (), n, 0)
    changes = [c for c in (changed_positions(base, alt) for alt in alternatives) if c is not None]
    n_valid = len(changes)
    if n_valid < min_valid:
        return WordDecision(DROPPED, TOO_FEW_VALID, (), n, n_valid)
    if any(not c for c in changes):
        return WordDecision(DROPPED, UNCHANGED, (), n, n_valid)
    if len(set(changes)) != 1:
        return WordDecision(DROPPED, INCONSISTENT, (), n, n_valid)
    targets = changes[0]
    if len(targets) > max_targets:
        return WordDecision(DROPPED, TOO_MANY_TARGETS, (), n, n_valid)
    return WordDecision(KEPT, KEPT, targets, n, n_valid)


def substitution_positions(
    tokens: Sequence[str], punctuation: bool = SUBSTITUTE_PUNCTUATION
) -> list[int]:
    """Positions of the source tokens that get alternatives.

    Args:
        tokens: the source sentence's tokens.
        punctuation: substitute punctuation tokens too (the authors'); ``False``
            keeps words only (those tokens are then dropped as ``not_a_word``).

    >>> substitution_positions(["I", "love", "pizza", "."]), substitution_positions(["I", "love", "."], False)
    ([0, 1, 2, 3], [0, 1])
    """
    return [j for j, tok in enumerate(tokens) if tok.strip() and (punctuation or is_word(tok))]


def not_a_word() -> WordDecision:
    """The decision for a token that is never substituted (punctuation).

    >>> not_a_word().reason
    'not_a_word'
    """
    return WordDecision(DROPPED, NOT_A_WORD, (), 0, 0)


def merge_links(decisions: Sequence[WordDecision]) -> list[list[int]]:
    """Merge per-word decisions (indexed by source position) into sorted 0-based ``[i, j]`` links.

    >>> kept = WordDecision(KEPT, KEPT, (2,), 5, 5)
    >>> merge_links([kept, not_a_word(), WordDecision(KEPT, KEPT, (2,), 5, 4)])
    [[0, 2], [2, 2]]
    """
    return sorted([i, j] for i, d in enumerate(decisions) if d.status == KEPT for j in d.targets)


def reason_counts(decisions: Sequence[WordDecision]) -> dict[str, int]:
    """Count decisions by reason (every reason present, zeros included).

    >>> reason_counts([not_a_word(), not_a_word()])["not_a_word"]
    2
    """
    counts = Counter(d.reason for d in decisions)
    return {r: counts.get(r, 0) for r in REASONS}


def to_pharaoh(links: Sequence[Sequence[int]]) -> str:
    """Write links as a 0-based Pharaoh line.

    >>> to_pharaoh([[0, 2], [3, 1]])
    '0-2 3-1'
    """
    return " ".join(f"{i}-{j}" for i, j in links)


def select(
    items: list[tuple[str, str]],
    tokenizer: Tokenizer,
    max_sentences: int | None,
    min_words: int | None,
    max_words: int | None,
    rng: np.random.Generator | None,
) -> list[tuple[str, str]]:
    """Keep sentences within the word bounds, then at most ``max_sentences`` (sampled with ``rng``, order kept).

    >>> tok = Tokenizer()
    >>> items = [("0", "a b c"), ("1", "a b"), ("2", "a b c d e"), ("3", "x y z .")]
    >>> select(items, tok, None, 3, 4, None)
    [('0', 'a b c'), ('3', 'x y z .')]
    >>> select(items, tok, 2, None, None, None)
    [('0', 'a b c'), ('1', 'a b')]
    """

    def n_words(text: str) -> int:
        return sum(1 for w in tokenizer.tokenize(text) if is_word(w))

    kept = [
        (i, t)
        for i, t in items
        if (min_words is None or n_words(t) >= min_words)
        and (max_words is None or n_words(t) <= max_words)
    ]
    if max_sentences is not None and len(kept) > max_sentences:
        if rng is None:
            kept = kept[:max_sentences]
        else:
            picked = sorted(rng.choice(len(kept), size=max_sentences, replace=False).tolist())
            kept = [kept[i] for i in picked]
    return kept


def silver_counts(
    n_sentences: int,
    n_rows: int,
    n_links: int,
    decisions: Sequence[WordDecision],
    n_words: int,
    n_alternatives: int,
) -> dict:
    """The manifest's counts of a silver build: sentences, words, tokens, alternatives, yield.

    >>> silver_counts(2, 1, 1, [not_a_word()], 0, 0)["sentences"]
    {'in': 2, 'kept': 1, 'dropped': {'no_link': 1}}
    """
    reasons = reason_counts(decisions)
    kept = reasons.pop(KEPT)
    return {
        "sentences": {
            "in": n_sentences,
            "kept": n_rows,
            "dropped": {"no_link": n_sentences - n_rows},
        },
        "words": {
            "in": n_words,
            "kept": kept,
            "dropped": {r: n for r, n in reasons.items() if r != NOT_A_WORD},
        },
        "tokens": {"source": len(decisions), "punctuation": reasons[NOT_A_WORD]},
        "alternatives": {
            "made": n_alternatives,
            "per_word": round(n_alternatives / n_words, 3) if n_words else 0.0,
        },
        "links": n_links,
        "yield": round(kept / n_words, 4) if n_words else 0.0,
    }
