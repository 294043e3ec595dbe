"""NLI filter: the decision rule on scripted probabilities, and the adapter on a tiny random model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from builders.alee.logic.nli_filter import decide, predicted
from evaluators.core.errors import EngineUnavailableError


def p(e, n, c):
    return {"entailment": e, "neutral": n, "contradiction": c}


@pytest.mark.parametrize(
    ("fwd", "bwd", "kwargs", "keep", "reason"),
    [
        (p(0.1, 0.1, 0.8), p(0.1, 0.2, 0.7), {}, True, "kept"),
        # both directions predict entailment (below the threshold): a paraphrase, rejected
        (p(0.6, 0.3, 0.1), p(0.5, 0.4, 0.1), {}, False, "bidirectional-entailment"),
        # ... unless that test is disabled
        (p(0.6, 0.3, 0.1), p(0.5, 0.4, 0.1), {"reject_bidirectional": False}, True, "kept"),
        # one direction above 0.8 (a hypernym foil entailed by its original)
        (p(0.85, 0.1, 0.05), p(0.1, 0.8, 0.1), {}, False, "entail-prob"),
        (p(0.1, 0.8, 0.1), p(0.81, 0.1, 0.09), {}, False, "entail-prob"),
        # strict ">": exactly at the threshold is kept; a stricter threshold rejects
        (p(0.8, 0.1, 0.1), p(0.1, 0.1, 0.8), {}, True, "kept"),
        (p(0.5, 0.4, 0.1), p(0.1, 0.1, 0.8), {"threshold": 0.45}, False, "entail-prob"),
        # entailment one way only, below the threshold: kept
        (p(0.7, 0.2, 0.1), p(0.1, 0.2, 0.7), {}, True, "kept"),
    ],
)
def test_decision_rule(fwd, bwd, kwargs, keep, reason):
    d = decide(fwd, bwd, **kwargs)
    assert (d.keep, d.reason) == (keep, reason)
    assert (d.p_entail_orig_foil, d.p_entail_foil_orig) == (fwd["entailment"], bwd["entailment"])


def test_two_label_model_prediction():
    nan = math.nan
    assert predicted(p(0.7, nan, nan)) == "entailment"
    assert predicted(p(0.3, nan, nan)) == "not-entailment"
    assert decide(p(0.6, nan, nan), p(0.55, nan, nan)).reason == "bidirectional-entailment"


VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "cat",
    "dog",
    "sleeps",
    "does",
    "not",
    "sleep",
    ".",
]


def tiny_model(tmp_path, id2label):
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    torch.manual_seed(0)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    tok = BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True)
    cfg = BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64, num_labels=len(id2label), initializer_range=0.5,
        id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )  # fmt: skip
    return BertForSequenceClassification(cfg).eval(), tok


def test_adapter_reads_label_order_from_config(tmp_path):
    import torch

    from builders.adapters.nli import NliModel

    # deliberately not the MNLI order: entailment is label 2
    model, tok = tiny_model(tmp_path, {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"})
    nli = NliModel(model, tok, "tiny", "r0", batch_size=2, device="cpu")
    assert nli.labels == {"entailment": 2, "neutral": 1, "contradiction": 0}
    origs = ["the cat sleeps .", "the dog sleeps .", "the cat sleeps ."]
    foils = ["the cat does not sleep .", "the cat sleeps .", "the dog does not sleep ."]
    fwd, bwd = nli.both_directions(origs, foils)
    with torch.no_grad():
        enc = tok(origs, foils, padding=True, return_tensors="pt")
        ref = torch.softmax(model(**enc).logits, -1).numpy()
        enc_b = tok(foils, origs, padding=True, return_tensors="pt")
        ref_b = torch.softmax(model(**enc_b).logits, -1).numpy()
    for i in range(3):
        assert fwd[i]["entailment"] == pytest.approx(float(ref[i, 2]), abs=1e-6)
        assert fwd[i]["contradiction"] == pytest.approx(float(ref[i, 0]), abs=1e-6)
        assert bwd[i]["entailment"] == pytest.approx(float(ref_b[i, 2]), abs=1e-6)
        assert sum(fwd[i].values()) == pytest.approx(1.0, abs=1e-5)
    # the direction matters for a real (even random) cross-encoder
    assert not np.allclose([f["entailment"] for f in fwd], [b["entailment"] for b in bwd])


def test_adapter_two_label_model(tmp_path):
    from builders.adapters.nli import NliModel

    model, tok = tiny_model(tmp_path, {0: "entailment", 1: "not_entailment"})
    nli = NliModel(model, tok, device="cpu")
    (out,) = nli.probabilities(["the cat sleeps ."], ["the dog sleeps ."])
    assert 0.0 < out["entailment"] < 1.0
    assert math.isnan(out["neutral"]) and math.isnan(out["contradiction"])


def test_adapter_rejects_model_without_entailment(tmp_path):
    from builders.adapters.nli import NliModel

    model, tok = tiny_model(tmp_path, {0: "POSITIVE", 1: "NEGATIVE"})
    with pytest.raises(EngineUnavailableError, match="name no 'entailment' class"):
        NliModel(model, tok, device="cpu")


def test_missing_model_says_how_to_fix(tmp_path):
    from builders.adapters.nli import NliModel

    with pytest.raises(
        EngineUnavailableError, match="pass --nli-model <local folder>, or pass --no-nli"
    ):
        NliModel.from_pretrained(str(tmp_path / "no-such-model"))
