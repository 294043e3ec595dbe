"""alee's steps through the engine (``builders.alee.stages``): the same foils and counts as plain stages, one job a step."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import penman
import pytest

from builders.alee.logic.nli_filter import decide
from builders.alee.logic.pipeline import Stages, filter_given_foils, generate_candidates
from builders.alee.stages import EngineStages, split_call
from evaluators.compute.engine import LocalEngine

SENTENCE = re.compile(r"^The (\w+) (\w+) the (\w+)\.$")
NOUNS = ["dog", "cat", "boy", "girl"]
SIZES = {"parse": 3, "generate": 3, "nli": 2}


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


class Loaded:
    """An opened scripted stage: ``chunks -> results per chunk``; records every chunk it ran."""

    def __init__(self, name, chunks):
        self.name, self.chunks = name, chunks
        self.model_id, self.revision = f"scripted-{name}", "1"

    def __call__(self, chunks):
        self.chunks += [(self.name, c) for c in chunks]
        if self.name == "nli":
            return [[nli_one(p, h) for p, h in zip(*c)] for c in chunks]
        one = parse_one if self.name == "parse" else generate_one
        return [[one(x) for x in c] for c in chunks]


@dataclass(frozen=True)
class Scripted:
    """A stage factory over one of the functions above; ``opened`` counts its openings."""

    name: str
    opened: list
    chunks: list

    def open(self):
        self.opened.append(self.name)
        return Loaded(self.name, self.chunks)


class CountingEngine(LocalEngine):
    """The local engine, recording each ``map_batches`` (stage name, number of chunks)."""

    def __init__(self):
        super().__init__()
        self.jobs: list[tuple[str, int]] = []

    def map_batches(self, factory, batches, progress=None):
        self.jobs.append((factory.factory.name, len(batches)))
        return super().map_batches(factory, batches, progress)


def sources():
    out = [(str(i), f"The {a} {v} the {b}.") for i, (a, v, b) in
           enumerate((a, v, b) for a in NOUNS for v in ("saw", "chased") for b in NOUNS)]  # fmt: skip
    out += [("p1", "It rains. The dog saw the cat. The cat saw the boy."), ("p2", "Hello. Hi.")]
    out += [(f"q{i}", f"The {a} saw the {b}. The {b} chased the {a}.") for i, (a, b) in
            enumerate(zip(NOUNS, NOUNS[1:]))]  # fmt: skip
    return out


def split(text):
    return [s.strip() + "." for s in text.split(".") if s.strip()]


def plain(rule, names=("parse", "generate", "nli")):
    """Plain in-process stages: every model call cut into chunks by hand, one call at a time."""
    loaded = {n: Loaded(n, []) for n in names}

    def one(name):
        def call(*args):
            return [
                x
                for c in split_call(args, SIZES[name])
                for x in loaded[name]([c if name == "nli" else c[0]])[0]
            ]

        return call

    stages = Stages(split=split, decide=rule)
    if "parse" in names:
        stages.parse, stages.generate = one("parse"), one("generate")
    stages.nli = lambda calls: [one("nli")(p, h) for p, h in calls]
    return stages


def on_engine(engine, rule, names=("parse", "generate", "nli")):
    opened: list = []
    chunks: list = []
    model_stages = EngineStages(engine, SIZES)
    for name in names:
        assert model_stages.add(name, Scripted(name, opened, chunks)) == (f"scripted-{name}", "1")
    return model_stages.stages(split, rule), opened, chunks


@pytest.mark.parametrize("keep_all", [False, True])
def test_engine_steps_equal_plain_stages(keep_all):
    def rule(a, b):
        return decide(a, b, 1.0, False) if keep_all else decide(a, b)

    srcs = sources()
    want, want_counts = generate_candidates(srcs, ["PN", "RS"], plain(rule), 13)
    engine = CountingEngine()
    stages, opened, chunks = on_engine(engine, rule)
    got, got_counts = generate_candidates(srcs, ["PN", "RS"], stages, 13)
    assert [c.__dict__ for c in got] == [c.__dict__ for c in want]
    assert got_counts.to_dict() == want_counts.to_dict()
    assert (
        any(c.level == "paragraph" for c in want) and want_counts.to_dict()["PN"]["generated"] > 0
    )
    if not keep_all:
        # The hashed NLI rejects some foils, and a paragraph moved past a rejected sentence.
        assert want_counts.to_dict()["PN"]["dropped"].get("nli:rejected", 0) > 0
        assert any(c.edit.startswith("sentence 1:") for c in want)
    # One job per step: parse, generate, sentence NLI (both ways), paragraph checks; each
    # factory opened once per build, by the driver.
    assert [name for name, _ in engine.jobs] == ["parse", "generate", "nli", "nli"]
    assert opened == ["parse", "generate", "nli"]
    # A paragraph check is one model call of one pair per direction (never padded with others).
    para = [c for _, c in chunks[-engine.jobs[-1][1] :]]
    assert para and all(len(p) == len(h) == 1 and ". " in p[0] for p, h in para)
    # Sentence NLI: chunks of at most 2 pairs, each direction cut on its own.
    assert engine.jobs[2][1] % 2 == 0
    assert all(len(c[0]) <= 2 for name, c in chunks if name == "nli")


def test_paragraph_checks_cover_what_the_merge_reads():
    """Every kept paragraph foil was checked as one pair per direction (the merge read a planned check)."""
    stages, _, chunks = on_engine(LocalEngine(), decide)
    got, _ = generate_candidates(sources(), ["PN", "RS"], stages, 13)
    nli = [c for name, c in chunks if name == "nli"]
    single = {(p[0], h[0]) for p, h in nli if len(p) == 1}
    kept = [c for c in got if c.level == "paragraph"]
    assert kept and all({(c.en_orig, c.en_foil), (c.en_foil, c.en_orig)} <= single for c in kept)


def test_foils_filter_on_the_engine_equals_plain():
    items = [(str(i), s, s.replace("The", "No", 1), "PN") for i, (_, s) in enumerate(sources()[:9])]
    want, want_counts = filter_given_foils(items, plain(decide, ("nli",)), ["PN"])
    engine = CountingEngine()
    stages, opened, _ = on_engine(engine, decide, ("nli",))
    assert stages.parse is None and stages.generate is None
    got, got_counts = filter_given_foils(items, stages, ["PN"])
    assert [c.__dict__ for c in got] == [c.__dict__ for c in want] and 0 < len(want) < len(items)
    assert got_counts.to_dict() == want_counts.to_dict()
    # 9 pairs both ways in chunks of 2: 5 + 5 chunks, one job; the model opened once.
    assert engine.jobs == [("nli", 10)] and opened == ["nli"]
