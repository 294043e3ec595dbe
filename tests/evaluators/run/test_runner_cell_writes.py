"""A cell's files (issue 27, items 4, 6, 7): artifacts first, the result JSON last; every temp file has an owner.

"A result JSON exists" must mean "the cell is complete": a grid that dies between the
predictions and the result leaves no result (the rerun computes the cell), a full disk
leaves no temporary file and no empty ``--out``, what killed writers left is swept by the
next run, a bad second model writes nothing, and a truncated result is recomputed.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from builders.cli import main
from evaluators.core import fileio
from evaluators.run import runner
from evaluators.run.predictions import SUFFIX

BASE = ["eval", "word-retrieval", "--n", "20", "--repeats", "2", "--layers", "0", "--no-cache"]


def _argv(
    dataset: Path, out: Path, *extra: str, models: tuple[str, ...] = ("random",)
) -> list[str]:
    model_args = [a for m in models for a in ("--model", m)]
    return [*BASE, "--dataset", str(dataset), *model_args, "--out", str(out), *extra]


def _dead_pid() -> int:
    """The PID of a process that has exited (the owner of a stale temporary file)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _full_disk(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_cell_that_dies_before_its_result_is_recomputed(cbd_pair, tmp_path, monkeypatch, capsys):
    out = tmp_path / "res"
    calls = []

    def killed(path, rows):  # the kill: after the plots, before the predictions are in place
        calls.append(path)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "write_predictions", killed)
    assert main(_argv(cbd_pair[0], out, "--save-predictions")) == 130
    assert calls, "the predictions come before the result"
    assert not out.exists(), "a result without its predictions, or plots without their result"
    monkeypatch.undo()
    report = runner.GridReport()
    opts = runner.RunOptions(out=str(out), save_predictions=True, use_cache=False, plots=False)
    runner.run_grid(
        "word-retrieval",
        ["random"],
        [str(cbd_pair[0])],
        params={"n": 20, "repeats": 2, "layers": "0"},
        options=opts,
        report=report,
    )
    assert len(report.computed) == 1 and not report.skipped
    (result,) = out.glob("*.json")
    assert (out / result.name.replace(".json", SUFFIX)).is_file()
    capsys.readouterr()


