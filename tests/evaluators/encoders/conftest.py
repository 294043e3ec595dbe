"""Tiny randomly initialised models, built from transformers configs and saved to a temp dir."""

from __future__ import annotations

import pytest

BERT_WORDS = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "hello",
    "world",
    "un",
    "##believ",
    "##able",
    "ecole",
    "我",
    "爱",
    "北",
    "京",
    ".",
    ",",
    "!",
    "?",
]
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)]


def build_bert(folder, max_length: int = 64, seed: int = 0, **shape) -> str:
    """Save a random BERT with a WordPiece vocab to ``folder``; return its path.

    2 blocks of hidden size 16 unless ``shape`` overrides ``BertConfig`` fields (the ONNX
    benchmark builds multilingual-e5-small's shape with it).
    """
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = BERT_WORDS + LETTERS + ["##" + c for c in LETTERS]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(
        vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True, model_max_length=max_length
    )
    tok.save_pretrained(folder)
    torch.manual_seed(seed)
    dims = {
        "hidden_size": 16,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "max_position_embeddings": 128,
    }
    config = BertConfig(vocab_size=len(vocab), **{**dims, **shape})
    BertModel(config).eval().save_pretrained(folder)
    return str(folder)


def build_xlmr(folder, max_length: int = 32, seed: int = 0) -> str:
    """Save a 3-block XLM-R (hidden 16) with a Unigram/Metaspace tokenizer to ``folder``; return its path."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaModel

    folder.mkdir(parents=True, exist_ok=True)
    pieces = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0)]
    pieces += [
        (w, -3.0)
        for w in (
            "▁hello",
            "▁world",
            "▁the",
            "▁cat",
            "▁un",
            "believ",
            "able",
            "▁query",
            "▁passage",
            ":",
        )
    ]
    # CJK pieces exist only without "▁", so "hello 北京" yields a bare "▁" token, as XLM-R does.
    pieces += [(c, -4.0) for c in ("北", "京", "我", "爱", "é", "\u0301")]
    pieces += [(c, -5.0) for c in LETTERS] + [("▁" + c, -6.0) for c in LETTERS]
    tok = Tokenizer(models.Unigram(pieces, unk_id=3, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="always", split=True
    )
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    tok.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>"])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        model_max_length=max_length,
    )
    fast.save_pretrained(folder)
    torch.manual_seed(seed)
    config = XLMRobertaConfig(
        vocab_size=len(pieces),
        hidden_size=16,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=max_length + 2,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    )
    XLMRobertaModel(config).eval().save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> str:
    """Path of a tiny BERT folder (max length 64)."""
    return build_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_xlmr(tmp_path_factory) -> str:
    """Path of a tiny XLM-R folder (max length 32)."""
    return build_xlmr(tmp_path_factory.mktemp("tiny-xlmr"))


@pytest.fixture(scope="session")
def tiny_builders() -> dict:
    """The builder functions, for tests that need a variant (e.g. a short maximum length)."""
    return {"bert": build_bert, "xlmr": build_xlmr}
