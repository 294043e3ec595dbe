"""Builders' model stages as picklable stage factories, for :mod:`evaluators.compute.engine` backends.

A stage factory is a frozen spec (model or engine id, revision, options) whose
``open()`` builds the stage on a worker, once. Nothing here changes what a
stage computes: each unit of work is exactly what a local build computes in one
call (a 64-sentence substitute chunk, one MT request, a 2000-pair extraction
chunk, one chunk of an alee model stage), so the rows are the same bytes
whichever worker ran them and in which order. Silver and cbd use this module
only on non-local engines (a local build runs their own loops, unchanged); alee
opens the same stage factories in-process on one machine, so that its model
calls are cut into the same chunks everywhere.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("xlbench")


# --- SilverAlign: substitutes --------------------------------------------------------


@dataclass(frozen=True)
class SubstitutesStage:
    """Stage factory of SilverAlign's substitute generator (WordNet or a masked LM).

    Carries the build's frozen parameters (:class:`builders.silver.spec.Params`), so a
    worker builds exactly the driver's generator. Each item is one chunk
    ``(texts, spans, positions, k)``; the result is the generator's ``batch`` output
    for it and the forward passes it took.
    """

    params: Any
    src_lang: str

    def open(self):
        """Build the generator (loads the MLM once per worker)."""
        from builders.silver import build

        generator = build._generator(self.params, self.src_lang)

        def run(chunks: list[tuple]) -> list[tuple[list, int]]:
            out = []
            for texts, spans, positions, k in chunks:
                before = getattr(generator, "forward_passes", 0)
                subs = generator.batch(texts, spans, positions, k)
                out.append((subs, getattr(generator, "forward_passes", 0) - before))
            return out

        return run


class _ChunkRecorder:
    """A generator that records the chunks ``build_silver`` asks for and proposes nothing."""

    name = "recorder"
    model_id = "recorder"
    revision = ""

    def __init__(self) -> None:
        self.chunks: list[tuple] = []

    def batch(self, texts, spans, positions, k):
        self.chunks.append(
            (list(texts), [list(sp) for sp in spans], [list(p) for p in positions], k)
        )
        return [[[] for _ in pos] for pos in positions]


class PrecomputedSubstitutes:
    """A substitute generator answering from chunks computed on workers (same name, model id, revision)."""

    def __init__(self, generator, results: dict[tuple, list]):
        self._generator = generator
        self._results = results
        self.name = generator.name

    @property
    def model_id(self) -> str:
        """The real generator's model id."""
        return self._generator.model_id

    @property
    def revision(self) -> str:
        """The real generator's revision."""
        return self._generator.revision

    def batch(self, texts, spans, positions, k):
        """Return the precomputed alternatives of this chunk (computed on the driver if it was not planned)."""
        key = _chunk_key(texts, positions, k)
        if key not in self._results:
            log.warning("computing an unplanned substitute chunk on the driver")
            self._results[key] = self._generator.batch(texts, spans, positions, k)
        return self._results[key]


def _chunk_key(texts, positions, k) -> tuple:
    return tuple(texts), tuple(tuple(p) for p in positions), k


# --- SilverAlign: the whole distributed plan ------------------------------------------


def silver_on_engine(
    engine,
    params,
    src_lang,
    items,
    tokenizer,
    generator,
    mt_engine,
    cache,
    store_root,
    build_kwargs: dict[str, Any],
):
    """Run SilverAlign's substitution and MT stages on ``engine``; return ``(generator, translator)`` for ``build_silver``.

    ``build_silver`` itself says what to compute, so nothing here repeats its logic:

    1. Chunks: ``build_silver(**build_kwargs)`` with a recorder for a generator and no
       MT yields the substitute chunks (texts, spans, positions) a local build asks for.
    2. Substitutes: every chunk on the worker pool.
    3. Requests: ``build_silver`` with those substitutes and a recorder for MT yields
       exactly the requests a local build sends.
    4. MT: the distinct units the local translator would send its engine
       (:func:`~builders.adapters.shardstore.plan_units`; cached ones left out) on the
       worker pool, each finished batch written to the shard store.

    The returned translator is the ordinary :class:`~builders.adapters.mt.CachedTranslator`
    over the local cache with an engine answering from step 4, so the decision pass,
    the SQLite writes and the counts are those of a local build.
    """
    from builders.adapters import shardstore
    from builders.adapters.mt import CachedTranslator

    pre = _substitutes_on_engine(
        engine, params, src_lang, items, tokenizer, generator, build_kwargs
    )
    t0 = time.perf_counter()
    requests = _mt_requests(items, tokenizer, pre, build_kwargs)
    pair = "-".join(mt_engine.pair)
    distinct = list(dict.fromkeys(t for r in requests for t in r))
    cached = (
        set(cache.get_many(mt_engine.name, mt_engine.version, pair, distinct))
        if cache is not None
        else set()
    )
    stateful = getattr(mt_engine, "stateful", False)
    units = shardstore.plan_units(requests, cached, stateful, params.mt_batch_size)
    log.info("stage requests: %.1fs on the driver", time.perf_counter() - t0)
    found = _mt_on_engine(engine, params, mt_engine, store_root, units, len(cached))
    translator = CachedTranslator(
        shardstore.StoreEngine(mt_engine, found), cache, batch_size=params.mt_batch_size
    )
    return pre, translator


