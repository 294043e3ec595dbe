"""``xlbench compare``: paired tests on the per-item predictions beside two results."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from builders.cli import main
from evaluators.core.errors import InputFileError, UsageError
from evaluators.report.compare import compare
from evaluators.run.predictions import predictions_path, write_predictions

RESULT = {
    "evaluator": "bitext-retrieval",
    "dataset": {"id": "xlbench/bucc", "revision": "a" * 40, "source": "hub"},
    "model": {"id": "m", "revision": "1"},
    "scores": {"test": [{"subset": "deu_Latn-eng_Latn", "main_score": 0.5}]},
    "main_score": 0.5,
    "signature": "bitext-retrieval|ds:xlbench/bucc@1:aaaa|model:m@1|k:4|xlbench:0.1.0",
}


def write(folder, name, correct, model="m", subset="deu_Latn-eng_Latn", **extra):
    data = json.loads(json.dumps(RESULT))
    data["model"]["id"] = model
    data["signature"] = data["signature"].replace("model:m@1", f"model:{model}@1")
    data.update(extra)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    rows = [
        {
            "item_id": f"s{i}",
            "subset": subset,
            "correct": bool(c),
            "score": 0.5,
            "retrieved": i,
            "tie": False,
        }
        for i, c in enumerate(correct)
    ]
    write_predictions(predictions_path(path), rows)
    return path


@pytest.fixture
def systems(tmp_path):
    rng = np.random.default_rng(5)
    a = rng.random(300) < 0.6
    b = a.copy()
    b[np.flatnonzero(~a)[:45]] = True  # B fixes 45 of A's errors
    return (
        write(tmp_path, "a", a, "model-a"),
        write(tmp_path, "b", b, "model-b"),
        write(tmp_path, "c", a, "model-c"),
        a,
        b,
    )


def test_significant_difference(systems, capsys):
    pa, pb, _, a, b = systems
    res = compare(pa, pb, resamples=500)
    assert (
        res.n_items == 300
        and res.statistic == "mean of correct"
        and res.subset == "deu_Latn-eng_Latn"
    )
    bs, ar = res.tests
    assert bs.delta == pytest.approx(b.mean() - a.mean()) == pytest.approx(45 / 300)
    assert bs.p_value < 0.01 and ar.p_value < 0.01 and res.significant
    assert main(["compare", str(pa), str(pb), "--resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert "=> the difference is significant at alpha = 0.05" in out and "B-A +0.1500" in out
    assert (
        main(["compare", str(pa), str(pb), "--resamples", "200", "--json", "--method", "ar"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["significant"] is True and [t["method"] for t in data["tests"]] == [
        "approximate-randomization"
    ]


def test_identical_systems_are_not_different(systems, capsys):
    pa, _, pc, _, _ = systems
    res = compare(pa, pc, resamples=300)
    assert [t.p_value for t in res.tests] == [1.0, 1.0] and not res.significant
    assert main(["compare", str(pa), str(pc), "--resamples", "100"]) == 0
    assert "is not significant" in capsys.readouterr().out


def test_refuses_different_revisions_items_and_evaluators(systems, tmp_path, capsys):
    pa, pb, _, a, _ = systems
    other = write(tmp_path, "rev", a, dataset={"id": "xlbench/bucc", "revision": "b" * 40})
    with pytest.raises(UsageError, match="different dataset revisions"):
        compare(pa, other)
    short = write(tmp_path, "short", a[:-1])
    with pytest.raises(
        UsageError, match=r"different items \(1 only in A, 0 only in B, e.g. 's299'"
    ):
        compare(pa, short)
    ev = write(tmp_path, "ev", a, evaluator="bucc")
    with pytest.raises(UsageError, match="different evaluators"):
        compare(pa, ev)
    assert main(["compare", str(pa), str(other)]) == 2
    assert "rerun both models on one revision" in capsys.readouterr().err
    bare = tmp_path / "bare.json"
    shutil.copy(pa, bare)
    assert main(["compare", str(pa), str(bare)]) == 2
    assert "--save-predictions" in capsys.readouterr().err
    with pytest.raises(InputFileError, match="does not exist"):
        compare(tmp_path / "none.json", pa)
    with pytest.raises(InputFileError, match="is a Parquet file .per-item predictions., not a"):
        compare(predictions_path(pa), predictions_path(pb))


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--seed", "-1"], "--seed must be 0 or more, got -1."),
        (["--resamples", "0"], "--resamples must be at least 1, got 0."),
        (["--alpha", "1"], "--alpha must lie strictly between 0 and 1, got 1.0."),
    ],
)
def test_bad_options_are_one_sentence(systems, capsys, option, message):
    pa, pb, *_ = systems
    assert main(["compare", str(pa), str(pb), *option]) == 2
    assert message in capsys.readouterr().err


def test_subset_selection_and_f1_counts(tmp_path):
    pa = tmp_path / "a.json"
    pa.write_text(json.dumps(RESULT))
    pb = tmp_path / "b.json"
    pb.write_text(json.dumps(RESULT))
    rows = lambda good: [  # noqa: E731
        {
            "item_id": str(i),
            "subset": s,
            "correct": i < good,
            "tp": int(i < good),
            "n_pred": 1,
            "n_gold": 1,
        }
        for s in ("layer0", "layer1")
        for i in range(40)
    ]
    write_predictions(predictions_path(pa), rows(10))
    write_predictions(predictions_path(pb), rows(30))
    with pytest.raises(UsageError, match="pick one with --subset"):
        compare(pa, pb)
    res = compare(pa, pb, subset="layer1", resamples=200)
    assert res.statistic == "micro F1 over items" and res.n_items == 40
    assert res.tests[0].score_a == pytest.approx(10 / 40) and res.tests[0].score_b == pytest.approx(
        30 / 40
    )
    with pytest.raises(UsageError, match="no predictions for subset 'layer9'"):
        compare(pa, pb, subset="layer9")
    main_rows = lambda good: [dict(r, main=r["subset"] == "layer0") for r in rows(good)]  # noqa: E731
    write_predictions(predictions_path(pa), main_rows(10))
    write_predictions(predictions_path(pb), main_rows(10))
    res = compare(pa, pb, resamples=100)
    assert res.subset == "main" and res.n_items == 40 and res.tests[0].delta == 0
