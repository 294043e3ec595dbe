"""The one encoder boundary: every model's output is checked before a metric sees it.

:func:`checked` wraps whatever :func:`evaluators.run.runner.open_model` opened (a spec's
encoder, a Python object, a plain function) in :class:`CheckedEncoder`. Each vector that
leaves it is a float array of the promised shape with finite values; a model whose every
vector is zero is refused (cosine is undefined for a zero vector), some zero vectors are
logged. A model that is the user's own code (``callable:``, an object) and raises is one
sentence naming the model, not a traceback. Without this, NaN vectors gave TACC 0.0 with
every item a "tie" and an ``IndexError`` deep in the kNN search (issues 26 and 27).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from evaluators.core.errors import ModelError, XlbenchError, truncate
from evaluators.encoders.base import TokenStates, WordVectors

log = logging.getLogger("xlbench")

_FIX = "fix the model so that it returns one finite float vector per text"


def check_matrix(values: Any, n: int, model: str, what: str = "sentence embeddings") -> np.ndarray:
    """Return ``values`` as an ``(n, dim)`` float32 array, or raise one sentence naming ``model``.

    >>> check_matrix([[1, 2], [3, 4]], 2, "m").dtype
    dtype('float32')
    >>> check_matrix([[1.0, float("nan")]], 1, "m")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.ModelError: Model m returned non-finite values (NaN or inf) in 1 of 1 sentence embeddings; fix the model so that it returns one finite float vector per text.
    >>> check_matrix([["a"]], 1, "m")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.ModelError: Model m returned sentence embeddings of dtype <U1, not numbers; fix the model so that it returns one finite float vector per text.

    Raises:
        ModelError: wrong type or shape, non-finite values, or every row zero.
    """
    arr = _as_array(values, model, what)
    if arr.ndim != 2 or arr.shape[0] != n or (n and arr.shape[1] == 0):
        raise ModelError(
            f"Model {model} returned {what} of shape {arr.shape} for {n} texts, not (n, dim); {_FIX}."
        )
    return _finite_rows(arr.astype(np.float32, copy=False), model, what)


def _as_array(values: Any, model: str, what: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as err:  # ragged lists
        raise ModelError(
            f"Model {model} returned {what} that are not an array ({err}); {_FIX}."
        ) from None
    if arr.dtype.kind not in "fiu":
        raise ModelError(
            f"Model {model} returned {what} of dtype {arr.dtype}, not numbers; {_FIX}."
        )
    return arr


def _finite_rows(arr: np.ndarray, model: str, what: str) -> np.ndarray:
    """Refuse NaN/inf anywhere and a matrix whose every row is zero; log some zero rows."""
    rows = arr.reshape(-1, arr.shape[-1]) if arr.size else arr.reshape(0, 1)
    bad = ~np.isfinite(rows).all(axis=1)
    if bad.any():
        raise ModelError(
            f"Model {model} returned non-finite values (NaN or inf) in {int(bad.sum())} of "
            f"{len(rows)} {what}; {_FIX}."
        )
    zero = ~rows.any(axis=1)
    if len(rows) and zero.all():
        raise ModelError(
            f"Model {model} returned only all-zero {what} ({len(rows)}), which have no direction "
            f"for cosine similarity; {_FIX}."
        )
    if zero.any():
        log.warning(
            "Model %s returned %d all-zero vector(s) among %d %s; their cosine similarity is 0.",
            model,
            int(zero.sum()),
            len(rows),
            what,
        )
    return arr


class CheckedEncoder:
    """An encoder whose every output is checked (:func:`check_matrix`); attributes are the inner one's.

    Args:
        inner: the encoder (possibly behind the embedding cache).
        foreign: the model is the user's code (``callable:``, an object): an exception it
            raises becomes one :class:`~evaluators.core.errors.ModelError` sentence.
    """

    def __init__(self, inner: Any, foreign: bool = False):
        self.inner = inner
        self.foreign = foreign

    def __getattr__(self, name: str) -> Any:
        # only for names this wrapper lacks; "inner" guards against recursion while unpickling
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def label(self) -> str:
        """The model as messages name it."""
        name = str(getattr(self.inner, "model_id", None) or type(self.inner).__name__)
        return name if len(name) <= 80 else name[:77] + "..."

    def _call(self, method: Callable[..., Any], n: int, *args: Any, **kwargs: Any) -> Any:
        if not self.foreign:
            return method(*args, **kwargs)
        try:
            return method(*args, **kwargs)
        except XlbenchError:
            raise
        except Exception as err:  # the user's model code: any failure is the model's
            raise ModelError(
                f"Model {self.label} raised {type(err).__name__} ({truncate(str(err), 120)}) while "
                f"encoding {n} texts; fix the model (a function list[str] -> (n, dim) array)."
            ) from err

    def sentence_embeddings(
        self, texts: Sequence[str], pooling: str = "model", layer: int = -1, role: str | None = None
    ) -> np.ndarray:
        """The inner encoder's embeddings, checked."""
        texts = list(texts)
        out = self._call(
            self.inner.sentence_embeddings,
            len(texts),
            texts,
            pooling=pooling,
            layer=layer,
            role=role,
        )
        return check_matrix(out, len(texts), self.label) if texts else np.asarray(out, np.float32)

    def embed_sentences(
        self,
        texts: Sequence[str],
        layers: Sequence[int] = (-1,),
        poolings: Sequence[str] = ("model",),
        role: str | None = None,
    ) -> dict[tuple[int, str], np.ndarray]:
        """Every requested ``(layer, pooling)`` of the inner encoder, each checked."""
        from evaluators.encoders.base import embed_sentences

        texts = list(texts)
        got = self._call(embed_sentences, len(texts), self.inner, texts, layers, poolings, role)
        if not texts:
            return got
        return {key: check_matrix(value, len(texts), self.label) for key, value in got.items()}

    def word_vectors(self, texts: Any, spans: Any, layers: Any, **kwargs: Any) -> WordVectors:
        """The inner encoder's word vectors; the rows of found words checked."""
        texts = list(texts)
        wv = self._call(self.inner.word_vectors, len(texts), texts, spans, layers, **kwargs)
        n_words = sum(len(sp) for sp in spans)
        vectors = _as_array(wv.vectors, self.label, "word vectors")
        if vectors.ndim != 3 or vectors.shape[1] != n_words:
            raise ModelError(
                f"Model {self.label} returned word vectors of shape {vectors.shape} for {n_words} "
                f"words, not (layers, words, dim); {_FIX}."
            )
        found = np.asarray(wv.found, dtype=bool)
        if found.any():
            _finite_rows(vectors[:, found], self.label, "word vectors")
        return wv

    def token_states(self, texts: Any, layers: Any, **kwargs: Any) -> list[TokenStates]:
        """The inner encoder's token states; their values checked."""
        texts = list(texts)
        states = self._call(self.inner.token_states, len(texts), texts, layers, **kwargs)
        for ts in states:
            if ts.states.size and not np.isfinite(ts.states).all():
                raise ModelError(
                    f"Model {self.label} returned non-finite token states (NaN or inf); {_FIX}."
                )
        return states


def checked(encoder: Any, foreign: bool = False) -> Any:
    """Return ``encoder`` behind the output checks (once: a checked encoder is returned as is)."""
    if encoder is None or isinstance(encoder, CheckedEncoder):
        return encoder
    return CheckedEncoder(encoder, foreign)
