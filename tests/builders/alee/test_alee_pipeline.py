"""Paragraph iteration and the build pipeline with scripted stages (no model)."""

from __future__ import annotations

import math

import penman
import pytest

from builders.alee.logic.nli_filter import decide
from builders.alee.logic.paragraphs import edit_paragraph
from builders.alee.logic.pipeline import (
    Stages,
    filter_given_foils,
    generate_candidates,
    pair,
    table2,
)


def stages_of(results):
    """Scripted stage: sentence index -> None (no edit) or (foil, info)."""
    return lambda i, s: results[i]


def test_first_sentence_that_passes_is_kept():
    out = edit_paragraph(
        ["A.", "B.", "C."],
        stages_of({0: ("A!", 0), 1: ("B!", 1), 2: ("C!", 2)}),
        lambda o, f: True,
        lambda o, f: True,
    )
    assert out.foil == ["A!", "B.", "C."] and out.index == 0 and out.info == 0
    assert [(a.index, a.stage) for a in out.attempts] == [(0, "kept")]


def test_paragraph_failure_reverts_and_moves_on():
    seen = []

    def check_paragraph(orig, foil):
        seen.append(list(foil))
        return foil[1] == "B!"

    out = edit_paragraph(
        ["A.", "B.", "C."],
        stages_of({0: ("A!", 0), 1: ("B!", 1), 2: ("C!", 2)}),
        lambda o, f: True,
        check_paragraph,
    )
    # the failed edit of sentence 0 was reverted before sentence 1 was tried
    assert seen == [["A!", "B.", "C."], ["A.", "B!", "C."]]
    assert out.foil == ["A.", "B!", "C."] and out.index == 1
    assert [(a.index, a.stage) for a in out.attempts] == [(0, "paragraph"), (1, "kept")]


def test_sentences_run_out():
    out = edit_paragraph(
        ["A.", "B."], stages_of({0: None, 1: ("B!", 1)}), lambda o, f: False, lambda o, f: True
    )
    assert out.foil is None and out.index is None
    assert [(a.index, a.stage) for a in out.attempts] == [(0, "edit"), (1, "sentence")]


def test_sentence_check_gets_the_right_pair():
    calls = []
    edit_paragraph(
        ["A.", "B."],
        stages_of({0: ("A!", 0), 1: ("B!", 1)}),
        lambda o, f: calls.append((o, f)) or False,
        lambda o, f: True,
    )
    assert calls == [("A.", "A!"), ("B.", "B!")]


# --- the pipeline with scripted parse / generate / NLI --------------------------------

PARSES = {
    "The dog chased the cat.": "(c / chase-01 :ARG0 (d / dog) :ARG1 (c2 / cat))",
    "It rains.": "(r / rain-01)",
    "Hello.": None,  # the parser fails
    "Yes.": "(y / yes)",  # parses, admits no PN/RS edit
}
GENERATE = {
    "(c / chase-01 :polarity - :ARG0 (d / dog) :ARG1 (c2 / cat))": "The dog did not chase the cat.",
    "(c / chase-01 :ARG1 (d / dog) :ARG0 (c2 / cat))": "The cat chased the dog.",
    "(r / rain-01 :polarity -)": "It rains.",  # generation gives the original back: dropped
}


def scripted_stages(nli=None):
    def parse(sents):
        return [(PARSES[s], "ok") if PARSES[s] else (None, "parse-none") for s in sents]

    def generate(graphs):
        out = []
        for g in graphs:
            key = penman.encode(penman.decode(g), indent=None)
            out.append((GENERATE.get(key), False, "ok" if key in GENERATE else "empty-generation"))
        return out

    return Stages(
        split=lambda t: [s.strip() + "." for s in t.split(".") if s.strip()],
        parse=parse,
        generate=generate,
        nli=calls_of(nli),
    )


def calls_of(nli):
    """A pipeline NLI stage (model calls -> each call's probabilities) over ``(premises, hypotheses) -> probs``."""
    if nli is None:
        return None
    return lambda calls: [nli(p, h) for p, h in calls]


def contradiction_nli(premises, hypotheses):
    return [{"entailment": 0.05, "neutral": 0.05, "contradiction": 0.9} for _ in premises]


def test_pipeline_counts_table2_and_records_edits():
    sources = [("0", "The dog chased the cat."), ("1", "It rains."), ("2", "Hello."), ("3", "Yes.")]
    cands, counts = generate_candidates(
        sources, ["PN", "RS"], scripted_stages(contradiction_nli), seed=13
    )
    got = {(c.id, c.en_foil, c.level) for c in cands}
    assert got == {
        ("0-PN", "The dog did not chase the cat.", "sentence"),
        ("0-RS", "The cat chased the dog.", "sentence"),
    }
    pn = next(c for c in cands if c.perturbation == "PN")
    assert pn.edit == "PN c: chase-01 -> chase-01 :polarity -"
    assert pn.nli_orig_foil["contradiction"] == 0.9 and pn.nli_reason == "kept"
    assert penman.decode(pn.amr_foil).triples[1] == ("c", ":polarity", "-")
    d = counts.to_dict()
    assert {k: d["PN"][k] for k in ("sources", "parsed", "edited", "generated", "nli_kept")} == {
        "sources": 4,
        "parsed": 3,
        "edited": 2,
        "generated": 1,
        "nli_kept": 1,
    }
    assert d["PN"]["dropped"] == {
        "edit:not-applicable": 1,
        "generate:unchanged": 1,
        "parse:parse-none": 1,
    }
    assert {k: d["RS"][k] for k in ("sources", "parsed", "edited", "generated", "nli_kept")} == {
        "sources": 4,
        "parsed": 3,
        "edited": 1,
        "generated": 1,
        "nli_kept": 1,
    }


