"""Small datasets and a tiny in-memory model for the runner tests."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from builders.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))  # xl_tiny_model, for callable: specs

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
    rc = main(["build", "cbd", "--lang", "eng-deu", "--tsv", str(tsv), "--dict", str(dic),
               "--aligner", "none", "--max-pairs", "0", "--out", str(out)])
    assert rc == 0
    return out


@pytest.fixture(scope="module")
def cbd_pair(tmp_path_factory):
    """Two cbd datasets with different content (for grids)."""
    root = tmp_path_factory.mktemp("cbd")
    return build_cbd(root / "dsA", root / "inA", 40, 0), build_cbd(root / "dsB", root / "inB", 30, 1)


FOILS = """en_orig,en_foil,type
It rains.,It does not rain.,PN
The dog chased the cat.,The cat chased the dog.,RS
The penguin swims.,The bird swims.,hypernym
It is big.,It is small.,antonym
"""
TARGETS = {"It rains.": "Es regnet.", "The dog chased the cat.": "Der Hund jagte die Katze.",
           "The penguin swims.": "Der Pinguin schwimmt.", "It is big.": "Es ist gross."}


@pytest.fixture(scope="module")
def alee_dataset(tmp_path_factory):
    """A 4-triplet alee dataset built offline from a foils file (no NLI)."""
    root = tmp_path_factory.mktemp("alee")
    foils, tsv = root / "foils.csv", root / "de.tsv"
    foils.write_text(FOILS, encoding="utf-8")
    tsv.write_text("".join(f"{en}\t{de}\n" for en, de in TARGETS.items()), encoding="utf-8")
    out = root / "ds"
    assert main(["build", "alee", "--langs", "de", "--foils", str(foils), "--tsv", f"de={tsv}", "--no-nli",
                 "--out", str(out)]) == 0
    return out
