"""WordNet substitutes for SilverAlign: the policy that picks a word's alternatives.

:class:`WordNetSubstitutes` turns a word into same-part-of-speech alternatives
for SilverAlign (antonyms, then co-hyponyms, then synonyms, each ranked by
WordNet's sense-tagged frequency counts), as an offline stand-in for the
paper's masked language model. The database is read through the adapter
:mod:`builders.adapters.wordnet`; English inflection comes from lemminflect.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from builders.adapters.wordnet import load_wordnet, wordnet_revision
from evaluators.core.errors import UsageError
from evaluators.core.optional import find

# --- substitutes -----------------------------------------------------------------

#: Closed-class words have no WordNet synsets (or only misleading ones: "I" is iodine,
#: "a" is vitamin A), so they are substituted from this table: words of the same class
#: that fit the same slot, most frequent first. Keys are lowercase.
CLOSED_CLASS: dict[str, tuple[str, ...]] = {}
for _group in (
    ("the", "a", "this", "that", "every", "no", "one"),
    ("a", "the", "one", "every", "no", "this"),
    ("an", "the", "one", "every", "no", "this"),
    ("these", "those", "the", "some", "many", "all"),
    ("those", "these", "the", "some", "many", "all"),
    ("some", "many", "all", "no", "few", "these"),
    ("all", "some", "many", "no", "few", "these"),
    ("my", "your", "his", "her", "our", "their"),
    ("your", "my", "his", "her", "our", "their"),
    ("his", "her", "my", "your", "our", "their"),
    ("her", "his", "my", "your", "our", "their"),
    ("our", "my", "your", "his", "her", "their"),
    ("their", "my", "your", "his", "her", "our"),
    ("its", "my", "your", "his", "her", "their"),
    ("in", "on", "at", "under", "behind", "near", "with"),
    ("on", "in", "at", "under", "behind", "near", "with"),
    ("at", "in", "on", "near", "behind", "under", "with"),
    ("with", "without", "for", "near", "behind", "against"),
    ("without", "with", "for", "near", "behind", "against"),
    ("for", "with", "without", "against", "near", "behind"),
    ("from", "to", "toward", "into", "through", "near"),
    ("to", "from", "toward", "into", "through", "near"),
    ("into", "to", "from", "toward", "through", "near"),
    ("under", "over", "behind", "near", "in", "on"),
    ("over", "under", "behind", "near", "in", "on"),
    ("before", "after", "during", "behind", "near"),
    ("after", "before", "during", "behind", "near"),
    ("and", "or", "but", "nor", "yet"),
    ("or", "and", "but", "nor", "yet"),
    ("but", "and", "or", "yet", "so"),
    ("he", "she", "it", "they", "we", "I"),
    ("she", "he", "it", "they", "we", "I"),
    ("they", "we", "you", "he", "she", "I"),
    ("we", "they", "you", "he", "she", "I"),
    ("i", "you", "we", "they", "he", "she"),
    ("you", "I", "we", "they", "he", "she"),
    ("him", "her", "them", "us", "me", "you"),
    ("them", "us", "him", "her", "me", "you"),
    ("me", "you", "him", "her", "us", "them"),
    ("us", "them", "him", "her", "me", "you"),
    ("not", "never", "also", "still", "always"),
    ("very", "quite", "rather", "too", "so"),
    ("this", "that", "the", "every", "no", "one"),
    ("that", "this", "the", "every", "no", "one"),
    ("every", "each", "no", "the", "this", "that"),
    ("of", "for", "with", "about", "without", "against"),
    ("by", "with", "near", "behind", "without", "through"),
    ("through", "into", "across", "over", "under", "behind"),
    ("against", "with", "without", "for", "near", "behind"),
    ("among", "with", "near", "behind", "without", "against"),
    ("until", "before", "after", "since", "when"),
    ("if", "when", "because", "although", "unless"),
    ("when", "if", "because", "although", "unless", "where"),
    ("where", "when", "if", "because", "although"),
    ("here", "there", "now", "then", "today"),
    ("there", "here", "now", "then", "today"),
    ("now", "then", "today", "soon", "already"),
    ("then", "now", "soon", "later", "again"),
    # modal and auxiliary verbs: WordNet has no modals and lists "is"/"has" only as irregular forms
    ("shall", "will", "can", "may", "must", "should"),
    ("will", "shall", "can", "may", "must", "should"),
    ("should", "would", "could", "might", "must"),
    ("would", "could", "should", "might", "must"),
    ("could", "would", "should", "might", "must"),
    ("can", "may", "must", "will", "should"),
    ("may", "can", "must", "will", "should"),
    ("must", "can", "may", "will", "should"),
    ("is", "was", "seems", "remains", "becomes"),
    ("are", "were", "seem", "remain", "become"),
    ("was", "is", "seemed", "remained", "became"),
    ("were", "are", "seemed", "remained", "became"),
    ("am", "was", "seem", "remain", "feel"),
    ("be", "become", "remain", "seem", "stay"),
    ("has", "had", "wants", "needs", "gets"),
    ("have", "had", "want", "need", "get"),
    ("had", "has", "wanted", "needed", "got"),
):
    CLOSED_CLASS.setdefault(_group[0], _group[1:])
#: Small cardinal numbers: the nearest other numbers first.
_NUMBERS = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)
for _i, _n in enumerate(_NUMBERS):
    CLOSED_CLASS.setdefault(
        _n,
        tuple(
            sorted((m for m in _NUMBERS if m != _n), key=lambda m: (abs(_NUMBERS.index(m) - _i), m))
        ),
    )

_POS_ORDER = ("n", "v", "a", "r")
_WORD_RE = re.compile(r"^[A-Za-z]+$")
_VOWELS = set("aeiou")


def match_case(original: str, candidate: str) -> str:
    """Return ``candidate`` in the letter case of ``original``.

    >>> match_case("Dog", "cat"), match_case("DOG", "cat"), match_case("dog", "Paris")
    ('Cat', 'CAT', 'Paris')
    """
    if len(original) > 1 and original.isupper():
        return candidate.upper()
    if original[:1].isupper():
        return candidate[:1].upper() + candidate[1:]
    return candidate


def inflection(word: str, lemma: str, pos: str) -> str | None:
    """Name the regular English inflection that turns ``lemma`` into ``word``.

    Returns ``""`` for the base form, ``"s"``, ``"ed"``, ``"ing"``, ``"er"`` or
    ``"est"`` for regular forms, and ``None`` for irregular ones (``ran``).

    >>> inflection("dogs", "dog", "n"), inflection("loved", "love", "v"), inflection("ran", "run", "v")
    ('s', 'ed', None)
    >>> inflection("cities", "city", "n"), inflection("running", "run", "v"), inflection("big", "big", "a")
    ('s', 'ing', '')
    """
    word = word.lower()
    if word == lemma:
        return ""
    for suffix in ("s", "ed", "ing", "er", "est"):
        if inflect(lemma, suffix, pos) == word:
            return suffix
        if suffix in ("ed", "ing", "er", "est") and word == lemma + lemma[-1] + suffix:
            return suffix  # doubled consonant: stopped, running, bigger
    return None


def inflect(lemma: str, suffix: str, pos: str) -> str:
    """Apply a regular English inflection to a lemma (without consonant doubling).

    >>> [inflect(w, "s", "n") for w in ("dog", "box", "city", "day")]
    ['dogs', 'boxes', 'cities', 'days']
    >>> [inflect(w, "ed", "v") for w in ("love", "walk", "carry")], inflect("make", "ing", "v")
    (['loved', 'walked', 'carried'], 'making')
    """
    if not suffix:
        return lemma
    consonant_y = lemma.endswith("y") and len(lemma) > 1 and lemma[-2] not in _VOWELS
    if suffix == "s":
        if lemma.endswith(("s", "x", "z", "ch", "sh")):
            return lemma + "es"
        return lemma[:-1] + "ies" if consonant_y else lemma + "s"
    if suffix in ("ed", "er", "est"):
        if lemma.endswith("e"):
            return lemma + suffix[1:]
        return lemma[:-1] + "i" + suffix if consonant_y else lemma + suffix
    if suffix == "ing":
        if lemma.endswith("e") and not lemma.endswith(("ee", "ye", "oe")) and len(lemma) > 2:
            return lemma[:-1] + "ing"
        return lemma + "ing"
    raise ValueError(f"unknown suffix {suffix!r}")


#: Penn tags of the inflected slot, by WordNet part of speech and regular ending.
_SLOT_TAGS = {
    ("n", "s"): ("NNS",),
    ("v", "s"): ("VBZ",),
    ("v", "ed"): ("VBD", "VBN"),
    ("v", "ing"): ("VBG",),
    ("a", "er"): ("JJR",),
    ("a", "est"): ("JJS",),
    ("s", "er"): ("JJR",),
    ("s", "est"): ("JJS",),
    ("r", "er"): ("RBR",),
    ("r", "est"): ("RBS",),
}


def _lemminflect():
    """Return lemminflect when installed (the ``build`` extra); without it, inflected candidates are not checked."""
    return find("lemminflect")


def attested(form: str, lemma: str, pos: str, suffix: str) -> bool:
    """Whether ``form`` is a dictionary inflection of ``lemma`` for the slot ``(pos, suffix)``.

    The check uses lemminflect's dictionary only (never its rules for unknown
    words), so regular-looking non-words (*deads*, *maked*) are rejected. A base
    form (``suffix == ""``) is always attested; without lemminflect everything is.

    >>> attested("dogs", "dog", "n", "s"), attested("deads", "dead", "n", "s"), attested("maked", "make", "v", "ed")
    (True, False, False)
    """
    li = _lemminflect()
    if li is None or not suffix:
        return True
    tags = _SLOT_TAGS.get((pos, suffix))
    if tags is None:
        return False
    low = form.lower()
    return any(
        low in (f.lower() for f in li.getInflection(lemma.lower(), tag, inflect_oov=False))
        for tag in tags
    )


class WordNetSubstitutes:
    """Same-part-of-speech alternatives for a word from WordNet 3.0, ranked deterministically.

    For the word's dominant part of speech (largest sense-tagged count over its
    lemmas; ties by n, v, a, r) and its ``senses`` most frequent senses, the
    candidates are: antonyms, then co-hyponyms (other hyponyms of the sense's
    hypernyms; similar adjectives for adjective satellites), then synonyms.
    Within each group candidates are ranked by WordNet frequency count
    (``cntlist.rev``), ties alphabetically. Multi-word lemmas, the word itself
    and its case variants are dropped; candidates are inflected like the word
    (regular English morphology) and given its letter case; an inflected
    candidate that is not an attested word form (lemminflect's dictionary,
    :func:`attested`) is dropped. Closed-class words use :data:`CLOSED_CLASS`.
    Context is ignored.
    """

    name = "wordnet"

    def __init__(
        self, senses: int = 2, closed_class: bool = True, wordnet=None, source: str | None = None
    ):
        if senses < 1:
            raise UsageError(f"--wordnet-senses must be at least 1, got {senses}.")
        self.senses = senses
        self.closed_class = closed_class
        self._source = source
        self._wn = wordnet
        self._irregular_cache: dict = {}
        self._memo: dict[tuple[str, int], list[str]] = {}

    @property
    def wn(self):
        """The nltk WordNet reader (loaded on first use)."""
        if self._wn is None:
            self._wn = load_wordnet(self._source)
        return self._wn

    @property
    def model_id(self) -> str:
        """Identifier for the manifest."""
        li = _lemminflect()
        checked = f"+lemminflect-{getattr(li, '__version__', 'unknown')}" if li is not None else ""
        return "wordnet-3.0" + ("+closed-class" if self.closed_class else "") + checked

    @property
    def revision(self) -> str:
        """Pin of the database files."""
        return wordnet_revision(self._source)

    def _dominant(self, word: str) -> tuple[str, str, list] | None:
        wn = self.wn
        best = None
        for pos in _POS_ORDER:
            lemma = wn.morphy(word, pos)
            if lemma is None:
                continue
            synsets = wn.synsets(lemma, pos)
            if not synsets:
                continue
            count = sum(
                lm.count() for s in synsets for lm in s.lemmas() if lm.name().lower() == lemma
            )
            if best is None or count > best[0]:
                best = (count, pos, lemma, synsets)
        if best is None:
            return None
        return best[1], best[2], best[3]

    def candidates(self, word: str) -> list[str]:
        """Return every candidate lemma for ``word``, best first (uninflected, lowercase)."""
        low = word.lower()
        if self.closed_class and low in CLOSED_CLASS:
            return [c for c in CLOSED_CLASS[low]]
        found = self._dominant(low)
        if found is None:
            return []
        pos, lemma, synsets = found
        antonyms: dict[str, Any] = {}
        cohyponyms: dict[str, Any] = {}
        synonyms: dict[str, Any] = {}
        for synset in synsets[: self.senses]:
            own = [lm for lm in synset.lemmas() if lm.name().lower() == lemma]
            for lm in own:
                for ant in lm.antonyms():
                    antonyms[ant.name()] = max(antonyms.get(ant.name(), 0), ant.count())
            siblings = []
            for hyper in synset.hypernyms() + synset.instance_hypernyms():
                siblings += [h for h in hyper.hyponyms() + hyper.instance_hyponyms() if h != synset]
            if pos == "a" or synset.pos() == "s":
                siblings += synset.similar_tos()
            for sib in siblings:
                for lm in sib.lemmas():
                    cohyponyms[lm.name()] = max(cohyponyms.get(lm.name(), 0), lm.count())
            for lm in synset.lemmas():
                synonyms[lm.name()] = max(synonyms.get(lm.name(), 0), lm.count())
        out: list[str] = []
        seen = {low, lemma}
        for group in (antonyms, cohyponyms, synonyms):
            for name, _ in sorted(group.items(), key=lambda kv: (-kv[1], kv[0])):
                cand = name.lower()
                if cand in seen or not _WORD_RE.match(name):
                    continue
                seen.add(cand)
                out.append(name)
        return out

    def substitutes(self, word: str, k: int) -> list[str]:
        """Return up to ``k`` alternatives for ``word``, inflected and cased like it.

        Words that are not alphabetic, have no WordNet entry or an irregular
        inflection (``ran``) get none.
        """
        key = (word, k)
        if key not in self._memo:
            self._memo[key] = self._substitutes(word, k)
        return list(self._memo[key])

    def _substitutes(self, word: str, k: int) -> list[str]:
        if not _WORD_RE.match(word):
            return []
        low = word.lower()
        if self.closed_class and low in CLOSED_CLASS:
            out = [c if c == "I" else match_case(word, c) for c in CLOSED_CLASS[low]]
            return _dedup(word, out)[:k]
        found = self._dominant(low)
        if found is None:
            return []
        pos, lemma, _ = found
        suffix = inflection(low, lemma, pos)
        if suffix is None:
            return _dedup(word, self._irregular_alternatives(word, low, pos))[:k]
        irregular = self._irregular(pos) if suffix else set()
        out = [
            match_case(word, inflect(c, suffix, pos) if c.islower() else c)
            for c in self.candidates(word)
            if c not in irregular  # "make" + "ed" is not "maked"; drop rather than guess
            and (not c.islower() or attested(inflect(c, suffix, pos), c, pos, suffix))
        ]
        return _dedup(word, out)[:k]

    def _irregular_alternatives(self, word: str, low: str, pos: str) -> list[str]:
        """Alternatives for an irregular form (``said``, ``children``, ``better``).

        Regular candidates get the regular ending of the same slot (past/participle
        ``-ed``, plural ``-s``, comparative ``-er``, superlative ``-est``, 3rd person
        ``-s`` for ``has``/``does``); irregular ones their own exception form when
        WordNet lists exactly one that fits (``tell`` -> ``told``; for ``go`` the
        participle ``gone`` fits ``taken``, ``went`` fits ``took``), else they are skipped.
        """
        if pos == "v":
            suffix = "s" if low.endswith("s") and not low.endswith("ss") else "ed"
        elif pos == "n":
            suffix = "s"
        elif pos == "a":
            suffix = "est" if low.endswith("st") else "er"
        else:
            return []
        forms = self._irregular_forms(pos)
        participle = pos == "v" and suffix == "ed" and low.endswith(("n", "ne"))
        out = []
        for cand in self.candidates(word):
            if not cand.islower():
                continue
            if cand in forms:
                if pos == "v" and suffix == "s":
                    fitting = [f for f in forms[cand] if f.endswith("s")]
                elif pos == "v":  # past or participle; exception lists also hold "putting", "hits"
                    fitting = [
                        f
                        for f in forms[cand]
                        if not f.endswith(("ing", "s")) and f.endswith(("n", "ne")) == participle
                    ]
                else:
                    fitting = list(forms[cand])
                if len(fitting) != 1:
                    continue
                out.append(match_case(word, fitting[0]))
            elif attested(inflect(cand, suffix, pos), cand, pos, suffix):
                out.append(match_case(word, inflect(cand, suffix, pos)))
        return out

    def _irregular_forms(self, pos: str) -> dict[str, list[str]]:
        """Lemma -> its irregular forms (``go`` -> ``gone``, ``went``), from WordNet's exception lists."""
        key = "forms:" + pos
        if key not in self._irregular_cache:
            forms: dict[str, list[str]] = {}
            for form, lemmas in self.wn._exception_map.get(pos, {}).items():
                for lemma in lemmas:
                    if form != lemma and "_" not in form:
                        forms.setdefault(lemma, []).append(form)
            self._irregular_cache[key] = {k: sorted(v) for k, v in forms.items()}
        return self._irregular_cache[key]

    def _irregular(self, pos: str) -> set[str]:
        """Lemmas with an irregular form in WordNet's exception lists (``verb.exc``: made -> make)."""
        if pos not in self._irregular_cache:
            wn = self.wn
            exc = wn._exception_map.get(pos, {})
            self._irregular_cache[pos] = {lemma for lemmas in exc.values() for lemma in lemmas}
        return self._irregular_cache[pos]

    def batch(
        self,
        texts: Sequence[str],
        spans: Sequence[Sequence[tuple[int, int]]],
        positions: Sequence[Sequence[int]],
        k: int,
    ) -> list[list[list[str]]]:
        """Return, per sentence and per requested token position, up to ``k`` alternatives.

        Same interface as :meth:`builders.adapters.mlm.MLMSubstitutes.batch`; context is ignored.
        """
        return [
            [self.substitutes(text[sp[j][0] : sp[j][1]], k) for j in pos]
            for text, sp, pos in zip(texts, spans, positions)
        ]


def _dedup(word: str, cands: Sequence[str]) -> list[str]:
    seen = {word.lower()}
    out = []
    for c in cands:
        if c.lower() not in seen:
            seen.add(c.lower())
            out.append(c)
    return out
