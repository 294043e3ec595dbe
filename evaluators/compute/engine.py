"""Execution engines (where work runs): ``local`` (one process, the default) and ``ray`` (a Ray cluster).

Builders' model stages and the evaluation runner hand an engine *work*, never
live models:

- :meth:`Engine.map_batches` takes a picklable **stage factory** (a frozen spec:
  model or translator id, revision, options) whose ``open()`` returns the stage, a
  callable ``list[item] -> list[result]``, and a list of batches. The local
  engine opens the stage once and loops; the Ray engine runs the batches through
  Ray Data's ``map_batches`` on an actor pool of ``workers`` actors (each opens
  the stage once and keeps it; ``gpus_per_worker`` GPUs each). Results come back
  in input order whatever order the workers finish in, and a worker that dies is
  restarted by Ray and its batch retried.
- :meth:`Engine.run_cells` runs independent cells (an evaluation grid) grouped
  by a key (the model): on Ray every group goes to one actor, so a model is
  loaded once per worker, and a cell whose worker dies is retried by Ray; a cell
  that still fails is reported and the others are kept.

Ray is imported only when the ``ray`` engine is asked for: ``import
evaluators.compute.engine`` costs nothing on one machine. Order-independence is by
design: batches are made by the caller deterministically (from content or ids),
merges sort by input position, and :func:`item_seed` derives per-item seeds from
ids, never from worker order.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluators.core.errors import EngineUnavailableError, UsageError
from evaluators.core.optional import require
from evaluators.core.params import param
from evaluators.core.progress import Progress, scoped

log = logging.getLogger("xlbench.engine")

#: Engine names ``--engine`` accepts.
ENGINES = ("local", "ray")
#: Environment variables read when a flag is not given.
ENV_ENGINE, ENV_ADDRESS, ENV_WORKERS, ENV_GPUS = (
    "XLBENCH_ENGINE",
    "XLBENCH_RAY_ADDRESS",
    "XLBENCH_WORKERS",
    "XLBENCH_GPUS_PER_WORKER",
)


class StageFactory(Protocol):
    """A picklable description of a stage; ``open()`` builds it (once per worker)."""

    def open(self) -> Callable[[list[Any]], list[Any]]:
        """Load the model/engine and return ``batch -> results`` (one result per item, in order)."""
        ...


@dataclass(frozen=True)
class CellOutcome:
    """The outcome of one cell of :meth:`Engine.run_cells`.

    Attributes:
        index: the cell's position in the input.
        group: its group key.
        value: what ``cell_fn`` returned (``None`` when it failed).
        error: ``"<ExceptionType>: message"`` when the cell failed after its retries, else ``None``.
    """

    index: int
    group: Any
    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the cell succeeded."""
        return self.error is None


