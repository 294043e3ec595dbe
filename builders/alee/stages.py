"""alee's heavy steps, stated explicitly: plan -> stage -> merge, the same on every engine.

The pure pipeline (:mod:`builders.alee.logic.pipeline`) asks each model stage once per
step, with everything that step needs:

1. **Plan** (pure): split the English sources into sentences, once per unique sentence.
2. **Stage: AMR parse** of every unique sentence (:class:`AmrStage` ``parse``).
3. **Plan: edits** (pure): one AMR edit per sentence and perturbation.
4. **Stage: AMR-to-text generation** of every edited graph (:class:`AmrStage` ``generate``).
5. **Stage: sentence NLI**, both directions in one job (:class:`NliStage`).
6. **Plan: paragraph checks** (pure, :func:`~builders.alee.logic.pipeline.paragraph_checks`):
   for every sentence of a paragraph whose sentence check passed, the check of the
   paragraph with that sentence edited (a superset of what the merge reads: one job
   instead of one per tried sentence).
7. **Stage: paragraph NLI**, one model call per check and direction, as a local build
   always made them.
8. **Merge** (pure): paragraph iteration, Table 2 counts, the kept foils.

``--foils`` runs only the NLI stage (both directions, one job). Each stage call here
(:class:`EngineStages`) is one :meth:`~evaluators.compute.engine.Engine.map_batches` over
the call's chunks: every model call is cut into consecutive chunks (``--amr-batch-size``
sentences or graphs, ``--nli-batch-size`` pairs), one model call per chunk, since amrlib
sorts a call's inputs by length before batching, so the chunks fix the padded batches, and
with them the outputs, whichever worker runs them. The local engine runs the chunks with
the models the driver opened (once per build); Ray on an actor pool, each worker opening
the stage factory once per job, the driver loading no model.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from builders.adapters import amr, nli
from builders.alee.logic.pipeline import Stages
from evaluators.compute.engine import Engine, StageProgress

log = logging.getLogger("xlbench")


# --- stage factories ----------------------------------------------------------------


@dataclass(frozen=True)
class AmrStage:
    """Stage factory of an amrlib model: ``role`` ``parse`` (sentence-to-graph) or ``generate``.

    Each item is one chunk (sentences, or PENMAN graphs); the result is the plain tuples
    :class:`builders.alee.logic.pipeline.Stages` takes: ``(graph or None, reason)`` per
    sentence, ``(text or None, clipped, reason)`` per graph.

    Attributes:
        role: ``parse`` or ``generate``.
        path: the model folder (``None``: amrlib's default).
        batch_size: amrlib's batch size.
        device: torch device (``None``: cuda if the worker has one).
    """

    role: str
    path: str | None
    batch_size: int
    device: str | None = None

    def identity(self) -> tuple[str, str]:
        """Return ``(model id, revision)`` without loading the model (what the manifest records)."""
        return amr.model_identity(self.role, self.path)

    def open(self) -> _Loaded:
        """Load the model once (per worker); return ``chunks -> results per chunk``."""
        if self.role == "parse":
            parser = amr.AmrParser(self.path, self.batch_size, self.device)
            return _Loaded(
                lambda c: [(p.graph, p.reason) for p in parser.parse(c)],
                parser.model_id,
                parser.revision,
            )
        generator = amr.AmrGenerator(self.path, self.batch_size, self.device)
        return _Loaded(
            lambda c: [(g.text, g.clipped, g.reason) for g in generator.generate(c)],
            generator.model_id,
            generator.revision,
        )


@dataclass(frozen=True)
class NliStage:
    """Stage factory of a transformers NLI model; each item is one chunk ``(premises, hypotheses)``.

    Attributes:
        model: Hub id or local folder.
        revision: Hub revision (``None``: the default branch).
        batch_size: pairs per forward pass (a chunk is one pass).
        device: torch device (``None``: cuda if the worker has one).
    """

    model: str
    revision: str | None
    batch_size: int
    device: str | None = None

    def identity(self) -> tuple[str, str]:
        """Return ``(model id, revision)`` reading only the model's config."""
        return nli.model_identity(self.model, self.revision)

    def open(self) -> _Loaded:
        """Load the model once (per worker); return ``chunks -> probabilities per chunk``."""
        model = nli.NliModel.from_pretrained(
            self.model, self.revision, batch_size=self.batch_size, device=self.device
        )
        return _Loaded(lambda c: model.probabilities(c[0], c[1]), model.model_id, model.revision)


class _Loaded:
    """An opened alee stage: ``chunks -> [results of each chunk]``, with the model's identity."""

    def __init__(self, one: Callable[[Any], list], model_id: str, revision: str):
        self.one, self.model_id, self.revision = one, model_id, revision

    def __call__(self, chunks: list) -> list:
        return [self.one(c) for c in chunks]


@dataclass(frozen=True)
class _Opened:
    """A stage factory with the stage the driver opened (local engine): every job reuses it.

    Pickled (never on the local engine's own path), it is the bare factory again.
    """

    factory: Any
    stage: Any = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict:
        return {"factory": self.factory, "stage": None}

    def open(self) -> Any:
        """The driver's stage, or the factory's (on a worker)."""
        return self.stage if self.stage is not None else self.factory.open()


# --- plan: chunks of a model call -------------------------------------------------------


def split_call(args: tuple[list, ...], size: int) -> list[tuple[list, ...]]:
    """Cut one model call (parallel argument lists) into consecutive chunks of ``size`` items.

    >>> split_call((["a", "b", "c"], ["x", "y", "z"]), 2)
    [(['a', 'b'], ['x', 'y']), (['c'], ['z'])]
    """
    n = len(args[0])
    step = max(size, 1)
    return [tuple(list(a[i : i + step]) for a in args) for i in range(0, n, step)]


#: What each stage's items are, for its progress lines.
_UNITS = {"parse": "sentences", "generate": "graphs", "nli": "pairs"}


def _chunk_size(batch: Sequence[Any]) -> int:
    # a batch is one unit: a chunk (a list), or NLI's (premises, hypotheses)
    unit = batch[0]
    return len(unit[0]) if isinstance(unit, tuple) else len(unit)


def _unit(chunk: tuple[list, ...]) -> Any:
    # What a stage's item is: the chunk itself for one argument, the tuple for NLI's two.
    return chunk[0] if len(chunk) == 1 else chunk


def run_calls(engine: Engine, name: str, factory: Any, calls: Sequence[tuple[list, ...]],
              size: int) -> list[list]:  # fmt: skip
    """Run model calls on ``engine`` in one job, each cut into chunks of ``size``; return each call's results.

    >>> from evaluators.compute.engine import LocalEngine
    >>> class Upper:
    ...     def open(self):
    ...         return lambda chunks: [[s.upper() for s in c] for c in chunks]
    >>> run_calls(LocalEngine(), "demo", Upper(), [(["a", "b", "c"],), ([],), (["d"],)], 2)
    [['A', 'B', 'C'], [], ['D']]
    """
    plans = [split_call(tuple(list(a) for a in call), size) for call in calls]
    units = [_unit(c) for plan in plans for c in plan]
    if not units:
        return [[] for _ in calls]
    t0 = time.perf_counter()
    progress = StageProgress(name, _UNITS.get(name, "items"), _chunk_size)
    results = engine.map_batches(factory, [[u] for u in units], progress)
    log.info("%s: stage %s: %d calls, %d chunks, %.1fs", engine.describe(), name, len(calls),
             len(units), time.perf_counter() - t0)  # fmt: skip
    out, start = [], 0
    for plan in plans:
        out.append([x for r in results[start : start + len(plan)] for x in r[0]])
        start += len(plan)
    return out


# --- the model stages of a build ------------------------------------------------------------


class EngineStages:
    """A build's model stages (factories, chunk sizes), each call run on ``engine``.

    On the local engine each factory is opened here, once per build (its model's identity
    read from the loaded model); on a cluster the factories are opened on the workers and
    the driver reads identities from the model folder and config.
    """

    def __init__(self, engine: Engine, sizes: dict[str, int]) -> None:
        self.engine = engine
        self.sizes = dict(sizes)
        self.factories: dict[str, Any] = {}

    def add(self, name: str, factory: Any) -> tuple[str, str]:
        """Register stage ``name``; return its ``(model id, revision)`` for the manifest."""
        if self.engine.name != "local":
            self.factories[name] = factory
            return factory.identity()
        stage = factory.open()
        self.factories[name] = _Opened(factory, stage)
        return stage.model_id, stage.revision

    def stages(
        self, split: Callable[[str], list[str]], decide: Callable, lexicon: Any = None
    ) -> Stages:
        """The pipeline's :class:`~builders.alee.logic.pipeline.Stages` with the registered model stages."""
        if self.engine.name != "local":
            log.info("alee: model stages %s on %s", ", ".join(self.factories) or "none",
                     self.engine.describe())  # fmt: skip
        return Stages(
            split=split,
            parse=self._one("parse"),
            generate=self._one("generate"),
            nli=self._calls("nli"),
            lexicon=lexicon,
            decide=decide,
        )

    def _calls(self, name: str) -> Callable[[Sequence[tuple[list, ...]]], list[list]] | None:
        if name not in self.factories:
            return None
        factory, size = self.factories[name], self.sizes[name]
        return lambda calls: run_calls(self.engine, name, factory, calls, size)

    def _one(self, name: str) -> Callable[[list], list] | None:
        calls = self._calls(name)
        if calls is None:
            return None
        return lambda items: calls([(list(items),)])[0]
