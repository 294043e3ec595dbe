"""Contextual bilingual dictionary extraction (Gaschi et al. 2022, Section IV.A), as pure functions.

A sentence pair and a bilingual dictionary give a pair of words *in context*
only when we are certain of it: the source word has exactly one dictionary
translation in the target sentence, **and** that target word has exactly one
dictionary translation in the source sentence (the unique-candidate rule, in
both directions). Everything here takes plain values (strings, dicts, an
``rng``) and returns new values; reading files, dictionaries and aligners is
the job of :mod:`builders.cbd.build` and :mod:`builders.adapters`.

Stages (each a batch function: list in, list out, counts beside):
    1. :func:`build_lexicon`: fold and tokenise dictionary entries into keys.
    2. :func:`extract`: find dictionary units in each sentence, apply the rule,
       resolve overlapping multi-word matches.
    3. :func:`select`: ``--avoid-repetition`` and seeded sampling.
    4. :func:`aligner_records` + :func:`gold_precision` / :func:`dictionary_precision`:
       the statistical-aligner baseline and the paper's Table II comparison.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluators.core.errors import InputFileError
from evaluators.data.alignio import parse_links
from evaluators.schema import cbd as S

WORD_RE = re.compile(S.WORD_PATTERN)
#: Multi-word entries longer than this (in words) are ignored: FreeDict also
#: lists whole example sentences, which are never matched usefully.
MAX_NGRAM = 4
#: Longest entry (in characters) matched inside text without spaces (CC-CEDICT
#: words are almost all 1-4 characters; longer ones are idioms and names).
MAX_NOSPACE_CHARS = 6
#: Characters allowed between the words of a multi-word match ("New York",
#: "Anglo-Saxon", "aujourd'hui"); anything else (a comma) breaks the match.
_JOINERS = " -'\u2019\u2010\u2011"
#: Characters a dictionary entry may hold besides words and joiners: the period
#: of abbreviations ("etc.", "U.S."). An entry with anything else (MUSE lines
#: such as ``#of #des``, ``a}} a}}``, ``c++``, ``us$``) is not a word and is
#: dropped (reason ``not_a_word``): deleting the symbols would turn it into a
#: different, real-looking entry (``#of → #des`` into of → des).
_ENTRY_EXTRA = "."

#: The authors' settings (Gaschi et al. 2022, ``multilingual_eval/contextualized_pairs.py``):
#: words are lower-cased and accent-stripped before matching, and each word type
#: is used at most once (``avoid_repetition=True``). They are the defaults of the
#: pure functions below; the build CLI records the values used in the manifest.
PAPER_FOLD_CASE = True
PAPER_FOLD_ACCENTS = True
PAPER_AVOID_REPETITION = True

Pair = tuple[int, str, str]
Unit = tuple[int, int, str]  # (start, end, key): a dictionary entry found in a sentence


def fold(text: str, case: bool = False, accents: bool = False) -> str:
    """Normalise a string for matching: NFC, optionally case-folded and accent-stripped.

    >>> fold("Élève"), fold("Élève", case=True), fold("Élève", case=True, accents=True)
    ('Élève', 'élève', 'eleve')
    """
    text = unicodedata.normalize("NFC", text)
    if case:
        text = text.casefold()
    if accents:
        decomposed = unicodedata.normalize("NFD", text)
        text = unicodedata.normalize(
            "NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
        )
    return text


def word_spans(text: str) -> list[tuple[int, int]]:
    """Return the ``(start, end)`` character spans of the words of ``text``.

    >>> word_spans("Hello, New-York!")
    [(0, 5), (7, 10), (11, 15)]
    """
    return [m.span() for m in WORD_RE.finditer(text)]


def is_word_entry(text: str) -> bool:
    """Return whether a dictionary entry consists of words only (joiners and abbreviation periods between them).

    >>> [is_word_entry(t) for t in ["house", "New York", "aujourd'hui", "etc.", "#of", "a}}", "c++", "%"]]
    [True, True, True, True, False, False, False, False]
    """
    if not WORD_RE.search(text):
        return False
    return not WORD_RE.sub("", text).strip(_JOINERS + _ENTRY_EXTRA)


def entry_key(text: str, nospace: bool, case: bool, accents: bool) -> str:
    """Return the matching key of a dictionary entry: folded words joined by a space.

    Without spaces (Chinese, Japanese) the words are concatenated.

    >>> entry_key("Anglo-Saxon", False, True, False), entry_key("中国 人", True, False, False)
    ('anglo saxon', '中国人')
    """
    words = [fold(w, case, accents) for w in WORD_RE.findall(text)]
    return ("" if nospace else " ").join(words)


@dataclass(frozen=True)
class Lexicon:
    """A folded bilingual dictionary indexed for matching, in both directions.

    Attributes:
        fwd: source key -> target keys.
        bwd: target key -> source keys (the exact inverse of ``fwd``).
        src_prefixes / tgt_prefixes: proper prefixes of multi-word (or, without
            spaces, multi-character) keys, to stop n-gram growth early.
        src_nospace / tgt_nospace: match inside unspaced text (substrings).
        case / accents: folding applied to both entries and text.
        counts: entries read, kept, dropped by reason.
    """

    fwd: dict[str, frozenset[str]]
    bwd: dict[str, frozenset[str]]
    src_prefixes: frozenset[str]
    tgt_prefixes: frozenset[str]
    src_nospace: bool = False
    tgt_nospace: bool = False
    case: bool = False
    accents: bool = False
    counts: dict[str, object] = field(default_factory=dict)

    def __hash__(self) -> int:  # dict fields: identity is enough
        return id(self)


def _prefixes(keys: Iterable[str], nospace: bool) -> frozenset[str]:
    out: set[str] = set()
    for key in keys:
        if nospace:
            out.update(key[:i] for i in range(1, len(key)))
        else:
            parts = key.split(" ")
            out.update(" ".join(parts[:i]) for i in range(1, len(parts)))
    return frozenset(out)


def build_lexicon(
    entries: Iterable[tuple[str, str]],
    case: bool = PAPER_FOLD_CASE,
    accents: bool = PAPER_FOLD_ACCENTS,
    src_nospace: bool = False,
    tgt_nospace: bool = False,
    max_ngram: int = MAX_NGRAM,
    max_nospace_chars: int = MAX_NOSPACE_CHARS,
) -> Lexicon:
    """Fold and index ``(source, target)`` dictionary entries.

    Entries whose source or target is not made of words (:func:`is_word_entry`)
    are dropped and counted as ``not_a_word``; empty ones as ``empty``; n-grams
    over ``max_ngram`` words as ``too_long``.

    >>> lex = build_lexicon([("house", "Haus"), ("New York", "New York"), ("a b c d e", "x"), ("#of", "#des")], case=True)
    >>> sorted(lex.fwd), lex.fwd["house"], sorted(lex.src_prefixes), lex.counts["dropped"]
    (['house', 'new york'], frozenset({'haus'}), ['new'], {'too_long': 1, 'not_a_word': 1})
    """
    fwd: dict[str, set[str]] = {}
    read, dropped = 0, Counter[str]()

    def ok(key: str, nospace: bool) -> str | None:
        if not key:
            return "empty"
        if nospace:
            return "too_long" if len(key) > max_nospace_chars else None
        return "too_long" if key.count(" ") + 1 > max_ngram else None

    for src, tgt in entries:
        read += 1
        if not (is_word_entry(src) and is_word_entry(tgt)):
            dropped["not_a_word" if WORD_RE.search(src) and WORD_RE.search(tgt) else "empty"] += 1
            continue
        a, b = (
            entry_key(src, src_nospace, case, accents),
            entry_key(tgt, tgt_nospace, case, accents),
        )
        reason = ok(a, src_nospace) or ok(b, tgt_nospace)
        if reason:
            dropped[reason] += 1
            continue
        fwd.setdefault(a, set()).add(b)
    bwd: dict[str, set[str]] = {}
    for a, bs in fwd.items():
        for b in bs:
            bwd.setdefault(b, set()).add(a)
    counts: dict[str, Any] = {
        "in": read,
        "kept": sum(len(v) for v in fwd.values()),
        "dropped": dict(dropped),
        "source_keys": len(fwd),
        "target_keys": len(bwd),
    }
    counts["duplicates"] = read - sum(dropped.values()) - counts["kept"]
    return Lexicon(
        {k: frozenset(v) for k, v in fwd.items()},
        {k: frozenset(v) for k, v in bwd.items()},
        _prefixes(fwd, src_nospace),
        _prefixes(bwd, tgt_nospace),
        src_nospace,
        tgt_nospace,
        case,
        accents,
        counts,
    )


def find_units(
    text: str,
    keys: Mapping[str, object],
    prefixes: frozenset[str],
    nospace: bool = False,
    case: bool = False,
    accents: bool = False,
    max_ngram: int = MAX_NGRAM,
    max_nospace_chars: int = MAX_NOSPACE_CHARS,
) -> list[Unit]:
    """Return every dictionary entry occurring in ``text`` as ``(start, end, key)``.

    Spaced text: contiguous word n-grams (only joiners such as a space or a
    hyphen between them). Unspaced text: substrings of each word-character run.

    >>> find_units("The new York, new house", {"new york": 1, "house": 1, "york": 1}, frozenset({"new"}), case=True)
    [(4, 12, 'new york'), (8, 12, 'york'), (18, 23, 'house')]
    >>> find_units("new, York", {"new york": 1}, frozenset({"new"}))
    []
    >>> find_units("我爱中国人", {"中国": 1, "中国人": 1, "爱": 1}, frozenset({"中", "中国"}), nospace=True)
    [(1, 2, '爱'), (2, 4, '中国'), (2, 5, '中国人')]
    """
    out: list[Unit] = []
    folder = _folder(case, accents)
    if nospace:
        for m in WORD_RE.finditer(text):
            run = m.group()
            folded = folder(run)
            if len(folded) != len(run):  # folding changed lengths: offsets would drift
                folded = run
            base = m.start()
            for i in range(len(folded)):
                for j in range(i + 1, min(len(folded), i + max_nospace_chars) + 1):
                    sub = folded[i:j]
                    if sub in keys:
                        out.append((base + i, base + j, sub))
                    if sub not in prefixes:
                        break
        return out
    toks = [(m.start(), m.end(), folder(m.group())) for m in WORD_RE.finditer(text)]
    n = len(toks)
    for i in range(n):
        start, end, key = toks[i]
        if key in keys:
            out.append((start, end, key))
        if key not in prefixes:
            continue
        j = i
        while (
            j + 1 < n
            and j - i + 1 < max_ngram
            and not text[toks[j][1] : toks[j + 1][0]].strip(_JOINERS)
        ):
            j += 1
            key = key + " " + toks[j][2]
            if key in keys:
                out.append((start, toks[j][1], key))
            if key not in prefixes:
                break
    return out


_FOLDERS: dict[tuple[bool, bool], object] = {}


def _folder(case: bool, accents: bool):
    """Return a memoised :func:`fold` for fixed options (words repeat a lot in a corpus)."""
    if (case, accents) not in _FOLDERS:
        cache: dict[str, str] = {}

        def folder(word: str) -> str:
            out = cache.get(word)
            if out is None:
                out = fold(word, case, accents)
                if len(cache) < 2_000_000:
                    cache[word] = out
            return out

        _FOLDERS[(case, accents)] = folder
    return _FOLDERS[(case, accents)]


def _overlaps(a: tuple[int, int] | Unit, b: tuple[int, int] | Unit) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _outermost(idxs: list[int], units: Sequence[Unit]) -> list[int]:
    """Drop candidates nested inside a longer candidate of the same list (中 inside 中国).

    >>> _outermost([0, 1, 2], [(0, 1, "a"), (0, 2, "ab"), (5, 6, "c")])
    [1, 2]
    """
    if len(idxs) <= 1:
        return idxs
    out = []
    for i in idxs:
        a, b = units[i][0], units[i][1]
        if not any(
            j != i and units[j][0] <= a and b <= units[j][1] and units[j][1] - units[j][0] > b - a
            for j in idxs
        ):
            out.append(i)
    return out


def match_pair(
    src: str, tgt: str, lex: Lexicon, counts: Counter | None = None
) -> list[tuple[Unit, Unit]]:
    """Apply the unique-candidate rule to one sentence pair.

    A source unit ``s`` and target unit ``t`` are kept when ``t`` is the only
    dictionary translation of ``s`` found in ``tgt`` and ``s`` the only one of
    ``t`` found in ``src``. A candidate nested inside a longer candidate of the
    same word (``中`` inside ``中国``, both glossed "China") does not count
    separately: the longer one stands for both, and the nested source unit is
    dropped as ``nested``. Kept pairs that overlap a longer kept pair (``York``
    inside ``New York``) are dropped. ``counts`` receives one reason per source unit.

    >>> lex = build_lexicon([("dog", "Hund"), ("the", "der"), ("the", "die"), ("cat", "Katze")], case=True)
    >>> [(src[a[0]:a[1]], tgt[b[0]:b[1]]) for src, tgt in [("The dog and the cat", "Der Hund und die Katze")]
    ...  for a, b in match_pair(src, tgt, lex)]
    [('dog', 'Hund'), ('cat', 'Katze')]
    """
    src_units = find_units(src, lex.fwd, lex.src_prefixes, lex.src_nospace, lex.case, lex.accents)
    tgt_units = find_units(tgt, lex.bwd, lex.tgt_prefixes, lex.tgt_nospace, lex.case, lex.accents)
    by_key: dict[str, list[int]] = {}
    for k, unit in enumerate(tgt_units):
        by_key.setdefault(unit[2], []).append(k)
    rows: list[list[int]] = []
    cols: list[list[int]] = [[] for _ in tgt_units]
    fwd = lex.fwd
    for si, unit in enumerate(src_units):
        translations = fwd[unit[2]]
        if len(translations) < len(by_key):
            row = [k for t in translations if t in by_key for k in by_key[t]]
        else:
            row = [k for t, ks in by_key.items() if t in translations for k in ks]
        rows.append(row)
        for k in row:
            cols[k].append(si)
    kept: list[tuple[Unit, Unit]] = []
    for si, (unit, row) in enumerate(zip(src_units, rows)):
        row = _outermost(row, tgt_units)
        if not row:
            reason = "no_candidate"
        elif len(row) > 1:
            reason = "ambiguous_source"
        else:
            col = _outermost(cols[row[0]], src_units)
            if col == [si]:
                kept.append((unit, tgt_units[row[0]]))
                continue
            reason = "ambiguous_target" if si in col else "nested"
        if counts is not None:
            counts[reason] += 1
    # Distinct one-word units of spaced text cannot overlap: skip the quadratic check then.
    if lex.src_nospace or lex.tgt_nospace or any(" " in s[2] or " " in t[2] for s, t in kept):
        # Longest first (by characters on both sides), then left to right.
        kept.sort(key=lambda p: (-(p[0][1] - p[0][0] + p[1][1] - p[1][0]), p[0][0], p[1][0]))
        out: list[tuple[Unit, Unit]] = []
        for s, t in kept:
            if any(_overlaps(s, a) or _overlaps(t, b) for a, b in out):
                if counts is not None:
                    counts["overlap"] += 1
                continue
            out.append((s, t))
        out.sort(key=lambda p: (p[0][0], p[1][0]))
    else:
        out = kept
    if counts is not None:
        counts["kept"] += len(out)
        counts["source_units"] += len(src_units)
    return out


def make_record(
    sent_id: int, src: str, tgt: str, s: tuple[int, int], t: tuple[int, int], method: str
) -> dict:
    """Return one dataset row (schema :mod:`evaluators.schema.cbd`).

    >>> make_record(3, "a dog", "ein Hund", (2, 5), (4, 8), "dictionary")["id"]
    '3:2-5:4-8'
    """
    return {
        S.ID: f"{sent_id}:{s[0]}-{s[1]}:{t[0]}-{t[1]}",
        S.SENT_ID: sent_id,
        S.SRC_SENTENCE: src,
        S.TGT_SENTENCE: tgt,
        S.SRC_WORD: src[s[0] : s[1]],
        S.TGT_WORD: tgt[t[0] : t[1]],
        S.SRC_START: s[0],
        S.SRC_END: s[1],
        S.TGT_START: t[0],
        S.TGT_END: t[1],
        S.METHOD: method,
    }


def extract(pairs: Sequence[Pair], lex: Lexicon) -> tuple[list[dict], dict[str, int]]:
    """Extract contextual dictionary pairs from ``(sent_id, src, tgt)`` sentence pairs.

    Returns:
        ``(records, counts)``; counts has ``sentences``, ``sentences_with_pairs``,
        ``source_units`` (dictionary entries found in source sentences), ``kept``
        and one key per drop reason (``no_candidate``, ``ambiguous_source``,
        ``ambiguous_target``, ``nested``, ``overlap``).

    >>> lex = build_lexicon([("house", "Haus"), ("house", "Hause"), ("red", "rot")], case=True)
    >>> recs, c = extract([(0, "The red house", "Das rote Haus"), (1, "red house", "Haus Hause rot")], lex)
    >>> [(r["src_word"], r["tgt_word"]) for r in recs], c["kept"], c["ambiguous_source"], c["no_candidate"]
    ([('house', 'Haus'), ('red', 'rot')], 2, 1, 1)
    """
    counts: Counter = Counter()
    records: list[dict] = []
    for sent_id, src, tgt in pairs:
        counts["sentences"] += 1
        found = match_pair(src, tgt, lex, counts)
        if found:
            counts["sentences_with_pairs"] += 1
        for s, t in found:
            records.append(make_record(sent_id, src, tgt, s[:2], t[:2], "dictionary"))
    for key in (
        "sentences",
        "sentences_with_pairs",
        "source_units",
        "kept",
        "no_candidate",
        "ambiguous_source",
        "ambiguous_target",
        "nested",
        "overlap",
    ):
        counts.setdefault(key, 0)
    return records, dict(counts)


def select(
    records: Sequence[dict],
    rng: np.random.Generator,
    avoid_repetition: bool = PAPER_AVOID_REPETITION,
    max_pairs: int | None = None,
    accents: bool = PAPER_FOLD_ACCENTS,
) -> tuple[list[dict], dict[str, int]]:
    """Apply ``--avoid-repetition`` then sample at most ``max_pairs`` records with ``rng``.

    With ``avoid_repetition`` each source and each target word type (case-folded,
    and accent-stripped when ``accents``, as words are matched) is used at most once; which occurrence survives is drawn with ``rng``.
    Output keeps the input order.

    >>> recs = [{"src_word": w, "tgt_word": w.upper()} for w in ["a", "b", "a", "c"]]
    >>> out, c = select(recs, np.random.default_rng(0), avoid_repetition=True)
    >>> sorted(r["src_word"] for r in out), c
    (['a', 'b', 'c'], {'in': 4, 'repetition': 1, 'sampling': 0, 'kept': 3})
    """
    idx = list(range(len(records)))
    dropped_rep = 0
    if avoid_repetition:
        seen_src: set[str] = set()
        seen_tgt: set[str] = set()
        keep = []
        for i in rng.permutation(len(records)).tolist():
            a, b = (
                fold(records[i][S.SRC_WORD], True, accents),
                fold(records[i][S.TGT_WORD], True, accents),
            )
            if a in seen_src or b in seen_tgt:
                dropped_rep += 1
                continue
            seen_src.add(a)
            seen_tgt.add(b)
            keep.append(i)
        idx = sorted(keep)
    dropped_sample = 0
    if max_pairs is not None and len(idx) > max_pairs:
        chosen = rng.choice(len(idx), size=max_pairs, replace=False)
        dropped_sample = len(idx) - max_pairs
        idx = [idx[i] for i in sorted(chosen.tolist())]
    out = [records[i] for i in idx]
    return out, {
        "in": len(records),
        "repetition": dropped_rep,
        "sampling": dropped_sample,
        "kept": len(out),
    }


# ---------------------------------------------------------------- aligner baseline


def aligner_tokens(text: str, nospace: bool = False) -> list[tuple[int, int]]:
    """Return the token spans given to a statistical aligner (characters when unspaced).

    >>> aligner_tokens("a dog."), aligner_tokens("中国", nospace=True)
    ([(0, 1), (2, 5)], [(0, 1), (1, 2)])
    """
    spans = word_spans(text)
    if not nospace:
        return spans
    return [(i, i + 1) for a, b in spans for i in range(a, b)]


def aligner_records(
    pairs: Sequence[Pair],
    src_spans: Sequence[Sequence[tuple[int, int]]],
    tgt_spans: Sequence[Sequence[tuple[int, int]]],
    links: Sequence[Iterable[tuple[int, int]]],
    method: str,
) -> tuple[list[dict], dict[str, int]]:
    """Turn aligner links into word pairs: keep the one-to-one links only.

    A link ``(i, j)`` is kept when source token ``i`` has no other link and
    target token ``j`` has no other link, the aligner's analogue of the
    unique-candidate rule.

    >>> pairs = [(0, "a b c", "x y z")]
    >>> spans = [aligner_tokens("a b c")]
    >>> recs, c = aligner_records(pairs, spans, spans, [{(0, 0), (1, 1), (1, 2), (2, 2)}], "fast_align")
    >>> [(r["src_word"], r["tgt_word"]) for r in recs], c
    ([('a', 'x')], {'sentences': 1, 'links': 4, 'kept': 1, 'not_one_to_one': 3})
    """
    if not (len(pairs) == len(src_spans) == len(tgt_spans) == len(links)):
        raise ValueError("pairs, token spans and links must have the same length")
    records: list[dict] = []
    n_links = kept = 0
    for (sent_id, src, tgt), ss, ts, ls in zip(pairs, src_spans, tgt_spans, links):
        ls = sorted(set(ls))
        n_links += len(ls)
        src_deg = Counter(i for i, _ in ls)
        tgt_deg = Counter(j for _, j in ls)
        for i, j in ls:
            if src_deg[i] == 1 and tgt_deg[j] == 1 and i < len(ss) and j < len(ts):
                records.append(make_record(sent_id, src, tgt, ss[i], ts[j], method))
                kept += 1
    return records, {
        "sentences": len(pairs),
        "links": n_links,
        "kept": kept,
        "not_one_to_one": n_links - kept,
    }


# ---------------------------------------------------------------- Table II: precision


@dataclass(frozen=True)
class Precision:
    """Proportion of extracted pairs judged correct, with raw counts.

    Attributes:
        correct: pairs judged correct.
        judged: pairs that could be judged (a gold alignment exists for the sentence).
        total: all pairs.
    """

    correct: int
    judged: int
    total: int

    @property
    def precision(self) -> float | None:
        """``correct / judged`` (``None`` when nothing could be judged)."""
        return self.correct / self.judged if self.judged else None

    def to_dict(self) -> dict:
        """Return the counts and the unrounded precision."""
        return {
            "correct": self.correct,
            "judged": self.judged,
            "total": self.total,
            "precision": self.precision,
        }


def parse_pharaoh(
    line: str,
    one_based: bool = False,
    lengths: tuple[int, int] | None = None,
    where: str = "",
) -> tuple[frozenset[tuple[int, int]], frozenset[tuple[int, int]]]:
    """Parse one Pharaoh line into 0-based ``(sure, possible)`` link sets (possible includes sure).

    ``i-j`` is a sure link, ``ipj`` or ``i?j`` a possible one (awesome-align / WPT
    convention), read by :func:`evaluators.data.alignio.parse_links`, the one Pharaoh codec.

    >>> parse_pharaoh("1-2 2p3 3?3", one_based=True)
    (frozenset({(0, 1)}), frozenset({(0, 1), (1, 2), (2, 2)}))

    Args:
        line: the links.
        one_based: the indices start at 1.
        lengths: ``(source tokens, target tokens)`` of the sentence, to range-check the links.
        where: where the line is, for messages (" on line 3 of 'gold.txt'").

    Raises:
        InputFileError: a token that is not a link, an index 0 in a 1-based line, or a
            link beyond the sentence.
    """
    raw_sure, raw_possible = parse_links(line, where)
    shift = 1 if one_based else 0
    if shift and any(i == 0 or j == 0 for i, j in raw_possible):
        raise InputFileError(
            f"Gold alignment{where} has index 0 but --gold-one-based was given; drop that flag."
        )
    sure = frozenset((i - shift, j - shift) for i, j in raw_sure)
    possible = frozenset((i - shift, j - shift) for i, j in raw_possible)
    if lengths is not None:
        n_src, n_tgt = lengths
        for i, j in sorted(possible):
            if i >= n_src or j >= n_tgt:
                raise InputFileError(
                    f"Gold link {i + shift}-{j + shift}{where} is out of range: the sentence pair has {n_src} source "
                    f"and {n_tgt} target whitespace tokens ({'1' if shift else '0'}-based); pass the alignments of "
                    f"this corpus{'' if shift else ' (or --gold-one-based if they start at 1)'}."
                )
    return sure, possible


def _ws_tokens(text: str, start: int, end: int) -> set[int]:
    out = set()
    for k, m in enumerate(re.finditer(r"\S+", text)):
        if m.start() < end and start < m.end():
            out.add(k)
    return out


def gold_precision(
    records: Sequence[dict], gold: Mapping[int, Iterable[tuple[int, int]]]
) -> Precision:
    """Judge pairs against gold word alignments over whitespace tokens.

    A pair is correct when some gold link joins a whitespace token of its source
    word to a whitespace token of its target word. ``gold`` maps ``sent_id`` to
    links (sure + possible); sentences without gold are not judged.

    >>> rec = make_record(0, "le chat noir", "the black cat", (3, 7), (10, 13), "dictionary")
    >>> gold_precision([rec], {0: {(1, 2), (2, 1)}}).to_dict()
    {'correct': 1, 'judged': 1, 'total': 1, 'precision': 1.0}
    """
    correct = judged = 0
    for r in records:
        links = gold.get(r[S.SENT_ID])
        if links is None:
            continue
        judged += 1
        a = _ws_tokens(r[S.SRC_SENTENCE], r[S.SRC_START], r[S.SRC_END])
        b = _ws_tokens(r[S.TGT_SENTENCE], r[S.TGT_START], r[S.TGT_END])
        if any(i in a and j in b for i, j in links):
            correct += 1
    return Precision(correct, judged, len(records))


def dictionary_precision(records: Sequence[dict], lex: Lexicon) -> Precision:
    """Judge pairs against the dictionary: correct when the target word is a listed translation.

    >>> lex = build_lexicon([("cat", "chat")])
    >>> recs = [make_record(0, "cat", "chat", (0, 3), (0, 4), "x"), make_record(0, "cat", "chien", (0, 3), (0, 5), "x")]
    >>> dictionary_precision(recs, lex).to_dict()
    {'correct': 1, 'judged': 2, 'total': 2, 'precision': 0.5}
    """
    correct = 0
    for r in records:
        a = entry_key(r[S.SRC_WORD], lex.src_nospace, lex.case, lex.accents)
        b = entry_key(r[S.TGT_WORD], lex.tgt_nospace, lex.case, lex.accents)
        if b in lex.fwd.get(a, ()):
            correct += 1
    return Precision(correct, len(records), len(records))


def judge(
    records: Sequence[dict], gold: Mapping[int, Iterable[tuple[int, int]]] | None, lex: Lexicon
) -> dict:
    """Return Table 2's precision row of ``records``: against gold alignments when given, else the dictionary.

    >>> recs = [make_record(0, "cat", "chat", (0, 3), (0, 4), "x")]
    >>> judge(recs, None, build_lexicon([("cat", "chat")]))
    {'pairs': 1, 'correct': 1, 'judged': 1, 'total': 1, 'precision': 1.0, 'against': 'dictionary'}
    """
    if gold is not None:
        p = gold_precision(records, gold)
        against = "gold alignments"
    else:
        p = dictionary_precision(records, lex)
        against = "dictionary"
    return {"pairs": len(records), **p.to_dict(), "against": against}


def selection_counts(sel: dict) -> dict:
    """The manifest's counts of one :func:`select` call: in, kept, dropped by cause.

    >>> selection_counts({"in": 5, "kept": 3, "repetition": 1, "sampling": 1})
    {'in': 5, 'kept': 3, 'dropped': {'repetition': 1, 'sampling': 1}}
    """
    return {
        "in": sel["in"],
        "kept": sel["kept"],
        "dropped": {"repetition": sel["repetition"], "sampling": sel["sampling"]},
    }


def extraction_counts(lexicon: dict, stage: dict, sel: dict) -> dict:
    """The manifest's counts of the ``test`` split: dictionary, extraction stages, selection."""
    return {
        "dictionary": lexicon,
        "extraction": {
            "in": stage["sentences"],
            "sentences_with_pairs": stage["sentences_with_pairs"],
            "source_units": stage["source_units"],
            "kept": stage["kept"],
            "dropped": {
                k: stage[k]
                for k in (
                    "no_candidate",
                    "ambiguous_source",
                    "ambiguous_target",
                    "nested",
                    "overlap",
                )
            },
        },
        "selection": selection_counts(sel),
    }
