"""Alignment scorer and file readers on hand-computed fixtures.

Expected numbers are computed by hand with the definitions of awesome-align's
tools/aer.py (micro sums, S ⊆ P, F1 = 1 / (0.5/P + 0.5/R)).
"""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main as eval_main
from evaluators.core.errors import InputFileError
from evaluators.data.alignio import (
    detect_base,
    format_links,
    parse_alignment_lines,
    parse_links,
    read_alignments,
    read_parallel_text,
    shift,
    write_alignments,
)
from evaluators.metrics.alignment import AlignmentScore, partial_filter, score_alignments

# Gold (1-based, awesome-align style) and prediction (0-based) for three sentences.
GOLD_1B = "1-1 2p3 3-2\n1-1 2-2\n\n"
PRED_0B = "0-0 1-2 2-2\n1-1\n0-0\n"
TEXT = "a b c ||| x y z\nd e ||| u v\nf ||| w\n"


def _aer_py_reference(sure, possible, hyp):
    """Independent re-statement of aer.py's calculate_metrics (precision, recall, aer, f)."""
    a_p = a_s = n_s = n_a = 0
    for s, p, a in zip(sure, possible, hyp):
        n_a += len(a)
        n_s += len(s)
        a_p += len(a & p)
        a_s += len(a & s)
    prec, rec = a_p / n_a, a_s / n_s
    return prec, rec, 1.0 - (a_p + a_s) / (n_a + n_s), 1.0 / (0.5 / prec + 0.5 / rec)


def test_hand_computed_sure_possible():
    sure = [{(0, 0), (2, 1)}, {(0, 0), (1, 1)}, set()]
    possible = [{(1, 2)}, set(), set()]
    hyp = [{(0, 0), (1, 2), (2, 2)}, {(1, 1)}, {(0, 0)}]
    s = score_alignments(sure, possible, hyp)
    assert (s.a_and_s, s.a_and_p, s.n_pred, s.n_sure, s.n_possible) == (2, 3, 5, 4, 5)
    assert s.precision == 3 / 5
    assert s.recall == 2 / 4
    assert s.f1 == pytest.approx(2 * 0.6 * 0.5 / 1.1, abs=1e-15)
    assert s.aer == 1 - 5 / 9
    ref = _aer_py_reference(sure, [p | q for p, q in zip(possible, sure)], hyp)
    assert (s.precision, s.recall, s.aer) == ref[:3]
    assert s.f1 == pytest.approx(ref[3], abs=1e-15)


def test_partial_evaluation_drops_undecided_source_words():
    sure = [{(0, 0), (2, 1)}, {(0, 0), (1, 1)}, set()]
    possible = [{(1, 2)}, set(), set()]
    hyp = [{(0, 0), (1, 2), (2, 2), (3, 3)}, {(1, 1)}, {(0, 0)}]
    s = score_alignments(sure, possible, hyp, partial=True)
    # (3,3): source word 3 undecided; sentence 3 has no decided word at all.
    assert s.n_pred_dropped == 2
    assert (s.a_and_s, s.a_and_p, s.n_pred) == (2, 3, 4)
    assert (
        s.precision == 0.75
        and s.recall == 0.5
        and s.f1 == pytest.approx(0.6)
        and s.aer == 1 - 5 / 8
    )
    assert partial_filter({(4, 0), (5, 1)}, set(), {(5, 9)}) == {(5, 1)}


def test_empty_prediction_is_valid_and_not_rounded():
    s = score_alignments([{(0, 0)}], None, [set()])
    assert (s.precision, s.recall, s.f1, s.aer) == (0.0, 0.0, 0.0, 1.0)
    assert AlignmentScore(1, 1, 3, 1, 1, 1).precision == 1 / 3  # no rounding anywhere
    with pytest.raises(ValueError, match="one entry per sentence"):
        score_alignments([set()], None, [set(), set()])


