"""A 2 models x 2 datasets evaluation grid on a local Ray cluster equals the local grid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from builders.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.ray]

MODELS = ("random", "random:16:2:5")


def _dataset(root: Path, n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(200)]
    lines = [f"{i}\t{' '.join(ws)}\t{' '.join(w.upper() for w in ws)}"
             for i, ws in enumerate([vocab[j] for j in rng.choice(200, 5, replace=False)] for _ in range(n))]  # fmt: skip
    root.mkdir()
    (root / "c.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "d.txt").write_text("".join(f"{w} {w.upper()}\n" for w in vocab), encoding="utf-8")
    out = root / "ds"
    assert main(["build", "cbd", "--lang", "eng-deu", "--tsv", str(root / "c.tsv"), "--dict", str(root / "d.txt"),
                 "--aligner", "none", "--max-pairs", "0", "--out", str(out)]) == 0  # fmt: skip
    return out


def _results(out: Path) -> dict[str, tuple]:
    cells = {}
    for path in sorted(out.glob("*.json")):
        data = json.loads(path.read_text())
        cells[path.name] = (data["model"]["spec"], data["dataset"]["path"], data["signature"], data["main_score"],
                            json.dumps(data["scores"], sort_keys=True))  # fmt: skip
    return cells


def test_grid_on_ray_equals_local_and_resumes(tmp_path, ray_cluster):
    a, b = _dataset(tmp_path / "a", 40, 0), _dataset(tmp_path / "b", 30, 1)
    argv = ["eval", "word-retrieval", "--model", MODELS[0], "--model", MODELS[1], "--dataset", str(a), "--dataset", str(b),
            "--n", "20", "--repeats", "2", "--layers", "0", "--no-plots", "--no-cache"]  # fmt: skip
    assert main([*argv, "--out", str(tmp_path / "local")]) == 0
    assert main([*argv, "--out", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"]) == 0
    local, ray = _results(tmp_path / "local"), _results(tmp_path / "ray")
    assert len(local) == 4 and {(m, d) for m, d, *_ in local.values()} == {
        (m, str(d.resolve())) for m in MODELS for d in (a, b)
    }
    assert ray == local  # same file names, signatures, main scores and every score
    stamps = {
        p.name: json.loads(p.read_text())["timestamp"] for p in (tmp_path / "ray").glob("*.json")
    }
    assert main([*argv, "--out", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"]) == 0
    # The runner's resume, checked on the workers: every cell is skipped, nothing is rewritten.
    assert {
        p.name: json.loads(p.read_text())["timestamp"] for p in (tmp_path / "ray").glob("*.json")
    } == stamps
    assert _results(tmp_path / "ray") == local


def test_a_failing_model_is_reported_and_the_other_cells_are_kept(tmp_path, ray_cluster, capsys):
    a, b = _dataset(tmp_path / "a", 30, 0), _dataset(tmp_path / "b", 30, 1)
    # A folder that is no model: it passes the grid's up-front check and fails on the cluster.
    missing = tmp_path / "not-a-model"
    missing.mkdir()
    argv = ["eval", "word-retrieval", "--model", "random", "--model", f"hf:{missing}", "--dataset", str(a),
            "--dataset", str(b), "--n", "10", "--repeats", "1", "--layers", "0", "--no-plots", "--no-cache",
            "--out", str(tmp_path / "r"), "--engine", "ray", "--workers", "2"]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "2 of 4 grid cells failed after their retries" in err and str(missing) in err
    assert sorted(m for m, *_ in _results(tmp_path / "r").values()) == [
        "random",
        "random",
    ]  # the rest is written
