"""Small datasets and a tiny in-memory model for the runner tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from builders.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))  # xl_tiny_model, for callable: specs

from runner_fixtures import build_cbd  # noqa: E402


@pytest.fixture(scope="module")
def cbd_pair(tmp_path_factory):
    """Two cbd datasets with different content (for grids)."""
    root = tmp_path_factory.mktemp("cbd")
    return build_cbd(root / "dsA", root / "inA", 40, 0), build_cbd(
        root / "dsB", root / "inB", 30, 1
    )


FOILS = """en_orig,en_foil,type
It rains.,It does not rain.,PN
The dog chased the cat.,The cat chased the dog.,RS
The penguin swims.,The bird swims.,hypernym
It is big.,It is small.,antonym
"""
TARGETS = {
    "It rains.": "Es regnet.",
    "The dog chased the cat.": "Der Hund jagte die Katze.",
    "The penguin swims.": "Der Pinguin schwimmt.",
    "It is big.": "Es ist gross.",
}


@pytest.fixture(scope="module")
def alee_dataset(tmp_path_factory):
    """A 4-triplet alee dataset built offline from a foils file (no NLI)."""
    root = tmp_path_factory.mktemp("alee")
    foils, tsv = root / "foils.csv", root / "de.tsv"
    foils.write_text(FOILS, encoding="utf-8")
    tsv.write_text("".join(f"{en}\t{de}\n" for en, de in TARGETS.items()), encoding="utf-8")
    out = root / "ds"
    assert (
        main(
            [
                "build",
                "alee",
                "--langs",
                "de",
                "--foils",
                str(foils),
                "--tsv",
                f"de={tsv}",
                "--no-nli",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return out
