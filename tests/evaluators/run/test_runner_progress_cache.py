"""The runner's log: progress over grid cells, the embedding cache's line, quiet libraries (issues 14, 18)."""

from __future__ import annotations

import logging

from builders.cli import main


def _files(tmp_path):
    words = [f"word{i} thing{i % 7}" for i in range(30)]
    src, tgt = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_text("\n".join(words) + "\n", encoding="utf-8")
    tgt.write_text(
        "\n".join(w.upper() if i % 3 == 0 else w for i, w in enumerate(words)) + "\n",
        encoding="utf-8",
    )
    return src, tgt


def test_grid_prints_progress_and_the_cache_line(tmp_path, capsys, caplog):
    src, tgt = _files(tmp_path)
    argv = [
        "eval",
        "bitext-retrieval",
        "--src",
        str(src),
        "--tgt",
        str(tgt),
        "--model",
        "callable:xl_tiny_model:encode@tiny-v1",
        "--model",
        "callable:xl_tiny_model:encode@tiny-v2",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path / "r"),
    ]
    with caplog.at_level(logging.INFO, logger="xlbench"):
        assert main(argv) == 0
    err = capsys.readouterr().err
    assert (
        "bitext-retrieval: 2/2 cells (100%)" in err
    )  # stderr is not a terminal here: a line, not a bar
    lines = [r.getMessage() for r in caplog.records if "embedding cache:" in r.getMessage()]
    assert len(lines) == 2 and "wrote" in lines[0] and "100% hits" not in lines[0]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="xlbench"):
        assert main([*argv, "--rerun"]) == 0  # the vectors are cached now
    lines = [r.getMessage() for r in caplog.records if "embedding cache:" in r.getMessage()]
    assert len(lines) == 2 and "100% hits" in lines[0]


def test_libraries_are_quiet_unless_verbose(tmp_path):
    from transformers.utils import logging as tlog

    src, tgt = _files(tmp_path)
    tlog.enable_progress_bar()
    assert (
        main(
            [
                "eval",
                "bitext-retrieval",
                "--src",
                str(src),
                "--tgt",
                str(tgt),
                "--model",
                "callable:xl_tiny_model:encode@tiny-v1",
                "--no-cache",
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 0
    )
    assert not tlog.is_progress_bar_enabled()


def test_api_takes_bootstrap_and_save_predictions(tmp_path):
    import xlbench
    from evaluators.run.predictions import predictions_path, read_predictions

    src, tgt = _files(tmp_path)
    spec = "callable:xl_tiny_model:encode@tiny-v1"
    full = xlbench.evaluate(
        "bitext-retrieval",
        model=spec,
        src=str(src),
        tgt=str(tgt),
        use_cache=False,
        out=str(tmp_path / "r"),
        save_predictions=True,
    )
    bare = xlbench.evaluate(
        "bitext-retrieval", model=spec, src=str(src), tgt=str(tgt), use_cache=False, bootstrap=0
    )
    assert full.ci_low is not None and full.ci_low <= full.main_score <= full.ci_high
    assert (
        bare.ci_low is None
        and bare.main_score == full.main_score
        and bare.signature == full.signature
    )
    (path,) = (tmp_path / "r").glob("bitext-retrieval__*.json")
    rows = read_predictions(predictions_path(path))
    assert len(rows) == 2 * 30 and sum(r["correct"] for r in rows) / len(rows) == full.main_score
