"""WordNet lexicon for the AR (antonym) and HS (hypernym) edits.

Wraps any reader with nltk's ``WordNetCorpusReader`` interface (``synsets``,
``Synset.lemmas``, ``Lemma.antonyms``, ``Synset.hypernyms``); the default one
reads Debian's ``/usr/share/wordnet`` through :mod:`builders.adapters.wordnet`.
"""

from __future__ import annotations

from functools import lru_cache

from builders.adapters.wordnet import load_wordnet


class WordNetLexicon:
    """Lemma antonyms and first-sense hypernyms from a WordNet reader.

    Antonyms are WordNet *lemma* antonyms (``good.a.01.good`` <-> ``bad``) over
    every sense of the word with the requested part of speech, in WordNet's
    sense order. Hypernyms come from the word's first (most frequent) sense
    only, since other senses give unrelated words (``bank`` the river side);
    a hypernym lemma that is also a synonym of the word in any sense is
    dropped, so HS never degrades into a synonym swap.
    """

    def __init__(self, reader):
        self.reader = reader
        self.revision = str(getattr(reader, "get_version", lambda: "unknown")())
        self.antonyms = lru_cache(maxsize=None)(self._antonyms)
        self.hypernyms = lru_cache(maxsize=None)(self._hypernyms)
        self.dominant_pos = lru_cache(maxsize=None)(self._dominant_pos)

    def _synsets(self, lemma: str, pos: str):
        try:
            return self.reader.synsets(lemma, pos=pos)
        except Exception:  # noqa: BLE001 - the reader raises WordNetError on malformed lemmas
            return []

    def _antonyms(self, lemma: str, pos: str) -> list[str]:
        out: list[str] = []
        for syn in self._synsets(lemma, pos):
            for lem in syn.lemmas():
                if lem.name().lower() != lemma.lower():
                    continue
                for ant in lem.antonyms():
                    if ant.name() not in out:
                        out.append(ant.name())
        return out

    def _dominant_pos(self, lemma: str) -> str | None:
        """The part of speech (``n``, ``v``, ``a`` with satellites, ``r``) with the most sense-tagged uses.

        Ties (and lemmas never sense-tagged) go to the part of speech with more
        senses, then to the order n, v, a, r; ``None`` when WordNet lacks the lemma.
        """
        best, best_key = None, None
        for pos in ("n", "v", "a", "r"):
            synsets = self._synsets(lemma, pos)  # "a" includes adjective satellites
            if not synsets:
                continue
            count = sum(
                lem.count()
                for syn in synsets
                for lem in syn.lemmas()
                if lem.name().lower() == lemma.lower()
            )
            key = (count, len(synsets))
            if best_key is None or key > best_key:
                best, best_key = pos, key
        return best

    def _hypernyms(self, lemma: str, pos: str) -> list[str]:
        synsets = self._synsets(lemma, pos)
        if not synsets:
            return []
        synonyms = {lem.name().lower() for syn in synsets for lem in syn.lemmas()}
        out: list[str] = []
        for hyper in synsets[0].hypernyms() + synsets[0].instance_hypernyms():
            for lem in hyper.lemmas():
                name = lem.name()
                if name.lower() not in synonyms and name not in out:
                    out.append(name)
        return out


def load_lexicon() -> WordNetLexicon:
    """Return the WordNet lexicon over the system WordNet (``builders.adapters.wordnet``).

    Raises:
        EngineUnavailableError: WordNet is not installed (from the adapter).
    """
    return WordNetLexicon(load_wordnet())