def item_seed(seed: int, item_id: str) -> int:
    """Return a 63-bit seed for one item, from the run seed and the item's id (never its position).

    >>> item_seed(13, "GEN:1:1") == item_seed(13, "GEN:1:1"), item_seed(13, "a") != item_seed(14, "a")
    (True, True)
    """
    digest = hashlib.sha256(f"{seed}\0{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def shard_of(key: str, n_shards: int) -> int:
    """Return the shard (``0..n_shards-1``) of a key, from its content (stable across runs and machines).

    >>> shard_of("eng_Latn-spa_Latn:12", 4) == shard_of("eng_Latn-spa_Latn:12", 4)
    True
    >>> sorted({shard_of(str(i), 3) for i in range(50)})
    [0, 1, 2]
    """
    if n_shards < 1:
        raise UsageError(f"n_shards must be at least 1, got {n_shards}.")
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % n_shards


def chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    """Split ``items`` into consecutive batches of ``size`` (the last may be shorter).

    >>> chunks([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    if size < 1:
        raise UsageError(f"batch size must be at least 1, got {size}.")
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


@dataclass(frozen=True)
class StageProgress:
    """How :meth:`LocalEngine.map_batches` reports a stage: its name and what its items are.

    Attributes:
        name: the step ("extract", "nli"); the line's label is it after the current
            :func:`~evaluators.core.progress.scope` ("cbd eng-deu: extract").
        unit: what is counted, plural ("pairs").
        size: items in one batch (default: 1, the batches themselves are counted).
    """

    name: str
    unit: str = "batches"
    size: Callable[[Sequence[Any]], int] | None = None

    def open(self, batches: Sequence[Sequence[Any]]) -> Progress:
        """The stage's :class:`~evaluators.core.progress.Progress` (silent if the stage is short)."""
        total = sum(self.count(b) for b in batches)
        return Progress(total, scoped(self.name), unit=self.unit, quiet_if_short=True)

    def count(self, batch: Sequence[Any]) -> int:
        """Items in ``batch``."""
        return self.size(batch) if self.size is not None else 1


def _group_order(keys: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    """Return ``group -> cell indices``, groups in first-appearance order, cells in input order."""
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return groups


def _describe(err: BaseException) -> str:
    cause = getattr(err, "cause", None)  # a RayTaskError wraps the user's exception
    if isinstance(cause, BaseException):
        err = cause
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[-1] if text else ''}".strip()


@dataclass
class LocalEngine:
    """One machine, the default: this process, or ``workers`` forked processes for :meth:`map_batches`.

    ``--workers`` is this engine's process count. Grid cells (:meth:`run_cells`) always run
    in this process (each loads a model; one at a time fits one machine's memory).
    """

    workers: int = 1
    name: str = "local"

    def map_batches(
        self,
        factory: StageFactory,
        batches: Sequence[Sequence[Any]],
        progress: StageProgress | None = None,
    ) -> list[list[Any]]:
        """Run every batch through the stage; results in input order.

        One worker: the stage is opened once in this process. ``workers`` > 1: a pool of
        forked processes, each opening the stage once from the factory it is handed at
        start (the factory is the only state a worker shares with the driver); forked from
        a clean server process when a Ray driver runs in this one (:func:`_start_method`).
        ``progress``: report the stage as its batches finish (:class:`StageProgress`).
        """
        if not batches:
            return []
        n = min(self.workers, len(batches))
        track = progress or StageProgress("")
        with progress.open(batches) if progress else _NoProgress() as bar:
            if n <= 1:
                stage = factory.open()
                out = []
                for batch in batches:
                    out.append(_checked(stage, list(batch)))
                    bar.update(track.count(batch))
                return out
            from multiprocessing import get_context

            ctx = get_context(_start_method())
            with ctx.Pool(n, initializer=_open_in_worker, initargs=(factory,)) as pool:
                out = []
                # imap keeps input order and hands each result over as it is ready
                for batch, result in zip(
                    batches, pool.imap(_run_in_worker, [list(b) for b in batches], chunksize=1)
                ):
                    out.append(result)
                    bar.update(track.count(batch))
                return out

    def run_cells(
        self,
        cell_fn: Callable[[Any], Any],
        cells: Sequence[Any],
        group_key: Callable[[Any], Hashable],
        retries: int = 0,
        on_outcome: Callable[[CellOutcome], None] | None = None,
        fail_fast: bool = False,
    ) -> list[CellOutcome]:
        """Run the cells one group after the other; a failed cell is retried ``retries`` times, then reported.

        ``on_outcome`` sees each outcome as its cell finishes. With ``fail_fast`` a cell's
        exception (after its retries) is raised as it is and no further cell runs: in this
        process there is nothing to keep going for.
        """
        keys = [group_key(c) for c in cells]
        out: dict[int, CellOutcome] = {}
        for key, indices in _group_order(keys).items():
            for i in indices:
                for attempt in range(retries + 1):
                    try:
                        out[i] = CellOutcome(i, key, cell_fn(cells[i]))
                        break
                    except Exception as err:  # noqa: BLE001 - reported per cell, the rest kept
                        if attempt == retries:
                            if fail_fast:
                                raise
                            out[i] = CellOutcome(i, key, None, _describe(err))
                if on_outcome is not None:
                    on_outcome(out[i])
        return [out[i] for i in range(len(cells))]

    def describe(self) -> str:
        """One line for logs."""
        return "local engine (this process)"


class _NoProgress:
    """What an unnamed stage reports: nothing."""

    def update(self, n: int = 1) -> None:
        del n

    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


#: The stage a forked worker of :meth:`LocalEngine.map_batches` opened (one per worker process).
_worker_stage: Callable[[list[Any]], list[Any]] | None = None


def _start_method() -> str:
    """``fork`` (the factory reaches the workers without pickling), unless a Ray driver runs here.

    A child forked from a Ray driver inherits its gRPC sockets and locks mid-use: the driver's
    next call to the cluster can then wait forever (ray-project/ray#59661; seen here as a
    ``make test`` stuck in Ray Data's first GCS write after a forked pool). ``forkserver``
    forks from a clean server process instead, at the cost of pickling the factory.
    """
    ray = sys.modules.get("ray")
    if ray is not None and getattr(ray, "is_initialized", lambda: False)():
        return "forkserver"
    return "fork"


def _open_in_worker(factory: StageFactory) -> None:
    global _worker_stage
    _worker_stage = factory.open()


def _run_in_worker(batch: list[Any]) -> list[Any]:
    if _worker_stage is None:
        raise EngineUnavailableError("A local engine worker ran a batch before opening its stage.")
    return _checked(_worker_stage, batch)


def _checked(stage: Callable[[list[Any]], list[Any]], batch: list[Any]) -> list[Any]:
    result = list(stage(batch))
    if len(result) != len(batch):
        raise EngineUnavailableError(
            f"A stage returned {len(result)} results for a batch of {len(batch)} items; a stage must return one per item."
        )
    return result


# ------------------------------------------------------------------------------- Ray


def _enter(cwd: str) -> None:
    """Work in the driver's folder (shared storage on a cluster), so relative paths mean the same."""
    if os.path.isdir(cwd):
        os.chdir(cwd)


class _BatchActor:
    """The Ray Data actor of :meth:`RayEngine.map_batches`: opens the stage once, runs many batches."""

    def __init__(self, factory_bytes: bytes, cwd: str):
        from ray import cloudpickle

        _enter(cwd)
        self.stage = cloudpickle.loads(factory_bytes).open()

    def __call__(self, batch: dict) -> dict:
        import numpy as np
        from ray import cloudpickle

        results = [
            cloudpickle.dumps(_checked(self.stage, cloudpickle.loads(p))) for p in batch["payload"]
        ]
        return {"index": np.asarray(batch["index"]), "result": np.array(results, dtype=object)}


class _CellActor:
    """One worker of :meth:`RayEngine.run_cells`: runs the cells of the groups it is given, in order."""

    def __init__(self, fn_bytes: bytes, cwd: str):
        from ray import cloudpickle

        _enter(cwd)
        self.fn = cloudpickle.loads(fn_bytes)

    def run(self, cell_bytes: bytes) -> Any:
        from ray import cloudpickle

        return self.fn(cloudpickle.loads(cell_bytes))

    def pid(self) -> int:
        return os.getpid()


@dataclass
class RayEngine:
    """A Ray cluster: Ray Data actor pools for batches, Ray actors for grid cells.

    Attributes:
        address: ``None`` (start a Ray instance on this machine, or use the one this process
            already joined), ``auto`` (the cluster ``ray start`` made here) or ``HOST:PORT``.
        workers: actors per stage (each keeps its model loaded).
        gpus_per_worker: GPUs each actor requests (fractions allowed).
        cpus_per_worker: CPUs each actor requests.
        max_retries: retries of a cell whose worker died or that raised.
    """

    address: str | None = None
    workers: int = 2
    gpus_per_worker: float = 0.0
    cpus_per_worker: float = 1.0
    max_retries: int = 2
    name: str = "ray"
    _ray: Any = field(default=None, repr=False)

    def connect(self):
        """Import Ray and join (or start) the cluster; return the ``ray`` module.

        Raises:
            EngineUnavailableError: Ray is not installed or the cluster cannot be reached.
        """
        if self._ray is not None:
            return self._ray
        ray = require("ray", feature="--engine ray")
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": log.isEnabledFor(logging.DEBUG),
            }
            if self.address:
                kwargs["address"] = self.address
            try:
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as err:
                raise EngineUnavailableError(
                    f"Cannot join the Ray cluster at {self.address or 'this machine'} ({str(err).splitlines()[0][:160]}); "
                    f"start one with 'ray start --head' or pass --ray-address HOST:PORT."
                ) from err
        from ray.data import DataContext

        if not log.isEnabledFor(logging.DEBUG):  # Ray Data's per-dataset INFO lines, unless -v
            logging.getLogger("ray.data").setLevel(logging.WARNING)
        ctx = DataContext.get_current()
        ctx.enable_progress_bars = os.environ.get("XLBENCH_PROGRESS") == "1"
        self._ray = ray
        return ray

    def describe(self) -> str:
        """One line for logs."""
        return f"ray engine ({self.address or 'local cluster'}, {self.workers} workers, {self.gpus_per_worker} GPU each)"

    def map_batches(
        self,
        factory: StageFactory,
        batches: Sequence[Sequence[Any]],
        progress: StageProgress | None = None,
    ) -> list[list[Any]]:
        """Run every batch through the stage on a Ray Data actor pool; results in input order.

        ``progress``: report the stage on the driver as results arrive (:class:`StageProgress`).
        """
        if not batches:
            return []
        ray = self.connect()
        from ray import cloudpickle

        rows = [{"index": i, "payload": cloudpickle.dumps(list(b))} for i, b in enumerate(batches)]
        ds = ray.data.from_items(rows, override_num_blocks=len(rows))
        size = max(1, min(self.workers, len(rows)))
        ds = ds.map_batches(
            _BatchActor,
            fn_constructor_args=(cloudpickle.dumps(factory), os.getcwd()),
            batch_size=1,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=size),
            num_cpus=self.cpus_per_worker,
            num_gpus=self.gpus_per_worker or None,
            zero_copy_batch=False,
        )
        out: list[list[Any] | None] = [None] * len(rows)
        track = progress or StageProgress("")
        with progress.open(batches) if progress else _NoProgress() as bar:
            for row in ds.iter_rows():
                i = int(row["index"])
                out[i] = cloudpickle.loads(row["result"])
                bar.update(track.count(batches[i]))
        missing = [i for i, r in enumerate(out) if r is None]
        if missing:
            raise EngineUnavailableError(
                f"Ray returned no result for {len(missing)} of {len(rows)} batches; rerun to resume."
            )
        return out  # type: ignore[return-value]

    def run_cells(
        self,
        cell_fn: Callable[[Any], Any],
        cells: Sequence[Any],
        group_key: Callable[[Any], Hashable],
        retries: int | None = None,
        on_outcome: Callable[[CellOutcome], None] | None = None,
        fail_fast: bool = False,
    ) -> list[CellOutcome]:
        """Run cells on ``workers`` Ray actors, each group (model) on one actor, in input order within it.

        Groups are assigned to the least-loaded actor in first-appearance order (a
        deterministic plan). Ray restarts an actor that dies and retries its
        cells (``max_retries``); exceptions are retried too, then reported.
        ``on_outcome`` sees each outcome on the driver, in input order. ``fail_fast`` is
        ignored: the other cells are already running on the cluster, so every failure is
        reported and the finished cells kept.
        """
        del fail_fast
        if not cells:
            return []
        ray = self.connect()
        from ray import cloudpickle

        retries = self.max_retries if retries is None else retries
        keys = [group_key(c) for c in cells]
        groups = _group_order(keys)
        n = max(1, min(self.workers, len(groups)))
        actor_cls = ray.remote(_CellActor).options(
            num_cpus=self.cpus_per_worker,
            num_gpus=self.gpus_per_worker,
            max_restarts=retries,
            max_task_retries=retries,
        )
        fn_bytes = cloudpickle.dumps(cell_fn)
        actors = [actor_cls.remote(fn_bytes, os.getcwd()) for _ in range(n)]
        load = [0] * n
        refs: dict[int, Any] = {}
        for indices in groups.values():
            a = min(range(n), key=lambda j: (load[j], j))
            load[a] += len(indices)
            for i in indices:
                refs[i] = (
                    actors[a]
                    .run.options(retry_exceptions=retries > 0)
                    .remote(cloudpickle.dumps(cells[i]))
                )
        self._actors = actors  # for tests that kill a worker mid-run
        out = []
        for i in range(len(cells)):
            try:
                out.append(CellOutcome(i, keys[i], ray.get(refs[i])))
            except Exception as err:  # noqa: BLE001 - a failed cell is reported, the rest kept
                log.warning(
                    "cell %d (%s) failed after %d retries: %s", i, keys[i], retries, _describe(err)
                )
                out.append(CellOutcome(i, keys[i], None, _describe(err)))
            if on_outcome is not None:
                on_outcome(out[-1])
        for actor in actors:
            ray.kill(actor)
        self._actors = []
        return out


