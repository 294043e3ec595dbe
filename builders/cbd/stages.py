"""cbd's heavy step, stated explicitly: plan -> stage -> merge of the extraction.

1. **Plan:** :func:`plan_chunks` cuts the numbered sentence pairs into chunks of
   :data:`CHUNK` pairs (a deterministic split by position).
2. **Stage:** every chunk runs through :class:`ExtractStage` (:func:`builders.cbd.logic.extract`)
   on an :mod:`evaluators.compute.engine` backend: the local engine in this process or,
   with ``--workers N``, in N forked processes; Ray on an actor pool. The lexicon travels
   inside the stage factory, never through a module global.
3. **Merge:** :func:`merge` concatenates the records in chunk order and sums the counts.

A chunk's extraction depends on that chunk alone, so the records are the same bytes
whatever ran them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from builders.cbd import logic
from evaluators.compute.engine import StageProgress

#: Sentence pairs per extraction chunk (one unit of work).
CHUNK = 2000


def plan_chunks(numbered: Sequence[Any], size: int = CHUNK) -> list[list[Any]]:
    """Cut the numbered sentence pairs into consecutive chunks of ``size``.

    >>> [len(c) for c in plan_chunks(list(range(5)), 2)]
    [2, 2, 1]
    """
    return [list(numbered[i : i + size]) for i in range(0, len(numbered), size)]


@dataclass(frozen=True)
class ExtractStage:
    """Stage factory of the extraction: each item is one chunk; the result ``(records, counts)``.

    Attributes:
        lex: the :class:`builders.cbd.logic.Lexicon` (pickled once per worker on a cluster,
            inherited by forked local workers).
    """

    lex: Any

    def open(self):
        """Return ``chunks -> [(records, counts)]``."""
        return lambda chunks: [logic.extract(c, self.lex) for c in chunks]


def merge(extracted: Iterable[tuple[list[dict], dict]]) -> tuple[list[dict], dict]:
    """Concatenate the chunks' records in order and sum their counts.

    >>> merge([([{"a": 1}], {"n": 1}), ([{"a": 2}], {"n": 2, "m": 1})])
    ([{'a': 1}, {'a': 2}], {'n': 3, 'm': 1})
    """
    records: list[dict] = []
    counts: dict = {}
    for recs, c in extracted:
        records += recs
        for k, v in c.items():
            counts[k] = counts.get(k, 0) + v
    return records, counts


def extract_all(engine, numbered: Sequence[Any], lex) -> tuple[list[dict], dict]:
    """Plan, stage and merge the extraction of every sentence pair on ``engine``."""
    chunks = plan_chunks(numbered)
    progress = StageProgress("extract", "pairs", lambda batch: len(batch[0]))
    results = engine.map_batches(ExtractStage(lex), [[c] for c in chunks], progress)
    return merge(r[0] for r in results)