def test_sure_links_count_as_possible():
    # A sure-only reference passed with possible=None and with explicit P = S give the same result.
    a = score_alignments([{(0, 0), (1, 1)}], None, [{(0, 0), (1, 0)}])
    b = score_alignments([{(0, 0), (1, 1)}], [{(0, 0), (1, 1)}], [{(0, 0), (1, 0)}])
    assert a == b and a.a_and_p == 1


def test_parse_formats_and_errors():
    assert parse_links("3p4 5?6 1-2") == ({(1, 2)}, {(1, 2), (3, 4), (5, 6)})
    with pytest.raises(InputFileError, match=r"Bad alignment link '1:2' on line 1"):
        parse_alignment_lines(["1:2"], "pharaoh")
    f = parse_alignment_lines(["s1\t0-0 1p1", "s2\t", "s1\t2-2"])
    assert f.fmt == "id" and f.keys == ["s1", "s2"]
    assert f.sure == [{(0, 0), (2, 2)}, set()] and f.possible[0] == {(0, 0), (1, 1), (2, 2)}
    nf = parse_alignment_lines(["1 0 0 S", "1 1 2 P", "3 0 0"])
    assert nf.fmt == "naacl" and nf.keys == ["0", "2"] and nf.sure == [{(0, 0)}, {(0, 0)}]
    with pytest.raises(InputFileError, match="has a TAB"):
        parse_alignment_lines(["0\t1-1"], "pharaoh")
    with pytest.raises(InputFileError, match="is not 'id<TAB>links'"):
        parse_alignment_lines(["0-0 1-1"], "id")
    with pytest.raises(InputFileError, match="is not NAACL"):
        parse_alignment_lines(["1 2"], "naacl")
    with pytest.raises(InputFileError, match="Unknown alignment format 'xml'"):
        parse_alignment_lines([], "xml")


def test_one_based_detection():
    # Without lengths and without an index 0 the base is undecidable: an error, never a guess.
    with pytest.raises(
        InputFileError,
        match="Cannot decide whether the gold file is 0- or 1-based.*--gold-base 0 or 1",
    ):
        detect_base([{(1, 1)}, {(2, 3)}], what="the gold file", flag="--gold-base")
    assert detect_base([{(0, 1)}, set()])[0] == 0
    assert detect_base([set(), set()]) == (0, "no links")
    # Lengths known: index == length proves 1-based even with a single link.
    assert detect_base([{(2, 1)}], [2], [3])[0] == 1
    with pytest.raises(InputFileError, match="equals the sentence length"):
        detect_base([{(0, 1), (2, 1)}], [2], [3])
    with pytest.raises(InputFileError, match="out of range"):
        detect_base([{(5, 1)}], [2], [3])
    f = shift(parse_alignment_lines(["1-1 2p3"], "pharaoh"), 1)
    assert f.sure == [{(0, 0)}] and f.possible == [{(0, 0), (1, 2)}]
    with pytest.raises(InputFileError, match="declared 1-based but sentence 0 has index 0"):
        shift(parse_alignment_lines(["0-1"], "pharaoh"), 1)


def test_writers_round_trip(tmp_path):
    path = tmp_path / "a.txt"
    write_alignments(path, [{(0, 0), (1, 1)}, set()], [{(2, 2)}, set()], one_based=True)
    assert path.read_text() == "1-1 2-2 3p3\n\n"
    back = shift(read_alignments(path), 1)
    assert back.sure == [{(0, 0), (1, 1)}, set()] and back.possible[0] == {(0, 0), (1, 1), (2, 2)}
    write_alignments(path, [{(0, 1)}], keys=["x"])
    assert path.read_text() == "x\t0-1\n"
    assert format_links(set()) == ""
    with pytest.raises(InputFileError, match="Alignment file '.*missing.txt' does not exist"):
        read_alignments(tmp_path / "missing.txt")
    with pytest.raises(InputFileError, match="is a directory, expected a file"):
        read_alignments(tmp_path)


