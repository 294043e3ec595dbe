"""Issue 14 for every evaluator: per-item predictions and a bootstrap interval on the main score.

For each evaluator: ``--save-predictions`` writes ``<result>.predictions.parquet`` whose main rows
reproduce the main score; the result and its main-score entry carry ``ci_low/ci_high/ci_level/
ci_resamples``; neither the predictions nor the bootstrap (``--bootstrap 0``) move a score or the
signature.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from evaluators.run.predictions import COLUMNS, predictions_path, read_predictions, score_intervals


def _every():
    """The identity suite's module (its tiny datasets and command lines), loaded by path: sys.path stays as it is."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "xl_every_evaluator", Path(__file__).with_name("test_every_evaluator.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_E = _every()
EVALUATORS, _np, _run, argv_for, data = _E.EVALUATORS, _E._np, _E._run, _E.argv_for, _E.data

pytestmark = pytest.mark.slow
CI = ("ci_low", "ci_high", "ci_level", "ci_resamples")


def _strip(scores: dict) -> dict:
    return {
        s: [{k: v for k, v in e.items() if k not in CI} for e in es] for s, es in scores.items()
    }


@pytest.mark.parametrize("name", EVALUATORS)
def test_predictions_and_interval_exist_and_reproduce_the_main_score(name, data, tmp_path):  # noqa: F811
    out = tmp_path / "r"
    res = _run(
        [name, *argv_for(name, data, 0), *_np(name), "--out", str(out), "--save-predictions"]
    )
    (path,) = out.glob(f"{name}__*.json")
    rows = read_predictions(predictions_path(path))
    assert rows and all(c in rows[0] for c in COLUMNS)
    main = [r for r in rows if r.get("main", True)]
    assert main, "no row is marked as behind the main score"
    overall, _ = score_intervals(rows, np.random.default_rng(0), 50)
    assert overall.estimate == pytest.approx(res["main_score"], abs=1e-9)
    assert res["ci_resamples"] == 1000 and res["ci_level"] == 0.95
    assert res["ci_low"] <= res["main_score"] + 1e-9 and res["main_score"] <= res["ci_high"] + 1e-9
    assert res["parameters"]["bootstrap"] == 1000 and "bootstrap" not in res["signature"]
    carrying = [e for es in res["scores"].values() for e in es if "ci_low" in e]
    # One subset: its main-score entry carries the result's interval; several: each its own.
    assert carrying and (
        len({r["subset"] for r in main}) > 1 or any(e["ci_low"] == res["ci_low"] for e in carrying)
    )
    assert json.loads(path.read_text())["ci_low"] == res["ci_low"]


@pytest.mark.parametrize("name", EVALUATORS)
def test_neither_predictions_nor_bootstrap_move_a_score(name, data, tmp_path):  # noqa: F811
    full = _run(
        [
            name,
            *argv_for(name, data, 0),
            *_np(name),
            "--out",
            str(tmp_path / "a"),
            "--save-predictions",
        ]
    )
    bare = _run(
        [
            name,
            *argv_for(name, data, 0),
            *_np(name),
            "--out",
            str(tmp_path / "b"),
            "--bootstrap",
            "0",
        ]
    )
    assert bare["main_score"] == full["main_score"] and bare["signature"] == full["signature"]
    assert _strip(bare["scores"]) == _strip(full["scores"])
    assert all(bare[k] is None for k in CI) and "bootstrap" not in bare["parameters"]
    assert not any("ci_low" in e for es in bare["scores"].values() for e in es)
    assert not list((tmp_path / "b").glob("*.predictions.parquet"))
    # Its own rng stream: a different number of resamples moves the interval only.
    other = _run(
        [
            name,
            *argv_for(name, data, 0),
            *_np(name),
            "--out",
            str(tmp_path / "c"),
            "--bootstrap",
            "200",
        ]
    )
    assert other["main_score"] == full["main_score"] and _strip(other["scores"]) == _strip(
        full["scores"]
    )
    assert other["ci_resamples"] == 200


def test_aligners_rows_are_the_configurations_behind_the_correlation(tmp_path, capsys):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tasks"))
    from test_aligners_task import _fixture

    from builders.cli import main

    silver, gt, gl, ts, tt = _fixture(tmp_path)
    spec = f"name=toy,silver={silver},gold_text={gt},gold_links={gl},gold_reversed=1"
    base = [
        "eval",
        "aligners",
        "--pair",
        spec,
        "--train-text",
        str(ts),
        str(tt),
        "--methods",
        "fast_align",
        "--tokenizers",
        "word",
        "bpe",
        "unigram",
        "--vocab-size",
        "40",
        "--sweep",
        "--no-plots",
        "--json",
    ]
    assert main([*base, "--out", str(tmp_path / "a"), "--save-predictions"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert main([*base, "--out", str(tmp_path / "b"), "--bootstrap", "0"]) == 0
    bare = json.loads(capsys.readouterr().out)
    (path,) = (tmp_path / "a").glob("aligners__*.json")
    rows = read_predictions(predictions_path(path))
    assert {r["item_id"] for r in rows} == {e["config"] for e in full["scores"]["test"]}
    if full["main_score"] is None or math.isnan(full["main_score"]):
        pytest.skip("the toy configurations give no defined Pearson r")
    overall, _ = score_intervals(rows, np.random.default_rng(0), 50)
    assert overall.estimate == pytest.approx(full["main_score"])
    assert full["ci_resamples"] == 1000 and bare["ci_low"] is None
    assert bare["main_score"] == full["main_score"]
