"""The execution seam without Ray: engine selection, the local engine, the shard store and resume."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

import pytest

from builders.adapters import shardstore
from evaluators.compute.engine import LocalEngine, RayEngine, get_engine, item_seed, shard_of
from evaluators.core.errors import UsageError


def test_engine_selection_from_flags_and_environment(monkeypatch):
    monkeypatch.delenv("XLBENCH_ENGINE", raising=False)
    assert isinstance(get_engine(), LocalEngine)
    monkeypatch.setenv("XLBENCH_ENGINE", "ray")
    monkeypatch.setenv("XLBENCH_WORKERS", "3")
    monkeypatch.setenv("XLBENCH_RAY_ADDRESS", "10.0.0.1:6379")
    eng = get_engine()
    assert isinstance(eng, RayEngine) and eng.workers == 3 and eng.address == "10.0.0.1:6379"
    assert get_engine("local", None, 1).name == "local"  # a flag beats the environment
    monkeypatch.delenv("XLBENCH_RAY_ADDRESS")
    with pytest.raises(UsageError, match="--workers must be at least 1"):
        get_engine("ray", workers=0)
    with pytest.raises(UsageError, match="not an engine"):
        get_engine("spark")
    with pytest.raises(UsageError, match="--ray-address applies to --engine ray"):
        get_engine("local", address="auto")
    monkeypatch.setenv("XLBENCH_WORKERS", "two")
    with pytest.raises(UsageError, match="XLBENCH_WORKERS must be a whole number"):
        get_engine("ray")


def test_importing_the_seam_and_the_builders_does_not_import_ray():
    code = "import sys, evaluators.compute.engine, builders.cli, builders.alee.stages; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@dataclass(frozen=True)
class Upper:
    opened: list

    def open(self):
        self.opened.append(1)
        return lambda batch: [x.upper() for x in batch]


def test_local_map_batches_opens_the_stage_once_and_keeps_order():
    opened: list = []
    out = LocalEngine().map_batches(Upper(opened), [["a", "b"], ["c"], ["d", "e", "f"]])
    assert out == [["A", "B"], ["C"], ["D", "E", "F"]] and opened == [1]
    assert LocalEngine().map_batches(Upper(opened), []) == [] and opened == [1]


def test_local_run_cells_groups_retries_and_reports_failures():
    calls: list = []

    def cell(c):
        calls.append(c)
        if c == 3:
            raise ValueError(f"cell {c} is broken")
        return c * 10

    out = LocalEngine().run_cells(cell, [0, 1, 2, 3, 4], group_key=lambda c: c % 2, retries=1)
    assert [o.value for o in out] == [0, 10, 20, None, 40]
    assert out[3].error == "ValueError: cell 3 is broken" and [o.ok for o in out] == [
        True,
        True,
        True,
        False,
        True,
    ]
    assert calls == [0, 2, 4, 1, 3, 3]  # group 0 first, then group 1; the bad cell tried twice


def test_seeds_and_shards_come_from_ids():
    assert item_seed(13, "GEN:1:1") == item_seed(13, "GEN:1:1") != item_seed(13, "GEN:1:2")
    assert [shard_of(f"id{i}", 4) for i in range(8)] == [shard_of(f"id{i}", 4) for i in range(8)]
    assert 0 <= item_seed(0, "x") < 2**63


def test_shard_store_roundtrip_is_atomic_and_content_addressed(tmp_path):
    store = shardstore.ShardStore(tmp_path, "apertium:eng-spa", "v1", "eng_Latn-spa_Latn")
    a, b = store.key(["the dog", "the cat"]), store.key(["a bird"])
    path = store.write({a: ["el perro", "el gato"], b: ["un pájaro"]})
    assert path.parent == store.folder and json.loads(path.read_text())["entries"][a] == [
        "el perro",
        "el gato",
    ]
    assert (
        store.write({b: ["un pájaro"], a: ["el perro", "el gato"]}) == path
    )  # same batch, same file
    (store.folder / "broken.json").write_text("{not json")
    (store.folder / ".tmp-partial.json").write_text(
        "{"
    )  # a killed writer's leftover is not a shard
    assert store.load() == {a: ["el perro", "el gato"], b: ["un pájaro"]}
    other = shardstore.ShardStore(tmp_path, "apertium:eng-spa", "v2", "eng_Latn-spa_Latn")
    assert (
        other.load() == {} and other.key(["a bird"]) != b
    )  # another engine version never hits these


@dataclass
class ToyEngine:
    pair: tuple = ("eng_Latn", "spa_Latn")
    name: str = "toy"
    version: str = "1"
    online: bool = False
    stateful: bool = True

    def translate_batch(self, texts):
        return [f"<{t}>" for t in texts]


@dataclass(frozen=True)
class FlakyStage:
    """Translates like ToyEngine into the store; raises on the unit containing ``fail_on``."""

    store: str
    fail_on: str | None
    log: str

    def open(self):
        engine = ToyEngine()
        store = shardstore.ShardStore(
            self.store, engine.name, engine.version, "-".join(engine.pair)
        )
        runner = shardstore._MTRunner(engine, store)

        def run(units):
            with open(self.log, "a", encoding="utf-8") as fh:
                fh.writelines(f"{u[0]}\n" for u in units)
            if self.fail_on is not None and any(self.fail_on in u for u in units):
                raise KeyboardInterrupt("simulated crash")
            return runner(units)

        return run


def test_resume_after_a_failed_run_retranslates_nothing_that_finished(tmp_path):
    engine = ToyEngine()
    store = shardstore.ShardStore(tmp_path / "st", engine.name, engine.version, "eng_Latn-spa_Latn")
    units = [[f"s{i}", f"s{i} alt"] for i in range(6)]
    log = tmp_path / "log.txt"
    with pytest.raises(KeyboardInterrupt):
        shardstore.translate_units(
            LocalEngine(), FlakyStage(str(tmp_path / "st"), "s4", str(log)), units, store, 4, engine
        )
    assert log.read_text().split() == [
        "s0",
        "s1",
        "s2",
        "s3",
        "s4",
        "s5",
    ]  # batches of 2 units; the 3rd failed
    log.unlink()
    found = shardstore.translate_units(
        LocalEngine(), FlakyStage(str(tmp_path / "st"), None, str(log)), units, store, 4, engine
    )
    assert log.read_text().split() == ["s4", "s5"]  # only the batch that did not finish
    assert [found[store.key(u)] for u in units] == [[f"<{t}>" for t in u] for u in units]


def test_plan_matches_what_the_cached_translator_asks_for(tmp_path):
    from builders.adapters.mt import CachedTranslator, TranslationCache

    requests = [["a", "b", "a"], ["c", "a"], ["a", "b"], ["d"], ["e", "f", "g", "a", "c"]]
    for stateful, size in ((True, 2), (True, 10), (False, 1)):
        cache = TranslationCache(tmp_path / f"c{stateful}{size}.sqlite")
        cache.put_many("toy", "1", "eng_Latn-spa_Latn", {"c": "<c>"})
        asked: list = []

        class Recording(ToyEngine):
            calls = asked

            def translate_batch(self, texts):
                self.calls.append(list(texts))
                return super().translate_batch(texts)

        tr = CachedTranslator(Recording(stateful=stateful), cache, batch_size=size)
        local = [tr.translate(r) for r in requests]
        plan = shardstore.plan_units(requests, {"c"}, stateful, size)
        units = {tuple(u) for u in asked} if stateful else {(t,) for call in asked for t in call}
        assert units <= {tuple(u) for u in plan}
        served = shardstore.StoreEngine(
            ToyEngine(stateful=stateful),
            {
                shardstore.unit_key(
                    "toy", "1", "eng_Latn-spa_Latn", u
                ): ToyEngine().translate_batch(u)
                for u in plan
            },
        )
        cache2 = TranslationCache(tmp_path / f"d{stateful}{size}.sqlite")
        cache2.put_many("toy", "1", "eng_Latn-spa_Latn", {"c": "<c>"})
        tr2 = CachedTranslator(served, cache2, batch_size=size)
        assert (
            [tr2.translate(r) for r in requests] == local
            and tr2.counts() == tr.counts()
            and served.fallbacks == 0
        )


@dataclass(frozen=True)
class Pid:
    """A stage that tags each item with the process that ran it."""

    def open(self):
        import os

        pid = os.getpid()
        return lambda batch: [(x * 2, pid) for x in batch]


def test_local_workers_are_forked_processes_with_the_same_results():
    import os

    from evaluators.compute.engine import _start_method

    assert _start_method() == "fork"  # no Ray driver in this process: plain fork

    batches = [[i, i + 10] for i in range(8)]
    one = LocalEngine(workers=1).map_batches(Pid(), batches)
    two = LocalEngine(workers=2).map_batches(Pid(), batches)
    assert [[x for x, _ in b] for b in two] == [[x for x, _ in b] for b in one]
    assert {p for b in one for _, p in b} == {os.getpid()}
    assert os.getpid() not in {
        p for b in two for _, p in b
    }  # --workers 2: two processes, not this one


def test_cbd_extraction_is_the_same_with_one_or_two_local_workers():
    from builders.cbd import logic, stages

    lex = logic.build_lexicon([("house", "Haus"), ("red", "rot"), ("dog", "Hund")], case=True)
    numbered = [(i, f"The red house {i} dog", f"Das rote Haus {i} Hund") for i in range(4500)]
    one = stages.extract_all(LocalEngine(workers=1), numbered, lex)
    two = stages.extract_all(LocalEngine(workers=2), numbered, lex)
    assert len(stages.plan_chunks(numbered)) == 3
    assert one == two and one[1]["kept"] >= 2 * 4500
