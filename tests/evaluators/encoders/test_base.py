import numpy as np
import pytest

from evaluators.core.errors import EngineUnavailableError, UsageError
from evaluators.encoders import load_encoder
from evaluators.encoders.base import pool_spans, resolve_layers, span_token_mask


def test_pool_spans_is_the_true_subword_mean():
    states = np.array([[[1.0, 0.0], [3.0, 2.0], [5.0, 4.0], [7.0, 7.0]]], dtype=np.float32)
    offsets = np.array([[0, 2], [2, 5], [6, 6], [6, 9]])  # third token is zero-width ("▁")
    vec, found = pool_spans(states, offsets, [(0, 5), (6, 9), (10, 12)])
    np.testing.assert_allclose(vec[0, 0], [2.0, 1.0])
    np.testing.assert_allclose(vec[0, 1], [7.0, 7.0])
    assert found.tolist() == [True, True, False]
    assert np.isnan(vec[0, 2]).all()


@pytest.mark.parametrize("with_markers", [False, True])
def test_pool_spans_all_at_once_is_bit_equal_to_a_mean_per_span(with_markers):
    """The vectorised pooling against the per-span loop it replaced, on SentencePiece-like offsets."""
    rng = np.random.default_rng(4)
    states = rng.standard_normal((3, 12, 5)).astype(np.float32)
    # words of 1-3 tokens, bare markers (zero-width) before some, a gap, a special (0, 0) token
    offsets = np.array(
        [
            [0, 0],
            [0, 3],
            [3, 5],
            [6, 6],
            [6, 8],
            [9, 10],
            [10, 12],
            [12, 14],
            [16, 16],
            [16, 19],
            [20, 21],
            [0, 0],
        ]
    )
    spans = [(0, 5), (6, 8), (9, 14), (16, 19), (20, 21), (22, 25), (3, 4), (6, 6), (0, 21)]
    got, found = pool_spans(states, offsets, spans, with_markers)
    for i, (start, end) in enumerate(spans):
        mask = span_token_mask(offsets, start, end, with_markers)
        assert found[i] == mask.any()
        if mask.any():
            assert np.array_equal(got[:, i], states[:, mask].mean(axis=1)), (i, with_markers)
        else:
            assert np.isnan(got[:, i]).all()
    assert found.tolist() == [True, True, True, True, True, False, True, False, True]
    # written into the caller's array (garbage before), the same bits and NaN where unfound
    out = np.full((3, len(spans), 5), 7.0, dtype=np.float32)
    pool_spans(states, offsets, spans, with_markers, out=out)
    np.testing.assert_array_equal(out, got)
    # a token at (-1, -1) (special or prompt) is in no span, even one at 0 with markers
    hidden = offsets.copy()
    hidden[[0, 11]] = -1
    masked, _ = pool_spans(states, hidden, [(0, 5), (0, 3)], with_markers)
    np.testing.assert_array_equal(masked[:, 0], states[:, [1, 2]].mean(axis=1))


def test_resolve_layers_errors():
    with pytest.raises(UsageError, match="Layer 13 is out of range: this model has layers 0..12"):
        resolve_layers([13], 12)
    with pytest.raises(EngineUnavailableError, match="only gives sentence embeddings"):
        resolve_layers([0], 0)


def test_random_encoder_is_deterministic_and_context_sensitive():
    enc = load_encoder("random:8:2:3")
    a = enc.word_vectors(["la casa blanca", "una casa"], [[(3, 7)], [(4, 8)]], [0, 2])
    assert a.vectors.shape == (2, 2, 8) and a.found.all()
    np.testing.assert_allclose(a.vectors[0, 0], a.vectors[0, 1])  # layer 0 has no context
    assert not np.allclose(a.vectors[1, 0], a.vectors[1, 1])  # upper layers mix in the sentence
    b = load_encoder("random:8:2:3").word_vectors(["la casa blanca"], [[(3, 7)]], [0])
    np.testing.assert_allclose(a.vectors[0, 0], b.vectors[0, 0])


def test_unknown_model_spec_suggests():
    with pytest.raises(UsageError, match="Unknown model spec 'randm'.*Did you mean random"):
        load_encoder("randm")


def test_pool_spans_of_many_words_of_each_length_is_bit_equal_to_a_mean_per_span():
    """Words of equal token counts are averaged together; each must still be its own mean, bit for bit."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        n_tokens = int(rng.integers(3, 60))
        ends = np.sort(rng.choice(np.arange(1, 200), n_tokens, replace=False))
        offsets = np.stack([np.concatenate([[0], ends[:-1]]), ends], axis=1)
        offsets[rng.random(n_tokens) < 0.1] = -1  # special and prompt tokens
        states = rng.standard_normal((int(rng.integers(1, 14)), n_tokens, 16)).astype(np.float32)
        starts = rng.integers(0, 200, int(rng.integers(0, 12)))
        spans = [(int(a), int(min(200, a + rng.integers(0, 60)))) for a in starts]
        got, found = pool_spans(states * 5, offsets, spans)
        for i, (start, end) in enumerate(spans):
            mask = span_token_mask(offsets, start, end)
            assert found[i] == mask.any()
            want = (states * 5)[:, mask].mean(axis=1) if mask.any() else np.nan
            np.testing.assert_array_equal(got[:, i], np.broadcast_to(want, got[:, i].shape))
