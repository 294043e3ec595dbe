"""A suite run as an mteb Benchmark, the pure parts: which datasets become tasks, and a safe benchmark.py."""

from __future__ import annotations

import ast
import json

import pytest

from evaluators.core.errors import InputFileError, UsageError
from evaluators.report.mteb_benchmark import (
    benchmark_description,
    benchmark_source,
    split_folders,
    write_benchmark,
)

SHA = "0123456789abcdef" * 2 + "01234567"


def _summary(**suite):
    return {
        "suite": {"name": "s", "version": "1.2.0", "citation": "cite me", **suite},
        "datasets": [
            {"name": "cbd-a", "family": "cbd", "source": "recipe", "revision": "ab" * 32},
            {"name": "hub-b", "family": "bucc", "source": "hub", "hub": "org/b", "revision": SHA},
            {"name": "sil", "family": "silver", "source": "recipe", "revision": "cd" * 32},
            {"name": "tri", "family": "alee", "source": "recipe", "revision": None},
            {"name": "cbd-off", "family": "cbd", "source": "recipe", "revision": None},
        ],
        "entries": [
            {"id": "word-retrieval:cbd-a", "dataset": "cbd-a", "skipped": None},
            {"id": "bucc:hub-b", "dataset": "hub-b", "skipped": None},
            {"id": "embedding-aligner:sil", "dataset": "sil", "skipped": None},
            {"id": "tacc:tri", "dataset": "tri", "skipped": "needs the internet"},
            {
                "id": "sentence-retrieval:cbd-off",
                "dataset": "cbd-off",
                "skipped": "needs the internet",
            },
        ],
    }


def test_the_datasets_mteb_can_run_become_tasks_the_rest_are_left_out_with_why(tmp_path):
    d = benchmark_description(_summary(), tmp_path / "run")
    assert d["name"] == "xlbench-s-v1.2.0" and d["citation"] == "cite me"
    assert d["tasks"] == [
        {"dataset": "cbd-a", "family": "cbd", "adapter": "cbd_task", "entries": ["word-retrieval:cbd-a"],
         "ref": str((tmp_path / "run" / "datasets" / "cbd-a").resolve()), "revision": None,
         "content_id": "ab" * 32},
        {"dataset": "hub-b", "family": "bucc", "adapter": "bucc_task", "entries": ["bucc:hub-b"],
         "ref": "org/b", "revision": SHA, "content_id": None},
    ]  # fmt: skip
    assert {x["dataset"]: x["why"] for x in d["left_out"]} == {
        "sil": "word alignment has no mteb task type",
        "tri": "triplet accuracy (TACC) has no mteb task type",
        "cbd-off": "no entry of the run scored it",
    }


def test_a_malformed_summary_never_names_a_path_or_repo(tmp_path):
    bad = _summary()
    bad["datasets"][0]["name"] = "../../etc"
    bad["entries"][0]["dataset"] = "../../etc"
    with pytest.raises(InputFileError, match="not a suite dataset name"):
        benchmark_description(bad, tmp_path)
    bad = _summary()
    bad["datasets"][1]["revision"] = "main"
    with pytest.raises(InputFileError, match="40-digit commit sha"):
        benchmark_description(bad, tmp_path)


def test_strings_from_the_summary_stay_literals_in_benchmark_py(tmp_path):
    evil = 'x"""\nimport os; os.system("echo owned")\n"""'
    summary = _summary(name=evil, version=evil, description=evil, citation=evil)
    summary["datasets"][2]["family"] = evil  # a left-out line in the docstring
    source = benchmark_source(benchmark_description(summary, tmp_path))
    tree = ast.parse(source)
    kinds = [type(node).__name__ for node in tree.body]
    assert kinds == [
        "Expr",
        "Import",
        "ImportFrom",
        "Assign",
        "Assign",
    ]  # docstring, imports, TASKS, BENCHMARK
    call = tree.body[-1].value
    values = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg != "tasks"}
    assert values["description"] == evil and values["citation"] == evil
    assert values["name"] == f"xlbench-{evil}-v{evil}"


def test_one_suite_run_per_export_and_its_results_folder(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps(_summary()), encoding="utf-8")
    (tmp_path / "plain").mkdir()
    assert split_folders([tmp_path / "a", tmp_path / "plain"]) == (
        [str(tmp_path / "a" / "results"), str(tmp_path / "plain")],
        str(tmp_path / "a"),
    )
    with pytest.raises(UsageError, match="export one suite run per --out folder"):
        split_folders([tmp_path / "a", tmp_path / "b"])


def test_a_suite_mteb_cannot_run_is_refused_with_the_reasons(tmp_path):
    summary = _summary()
    summary["datasets"] = summary["datasets"][2:3]
    (tmp_path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    with pytest.raises(UsageError, match="sil: word alignment has no mteb task type"):
        write_benchmark(tmp_path, tmp_path / "out")
    (tmp_path / "summary.json").write_text("[]", encoding="utf-8")
    with pytest.raises(InputFileError, match="not a suite summary"):
        write_benchmark(tmp_path, tmp_path / "out")
