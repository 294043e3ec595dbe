"""The WordNet lexicon for AR/HS: lemma antonyms, first-sense hypernyms, never synonyms."""

from __future__ import annotations

import pytest

from builders.adapters.wordnet_lexicon import WordNetLexicon


class Lemma:
    def __init__(self, name, antonyms=()):
        self._name, self._ant = name, list(antonyms)

    def name(self):
        return self._name

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
                Synset([Lemma("bank")], [slope, Synset([Lemma("depository")])]),
                Synset([Lemma("bank"), Lemma("depository")], [institution]),
            ]
        if (lemma, pos) == ("good", "a"):
            return [
                Synset([Lemma("good", ["bad"])]),
                Synset([Lemma("good", ["evil"]), Lemma("well", ["ill"])]),
            ]
        return []

    def get_version(self):
        return "test"


def test_first_sense_hypernyms_without_synonyms():
    lex = WordNetLexicon(Reader())
    assert lex.hypernyms("bank", "n") == ["slope", "incline"]
    assert lex.hypernyms("unknown", "n") == []


def test_lemma_antonyms_of_that_lemma_only():
    lex = WordNetLexicon(Reader())
    assert lex.antonyms("good", "a") == ["bad", "evil"]  # not 'ill', the antonym of 'well'
    assert lex.revision == "test"


def test_real_wordnet():
    try:
        from builders.adapters.wordnet_lexicon import load_lexicon

        lex = load_lexicon()
    except Exception as err:  # noqa: BLE001 - any missing piece of the system WordNet
        pytest.skip(f"system WordNet unavailable: {err}")
    assert lex.antonyms("increase", "v") == ["decrease"]
    assert lex.antonyms("love", "v") == ["hate"]
    assert "sphenisciform_seabird" in lex.hypernyms("penguin", "n")
    synonyms = {lem.name() for s in lex.reader.synsets("boy", pos="n") for lem in s.lemmas()}
    assert lex.hypernyms("boy", "n") and not synonyms & set(lex.hypernyms("boy", "n"))
