"""LASER's xSIM decision (``source/xsim.py``), transcribed for checking margin retrieval.

Transcribed from facebookresearch/LASER@74bc6ae7 ``source/xsim.py`` (BSD licence):
``_score_knn`` + ``score_margin`` + the index error of ``calculate_error``, with
faiss's ``IndexFlatIP`` search replaced by an exact numpy search in the same
order (inner product descending). Nothing is shared with
:mod:`evaluators.metrics.mining`. ``tests/oracles/test_laser_xsim.py`` also runs
LASER's file itself, unmodified, when a checkout is available.
"""

from __future__ import annotations

import numpy as np


def _search(index_rows, queries, k):
    """faiss ``IndexFlatIP.search``: the k largest inner products, best first."""
    sims = queries @ index_rows.T
    order = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(sims, order, axis=1), order


def score_margin(Dxy, Ixy, Ax, Ay, margin, k):
    nbex = Dxy.shape[0]
    scores = np.zeros((nbex, k))
    for i in range(nbex):
        for j in range(k):
            jj = Ixy[i, j]
            a = Dxy[i, j]
            b = (Ax[i] + Ay[jj]) / 2
            if margin == "ratio":
                scores[i, j] = a / b
            else:  # distance margin
                scores[i, j] = a - b
    return scores


def score_knn(x, y, k, margin):
    """Return each source's retrieved target (``(n, 1)`` indices), as LASER's ``_score_knn``."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    if margin == "absolute":
        return _search(y, x, 1)[1]
    cos_xy, idx_xy = _search(y, x, k)
    cos_yx, _ = _search(x, y, k)
    avg_xy = cos_xy.mean(axis=1)
    avg_yx = cos_yx.mean(axis=1)
    scores = score_margin(cos_xy, idx_xy, avg_xy, avg_yx, margin, k)
    best = scores.argmax(axis=1)
    return np.array([[idx_xy[i, best[i]]] for i in range(len(x))])


def xsim_errors(x, y, margin="ratio", k=4):
    """LASER's ``xSIM(x, y, margin, k)`` index error count (sources not retrieving their own line)."""
    nbex = x.shape[0]
    closest = score_knn(np.asarray(x, np.float32), np.asarray(y, np.float32), k, margin)
    ref = np.linspace(0, nbex - 1, nbex).astype(int)
    return nbex - int(np.equal(closest.reshape(nbex), ref).astype(int).sum())
