"""read_result: the one reader of result JSON files, returning a typed, frozen record."""

from __future__ import annotations

import dataclasses
import json

import pytest

from evaluators.core.errors import InputFileError
from evaluators.run.results import (
    EvalResult,
    NotAResultError,
    StoredResult,
    read_result,
    save_result,
)


def _result() -> EvalResult:
    return EvalResult(
        evaluator="alignment",
        dataset={"id": "gold", "source": "files", "revision": "ab" * 32},
        model={"id": "pred", "revision": "cd" * 32},
        parameters={"partial": False},
        scores={"test": [{"subset": "all", "main_score": 0.5}]},
        main_score=0.5,
        main_score_name="f1",
        signature="alignment|v:1",
        request_key="k1",
    )


def test_a_written_result_reads_back_typed_and_frozen(tmp_path):
    path = save_result(_result(), tmp_path)
    got = read_result(path)
    assert isinstance(got, StoredResult) and got.path == path
    assert (got.evaluator, got.main_score, got.signature, got.request_key) == (
        "alignment",
        0.5,
        "alignment|v:1",
        "k1",
    )
    assert got.scores == {"test": [{"subset": "all", "main_score": 0.5}]}
    assert got.to_eval_result().to_dict() == json.loads(path.read_text(encoding="utf-8"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.main_score = 1.0  # type: ignore[misc]


def test_every_defect_is_one_sentence(tmp_path):
    with pytest.raises(
        InputFileError, match=r"Result file '.*nope.json' does not exist; pass a result"
    ):
        read_result(tmp_path / "nope.json")
    with pytest.raises(
        InputFileError, match=r"is a folder, not a result file; pass one result JSON"
    ):
        read_result(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"bad.json' is not a readable JSON file \("):
        read_result(bad)
    other = tmp_path / "manifest.json"
    other.write_text(json.dumps({"name": "x"}), encoding="utf-8")
    with pytest.raises(
        NotAResultError,
        match=r"manifest.json' is not an xlbench result \(no 'evaluator', 'scores', 'signature'\)",
    ):
        read_result(other)
    typed = tmp_path / "typed.json"
    typed.write_text(
        json.dumps({"evaluator": 3, "scores": [], "signature": "s", "main_score": "high"}),
        encoding="utf-8",
    )
    with pytest.raises(
        NotAResultError, match=r"\(evaluator, scores, main_score of the wrong type or shape\)"
    ):
        read_result(typed)


@pytest.mark.parametrize("scores", ["abc", {"test": "abc"}, {"test": ["x"]}, {"test": [1.0]}])
def test_scores_of_the_wrong_shape_are_not_a_result(scores, tmp_path):
    """Issue 27, item 6: a result whose ``scores`` is a string was a traceback in the readers."""
    path = save_result(_result(), tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["scores"] = scores
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(NotAResultError, match=r"\(scores of the wrong type or shape\); pass"):
        read_result(path)


def test_folder_readers_skip_what_is_not_a_result(tmp_path):
    from evaluators.run.results import load_results
    from evaluators.run.runner import existing_results

    save_result(_result(), tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"name": "x"}), encoding="utf-8")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    assert list(existing_results(tmp_path)) == ["k1"]
    assert load_results(tmp_path)["evaluator"].to_list() == ["alignment"]
