"""A synthetic translator and substitute generator whose silver alignment is known in advance.

The engine translates a toy English into toy Spanish word by word, with:

- adjective + noun reordered to noun + adjective ("the big dog" -> "el perro grande");
- a modal + verb translated as ONE token ("will eat" -> "comerá"): both source words
  link to it (many-to-one, SilverAlign Figure 2);
- phrasal translations of some adverbs ("badly" -> "muy mal"): their alternatives
  change the sentence length and are invalid;
- grammatical gender on articles ("the cow" -> "la vaca"): a feminine alternative of a
  masculine noun changes two positions, so "cat" (whose alternatives mix genders) is
  refused for inconsistent positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

NOUNS = {  # noun -> (translation, feminine?)
    "dog": ("perro", False), "cat": ("gato", False), "bird": ("pájaro", False), "horse": ("caballo", False),
    "wolf": ("lobo", False), "fish": ("pez", False), "cow": ("vaca", True), "goat": ("cabra", True),
    "bread": ("pan", False), "meat": ("carne", True), "rice": ("arroz", False), "fruit": ("fruta", True),
    "soup": ("sopa", True), "pig": ("cerdo", False), "bull": ("toro", False),
}  # fmt: skip
ADJECTIVES = {
    "big": "grande",
    "small": "pequeño",
    "old": "viejo",
    "black": "negro",
    "white": "blanco",
    "red": "rojo",
}
VERBS = {  # verb -> (present 3sg, future 3sg)
    "eat": ("come", "comerá"), "see": ("ve", "verá"), "take": ("toma", "tomará"), "like": ("gusta", "gustará"),
    "want": ("quiere", "querrá"), "find": ("encuentra", "encontrará"),
}  # fmt: skip
PRESENT = {
    "eats": "come", "sees": "ve", "likes": "gusta", "wants": "quiere", "takes": "toma", "finds": "encuentra",
    "runs": "corre", "walks": "camina", "swims": "nada", "sleeps": "duerme", "jumps": "salta",
}  # fmt: skip
MODALS = {
    "will": "{fut}",
    "would": "{stem}ía",
    "can": "puede·{inf}",  # one token: "_" is one of the authors' punctuation characters
    "must": "debe·{inf}",
    "may": "podrá·{inf}",
    "might": "podría·{inf}",
}
ADVERBS = {
    "quickly": "rápidamente",
    "slowly": "lentamente",
    "well": "bien",
    "badly": "muy mal",
    "softly": "con suavidad",
    "loudly": "en voz alta",
}
ARTICLES = {
    "the": ("el", "la"),
    "a": ("un", "una"),
    "this": ("este", "esta"),
    "that": ("ese", "esa"),
    "every": ("cada", "cada"),
    "one": ("un", "una"),
}

#: Context-free alternatives the synthetic generator proposes (5 per word).
ALTERNATIVES = {
    "the": ["a", "this", "that", "every", "one"],
    "dog": ["cat", "bird", "horse", "wolf", "pig"],
    "cat": ["dog", "cow", "horse", "goat", "wolf"],  # cow, goat are feminine -> article changes too
    "eats": ["sees", "likes", "wants", "takes", "finds"],
    "fish": ["bread", "meat", "rice", "fruit", "soup"],
    "big": ["small", "old", "black", "white", "red"],
    "sleeps": ["runs", "walks", "swims", "eats", "jumps"],
    "runs": ["walks", "swims", "sleeps", "eats", "jumps"],
    "will": ["would", "can", "must", "may", "might"],
    "eat": ["see", "take", "like", "want", "find"],
    "quickly": ["slowly", "well", "badly", "softly", "loudly"],  # 3 of 5 change the length
}

#: Sentences and the exact silver alignment the builder must recover.
CASES = [
    ("the dog eats fish .", "el perro come pez .", [[0, 0], [1, 1], [2, 2], [3, 3]]),
    ("the big dog sleeps .", "el perro grande duerme .", [[0, 0], [1, 2], [2, 1], [3, 3]]),
    ("the dog will eat .", "el perro comerá .", [[0, 0], [1, 1], [2, 2], [3, 2]]),
    ("the dog runs quickly .", "el perro corre rápidamente .", [[0, 0], [1, 1], [2, 2]]),
    ("the cat sleeps .", "el gato duerme .", [[0, 0], [2, 2]]),
]


def toy_translate(sentence: str) -> str:
    """Translate one toy-English sentence (tokens separated by spaces)."""
    toks = sentence.split()
    out: list[str] = []
    i = 0
    while i < len(toks):
        w = toks[i]
        if w in ARTICLES:
            # agree with the next noun (after an optional adjective)
            nxt = (
                toks[i + 2]
                if i + 2 < len(toks) and toks[i + 1] in ADJECTIVES
                else (toks[i + 1] if i + 1 < len(toks) else "")
            )
            fem = NOUNS.get(nxt, ("", False))[1]
            out.append(ARTICLES[w][1 if fem else 0])
        elif w in ADJECTIVES and i + 1 < len(toks) and toks[i + 1] in NOUNS:
            out += [NOUNS[toks[i + 1]][0], ADJECTIVES[w]]
            i += 1
        elif w in MODALS and i + 1 < len(toks) and toks[i + 1] in VERBS:
            v = toks[i + 1]
            pres, fut = VERBS[v]
            out.append(MODALS[w].format(fut=fut, stem=fut[:-1], inf=v))
            i += 1
        elif w in NOUNS:
            out.append(NOUNS[w][0])
        elif w in ADJECTIVES:
            out.append(ADJECTIVES[w])
        elif w in PRESENT:
            out.append(PRESENT[w])
        elif w in ADVERBS:
            out += ADVERBS[w].split()
        else:
            out.append(w)
        i += 1
    return " ".join(out)


@dataclass
class SyntheticEngine:
    """The toy translator behind the Translator interface; counts what it is asked."""

    pair: tuple[str, str] = ("eng_Latn", "spa_Latn")
    name: str = "synthetic"
    version: str = "1"
    online: bool = False
    calls: int = 0
    texts: list[str] = field(default_factory=list)
    fail_after: int | None = None

    def translate_batch(self, texts):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt("simulated interruption")
        self.calls += 1
        self.texts += list(texts)
        return [toy_translate(t) for t in texts]


class FixedSubstitutes:
    """A substitute generator with a fixed table (same interface as WordNet/MLM generators)."""

    name = "fixed"
    model_id = "fixed-table"
    revision = "1"

    def __init__(self, table=None):
        self.table = ALTERNATIVES if table is None else table

    def batch(self, texts, spans, positions, k):
        return [
            [list(self.table.get(t[sp[j][0] : sp[j][1]], []))[:k] for j in pos]
            for t, sp, pos in zip(texts, spans, positions)
        ]


@pytest.fixture
def synthetic():
    """The synthetic translator class, generator class, cases and translate function."""
    return {
        "engine": SyntheticEngine,
        "generator": FixedSubstitutes,
        "cases": CASES,
        "translate": toy_translate,
    }
