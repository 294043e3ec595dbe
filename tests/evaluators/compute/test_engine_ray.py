"""The Ray engine on a real local cluster: order, model-once-per-worker, retries and the loss of a worker."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluators.compute.engine import LocalEngine, RayEngine

pytestmark = [pytest.mark.slow, pytest.mark.ray]


@pytest.fixture(autouse=True)
def _by_value(ray_cluster):
    # Workers cannot import test modules: send this module's classes and functions by value.
    ray_cluster.cloudpickle.register_pickle_by_value(sys.modules[__name__])


@dataclass(frozen=True)
class SlowSquare:
    """A stage that records each opening (one file per worker process) and takes a while per batch."""

    folder: str
    delay: float = 0.2
    gate: Any = None  # a KillGate: batch 5 waits there to be killed

    def open(self):
        Path(self.folder, f"open-{os.getpid()}").write_text("1")

        def run(batch):
            time.sleep(self.delay)
            if self.gate is not None and batch[0] == 5:
                self.gate.wait()
            Path(self.folder, f"done-{batch[0]}").write_text("1")
            return [(x, x * x) for x in batch]

        return run


def test_map_batches_equals_local_in_input_order_and_opens_once_per_worker(tmp_path):
    batches = [[i, i + 100] for i in range(12)]
    local = LocalEngine().map_batches(SlowSquare(str(tmp_path), 0.0), batches)
    for f in tmp_path.iterdir():
        f.unlink()
    ray_out = RayEngine(workers=2).map_batches(SlowSquare(str(tmp_path)), batches)
    assert ray_out == local
    assert (
        1 <= len(list(tmp_path.glob("open-*"))) <= 2
    )  # 12 batches, at most one model load per worker


def test_map_batches_survives_a_killed_worker(tmp_path, killer):
    k, gate = killer
    batches = [[i] for i in range(16)]
    out = RayEngine(workers=2).map_batches(SlowSquare(str(tmp_path), 0.0, gate), batches)
    k.join(timeout=5)
    assert k.killed is not None, "the test did not manage to kill a worker"
    assert out == [[(i, i * i)] for i in range(16)]
    assert (
        len(list(tmp_path.glob("open-*"))) >= 2
    )  # the killed actor was restarted and opened its stage again


def test_local_workers_do_not_fork_this_process_while_its_ray_driver_runs(tmp_path):
    from builders.cbd import logic, stages
    from evaluators.compute.engine import _start_method

    # A pool forked from a live Ray driver can leave its next cluster call waiting forever;
    # the local engine forks its workers from a clean server process instead, same results.
    assert _start_method() == "forkserver"
    lex = logic.build_lexicon([("house", "Haus"), ("red", "rot")], case=True)
    numbered = [(i, f"The red house {i}", f"Das rote Haus {i}") for i in range(2500)]
    assert len(stages.plan_chunks(numbered)) == 2  # two chunks: both workers get one
    one = stages.extract_all(LocalEngine(workers=1), numbered, lex)
    two = stages.extract_all(LocalEngine(workers=2), numbered, lex)
    assert one == two and one[1]["kept"] >= 2500
    # and the driver still reaches its cluster
    out = RayEngine(workers=2).map_batches(SlowSquare(str(tmp_path), 0.0), [[1], [2]])
    assert out == [[(1, 1)], [(2, 4)]]


@dataclass
class Cell:
    """A grid cell: the model it needs and its dataset."""

    model: str
    dataset: int


@dataclass
class GridFn:
    """Loads each model once per worker process (recorded), then scores cells; dataset 99 always fails."""

    folder: str
    delay: float = 0.0

    def __post_init__(self):
        self._models: dict = {}

    def __call__(self, cell: Cell):
        if cell.model not in self._models:
            Path(self.folder, f"load-{cell.model}-{os.getpid()}").write_text("1")
            self._models[cell.model] = len(cell.model)
        time.sleep(self.delay)
        Path(self.folder, f"try-{cell.model}-{cell.dataset}-{time.monotonic_ns()}").write_text("1")
        if cell.dataset == 99:
            raise ValueError(f"dataset {cell.dataset} is broken")
        return {
            "model": cell.model,
            "dataset": cell.dataset,
            "score": self._models[cell.model] * 1000 + cell.dataset,
        }


def test_run_cells_groups_by_model_retries_and_keeps_the_rest(tmp_path):
    cells = [Cell(m, d) for m in ("model-a", "bb") for d in (1, 2, 99)]
    (tmp_path / "l").mkdir()
    (tmp_path / "r").mkdir()
    local = LocalEngine().run_cells(
        GridFn(str(tmp_path / "l")), cells, lambda c: c.model, retries=0
    )
    out = RayEngine(workers=2, max_retries=1).run_cells(
        GridFn(str(tmp_path / "r")), cells, lambda c: c.model
    )
    assert [o.value for o in out] == [o.value for o in local]
    assert [o.error for o in out] == [None, None, "ValueError: dataset 99 is broken"] * 2
    assert sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "r").glob("load-*")) == [
        "load-bb",
        "load-model-a",
    ]
    assert len(list((tmp_path / "r").glob("try-bb-99-*"))) == 2  # tried, retried once, reported


@dataclass
class PausingGridFn(GridFn):
    """A :class:`GridFn` whose cell ``(a, 2)`` waits at a KillGate, after loading model ``a``.

    The kill lands in the middle of that cell whatever the machine's load: the cell must be
    retried on the restarted actor, which loads model ``a`` again.
    """

    gate: Any = None

    def __call__(self, cell: Cell):
        if (cell.model, cell.dataset) == ("a", 2):
            if cell.model not in self._models:
                super().__call__(Cell(cell.model, -1))  # load the model first (records it)
            self.gate.wait()
        return super().__call__(cell)


def test_run_cells_survives_a_killed_worker(tmp_path, ray_cluster, killer):
    k, gate = killer
    cells = [Cell(m, d) for m in ("a", "b") for d in range(6)]
    out = RayEngine(workers=2, max_retries=2).run_cells(
        PausingGridFn(str(tmp_path), gate=gate), cells, lambda c: c.model
    )
    k.join(timeout=5)
    assert k.killed is not None, "the test did not manage to kill a worker"
    assert all(o.ok for o in out), [o.error for o in out]
    assert [o.value["score"] for o in out] == [1000 + d for d in range(6)] * 2
    # Model b loaded once; model a by the killed actor and again by its restart (the paused
    # cell was retried there), whatever the timing.
    assert len(list(tmp_path.glob("load-b-*"))) == 1
    assert len(list(tmp_path.glob("load-a-*"))) == 2


@dataclass(frozen=True)
class RelativeWriter:
    """Writes one file per item to a relative path."""

    def open(self):
        def run(batch):
            for x in batch:
                Path(f"rel-{x}.txt").write_text(str(os.getpid()))
            return batch

        return run


def test_workers_resolve_relative_paths_in_the_drivers_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert RayEngine(workers=1).map_batches(RelativeWriter(), [[1], [2]]) == [[1], [2]]
    assert sorted(p.name for p in tmp_path.glob("rel-*")) == ["rel-1.txt", "rel-2.txt"]
