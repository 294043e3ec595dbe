"""``bitext-retrieval``: LASER's kNN margin candidates signed, and tie flags in both directions."""

from __future__ import annotations

import numpy as np

from evaluators.run.runner import evaluate
from evaluators.tasks.bitext_retrieval import cosine_items


def _files(tmp_path, n=30):
    src, tgt = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_text("".join(f"satz nummer {i}\n" for i in range(n)), encoding="utf-8")
    tgt.write_text("".join(f"sentence number {i}\n" for i in range(n)), encoding="utf-8")
    return str(src), str(tgt)


def test_margin_candidates_default_is_knn_and_signed(tmp_path):
    src, tgt = _files(tmp_path)
    knn = evaluate("bitext-retrieval", "random", src=src, tgt=tgt, use_cache=False)
    every = evaluate(
        "bitext-retrieval", "random", src=src, tgt=tgt, use_cache=False, margin_candidates="all"
    )
    assert "margin-candidates:knn" in knn.signature
    assert "margin-candidates:all" in every.signature


def test_tgt2src_tie_is_flagged():
    # sources 0 and 1 are the same vector: target 0's best source is a tie (both directions
    # differ: source 0's best target is unique).
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    y = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    rows = {r["item_id"]: r for r in cosine_items("s", x, y, ["a", "b", "c"], chunk_size=1)}
    assert rows["a:tgt2src"]["tie"] is True and rows["a:tgt2src"]["retrieved"] == "a"
    assert rows["a:src2tgt"]["tie"] is False
    assert rows["c:tgt2src"]["tie"] is False
