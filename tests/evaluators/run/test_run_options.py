"""Run options are declared once (``RunOptions``' ``param`` fields): the CLI flags and the API keywords come from there."""

from __future__ import annotations

import dataclasses

import pytest

from builders.cli import build_parser
from evaluators.core.params import flag_of
from evaluators.run.runner import RunOptions, option_fields
from evaluators.tasks import TASKS


def _parse(argv: list[str]):
    return build_parser(["eval", *argv]).parse_args(["eval", *argv])


def test_every_option_is_a_flag_of_an_evaluator_with_a_model_and_plots(capsys):
    with pytest.raises(SystemExit):
        _parse(["word-retrieval", "--help"])
    text = capsys.readouterr().out
    for f in dataclasses.fields(RunOptions):
        assert flag_of(f) in text, f"RunOptions.{f.name} has no flag"


def test_the_command_line_defaults_and_flags_fill_run_options():
    args = _parse(["word-retrieval", "--dataset", "d", "--model", "random"])
    assert RunOptions.from_namespace(args) == RunOptions(out="results")
    args = _parse(
        ["word-retrieval", "--dataset", "d", "--model", "random", "--no-cache", "--no-plots"]
        + ["--seed", "3", "--bootstrap", "0", "--backend", "onnx", "--out", "o"]
    )
    assert RunOptions.from_namespace(args) == RunOptions(
        out="o", use_cache=False, plots=False, seed=3, bootstrap=0, backend="onnx"
    )


def test_an_evaluator_gets_only_the_options_that_apply_to_it():
    alignment = TASKS.load("alignment").meta  # no model, no plots
    names = {f.name for f in option_fields(alignment)}
    assert not names & {"batch_size", "device", "backend", "cache_dir", "use_cache", "plots"}
    assert {"out", "seed", "bootstrap", "overwrite"} <= names
    args = _parse(["alignment", "--gold", "g", "--pred", "p"])
    assert RunOptions.from_namespace(args) == RunOptions(out="results")


def test_evaluate_keywords_are_the_options_then_the_evaluator_parameters():
    keywords = {"out": "o", "seed": 5, "n": 10, "layers": "0"}
    options = RunOptions.from_keywords(keywords)
    # The Python API draws no plots unless asked.
    assert options == RunOptions(out="o", seed=5, plots=False)
    assert keywords == {"n": 10, "layers": "0"}
    assert RunOptions.from_keywords({"plots": True}).plots is True
