"""Scoring against a built silver dataset folder (the --dataset path of the evaluators)."""

from __future__ import annotations

import json

from datasets import Dataset

from evaluators.cli import main as eval_main
from evaluators.schema import silver

CONFIG = "eng_Latn-spa_Latn"


def _silver_folder(tmp_path):
    root = tmp_path / "silver-eng_Latn-spa_Latn"
    (root / "data" / CONFIG).mkdir(parents=True)
    rows = {
        silver.ID: ["s0", "s1"],
        silver.SRC_TEXT: ["the red house", "a car"],
        silver.TGT_TEXT: ["la casa roja", "un coche"],
        silver.SRC_TOKENS: [["the", "red", "house"], ["a", "car"]],
        silver.TGT_TOKENS: [["la", "casa", "roja"], ["un", "coche"]],
        silver.SURE: [[[1, 2], [2, 1]], [[1, 1]]],
        silver.POSSIBLE: [[[1, 2], [2, 1]], [[1, 1]]],
    }
    Dataset.from_dict(rows, features=silver.SCHEMA.main.features).to_parquet(
        str(root / "data" / CONFIG / "test-00000-of-00001.parquet")
    )
    (root / "README.md").write_text(
        "---\nconfigs:\n"
        f"- config_name: {CONFIG}\n  data_files:\n  - split: test\n"
        f"    path: data/{CONFIG}/test-00000-of-00001.parquet\n"
        "xlbench:\n  family: silver\n  version: 0.0.1\n---\n# test\n",
        encoding="utf-8",
    )
    return root


def test_alignment_against_dataset_is_partial_by_default(tmp_path, capsys):
    root = _silver_folder(tmp_path)
    pred = tmp_path / "pred"
    # Plain lines follow the dataset's row order; (0,0) is ignored (word 0 undecided), (1,1) wrong.
    pred.write_text("0-0 1-1 2-1\n1-1\n", encoding="utf-8")
    code = eval_main(
        [
            "alignment",
            "--dataset",
            str(root),
            "--pred",
            str(pred),
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    e = data["scores"]["test"][0]
    assert e["subset"] == CONFIG and e["partial"] is True
    assert (e["n_pred"], e["a_and_s"], e["n_sure"], e["n_pred_dropped"]) == (3, 2, 3, 1)
    assert data["dataset"]["revision"] and len(data["dataset"]["revision"]) == 64
    # id-prefixed predictions match by the dataset's id column.
    pred.write_text("s1\t1-1\ns0\t1-2 2-1\n", encoding="utf-8")
    code = eval_main(
        [
            "alignment",
            "--dataset",
            str(root),
            "--pred",
            str(pred),
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert code == 0
    e = json.loads(capsys.readouterr().out)["scores"]["test"][0]
    assert (e["precision"], e["recall"], e["aer"]) == (1.0, 1.0, 0.0)


def test_embedding_aligner_on_dataset(tmp_path, capsys):
    root = _silver_folder(tmp_path)
    code = eval_main(
        [
            "embedding-aligner",
            "--model",
            "random",
            "--dataset",
            str(root),
            "--layer",
            "1",
            "--no-cache",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    e = data["scores"]["test"][0]
    assert (e["layer"], e["method"], e["n_sure"], e["partial"]) == (1, "argmax", 3, True)
    assert data["dataset"]["config"] == CONFIG


def test_embedding_aligner_predictions_say_the_sentences_and_the_missed_links(tmp_path, capsys):
    from evaluators.run.predictions import read_predictions

    root = _silver_folder(tmp_path)
    argv = ["embedding-aligner", "--model", "random", "--dataset", str(root), "--layer", "1"]
    assert eval_main([*argv, "--no-cache", "--save-predictions", "--out", str(tmp_path / "r")]) == 0
    [path] = (tmp_path / "r").glob("*.predictions.parquet")
    rows = {r["item_id"]: r for r in read_predictions(path)}
    assert (rows["0"]["query_text"], rows["0"]["query_context"]) == (
        "the red house",
        "la casa roja",
    )
    assert (rows["1"]["query_text"], rows["1"]["query_context"]) == ("a car", "un coche")
    for r in rows.values():  # a sure link the random model missed is named in words
        if r["tp"] < r["n_gold"]:
            assert r["expected_text"].startswith("missed: ") and "–" in r["expected_text"]
            assert set(r["expected_text"][8:].split(", ")) <= {
                "red–roja",
                "house–casa",
                "car–coche",
            }
        else:
            assert r["expected_text"] == ""
