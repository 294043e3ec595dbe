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
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from types import SimpleNamespace
from typing import Any

log = logging.getLogger("xlbench")


# --- SilverAlign: substitutes --------------------------------------------------------


@dataclass(frozen=True)
class SubstitutesStage:
    """Stage factory of SilverAlign's substitute generator (WordNet or a masked LM).

    Each item is one chunk ``(texts, spans, positions, k)``; the result is the
    generator's ``batch`` output for it and the forward passes it took.
    """

    src_lang: str
    substitutes: str
    wordnet_senses: int = 2
    no_closed_class: bool = False
    mlm: str = "bert-large-cased"
    mlm_revision: str | None = None
    mlm_batch_size: int = 64

    @classmethod
    def from_args(cls, args, src_lang: str) -> SubstitutesStage:
        """Take the generator options from the parsed ``build silver`` arguments."""
        return cls(src_lang, args.substitutes, args.wordnet_senses, args.no_closed_class, args.mlm,
                   args.mlm_revision, args.mlm_batch_size)  # fmt: skip

    def open(self):
        """Build the generator (loads the MLM once per worker)."""
        from builders.silver import build

        options = asdict(self)
        generator = build._generator(SimpleNamespace(**options), self.src_lang)

        def run(chunks: list[tuple]) -> list[tuple[list, int]]:
            out = []
            for texts, spans, positions, k in chunks:
                before = getattr(generator, "forward_passes", 0)
                subs = generator.batch(texts, spans, positions, k)
                out.append((subs, getattr(generator, "forward_passes", 0) - before))
            return out

        return run


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


def silver_chunks(items: Sequence[tuple[str, str]], src_tokenizer, k: int, chunk: int = 64) -> list[tuple]:
    """Return the substitute chunks ``(texts, spans, positions, k)`` that ``build_silver`` asks for, in order."""
    from builders.adapters.tokenize import is_word

    out = []
    for start in range(0, len(items), chunk):
        texts = [t for _, t in items[start : start + chunk]]
        spans = [src_tokenizer.spans(t) for t in texts]
        positions = [[j for j, (s, e) in enumerate(sp) if is_word(t[s:e])] for t, sp in zip(texts, spans)]
        out.append((texts, spans, positions, k))
    return out


# --- SilverAlign: the whole distributed plan ------------------------------------------


def silver_on_engine(engine, args, src_lang, items, tokenizer, src_tokenizer, generator, mt_engine, cache, store_root):
    """Run SilverAlign's substitution and MT stages on ``engine``; return ``(generator, translator)`` for ``build_silver``.

    1. Substitutes: every 64-sentence chunk on the worker pool.
    2. Requests: ``build_silver`` run once with those substitutes and a recorder
       instead of MT, which yields exactly the requests a local build sends.
    3. MT: the distinct units the local translator would send its engine
       (:func:`~builders.adapters.shardstore.plan_units`; cached ones left out),
       on the worker pool, each finished batch written to the shard store.
    4. The returned translator is the ordinary
       :class:`~builders.adapters.mt.CachedTranslator` over the local cache with an
       engine answering from step 3, so the decision pass, the SQLite writes and
       the counts are those of a local build.
    """
    from builders.adapters import shardstore
    from builders.adapters.mt import CachedTranslator
    from builders.silver.build import build_silver

    k = args.alternatives
    chunks = silver_chunks(items, src_tokenizer, k)
    log.info("%s: substitutes for %d chunks", engine.describe(), len(chunks))
    t0 = time.perf_counter()
    results = engine.map_batches(SubstitutesStage.from_args(args, src_lang), [[c] for c in chunks])
    subs = {_chunk_key(c[0], c[2], k): r[0][0] for c, r in zip(chunks, results)}
    if hasattr(generator, "forward_passes"):  # the driver's generator reports the workers' passes
        generator.forward_passes = sum(r[0][1] for r in results)
    pre = PrecomputedSubstitutes(generator, subs)
    log.info("stage substitutes: %.1fs for %d sentences", time.perf_counter() - t0, len(items))

    requests: list[list[str]] = []

    def record(texts: list[str]) -> list[str]:
        requests.append(list(texts))
        return [""] * len(texts)

    build_silver(items, tokenizer, pre, record, k=k, min_valid=args.min_valid, max_targets=args.max_targets,
                 src_tokenizer=src_tokenizer)  # fmt: skip
    pair = "-".join(mt_engine.pair)
    distinct = list(dict.fromkeys(t for r in requests for t in r))
    cached = set(cache.get_many(mt_engine.name, mt_engine.version, pair, distinct)) if cache is not None else set()
    stateful = getattr(mt_engine, "stateful", False)
    units = shardstore.plan_units(requests, cached, stateful)
    store = shardstore.ShardStore(store_root, mt_engine.name, mt_engine.version, pair) if store_root else None
    stage = shardstore.MTStage(
        mt_engine.name, mt_engine.pair[0], mt_engine.pair[1], mt_engine.version, str(store_root) if store_root else None,
        (("rate", args.mt_rate), ("retries", args.mt_retries), ("batch_size", min(args.mt_batch_size, 64)),
         ("num_beams", args.mt_beams), ("revision", args.mt_revision)),
    )  # fmt: skip
    n_texts = sum(len(u) for u in units)
    # Several batches per worker keep the pool busy; a batch's split never changes a translation.
    batch_texts = max(1, min(args.mt_batch_size, math.ceil(n_texts / (4 * max(engine.workers, 1))) if n_texts else 1))
    log.info("%s: %d MT units (%d texts, %d cached) in batches of ~%d texts", engine.describe(), len(units), n_texts,
             len(cached), batch_texts)  # fmt: skip
    t0 = time.perf_counter()
    found = shardstore.translate_units(engine, stage, units, store, batch_texts, mt_engine)
    log.info("stage mt: %.1fs for %d units (%d texts)", time.perf_counter() - t0, len(units), n_texts)
    translator = CachedTranslator(shardstore.StoreEngine(mt_engine, found), cache, batch_size=args.mt_batch_size)
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
