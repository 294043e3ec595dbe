"""Progress: the final line with counts and time, short steps kept quiet, the interval setting, scopes."""

from __future__ import annotations

import io
from contextlib import nullcontext

import pytest

from evaluators.compute.engine import LocalEngine, StageProgress
from evaluators.core.errors import UsageError
from evaluators.core.progress import (
    INTERVAL_ENV,
    Progress,
    current_scope,
    default_interval,
    scope,
    scoped,
)


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def run(total, steps, *, interval=10, quiet_if_short=False, fail=False):
    out, clock = io.StringIO(), Clock()
    with pytest.raises(RuntimeError) if fail else nullcontext():
        with Progress(
            total, "encode deu_Latn (m)", stream=out, interval=interval, clock=clock,
            unit="texts", quiet_if_short=quiet_if_short,
        ) as p:  # fmt: skip
            for seconds, n in steps:
                clock.t += seconds
                p.update(n)
            if fail:
                raise RuntimeError("killed")
    return out.getvalue().splitlines()


def test_final_line_has_counts_rate_and_time():
    assert run(40, [(5, 10), (5, 10), (5, 10), (5, 10)]) == [
        "encode deu_Latn (m): 20/40 texts (50%), 2.0 texts/s, ETA 10s",
        "encode deu_Latn (m): 40/40 texts (100%), 2.0 texts/s, done in 20s",  # one line at the end
    ]


def test_a_failed_or_unfinished_step_says_stopped():
    assert run(40, [(4, 10)], fail=True) == [
        "encode deu_Latn (m): 10/40 texts (25%), 2.5 texts/s, stopped after 4s"
    ]
    assert run(None, [(4, 10)]) == ["encode deu_Latn (m): 10 texts, 2.5 texts/s, done in 4s"]


def test_short_steps_stay_quiet_long_ones_report():
    assert run(40, [(1, 40)], quiet_if_short=True) == []  # within one interval: nothing
    long = run(40, [(6, 20), (6, 20)], quiet_if_short=True)
    assert long[-1] == "encode deu_Latn (m): 40/40 texts (100%), 3.3 texts/s, done in 12s"
    assert run(40, [(0, 40)], interval=0, quiet_if_short=True) == [
        "encode deu_Latn (m): 40/40 texts (100%), done in 0s",
    ]


def test_close_twice_prints_once():
    out = io.StringIO()
    p = Progress(2, "x", stream=out, interval=100, clock=Clock())
    p.update(2)
    p.close()
    p.close()
    assert out.getvalue() == "x: 2/2 items (100%), done in 0s\n"


def test_interval_from_the_environment(monkeypatch):
    monkeypatch.delenv(INTERVAL_ENV, raising=False)
    assert default_interval() == 25.0
    monkeypatch.setenv(INTERVAL_ENV, "0")
    with Progress(1, "x", stream=io.StringIO()) as p:  # closed: it leaves the watcher's list
        assert default_interval() == 0.0 and p.interval == 0.0
    monkeypatch.setenv(INTERVAL_ENV, "soon")
    with pytest.raises(
        UsageError, match="XLBENCH_PROGRESS_INTERVAL must be a number of seconds >= 0, got 'soon'"
    ):
        default_interval()


def test_scopes_nest_and_unwind():
    with scope("cbd eng-deu"):
        with scope("chunk 3"):
            assert scoped("extract") == "cbd eng-deu chunk 3: extract"
        assert current_scope() == "cbd eng-deu"
    assert scoped("extract") == "extract" and current_scope() == ""


class Double:
    def open(self):
        return lambda batch: [2 * x for x in batch]


@pytest.mark.parametrize("workers", [1, 2])
def test_engine_stages_report_items(workers, monkeypatch, capsys):
    monkeypatch.setenv(INTERVAL_ENV, "0")
    monkeypatch.delenv("XLBENCH_PROGRESS", raising=False)
    progress = StageProgress("double", "numbers", len)
    with scope("demo"):
        out = LocalEngine(workers=workers).map_batches(Double(), [[1, 2], [3], [4, 5, 6]], progress)
    assert out == [[2, 4], [6], [8, 10, 12]]
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "demo: double: 2/6 numbers (33%)",
        "demo: double: 3/6 numbers (50%)",
        "demo: double: 6/6 numbers (100%)",
    ]
    assert lines[-1].endswith("s") and ", done in " in lines[-1]


def test_an_unnamed_stage_prints_nothing(monkeypatch, capsys):
    monkeypatch.setenv(INTERVAL_ENV, "0")
    assert LocalEngine().map_batches(Double(), [[1]]) == [[2]]
    assert capsys.readouterr().err == ""


def test_a_silent_step_is_repeated_once_nothing_was_printed_for_an_interval(monkeypatch):
    """The watcher keeps a log alive through a step that counts nothing (a long batch, a model load)."""
    from evaluators.core import progress

    watch, clock = progress._Watch(), Clock()
    watch.clock, watch.last = clock, 0.0
    monkeypatch.setattr(progress, "_WATCH", watch)
    monkeypatch.setattr(watch, "_run", lambda: None)  # ticks are driven by hand, not by a thread
    outer_out, inner_out = io.StringIO(), io.StringIO()
    kw = {"interval": 30, "clock": clock, "tty": False}
    with Progress(4, "word-retrieval", stream=outer_out, unit="cells", **kw):
        clock.t = 5.0
        with Progress(900, "encode deu_Latn (m)", stream=inner_out, unit="texts", quiet_if_short=True, **kw) as p:  # fmt: skip
            clock.t = 25.0
            assert watch.tick(clock.t) is None  # nothing printed for 25 s: not yet
            clock.t = 31.0
            step = watch.tick(clock.t)  # the encode is 26 s old (short so far): its grid speaks
            assert step is not None and step.label == "word-retrieval"
            assert outer_out.getvalue() == "word-retrieval: 0/4 cells (0%), running for 31s\n"
            assert watch.last == 31.0 and inner_out.getvalue() == ""
            clock.t = 34.0
            p.update(64)  # 29 s after the encode began: no line of its own
            clock.t = 50.0
            assert watch.tick(clock.t) is None  # the grid's line was printed 19 s ago
            clock.t = 62.0
            assert watch.tick(clock.t).label == "encode deu_Latn (m)"
            assert inner_out.getvalue() == (
                "encode deu_Latn (m): 64/900 texts (7%), 1.1 texts/s, ETA 12m25s, running for 57s\n"
            )
    assert watch.active == [] and watch.tick(1000.0) is None  # both steps left the watch


def test_a_step_on_its_own_clock_is_not_watched(monkeypatch):
    """A step with an injected clock is never repeated by the real-time watcher thread."""
    from evaluators.core import progress

    watch = progress._Watch()
    monkeypatch.setattr(progress, "_WATCH", watch)
    with Progress(2, "x", stream=io.StringIO(), interval=10, tty=False, clock=Clock()):
        assert watch.active == [] and watch.thread is None


def test_every_update_mode_starts_no_watcher(monkeypatch):
    from evaluators.core import progress

    watch = progress._Watch()
    monkeypatch.setattr(progress, "_WATCH", watch)
    with Progress(2, "x", stream=io.StringIO(), interval=0, tty=False):
        assert watch.thread is None and len(watch.active) == 1
    assert watch.active == []
