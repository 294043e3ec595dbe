"""The embedding cache as one wrapper around any :class:`~evaluators.encoders.base.Encoder`.

:class:`CachedEncoder` looks every requested vector up in the
:class:`~evaluators.encoders.cache.EmbeddingCache` first, asks the wrapped encoder for the
misses only (whole items: all layers of one ``(text, spans)`` pair, all texts of one
``(layer, pooling)``), stores what it computed and returns cached and fresh vectors in the
caller's order. Fresh vectors are float16-rounded (:func:`~evaluators.encoders.cache.compact`)
before they are returned, so a run that writes the cache and a later run that reads it score
bit-identical numbers.

The wrapped encoder only says what, besides the text, changes its vectors
(:class:`CacheKeyed`): the cache keys are built here, once, from those parameters.
:func:`with_cache` applies the wrapper where ``load_encoder`` (and the runner, for objects
with ``encode``) turn the cache on.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from evaluators.core.errors import UsageError
from evaluators.encoders.base import (
    TokenStates,
    WordVectors,
    check_pooling,
    resolve_layers,
)
from evaluators.encoders.cache import (
    CacheStats,
    EmbeddingCache,
    compact,
    make_key,
    pack,
    spans_hash,
    unpack,
)

#: Pending word-vector entries written in one transaction (bounds the memory of the writes).
_WRITE_BATCH = 4096

_Item = tuple[str, tuple[tuple[int, int], ...]]


@runtime_checkable
class CacheKeyed(Protocol):
    """An encoder whose vectors the cache can store: it names what changes them.

    Each method validates its arguments as the encoder itself would (unknown role, layer out
    of range, a pooling the model lacks) and returns the key parameters besides the text.
    """

    #: Hub id or local path: with the revision, it names the model's rows in the cache.
    model_id: str

    def word_key_params(self, role: str | None) -> dict[str, Any]:
        """Key parameters of word vectors (the wrapper adds the layer and the spans)."""
        ...

    def sentence_key_params(self, layer: int, pooling: str, role: str | None) -> dict[str, Any]:
        """Key parameters of one (layer as requested, pooling) sentence vector."""
        ...


class CachedEncoder:
    """An :class:`~evaluators.encoders.base.Encoder` that reads and writes the embedding cache.

    Every attribute it does not define (``forward_calls``, ``calls``, ``dim``, ``tokenizer``,
    ``weights_dir`` ...) is the wrapped encoder's.

    Args:
        inner: the encoder that computes the misses.
        cache: the store of this model revision.
        block_rows: rows of a fresh sentence matrix rounded together (``None``: all); an
            encoder that calls its model in chunks rounds chunk by chunk.

    Attributes:
        inner: the wrapped encoder.
        cache: the :class:`~evaluators.encoders.cache.EmbeddingCache`.
    """

    def __init__(self, inner: Any, cache: EmbeddingCache, block_rows: int | None = None):
        self.inner = inner
        self.cache = cache
        self._block_rows = block_rows

    def __getattr__(self, name: str) -> Any:
        # only called for names this wrapper lacks; "inner" guards against recursion while unpickling
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def model_id(self) -> str:
        """The wrapped encoder's model id."""
        return self.inner.model_id

    @property
    def revision(self) -> str:
        """The wrapped encoder's revision."""
        return self.inner.revision

    @property
    def num_layers(self) -> int:
        """The wrapped encoder's number of blocks."""
        return self.inner.num_layers

    def cache_stats(self) -> CacheStats:
        """Return :class:`~evaluators.encoders.cache.CacheStats` of this encoder's cache."""
        return self.cache.stats()

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """The wrapped encoder's tokens (never cached)."""
        return self.inner.tokenize(texts)

    def token_states(
        self, texts: Sequence[str], layers: Sequence[int], **kwargs: Any
    ) -> list[TokenStates]:
        """The wrapped encoder's token states (never cached: ~100x larger than pooled vectors)."""
        return self.inner.token_states(texts, layers, **kwargs)

    # ------------------------------------------------------------------ word vectors
    def word_vectors(
        self,
        texts: Sequence[str],
        spans: Sequence[Sequence[tuple[int, int]]],
        layers: Sequence[int] | None,
        role: str | None = None,
        *,
        with_markers: bool = False,
    ) -> WordVectors:
        """Word vectors of each ``(text, spans)``: cached items read, the rest from the encoder.

        An item is taken from the cache only when every layer of it is there, so that its
        layers all come from one forward pass.
        """
        layer_ids = resolve_layers(layers, self.inner.num_layers)
        texts = list(texts)
        span_lists = [[(int(a), int(b)) for a, b in sp] for sp in spans]
        if len(span_lists) != len(texts):
            raise UsageError(
                f"word_vectors got {len(texts)} texts but {len(span_lists)} span lists; pass one list per text."
            )
        params = self.inner.word_key_params(role)
        # Only in the key when set, so that the keys of every vector cached before stay valid.
        markers = {"markers": "with-word"} if with_markers else {}
        first: dict[_Item, int] = {}
        for k, (t, sp) in enumerate(zip(texts, span_lists)):
            if sp:
                first.setdefault((t, tuple(sp)), k)
        if not first:
            return self.inner.word_vectors(
                texts, span_lists, layer_ids, role=role, with_markers=with_markers
            )
        keys = {
            item: [
                make_key(
                    "word", item[0], spans=spans_hash(item[1]), layer=layer, **params, **markers
                )
                for layer in layer_ids
            ]
            for item in first
        }
        got = self.cache.get_many([k for ks in keys.values() for k in ks])
        todo = [item for item, ks in keys.items() if not all(k in got for k in ks)]
        fresh = (
            self.inner.word_vectors(
                [t for t, _ in todo],
                [list(sp) for _, sp in todo],
                layer_ids,
                role=role,
                with_markers=with_markers,
            )
            if todo
            else None
        )
        return _assemble_words(
            self.cache, texts, span_lists, first, keys, got, todo, fresh, layer_ids
        )

    # ------------------------------------------------------------------ sentence vectors
    def embed_sentences(
        self,
        texts: Sequence[str],
        layers: Sequence[int] = (-1,),
        poolings: Sequence[str] = ("model",),
        role: str | None = None,
    ) -> dict[tuple[int, str], np.ndarray]:
        """``{(layer, pooling): (n, dim) float32}`` for every requested pair; misses from the encoder.

        The texts missing from any pair are encoded together, once, for the pairs that miss them.
        """
        poolings = [check_pooling(p) for p in poolings]
        layers = list(layers)
        texts = list(texts)
        # a pair is the vector it keys: two requested layers naming one block are one pair
        pairs: dict[tuple, tuple[int, str]] = {}
        asked: dict[tuple[int, str], tuple] = {}
        for layer in layers:
            for pooling in poolings:
                params = self.inner.sentence_key_params(layer, pooling, role)
                pair = (pooling, tuple(sorted(params.items())))
                pairs.setdefault(pair, (layer, pooling))
                asked[(layer, pooling)] = pair
        unique = list(dict.fromkeys(texts))
        if not unique:
            return self.inner.embed_sentences(texts, layers, poolings, role=role)
        keys = {c: {t: make_key("sent", t, **dict(c[1])) for t in unique} for c in pairs}
        got = self.cache.get_many([k for c in pairs for k in keys[c].values()])
        cached = {
            c: {t: unpack(got[k])[0][0] for t, k in keys[c].items() if k in got} for c in pairs
        }
        missing = {c: [t for t in unique if t not in cached[c]] for c in pairs}
        todo = list(dict.fromkeys(t for c in pairs for t in missing[c]))
        fresh = self._fresh_sentences(todo, [pairs[c] for c in pairs if missing[c]], role)
        todo_row = {t: i for i, t in enumerate(todo)}
        if todo:
            self.cache.put_many(
                (keys[c][t], pack(fresh[pairs[c]][todo_row[t]])) for c in pairs for t in missing[c]
            )
        row_of = {t: i for i, t in enumerate(unique)}
        index = np.fromiter((row_of[t] for t in texts), dtype=np.int64, count=len(texts))
        results: dict[tuple, np.ndarray] = {}
        for c, request in pairs.items():
            rows = fresh.get(request)
            dim = rows.shape[1] if rows is not None else len(next(iter(cached[c].values())))
            out = np.zeros((len(unique), dim), np.float32)
            for t, row in cached[c].items():
                out[row_of[t]] = row
            if rows is not None:  # exactly the pairs that miss texts
                for t in missing[c]:
                    out[row_of[t]] = rows[todo_row[t]]
            results[c] = out
        return {request: results[pair][index] for request, pair in asked.items()}

    def _fresh_sentences(
        self, todo: list[str], requests: list[tuple[int, str]], role: str | None
    ) -> dict[tuple[int, str], np.ndarray]:
        """Encode ``todo`` for the ``(layer, pooling)`` requests that miss texts, rounded as stored."""
        if not todo:
            return {}
        layers = list(dict.fromkeys(layer for layer, _ in requests))
        poolings = list(dict.fromkeys(pooling for _, pooling in requests))
        computed = self.inner.embed_sentences(todo, layers, poolings, role=role)
        block = self._block_rows or max(len(todo), 1)
        return {
            r: np.concatenate(
                [compact(computed[r][i : i + block]) for i in range(0, len(todo), block)]
            )
            for r in requests
        }

    def sentence_embeddings(
        self, texts: Sequence[str], pooling: str = "model", layer: int = -1, role: str | None = None
    ) -> np.ndarray:
        """``(n, dim)`` float32 sentence embeddings for one (layer, pooling), through the cache."""
        return self.embed_sentences(texts, [layer], [pooling], role=role)[(layer, pooling)]


