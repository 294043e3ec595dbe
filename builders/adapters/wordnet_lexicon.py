"""WordNet lexicon for the AR (antonym) and HS (hypernym) edits.

Wraps any reader with nltk's ``WordNetCorpusReader`` interface (``synsets``,
``Synset.lemmas``, ``Lemma.antonyms``, ``Synset.hypernyms``); the default one
reads Debian's ``/usr/share/wordnet`` through :mod:`builders.adapters.wordnet`.
"""

from __future__ import annotations

from functools import lru_cache

from builders.adapters.wordnet import load_wordnet

#: The share of a lemma's sense-tagged uses (WordNet's SemCor counts, one part of speech)
#: its first sense must hold for AR and HS to take it as the sense an AMR concept means.
#: AMR gives no WordNet sense, so a lemma without such a dominant sense is refused rather
#: than guessed (issue #26: ``little`` -> ``much`` came from little.a.02, ``shell`` -> ``ammo``
#: from shell.n.01, 14 of 19 uses).
FIRST_SENSE_SHARE = 0.75


class WordNetLexicon:
    """Lemma antonyms and hypernyms of the one sense a concept is taken to mean.

    That sense is the lemma's first (most frequent) WordNet sense of the requested
    part of speech, and only when it is clear (:func:`first_sense`): the only sense,
    or one holding :data:`FIRST_SENSE_SHARE` of the tagged uses. Antonyms are WordNet
    *lemma* antonyms of that sense (``good.a.01.good`` <-> ``bad``); hypernyms its
    hypernyms, less any lemma that is also a synonym of the word in any sense, so HS
    never degrades into a synonym swap. A lemma without a clear sense gets neither.
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

    def first_sense(self, lemma: str, pos: str):
        """The synset ``lemma`` is taken to mean in part of speech ``pos``, or ``None`` when unclear."""
        synsets = self._synsets(lemma, pos)
        if len(synsets) <= 1:
            return synsets[0] if synsets else None
        counts = [self._count(syn, lemma) for syn in synsets]
        total = sum(counts)
        return synsets[0] if total and counts[0] >= FIRST_SENSE_SHARE * total else None

    @staticmethod
    def _count(syn, lemma: str) -> int:
        return sum(lem.count() for lem in syn.lemmas() if lem.name().lower() == lemma.lower())

    def _antonyms(self, lemma: str, pos: str) -> list[str]:
        out: list[str] = []
        first = self.first_sense(lemma, pos)
        for syn in [first] if first is not None else []:
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
        first = self.first_sense(lemma, pos)
        if first is None:
            return []
        synonyms = {lem.name().lower() for syn in self._synsets(lemma, pos) for lem in syn.lemmas()}
        out: list[str] = []
        for hyper in first.hypernyms() + first.instance_hypernyms():
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
