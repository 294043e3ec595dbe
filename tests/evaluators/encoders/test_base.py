import numpy as np
import pytest

from evaluators.core.errors import EngineUnavailableError, UsageError
from evaluators.encoders import load_encoder
from evaluators.encoders.base import pool_spans, resolve_layers


def test_pool_spans_is_the_true_subword_mean():
    states = np.array([[[1.0, 0.0], [3.0, 2.0], [5.0, 4.0], [7.0, 7.0]]], dtype=np.float32)
    offsets = np.array([[0, 2], [2, 5], [6, 6], [6, 9]])  # third token is zero-width ("▁")
    vec, found = pool_spans(states, offsets, [(0, 5), (6, 9), (10, 12)])
    np.testing.assert_allclose(vec[0, 0], [2.0, 1.0])
    np.testing.assert_allclose(vec[0, 1], [7.0, 7.0])
    assert found.tolist() == [True, True, False]
    assert np.isnan(vec[0, 2]).all()


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
