"""Word vectors pooled as SimAlign pools them: a bare ``▁`` piece belongs to the word it leads.

SimAlign tokenises word by word (``tokenizer.tokenize(word)``: ``"北京"`` is ``["▁", "北", "京"]``
in an XLM-R vocabulary without ``"▁北"``) and averages every piece of a word
(``average_embeds_over_words``). The always-run test transcribes that; with
``XLBENCH_SIMALIGN_DIR`` naming a cisnlp/simalign checkout, SimAlign's own ``EmbeddingLoader``
and ``average_embeds_over_words`` are run unmodified on the same tiny model.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

from evaluators.encoders.hf import HFEncoder
from evaluators.tasks.embedding_aligner import spans_of, word_vectors_by_sentence

WORDS = ["hello", "北京", "world", "北"]
LAYER = 2
_SIMALIGN = os.environ.get("XLBENCH_SIMALIGN_DIR")


def _simalign_transcribed(path: str, words: list[str], layer: int) -> np.ndarray:
    """SimAlign's word vectors: ``get_embed_list`` then ``average_embeds_over_words``."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path, output_hidden_states=True).eval()
    pieces = [tok.tokenize(w) for w in words]
    with torch.no_grad():
        inputs = tok([words], is_split_into_words=True, return_tensors="pt")
        bpe = model(**inputs)["hidden_states"][layer][0, 1:-1].numpy()
    out, pos = [], 0
    for p in pieces:
        out.append(bpe[pos : pos + len(p)].mean(0))
        pos += len(p)
    return np.array(out)


def _ours(path: str, words: list[str], layer: int, with_markers: bool) -> np.ndarray:
    text, spans = spans_of(words)
    wv = HFEncoder(path).word_vectors([text], [spans], [layer], with_markers=with_markers)
    assert wv.found.all()
    return wv.vectors[0]


def test_a_bare_marker_is_pooled_with_its_word_as_simalign_does(tiny_xlmr):
    assert HFEncoder(tiny_xlmr).tokenizer.tokenize("北京")[0] == "▁"  # the case under test
    reference = _simalign_transcribed(tiny_xlmr, WORDS, LAYER)
    with_marker = _ours(tiny_xlmr, WORDS, LAYER, with_markers=True)
    np.testing.assert_allclose(with_marker, reference, atol=1e-5)
    dropped = _ours(tiny_xlmr, WORDS, LAYER, with_markers=False)
    # "hello" and "world" have no bare piece: the two rules agree there, and only there.
    np.testing.assert_allclose(dropped[[0, 2]], reference[[0, 2]], atol=1e-5)
    assert not np.allclose(dropped[1], reference[1], atol=1e-3)
    assert not np.allclose(dropped[3], reference[3], atol=1e-3)


def test_the_aligner_pools_with_the_marker_unless_told_to_drop_it(tiny_xlmr):
    enc = HFEncoder(tiny_xlmr)
    reference = _simalign_transcribed(tiny_xlmr, WORDS, LAYER)
    (kept,), _ = word_vectors_by_sentence(enc, [WORDS], [LAYER], 8)
    (dropped,), _ = word_vectors_by_sentence(enc, [WORDS], [LAYER], 8, with_markers=False)
    np.testing.assert_allclose(kept[0], reference, atol=1e-5)
    assert not np.allclose(dropped[0][1], reference[1], atol=1e-3)


def test_the_cache_keeps_the_two_poolings_apart(tiny_xlmr, tmp_path):
    from evaluators.encoders.cached import with_cache

    text, spans = spans_of(WORDS)
    enc = with_cache(HFEncoder(tiny_xlmr), tmp_path / "cache")
    first = enc.word_vectors([text], [spans], [LAYER]).vectors[0]
    kept = enc.word_vectors([text], [spans], [LAYER], with_markers=True).vectors[0]
    assert not np.allclose(first[1], kept[1], atol=1e-3)  # not the cached "drop" vector
    again = with_cache(HFEncoder(tiny_xlmr), tmp_path / "cache")
    np.testing.assert_array_equal(
        again.word_vectors([text], [spans], [LAYER], with_markers=True).vectors[0], kept
    )
    assert again.inner.forward_calls == 0


@pytest.mark.skipif(
    not _SIMALIGN or any(importlib.util.find_spec(d) is None for d in ("sklearn", "scipy")),
    reason="set XLBENCH_SIMALIGN_DIR to a cisnlp/simalign checkout (with scikit-learn and scipy "
    "installed) to run SimAlign's EmbeddingLoader and average_embeds_over_words unmodified",
)
def test_simalign_file_unmodified(tiny_xlmr):
    sys.path.insert(0, _SIMALIGN)
    try:
        from simalign.simalign import EmbeddingLoader, SentenceAligner
    finally:
        sys.path.remove(_SIMALIGN)
    loader = EmbeddingLoader(model=tiny_xlmr, layer=LAYER)
    pieces = [loader.tokenizer.tokenize(w) for w in WORDS]
    n = sum(len(p) for p in pieces)
    bpe = loader.get_embed_list([WORDS, WORDS]).numpy()
    theirs, _ = SentenceAligner.average_embeds_over_words(
        [bpe[0, :n], bpe[1, :n]], [pieces, pieces]
    )
    np.testing.assert_allclose(_ours(tiny_xlmr, WORDS, LAYER, True), theirs, atol=1e-5)
