"""Optional extras fail with one sentence naming the pip command."""

from __future__ import annotations

import sys

import pytest

from evaluators.core.errors import EngineUnavailableError
from evaluators.core.optional import require


def test_plots_without_matplotlib_name_the_extra(monkeypatch):
    from evaluators import plots

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with pytest.raises(
        EngineUnavailableError, match=r"--plot needs 'matplotlib'.*pip install 'xlbench\[plots\]'"
    ):
        plots.pyplot()


def test_require_looks_up_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(
        EngineUnavailableError, match=r"hf: encoders needs 'torch'.*xlbench\[encoders\]"
    ):
        require("torch", feature="hf: encoders")
