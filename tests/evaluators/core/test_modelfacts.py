"""Model facts: read from the encoder after scoring, kept out of a result's identity."""

from __future__ import annotations

import json

from evaluators.core.modelfacts import model_facts, read_facts
from evaluators.encoders import load_encoder
from evaluators.encoders.checked import checked
from evaluators.run.results import EvalResult, read_result, same_result


class _Tensor:
    def __init__(self, n: int):
        self.n = n

    def numel(self) -> int:
        return self.n


class _Module:
    def parameters(self):
        return iter([_Tensor(1000), _Tensor(24)])


class _HF:
    """What a transformers encoder exposes: a torch module, its hidden and head sizes, its limit."""

    model = _Module()
    dim, model_dim, num_layers, max_length = 768, 256, 12, 512


def test_facts_come_through_the_wrappers_every_model_sits_behind(tmp_path):
    enc = checked(load_encoder("random:16:3", cache_dir=str(tmp_path), use_cache=True))
    assert model_facts(enc) == {"embedding_dim": 16, "layers": 3, "max_tokens": 512}
    # the model's own embedding (a Dense head) is the size a reader compares, not the hidden size
    assert model_facts(_HF()) == {
        "parameters": 1024,
        "embedding_dim": 256,
        "layers": 12,
        "max_tokens": 512,
    }


def test_a_result_without_facts_is_the_same_computation_and_reads_back(tmp_path):
    new = EvalResult(
        "bucc", {"id": "d", "revision": "r"}, {"id": "m", "revision": "x"}, {}, {}, 0.5, "f1", "sig"
    )
    new.model_facts = {"layers": 2}
    old = new.to_dict()
    del old["model_facts"]  # a file written before facts were recorded
    assert same_result(old, new.to_dict())
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    assert read_result(path).to_eval_result().model_facts == {}
    assert read_facts({"layers": 2, "parameters": -1, "max_tokens": True}) == {"layers": 2}