def test_pipeline_nli_rejects_paraphrase():
    def paraphrase(premises, hypotheses):
        return [{"entailment": 0.95, "neutral": 0.03, "contradiction": 0.02} for _ in premises]

    cands, counts = generate_candidates(
        [("0", "The dog chased the cat.")], ["PN"], scripted_stages(paraphrase), 13
    )
    assert cands == []
    assert counts.to_dict()["PN"]["dropped"] == {"nli:rejected": 1}


def test_pipeline_paragraph_level():
    # sentence 0 ("Hello.") fails to parse, so sentence 1 is edited; paragraph NLI runs on the joined text.
    calls = []

    def nli(premises, hypotheses):
        calls.append((list(premises), list(hypotheses)))
        return contradiction_nli(premises, hypotheses)

    cands, _ = generate_candidates(
        [("p", "Hello. The dog chased the cat.")], ["PN"], scripted_stages(nli), 13
    )
    (c,) = cands
    assert c.level == "paragraph"
    assert c.en_foil == "Hello. The dog did not chase the cat."
    assert c.edit.startswith("sentence 1: PN c:")
    assert (["Hello. The dog chased the cat."], ["Hello. The dog did not chase the cat."]) in calls


def test_without_nli_every_foil_is_kept_and_marked():
    cands, _ = generate_candidates(
        [("0", "The dog chased the cat.")], ["PN"], scripted_stages(None), 13
    )
    (c,) = cands
    assert c.nli_reason == "nli-skipped" and math.isnan(c.nli_orig_foil["entailment"])


def test_given_foils_filter_and_pairing():
    items = [
        ("0", "It rains.", "It does not rain.", "PN"),
        ("1", "It rains.", "It pours.", "HS"),
        ("2", "Cats purr.", "Purrs cat.", "RS"),
    ]

    def nli(premises, hypotheses):
        out = []
        for h in hypotheses:
            # "It rains." entails "It pours."-style foils one way only (P = 0.9 > 0.8): rejected
            e = 0.9 if "pour" in h else 0.1
            out.append({"entailment": e, "neutral": 0.05, "contradiction": 0.95 - e})
        return out

    stages = Stages(split=lambda t: [t], nli=calls_of(nli), decide=decide)
    kept, counts = filter_given_foils(items, stages, ["PN", "RS", "AR", "HS"])
    assert [c.id for c in kept] == ["0-PN", "2-RS"]
    tables, paired = pair(kept, {"deu_Latn": {"It rains.": "Es regnet."}})
    assert sorted(tables) == ["eng_Latn", "eng_Latn-deu_Latn"]
    assert [r["id"] for r in tables["eng_Latn-deu_Latn"]["test"]] == ["0-PN"]
    assert paired == {"deu_Latn": {"paired": 1, "no_translation": 1}}
    t2 = table2(counts, paired)
    assert t2["per_type"]["HS"] == {
        "sources": 1,
        "parsed": None,
        "edited": None,
        "generated": None,
        "nli_kept": 0,
        "dropped": {"nli:entail-prob": 1},
    }
    assert t2["total"]["nli_kept"] == 2 and t2["total"]["parsed"] is None


@pytest.mark.parametrize("seed", [1, 2])
def test_rng_depends_on_sentence_not_order(seed):
    srcs = [("0", "The dog chased the cat."), ("1", "It rains.")]
    a, _ = generate_candidates(srcs, ["PN"], scripted_stages(None), seed)
    b, _ = generate_candidates(srcs[::-1], ["PN"], scripted_stages(None), seed)
    assert {c.en_foil for c in a} == {c.en_foil for c in b}


def test_corpus_level_and_domain_reach_the_rows():
    """The corpus' stated level replaces the sentence count's; its domain is a column only when stated."""
    from builders.alee.logic.pipeline import Candidate
    from builders.alee.logic.source_facts import source_facts, with_facts
    from evaluators.schema import alee as S

    # BOUQuET calls "Hi! Go." a sentence though it splits in two; the TSV's "It rains." states nothing.
    facts = source_facts(
        [("Hi! Go.", {"level": "sentence", "domain": "conversation", "split": "dev"}),
         ("It rains.", {"split": "dev"})]
    )  # fmt: skip
    kept = [
        Candidate("0-PN", "Hi! Go.", "PN", level="paragraph", en_foil="Hi! Do not go."),
        Candidate("1-PN", "It rains.", "PN", en_foil="It does not rain."),
    ]
    targets = {"deu_Latn": {"Hi! Go.": "Hallo! Geh.", "It rains.": "Es regnet."}}
    rows = pair(with_facts(kept, facts), targets)[0]["eng_Latn-deu_Latn"]["test"]
    assert [(r[S.LEVEL], r[S.DOMAIN]) for r in rows] == [
        ("sentence", "conversation"),
        ("sentence", None),  # a row of an input without domains: null, not a made-up value
    ]
    plain = pair(with_facts(kept, {}), targets)[0]["eng_Latn-deu_Latn"]["test"]
    assert [list(r) for r in plain] == [list(S.COLUMNS)] * 2 and plain[0][S.LEVEL] == "paragraph"
