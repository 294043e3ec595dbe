"""``--corpus hf:<repo>[@revision]`` against the loopback Hub: pinned sha, options, one-sentence errors."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from builders.cli import main
from builders.corpora import open_corpus
from evaluators.core.errors import RevisionError, UsageError

_spec = importlib.util.spec_from_file_location(
    "corpora_hubdata", Path(__file__).with_name("hubdata.py")
)
hubdata = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hubdata)

WORDS = [f"w{i}" for i in range(40)]
ENG = [" ".join(WORDS[5 * i : 5 * i + 5]) for i in range(8)]
DEU = [" ".join("d" + w for w in s.split()) for s in ENG]


def _wide(repo: str, token: str, eng=ENG, deu=DEU) -> str:
    table = pa.table(
        {"id": pa.array(range(100, 100 + len(eng)), pa.int64()), "eng": eng, "deu": deu}
    )
    files = {
        "README.md": hubdata.readme(
            {"default": {"test": "data/test-00000-of-00001.parquet"}}, "cc-by-4.0"
        ),
        "data/test-00000-of-00001.parquet": hubdata.parquet_bytes(table),
    }
    return hubdata.host(repo, files, token)


def test_generic_reader_pins_the_sha_and_reads_wide_columns(hub_log, token):
    first = _wide("xlbench-test/wide", token)
    second = _wide("xlbench-test/wide", token, eng=ENG[:3], deu=DEU[:3])
    opts = ["split=test", "fields=eng:eng,de:deu", "id=id"]
    old = open_corpus(f"hf:xlbench-test/wide@{first}", opts)
    assert old.revision() == first and old.languages() == ["deu_Latn", "eng_Latn"]
    assert (
        old.pairs("eng", "deu")[0] == ("100", ENG[0], DEU[0]) and len(old.pairs("eng", "deu")) == 8
    )
    new = open_corpus("hf:xlbench-test/wide", opts)  # main, resolved to its sha
    assert new.revision() == second and len(new.pairs("eng", "deu")) == 3
    rec = old.input_record()
    assert rec.kind == "hub" and rec.origin == f"hub:xlbench-test/wide@{first}"
    assert rec.license == "cc-by-4.0"
    assert old.pinned() == f"hf,fields=eng:eng,de:deu,id=id:test@{first}"


def test_translation_column_and_monolingual_text(hub_log, token):
    rows = [{"translation": {"de": d, "en": e}} for e, d in zip(ENG, DEU)]
    features = pa.table({"translation": pa.array(rows).field("translation")})
    files = {
        "README.md": hubdata.readme({"de-en": {"validation": "de-en/validation.parquet"}}),
        "de-en/validation.parquet": hubdata.parquet_bytes(features),
    }
    hubdata.host("xlbench-test/wmt-like", files, token)
    corpus = open_corpus(
        "hf:xlbench-test/wmt-like", ["config=de-en", "split=validation", "translation=translation"]
    )
    assert corpus.languages() == ["deu_Latn", "eng_Latn"]
    assert corpus.pairs("deu", "eng")[2] == ("2", DEU[2], ENG[2])
    mono = open_corpus("hf:xlbench-test/wide", ["split=test", "text=eng", "lang=en", "streaming=1"])
    assert [t for _, t in mono.sentences("eng")][:2] == ENG[:2]


@pytest.mark.parametrize(
    ("spec", "options", "error", "message"),
    [
        (
            "hf:xlbench-test/wide",
            ["split=test", "fields=eng:english"],
            UsageError,
            "has no column 'english'; it has: id, eng, deu.",
        ),
        (
            "hf:xlbench-test/wide",
            ["split=nope", "fields=eng:eng"],
            UsageError,
            "has no config None / split 'nope'",
        ),
        ("hf:xlbench-test/wide", ["split=test"], UsageError, "needs exactly one of"),
        ("hf:xlbench-test/wide", ["split=test", "text=eng"], UsageError, "needs lang=CODE"),
        (
            "hf:xlbench-test/absent",
            ["text=eng", "lang=en"],
            RevisionError,
            "does not exist or is private",
        ),
        (
            "hf:xlbench-test/wide@v9",
            ["text=eng", "lang=en"],
            RevisionError,
            "revision 'v9' does not exist",
        ),
    ],
)
def test_bad_hub_input_is_one_sentence(hub_log, token, spec, options, error, message):
    _wide("xlbench-test/wide", token)
    with pytest.raises(error, match=re.escape(message)):
        open_corpus(spec, options).pairs("eng", "deu")


def test_cbd_from_a_hub_dataset_records_the_sha_and_refuses_a_wrong_field(
    hub_log, token, tmp_path, capsys
):
    sha = _wide("xlbench-test/wide", token)
    capsys.readouterr()  # the upload's progress lines
    dic = tmp_path / "d.txt"
    dic.write_text("".join(f"{w} d{w}\n" for w in WORDS), encoding="utf-8")
    out = tmp_path / "ds"
    argv = [
        "build",
        "cbd",
        "--lang",
        "eng-deu",
        "--corpus",
        f"hf:xlbench-test/wide@{sha}",
        "--dict",
        str(dic),
    ]
    argv += ["--aligner", "none", "--corpus-opt", "split=test", "--out", str(out)]
    assert main([*argv, "--corpus-opt", "fields=eng:eng,deu:dutch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: xlbench-test/wide (config default, split test) has no column 'dutch'; it has: id, eng, deu."
    ]
    assert not out.exists()
    assert main([*argv, "--corpus-opt", "fields=eng:eng,deu:deu"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    corpus = next(i for i in manifest["inputs"] if i["name"] == "corpus:hf")
    assert corpus["origin"] == f"hub:xlbench-test/wide@{sha}" and corpus["kind"] == "hub"
    assert manifest["parameters"]["corpus_source"].endswith(f":test@{sha}")
    assert f"hub:xlbench-test/wide@{sha}" in (out / "README.md").read_text()
