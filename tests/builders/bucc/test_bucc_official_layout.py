"""The official BUCC layout (sample / training / test) and LASER's text de-duplication (--unify)."""

from __future__ import annotations

import json

from builders.cli import main

CONFIG = "deu_Latn-eng_Latn"


def run_cli(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def _split(folder, split, n, gold, words, extra_de=()):
    """n sentences a side; the gold pairs are equal texts (the random encoder finds them)."""
    de = [f"de-{i:09d}\t{words} {split} {i}" for i in range(1, n + 1)] + list(extra_de)
    en = [
        f"en-{i:09d}\t{words} {split} {i}" if i in gold else f"en-{i:09d}\t{split} other {i} x{i}"
        for i in range(1, n + 1)
    ]
    (folder / f"de-en.{split}.de").write_text("\n".join(de) + "\n", encoding="utf-8")
    (folder / f"de-en.{split}.en").write_text("\n".join(en) + "\n", encoding="utf-8")
    return "".join(f"de-{i:09d}\ten-{i:09d}\n" for i in sorted(gold))


def official(tmp_path, test_gold=False, extra_de=()):
    bucc = tmp_path / "bucc" / "de-en"
    bucc.mkdir(parents=True)
    for split, n, gold in (
        ("sample", 12, {2, 5}),
        ("training", 30, {1, 4, 9}),
        ("test", 20, {3, 7}),
    ):
        lines = _split(bucc, split, n, gold, "gamma delta", extra_de if split == "training" else ())
        if split != "test" or test_gold:
            (bucc / f"de-en.{split}.gold").write_text(lines, encoding="utf-8")
    return bucc.parent


def build(tmp_path, capsys, bucc, *extra):
    out = tmp_path / "ds"
    code, stdout, err = run_cli(
        ["build", "bucc", "--lang", "deu-eng", "--bucc-dir", str(bucc), "--out", str(out), *extra],
        capsys,
    )
    assert code == 0, err
    return out, stdout


def evaluate(tmp_path, capsys, out, *extra):
    code, stdout, err = run_cli(
        [
            "eval",
            "bucc",
            "--dataset",
            str(out),
            "--model",
            "random",
            "--json",
            "--no-cache",
            *extra,
        ],
        capsys,
    )
    assert code == 0, err
    return json.loads(stdout)


def test_sample_is_validation_and_scored_when_test_gold_is_withheld(tmp_path, capsys):
    out, stdout = build(tmp_path, capsys, official(tmp_path))
    assert f"{CONFIG}: test=40, train=60, validation=24" in stdout
    assert f"{CONFIG}-gold: train=3, validation=2" in stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["parameters"]["splits"] == {
        "train": "training",
        "validation": "sample",
        "test": "test",
    }
    data = evaluate(tmp_path, capsys, out)
    assert set(data["scores"]) == {"train", "validation"}
    val = data["scores"]["validation"][0]
    assert val["threshold_source"] == "train" and val["n_gold"] == 2
    assert data["main_score"] == val["bucc_f1"] == 1.0
    assert "validation" in data["main_score_name"]
    assert any("test gold is withheld" in n for n in data["notes"])


def test_test_gold_present_makes_test_the_main_split(tmp_path, capsys):
    out, _ = build(tmp_path, capsys, official(tmp_path, test_gold=True))
    data = evaluate(tmp_path, capsys, out)
    assert set(data["scores"]) == {"train", "validation", "test"}
    assert data["main_score"] == data["scores"]["test"][0]["bucc_f1"]
    assert not any("withheld" in n for n in data["notes"])


def test_build_unify_drops_repeated_texts_and_is_signed(tmp_path, capsys):
    # a German sentence that repeats gold sentence 1's text: LASER never predicts either
    bucc = official(tmp_path, extra_de=("de-000000099\tgamma delta training 1",))
    plain, _ = build(tmp_path, capsys, bucc)
    manifest = json.loads((plain / "manifest.json").read_text())
    assert "unify" not in manifest["build_signature"]
    out = tmp_path / "unified"
    code, stdout, err = run_cli(
        [
            "build",
            "bucc",
            "--lang",
            "deu-eng",
            "--bucc-dir",
            str(bucc),
            "--out",
            str(out),
            "--unify",
        ],
        capsys,
    )
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert "unify:true" in manifest["build_signature"]
    assert manifest["counts"]["unify_train"] == {
        "sentences_with_repeated_text": 2,
        "gold_pairs_dropped": 1,
    }
    assert f"{CONFIG}-gold: train=2, validation=2" in stdout


def test_build_unify_needs_official_files(tmp_path, capsys):
    code, _, err = run_cli(
        ["build", "bucc", "--lang", "deu-eng", "--unify", "--out", str(tmp_path / "o")], capsys
    )
    assert code == 2 and "--unify applies to official files" in err


def test_eval_unify_is_signed_and_drops_repeated_texts(tmp_path, capsys):
    bucc = official(tmp_path, test_gold=True, extra_de=("de-000000099\tgamma delta training 1",))
    out, _ = build(tmp_path, capsys, bucc)
    plain = evaluate(tmp_path, capsys, out)
    unified = evaluate(tmp_path, capsys, out, "--unify")
    assert "unify" not in plain["signature"] and "unify:laser-text" in unified["signature"]
    # the repeated German text is mined once and never predicted: gold pair 1 is lost on train
    assert plain["scores"]["train"][0]["tp"] == 3
    assert unified["scores"]["train"][0]["tp"] == 2
    assert unified["scores"]["train"][0]["n_src"] == plain["scores"]["train"][0]["n_src"]