def _substitutes_on_engine(
    engine, params, src_lang, items, tokenizer, generator, build_kwargs: dict[str, Any]
) -> PrecomputedSubstitutes:
    """Steps 1 and 2 of :func:`silver_on_engine`: the substitute chunks, computed on ``engine``."""
    from builders.silver.build import build_silver

    def no_mt(texts: list[str]) -> list[str]:
        return [""] * len(texts)

    t0 = time.perf_counter()
    recorder = _ChunkRecorder()
    build_silver(items, tokenizer, recorder, no_mt, **build_kwargs)
    chunks = recorder.chunks
    log.info("%s: substitutes for %d chunks", engine.describe(), len(chunks))
    results = engine.map_batches(SubstitutesStage(params, src_lang), [[c] for c in chunks])
    subs = {_chunk_key(c[0], c[2], c[3]): r[0][0] for c, r in zip(chunks, results)}
    if hasattr(generator, "forward_passes"):  # the driver's generator reports the workers' passes
        generator.forward_passes = sum(r[0][1] for r in results)
    pre = PrecomputedSubstitutes(generator, subs)
    log.info("stage substitutes: %.1fs for %d sentences", time.perf_counter() - t0, len(items))
    return pre


def _mt_requests(items, tokenizer, substitutes, build_kwargs: dict[str, Any]) -> list[list[str]]:
    """Step 3 of :func:`silver_on_engine`: every MT request ``build_silver`` sends, in order."""
    from builders.silver.build import build_silver

    requests: list[list[str]] = []

    def record(texts: list[str]) -> list[str]:
        requests.append(list(texts))
        return [""] * len(texts)

    build_silver(items, tokenizer, substitutes, record, **build_kwargs)
    return requests


def _mt_on_engine(engine, params, mt_engine, store_root, units: list, n_cached: int) -> dict:
    """Step 4 of :func:`silver_on_engine`: translate ``units`` on ``engine``; return what the store found."""
    from builders.adapters import shardstore

    pair = "-".join(mt_engine.pair)
    store = (
        shardstore.ShardStore(store_root, mt_engine.name, mt_engine.version, pair)
        if store_root
        else None
    )
    stage = shardstore.MTStage(
        mt_engine.name, mt_engine.pair[0], mt_engine.pair[1], mt_engine.version, str(store_root) if store_root else None,
        (("rate", params.mt_rate), ("retries", params.mt_retries), ("batch_size", min(params.mt_batch_size, 64)),
         ("num_beams", params.mt_beams), ("revision", params.mt_revision)),
    )  # fmt: skip
    n_texts = sum(len(u) for u in units)
    batch_texts = _mt_batch_texts(n_texts, params.mt_batch_size, engine.workers)
    log.info("%s: %d MT units (%d texts, %d cached) in batches of ~%d texts", engine.describe(), len(units), n_texts,
             n_cached, batch_texts)  # fmt: skip
    t0 = time.perf_counter()
    found = shardstore.translate_units(engine, stage, units, store, batch_texts, mt_engine)
    log.info(
        "stage mt: %.1fs for %d units (%d texts)", time.perf_counter() - t0, len(units), n_texts
    )
    return found


def _mt_batch_texts(n_texts: int, batch_size: int, workers: int) -> int:
    """Texts per MT batch sent to the pool: ``batch_size`` at most, at least four batches a worker.

    Several batches per worker keep the pool busy; a batch's split never changes a translation.

    >>> _mt_batch_texts(1000, 16, 2), _mt_batch_texts(20, 16, 2), _mt_batch_texts(0, 16, 2)
    (16, 3, 1)
    """
    if not n_texts:
        return 1
    return max(1, min(batch_size, math.ceil(n_texts / (4 * max(workers, 1)))))


# --- cbd: extraction ----------------------------------------------------------------


@dataclass(frozen=True)
class ExtractStage:
    """Stage factory of cbd's extraction: each item is one chunk of numbered sentence pairs.

    The lexicon travels with the factory (pickled once per worker, like the forked
    workers' inherited copy in a local ``--workers`` build).
    """

    lex: Any

    def open(self):
        """Return ``chunks -> [(records, counts)]``."""
        from builders.cbd import logic

        return lambda chunks: [logic.extract(c, self.lex) for c in chunks]


def extract_on_engine(engine, chunks: list, lex) -> list:
    """Return ``logic.extract`` of every chunk, computed on ``engine``, in chunk order."""
    results = engine.map_batches(ExtractStage(lex), [[c] for c in chunks])
    return [r[0] for r in results]


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