Engine = LocalEngine | RayEngine


def get_engine(
    name: str | None = None,
    address: str | None = None,
    workers: int | None = None,
    gpus_per_worker: float | None = None,
) -> Engine:
    """Return the engine named by the flags, else by ``XLBENCH_ENGINE`` (default ``local``).

    ``address``, ``workers`` and ``gpus_per_worker`` fall back to
    ``XLBENCH_RAY_ADDRESS``, ``XLBENCH_WORKERS`` and ``XLBENCH_GPUS_PER_WORKER``.
    Ray is not imported here: the Ray engine joins its cluster on first use.

    >>> get_engine("local").name, get_engine(None, workers=1).workers
    ('local', 1)

    Raises:
        UsageError: an unknown engine, fewer than 1 worker, negative GPUs, or a Ray
            option given to the local engine.
    """
    name = (name or os.environ.get(ENV_ENGINE) or "local").strip().lower()
    if name not in ENGINES:
        raise UsageError(f"--engine {name!r} is not an engine; choose one of {', '.join(ENGINES)}.")
    flag_address = address
    address = address or os.environ.get(ENV_ADDRESS) or None
    if workers is None and os.environ.get(ENV_WORKERS):
        workers = _int_env(ENV_WORKERS)
    if gpus_per_worker is None and os.environ.get(ENV_GPUS):
        gpus_per_worker = _float_env(ENV_GPUS)
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}.")
    if gpus_per_worker is not None and gpus_per_worker < 0:
        raise UsageError(f"--gpus-per-worker must be 0 or more, got {gpus_per_worker}.")
    if name == "local":
        if flag_address:
            raise UsageError("--ray-address applies to --engine ray; add --engine ray or drop it.")
        return LocalEngine(workers=workers or 1)
    return RayEngine(address=address, workers=workers or 2, gpus_per_worker=gpus_per_worker or 0.0)


