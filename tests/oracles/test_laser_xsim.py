"""Margin retrieval (``bitext-retrieval --margin-candidates``) against LASER's xSIM.

``xsim_reference.py`` transcribes LASER's ``source/xsim.py``; when
``XLBENCH_LASER_DIR`` names a LASER checkout (and faiss is installed), LASER's
own file is imported and run unmodified on the same inputs.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

from evaluators.metrics import mining as M


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


xsim_ref = _load("xsim_reference", Path(__file__).with_name("xsim_reference.py"))

# Planted: with k = 2, source 5's two nearest targets are 4 (cos 0.77) and 0 (0.72); its
# translation, target 5, is only its third neighbour (0.70) but has far neighbours of its
# own, so its ratio margin (1.19) beats target 0's (1.07) and target 4's (0.93). LASER's
# xSIM looks at the 2 neighbours and retrieves 0 (an error); the argmax over every target
# retrieves 5. The other sources agree under both conventions.
X = np.array(
    [
        [0.9, 0.8, -0.0],
        [0.7, -0.7, -1.8],
        [1.7, 0.5, -2.1],
        [-1.1, -0.6, 0.3],
        [1.3, 0.3, -0.4],
        [0.5, -0.2, 0.2],
    ]
)
Y = np.array(
    [
        [0.5, 0.1, 0.8],
        [0.5, -0.6, -2.2],
        [1.4, 0.3, -1.7],
        [-0.4, -0.3, -0.0],
        [3.0, 0.8, 0.2],
        [0.2, -0.3, 0.6],
    ]
)


def _correct(errors: int, n: int) -> int:
    return n - errors


def test_planted_case_separates_the_two_conventions():
    knn = M.retrieval_accuracy(X, Y, "ratio", k=2, candidates="knn")
    every = M.retrieval_accuracy(X, Y, "ratio", k=2, candidates="all")
    laser_fwd = _correct(xsim_ref.xsim_errors(X, Y, "ratio", k=2), len(X))
    laser_bwd = _correct(xsim_ref.xsim_errors(Y, X, "ratio", k=2), len(X))
    assert (knn.forward_correct, knn.backward_correct) == (laser_fwd, laser_bwd)
    assert every.forward_correct != laser_fwd  # the planted difference is real
    assert xsim_ref.score_knn(X, Y, 2, "ratio").ravel().tolist() == [4, 1, 2, 3, 4, 0]
    assert every.forward_correct == knn.forward_correct + 1


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_knn_candidates_equal_xsim_on_random_sets(margin, k):
    for seed in range(20):
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((40, 6))
        y = x + 0.9 * rng.standard_normal(x.shape)
        s = M.retrieval_accuracy(x, y, margin, k=k)  # the default is knn
        assert s.forward_correct == _correct(xsim_ref.xsim_errors(x, y, margin, k), 40)
        assert s.backward_correct == _correct(xsim_ref.xsim_errors(y, x, margin, k), 40)


_LASER = os.environ.get("XLBENCH_LASER_DIR")


@pytest.mark.skipif(
    not _LASER or importlib.util.find_spec("faiss") is None,
    reason="set XLBENCH_LASER_DIR to a facebookresearch/LASER checkout (and install faiss-cpu) "
    "to run LASER's source/xsim.py unmodified",
)
def test_laser_xsim_file_unmodified():
    laser = _load("laser_xsim", Path(_LASER) / "source" / "xsim.py")
    cases = [(X, Y, 2)] + [
        (x, x + 0.9 * np.random.default_rng(s).standard_normal(x.shape), 4)
        for s, x in (
            (s, np.random.default_rng(100 + s).standard_normal((60, 8))) for s in range(10)
        )
    ]
    for x, y, k in cases:
        for margin in ("ratio", "distance"):
            ours = M.retrieval_accuracy(x, y, margin, k=k)
            fwd, n, _ = laser.xSIM(x.astype(np.float32), y.astype(np.float32), margin, k)
            bwd, _, _ = laser.xSIM(y.astype(np.float32), x.astype(np.float32), margin, k)
            assert (ours.forward_correct, ours.backward_correct) == (n - fwd, n - bwd)
