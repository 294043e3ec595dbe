"""``--device`` of the builders' models (issue #26 item 8): one check, one sentence."""

from __future__ import annotations

import pytest

from builders.adapters.device import resolve_device, run_device
from evaluators.core.errors import UsageError


@pytest.fixture
def no_cuda(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


def test_cuda_asked_for_but_absent_is_one_sentence(no_cuda):
    with pytest.raises(
        UsageError, match=r"^--device cuda is not available on this machine \(0 CUDA device"
    ) as err:
        resolve_device("cuda")
    assert "--device cpu" in str(err.value) and str(err.value).count(". ") == 0
    assert resolve_device(None) == resolve_device("cpu") == "cpu"


def test_bad_names_are_refused_on_every_engine():
    for engine in ("local", "ray"):
        with pytest.raises(UsageError, match="'gpu0' is not a device"):
            run_device("gpu0", engine)
    assert run_device(None, "ray").startswith("auto")  # each worker resolves its own


def test_model_adapters_resolve_the_device(no_cuda, tmp_path):
    """The masked LM and hf: MT refuse cuda where it is absent, before any weights load."""
    from builders.adapters.mlm import MLMSubstitutes
    from builders.adapters.mt import TransformersTranslator

    with pytest.raises(UsageError, match="--device cuda:1"):
        MLMSubstitutes(str(tmp_path / "m"), device="cuda:1").load()
    with pytest.raises(UsageError, match="--device cuda"):
        TransformersTranslator(str(tmp_path / "m"), ("eng_Latn", "spa_Latn"), device="cuda")._load()
