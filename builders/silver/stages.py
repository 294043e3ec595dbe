"""SilverAlign's heavy steps, stated explicitly: plan -> stage -> merge.

1. **Plan** (pure, on the driver): :func:`plan_chunks` cuts the sentences into chunks of
   ``chunk`` sentences (one substitute-generator call each) with their token spans and the
   positions to substitute.
2. **Stage: substitutes.** :func:`run_substitutes` runs every chunk through
   :class:`SubstitutesStage` on an :mod:`evaluators.compute.engine` backend: the local
   engine runs them in this process with the driver's generator, Ray on an actor pool
   (each worker builds the generator once from the build's parameters).
3. **Plan: MT requests** (pure): :func:`requests_of` gives the one request per sentence
   (the sentence, then its alternatives) that the merge sends.
4. **Stage: MT.** On the local engine the merge's translator calls the MT engine itself,
   through the SQLite cache, committing each batch (resume loses one batch at most). On
   a cluster, whose workers cannot share SQLite, :func:`translate_on_engine` first
   translates the distinct units the merge will ask for on the actor pool (each finished
   batch written to the shard store) and the merge's translator answers from them.
5. **Merge:** :func:`builders.silver.build.decide_all` translates each sentence's request
   through the ordinary :class:`~builders.adapters.mt.CachedTranslator` and decides every
   word, in input order.

Each unit of work is what a local build computes in one call (a chunk of sentences, one
MT request), so the rows are the same bytes whichever worker ran them.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from builders.adapters import mlm, shardstore
from builders.silver import logic, spec, substitutes
from builders.silver.tokenize import Tokenizer, substitute
from evaluators.compute.engine import StageProgress
from evaluators.core.errors import UsageError

log = logging.getLogger("xlbench.silver")


# --- plan ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """One substitute-generator call: up to ``chunk`` sentences, their spans and substitution positions.

    Attributes:
        items: the ``(id, sentence)`` items.
        spans: per sentence, the ``(start, end)`` character span of each source token.
        positions: per sentence, the token positions to substitute.
    """

    items: tuple[tuple[str, str], ...]
    spans: tuple[tuple[tuple[int, int], ...], ...]
    positions: tuple[tuple[int, ...], ...]

    @property
    def texts(self) -> list[str]:
        """The sentences."""
        return [t for _, t in self.items]


def plan_chunks(
    items: Sequence[tuple[str, str]],
    src_tokenizer: Tokenizer,
    chunk: int = 64,
    punctuation: bool = logic.SUBSTITUTE_PUNCTUATION,
) -> list[Chunk]:
    """Cut ``(id, sentence)`` items into the chunks the substitute generator is called on.

    >>> from builders.silver.tokenize import Tokenizer
    >>> [c.positions for c in plan_chunks([("0", "a dog ."), ("1", "cats")], Tokenizer(), chunk=1)]
    [((0, 1, 2),), ((0,),)]
    """
    if chunk < 1:
        raise UsageError(f"chunk must be at least 1 sentence, got {chunk}.")
    out = []
    for start in range(0, len(items), chunk):
        part = tuple((str(i), str(t)) for i, t in items[start : start + chunk])
        spans = tuple(tuple(tuple(s) for s in src_tokenizer.spans(t)) for _, t in part)
        positions = tuple(
            tuple(logic.substitution_positions([t[s:e] for s, e in sp], punctuation))
            for (_, t), sp in zip(part, spans)
        )
        out.append(Chunk(part, spans, positions))  # type: ignore[arg-type]
    return out


def request_of(text: str, spans: Sequence[tuple[int, int]], positions: Sequence[int],
               alternatives: Sequence[Sequence[str]], k: int) -> list[str]:  # fmt: skip
    """The one MT request of a sentence: the sentence, then each position's first ``k`` alternatives.

    >>> request_of("a dog", [(0, 1), (2, 5)], [1], [["cat", "cow"]], 1)
    ['a dog', 'a cat']
    """
    request = [text]
    for j, words in zip(positions, alternatives):
        request += [substitute(text, spans[j], w) for w in words[:k]]
    return request


def requests_of(chunks: Sequence[Chunk], alternatives: Sequence[list], k: int) -> list[list[str]]:
    """Every MT request the merge sends, in order (one per sentence)."""
    return [
        request_of(text, sp, pos, alts, k)
        for c, subs in zip(chunks, alternatives)
        for text, sp, pos, alts in zip(c.texts, c.spans, c.positions, subs)
    ]


# --- stage: substitutes ------------------------------------------------------------------


def open_generator(params: spec.Params, src_lang: str) -> spec.SubstituteGenerator:
    """Build the substitute generator the parameters name (loads the MLM).

    Raises:
        UsageError: WordNet substitutes for a non-English source.
    """
    if params.substitutes == "wordnet":
        if src_lang != "eng_Latn":
            raise UsageError(
                f"--substitutes wordnet works for English sources only, got {src_lang}; "
                f"use --substitutes mlm --mlm <a masked LM for that language>."
            )
        return substitutes.WordNetSubstitutes(
            senses=params.wordnet_senses, closed_class=not params.no_closed_class
        )
    gen = mlm.MLMSubstitutes(
        params.mlm,
        revision=params.mlm_revision,
        batch_size=params.mlm_batch_size,
        search=params.mlm_search,
        count_original=not params.no_count_original,
        device=params.device,
    )
    gen.load()  # fail before reading the corpus when the model is not available
    return gen


@dataclass(frozen=True)
class SubstitutesStage:
    """Stage factory of the substitute generator; each item is one :class:`Chunk` and ``k``.

    A result is the generator's ``batch`` output for the chunk and the forward passes it took.
    On the local engine ``generator`` is the driver's own (never pickled); a worker builds
    its own from ``params``, exactly the driver's.
    """

    params: Any
    src_lang: str
    k: int
    generator: Any = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "generator": None}

    def open(self):
        """Return ``chunks -> [(alternatives, forward passes)]`` (builds the generator on a worker)."""
        generator = (
            self.generator
            if self.generator is not None
            else open_generator(self.params, self.src_lang)
        )

        def run(chunks: list[Chunk]) -> list[tuple[list, int]]:
            out = []
            for c in chunks:
                before = getattr(generator, "forward_passes", 0)
                subs = generator.batch(
                    c.texts, [list(s) for s in c.spans], [list(p) for p in c.positions], self.k
                )
                out.append((subs, getattr(generator, "forward_passes", 0) - before))
            return out

        return run


def run_substitutes(engine, stage: SubstitutesStage, chunks: list[Chunk]) -> list[list]:
    """The alternatives of every chunk, computed on ``engine``; the driver's generator counts every forward pass."""
    t0 = time.perf_counter()
    if engine.name != "local":
        log.info("%s: substitutes for %d chunks", engine.describe(), len(chunks))
    generator = stage.generator
    before = getattr(generator, "forward_passes", 0)
    progress = StageProgress("substitutes", "sentences", lambda batch: len(batch[0].items))
    results = engine.map_batches(stage, [[c] for c in chunks], progress)
    if hasattr(
        generator, "forward_passes"
    ):  # the passes wherever they ran (this process or workers)
        generator.forward_passes = before + sum(r[0][1] for r in results)
    log.info("stage substitutes: %.1fs for %d chunks", time.perf_counter() - t0, len(chunks))
    return [r[0][0] for r in results]


