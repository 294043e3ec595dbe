"""Models x datasets in one call, grouped by model; a killed grid resumes with only the missing cells."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
MODELS = ("random", "random:16:2:5")


def _grid(cbd_pair, out, *extra, env=None):
    a, b = cbd_pair
    argv = [
        sys.executable,
        "-m",
        "builders",
        "eval",
        "word-retrieval",
        "--model",
        MODELS[0],
        "--model",
        MODELS[1],
        "--dataset",
        str(a),
        "--dataset",
        str(b),
        "--n",
        "20",
        "--repeats",
        "2",
        "--layers",
        "0",
        "--no-plots",
        "--no-cache",
        "--out",
        str(out),
        *extra,
    ]
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(argv, capture_output=True, text=True, env=full_env, cwd=REPO, timeout=600)


def _cells(out: Path) -> dict[tuple[str, str], dict]:
    cells = {}
    for path in out.glob("*.json"):
        data = json.loads(path.read_text())
        cells[(data["model"]["spec"], data["dataset"]["path"])] = data
    return cells


@pytest.mark.slow
def test_two_models_two_datasets_killed_midway_resume_only_missing_cells(cbd_pair, tmp_path):
    out = tmp_path / "grid"
    killed = _grid(cbd_pair, out, env={"XLBENCH_TEST_ABORT_AFTER_CELLS": "1"})
    assert killed.returncode == 137, killed.stderr
    first = _cells(out)
    assert len(first) == 1  # one cell finished before the "kill"; nothing half-written
    ((key, done),) = first.items()

    again = _grid(cbd_pair, out)
    assert again.returncode == 0, again.stderr
    assert "computed 3 cell(s), skipped 1" in again.stderr
    cells = _cells(out)
    assert set(cells) == {(m, str(Path(d).resolve())) for m in MODELS for d in cbd_pair}
    assert cells[key]["timestamp"] == done["timestamp"]  # the finished cell was not recomputed
    assert "### ranking" in again.stdout

    rerun = _grid(cbd_pair, out, "--rerun")
    assert rerun.returncode == 0 and "skipped" not in rerun.stderr
    # Same computation again: identical scores, so the files are kept (no refusal, no overwrite needed).
    assert {k: v["scores"] for k, v in _cells(out).items()} == {
        k: v["scores"] for k, v in cells.items()
    }


def test_grid_through_the_api_loads_each_model_once(cbd_pair, tmp_path, monkeypatch):
    from evaluators.run import runner

    opened = []
    real = runner.open_model
    monkeypatch.setattr(
        runner, "open_model", lambda m, *a, **k: opened.append(m) or real(m, *a, **k)
    )
    results = runner.run_grid(
        "word-retrieval",
        list(MODELS),
        [str(p) for p in cbd_pair],
        params={"n": 10, "repeats": 1, "layers": "0"},
        options=runner.RunOptions(out=str(tmp_path / "r"), plots=False, use_cache=False),
    )
    assert opened == list(MODELS)
    assert [(r.model["spec"], r.dataset["path"]) for r in results] == [
        (m, str(Path(d).resolve())) for m in MODELS for d in cbd_pair
    ]
    assert len(list((tmp_path / "r").glob("*.json"))) == 4


@pytest.mark.slow
def test_every_grid_goes_through_the_engines_run_cells(cbd_pair, tmp_path):
    """One path: a local grid is the local engine's ``run_cells`` over every cell, not a second loop."""
    from evaluators.compute.engine import LocalEngine
    from evaluators.run import runner

    class Spy(LocalEngine):
        def __init__(self):
            super().__init__()
            self.calls: list[list] = []

        def run_cells(self, cell_fn, cells, group_key, **kw):
            self.calls.append(list(cells))
            return super().run_cells(cell_fn, cells, group_key, **kw)

    spy = Spy()
    report = runner.GridReport()
    results = runner.run_grid(
        "word-retrieval",
        list(MODELS),
        [str(p) for p in cbd_pair],
        params={"n": 10, "repeats": 1, "layers": "0"},
        options=runner.RunOptions(out=str(tmp_path / "r"), plots=False, use_cache=False),
        engine=spy,
        report=report,
    )
    assert spy.calls == [[(m, d) for m in range(2) for d in range(2)]]
    assert len(results) == 4 and len(report.computed) == 4
    again = runner.run_grid(
        "word-retrieval",
        list(MODELS),
        [str(p) for p in cbd_pair],
        params={"n": 10, "repeats": 1, "layers": "0"},
        options=runner.RunOptions(out=str(tmp_path / "r"), plots=False, use_cache=False),
        engine=spy,
        report=(second := runner.GridReport()),
    )
    assert (
        len(spy.calls) == 2 and len(second.skipped) == 4 and not second.computed
    )  # resume, same path
    assert [r.signature for r in again] == [r.signature for r in results]
