"""--corpus is declared once for every builder and cannot move a build's content id when left out."""

from __future__ import annotations

import dataclasses

import pytest

from builders.base import key_params, manifest_params, signature_params
from builders.registry import get_builder
from evaluators.core.params import sig_label


@pytest.mark.parametrize("family", ["cbd", "bucc", "silver", "alee"])
def test_every_builder_declares_corpus_out_of_the_signature(family):
    cls = get_builder(family).params_class()
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert fields["corpus"].default is None and fields["corpus_opt"].default == ()
    required = {"lang": "eng-deu"} if "lang" in fields else {"langs": ("deu",)}
    params = cls(**required)
    # Left out of everything hashed or spelled out: builds without --corpus keep their ids.
    for view in (signature_params(params), key_params(params), manifest_params(params)):
        assert "corpus" not in view and "corpus_opt" not in view and "corpus-opt" not in view
    assert sig_label(fields["corpus"]) is None and sig_label(fields["corpus_opt"]) is None
