"""SimAlign's itermax on its own similarity, against xlbench's embedding aligner.

The always-run test uses the transcription of SimAlign's ``iter_max`` in
``tests/evaluators/aligners/test_embedding_aligner.py``; when ``XLBENCH_SIMALIGN_DIR``
names a cisnlp/simalign checkout (and torch, transformers, scikit-learn, scipy are
installed), SimAlign's ``simalign/simalign.py`` is imported and run unmodified.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from evaluators.aligners.embedding import argmax_align, itermax_align, similarity_matrix

_TESTS = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "embedding_aligner_tests", _TESTS / "evaluators" / "aligners" / "test_embedding_aligner.py"
)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
simalign_iter_max = _mod._simalign_itermax_reference


def _links(matrix: np.ndarray) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(matrix > 0))}


def _vectors(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    m, n = rng.integers(3, 12, size=2)
    return rng.standard_normal((m, 16)), rng.standard_normal((n, 16))


def test_default_itermax_is_simalign_on_shifted_cosine():
    changed = 0
    for seed in range(300):
        x, y = _vectors(seed)
        cos = similarity_matrix(x, y, "cosine")
        ours = itermax_align(similarity_matrix(x, y))
        assert ours == _links(simalign_iter_max((cos + 1.0) / 2.0))
        changed += ours != itermax_align(cos)
        assert argmax_align(similarity_matrix(x, y)) == argmax_align(cos)  # argmax: unchanged
    assert changed > 0  # raw cosine is a different rule (random vectors: many negative cosines)


_SIMALIGN = os.environ.get("XLBENCH_SIMALIGN_DIR")
_DEPS = ("torch", "transformers", "sklearn", "scipy")


@pytest.mark.skipif(
    not _SIMALIGN or any(importlib.util.find_spec(d) is None for d in _DEPS),
    reason="set XLBENCH_SIMALIGN_DIR to a cisnlp/simalign checkout (with torch, transformers, "
    "scikit-learn, scipy installed) to run SimAlign's simalign.py unmodified",
)
def test_simalign_file_unmodified():
    sys.path.insert(0, _SIMALIGN)
    try:
        from simalign.simalign import SentenceAligner
    finally:
        sys.path.remove(_SIMALIGN)
    for seed in range(1000):
        x, y = _vectors(seed)
        sim = SentenceAligner.get_similarity(x, y)
        fwd, rev = SentenceAligner.get_alignment_matrix(sim)
        assert itermax_align(similarity_matrix(x, y)) == _links(SentenceAligner.iter_max(sim))
        assert argmax_align(similarity_matrix(x, y)) == _links(fwd * rev)
