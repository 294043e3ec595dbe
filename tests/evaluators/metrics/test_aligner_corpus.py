"""Per-setting aligner training text with duplicates removed (SilverAlign)."""

from __future__ import annotations

import pytest

from evaluators.metrics.aligner_corpus import PAPER_SWEEP_TOKENIZER, setting_corpus


def test_eval_sentences_first_and_duplicates_dropped():
    ev_s, ev_t = [["the", "cat"], ["a", "dog"]], [["le", "chat"], ["un", "chien"]]
    ex_s = [["The", "cat"], ["a", "dog"], ["new"], ["new"]]
    ex_t = [["le", "chat"], ["un", "chien"], ["neuf"], ["neuf"]]
    c = setting_corpus(ev_s, ev_t, ex_s, ex_t, lowercase=True)
    assert c.src[:2] == (("the", "cat"), ("a", "dog")) and c.n_eval == 2
    assert c.src[2:] == (("new",),) and c.dropped_duplicates == 3
    keep_all = setting_corpus(ev_s, ev_t, ex_s, ex_t, dedup=False)
    assert len(keep_all.src) == 6 and keep_all.dropped_duplicates == 0
    assert PAPER_SWEEP_TOKENIZER == "wordpiece"
    with pytest.raises(ValueError):
        setting_corpus(ev_s, ev_t[:1])


def test_real_silver_is_inside_gold_so_a_joint_corpus_repeats_it(shared_data):
    # eng_fra Silver_Small is built on Hansards gold sentences (data README note 2).
    silver = shared_data / "silveralign_small" / "eng_fra" / "parallel.txt"
    gold = shared_data / "gold_align_awesome" / "enfr.src-tgt"
    if not (silver.exists() and gold.exists()):
        pytest.skip("silveralign_small/eng_fra or gold_align_awesome/enfr absent")

    def split(path):
        pairs = [
            line.split(" ||| ")
            for line in path.read_text(encoding="utf-8").splitlines()
            if " ||| " in line
        ]
        return [p[0].split() for p in pairs], [p[1].split() for p in pairs]

    s_src, s_tgt = split(silver)
    g_src, g_tgt = split(gold)
    c = setting_corpus(s_src, s_tgt, g_src, g_tgt, lowercase=True)
    assert c.n_eval == len(s_src)
    assert c.n_extra + c.dropped_duplicates == len(g_src)
    assert c.dropped_duplicates > 0  # the joint silver + gold corpus held these sentences twice
