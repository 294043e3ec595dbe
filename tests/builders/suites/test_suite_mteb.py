"""A suite run exported as an mteb Benchmark: benchmark.py gives a valid mteb.Benchmark of the suite's tasks."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

import xlbench
from builders.cli import main
from evaluators.core.errors import ValidationError

mteb = pytest.importorskip("mteb", reason="mteb is a test extra: pip install -e '.[dev]'")
pytestmark = pytest.mark.slow

TINY = Path(__file__).resolve().parent / "tiny-suite.json"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite-mteb")
    run = xlbench.run_suite(TINY, ["random:16:2:0"], root / "run", bootstrap=0, use_cache=False)
    assert main(["export", "mteb", str(root / "run"), "--out", str(root / "mteb")]) == 0
    return root, run


def test_benchmark_py_builds_the_suite_as_an_mteb_benchmark(exported, capsys):
    root, run = exported
    out = root / "mteb"
    # the run's results once (not again from the site's copies), then the benchmark beside them
    assert (
        len(
            [
                p
                for p in out.rglob("*.json")
                if p.parent.name != "mteb" and p.name != "model_meta.json"
            ]
        )
        == 4
    )
    benchmark = runpy.run_path(str(out / "benchmark.py"))["BENCHMARK"]
    assert isinstance(benchmark, mteb.Benchmark)
    suite = json.loads(TINY.read_text(encoding="utf-8"))
    assert benchmark.name == "xlbench-tiny-v1.0.0" and benchmark.description == suite["description"]
    assert benchmark.citation == suite["citation"]
    revision = {d["name"]: d["revision"] for d in run.summary["datasets"]}
    # one task per dataset, through the interop adapters, at the content id the run scored
    assert sorted(t.metadata.name for t in benchmark.tasks) == sorted(
        [
            f"xlbench-bucc-xlbench-bucc-{revision['bucc-deu-eng'][:8]}",
            f"xlbench-cbd-xlbench-cbd-{revision['cbd-eng-deu'][:8]}",
        ]
    )
    assert {t.metadata.dataset["revision"] for t in benchmark.tasks} == set(revision.values())
    described = json.loads((out / "benchmark.json").read_text(encoding="utf-8"))
    assert [t["dataset"] for t in described["tasks"]] == ["cbd-eng-deu", "bucc-deu-eng"]
    assert described["left_out"] == []


def test_the_benchmark_runs_in_mteb_evaluate(exported):
    from evaluators.report.mteb import MtebEncoder

    root, _ = exported
    benchmark = runpy.run_path(str(root / "mteb" / "benchmark.py"))["BENCHMARK"]
    res = mteb.evaluate(
        MtebEncoder("random", use_cache=False),
        benchmark,
        cache=None,
        show_progress_bar=False,
        co2_tracker=False,
    )
    assert sorted(tr.task_name for tr in res.task_results) == sorted(
        t.metadata.name for t in benchmark.tasks
    )
    assert all(0 <= tr.scores["test"][0]["main_score"] <= 1 for tr in res.task_results)


def test_a_dataset_changed_since_the_run_is_refused(exported, tmp_path):
    from evaluators.report.mteb_benchmark import suite_task

    root, run = exported
    folder = root / "run" / "datasets" / "bucc-deu-eng"
    pinned = next(d["revision"] for d in run.summary["datasets"] if d["name"] == "cbd-eng-deu")
    with pytest.raises(ValidationError) as err:  # another folder than the one the run scored
        suite_task("bucc", str(folder), content_id=pinned)
    assert pinned[:12] in str(err.value) and "export again" in str(err.value)
