"""SilverAlign's tokenisation and decision rule against the authors' notebook code, run unmodified.

The reference is ``tests/oracles/silveralign_reference.py`` (a transcription of their cells);
nothing here computes an expected value by hand.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from builders.silver.logic import decide_word, merge_links
from builders.silver.tokenize import Tokenizer

_REF = Path(__file__).resolve().parents[2] / "oracles" / "silveralign_reference.py"
_spec = importlib.util.spec_from_file_location("silveralign_reference", _REF)
assert _spec is not None and _spec.loader is not None
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

#: The cases issue #26 names, and the characters next to the authors' 32.
CASES = [
    "well-known",
    "3.5 times",
    "1,000 men",
    "¿Dónde está?",
    "¡Hola!",
    "«Sí», dijo.",
    "don't l'homme",
    "a\\b",
    "“Ya”—dijo…",
    "x_y [z] {w} (v) <u> #t $s %r &q *p +o /n :m ;l =k ?j @i ^h `g |f ~e",
    "  tabs\tand\u00a0nbsp\u2009thin\u200bzero ",
    "‘single’ „low“ ‹a› ·b· 3–4 — ",
    "",
]


@pytest.mark.parametrize("text", CASES)
def test_tokenizer_equals_the_authors_notebook(text):
    tok = Tokenizer()
    assert tok.tokenize(text) == ref.authors_tokenize(text)
    assert [text[s:e] for s, e in tok.spans(text)] == tok.tokenize(text)


_VOCAB = ["el", "la", "perro", "come", ".", "¿Qué", "well-known", "3.5", "«sí»", "no", "!"]


def _alternative(rng: np.random.Generator, base: list[str], target: int) -> str:
    """Mostly a change of ``target`` alone; else unchanged, every token changed, another position, longer."""
    alt = list(base)
    kind = rng.choice(["target", "target", "target", "same", "all", "other", "longer"])
    positions = {"target": [target], "same": [], "all": range(len(alt))}.get(str(kind))
    if positions is None:
        positions = [int(rng.integers(len(alt)))]
    for j in positions:
        alt[j] = str(rng.choice(["gato", "bebe", "agua", "sol"]))
    return " ".join(alt + (["más"] if kind == "longer" else []))


def _random_case(rng: np.random.Generator) -> tuple[str, list[list[str]]]:
    """A translation and, per source word, 3 to 5 alternative translations (raw strings)."""
    base = [str(w) for w in rng.choice(_VOCAB, size=int(rng.integers(1, 5)))]
    words = []
    for _ in range(int(rng.integers(1, 4))):
        target = int(rng.integers(len(base)))
        words.append([_alternative(rng, base, target) for _ in range(int(rng.integers(3, 6)))])
    return " ".join(base), words


def _frame(cases) -> pd.DataFrame:
    """The shape of the authors' ``*_translated_pairs.json``, translations tokenised as in their cell 9."""
    rows = []
    for sid, (base, words) in enumerate(cases):
        tr = " ".join(ref.authors_tokenize(base))
        rows.append(
            {"sentence_id": sid, "word_id": -1, "sentence": f"s{sid}", "translated_sentences": tr}
        )
        for wid, alts in enumerate(words):
            for alt in alts:
                t = " ".join(ref.authors_tokenize(alt))
                rows.append(
                    {"sentence_id": sid, "word_id": wid, "sentence": "x", "translated_sentences": t}
                )
    return pd.DataFrame(rows)


def test_decision_rule_equals_the_authors_cells_5_and_13():
    """Random cases (one-token translations, every token changed, lengths changed) decide alike."""
    rng = np.random.default_rng(26)
    cases = [_random_case(rng) for _ in range(400)]
    authors = ref.authors_links(_frame(cases))
    tok = Tokenizer()
    ours = {
        sid: merge_links(
            [decide_word(tok.tokenize(base), [tok.tokenize(a) for a in alts]) for alts in words]
        )
        for sid, (base, words) in enumerate(cases)
    }
    assert ours == authors
    assert (
        sum(len(v) for v in authors.values()) >= 10
    )  # the sample links words, not only drops them


def test_the_two_edge_cases_issue_26_names():
    """One alternative changes every token: left out, the word is still linked; one token: never linked."""
    base = "el perro come"
    alts = ["el gato come"] * 4 + ["un gato bebe"]
    frame = _frame([(base, [alts]), ("sí", [["no"] * 5])])
    assert ref.authors_links(frame) == {0: [[0, 1]], 1: []}
    tok = Tokenizer()
    assert decide_word(tok.tokenize(base), [tok.tokenize(a) for a in alts]).targets == (1,)
    assert decide_word(["sí"], [["no"]] * 5).status == "dropped"
