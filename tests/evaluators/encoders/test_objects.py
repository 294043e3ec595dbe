"""Live model objects (issue 26 item 3): each gets an identity from what it is, and the prompt signed is applied."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import xlbench
from evaluators.core.errors import ModelError, UsageError
from evaluators.encoders.identity import folder_model_name
from evaluators.run.runner import RunOptions, open_model

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "query",
    "passage",
    ":",
    *"abcdefghijklmnopqrstuvwxyz",
]


def tiny_st(folder: Path, seed: int, prompts: dict[str, str] | None = None):
    """A SentenceTransformer over a random 1-layer BERT, built here (no download)."""
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    from sentence_transformers import models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(seed)
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(VOCAB), encoding="utf-8")
    BertTokenizerFast(str(folder / "vocab.txt")).save_pretrained(folder)
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32,
    )  # fmt: skip
    BertModel(config).save_pretrained(folder)
    modules = [models.Transformer(str(folder)), models.Pooling(16)]
    return st.SentenceTransformer(modules=modules, device="cpu", prompts=prompts)


@pytest.fixture(scope="module")
def two_st(tmp_path_factory):
    root = tmp_path_factory.mktemp("st")
    return tiny_st(root / "a", 0), tiny_st(root / "b", 1, {"query": "query: ", "passage": ""})


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefgh"), 4)) for _ in range(60)]
    src = [" ".join(words[i : i + 3]) for i in range(0, 45, 3)]
    tgt = [" ".join(reversed(s.split())) for s in src]
    paths = tmp_path / "s.txt", tmp_path / "t.txt"
    for path, lines in zip(paths, (src, tgt)):
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [str(p) for p in paths]


def test_st_object_identity_is_its_weights(two_st):
    a, b = two_st
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a weights digest is an identity: no warning
        ia, ib = open_model(a, RunOptions()).identity, open_model(b, RunOptions()).identity
    assert ia.revision_source == "weights" and len(ia.revision) == 64
    assert ia.revision != ib.revision and "unknown" not in ia.id
    assert open_model(a, RunOptions()).identity.revision == ia.revision  # stable


def test_st_object_applies_its_query_prompt(two_st):
    _, b = two_st
    enc = open_model(b, RunOptions(use_cache=False)).encoder
    got = enc.sentence_embeddings(["abc d"], role="query")
    want = b.encode(["query: abc d"], convert_to_numpy=True)
    plain = b.encode(["abc d"], convert_to_numpy=True)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert not np.allclose(got, plain, atol=1e-5)  # the prompt changes the vector


def test_two_different_objects_share_one_out(two_st, files, tmp_path):
    a, b = two_st
    out = tmp_path / "out"
    for model in (a, b):
        xlbench.evaluate(
            "bitext-retrieval",
            model=model,
            src=files[0],
            tgt=files[1],
            out=str(out),
            use_cache=False,
        )
    results = [json.loads(p.read_text()) for p in out.rglob("*.json")]
    assert len({r["model"]["revision"] for r in results}) == 2
    # The prompt signed is the one applied: b has "query: ", a has none.
    prompts = {r["model"]["revision"]: r["signature"] for r in results}
    assert any('|role:query|prompt:"query: "|' in s for s in prompts.values())
    assert any("|role:query|prompt:none|" in s for s in prompts.values())


@pytest.mark.parametrize(
    "model, signed",
    [
        ((lambda texts: np.ones((len(texts), 2)), "f@1"), "prompt:none"),
        ((lambda texts, role=None: np.ones((len(texts), 2)), "f@2"), "prompt:by-model"),
        ("random", "prompt:none"),
    ],
)
def test_the_signature_says_what_prompt_reached_the_model(model, signed, files):
    result = xlbench.evaluate(
        "bitext-retrieval", model=model, src=files[0], tgt=files[1], use_cache=False
    )
    assert f"|role:query|{signed}|" in result.signature


def test_mteb_model_object_is_accepted_as_held(two_st):
    pytest.importorskip("mteb")
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    a, _ = two_st
    wrapped = SentenceTransformerEncoderWrapper(a)
    with pytest.warns(UserWarning, match=r'model=\(obj, "name@rev"\)'):
        opened = open_model(wrapped, RunOptions(use_cache=False))
    assert opened.identity.revision == open_model(a, RunOptions()).identity.revision  # its weights
    got = opened.encoder.sentence_embeddings(["abc d", "ef"], role="query")
    np.testing.assert_allclose(got, a.encode(["abc d", "ef"]), atol=1e-5)


def test_plain_function_is_accepted_and_named():
    def embed(texts):
        return np.array([[len(t), 1.0] for t in texts])

    with pytest.warns(UserWarning, match="from its source"):
        opened = open_model(embed, RunOptions(use_cache=False))
    assert opened.identity.id.endswith(":test_plain_function_is_accepted_and_named.<locals>.embed")
    named = open_model((embed, "lengths@v1"), RunOptions(use_cache=False)).identity
    assert (named.id, named.revision, named.revision_source) == ("lengths", "v1", "user")


@pytest.mark.parametrize(
    "output, words",
    [
        (lambda t: np.full((len(t), 3), np.nan), "non-finite"),
        (lambda t: np.zeros((len(t), 3)), "all-zero"),
        (lambda t: [["x"] * 3 for _ in t], "not numbers"),
        (lambda t: np.ones(3), "shape (3,)"),
        (lambda t: 1 / 0, "raised ZeroDivisionError"),
    ],
)
def test_bad_model_output_is_one_sentence_naming_the_model(output, words):
    enc = open_model((output, "bad@1"), RunOptions(use_cache=False)).encoder
    with pytest.raises(ModelError, match="^Model bad ") as err:
        enc.sentence_embeddings(["a", "b"], role="query")
    assert words in str(err.value) and "\n" not in str(err.value)


def test_folder_names_ignore_template_cards_and_read_the_hub_cache(tmp_path):
    snap = tmp_path / "hub" / "models--org--fine-tuned" / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps({"_name_or_path": "org/base-model"}))
    assert folder_model_name(snap) == "org/fine-tuned"
    plain = tmp_path / "my-model"
    plain.mkdir()
    (plain / "README.md").write_text("---\nlicense: mit\n---\n# Model Card for Model ID\n")
    assert folder_model_name(plain) == "my-model"


class _NoBatch:
    """``encode(sentences)`` without ``batch_size``: what many hand-written models look like."""

    def encode(self, sentences):
        return np.array([[len(s), s.count("a") + 1.0] for s in sentences])


def test_an_encode_without_batch_size_a_class_and_words_for_vectors(files):
    src, tgt = files
    with pytest.warns(UserWarning, match="carries no revision"):
        result = xlbench.evaluate("bitext-retrieval", model=_NoBatch(), src=str(src), tgt=str(tgt))
    assert result.main_score is not None
    with pytest.raises(
        UsageError, match=r"model is the class _NoBatch, not a model; pass an instance"
    ):
        xlbench.evaluate("bitext-retrieval", model=_NoBatch, src=str(src), tgt=str(tgt))
    words = _NoBatch()
    words.encode = lambda sentences: [["x"] * 3 for _ in sentences]  # no revision: probed first
    with pytest.raises(ModelError, match="is not an array of numbers"):
        xlbench.evaluate("bitext-retrieval", model=words, src=str(src), tgt=str(tgt))
