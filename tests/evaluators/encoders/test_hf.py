"""The transformers adapter on tiny random BERT / XLM-R models: layers, offsets, means, batching, cache."""

from __future__ import annotations

import re

import numpy as np
import pytest

from evaluators.core.errors import EngineUnavailableError, InputFileError, UsageError
from evaluators.encoders import load_encoder
from evaluators.encoders.base import Encoder
from evaluators.encoders.cached import CachedEncoder, with_cache
from evaluators.encoders.hf import HFEncoder, folder_hash


def _reference_hidden(path, text, prefix=""):
    """Hidden states of one text straight from transformers (the hand computation)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    enc = tok(prefix + text, return_tensors="pt")
    with torch.inference_mode():
        out = model(**enc, output_hidden_states=True)
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0].tolist())
    return tokens, [h[0].numpy() for h in out.hidden_states]


def test_layer_counts_and_protocol(tiny_bert, tiny_xlmr, tmp_path):
    bert = load_encoder(f"hf:{tiny_bert}", cache_dir=tmp_path)
    xlmr = load_encoder(f"hf:{tiny_xlmr}", cache_dir=tmp_path)
    assert isinstance(bert, Encoder)
    assert (bert.num_layers, xlmr.num_layers) == (2, 3)
    ts = bert.token_states(["the cat sat"], None)[0]
    assert ts.states.shape == (3, 3, 16)
    assert xlmr.token_states(["hello world"], None)[0].states.shape == (4, 2, 16)
    # a local folder's revision is the content hash of its files
    assert bert.revision == folder_hash(tiny_bert) and re.fullmatch(r"[0-9a-f]{64}", bert.revision)
    assert bert.model_id.endswith("tiny-bert0")


def test_a_loaded_model_and_its_identity_read_the_weights_once(tiny_bert, tmp_path, monkeypatch):
    from evaluators.encoders import hf, identity

    reads, digest_of = [], identity.weights_digest

    def counted(folder):
        reads.append(folder)
        return digest_of(folder)

    monkeypatch.setattr(hf, "weights_digest", counted)
    monkeypatch.setattr(identity, "weights_digest", counted)
    enc = load_encoder(f"hf:{tiny_bert}", cache_dir=tmp_path)
    digest = enc.weights_sha256  # what the ONNX export is keyed by
    ident = identity.identify(enc, f"hf:{tiny_bert}")
    assert ident.revision == digest and ident.revision_source == "weights"
    assert len(reads) == 1
    # a model from the Hub has no folder of weights to hash
    assert HFEncoder.weights_sha256.func(type("Hub", (), {"weights_dir": None})()) is None


def test_offsets_point_into_the_text(tiny_bert, tiny_xlmr):
    bert = HFEncoder(tiny_bert)
    text = "Unbelievable cat!"
    ts = bert.token_states([text], [0])[0]
    assert ts.tokens == ["un", "##believ", "##able", "cat", "!"]
    assert ts.offsets.tolist() == [[0, 2], [2, 8], [8, 12], [13, 16], [16, 17]]
    xlmr = HFEncoder(tiny_xlmr)
    ts = xlmr.token_states(["hello world"], [0])[0]
    assert [("hello world")[s:e] for s, e in ts.offsets] == ["hello", "world"]


def test_word_vector_is_the_true_mean_of_all_subwords(tiny_bert):
    enc = HFEncoder(tiny_bert)
    text = "Unbelievable cat!"
    tokens, hidden = _reference_hidden(tiny_bert, text)
    assert tokens == ["[CLS]", "un", "##believ", "##able", "cat", "!", "[SEP]"]
    wv = enc.word_vectors([text], [[(0, 12), (13, 16)]], [0, 1, 2])
    assert wv.found.tolist() == [True, True] and wv.layers == [0, 1, 2]
    for layer in range(3):
        expected_word = hidden[layer][1:4].mean(axis=0)  # un ##believ ##able, no [CLS]
        np.testing.assert_allclose(wv.vectors[layer, 0], expected_word, atol=1e-6)
        np.testing.assert_allclose(wv.vectors[layer, 1], hidden[layer][4], atol=1e-6)
        # the first subword alone is a different vector
        assert not np.allclose(wv.vectors[layer, 0], hidden[layer][1], atol=1e-3)


def test_sentence_poolings_match_hand_computation(tiny_bert):
    enc = HFEncoder(tiny_bert)
    _, hidden = _reference_hidden(tiny_bert, "the cat sat")
    mean = enc.sentence_embeddings(["the cat sat"], pooling="mean", layer=-1)
    cls = enc.sentence_embeddings(["the cat sat"], pooling="cls", layer=1)
    np.testing.assert_allclose(mean[0], hidden[2].mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(cls[0], hidden[1][0], atol=1e-6)
    np.testing.assert_allclose(enc.sentence_embeddings(["the cat sat"])[0], mean[0], atol=1e-6)
    assert mean.dtype == np.float32 and mean.shape == (1, 16)


TEXTS = [
    "the cat sat on the mat",
    "hello",
    "unbelievable",
    "hello world , the cat sat on the mat and the cat sat on the mat again !",
    "我爱北京",
    "cat",
    "the mat",
    "école hello world",
]


@pytest.mark.parametrize("which", ["tiny_bert", "tiny_xlmr"])
def test_batching_invariance(which, request):
    path = request.getfixturevalue(which)
    one = HFEncoder(path, batch_size=1)
    many = HFEncoder(path, batch_size=32)
    np.testing.assert_allclose(
        one.sentence_embeddings(TEXTS, pooling="mean"),
        many.sentence_embeddings(TEXTS, pooling="mean"),
        atol=1e-5,
    )
    spans = [[(m.start(), m.end()) for m in re.finditer(r"\S+", t)] for t in TEXTS]
    a = one.word_vectors(TEXTS, spans, None)
    b = many.word_vectors(TEXTS, spans, None)
    assert a.found.tolist() == b.found.tolist()
    np.testing.assert_allclose(a.vectors[:, a.found], b.vectors[:, b.found], atol=1e-5)
    assert one.forward_calls == len(set(TEXTS)) * 2 and many.forward_calls == 2


def test_duplicate_texts_are_encoded_once(tiny_bert):
    enc = HFEncoder(tiny_bert, batch_size=2)
    out = enc.sentence_embeddings(["cat", "the mat", "cat", "cat"])
    assert enc.forward_calls == 1
    np.testing.assert_array_equal(out[0], out[2])


def test_cjk_without_spaces(tiny_bert, tiny_xlmr):
    text = "我爱北京"
    for path in (tiny_bert, tiny_xlmr):
        enc = HFEncoder(path)
        ts = enc.token_states([text], [1])[0]
        visible = ts.offsets[:, 1] > ts.offsets[:, 0]  # XLM-R starts with a bare, zero-width '▁'
        assert [text[s:e] for s, e in ts.offsets[visible]] == ["我", "爱", "北", "京"]
        wv = enc.word_vectors([text], [[(0, 1), (1, 2), (2, 4)]], [1])
        assert wv.found.all()
        np.testing.assert_allclose(
            wv.vectors[0, 2], ts.states[0, visible][2:4].mean(axis=0), atol=1e-6
        )


def test_combining_marks_stay_inside_their_word(tiny_bert, tiny_xlmr):
    text = "e\u0301cole hello"  # decomposed é: 'e' + COMBINING ACUTE ACCENT
    bert = HFEncoder(tiny_bert).token_states([text], [0])[0]
    assert bert.tokens == ["ecole", "hello"] and bert.offsets.tolist() == [[0, 6], [7, 12]]
    xlmr = HFEncoder(tiny_xlmr)
    ts = xlmr.token_states([text], [0])[0]
    assert ts.tokens[:2] == ["▁e", "\u0301"] and ts.offsets[1].tolist() == [1, 2]
    wv = xlmr.word_vectors([text], [[(0, 6)]], [0])
    np.testing.assert_allclose(wv.vectors[0, 0], ts.states[0, :6].mean(axis=0), atol=1e-6)


def test_whitespace_only_tokens_never_enter_a_word(tiny_xlmr):
    text = "hello 北京"
    enc = HFEncoder(tiny_xlmr)
    ts = enc.token_states([text], [0, 3])[0]
    assert ts.tokens == ["▁hello", "▁", "北", "京"]
    assert ts.offsets[1, 0] == ts.offsets[1, 1]  # the bare '▁' is zero-width
    wv = enc.word_vectors([text], [[(6, 8)]], [0, 3])
    for j in range(2):
        np.testing.assert_allclose(wv.vectors[j, 0], ts.states[j, 2:4].mean(axis=0), atol=1e-6)
        assert not np.allclose(wv.vectors[j, 0], ts.states[j, 1:4].mean(axis=0), atol=1e-4)


def test_truncation_is_reported_and_words_are_dropped_not_filled(tmp_path, tiny_builders):
    path = tiny_builders["bert"](tmp_path / "short", max_length=8)
    enc = HFEncoder(path)
    text = "the cat sat on the mat hello world"  # 8 words + 2 specials > 8
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    ts = enc.token_states([text, "cat"], [0])
    assert [t.truncated for t in ts] == [True, False]
    assert len(ts[0].tokens) == 6
    wv = enc.word_vectors([text], [spans], [0])
    assert wv.truncated_texts == 1
    assert wv.found.tolist() == [True] * 6 + [False] * 2
    assert np.isnan(wv.vectors[0, 6:]).all() and not np.isnan(wv.vectors[0, :6]).any()
    assert wv.notes == ["2 word(s) not covered by any token (truncation) were dropped"]
    assert (
        enc.truncated_total == 2
    )  # counted per encoding: token_states, then word_vectors (no cache)


def test_a_word_whose_states_never_come_back_is_nan_not_unset_memory(tiny_bert, monkeypatch):
    enc = HFEncoder(tiny_bert)
    texts = ["the cat sat", "hello world", "the cat sat"]
    spans = [[(0, 3), (4, 7)], [(0, 5), (6, 11)], [(0, 3), (4, 7)]]
    forward = HFEncoder._forward

    def losing_the_second_text(self, todo, *args, **kwargs):
        for i, hidden, rec in forward(self, todo, *args, **kwargs):
            if todo[i] != "hello world":
                yield i, hidden, rec

    monkeypatch.setattr(HFEncoder, "_forward", losing_the_second_text)
    wv = enc.word_vectors(texts, spans, None)
    assert wv.found.tolist() == [True, True, False, False, True, True]
    assert np.isnan(wv.vectors[:, 2:4]).all()
    assert np.isfinite(wv.vectors[:, [0, 1, 4, 5]]).all()
    np.testing.assert_array_equal(wv.vectors[:, 4:], wv.vectors[:, :2])  # the repeat is a copy


def test_prompt_prefix_offsets_point_into_the_original_text(tiny_xlmr):
    prefixes = {"query": "query: ", "passage": "passage: "}
    enc = HFEncoder(tiny_xlmr, prefixes=prefixes)
    text = "hello world"
    ts = enc.token_states([text], [2], role="query")[0]
    assert ts.tokens == ["▁hello", "▁world"] and ts.offsets.tolist() == [[0, 5], [6, 11]]
    tokens, hidden = _reference_hidden(tiny_xlmr, text, prefix="query: ")
    assert tokens == ["<s>", "▁query", ":", "▁hello", "▁world", "</s>"]
    np.testing.assert_allclose(ts.states[0], hidden[2][3:5], atol=1e-6)
    # the model's mean pooling keeps the prompt and the special tokens (E5's average_pool)
    emb = enc.sentence_embeddings([text], pooling="mean", role="query")
    np.testing.assert_allclose(emb[0], hidden[3].mean(axis=0), atol=1e-6)
    plain = enc.sentence_embeddings([text], pooling="mean")
    assert not np.allclose(plain, emb, atol=1e-4)


def test_e5_prefixes_are_detected_from_the_model_id(tiny_xlmr):
    assert HFEncoder(
        tiny_xlmr, use_cache=False, model_id="intfloat/multilingual-e5-small"
    ).prefixes == {
        "query": "query: ",
        "passage": "passage: ",
    }
    assert HFEncoder(tiny_xlmr).prefixes == {}


def test_cache_hits_skip_the_forward_pass(tiny_bert, tmp_path):
    cache = tmp_path / "emb"
    enc = with_cache(HFEncoder(tiny_bert), cache)
    spans = [[(0, 3), (4, 7)], [(0, 5)]]
    texts = ["the cat", "hello"]
    first = enc.word_vectors(texts, spans, [1, 2])
    sent = enc.sentence_embeddings(texts, pooling="mean", layer=2)
    assert enc.forward_calls == 2
    # same requests, a subset of layers, and a fresh encoder on the same cache: no forward pass
    again = with_cache(HFEncoder(tiny_bert), cache)
    np.testing.assert_array_equal(again.word_vectors(texts, spans, [1, 2]).vectors, first.vectors)
    np.testing.assert_array_equal(
        again.word_vectors(texts, spans, [2]).vectors[0], first.vectors[1]
    )
    np.testing.assert_array_equal(again.sentence_embeddings(texts, pooling="mean", layer=2), sent)
    assert again.forward_calls == 0
    # a new text encodes only that text; other pooling or layer is a different entry
    again.sentence_embeddings(texts + ["the mat"], pooling="mean", layer=2)
    assert again.forward_calls == 1
    again.sentence_embeddings(texts, pooling="cls", layer=2)
    assert again.forward_calls == 2
    # use_cache=False never reads it
    off = load_encoder(f"hf:{tiny_bert}", cache_dir=cache, use_cache=False)
    assert isinstance(off, HFEncoder)
    off.sentence_embeddings(texts, pooling="mean", layer=2)
    assert off.forward_calls == 1


def test_cache_location_follows_xlbench_cache(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("XLBENCH_CACHE", str(tmp_path / "root"))
    enc = load_encoder(f"hf:{tiny_bert}")
    assert isinstance(enc, CachedEncoder) and isinstance(enc.inner, HFEncoder)
    enc.sentence_embeddings(["cat"])
    assert enc.cache.path.parent == tmp_path / "root" / "embeddings"
    assert len(enc.cache) == 1


def test_options_are_accepted_and_unknown_ones_ignored(tiny_bert, tmp_path):
    enc = load_encoder(
        f"hf:{tiny_bert}",
        batch_size=4,
        device="cpu",
        cache_dir=str(tmp_path),
        use_cache=True,
        some_future_option=1,
    )
    assert enc.batch_size == 4 and enc.device == "cpu"


def test_error_unknown_layer(tiny_bert):
    enc = HFEncoder(tiny_bert)
    with pytest.raises(
        UsageError, match=r"^Layer 5 is out of range: this model has layers 0\.\.2\.$"
    ):
        enc.token_states(["cat"], [5])
    with pytest.raises(UsageError, match=r"Layer -4 is out of range"):
        enc.sentence_embeddings(["cat"], layer=-4)


def test_error_unknown_role_and_pooling(tiny_bert):
    enc = HFEncoder(tiny_bert)
    with pytest.raises(
        UsageError, match=r"^Unknown role 'question'; use 'query', 'passage' or leave it unset\.$"
    ):
        enc.sentence_embeddings(["cat"], role="question")
    with pytest.raises(
        UsageError, match=r"^Unknown pooling 'max'; choose one of mean, cls, model, mean_content\.$"
    ):
        enc.sentence_embeddings(["cat"], pooling="max")


def test_error_missing_path(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(
        InputFileError, match=r"^Model folder .*nope' does not exist; pass an existing folder"
    ):
        load_encoder(f"hf:{missing}")
    with pytest.raises(UsageError, match=r"^Model spec 'hf:' needs a model id or folder"):
        load_encoder("hf:")


def test_error_folder_without_model(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        InputFileError,
        match=r"^Model folder .*empty' has no config\.json; pass a folder written by",
    ):
        HFEncoder(str(tmp_path / "empty"))


def test_error_bad_batch_size(tiny_bert):
    with pytest.raises(UsageError, match=r"^batch_size must be a positive integer, got 0\.$"):
        HFEncoder(tiny_bert, batch_size=0)
    with pytest.raises(UsageError, match=r"^batch_size must be a positive integer, got True\.$"):
        HFEncoder(tiny_bert, batch_size=True)


def test_unreachable_hub_id_is_a_remote_error(monkeypatch):
    from evaluators.core.errors import RemoteError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        (RemoteError, EngineUnavailableError), match=r"Cannot load 'xlbench-test/does-not-exist'"
    ):
        load_encoder("hf:xlbench-test/does-not-exist@0123abc")


def test_encoder_half_of_an_encoder_decoder_model(tiny_xlmr, tmp_path):
    import shutil

    import torch
    from transformers import T5Config, T5Model

    folder = tmp_path / "tiny-t5"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(f"{tiny_xlmr}/{name}", folder / name)
    torch.manual_seed(0)
    config = T5Config(
        vocab_size=64,
        d_model=16,
        d_kv=8,
        d_ff=32,
        num_layers=2,
        num_heads=2,
        pad_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=1,
    )
    T5Model(config).eval().save_pretrained(folder)
    enc = load_encoder(f"hf:{folder}", use_cache=False)
    assert enc.num_layers == 2
    ts = enc.token_states(["hello world"], None)[0]
    assert ts.tokens == ["▁hello", "▁world"] and ts.states.shape == (3, 2, 16)
    model = T5Model.from_pretrained(folder).eval()
    with torch.inference_mode():
        hidden = model.get_encoder()(
            input_ids=torch.tensor([[0, 5, 6, 2]]), output_hidden_states=True
        ).hidden_states
    np.testing.assert_allclose(ts.states[2], hidden[2][0, 1:3].numpy(), atol=1e-6)


def test_empty_text_round_trips_through_the_cache(tiny_bert, tmp_path):
    enc = with_cache(HFEncoder(tiny_bert), tmp_path)
    first = enc.token_states(["", "cat"], None)
    again = with_cache(HFEncoder(tiny_bert), tmp_path).token_states(["", "cat"], None)
    assert first[0].states.shape == again[0].states.shape == (3, 0, 16)
    assert again[0].tokens == [] and again[0].offsets.shape == (0, 2)
    np.testing.assert_array_equal(first[1].states, again[1].states)
    wv = enc.word_vectors([""], [[(0, 1)]], [1])
    assert wv.found.tolist() == [False] and np.isnan(wv.vectors).all()


#: Half-precision agreement with fp32, per layer (minimum cosine over every word vector).
#: bf16 keeps 8 significant bits: each stored value is off by at most 2**-9 (0.2 %)
#: relative, and a vector whose error is e relative to its length keeps cosine
#: ~1 - e**2 / 2, so even an error grown to 4 % through the blocks keeps 0.999 (measured
#: on this model: 0.99996). fp16 keeps 11 bits, 8x finer: 0.9999 (measured: 0.9999995).
HALF_TOLERANCE = {"bfloat16": 0.999, "float16": 0.9999}


@pytest.mark.parametrize("dtype", sorted(HALF_TOLERANCE))
def test_half_precision_agrees_with_fp32_per_layer(dtype, tmp_path, tiny_builders, torch_device):
    """The CUDA default (bf16, fp16 without bf16), on CPU tensors and on CUDA, against fp32 on the CPU."""
    path = tiny_builders["bert"](
        tmp_path / "bert64",
        hidden_size=64,
        num_hidden_layers=4,
        num_attention_heads=4,
        intermediate_size=128,
    )
    texts = ["the cat sat on the mat", "hello world", "unbelievable hello", "cat sat", "the mat"]
    spans = [[(m.start(), m.end()) for m in re.finditer(r"\S+", t)] for t in texts]
    full = HFEncoder(path, device="cpu")
    half = HFEncoder(path, device=torch_device, dtype=dtype)
    assert str(next(half.model.parameters()).dtype) == f"torch.{dtype}"
    dev = half.word_key_params(None)["dev"]
    assert dev == f"{torch_device}-{dtype}" != full.word_key_params(None)["dev"]
    a = full.word_vectors(texts, spans, None).vectors
    b = half.word_vectors(texts, spans, None).vectors
    assert b.dtype == np.float32 and a.shape == b.shape == (5, 14, 64)  # 5 layers, 14 words
    assert not np.array_equal(a, b)  # it really ran in half precision
    cos = (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert cos.min(axis=1).min() >= HALF_TOLERANCE[dtype], cos.min(axis=1)
    grid_a = full.embed_sentences(texts, layers=[0, -1], poolings=["mean", "cls"])
    grid_b = half.embed_sentences(texts, layers=[0, -1], poolings=["mean", "cls"])
    for key, matrix in grid_a.items():
        c = (matrix * grid_b[key]).sum(-1)
        c /= np.linalg.norm(matrix, axis=-1) * np.linalg.norm(grid_b[key], axis=-1)
        assert c.min() >= HALF_TOLERANCE[dtype], key
