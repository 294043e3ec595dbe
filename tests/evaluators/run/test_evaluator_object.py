"""An evaluator is one explicit ``Evaluator`` object: the runner calls its declared hooks, no others."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluators.core.errors import UsageError
from evaluators.run.runner import RunOptions, run_cell
from evaluators.run.task import Evaluator, Scores, TaskMetadata, param

META = TaskMetadata(name="toy", family=None, model="none", dataset="none", plots=True)


@dataclass(frozen=True)
class Params:
    k: int = param(3, "a number")


def _score(data, model, params, rng):
    return Scores({"test": [{"subset": "all", "main_score": 0.5, "k": params.k}]}, 0.5)


def test_a_bare_evaluator_needs_no_hook(tmp_path):
    result = run_cell(
        Evaluator(META, Params, _score), Params(), None, None, RunOptions(out=str(tmp_path))
    )
    assert (
        result.main_score == 0.5
        and result.signature.startswith("toy|")
        and "|k:3|" in result.signature
    )
    assert result.artifacts == []  # plots=True in the metadata, but it declares no plot hook


def test_the_runner_calls_each_declared_hook(tmp_path):
    calls = []

    def check(params, model):
        calls.append("check")
        if params.k > 5:
            raise UsageError("k too large")

    def clamp(params, data):  # never called without a dataset
        calls.append("clamp")
        return params

    def plot(scores, params, data, model, prefix, rng):
        calls.append("plot")
        return [str(prefix) + ".png"]

    def artifacts(scores, params, prefix: Path):
        calls.append("write_artifacts")
        return [str(prefix) + ".links"]

    toy = Evaluator(
        META,
        Params,
        _score,
        check=check,
        clamp=clamp,
        signature_extra=lambda values: {"const": "x", "k": None},
        plot=plot,
        write_artifacts=artifacts,
    )
    result = run_cell(toy, Params(), None, None, RunOptions(out=str(tmp_path)))
    assert calls == ["check", "plot", "write_artifacts"]
    assert "|const:x|" in result.signature and "|k:" not in result.signature
    assert [Path(a).suffix for a in result.artifacts] == [".png", ".links"]
    with pytest.raises(UsageError, match="k too large"):
        run_cell(toy, Params(k=9), None, None, RunOptions())
