"""The WordNet lexicon for AR/HS: lemma antonyms, first-sense hypernyms, never synonyms."""

from __future__ import annotations

import pytest

from builders.adapters.wordnet_lexicon import WordNetLexicon


class Lemma:
    def __init__(self, name, antonyms=(), count=0):
        self._name, self._ant, self._count = name, list(antonyms), count

    def name(self):
        return self._name

    def count(self):
        return self._count

    def antonyms(self):
        return [Lemma(a) for a in self._ant]


class Synset:
    def __init__(self, lemmas, hypernyms=()):
        self._lemmas, self._hyper = lemmas, list(hypernyms)

    def lemmas(self):
        return self._lemmas

    def hypernyms(self):
        return self._hyper

    def instance_hypernyms(self):
        return []


class Reader:
    """Two senses of 'bank'; the second sense's hypernym must not be used, a synonym must not pass."""

    def synsets(self, lemma, pos=None):
        if (lemma, pos) == ("bank", "n"):
            slope = Synset([Lemma("slope"), Lemma("incline")])
            institution = Synset([Lemma("financial_institution")])
            # 'depository' is both a hypernym lemma and a synonym of 'bank' in another sense
            return [
                Synset([Lemma("bank", count=9)], [slope, Synset([Lemma("depository")])]),
                Synset([Lemma("bank", count=1), Lemma("depository")], [institution]),
            ]
        if (lemma, pos) in (("good", "a"), ("fair", "a")):
            share = {"good": (8, 2), "fair": (3, 3)}[lemma]  # tagged uses of sense 1 and 2
            return [
                Synset([Lemma(lemma, ["bad"], share[0])]),
                Synset([Lemma(lemma, ["evil"], share[1]), Lemma("well", ["ill"])]),
            ]
        return []

    def get_version(self):
        return "test"


def test_first_sense_hypernyms_without_synonyms():
    lex = WordNetLexicon(Reader())
    assert lex.hypernyms("bank", "n") == ["slope", "incline"]
    assert lex.hypernyms("unknown", "n") == []


def test_antonyms_of_the_clear_first_sense_only():
    """Issue #26: the sense a concept means is WordNet's first, only when it holds 3/4 of the uses."""
    lex = WordNetLexicon(Reader())
    assert lex.antonyms("good", "a") == ["bad"]  # not 'evil' (sense 2), nor 'ill' (of 'well')
    assert (
        lex.antonyms("fair", "a") == [] and lex.first_sense("fair", "a") is None
    )  # 3 vs 3: refused
    assert lex.revision == "test"


def test_real_wordnet():
    try:
        from builders.adapters.wordnet_lexicon import load_lexicon

        lex = load_lexicon()
    except Exception as err:  # noqa: BLE001 - any missing piece of the system WordNet
        pytest.skip(f"system WordNet unavailable: {err}")
    assert lex.antonyms("big", "a") == ["little"] and lex.antonyms("king", "n") == ["queen"]
    assert "sphenisciform_seabird" in lex.hypernyms("penguin", "n")
    synonyms = {lem.name() for s in lex.reader.synsets("king", pos="n") for lem in s.lemmas()}
    assert lex.hypernyms("king", "n") and not synonyms & set(lex.hypernyms("king", "n"))
    # issue #26's wrong senses are refused: little.a.02 'much', shell.n.01 'ammunition'
    assert lex.antonyms("little", "a") == [] and lex.hypernyms("shell", "n") == []