def test_parallel_text(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text(TEXT)
    src, tgt = read_parallel_text(p)
    assert src[0] == ["a", "b", "c"] and tgt[2] == ["w"]
    p.write_text("no separator\n")
    with pytest.raises(InputFileError, match="is not 'source \\|\\|\\| target'"):
        read_parallel_text(p)


def _run_cli(tmp_path, *argv):
    out = tmp_path / "res"
    code = eval_main(["alignment", *argv, "--out", str(out), "--json"])
    return code, out


def test_cli_refuses_a_text_of_another_length(tmp_path, capsys):
    gold, pred, text = tmp_path / "gold", tmp_path / "pred", tmp_path / "text"
    gold.write_text(GOLD_1B)
    pred.write_text(PRED_0B)
    lines = TEXT.splitlines()
    for kept in (lines[:-1], [*lines, lines[0]]):
        text.write_text("\n".join(kept) + "\n")
        code, out = _run_cli(
            tmp_path, "--gold", str(gold), "--pred", str(pred), "--text", str(text)
        )
        err = capsys.readouterr().err
        assert code == 2 and f"has {len(kept)} sentence pairs; line i of --gold" in err
        assert not out.exists()


def test_cli_matches_hand_values(tmp_path, capsys):
    gold, pred, text = tmp_path / "gold", tmp_path / "pred", tmp_path / "text"
    gold.write_text(GOLD_1B)
    pred.write_text(PRED_0B)
    text.write_text(TEXT)
    code, _ = _run_cli(tmp_path, "--gold", str(gold), "--pred", str(pred), "--text", str(text))
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    entry = data["scores"]["test"][0]
    assert (entry["precision"], entry["recall"], entry["aer"]) == (0.6, 0.5, 1 - 5 / 9)
    assert data["parameters"]["gold_base"] == 1 and data["parameters"]["pred_base"] == 0
    assert "gold-base:1|pred-base:0" in data["signature"]
    # Forcing a wrong base for both files is an error, not a silent score.
    code = eval_main(
        [
            "alignment",
            "--gold",
            str(gold),
            "--pred",
            str(pred),
            "--one-based",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert "declared 1-based but sentence 0 has index 0" in capsys.readouterr().err


def test_cli_silveralign_gold_partial_and_empty_pred(tmp_path, capsys):
    gold, pred = tmp_path / "gold.txt", tmp_path / "pred"
    # SilverAlign gold.txt: sentence 1 has no line, sentence 0 is split over two lines.
    gold.write_text("0\t0-0\n2\t1-1\n0\t2-1\n")
    pred.write_text("0-0 1-1 2-2\n0-0\n1-1 0-0\n")
    code, _ = _run_cli(tmp_path, "--gold", str(gold), "--pred", str(pred), "--partial")
    assert code == 0
    e = json.loads(capsys.readouterr().out)["scores"]["test"][0]
    # Kept: s0 {(0,0),(2,2)} (word 1 undecided), s1 nothing, s2 {(1,1)}; S = {(0,0),(2,1)},{(1,1)}.
    assert (e["n_pred"], e["a_and_s"], e["n_sure"], e["n_pred_dropped"]) == (3, 2, 3, 3)
    pred.write_text("\n\n\n")
    code, _ = _run_cli(tmp_path, "--gold", str(gold), "--pred", str(pred), "--zero-based")
    assert code == 0
    e = json.loads(capsys.readouterr().out)["scores"]["test"][0]
    assert (e["precision"], e["recall"], e["aer"], e["n_pred"]) == (0.0, 0.0, 1.0, 0)


def test_cli_id_prefixed_and_errors(tmp_path, capsys):
    gold, pred = tmp_path / "gold", tmp_path / "pred"
    gold.write_text("b\t0-0 1-1\na\t0-1\n")
    pred.write_text("a\t0-1\nb\t0-0\n")
    code, _ = _run_cli(tmp_path, "--gold", str(gold), "--pred", str(pred), "--zero-based")
    assert code == 0
    e = json.loads(capsys.readouterr().out)["scores"]["test"][0]
    assert (e["a_and_s"], e["n_pred"], e["n_sure"]) == (2, 2, 3)
    pred.write_text("c\t0-1\n")
    assert (
        eval_main(["alignment", "--gold", str(gold), "--pred", str(pred), "--out", str(tmp_path)])
        == 2
    )
    assert "No sentence id is shared" in capsys.readouterr().err
    gold.write_text("0-0\n1-1\n")
    pred.write_text("0-0\n")
    assert (
        eval_main(["alignment", "--gold", str(gold), "--pred", str(pred), "--out", str(tmp_path)])
        == 2
    )
    assert "has 2 sentences but the prediction has 1 lines" in capsys.readouterr().err


def test_awesome_gold_against_itself(shared_data, tmp_path, capsys):
    gold = shared_data / "gold_align_awesome" / "enfr.gold"
    # No index 0 occurs in this 1-based file: without --text its base must be given.
    code, _ = _run_cli(tmp_path, "--gold", str(gold), "--pred", str(gold))
    assert code == 2
    assert "Cannot decide whether the gold file" in capsys.readouterr().err
    code, _ = _run_cli(tmp_path, "--gold", str(gold), "--pred", str(gold), "--index-base", "1")
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    e = data["scores"]["test"][0]
    # The data README: 4,038 sure + 13,400 possible-only links, 1-indexed.
    assert (e["n_sure"], e["n_possible"], e["aer"], e["f1"]) == (4038, 4038 + 13400, 0.0, 1.0)
    assert data["parameters"]["gold_base"] == 1


def test_detection_with_lengths_prefers_zero_when_undecided():
    # Partial silver links may touch neither word 0 nor the last word: with lengths, that stays 0-based.
    assert detect_base([{(1, 2)}, {(2, 1)}], [4, 3], [3, 3])[0] == 0
    # Without lengths the same links could be either base: that is refused, not guessed.
    with pytest.raises(InputFileError, match="Cannot decide"):
        detect_base([{(1, 2)}, {(2, 1)}])


def _aer_py_files(ref_path, hyp_path, one_ref, one_hyp):
    """aer.py's file reading (sure if '-', possible always; 'p' marks possible-only), re-stated."""

    def parse(item, one):
        a, b = item.replace("p", "-").split("-")
        return (int(a) - 1, int(b) - 1) if one else (int(a), int(b))

    sure, possible, hyp = [], [], []
    for line in open(ref_path, encoding="utf-8"):
        sure.append({parse(x, one_ref) for x in line.split() if "-" in x})
        possible.append({parse(x, one_ref) for x in line.split()})
    for line in open(hyp_path, encoding="utf-8"):
        hyp.append({parse(x, one_hyp) for x in line.split()})
    return _aer_py_reference(sure, possible, hyp)


def test_real_gold_matches_aer_py_semantics(shared_data, tmp_path, capsys):
    import numpy as np

    gold = shared_data / "gold_align_awesome" / "enfr.gold"
    rng = np.random.default_rng(0)
    # A noisy 1-based prediction: keep ~70% of the gold links (sure and possible), add random ones.
    lines = []
    for line in gold.read_text(encoding="utf-8").splitlines():
        items = [x.replace("p", "-") for x in line.split() if rng.random() < 0.7]
        items += [f"{rng.integers(1, 20)}-{rng.integers(1, 20)}" for _ in range(rng.integers(0, 3))]
        lines.append(" ".join(items))
    pred = tmp_path / "pred.txt"
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = eval_main(
        [
            "alignment",
            "--gold",
            str(gold),
            "--pred",
            str(pred),
            "--one-based",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert code == 0
    e = json.loads(capsys.readouterr().out)["scores"]["test"][0]
    prec, rec, aer, f = _aer_py_files(gold, pred, True, True)
    assert (e["precision"], e["recall"], e["aer"]) == (prec, rec, aer)
    assert e["f1"] == pytest.approx(f, abs=1e-15)
