"""Official BUCC file reader: valid files, every malformation, the real sample sets."""

from __future__ import annotations

import pytest

from builders.adapters import bucc_files as bf
from evaluators.core.errors import InputFileError


def write(folder, name, lines, encoding="utf-8"):
    path = folder / name
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))
    return path


@pytest.fixture
def official(tmp_path):
    write(
        tmp_path,
        "de-en.training.de",
        ["de-000000001\tHallo Welt.", "de-000000002\tGuten Tag.", "de-000000003\tGuten Tag."],
    )
    write(tmp_path, "de-en.training.en", ["en-000000001\tGood day.", "en-000000002\tHello world."])
    write(
        tmp_path,
        "de-en.training.gold",
        ["de-000000001\ten-000000002", "de-000000003\ten-000000001"],
    )
    write(tmp_path, "de-en.test.de", ["de-000000001\tEin Satz."])
    write(tmp_path, "de-en.test.en", ["en-000000001\tA sentence."])
    return tmp_path


def test_reads_valid_files_and_keeps_duplicate_texts(official):
    found = bf.read_official(official, "de")
    assert sorted(found) == ["test", "training"]
    tr = found["training"]
    assert tr.src == [
        ("de-000000001", "Hallo Welt."),
        ("de-000000002", "Guten Tag."),
        ("de-000000003", "Guten Tag."),
    ]
    assert tr.gold == [("de-000000001", "en-000000002"), ("de-000000003", "en-000000001")]
    assert found["test"].gold is None  # held back by the organisers
    assert len(found["test"].files) == 2


def test_files_in_pair_subfolder(tmp_path):
    sub = tmp_path / "fr-en"
    sub.mkdir()
    write(sub, "fr-en.sample.fr", ["fr-000000001\tBonjour."])
    write(sub, "fr-en.sample.en", ["en-000000001\tHello."])
    write(sub, "fr-en.sample.gold", ["fr-000000001\ten-000000001"])
    assert bf.read_official(tmp_path, "fr")["sample"].gold == [("fr-000000001", "en-000000001")]


@pytest.mark.parametrize(
    "lines, message",
    [
        (["de-1\tKurz."], "id 'de-1' is not of the form 'de-000000001'"),
        (["en-000000001\tFalsche Sprache."], "is not of the form 'de-000000001'"),
        (["de-000000001 kein Tab"], "has 1 tab-separated fields; expected 'id<TAB>sentence'"),
        (["de-000000001\ta\tb"], "has 3 tab-separated fields"),
        (["de-000000001\t  "], "sentence de-000000001 is empty"),
        (
            ["de-000000001\tEins.", "de-000000001\tZwei."],
            "line 2: duplicate id de-000000001 \\(first on line 1\\)",
        ),
        ([], "holds no sentences"),
    ],
)
def test_malformed_sentence_files(tmp_path, lines, message):
    path = write(tmp_path, "x.de", lines)
    with pytest.raises(InputFileError, match=message):
        bf.read_sentences(path, "de")


def test_wrong_encoding_names_line(tmp_path):
    path = write(
        tmp_path, "x.de", ["de-000000001\tGut.", "de-000000002\tGrüße."], encoding="latin-1"
    )
    with pytest.raises(InputFileError, match=r"not valid UTF-8 \(line 2, byte \d+\).*iconv"):
        bf.read_sentences(path, "de")


def test_bom_is_tolerated(tmp_path):
    path = tmp_path / "x.de"
    path.write_bytes(b"\xef\xbb\xbfde-000000001\tGut.\n")
    assert bf.read_sentences(path, "de") == [("de-000000001", "Gut.")]


@pytest.mark.parametrize(
    "lines, message",
    [
        (
            ["de-000000009\ten-000000001"],
            "gold id 'de-000000009' \\(first column\\) is not in the corresponding sentence file",
        ),
        (["de-000000001\ten-000000009"], "gold id 'en-000000009' \\(second column\\)"),
        (["de-000000001"], "expected 'id_xx<TAB>id_en'"),
        (
            ["de-000000001\ten-000000001", "de-000000001\ten-000000001"],
            "line 2: gold pair .* is listed twice",
        ),
    ],
)
def test_malformed_gold(tmp_path, lines, message):
    path = write(tmp_path, "x.gold", lines)
    with pytest.raises(InputFileError, match=message):
        bf.read_gold(path, {"de-000000001"}, {"en-000000001"})


def test_missing_things(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        bf.read_official(tmp_path / "nope", "de")
    with pytest.raises(InputFileError, match="No BUCC files for de-en"):
        bf.read_official(tmp_path, "de")
    write(tmp_path, "de-en.sample.de", ["de-000000001\tA."])
    with pytest.raises(InputFileError, match="but not .*de-en.sample.en.*needs both sides"):
        bf.read_official(tmp_path, "de")
    with pytest.raises(InputFileError, match="does not exist"):
        bf.read_sentences(tmp_path / "absent.de", "de")


def test_real_bucc2018_samples(shared_data):
    """Real-data check: the official BUCC 2018 sample sets read cleanly, counts as published."""
    root = shared_data / "bucc2018_sample"
    expected = {"de": (32593, 40354, 1038), "fr": (21497, 38069, 929), "zh": (8624, 13589, 257)}
    for xx, (n_src, n_tgt, n_gold) in expected.items():
        sample = bf.read_official(root, xx)["sample"]
        assert (len(sample.src), len(sample.tgt), len(sample.gold)) == (n_src, n_tgt, n_gold)
