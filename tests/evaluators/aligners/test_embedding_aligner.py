"""SimAlign-style extraction on hand-made vectors, and the embedding-aligner CLI with the random encoder."""

from __future__ import annotations

import json

import numpy as np

from evaluators.aligners.embedding import argmax_align, cosine_matrix, itermax_align
from evaluators.cli import main as eval_main
from evaluators.tasks.embedding_aligner import spans_of


def _simalign_itermax_reference(sim, max_count=2, alpha_ratio=0.9):
    """SimAlign's iter_max re-stated with its one-hot/tile formulation (for cross-checking)."""
    m, n = sim.shape
    inter = np.eye(n)[sim.argmax(axis=1)] * np.eye(m)[sim.argmax(axis=0)].transpose()
    if min(m, n) <= 2:
        return inter
    count = 1
    while count < max_count:
        mask_x = 1.0 - np.tile(inter.sum(1)[:, None], (1, n)).clip(0.0, 1.0)
        mask_y = 1.0 - np.tile(inter.sum(0)[None, :], (m, 1)).clip(0.0, 1.0)
        mask = (alpha_ratio * mask_x + alpha_ratio * mask_y).clip(0.0, 1.0)
        mask_zeros = 1.0 - ((1.0 - mask_x) * (1.0 - mask_y))
        if mask_x.sum() < 1.0 or mask_y.sum() < 1.0:
            mask *= 0.0
            mask_zeros *= 0.0
        new_sim = sim * mask
        fwd = np.eye(n)[new_sim.argmax(axis=1)] * mask_zeros
        bac = np.eye(m)[new_sim.argmax(axis=0)].transpose() * mask_zeros
        new_inter = fwd * bac
        if np.array_equal(inter + new_inter, inter):
            break
        inter = inter + new_inter
        count += 1
    return inter


def test_hand_vectors_argmax_and_itermax():
    src = np.array([[1.0, 0.0, 0.0], [0.9, 0.3, 0.0], [0.0, 0.0, 1.0]])
    tgt = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    sim = cosine_matrix(src, tgt)
    # Source 1 prefers target 0, which prefers source 0: argmax leaves source 1 out.
    assert argmax_align(sim) == {(0, 0), (2, 2)}
    # itermax: source 1 is free; its damped similarities are 0.9 * 0.949 (target 0, taken) and
    # 1.0 * 0.316 (target 1, free), so it joins target 0 (many-to-one), as in SimAlign.
    assert itermax_align(sim) == {(0, 0), (1, 0), (2, 2)}
    # With target 0 much less attractive, the free pair (1, 1) wins instead.
    sim2 = np.array([[0.9, 0.1, 0.0], [0.3, 0.28, 0.0], [0.0, 0.1, 0.9]])
    assert argmax_align(sim2) == {(0, 0), (2, 2)}
    assert itermax_align(sim2) == {(0, 0), (1, 1), (2, 2)}
    # NaN vectors (unfound words) are never linked.
    src_nan = src.copy()
    src_nan[2] = np.nan
    assert (2, 2) not in argmax_align(cosine_matrix(src_nan, tgt))
    assert argmax_align(np.zeros((0, 3))) == set()


def test_itermax_matches_simalign_reference_on_random_matrices():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m, n = rng.integers(1, 9, size=2)
        sim = rng.standard_normal((m, n))
        ref = _simalign_itermax_reference(sim)
        expected = {(int(i), int(j)) for i, j in zip(*np.nonzero(ref > 0))}
        assert itermax_align(sim) == expected
        ref_argmax = np.eye(n)[sim.argmax(axis=1)] * np.eye(m)[sim.argmax(axis=0)].T
        assert argmax_align(sim) == {(int(i), int(j)) for i, j in zip(*np.nonzero(ref_argmax > 0))}


def test_spans():
    assert spans_of([]) == ("", [])
    text, spans = spans_of(["ab", "c"])
    assert [text[a:b] for a, b in spans] == ["ab", "c"]


def _write_silver(folder):
    folder.mkdir()
    (folder / "parallel.txt").write_text(
        "the red house ||| the red house\nzq xv ||| mmmm zq\n", encoding="utf-8"
    )
    # 0-based SilverAlign gold: sentence 1 only decides "zq".
    (folder / "gold.txt").write_text("0\t0-0 1-1 2-2\n1\t0-1\n", encoding="utf-8")


def test_cli_random_encoder_identical_strings_align(tmp_path, capsys):
    silver = tmp_path / "silver"
    _write_silver(silver)
    code = eval_main(
        [
            "embedding-aligner",
            "--model",
            "random",
            "--silver",
            str(silver),
            "--layer",
            "all",
            "--method",
            "argmax",
            "itermax",
            "--no-cache",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    entries = data["scores"]["test"]
    assert [(e["layer"], e["method"]) for e in entries] == [
        (0, "argmax"),
        (0, "itermax"),
        (1, "argmax"),
        (1, "itermax"),
        (2, "argmax"),
        (2, "itermax"),
    ]
    # The random encoder gives identical strings identical vectors: identical sentences align on the diagonal,
    # and "zq" finds "zq"; partial evaluation ignores the undecided word "xv".
    argmax0 = entries[0]
    assert (argmax0["a_and_s"], argmax0["n_sure"], argmax0["partial"]) == (4, 4, True)
    assert argmax0["precision"] == 1.0 and argmax0["recall"] == 1.0
    assert "model:xlbench/random-d32-l2@seed0|layer:all" in data["signature"]


def test_cli_errors(tmp_path, capsys):
    silver = tmp_path / "silver"
    _write_silver(silver)
    base = ["embedding-aligner", "--model", "random", "--no-cache", "--out", str(tmp_path / "r")]
    assert eval_main([*base, "--silver", str(silver), "--layer", "8"]) == 2
    assert "Layer 8 is out of range: this model has layers 0..2" in capsys.readouterr().err
    assert eval_main([*base, "--silver", str(silver), "--layer", "top"]) == 2
    assert "--layer must be an integer or 'all'; got 'top'" in capsys.readouterr().err
    assert eval_main([*base, "--text", str(silver / "parallel.txt")]) == 2
    assert "--text needs --links" in capsys.readouterr().err


def test_cli_gold_text_links_one_based(tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("a b c ||| a b c\n", encoding="utf-8")
    links = tmp_path / "g.txt"
    links.write_text("1-1 2-2 3p3\n", encoding="utf-8")
    code = eval_main(
        [
            "embedding-aligner",
            "--model",
            "random",
            "--text",
            str(text),
            "--links",
            str(links),
            "--layer",
            "0",
            "--no-cache",
            "--out",
            str(tmp_path / "r"),
            "--json",
            "--save-links",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    e = data["scores"]["test"][0]
    counts = (e["n_sure"], e["n_possible"], e["a_and_s"], e["a_and_p"], e["partial"])
    assert counts == (2, 3, 2, 3, False)
    # Identical sentences: the saved links are the diagonal, 0-based.
    # Named like the result (evaluator, dataset, model, parameters), so runs never overwrite each other (issue 11).
    (saved,) = (tmp_path / "r").glob("embedding-aligner__*__links-0-argmax.txt")
    assert data["artifacts"] == [str(saved)] and saved.read_text() == "0-0 1-1 2-2\n"
