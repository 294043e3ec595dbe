"""alee's planned passes (``stages.alee_on_engine``) without Ray: the same foils and counts as inline stages."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import penman
import pytest

from builders.adapters.stages import alee_on_engine, chunked
from builders.alee.logic.nli_filter import decide
from builders.alee.logic.pipeline import Stages, filter_given_foils, generate_candidates
from evaluators.compute.engine import LocalEngine

SENTENCE = re.compile(r"^The (\w+) (\w+) the (\w+)\.$")
NOUNS = ["dog", "cat", "boy", "girl"]


def parse_one(s):
    m = SENTENCE.match(s)
    if not m:
        return None, "parse-none"
    a, verb, b = m.groups()
    return f"(v / {verb}-01 :ARG0 (a / {a}) :ARG1 (b / {b}))", "ok"


def generate_one(graph):
    g = penman.decode(graph)
    concept = {v: c for v, _, c in g.instances()}
    args = {role: concept[t] for _, role, t in g.edges()}
    neg = "did not " if g.attributes(role=":polarity") else ""
    return f"The {args[':ARG0']} {neg}{concept[g.top][:-3]} the {args[':ARG1']}.", False, "ok"


def nli_one(premise, hypothesis):
    """Probabilities from a hash of the pair: direction-dependent, some above the 0.8 threshold."""
    h = hashlib.sha256(f"{premise}|{hypothesis}".encode()).digest()
    e = h[0] / 255
    return {"entailment": e, "neutral": (1 - e) / 2, "contradiction": (1 - e) / 2}


@dataclass(frozen=True)
class Scripted:
    """A stage factory over one of the functions above; ``opened`` counts its openings."""

    name: str
    opened: list

    def open(self):
        self.opened.append(self.name)
        if self.name == "nli":
            return lambda chunks: [[nli_one(p, h) for p, h in zip(*c)] for c in chunks]
        one = parse_one if self.name == "parse" else generate_one
        return lambda chunks: [[one(x) for x in c] for c in chunks]


class CountingEngine(LocalEngine):
    """The local engine, recording each ``map_batches`` (stage name, number of chunks)."""

    def __init__(self):
        super().__init__()
        self.jobs: list[tuple[str, int]] = []

    def map_batches(self, factory, batches):
        self.jobs.append((factory.name, len(batches)))
        return super().map_batches(factory, batches)


def sources():
    out = [(str(i), f"The {a} {v} the {b}.") for i, (a, v, b) in
           enumerate((a, v, b) for a in NOUNS for v in ("saw", "chased") for b in NOUNS)]  # fmt: skip
    out += [("p1", "It rains. The dog saw the cat. The cat saw the boy."), ("p2", "Hello. Hi.")]
    out += [(f"q{i}", f"The {a} saw the {b}. The {b} chased the {a}.") for i, (a, b) in
            enumerate(zip(NOUNS, NOUNS[1:]))]  # fmt: skip
    return out


def split(text):
    return [s.strip() + "." for s in text.split(".") if s.strip()]


def inline(rule):
    opened: list = []
    stages = Stages(split=split, decide=rule)
    for name, size in (("parse", 3), ("generate", 3), ("nli", 2)):
        setattr(stages, name, chunked(Scripted(name, opened).open(), size))
    return stages


@pytest.mark.parametrize("keep_all", [False, True])
def test_planned_passes_equal_inline_stages(keep_all):
    def rule(a, b):
        return decide(a, b, 1.0, False) if keep_all else decide(a, b)

    srcs = sources()
    want, want_counts = generate_candidates(srcs, ["PN", "RS"], inline(rule), 13)
    opened: list = []
    engine = CountingEngine()
    got, got_counts = alee_on_engine(
        engine,
        lambda st: generate_candidates(srcs, ["PN", "RS"], st, 13),
        Stages(split=split, decide=rule),
        {name: Scripted(name, opened) for name in ("parse", "generate", "nli")},
        {"parse": 3, "generate": 3, "nli": 2},
    )
    assert [c.__dict__ for c in got] == [c.__dict__ for c in want]
    assert got_counts.to_dict() == want_counts.to_dict()
    assert (
        any(c.level == "paragraph" for c in want) and want_counts.to_dict()["PN"]["generated"] > 0
    )
    if not keep_all:
        # The hashed NLI rejects some foils, and a paragraph moved past a rejected sentence.
        assert want_counts.to_dict()["PN"]["dropped"].get("nli:rejected", 0) > 0
        assert any(c.edit.startswith("sentence 1:") for c in want)
    # One job per stage and pass, each factory opened once per job: parse, generate, sentence NLI,
    # paragraph NLI; when the rule keeps everything, the paragraph checks join the sentence NLI job
    # (the planning answer is also "keep").
    jobs = ["parse", "generate", "nli"] + ([] if keep_all else ["nli"])
    assert [name for name, _ in engine.jobs] == jobs and opened == jobs


def test_planned_foils_filter_equals_inline():
    items = [(str(i), s, s.replace("The", "No", 1), "PN") for i, (_, s) in enumerate(sources()[:9])]
    want, want_counts = filter_given_foils(items, inline(decide), ["PN"])
    engine = CountingEngine()
    got, got_counts = alee_on_engine(
        engine,
        lambda st: filter_given_foils(items, st, ["PN"]),
        Stages(split=split, decide=decide),
        {"nli": Scripted("nli", [])},
        {"nli": 2},
    )
    assert [c.__dict__ for c in got] == [c.__dict__ for c in want] and 0 < len(want) < len(items)
    assert got_counts.to_dict() == want_counts.to_dict()
    assert engine.jobs == [("nli", 10)]  # 9 pairs both ways in chunks of 2: 5 + 5