def test_a_full_disk_leaves_no_result_no_temp_file_and_no_empty_out(
    cbd_pair, tmp_path, monkeypatch, capsys
):
    import pyarrow.parquet as pq

    out = tmp_path / "new" / "res"
    monkeypatch.setattr(pq, "write_table", _full_disk)
    assert main(_argv(cbd_pair[0], out, "--save-predictions", "--no-plots")) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "No space left on device" in err
    assert "Cannot write predictions" in err
    assert not out.exists() and not (tmp_path / "new").exists()
    # with earlier results in --out: they stay, and nothing of the failed cell is added
    out.mkdir(parents=True)
    (out / "keep.txt").write_text("x", encoding="utf-8")
    assert main(_argv(cbd_pair[0], out, "--save-predictions")) == 2
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_a_png_on_a_full_disk_is_one_sentence_and_no_partial_file(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from evaluators.core.errors import OutputError
    from evaluators.plots import pyplot, save_figure

    real = Figure.savefig

    def half_then_full(self, fname, **kwargs):
        Path(fname).write_bytes(b"\x89PNG half")
        _full_disk()

    fig = pyplot().figure()
    monkeypatch.setattr(Figure, "savefig", half_then_full)
    with pytest.raises(
        OutputError, match=r"Cannot write the plot .*plot.png' \(No space left on device\)"
    ):
        save_figure(fig, tmp_path / "plot.png")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(Figure, "savefig", real)
    fig = pyplot().figure()
    assert save_figure(fig, tmp_path / "plot.png").read_bytes().startswith(b"\x89PNG")
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_what_killed_writers_left_in_out_is_swept_on_the_next_run(cbd_pair, tmp_path, capsys):
    out = tmp_path / "res"
    out.mkdir()
    dead = _dead_pid()
    stale = [
        f".x.json.tmp-{dead}-0a1b2c3d",
        f".r.predictions.parquet.tmp-{dead}-00ff00ff",
        f".probe-{dead}-1a2b3c4d",
    ]
    for name in stale:
        (out / name).write_bytes(b"half")
    legacy = out / ".tmp-k3j_9x2a.parquet"  # mkstemp's name in older versions: swept once old
    legacy.write_bytes(b"half")
    os.utime(legacy, (1, 1))
    live = out / f".y.json.tmp-{os.getpid()}-0a1b2c3d"  # a running writer's: kept
    live.write_bytes(b"writing")
    assert main(_argv(cbd_pair[0], out, "--no-plots")) == 0
    assert _leftovers(out) == [live.name]
    capsys.readouterr()


def test_a_bad_second_model_or_dataset_writes_nothing(cbd_pair, tmp_path, capsys):
    out = tmp_path / "res"
    for models in (
        ("random", "nosuchmodel"),
        ("random", "st:/no/such/folder"),
        ("random", "callable:no_such_module_xyz:f"),
    ):
        assert main(_argv(cbd_pair[0], out, models=models)) == 2, models
        assert not out.exists(), models
    err = capsys.readouterr().err
    assert "nosuchmodel" in err and "/no/such/folder" in err and "no_such_module_xyz" in err
    argv = [*_argv(cbd_pair[0], out), "--dataset", str(tmp_path / "missing")]
    assert main(argv) == 2 and not out.exists()


def test_a_grid_config_that_one_dataset_lacks_is_refused_before_any_cell(
    cbd_pair, tmp_path, capsys
):
    out = tmp_path / "res"
    argv = [
        *_argv(cbd_pair[0], out),
        "--dataset",
        str(cbd_pair[1]),
        "--config",
        "eng_Latn-fra_Latn",
    ]
    assert main(argv) == 2 and not out.exists()
    assert "--config 'eng_Latn-fra_Latn' is not a config of" in capsys.readouterr().err


def test_a_truncated_result_is_an_incomplete_cell_recomputed(cbd_pair, tmp_path, capsys, caplog):
    out = tmp_path / "res"
    assert main(_argv(cbd_pair[0], out, "--no-plots")) == 0
    (path,) = out.glob("*.json")
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole[: len(whole) // 2], encoding="utf-8")
    capsys.readouterr()
    with caplog.at_level(logging.INFO, logger="xlbench"):
        assert main(_argv(cbd_pair[0], out, "--no-plots")) == 0
    err = capsys.readouterr().err
    assert "different result" not in err and "--overwrite" not in err
    lines = [r.getMessage() for r in caplog.records if "incomplete" in r.getMessage()]
    assert len(lines) == 1 and path.name in lines[0]
    again = json.loads(path.read_text(encoding="utf-8"))
    assert again["main_score"] == json.loads(whole)["main_score"]


def test_a_stored_cell_without_what_this_run_asks_for_is_computed_again(
    cbd_pair, tmp_path, capsys, caplog
):
    """--save-predictions or another --bootstrap over a stored result: it was skipped, silently."""
    out = tmp_path / "res"
    assert main(_argv(cbd_pair[0], out, "--no-plots", "--bootstrap", "0")) == 0
    (path,) = out.glob("*.json")
    first = json.loads(path.read_text(encoding="utf-8"))
    with caplog.at_level(logging.INFO, logger="xlbench"):
        assert main(_argv(cbd_pair[0], out, "--no-plots", "--bootstrap", "20")) == 0
        assert (
            main(_argv(cbd_pair[0], out, "--no-plots", "--bootstrap", "20", "--save-predictions"))
            == 0
        )
        assert (
            main(_argv(cbd_pair[0], out, "--no-plots", "--bootstrap", "20", "--save-predictions"))
            == 0
        )
    said = [r.getMessage() for r in caplog.records if path.name in r.getMessage()]
    assert [m.split(":")[0].split()[0] for m in said] == ["recomputing", "recomputing", "skip"]
    assert (
        "no interval of 20 bootstrap resamples" in said[0] and "no per-item predictions" in said[1]
    )
    again = json.loads(path.read_text(encoding="utf-8"))
    assert again["ci_resamples"] == 20 and again["main_score"] == first["main_score"]
    assert (out / path.name.replace(".json", SUFFIX)).is_file()
    capsys.readouterr()


def test_a_different_result_is_still_refused_and_kept(cbd_pair, tmp_path, capsys):
    out = tmp_path / "res"
    assert main(_argv(cbd_pair[0], out, "--no-plots")) == 0
    (path,) = out.glob("*.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["main_score"] = 0.123
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(_argv(cbd_pair[0], out, "--rerun")) == 2
    assert "different result" in capsys.readouterr().err
    assert json.loads(path.read_text(encoding="utf-8"))["main_score"] == 0.123
    assert [p.name for p in out.iterdir()] == [path.name], "the refused cell wrote its plots"


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"k": "4"}, "--k must be a whole number; got '4'."),
        ({"k": 2.5}, "--k must be a whole number; got 2.5."),
        ({"k": None}, "--k must be a whole number"),
        ({"seed": "zero"}, "--seed must be a whole number; got 'zero'."),
        ({"seed": -1}, "--seed must be at least 0, got -1."),
        (
            {"bootstrap": -1},
            "--bootstrap must be 0 (no interval) or a positive number of resamples",
        ),
        ({"batch_size": 0}, "--batch-size must be at least 1 sentence per forward pass, got 0."),
        (
            {"dataset": 123},
            "dataset must be a built dataset folder or a Hub repo id (a string); got int 123.",
        ),
        ({"model": 123}, "model must be a spec string"),
        ({"revision": 7}, "revision must be a string; got int 7."),
        ({"margin": ["ratio"]}, "--margin takes one value, not a list; got ('ratio',)."),
        ({"lang": 7}, "--lang must be a string; got int 7."),
        ({"src": ["a.txt", "b.txt"]}, "--src takes one value, not a list"),
    ],
)
def test_the_api_refuses_wrong_types_in_one_sentence(keywords, message, tmp_path):
    import xlbench
    from evaluators.core.errors import UsageError

    src = tmp_path / "s.txt"
    src.write_text("The dog runs .\nA cat sleeps .\n", encoding="utf-8")
    args = {
        "model": "random",
        "src": str(src),
        "tgt": str(src),
        "out": str(tmp_path / "out"),
        **keywords,
    }
    if "dataset" in keywords or "revision" in keywords:
        args.pop("src"), args.pop("tgt")
        args.setdefault("dataset", str(tmp_path))
    with pytest.raises(UsageError) as info:
        xlbench.evaluate("bitext-retrieval", **args)
    assert message in str(info.value)
    assert "\n" not in str(info.value) and not (tmp_path / "out").exists()


