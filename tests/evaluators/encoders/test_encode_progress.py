"""Encoding's progress in a log file (issue #25): a tiny random BERT, stderr that is not a terminal."""

from __future__ import annotations

import re

from builders.cli import main
from evaluators.core.progress import INTERVAL_ENV, scope
from evaluators.encoders import load_encoder
from evaluators.encoders.hf import HFEncoder

TEXTS = ["the cat sat", "hello world", "the mat", "un", "ecole", "the cat"]


def _quick_lines(monkeypatch):
    monkeypatch.setenv(INTERVAL_ENV, "0")  # a line at every batch: no waiting for 30 s
    monkeypatch.delenv("XLBENCH_PROGRESS", raising=False)


def _name(folder: str) -> str:
    return folder.rstrip("/").split("/")[-1]  # a local model: its folder's name


def _encode_lines(err: str, label: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(f"{label}: ")]


def test_encoding_prints_a_line_per_batch_and_a_final_line(tiny_bert, monkeypatch, capsys):
    _quick_lines(monkeypatch)
    enc = HFEncoder(tiny_bert, batch_size=2)
    name = _name(tiny_bert)
    with scope("deu_Latn"):
        enc.sentence_embeddings(TEXTS)
    lines = _encode_lines(capsys.readouterr().err, f"encode deu_Latn ({name})")
    assert [line.split(",")[0] for line in lines] == [
        f"encode deu_Latn ({name}): 2/6 texts (33%)",
        f"encode deu_Latn ({name}): 4/6 texts (67%)",
        f"encode deu_Latn ({name}): 6/6 texts (100%)",
    ]
    assert re.fullmatch(r".*: 6/6 texts \(100%\)(, [0-9.]+ texts/s)?, done in \d+s", lines[-1])


def test_the_cached_encoder_reports_only_what_it_computes(tiny_bert, tmp_path, monkeypatch, capsys):
    _quick_lines(monkeypatch)
    label = f"encode eng_Latn ({_name(tiny_bert)})"
    enc = load_encoder(f"hf:{tiny_bert}", cache_dir=tmp_path / "cache", batch_size=4)
    with scope("eng_Latn"):
        enc.sentence_embeddings(TEXTS[:4])
        first = capsys.readouterr().err
        enc.sentence_embeddings(TEXTS)  # 4 of 6 cached: 2 computed
        second = capsys.readouterr().err
        enc.sentence_embeddings(TEXTS)  # all cached: no model call, no line
        third = capsys.readouterr().err
    assert _encode_lines(first, label)[-1].startswith(f"{label}: 4/4 texts (100%)")
    assert _encode_lines(second, label)[-1].startswith(f"{label}: 2/2 texts (100%)")
    assert "encode" not in third


def test_an_evaluation_names_each_side_it_encodes(tiny_bert, tmp_path, monkeypatch, capsys):
    _quick_lines(monkeypatch)
    src, tgt = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(t.upper() for t in TEXTS) + "\n", encoding="utf-8")
    argv = ["eval", "bitext-retrieval", "--src", str(src), "--tgt", str(tgt), "--lang", "deu-eng",
            "--model", f"hf:{tiny_bert}", "--no-cache", "--out", str(tmp_path / "r")]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "\r" not in err  # no tqdm bar in a log
    for side in ("deu_Latn", "eng_Latn"):
        lines = _encode_lines(err, f"encode {side} ({_name(tiny_bert)})")
        assert lines and ", done in " in lines[-1] and "6/6 texts (100%)" in lines[-1]
