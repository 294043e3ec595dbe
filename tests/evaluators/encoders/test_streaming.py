"""Streaming pooling: one forward pass per batch for every (layer, pooling); pooled outputs only."""

from __future__ import annotations

import re

import numpy as np
import pytest

from evaluators.encoders import load_encoder
from evaluators.encoders.base import embed_sentences
from evaluators.encoders.hf import HFEncoder

TEXTS = [
    "the cat sat on the mat",
    "hello world",
    "the cat",
    "unbelievable hello",
    "the mat hello cat sat",
]


def test_one_forward_pass_per_batch_serves_every_layer_and_pooling(tiny_bert):
    enc = HFEncoder(tiny_bert, batch_size=2)
    grid = enc.embed_sentences(
        TEXTS, layers=[0, 1, -1], poolings=["mean", "cls", "model", "mean_content"]
    )
    assert enc.forward_calls == 3  # ceil(5 / 2) batches, not 3 x 4 x 3
    assert set(grid) == {
        (layer, p) for layer in (0, 1, -1) for p in ("mean", "cls", "model", "mean_content")
    }
    single = HFEncoder(tiny_bert, batch_size=2)
    for (layer, pooling), matrix in grid.items():
        assert matrix.shape == (len(TEXTS), 16)
        np.testing.assert_array_equal(
            matrix, single.sentence_embeddings(TEXTS, pooling=pooling, layer=layer)
        )


def test_mean_content_leaves_out_special_tokens(tiny_bert):
    enc = HFEncoder(tiny_bert)
    text = "the cat sat"
    ts = enc.token_states([text], [2])[0]  # special tokens removed
    got = enc.sentence_embeddings([text], pooling="mean_content", layer=2)[0]
    np.testing.assert_allclose(got, ts.states[0].mean(axis=0), atol=1e-6)
    assert not np.allclose(
        got, enc.sentence_embeddings([text], pooling="mean", layer=2)[0], atol=1e-4
    )


def test_streamed_word_vectors_equal_pooling_the_token_states(tiny_xlmr):
    enc = HFEncoder(tiny_xlmr, batch_size=2)
    texts = TEXTS + ["hello world"]  # a repeated text with other spans
    spans = [[(m.start(), m.end()) for m in re.finditer(r"\S+", t)] for t in texts]
    spans[-1] = spans[-1][:1]
    wv = enc.word_vectors(texts, spans, [0, -1])
    calls = enc.forward_calls
    assert calls == 3  # the repeated text is encoded once
    states = enc.token_states(texts, [0, -1])
    row = 0
    for ts, sp in zip(states, spans):
        for start, end in sp:
            mask = (
                (ts.offsets[:, 0] < end)
                & (ts.offsets[:, 1] > start)
                & (ts.offsets[:, 1] > ts.offsets[:, 0])
            )
            np.testing.assert_allclose(
                wv.vectors[:, row], ts.states[:, mask].mean(axis=1), atol=1e-6
            )
            row += 1
    by_layer = wv.by_layer()
    assert list(by_layer) == [0, 3] and by_layer[3].shape == (row, 16)


def test_embed_sentences_falls_back_to_one_call_per_pair():
    enc = load_encoder("random:8:2:1")
    grid = embed_sentences(enc, ["a b", "c"], [0, -1], ["mean", "cls"])
    np.testing.assert_array_equal(
        grid[(-1, "cls")], enc.sentence_embeddings(["a b", "c"], pooling="cls", layer=-1)
    )


def test_model_pooling_of_a_head_is_last_layer_only(tiny_bert):
    enc = HFEncoder(tiny_bert)
    enc._model_head = lambda m: m * 2  # stands for a sentence-transformers head
    from evaluators.core.errors import UsageError

    with pytest.raises(UsageError, match="last layer only"):
        enc.embed_sentences(["cat"], layers=[1, -1], poolings=["model"])
    grid = enc.embed_sentences(["cat"], layers=[-1], poolings=["model", "mean"])
    np.testing.assert_allclose(grid[(-1, "model")], 2 * grid[(-1, "mean")], rtol=1e-6)
