"""Extraction rules of the contextual bilingual dictionary, on hand-made sentences."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from builders.adapters import dictionaries as D
from builders.cbd import logic
from evaluators.core.errors import EngineUnavailableError, InputFileError

DICT = [
    ("dog", "Hund"),
    ("cat", "Katze"),
    ("the", "der"),
    ("the", "die"),
    ("the", "das"),
    ("house", "Haus"),
    ("house", "Hause"),
    ("red", "rot"),
    ("red", "rote"),
    ("new york", "New York"),
    ("york", "York"),
    ("big", "groß"),
    ("large", "groß"),
    ("sees", "sieht"),
]


def pairs_of(records):
    return [(r["src_word"], r["tgt_word"]) for r in records]


@pytest.fixture
def lex():
    return logic.build_lexicon(DICT, case=True)


def test_unique_candidate_rule_keeps_expected_pairs(lex):
    corpus = [
        # "the" has three translations, two of which (der, die) occur: ambiguous_source.
        (0, "The dog sees the cat", "Der Hund sieht die Katze"),
        # "house" -> both Haus and Hause occur: ambiguous_source; "red" -> rote only: kept;
        # "The" -> only "Das" occurs, and "Das" maps back to this one "The": kept.
        (1, "The red house", "Das rote Haus im Hause"),
        # "big" and "large" both map to "groß": each source word has one candidate, but
        # groß maps back to two source words: ambiguous_target, both dropped.
        (2, "big and large", "groß"),
    ]
    records, counts = logic.extract(corpus, lex)
    assert pairs_of(records) == [
        ("dog", "Hund"),
        ("sees", "sieht"),
        ("cat", "Katze"),
        ("The", "Das"),
        ("red", "rote"),
    ]
    assert counts["ambiguous_source"] == 3  # The and the in sentence 0 (der and die), house
    assert counts["ambiguous_target"] == 2  # big, large
    assert counts["no_candidate"] == 0
    assert counts["kept"] == 5 and counts["sentences"] == 3 and counts["sentences_with_pairs"] == 2
    assert counts["source_units"] == 10


def test_offsets_point_at_the_words(lex):
    records, _ = logic.extract([(7, "My dog, my cat.", "Mein Hund, meine Katze.")], lex)
    for r in records:
        assert r["src_sentence"][r["src_start"] : r["src_end"]] == r["src_word"]
        assert r["tgt_sentence"][r["tgt_start"] : r["tgt_end"]] == r["tgt_word"]
        assert r["sent_id"] == 7 and r["method"] == "dictionary"
    assert [r["id"] for r in records] == ["7:3-6:5-9", "7:11-14:17-22"]


def test_repeated_word_is_ambiguous_in_both_directions(lex):
    # Two "dog"s: each has one candidate (Hund), but Hund maps back to two source words.
    records, counts = logic.extract([(0, "dog bites dog", "Hund beißt Hund")], lex)
    assert records == []
    assert counts["ambiguous_source"] == 2


def test_multiword_entry_wins_over_its_parts(lex):
    records, counts = logic.extract([(0, "New York is big", "New York ist groß")], lex)
    assert pairs_of(records) == [("New York", "New York"), ("big", "groß")]
    assert counts["overlap"] == 1  # York-York dropped inside New York


def test_multiword_entry_needs_adjacent_words(lex):
    records, _ = logic.extract([(0, "new, York", "New York")], lex)
    # "new york" does not match across the comma; York -> York is the only candidate both ways.
    assert pairs_of(records) == [("York", "York")]


def test_case_folding_is_optional():
    strict = logic.build_lexicon([("the", "der"), ("dog", "Hund")], case=False)
    folded = logic.build_lexicon([("the", "der"), ("dog", "Hund")], case=True)
    corpus = [(0, "The dog", "Der Hund")]
    assert pairs_of(logic.extract(corpus, strict)[0]) == [("dog", "Hund")]
    assert pairs_of(logic.extract(corpus, folded)[0]) == [("The", "Der"), ("dog", "Hund")]


def test_paper_settings_are_the_defaults():
    # The authors lower-case, strip accents and use each word type once.
    corpus = [(0, "The Élève", "Der Schüler"), (1, "the eleve", "der schuler")]
    lex = logic.build_lexicon([("the", "der"), ("eleve", "schuler")])
    records, _ = logic.extract(corpus, lex)
    assert pairs_of(records) == [
        ("The", "Der"),
        ("Élève", "Schüler"),
        ("the", "der"),
        ("eleve", "schuler"),
    ]
    out, counts = logic.select(records, np.random.default_rng(0))
    assert counts["repetition"] == 2 and len(out) == 2
    assert (logic.PAPER_FOLD_CASE, logic.PAPER_FOLD_ACCENTS, logic.PAPER_AVOID_REPETITION) == (
        True,
        True,
        True,
    )


def test_accent_folding_is_optional():
    corpus = [(0, "the student", "l'élève")]
    plain = logic.build_lexicon([("student", "eleve")], accents=False)
    folded = logic.build_lexicon([("student", "eleve")], accents=True)
    assert logic.extract(corpus, plain)[0] == []
    assert pairs_of(logic.extract(corpus, folded)[0]) == [("student", "élève")]


def test_unspaced_script_matches_substrings():
    lex = logic.build_lexicon([("China", "中国"), ("people", "人"), ("I", "我")], tgt_nospace=True)
    records, _ = logic.extract([(0, "I love China", "我爱中国")], lex)
    assert pairs_of(records) == [("I", "我"), ("China", "中国")]
    r = records[1]
    assert r["tgt_sentence"][r["tgt_start"] : r["tgt_end"]] == "中国"


def test_unspaced_longest_match_resolves_nested_entries():
    lex = logic.build_lexicon([("Chinese", "中国人"), ("China", "中国")], tgt_nospace=True)
    records, counts = logic.extract([(0, "Chinese", "他是中国人")], lex)
    assert pairs_of(records) == [("Chinese", "中国人")]


def test_nested_candidates_with_the_same_gloss_count_once():
    # 中 and 中国 are both glossed "China": 中国 stands for both, 中 is dropped as nested.
    lex = logic.build_lexicon([("中", "China"), ("中国", "China"), ("我", "I")], src_nospace=True)
    records, counts = logic.extract([(0, "我爱中国", "I love China")], lex)
    assert pairs_of(records) == [("我", "I"), ("中国", "China")]
    assert counts["nested"] == 1 and counts["ambiguous_target"] == 0


def test_select_avoid_repetition_and_sampling_are_seeded():
    recs = [
        logic.make_record(i, "a dog", "ein Hund", (2, 5), (4, 8), "dictionary") for i in range(10)
    ]
    out, counts = logic.select(recs, np.random.default_rng(1), avoid_repetition=True)
    assert len(out) == 1 and counts == {"in": 10, "repetition": 9, "sampling": 0, "kept": 1}
    a, _ = logic.select(recs, np.random.default_rng(5), avoid_repetition=False, max_pairs=4)
    b, _ = logic.select(recs, np.random.default_rng(5), avoid_repetition=False, max_pairs=4)
    assert [r["sent_id"] for r in a] == [r["sent_id"] for r in b]
    assert len(a) == 4 and [r["sent_id"] for r in a] == sorted(r["sent_id"] for r in a)


def test_lexicon_counts_and_drops():
    lex = logic.build_lexicon(
        [("a", "b"), ("a", "b"), ("x y z w v", "q"), ("!", "c"), ("a}}", "a}}"), ("#of", "#des")]
    )
    assert lex.counts == {
        "in": 6,
        "kept": 1,
        "dropped": {"too_long": 1, "empty": 1, "not_a_word": 2},
        "source_keys": 1,
        "target_keys": 1,
        "duplicates": 1,
    }
    # The junk lines are gone, not turned into a -> a and of -> des.
    assert "of" not in lex.fwd and lex.fwd["a"] == {"b"}


def test_real_muse_junk_lines_are_dropped_not_rewritten(shared_data):
    from builders.adapters.dictionaries import read_muse

    path = shared_data / "muse_full_dicts_hunalign" / "en-fr.dict"
    if not path.exists():
        pytest.skip(f"{path} absent")
    entries = read_muse(path).entries
    junk = [(s, t) for s, t in entries if not (logic.is_word_entry(s) and logic.is_word_entry(t))]
    assert ("a}}", "a}}") in junk and ("#of", "#des") in junk
    lex = logic.build_lexicon(entries, case=True)
    assert lex.counts["dropped"]["not_a_word"] == len(
        [1 for s, t in junk if logic.WORD_RE.search(s) and logic.WORD_RE.search(t)]
    )
    assert lex.counts["dropped"]["not_a_word"] > 200
    # MUSE lists neither a -> a nor of -> des: only the junk lines made them.
    assert "a" not in lex.fwd and "of" not in lex.fwd


# ---------------------------------------------------------------- aligner baseline + Table II


def test_aligner_records_keep_one_to_one_links_with_scripted_aligner():
    corpus = [(0, "the cat sleeps", "le chat dort"), (1, "a dog", "un chien")]
    spans_s = [logic.aligner_tokens(s) for _, s, _ in corpus]
    spans_t = [logic.aligner_tokens(t) for _, _, t in corpus]

    def scripted(src_tokens, tgt_tokens, **kw):  # diagonal, with one 1-to-2 link in sentence 0
        out = [{(i, i) for i in range(min(len(s), len(t)))} for s, t in zip(src_tokens, tgt_tokens)]
        out[0].add((2, 1))
        return out

    links = scripted(
        [[s[a:b] for a, b in sp] for (_, s, _), sp in zip(corpus, spans_s)],
        [[t[a:b] for a, b in sp] for (_, _, t), sp in zip(corpus, spans_t)],
    )
    records, counts = logic.aligner_records(corpus, spans_s, spans_t, links, "scripted")
    assert pairs_of(records) == [("the", "le"), ("a", "un"), ("dog", "chien")]
    assert counts == {"sentences": 2, "links": 6, "kept": 3, "not_one_to_one": 3}


def test_fast_align_baseline_on_a_tiny_corpus():
    pytest.importorskip("thot", reason="fast_align baseline needs the sil-thot package")
    from evaluators.aligners import align

    # A synthetic language with a fixed word mapping and word order: fast_align learns it.
    mapping = {
        "red": "rouge",
        "cat": "chat",
        "dog": "chien",
        "sees": "voit",
        "big": "grand",
        "bird": "oiseau",
    }
    rng = np.random.default_rng(0)
    words = list(mapping)
    corpus = []
    for i in range(200):
        sent = [words[k] for k in rng.choice(len(words), size=4, replace=False)]
        corpus.append((i, " ".join(sent), " ".join(mapping[w] for w in sent)))
    spans_s = [logic.aligner_tokens(s) for _, s, _ in corpus]
    spans_t = [logic.aligner_tokens(t) for _, _, t in corpus]
    toks_s = [[s[a:b] for a, b in sp] for (_, s, _), sp in zip(corpus, spans_s)]
    toks_t = [[t[a:b] for a, b in sp] for (_, _, t), sp in zip(corpus, spans_t)]
    links = align(toks_s, toks_t, method="fast_align")
    records, counts = logic.aligner_records(corpus, spans_s, spans_t, links, "fast_align")
    lex = logic.build_lexicon(mapping.items())
    p = logic.dictionary_precision(records, lex)
    assert counts["kept"] > 700  # ~800 one-to-one links
    assert p.precision > 0.95


def test_gold_precision_uses_whitespace_tokens_and_skips_unjudged():
    recs = [
        logic.make_record(
            0, "le chat noir", "the black cat", (3, 7), (10, 13), "dictionary"
        ),  # chat-cat: gold 1-2
        logic.make_record(
            0, "le chat noir", "the black cat", (8, 12), (10, 13), "dictionary"
        ),  # noir-cat: wrong
        logic.make_record(1, "x", "y", (0, 1), (0, 1), "dictionary"),  # no gold line: not judged
    ]
    sure, possible = logic.parse_pharaoh("0-0 1-2 2p1")
    p = logic.gold_precision(recs, {0: possible})
    assert p.to_dict() == {"correct": 1, "judged": 2, "total": 3, "precision": 0.5}


def test_parse_pharaoh_errors():
    with pytest.raises(InputFileError, match="Bad alignment link '2:3'.*expected i-j"):
        logic.parse_pharaoh("0-1 2:3")
    with pytest.raises(InputFileError, match="has index 0 but --gold-one-based"):
        logic.parse_pharaoh("0-1", one_based=True)
    # One codec with the alignment evaluator: i?j is a possible link here too.
    from evaluators.data.alignio import parse_links

    assert logic.parse_pharaoh("0-0 1?2 2p1") == tuple(
        frozenset(x) for x in parse_links("0-0 1?2 2p1")
    )
    # Links are range-checked against the sentence's whitespace tokens.
    assert logic.parse_pharaoh("0-0 1-1", lengths=(2, 2))[0] == {(0, 0), (1, 1)}
    with pytest.raises(
        InputFileError, match="Gold link 99-99 on line 1 is out of range.*2 source and 2 target"
    ):
        logic.parse_pharaoh("0-0 99-99", lengths=(2, 2), where=" on line 1")
    with pytest.raises(InputFileError, match="Gold link 3-1 is out of range"):
        logic.parse_pharaoh("3-1", one_based=True, lengths=(2, 2))


# ---------------------------------------------------------------- dictionary readers


def test_read_muse_and_hunalign(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("the der\nhouse\thaus\ndie @ the\n\n", encoding="utf-8")
    src = D.read_muse(path)
    assert src.entries == (("the", "der"), ("house", "haus"), ("the", "die"))
    bad = tmp_path / "bad.txt"
    bad.write_text("one two three\n", encoding="utf-8")
    with pytest.raises(InputFileError, match="line 1 'one two three' is not 'src tgt'"):
        D.read_muse(bad)
    with pytest.raises(InputFileError, match="does not exist; check the --dict path"):
        D.read_muse(tmp_path / "missing.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(InputFileError, match="has no entries"):
        D.read_muse(empty)


def _b64(n: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    out = ""
    while True:
        out = alphabet[n % 64] + out
        n //= 64
        if n == 0:
            return out


def write_dictd(folder, name, articles):
    blob, index = b"", []
    for head, body in articles:
        data = body.encode("utf-8")
        index.append(f"{head}\t{_b64(len(blob))}\t{_b64(len(data))}")
        blob += data
    (folder / f"{name}.index").write_text("\n".join(index) + "\n", encoding="utf-8")
    with gzip.open(folder / f"{name}.dict.dz", "wb") as fh:
        fh.write(blob)


def test_read_dictd_and_freedict_lookup(tmp_path):
    write_dictd(
        tmp_path,
        "freedict-eng-deu",
        [
            ("00databaseinfo", "info\n"),
            (
                "carrion",
                "carrion /kˈaɹiən/\nAas <neut>, Aasfleisch <neut> [zool.]\n   Synonym: {flesh}\n",
            ),
            ("dog", "dog /dɒg/ <n>\n1. Hund\n2. Rüde\n"),
        ],
    )
    write_dictd(tmp_path, "freedict-deu-eng", [("katze", "Katze <fem>\ncat\n")])
    sources = D.freedict_for("eng_Latn", "deu_Latn", tmp_path)
    assert sources[0].entries == (
        ("carrion", "Aas"),
        ("carrion", "Aasfleisch"),
        ("dog", "Hund"),
        ("dog", "Rüde"),
    )
    assert sources[1].entries == (("cat", "Katze"),)
    with pytest.raises(EngineUnavailableError, match="apt-get install dict-freedict-eng-fra"):
        D.freedict_for("eng_Latn", "fra_Latn", tmp_path)


def test_read_dictd_bad_index(tmp_path):
    (tmp_path / "x.index").write_text("word only\n", encoding="utf-8")
    (tmp_path / "x.dict").write_text("", encoding="utf-8")
    with pytest.raises(InputFileError, match="is not 'headword<TAB>offset<TAB>length'"):
        D.read_dictd(tmp_path / "x.index")
