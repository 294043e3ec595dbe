"""CachedEncoder: the embedding cache as one wrapper around any encoder that names its key parameters."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.core.errors import EngineUnavailableError, UsageError
from evaluators.encoders import load_encoder
from evaluators.encoders.base import embed_sentences_by_loop
from evaluators.encoders.cache import compact, make_key
from evaluators.encoders.cached import CachedEncoder, CacheKeyed, with_cache
from evaluators.encoders.mock import RandomEncoder


class _Toy:
    """A sentence encoder that is not one of the project's adapters: the wrapper works on it too."""

    num_layers = 0

    def __init__(self, revision: str | None = "r1"):
        self.model_id = "toy"
        self.revision = revision
        self.seen: list[list[str]] = []

    def sentence_key_params(self, layer, pooling, role):
        if pooling != "model" or layer != -1:
            raise UsageError("toy: model pooling at layer -1 only")
        return {"role": role}

    def word_key_params(self, role):
        raise UsageError("toy: no words")

    def sentence_embeddings(self, texts, pooling="model", layer=-1, role=None):
        self.seen.append(list(texts))
        return np.array([[len(t) + 0.1234567, 1.0 if role else 0.0] for t in texts], np.float32)

    def embed_sentences(self, texts, layers=(-1,), poolings=("model",), role=None):
        return embed_sentences_by_loop(self, texts, layers, poolings, role)


def test_only_misses_reach_the_wrapped_encoder_and_come_back_rounded(tmp_path):
    toy = _Toy()
    enc = with_cache(toy, tmp_path)
    assert isinstance(toy, CacheKeyed) and isinstance(enc, CachedEncoder)
    first = enc.sentence_embeddings(["ab", "c", "ab"])
    # the miss is float16-rounded like the stored copy, so a later hit scores the same numbers
    np.testing.assert_array_equal(first, compact(toy.sentence_embeddings(["ab", "c", "ab"])))
    toy.seen.clear()
    again = enc.sentence_embeddings(["c", "new", "ab"])
    assert toy.seen == [["new"]]  # the two cached texts are read, only the new one is encoded
    np.testing.assert_array_equal(again[[0, 2]], first[[1, 0]])
    enc.sentence_embeddings(["c"], role="query")  # the role is in the key: another entry
    assert toy.seen[-1] == ["c"]
    stats = enc.cache_stats()
    assert (stats.hits, stats.misses, stats.entries) == (2, 4, 4)
    # the key is exactly make_key over the encoder's parameters
    assert enc.cache.get_many([make_key("sent", "new", role=None)])


def test_what_stays_unwrapped(tmp_path):
    toy = _Toy()
    assert with_cache(toy, tmp_path, use_cache=False) is toy
    no_revision = _Toy(revision=None)
    assert with_cache(no_revision, tmp_path) is no_revision  # nothing identifies the model
    random = load_encoder("random:8:2:1", cache_dir=tmp_path)
    assert isinstance(random, RandomEncoder)  # names no key parameters: never cached


def test_the_wrapper_checks_requests_as_the_encoder_does(tmp_path):
    enc = with_cache(_Toy(), tmp_path)
    with pytest.raises(UsageError, match="model pooling at layer -1 only"):
        enc.sentence_embeddings(["a"], layer=0)
    with pytest.raises(EngineUnavailableError, match="only gives sentence embeddings"):
        enc.word_vectors(["a b"], [[(0, 1)]], [-1])
    assert enc.model_id == "toy" and enc.seen == []  # other attributes are the wrapped encoder's