def _assemble_words(
    cache: EmbeddingCache,
    texts: list[str],
    spans: list[list[tuple[int, int]]],
    first: dict[_Item, int],
    keys: dict[_Item, list[str]],
    got: dict[str, bytes],
    todo: list[_Item],
    fresh: WordVectors | None,
    layer_ids: list[int],
) -> WordVectors:
    """Lay cached and fresh items out in input order; store the fresh ones (float16-rounded)."""
    starts, total = [], 0
    for sp in spans:
        starts.append(total)
        total += len(sp)
    dim = (
        fresh.vectors.shape[2] if fresh is not None else len(unpack(next(iter(got.values())))[0][0])
    )
    vectors = np.full((len(layer_ids), total, dim), np.nan, dtype=np.float32)
    found = np.zeros(total, dtype=bool)
    truncated_of: dict[str, bool] = {}
    missed = set(todo)
    for item, pos in first.items():
        if item in missed:
            continue
        where = slice(starts[pos], starts[pos] + len(item[1]))
        for j, k in enumerate(keys[item]):
            row, flags = unpack(got[k])
            vectors[j, where] = row
        found[where] = ~np.isnan(vectors[0, where, 0])
        truncated_of[item[0]] = bool(flags & 1)
    if fresh is not None:
        _store_fresh_words(cache, fresh, todo, keys, first, starts, vectors, found, truncated_of)
    truncated = 0
    for pos, (t, sp) in enumerate(zip(texts, spans)):
        if not sp:
            continue
        truncated += int(truncated_of.get(t, False))
        src = first[(t, tuple(sp))]
        if src != pos:
            a, b = starts[src], starts[pos]
            vectors[:, b : b + len(sp)] = vectors[:, a : a + len(sp)]
            found[b : b + len(sp)] = found[a : a + len(sp)]
    notes = []
    if (~found).any():
        notes.append(
            f"{int((~found).sum())} word(s) not covered by any token (truncation) were dropped"
        )
    return WordVectors(vectors, found, layer_ids, truncated, notes)


