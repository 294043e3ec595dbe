"""The NLI decision rule of alee: keep a foil only if NLI says its meaning changed.

The NLI model is run in both directions (orig -> foil and foil -> orig). A
foil is rejected when both directions are predicted *entailment* (a
paraphrase, not a minimal pair), or when P(entailment) exceeds a threshold in
either direction (alee paper: 0.8). Pure: takes probabilities, returns a decision.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from builders.alee.spec import ENTAIL_THRESHOLD

ENTAILMENT = "entailment"
NEUTRAL = "neutral"
CONTRADICTION = "contradiction"
LABELS = (ENTAILMENT, NEUTRAL, CONTRADICTION)


@dataclass(frozen=True)
class NliDecision:
    """Whether a foil is kept, and why not.

    Attributes:
        keep: the foil passed the filter.
        reason: ``"kept"``, ``"bidirectional-entailment"`` or ``"entail-prob"``.
        p_entail_orig_foil: P(entailment) with the original as premise.
        p_entail_foil_orig: P(entailment) with the foil as premise.
    """

    keep: bool
    reason: str
    p_entail_orig_foil: float
    p_entail_foil_orig: float


def predicted(probs: Mapping[str, float]) -> str:
    """Return the most probable label, ignoring labels the model lacks (NaN).

    >>> predicted({"entailment": 0.2, "neutral": 0.5, "contradiction": 0.3})
    'neutral'
    >>> predicted({"entailment": 0.7, "neutral": float("nan"), "contradiction": float("nan")})
    'entailment'
    """
    known = {k: v for k, v in probs.items() if not math.isnan(v)}
    if len(known) == 1:
        # A two-label model (entailment / not entailment): entailment wins above 0.5.
        ((label, p),) = known.items()
        return label if p > 0.5 else "not-" + label
    return max(known, key=lambda label: known[label])


def decide(
    orig_foil: Mapping[str, float],
    foil_orig: Mapping[str, float],
    threshold: float = ENTAIL_THRESHOLD,
    reject_bidirectional: bool = True,
) -> NliDecision:
    """Apply the alee NLI rule to the probabilities of both directions.

    Args:
        orig_foil: label -> probability with the original as premise.
        foil_orig: label -> probability with the foil as premise.
        threshold: reject when P(entailment) > threshold in either direction
            (strict; ``1.0`` disables this test).
        reject_bidirectional: reject when both directions predict entailment.

    >>> decide({"entailment": 0.1, "neutral": 0.1, "contradiction": 0.8},
    ...        {"entailment": 0.2, "neutral": 0.1, "contradiction": 0.7}).reason
    'kept'
    >>> decide({"entailment": 0.6, "neutral": 0.3, "contradiction": 0.1},
    ...        {"entailment": 0.5, "neutral": 0.4, "contradiction": 0.1}).reason
    'bidirectional-entailment'
    >>> decide({"entailment": 0.85, "neutral": 0.1, "contradiction": 0.05},
    ...        {"entailment": 0.1, "neutral": 0.8, "contradiction": 0.1}).reason
    'entail-prob'
    """
    a, b = float(orig_foil[ENTAILMENT]), float(foil_orig[ENTAILMENT])
    if (
        reject_bidirectional
        and predicted(orig_foil) == ENTAILMENT
        and predicted(foil_orig) == ENTAILMENT
    ):
        return NliDecision(False, "bidirectional-entailment", a, b)
    if a > threshold or b > threshold:
        return NliDecision(False, "entail-prob", a, b)
    return NliDecision(True, "kept", a, b)
