"""What a result says: effective parameters, scores independent of plots, names that never collide."""

from __future__ import annotations

import json

import pytest

from builders.cli import main
from evaluators.core.errors import OutputError
from evaluators.run.results import save_result
from evaluators.run.runner import RunOptions, load_result, run_grid

COMMON = ["--model", "random", "--no-cache", "--layers", "0"]


def _run(capsys, *argv):
    code = main(["eval", *argv, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_word_retrieval_signs_the_effective_n_and_repeats(cbd_pair, tmp_path, capsys):
    ds = cbd_pair[1]  # 30 sentences x 5 words: fewer pairs than --n 500
    data = _run(
        capsys,
        "word-retrieval",
        "--dataset",
        str(ds),
        *COMMON,
        "--n",
        "500",
        "--repeats",
        "3",
        "--no-plots",
        "--out",
        str(tmp_path / "r"),
    )
    n = data["scores"]["test"][0]["n"]
    assert n < 500 and f"|n:{n}|repeats:1|" in data["signature"]
    assert data["parameters"]["n"] == n and data["requested_parameters"]["n"] == 500
    assert data["requested_parameters"]["repeats"] == 3 and data["parameters"]["repeats"] == 1


def test_sentence_retrieval_signs_the_effective_n(cbd_pair, tmp_path, capsys):
    data = _run(
        capsys,
        "sentence-retrieval",
        "--dataset",
        str(cbd_pair[1]),
        *COMMON,
        "--n",
        "999",
        "--no-plots",
        "--out",
        str(tmp_path / "r"),
    )
    n = data["scores"]["test"][0]["n"]
    assert n < 999 and f"|n:{n}|" in data["signature"]


@pytest.mark.parametrize("evaluator", ["word-retrieval", "sentence-retrieval"])
def test_no_plots_gives_identical_scores(evaluator, cbd_pair, tmp_path, capsys):
    argv = [evaluator, "--dataset", str(cbd_pair[0]), *COMMON, "--n", "30"]
    with_plots = _run(capsys, *argv, "--out", str(tmp_path / "a"))
    without = _run(capsys, *argv, "--no-plots", "--out", str(tmp_path / "b"))
    assert with_plots["artifacts"] and not without["artifacts"]
    assert (
        with_plots["scores"] == without["scores"]
        and with_plots["signature"] == without["signature"]
    )


def test_parameter_variants_into_one_out_leave_two_results(cbd_pair, tmp_path, capsys):
    out = tmp_path / "r"
    for n in ("10", "20"):
        _run(
            capsys,
            "word-retrieval",
            "--dataset",
            str(cbd_pair[0]),
            *COMMON,
            "--n",
            n,
            "--no-plots",
            "--out",
            str(out),
        )
    assert len(list(out.glob("word-retrieval__*.json"))) == 2


def test_a_different_result_under_the_same_name_is_refused(cbd_pair, tmp_path, capsys):
    out = tmp_path / "r"
    first = _run(
        capsys,
        "word-retrieval",
        "--dataset",
        str(cbd_pair[0]),
        *COMMON,
        "--n",
        "10",
        "--no-plots",
        "--out",
        str(out),
    )
    (path,) = out.glob("*.json")
    # The same computation again is a no-op, not an error.
    again = run_grid(
        "word-retrieval",
        ["random"],
        [str(cbd_pair[0])],
        params={"n": 10, "layers": "0"},
        options=RunOptions(out=str(out), plots=False, use_cache=False, rerun=True),
    )
    assert again[0].scores == first["scores"]
    tampered = load_result(path)
    tampered.main_score = 0.123
    with pytest.raises(OutputError, match="already holds a different result.*--overwrite"):
        save_result(tampered, out)
    assert json.loads(path.read_text())["main_score"] == first["main_score"]
    save_result(tampered, out, overwrite=True)
    assert json.loads(path.read_text())["main_score"] == 0.123


def test_device_and_out_are_checked_before_scoring(cbd_pair, tmp_path, capsys):
    code = main(
        [
            "eval",
            "word-retrieval",
            "--dataset",
            str(cbd_pair[0]),
            *COMMON,
            "--device",
            "tpu9",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--device 'tpu9' is not a device" in err and err.count("\n") == 1
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(
        [
            "eval",
            "word-retrieval",
            "--dataset",
            str(cbd_pair[0]),
            *COMMON,
            "--out",
            str(blocker / "sub"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "pass a writable --out folder" in err
    assert not (tmp_path / "r").exists()


def test_tacc_signs_the_effective_sample_and_plots_change_nothing(alee_dataset, tmp_path, capsys):
    argv = [
        "tacc",
        "--dataset",
        str(alee_dataset),
        "--model",
        "random",
        "--no-cache",
        "--sample",
        "50",
        "--seed",
        "3",
    ]
    plotted = _run(capsys, *argv, "--out", str(tmp_path / "a"))
    plain = _run(capsys, *argv, "--no-plots", "--out", str(tmp_path / "b"))
    assert (
        "|sample:4|seed:3|" in plain["signature"]
    )  # 4 items exist; --sample 50 scored all of them
    assert plotted["artifacts"] and not plain["artifacts"]
    assert plotted["scores"] == plain["scores"] and plotted["signature"] == plain["signature"]


def test_tacc_grid_draws_one_scatter_over_the_models(alee_dataset, tmp_path, capsys):
    code = main(
        [
            "eval",
            "tacc",
            "--dataset",
            str(alee_dataset),
            "--model",
            "random",
            "--model",
            "random:16:2:5",
            "--no-cache",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 0
    capsys.readouterr()
    (combined,) = (tmp_path / "r").glob("tacc__*__2models@*__fertility.png")
    results = [json.loads(p.read_text()) for p in (tmp_path / "r").glob("*.json")]
    assert len(results) == 2 and all(str(combined) in r["artifacts"] for r in results)
