import json

import numpy as np
import polars as pl
import pytest

from evaluators.core.errors import InputFileError, OutputError, UsageError
from evaluators.run.results import (
    REPORT_MARKER,
    EvalResult,
    finalize,
    load_results,
    markdown_table,
    save_result,
)
from evaluators.run.signature import make_signature


def result(model="m1", layer_scores=((0, 0.25), (1, 0.5))):
    return EvalResult(
        evaluator="word-retrieval",
        dataset={
            "id": "xlbench/cbd",
            "revision": "ab" * 20,
            "version": "1.0.0",
            "config": "eng_Latn-deu_Latn",
        },
        model={"id": model, "revision": "cd" * 20},
        parameters={"n": 100, "csls_k": 10},
        scores={
            "test": [
                {"subset": "eng_Latn-deu_Latn", "layer": layer, "s_weak": s}
                for layer, s in layer_scores
            ]
        },
        main_score=max(s for _, s in layer_scores),
        main_score_name="s_weak_best_layer",
        signature=make_signature(
            "word-retrieval",
            "xlbench/cbd",
            "1.0.0",
            "ab" * 20,
            model,
            "cd" * 20,
            {"n": 100},
            "0.1.0",
        ),
    )


def test_save_and_load_results_into_polars(tmp_path):
    paths = [
        save_result(finalize(result("m1")), tmp_path),
        save_result(finalize(result("m/2", ((0, 0.1),))), tmp_path / "sub"),
    ]
    assert all(p.is_file() for p in paths)
    data = json.loads(paths[0].read_text())
    for key in (
        "evaluator",
        "dataset",
        "model",
        "parameters",
        "scores",
        "main_score",
        "signature",
        "timestamp",
        "library_versions",
        "xlbench_version",
        "wall_time_s",
    ):
        assert key in data
    assert data["library_versions"]["numpy"] == np.__version__
    (tmp_path / "unrelated.json").write_text('{"not": "a result"}')
    df = load_results(tmp_path)
    assert isinstance(df, pl.DataFrame)
    assert df.height == 3
    assert set(df.columns) >= {
        "evaluator",
        "model",
        "model_revision",
        "dataset_revision",
        "split",
        "subset",
        "layer",
        "s_weak",
        "signature",
    }
    assert df.filter(pl.col("model") == "m1").sort("layer")["s_weak"].to_list() == [0.25, 0.5]
    site = tmp_path / "site"  # a report written into the folder: its copies are not results
    save_result(finalize(result("m1")), site / "results")
    (site / REPORT_MARKER).write_text("built by xlbench report\n")
    assert load_results(tmp_path).height == 3


def test_file_names_are_safe_and_distinct(tmp_path):
    a = result("org/model a").file_name()
    assert "/" not in a and " " not in a and a.endswith(".json")
    assert a != result("org/model b").file_name()


def test_load_results_errors(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        load_results(tmp_path / "nope")
    (tmp_path / "one.json").write_text("{}")
    with pytest.raises(InputFileError, match="is a file, not a results folder"):
        load_results(tmp_path / "one.json")
    with pytest.raises(InputFileError, match="No xlbench result JSON"):
        load_results(tmp_path)
    for bad in (None, 5, ["r1"]):
        with pytest.raises(UsageError, match="A results folder is a path"):
            load_results(bad)


def test_save_result_unwritable():
    with pytest.raises(OutputError, match="pass a writable --out"):
        save_result(result(), "/proc/xlbench-results")


def test_signature_includes_every_field_in_order():
    sig = make_signature(
        "bucc",
        "org/bucc",
        None,
        None,
        "hf:xlm-roberta-base",
        "e736" * 10,
        {"k": 4, "margin": "ratio", "faiss": False, "skip": None, "layers": [0, 12], "t": 0.5},
        "0.1.0",
    )
    assert (
        sig
        == "bucc|ds:org/bucc@unversioned:unknown|model:hf:xlm-roberta-base@e736e736e736|k:4|margin:ratio|faiss:no|layers:0,12|t:0.5|xlbench:0.1.0"
    )


def test_markdown_table_formats_floats_and_none():
    assert (
        markdown_table(["a", "b"], [[None, 1.0]], floatfmt="{:.1f}").splitlines()[-1]
        == "|  | 1.0 |"
    )


def test_render_table_shows_a_split_the_task_table_does_not_describe():
    from evaluators.run.runner import render_table

    r = result()
    r.scores["frequency"] = [
        {"subset": "eng-fra", "bin": "1", "f1": 0.5, "n_sure": 4, "links": [1, 2]},
        {"subset": "eng-fra", "bin": "2-5", "f1": 0.75, "n_sure": 8, "links": []},
    ]
    text = render_table(r, ("layer", "s_weak"))
    test_part, freq_part = text.split("**frequency**")
    assert "| subset | layer | s_weak |" in test_part
    # Its own scalar fields, not a lone column of subset names; lists are left out.
    assert "| subset | bin | f1 | n_sure |" in freq_part
    assert "| eng-fra | 2-5 | 0.7500 | 8 |" in freq_part and "links" not in freq_part
