"""Evaluation grids on a non-local :mod:`evaluators.compute.engine` backend (``xlbench eval ... --engine ray``).

Each (model, dataset) cell runs :func:`evaluators.run.runner.run_cell` on a worker,
exactly as locally: same parameters, same seed, same signature, the result JSON
and plots written to ``--out`` (which must be storage every node sees). Cells are
grouped by model, so a worker loads each model (and its embedding cache) once.
A cell whose worker dies is retried by Ray; a cell that still fails is reported,
every other result is kept and written, and a rerun of the same command
computes only the missing cells (the runner's resume).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.errors import RemoteError

log = logging.getLogger("xlbench")


@dataclass
class GridCellFn:
    """Scores one ``(model spec, dataset)`` cell; keeps opened models and datasets for the worker's next cells."""

    task: str
    params: Any
    options: Any
    revision: str | None = None
    model_revision: str | None = None
    done: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._models: dict = {}
        self._sources: dict = {}

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_models"], state["_sources"] = {}, {}  # a worker opens its own
        return state

    def __call__(self, cell: tuple[Any, str | None]) -> tuple[str, Any]:
        """Return ``("computed", EvalResult)`` or ``("skipped", path)`` for a cell already in ``out``."""
        from evaluators.run import runner

        spec, dataset = cell
        module = runner.get_task(self.task)
        if spec is not None and spec not in self._models:
            self._models = {
                spec: runner.open_model(spec, self.options, self.model_revision)
            }  # one model per worker at a time
        opened = self._models.get(spec) if spec is not None else None
        if dataset not in self._sources:
            self._sources[dataset] = runner._open_source(module, dataset, self.revision)
        source = self._sources[dataset]
        if self.done and opened is not None and source is not None:
            requested = {
                k: runner._jsonable(v)
                for k, v in {**runner._params_dict(self.params), "seed": self.options.seed}.items()
            }
            key = runner.request_key(
                module.name, source.ref.to_dict(), opened.identity.to_dict(), requested
            )
            if key in self.done:
                return "skipped", self.done[key]
        return "computed", runner.run_cell(module, self.params, source, opened, self.options)


def run_grid_on_engine(engine, task: str, params: Any, models: Sequence[Any], datasets: Sequence[str | None],
                       options: Any, revision: str | None, model_revision: str | None,
                       done: Mapping[str, Any]) -> tuple[list, list, list]:  # fmt: skip
    """Run every (model, dataset) cell on ``engine``, model by model; return ``(results, computed, skipped)``.

    Results come in the local order (models, then datasets).

    Raises:
        RemoteError: some cells failed after their retries (the others are written); names them.
    """
    from evaluators.run import runner

    if any(not isinstance(m, str) and m is not None for m in models):
        raise RemoteError(
            "--engine ray scores models given by spec strings only (an in-memory object cannot travel)."
        )
    cells = [(m, d) for m in models for d in dict.fromkeys(datasets)]
    fn = GridCellFn(
        task, params, options, revision, model_revision, {k: str(v) for k, v in done.items()}
    )
    log.info("%s: %d cells, %d models", engine.describe(), len(cells), len(dict.fromkeys(models)))
    outcomes = engine.run_cells(fn, cells, group_key=lambda c: str(c[0]))
    results, computed, skipped, failed = [], [], [], []
    for cell, outcome in zip(cells, outcomes):
        if not outcome.ok:
            failed.append(f"{cell[0]} on {cell[1]} ({outcome.error})")
            continue
        kind, value = outcome.value
        if kind == "skipped":
            skipped.append(value)
            value = runner.load_result(value)
        else:
            computed.append(value)
        results.append(value)
    if failed:
        raise RemoteError(
            f"{len(failed)} of {len(cells)} grid cells failed after their retries: {'; '.join(failed)}. "
            f"The other {len(results)} results are written; rerun the same command to retry only the failed cells."
        )
    return results, computed, skipped
