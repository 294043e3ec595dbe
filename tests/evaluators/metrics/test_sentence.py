"""Sentence retrieval with CSLS and the paper's poolings."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from evaluators.core.errors import UsageError
from evaluators.metrics import csls
from evaluators.metrics.sentence import pool_tokens, sentence_retrieval


def _brute_csls_weak(a, b, k):
    an = a / np.linalg.norm(a, axis=1, keepdims=True)
    bn = b / np.linalg.norm(b, axis=1, keepdims=True)
    s = an @ bn.T
    r_a = np.sort(s, axis=1)[:, -k:].mean(axis=1)
    r_b = np.sort(s, axis=0)[-k:, :].mean(axis=0)
    m = 2 * s - r_a[:, None] - r_b[None, :]
    own = np.diag(m).copy()
    np.fill_diagonal(m, -np.inf)
    return int((own > m.max(axis=1)).sum()), int((own > m.max(axis=0)).sum())


def test_sentence_csls_matches_brute_force_and_differs_from_cosine():
    # Hub vectors: a few targets close to everything, which CSLS penalises (its purpose).
    rng = np.random.default_rng(5)
    a = rng.standard_normal((40, 8))
    b = a + 1.5 * rng.standard_normal((40, 8))
    b[:4] += 3 * a.mean(axis=0)
    got = sentence_retrieval(a, b, "csls", k=5)
    assert (got.correct_src_tgt, got.correct_tgt_src) == _brute_csls_weak(a, b, 5)
    cos = sentence_retrieval(a, b, "cosine")
    assert cos.criterion == "cosine" and got.criterion == "csls"
    assert 0 <= got.accuracy <= 1


def test_sentence_ties_reported_and_first_rule():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    strict = sentence_retrieval(a, a, "cosine")
    first = sentence_retrieval(a, a, "cosine", tie_rule="first")
    assert (strict.correct_src_tgt, strict.ties_src_tgt) == (1, 2)
    assert first.correct_src_tgt == 2
    with pytest.raises(UsageError, match="tie rule"):
        sentence_retrieval(a, a, tie_rule="any")


def test_pool_tokens_excludes_special_tokens_per_layer():
    states = np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)
    special = np.array([True, False, False, True])
    np.testing.assert_array_equal(pool_tokens(states, special, "mean"), states[:, 1:3].mean(axis=1))
    np.testing.assert_array_equal(pool_tokens(states, special, "cls"), states[:, 0])
    with pytest.raises(UsageError, match="only special tokens"):
        pool_tokens(states, np.ones(4, bool), "mean")
    with pytest.raises(UsageError, match="Unknown pooling 'max'"):
        pool_tokens(states, special, "max")


def test_sentence_retrieval_on_real_tatoeba_char_ngrams(shared_data):
    # Real sentence pairs, encoded by a model-free character-trigram hashing so it runs offline.
    path = shared_data / "tatoeba_v1" / "tatoeba.spa-eng.spa"
    if not path.exists():
        pytest.skip(f"{path} absent (shared data not mounted)")
    src = path.read_text(encoding="utf-8").splitlines()[:300]
    tgt = (
        (shared_data / "tatoeba_v1" / "tatoeba.spa-eng.eng")
        .read_text(encoding="utf-8")
        .splitlines()[:300]
    )

    def embed(lines):
        out = np.zeros((len(lines), 512), np.float32)
        for i, line in enumerate(lines):
            t = f"  {line.lower()}  "
            for j in range(len(t) - 2):
                out[i, zlib.crc32(t[j : j + 3].encode()) % 512] += 1
        return out

    a, b = embed(src), embed(tgt)
    got = sentence_retrieval(a, b, "csls", k=10)
    assert (got.correct_src_tgt, got.correct_tgt_src) == _brute_csls_weak(a, b, 10)
    counts = csls.retrieval_counts(a, b)
    assert counts.weak == got.correct_src_tgt
