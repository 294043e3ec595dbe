"""Sentence-only encoders: a plain Python callable ``texts -> array`` (API models) and friends.

``callable:<module>:<function>`` imports ``function`` from ``module``; it receives a list of
strings and returns an ``(n, dim)`` array. If it accepts a ``role`` keyword, the
``"query"``/``"passage"`` role is passed on. These models have no layers
(``num_layers == 0``): word-level evaluators refuse them with a clear message.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from collections.abc import Callable, Sequence

import numpy as np

from evaluators.core.errors import EngineUnavailableError, UsageError, truncate
from evaluators.encoders.base import (
    TokenStates,
    WordVectors,
    batch_size_or,
    check_pooling,
    embed_sentences_by_loop,
    encode_progress,
    resolve_layers,
)
from evaluators.encoders.checked import check_matrix


class SentenceEncoder:
    """Wrap a function ``texts -> (n, dim)`` as an :class:`~evaluators.encoders.base.Encoder`.

    The embedding cache wraps it (:class:`~evaluators.encoders.cached.CachedEncoder`); it
    rounds fresh vectors batch by batch (:attr:`cache_block_rows`), as the function returns them.

    Attributes:
        calls: how many times the function was called (cache hits call it never).
    """

    num_layers = 0
    #: Where the revision came from when it is not the user's (``"weights"``, ``"content"``,
    #: ``"hub"``); read by :func:`~evaluators.encoders.identity.identify`.
    revision_source: str | None = None
    #: The prompt applied per role, when the model has prompts (a SentenceTransformer's).
    prompts: dict[str, str] | None = None

    def __init__(
        self,
        fn: Callable,
        model_id: str,
        revision: str | None,
        *,
        batch_size: int | None = None,
        **_ignored,
    ):
        self.fn = fn
        self.model_id = model_id
        self.revision = revision
        self.batch_size = batch_size_or(batch_size)
        self.calls = 0
        try:
            self._takes_role = "role" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            self._takes_role = False

    def prompt_for(self, role: str | None) -> str | None:
        """The prompt applied for ``role``: known for models with ``prompts``, else the model's own.

        ``None`` when the function takes ``role`` (what it makes of it is not visible here);
        ``""`` when it has no prompts and is not given the role.
        """
        if self.prompts is not None:
            return self.prompts.get(role or "", "")
        return None if self._takes_role and role is not None else ""

    def token_states(self, texts: Sequence[str], layers: Sequence[int]) -> list[TokenStates]:
        """Refuse: this model gives sentence embeddings only."""
        resolve_layers(layers, 0)  # raises EngineUnavailableError with the advice
        raise AssertionError("unreachable")  # pragma: no cover

    def word_vectors(self, texts, spans, layers) -> WordVectors:
        """Refuse: this model gives sentence embeddings only."""
        resolve_layers(layers, 0)
        raise AssertionError("unreachable")  # pragma: no cover

    def embed_sentences(self, texts, layers=(-1,), poolings=("model",), role=None):
        """``{(layer, pooling): array}``; only ``(-1, "model")`` exists for these models."""
        return embed_sentences_by_loop(self, texts, layers, poolings, role)

    def cache_stats(self):
        """No disk cache of its own (:func:`~evaluators.encoders.cached.with_cache` adds one): ``None``."""
        return None

    @property
    def cache_block_rows(self) -> int:
        """Rows rounded together for the cache: one call's batch."""
        return self.batch_size

    def sentence_key_params(self, layer: int, pooling: str, role: str | None) -> dict:
        """Cache key parameters (:class:`~evaluators.encoders.cached.CacheKeyed`): the role passed on.

        No batch size: an API call costs money, and what it returns is the provider's.

        Raises:
            UsageError: a pooling or layer other than ``model`` / ``-1``, or an unknown role.
        """
        self._check_request(pooling, layer, role)
        return {"role": role if self._takes_role else None}

    def word_key_params(self, role: str | None) -> dict:
        """Refuse: this model gives sentence embeddings only."""
        resolve_layers(None, 0)
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_request(self, pooling: str, layer: int, role: str | None) -> None:
        check_pooling(pooling)
        if pooling != "model" or layer != -1:
            raise UsageError(
                f"{self.model_id} gives one sentence embedding per text; use pooling='model' and layer=-1 "
                f"(got pooling={pooling!r}, layer={layer})."
            )
        if role not in (None, "query", "passage"):
            raise UsageError(f"Unknown role {role!r}; use 'query', 'passage' or leave it unset.")

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """Refuse: the tokenizer of a callable is unknown."""
        raise EngineUnavailableError(
            f"{self.model_id} does not expose its tokenizer, so token counts (fertility) are unavailable; use a transformers model."
        )

    def _call(self, texts: list[str], role: str | None) -> np.ndarray:
        out = self.fn(texts, role=role) if self._takes_role else self.fn(texts)
        self.calls += 1
        return check_matrix(out, len(texts), self.model_id)

    def sentence_embeddings(
        self, texts: Sequence[str], pooling: str = "model", layer: int = -1, role: str | None = None
    ) -> np.ndarray:
        """Return ``(n, dim)`` float32 embeddings from the function (``pooling`` must be ``model``)."""
        self._check_request(pooling, layer, role)
        texts = list(texts)
        unique = list(dict.fromkeys(texts))
        result: dict[str, np.ndarray] = {}
        with encode_progress(self.model_id, len(unique)) as bar:
            for i in range(0, len(unique), self.batch_size):
                chunk = unique[i : i + self.batch_size]
                result.update(zip(chunk, self._call(chunk, role)))
                bar.update(len(chunk))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([result[t] for t in texts]).astype(np.float32)


def source_hash(fn: Callable) -> str:
    """sha256 of a function's module source (its revision when none is given)."""
    try:
        source = inspect.getsource(inspect.getmodule(fn) or fn)
    except (OSError, TypeError):
        source = repr(fn)
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def from_spec(rest: str | None, **options) -> SentenceEncoder:
    """Build from ``callable:<module>:<function>``; ``revision`` option overrides the source hash.

    Raises:
        UsageError: malformed spec, missing module or function.
    """
    module_name, _, fn_name = (rest or "").partition(":")
    if not module_name or not fn_name:
        raise UsageError(
            f"callable spec must be callable:<module>:<function>, got {truncate('callable:' + (rest or ''))}."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(
            f"Cannot import module {module_name!r} for callable:{rest} ({exc}); check the name and PYTHONPATH."
        ) from exc
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise UsageError(
            f"Module {module_name!r} has no function {fn_name!r}; callable:{rest} must name a function texts -> array."
        )
    revision = options.pop("revision", None) or source_hash(fn)
    return SentenceEncoder(fn, f"callable:{rest}", revision, **options)