def _store_fresh_words(
    cache: EmbeddingCache,
    fresh: WordVectors,
    todo: list[_Item],
    keys: dict[_Item, list[str]],
    first: dict[_Item, int],
    starts: list[int],
    vectors: np.ndarray,
    found: np.ndarray,
    truncated_of: dict[str, bool],
) -> None:
    """Copy the encoder's items into the output, rounded item by item as the cache stores them."""
    pending: list[tuple[str, bytes]] = []
    at = 0
    for n, item in enumerate(todo):
        width = len(item[1])
        v = compact(fresh.vectors[:, at : at + width])
        truncated = bool(fresh.text_truncated[n])
        pending.extend(zip(keys[item], (pack(v[j], int(truncated)) for j in range(len(v)))))
        where = slice(starts[first[item]], starts[first[item]] + width)
        vectors[:, where] = v
        found[where] = fresh.found[at : at + width]
        truncated_of[item[0]] = truncated
        at += width
        if len(pending) >= _WRITE_BATCH:  # bounded memory for the pending writes too
            cache.put_many(pending)
            pending = []
    if pending:
        cache.put_many(pending)


def with_cache(
    encoder: Any,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
) -> Any:
    """Return ``encoder`` behind the embedding cache, or unchanged.

    Unchanged when the cache is off, when the encoder cannot name what changes its vectors
    (:class:`CacheKeyed`) or when it has no revision (nothing would identify the model).
    """
    if not use_cache or not isinstance(encoder, CacheKeyed):
        return encoder
    revision = getattr(encoder, "revision", None)
    if revision is None:
        return encoder
    cache = EmbeddingCache(cache_dir, encoder.model_id, revision)
    return CachedEncoder(encoder, cache, getattr(encoder, "cache_block_rows", None))