# --- stage: MT on a cluster ---------------------------------------------------------------


def translate_on_engine(engine, params: spec.Params, mt_engine, cache, store_root,
                        requests: list[list[str]]) -> Any:  # fmt: skip
    """Translate on ``engine`` the distinct units the merge will ask ``mt_engine`` for; return the engine to merge with.

    The units are those the local translator would send (:func:`~builders.adapters.shardstore.plan_units`;
    cached ones left out). The returned :class:`~builders.adapters.shardstore.StoreEngine`
    answers the merge's :class:`~builders.adapters.mt.CachedTranslator` from them, so the
    decisions, the SQLite writes and the counts are those of a local build.
    """
    pair = "-".join(mt_engine.pair)
    distinct = list(dict.fromkeys(t for r in requests for t in r))
    cached = (
        set(cache.get_many(mt_engine.name, mt_engine.version, pair, distinct))
        if cache is not None
        else set()
    )
    stateful = getattr(mt_engine, "stateful", False)
    units = shardstore.plan_units(requests, cached, stateful, params.mt_batch_size)
    store = (
        shardstore.ShardStore(store_root, mt_engine.name, mt_engine.version, pair)
        if store_root
        else None
    )
    stage = shardstore.MTStage(
        mt_engine.name, mt_engine.pair[0], mt_engine.pair[1], mt_engine.version, str(store_root) if store_root else None,
        (("rate", params.mt_rate), ("retries", params.mt_retries), ("batch_size", min(params.mt_batch_size, 64)),
         ("num_beams", params.mt_beams), ("revision", params.mt_revision), ("device", params.device)),
    )  # fmt: skip
    n_texts = sum(len(u) for u in units)
    batch_texts = mt_batch_texts(n_texts, params.mt_batch_size, engine.workers)
    log.info("%s: %d MT units (%d texts, %d cached) in batches of ~%d texts", engine.describe(), len(units), n_texts,
             len(cached), batch_texts)  # fmt: skip
    t0 = time.perf_counter()
    found = shardstore.translate_units(engine, stage, units, store, batch_texts, mt_engine)
    log.info(
        "stage mt: %.1fs for %d units (%d texts)", time.perf_counter() - t0, len(units), n_texts
    )
    return shardstore.StoreEngine(mt_engine, found)


def mt_batch_texts(n_texts: int, batch_size: int, workers: int) -> int:
    """Texts per MT batch sent to the pool: ``batch_size`` at most, at least four batches a worker.

    Several batches per worker keep the pool busy; a batch's split never changes a translation.

    >>> mt_batch_texts(1000, 16, 2), mt_batch_texts(20, 16, 2), mt_batch_texts(0, 16, 2)
    (16, 3, 1)
    """
    if not n_texts:
        return 1
    return max(1, min(batch_size, math.ceil(n_texts / (4 * max(workers, 1)))))
