"""Tiny cbd datasets for the runner tests (a module of its own: ``conftest`` is not a unique import name)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from builders.cli import main

VOCAB = [f"w{i}" for i in range(300)]


def make_cbd_inputs(folder: Path, n_sent: int = 40, seed: int = 0) -> tuple[Path, Path]:
    """Sentences of 5 words; the target copies them (a copy language: every model does well)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(VOCAB))
    lines = []
    for i in range(n_sent):
        words = [VOCAB[k] for k in order[5 * i : 5 * i + 5]]
        lines.append(f"{i}\t{' '.join(words)}\t{' '.join(words)}")
    folder.mkdir(parents=True, exist_ok=True)
    tsv = folder / "corpus.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dic = folder / "dict.txt"
    dic.write_text("".join(f"{w} {w}\n" for w in VOCAB), encoding="utf-8")
    return tsv, dic


def build_cbd(out: Path, inputs: Path, n_sent: int = 40, seed: int = 0) -> Path:
    """Build a cbd dataset folder at ``out`` from synthetic inputs under ``inputs``."""
    tsv, dic = make_cbd_inputs(inputs, n_sent, seed)
    rc = main(
        [
            "build",
            "cbd",
            "--lang",
            "eng-deu",
            "--tsv",
            str(tsv),
            "--dict",
            str(dic),
            "--aligner",
            "none",
            "--max-pairs",
            "0",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    return out
