"""Paragraph-level foils: edit one sentence, validate, else revert and try the next.

alee (following Sentence Smith) makes a paragraph foil by editing sentence
``i`` (from 0) and validating the edit at sentence level and at paragraph
level; on failure the edit is reverted and sentence ``i + 1`` is tried, until
one edit survives or the sentences run out. The stages (parse-edit-generate,
the two NLI checks) are injected, so this module is pure iteration logic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Attempt:
    """One tried sentence: its index and where it stopped (``edit``, ``sentence``, ``paragraph``, ``kept``)."""

    index: int
    stage: str


@dataclass(frozen=True)
class ParagraphFoil:
    """The outcome for one paragraph.

    Attributes:
        foil: the paragraph's sentences with one replaced, or ``None`` when no edit survived.
        index: the edited sentence, or ``None``.
        info: what the edit stage returned for the kept sentence (graph, edit, ...).
        attempts: every tried sentence in order.
    """

    foil: list[str] | None
    index: int | None
    info: Any = None
    attempts: list[Attempt] = field(default_factory=list)


def edit_paragraph(
    sentences: Sequence[str],
    edit: Callable[[int, str], tuple[str, Any] | None],
    check_sentence: Callable[[str, str], bool],
    check_paragraph: Callable[[list[str], list[str]], bool],
) -> ParagraphFoil:
    """Edit the first sentence whose foil passes both checks.

    Args:
        sentences: the paragraph, split into sentences.
        edit: ``(i, sentence) -> (foil sentence, info)`` or ``None`` when the
            sentence admits no edit (parse, edit or generation failed).
        check_sentence: ``(orig, foil) -> keep`` at sentence level.
        check_paragraph: ``(orig sentences, foil sentences) -> keep`` at paragraph level.

    >>> foils = {0: None, 1: ("B!", "e1"), 2: ("C!", "e2")}
    >>> out = edit_paragraph(["A.", "B.", "C."], lambda i, s: foils[i],
    ...                      lambda o, f: f != "B!", lambda o, f: True)
    >>> out.foil, out.index, out.info, [(a.index, a.stage) for a in out.attempts]
    (['A.', 'B.', 'C!'], 2, 'e2', [(0, 'edit'), (1, 'sentence'), (2, 'kept')])
    """
    original = list(sentences)
    attempts: list[Attempt] = []
    for i, sentence in enumerate(original):
        made = edit(i, sentence)
        if made is None:
            attempts.append(Attempt(i, "edit"))
            continue
        foil_sentence, info = made
        if not check_sentence(sentence, foil_sentence):
            attempts.append(Attempt(i, "sentence"))
            continue
        candidate = original[:i] + [foil_sentence] + original[i + 1 :]
        if not check_paragraph(original, candidate):
            attempts.append(Attempt(i, "paragraph"))
            continue
        attempts.append(Attempt(i, "kept"))
        return ParagraphFoil(candidate, i, info, attempts)
    return ParagraphFoil(None, None, None, attempts)
