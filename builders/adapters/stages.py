"""alee's model stages as picklable stage factories, for :mod:`evaluators.compute.engine` backends.

A stage factory is a frozen spec (model id, revision, options) whose ``open()``
builds the stage on a worker, once. Nothing here changes what a stage computes:
each unit of work is exactly what a local build computes in one call (one chunk
of an alee model stage), so the rows are the same bytes whichever worker ran
them and in which order. alee opens the same stage factories in-process on one
machine, so that its model calls are cut into the same chunks everywhere.
(SilverAlign's and cbd's stages live in their families: ``builders/silver/stages.py``,
``builders/cbd/stages.py``.)
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("xlbench")


# --- alee: AMR parse, AMR-to-text generation, NLI ---------------------------------
#
# Every model call of alee's pipeline is cut into consecutive chunks (``--amr-batch-size``
# sentences or graphs, ``--nli-batch-size`` pairs), one model call per chunk, on one machine
# as on a cluster: amrlib sorts a call's inputs by length before batching, so the chunks fix
# the padded batches, and with them the generations, wherever they run.


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
        from builders.adapters import amr

        return amr.model_identity(self.role, self.path)

    def open(self):
        """Load the model once (per worker); return ``chunks -> results per chunk``."""
        from builders.adapters import amr

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
        from builders.adapters import nli

        return nli.model_identity(self.model, self.revision)

    def open(self):
        """Load the model once (per worker); return ``chunks -> probabilities per chunk``."""
        from builders.adapters.nli import NliModel

        model = NliModel.from_pretrained(
            self.model, self.revision, batch_size=self.batch_size, device=self.device
        )
        return _Loaded(lambda c: model.probabilities(c[0], c[1]), model.model_id, model.revision)


class _Loaded:
    """An opened alee stage: ``chunks -> [results of each chunk]``, with the model's identity."""

    def __init__(self, one, model_id: str, revision: str):
        self.one, self.model_id, self.revision = one, model_id, revision

    def __call__(self, chunks: list) -> list:
        return [self.one(c) for c in chunks]


def split_call(args: tuple[list, ...], size: int) -> list[tuple[list, ...]]:
    """Cut one stage call (parallel argument lists) into consecutive chunks of ``size`` items.

    >>> split_call((["a", "b", "c"], ["x", "y", "z"]), 2)
    [(['a', 'b'], ['x', 'y']), (['c'], ['z'])]
    """
    n = len(args[0])
    step = max(size, 1)
    return [tuple(list(a[i : i + step]) for a in args) for i in range(0, n, step)]


def _unit(chunk: tuple[list, ...]) -> Any:
    # What a stage's item is: the chunk itself for one argument, the tuple for NLI's two.
    return chunk[0] if len(chunk) == 1 else chunk


def chunked(run_chunks, size: int):
    """Return a pipeline stage callable (``*lists -> results``) running ``run_chunks`` chunk by chunk."""

    def call(*args: list) -> list:
        if not args[0]:
            return []
        units = [_unit(c) for c in split_call(tuple(list(a) for a in args), size)]
        return [r for res in run_chunks(units) for r in res]

    return call


#: What a call not computed yet is answered with while planning. Parse and generation
#: fail (so nothing downstream is asked for yet); NLI says "entailment" both ways, which the
#: alee rule rejects, so a paragraph's planning pass asks for every sentence's paragraph check
#: at once (a superset of what the final pass reads, one round instead of one per sentence).
_PLACEHOLDER = {
    "parse": lambda n: [(None, "pending")] * n,
    "generate": lambda n: [(None, False, "pending")] * n,
    "nli": lambda n: [{"entailment": 1.0, "neutral": 0.0, "contradiction": 0.0} for _ in range(n)],
}


class _Planned:
    """A stage answering from calls computed on the cluster; a new call is recorded and gets a placeholder."""

    def __init__(self, name: str):
        self.name = name
        self.answers: dict[tuple, list] = {}
        self.pending: dict[tuple, tuple[list, ...]] = {}

    def __call__(self, *args):
        key = tuple(tuple(a) for a in args)
        if key in self.answers:
            return list(self.answers[key])
        self.pending.setdefault(key, tuple(list(a) for a in args))
        return _PLACEHOLDER[self.name](len(args[0]))


def alee_on_engine(engine, run, stages, factories: dict[str, Any], sizes: dict[str, int]):
    """Run alee's pipeline with its model stages on ``engine``; return what ``run(stages)`` returns.

    ``run`` is the pure pipeline (``generate_candidates`` or ``filter_given_foils``), and
    says itself what it needs, so nothing here repeats its logic: each pass runs it with
    every model stage answering from the calls computed so far; the calls it made that are
    not computed yet (first the parse, then the generation, the sentence NLI both ways,
    the paragraph NLI) are cut into chunks exactly as a local build cuts them
    (:func:`chunked`), run on the engine's actor pool (one ``map_batches`` per stage and
    pass, each worker loading its model once), and the pass is repeated. The last pass
    makes no new call: it is a local build's pipeline over a local build's answers.

    Args:
        engine: an :mod:`evaluators.compute.engine` backend.
        run: ``stages -> result``, the pure pipeline.
        stages: the :class:`~builders.alee.logic.pipeline.Stages` (split, decide, lexicon kept).
        factories: ``"parse"``/``"generate"``/``"nli"`` -> stage factory, for the stages to run.
        sizes: the chunk size of each.
    """
    planned = {name: _Planned(name) for name in factories}
    for name, stage in planned.items():
        setattr(stages, name, stage)
    split = stages.split
    splits: dict[str, list[str]] = {}

    def split_once(text: str) -> list[str]:  # the splitter is pure: once per text, not per pass
        if text not in splits:
            splits[text] = list(split(text))
        return list(splits[text])

    stages.split = split_once
    passes = 0
    while True:
        passes += 1
        t0 = time.perf_counter()
        result = run(stages)
        todo = {n: p for n, p in planned.items() if p.pending}
        log.info("alee pass %d: %.1fs on the driver", passes, time.perf_counter() - t0)
        if not todo:
            return result
        for name, stage in todo.items():
            calls = list(stage.pending.items())
            stage.pending.clear()
            units: dict[tuple, Any] = {}  # distinct chunks, in first-need order
            plans = []
            for key, args in calls:
                parts = split_call(args, sizes[name])
                keys = [tuple(tuple(a) for a in c) for c in parts]
                for k, c in zip(keys, parts):
                    units.setdefault(k, _unit(c))
                plans.append((key, keys))
            t0 = time.perf_counter()
            results = engine.map_batches(factories[name], [[u] for u in units.values()])
            done = {k: r[0] for k, r in zip(units, results)}
            for key, keys in plans:
                stage.answers[key] = [x for k in keys for x in done[k]]
            n_items = sum(len(a[0]) for _, a in calls)
            log.info("%s: stage %s: %d calls, %d items in %d chunks, %.1fs", engine.describe(), name,
                     len(calls), n_items, len(units), time.perf_counter() - t0)  # fmt: skip
