"""mteb interop, checked with mteb itself (a pinned test extra): exported results load with equal scores;
an xlbench BUCC folder runs through ``mteb.evaluate``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from builders.cli import main
from evaluators.core.errors import UsageError
from evaluators.report.mteb import mteb_model_name, mteb_scores, task_result

mteb = pytest.importorskip("mteb", reason="mteb is a test extra: pip install -e '.[dev]'")
pytestmark = pytest.mark.slow


def expected_scores(corpus) -> dict[tuple, float]:
    """(model id, revision, evaluator, hf_subset) -> score, read straight from the xlbench JSONs."""
    out = {}
    for path in corpus.rglob("*.json"):
        d = json.loads(path.read_text())
        key = (mteb_model_name(d["model"]), d["model"].get("revision"), d["evaluator"])
        for e in d["scores"]["test"]:
            if d["evaluator"] in ("word-retrieval", "sentence-retrieval"):
                out[(*key, f"{e['subset']}.layer{e['layer']}")] = e["main_score"]
            elif d["evaluator"] == "embedding-aligner":
                out[(*key, f"{e['subset']}.layer{e['layer']}.{e['method']}")] = e["f1"]
            elif d["evaluator"] == "bucc":
                out[(*key, e["subset"])] = e["bucc_f1"]
            elif d["evaluator"] == "bitext-retrieval":
                out[(*key, e["subset"].split("/")[0])] = e["main_score"]
            elif d["evaluator"] == "tacc" and e["group"] == "macro" and e["lang"] != "all":
                out[(*key, e["subset"])] = e["tacc"]
            elif d["evaluator"] == "aligners":
                out[(*key, f"{e['subset']}.{e['config']}")] = e["gold_f1"]
    return out


def test_export_refuses_a_dataset_folder_as_out(corpus, tmp_path, capsys):
    dataset = tmp_path / "cbd"
    dataset.mkdir()
    (dataset / "manifest.json").write_text("{}")
    assert main(["export", "mteb", str(corpus), "--out", str(dataset)]) == 2
    assert "is a dataset folder or a report site" in capsys.readouterr().err
    assert [p.name for p in dataset.iterdir()] == ["manifest.json"]


def test_exported_results_load_in_mteb_with_equal_scores(corpus, tmp_path, capsys):
    from mteb.results import TaskResult

    out = tmp_path / "mteb"
    assert main(["export", "mteb", str(corpus), "--out", str(out)]) == 0
    n_results = len(
        list(corpus.rglob("*.json"))
    )  # every evaluator of the corpus has an mteb mapping
    assert f"wrote {n_results} mteb result file(s)" in capsys.readouterr().out
    files = sorted(p for p in out.rglob("*.json") if p.name != "model_meta.json")
    for path in files:
        tr = TaskResult.from_disk(path)  # mteb's own validation (main_score, hf_subset, languages)
        assert list(tr.scores) == ["test"]  # only the split that is the score (BUCC's train is not)
    bucc = TaskResult.from_disk(next(out.rglob("xlbench-bucc-*bucc-*.json")))
    assert bucc.scores["test"][0]["languages"] == ["deu-Latn", "eng-Latn"]
    results = mteb.ResultCache(cache_path=out).load_results(
        require_model_meta=True, include_remote=False
    )
    df = results.to_dataframe(
        aggregation_level="subset", format="long", include_model_revision=True
    )
    evaluator_of = {
        tr.task_name: json.loads(p.read_text())["xlbench_signature"].split("|")[0]
        for p in files
        for tr in [TaskResult.from_disk(p)]
    }
    got = {}
    for row in df.to_dict("records"):
        rev = None if row["model_revision"] == "no_revision_available" else row["model_revision"]
        got[(row["model_name"], rev, evaluator_of[row["task_name"]], row["subset"])] = row["score"]
    want = expected_scores(corpus)
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-6), key


def test_export_errors(corpus, tmp_path, capsys):
    with pytest.raises(UsageError, match="has no mteb export"):
        mteb_scores({"evaluator": "alignment", "scores": {}})
    with pytest.raises(UsageError, match="no scored subset"):
        task_result({"evaluator": "bucc", "scores": {"test": []}, "dataset": {}})
    (tmp_path / "file").write_text("x")
    assert main(["export", "mteb", str(corpus), "--out", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_bucc_and_cbd_folders_run_in_mteb_evaluate(corpus):
    from evaluators.report.mteb import MtebEncoder, bucc_task, cbd_task

    work = corpus.parent / "work"
    model = MtebEncoder("random", use_cache=False)
    task = bucc_task(str(work / "bucc"))
    res = mteb.evaluate(
        model,
        [task, cbd_task(str(work / "cbd"))],
        cache=None,
        show_progress_bar=False,
        co2_tracker=False,
    )
    scores = {tr.task_name: tr.scores["test"][0] for tr in res.task_results}
    bucc = next(v for k, v in scores.items() if k.startswith("xlbench-bucc-"))
    assert bucc["hf_subset"] == "deu_Latn-eng_Latn" and bucc["languages"] == [
        "deu-Latn",
        "eng-Latn",
    ]
    assert bucc["main_score"] == bucc["f1"]
    # recompute mteb's accuracy by hand: nearest target (cosine, over every target) is the gold one
    task.load_data()  # mteb unloads the data after evaluating
    data = task.dataset["deu_Latn-eng_Latn"]["test"]
    a = model.encoder.sentence_embeddings(data["sentence1"])
    b = model.encoder.sentence_embeddings(data["sentence2"])
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    nearest = (a @ b.T).argmax(axis=1)
    assert (
        len(data["sentence1"]) == 10 and len(data["sentence2"]) == 50
    )  # gold sources vs all targets
    assert bucc["accuracy"] == pytest.approx(np.mean([nearest[i] == j for i, j in data["gold"]]))
    assert 0 < next(v for k, v in scores.items() if k.startswith("xlbench-cbd-"))["accuracy"] <= 1
