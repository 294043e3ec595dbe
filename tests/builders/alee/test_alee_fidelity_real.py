"""Issue #16 item 11 on the public Little Prince AMR graphs: AR and HS edits with real WordNet.

``test_alee_edits.py`` checks PN on these graphs without a lexicon; antonym and hypernym edits
need WordNet (Debian's ``wordnet-base``, installed by ``make setup``), so they are checked here.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import penman
import pytest

from builders.alee.logic.discourse import DISCOURSE_FRAMES
from builders.alee.logic.edits import apply_edit, edit_of

_SHARED = Path(
    os.environ.get(
        "XLBENCH_SHARED_DATA", Path(__file__).resolve().parents[3].parent / "shared" / "data"
    )
)


@pytest.mark.slow
def test_item11_ar_and_hs_never_replace_a_connective_on_real_graphs():
    path = _SHARED / "amr_little_prince" / "lpp_v3.0.graphs_0001-1362.txt"
    if not path.exists():
        pytest.skip(
            f"real-data check: {path} is absent (set XLBENCH_SHARED_DATA to the shared data folder)"
        )
    try:
        from builders.adapters.wordnet_lexicon import load_lexicon

        lex = load_lexicon()
    except Exception as err:  # noqa: BLE001 - WordNet is a Debian package, absent on some machines
        pytest.skip(f"WordNet unavailable: {err}")
    graphs = [
        g
        for g in penman.loads(path.read_text(encoding="utf-8"))
        if any(t[2] in DISCOURSE_FRAMES for t in g.instances())
    ]
    assert len(graphs) > 100  # "But ...", "So ...": frequent in the book
    made = {"AR": 0, "HS": 0}
    for g in graphs:
        for etype in made:
            for seed in range(3):
                out = apply_edit(g, etype, np.random.default_rng(seed), lex)
                if out is None:
                    continue
                made[etype] += 1
                edit = edit_of(out)
                assert edit is not None and edit.before not in DISCOURSE_FRAMES, edit
    # The graphs still admit edits elsewhere: the exclusion is targeted, not a blanket skip.
    assert made["AR"] > 50 and made["HS"] > 100
