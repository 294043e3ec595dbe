"""Per-item predictions round trip and the progress lines."""

from __future__ import annotations

import io
import math

import pytest

from evaluators.core.errors import InputFileError, SchemaError
from evaluators.core.progress import Progress, quiet_libraries
from evaluators.run.predictions import predictions_path, read_predictions, write_predictions


def test_predictions_round_trip_keeps_extras(tmp_path):
    path = predictions_path(tmp_path / "r" / "bucc__a@1__m@2.json")
    rows = [
        {
            "item_id": 3,
            "subset": "deu_Latn-eng_Latn",
            "correct": 1,
            "score": 1.25,
            "retrieved": 7,
            "tie": False,
            "layer": 2,
        },
        {"item_id": "x", "subset": "deu_Latn-eng_Latn", "correct": False},
    ]
    assert (
        write_predictions(path, rows) == path and path.name == "bucc__a@1__m@2.predictions.parquet"
    )
    back = read_predictions(path)
    assert back[0] == {
        "item_id": "3",
        "subset": "deu_Latn-eng_Latn",
        "correct": True,
        "score": 1.25,
        "retrieved": "7",
        "tie": False,
        "layer": 2,
    }
    assert back[1]["retrieved"] == "" and back[1]["tie"] is False and math.isnan(back[1]["score"])
    assert not list(path.parent.glob(".tmp-*"))


def test_predictions_errors(tmp_path):
    with pytest.raises(SchemaError, match="row 0 lacks correct"):
        write_predictions(tmp_path / "p.parquet", [{"item_id": 1, "subset": "a"}])
    assert not (tmp_path / "p.parquet").exists()
    with pytest.raises(InputFileError, match="--save-predictions"):
        read_predictions(tmp_path / "none.parquet")
    (tmp_path / "bad.parquet").write_text("x")
    with pytest.raises(InputFileError, match="not a readable parquet"):
        read_predictions(tmp_path / "bad.parquet")


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_progress_lines_when_not_a_terminal():
    out, clock = io.StringIO(), Clock()
    with Progress(100, "encoding", stream=out, interval=10, clock=clock) as p:
        for _ in range(10):
            clock.t += 2
            p.update(5)
    lines = out.getvalue().splitlines()
    # a line at t=10 (25 done) and t=20 (50 done), then the final one with counts and time
    assert lines == [
        "encoding: 25/100 items (25%), 2.5 items/s, ETA 30s",
        "encoding: 50/100 items (50%), 2.5 items/s, ETA 20s",
        "encoding: 50/100 items (50%), 2.5 items/s, stopped after 20s",
    ]


def test_progress_uses_tqdm_on_a_terminal():
    out = io.StringIO()
    with Progress(3, "mining", stream=out, tty=True, clock=Clock()) as p:
        p.update(3)
    bar, final = out.getvalue().rsplit("\r", 1)
    assert "mining:" in bar and "0/3" in bar  # tqdm's bar, cleared when done
    assert final == "mining: 3/3 items (100%), done in 0s\n"  # then the final line stays


def test_quiet_libraries():
    import datasets

    quiet_libraries(verbose=True)
    datasets.enable_progress_bars()
    quiet_libraries()
    assert not datasets.is_progress_bar_enabled()
    datasets.enable_progress_bars()