def test_run_grid_takes_names_and_dicts_and_refuses_the_rest_in_one_sentence(cbd_pair, tmp_path):
    from evaluators.core.errors import UsageError

    params = {"n": 20, "repeats": 2, "layers": "0"}
    done = runner.run_grid(
        "word-retrieval",
        ["random"],
        [str(cbd_pair[0])],
        params=params,
        options={"out": str(tmp_path / "o"), "plots": False, "use_cache": False},
        engine="local",
    )
    assert len(done) == 1 and len(list((tmp_path / "o").glob("*.json"))) == 1
    for keywords, message in (
        ({"options": {"outt": "x"}}, "Unknown run option 'outt'; valid: "),
        ({"options": 3}, "options must be RunOptions or a dict of its fields; got int."),
        ({"engine": 3}, "engine must be 'local', 'ray' or an engine; got int."),
    ):
        with pytest.raises(UsageError, match=re.escape(message)):
            runner.run_grid("word-retrieval", ["random"], [str(cbd_pair[0])], **keywords)
    with pytest.raises(UsageError, match="Unknown evaluator 7"):
        runner.run_grid(7, ["random"], [str(cbd_pair[0])])


def test_run_grid_refuses_a_string_where_a_list_belongs(tmp_path):
    from evaluators.core.errors import UsageError

    with pytest.raises(UsageError, match=r"datasets must be a list; got str"):
        runner.run_grid("word-retrieval", ["random"], str(tmp_path))


def test_run_options_are_checked_however_they_are_made():
    from evaluators.core.errors import UsageError

    with pytest.raises(UsageError, match=r"--seed must be at least 0, got -1\."):
        runner.RunOptions(seed=-1)
    with pytest.raises(UsageError, match=r"--no-plots must be true or false; got 'no'\."):
        runner.RunOptions(plots="no")


def test_clean_stale_writes_keeps_what_is_not_a_temporary_file(tmp_path):
    dead = _dead_pid()
    for name in ("result.json", ".hidden", f".a.json.tmp-{dead}-zz"):  # not hex: not ours
        (tmp_path / name).write_text("x", encoding="utf-8")
    (tmp_path / f".a.json.tmp-{dead}-0a0a0a0a").write_text("x", encoding="utf-8")
    removed = fileio.clean_stale_writes(tmp_path)
    assert [p.name for p in removed] == [f".a.json.tmp-{dead}-0a0a0a0a"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["result.json", ".hidden", f".a.json.tmp-{dead}-zz"]
    )


def test_removed_if_failed_takes_back_only_empty_folders_it_made(tmp_path):
    target = tmp_path / "a" / "b"
    with pytest.raises(RuntimeError), fileio.removed_if_failed(target):
        target.mkdir(parents=True)
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError), fileio.removed_if_failed(target):
        target.mkdir(parents=True)
        (target / "done.json").write_text("{}", encoding="utf-8")
        raise RuntimeError
    assert (target / "done.json").is_file()
    deeper = tmp_path / "c" / "d"
    with pytest.raises(RuntimeError), fileio.removed_if_failed(deeper):
        (tmp_path / "c").mkdir()  # only the parent was made before the failure
        raise RuntimeError
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_eval_alignment_on_a_full_disk_leaves_no_temp_file_and_no_folder(
    tmp_path, monkeypatch, capsys
):
    gold, pred = tmp_path / "gold.txt", tmp_path / "pred.txt"
    gold.write_text("0-0 1-1\n0-0\n", encoding="utf-8")
    pred.write_text("0-0\n0-0\n", encoding="utf-8")
    out = tmp_path / "res"
    # A full disk often shows only when the data is flushed: the result's fsync fails.
    monkeypatch.setattr(os, "fsync", _full_disk)
    argv = ["eval", "alignment", "--gold", str(gold), "--pred", str(pred), "--index-base", "0"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "No space left on device" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.txt", "pred.txt"]