def _int_env(var: str) -> int:
    try:
        return int(os.environ[var])
    except ValueError as err:
        raise UsageError(f"{var} must be a whole number, got {os.environ[var]!r}.") from err


def _float_env(var: str) -> float:
    try:
        return float(os.environ[var])
    except ValueError as err:
        raise UsageError(f"{var} must be a number, got {os.environ[var]!r}.") from err


#: ``--help`` section of the execution options.
EXECUTION = "execution (one machine by default; see docs/cluster.md)"


@dataclass(frozen=True)
class EngineOptions:
    """Where the heavy work runs (``--engine``): a build's stages or an evaluation grid; never what is computed."""

    engine: str | None = param(
        None,
        f"local (this process, default) or ray (a Ray cluster); default ${ENV_ENGINE} or local",
        choices=ENGINES,
        section=EXECUTION,
        sig=False,
    )
    ray_address: str | None = param(
        None,
        f"with --engine ray: auto (the cluster 'ray start' made here) or HOST:PORT; default ${ENV_ADDRESS}, "
        "else a Ray instance started on this machine",
        section=EXECUTION,
        sig=False,
    )
    workers: int | None = param(
        None,
        "processes of the local engine for a build's stages (default 1); with --engine ray: actors per model "
        "stage, or grid workers that each keep one model loaded (default 2)",
        type=int,
        section=EXECUTION,
        sig=False,
        min=1,
    )
    gpus_per_worker: float | None = param(
        None,
        "with --engine ray: GPUs each worker requests (default 0)",
        type=float,
        section=EXECUTION,
        sig=False,
        min=0,
    )

    def open(self) -> Engine:
        """Return the engine these options (or the environment) name."""
        return get_engine(self.engine, self.ray_address, self.workers, self.gpus_per_worker)
