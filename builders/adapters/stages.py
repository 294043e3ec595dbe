"""Builders' model stages as picklable stage factories, for :mod:`evaluators.engine` backends.

A stage factory is a frozen spec (model or engine id, revision, options) whose
``open()`` builds the stage on a worker, once. Nothing here changes what a
stage computes: each unit of work is exactly what a local build computes in one
call (a 64-sentence substitute chunk, one MT request, a 2000-pair extraction
chunk), so the rows are the same bytes whichever worker ran them and in which
order. Only non-local engines use this module; a local build runs the builders'
own loops, unchanged.
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

    t0 = time.perf_counter()
    requests: list[list[str]] = []

    def record(texts: list[str]) -> list[str]:
        requests.append(list(texts))
        return [""] * len(texts)

    build_silver(items, tokenizer, pre, record, **build_kwargs)
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
    # Several batches per worker keep the pool busy; a batch's split never changes a translation.
    batch_texts = max(
        1,
        min(
            params.mt_batch_size,
            math.ceil(n_texts / (4 * max(engine.workers, 1))) if n_texts else 1,
        ),
    )
    log.info("%s: %d MT units (%d texts, %d cached) in batches of ~%d texts", engine.describe(), len(units), n_texts,
             len(cached), batch_texts)  # fmt: skip
    t0 = time.perf_counter()
    found = shardstore.translate_units(engine, stage, units, store, batch_texts, mt_engine)
    log.info(
        "stage mt: %.1fs for %d units (%d texts)", time.perf_counter() - t0, len(units), n_texts
    )
    translator = CachedTranslator(
        shardstore.StoreEngine(mt_engine, found), cache, batch_size=params.mt_batch_size
    )
    return pre, translator


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
