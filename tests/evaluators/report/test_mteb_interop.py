"""mteb both ways (issue 26 item 4), checked with mteb itself: one number through ``mteb.evaluate`` and
``xlbench eval`` for a model whose vectors depend on its prompt; exports of several languages and
families load in one ``ResultCache``; ``model_meta.json`` validates with mteb's ``ModelMeta``."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

import xlbench
from builders.cli import main
from evaluators.report.mteb import MtebEncoder, filepair_task, mteb_model_name

mteb = pytest.importorskip("mteb", reason="mteb is a test extra: pip install -e '.[dev]'")

MODEL = "prompty@1"


def prompty(texts, role=None):
    """Hashed character trigrams of ``"query: " + text`` (E5's prompt) for the query role, cut to
    24 characters as a model's maximum length cuts: the prompt changes what the model sees."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, text in enumerate(texts):
        padded = f"  {'query: ' if role == 'query' else ''}{text}"[:24]
        for j in range(len(padded) - 2):
            out[i, zlib.crc32(padded[j : j + 3].encode("utf-8")) % 64] += 1.0
        # Integer counts give exactly tied cosines, which float rounding (BLAS blocking, threads)
        # and torch.topk break either way; a small text-seeded part makes every choice clear.
        seed = zlib.crc32(padded.encode("utf-8"))
        out[i] += 0.05 * np.random.default_rng(seed).random(64, dtype=np.float32)
    return out


def _clear_choices(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether every row's and column's best cosine beats the second by far more than rounding."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    sim = x @ y.T
    gaps = [np.diff(np.sort(m, axis=1)[:, -2:], axis=1) for m in (sim, sim.T)]
    return bool(min(g.min() for g in gaps) > 1e-4)


def _pair(folder, family: str, a: str, b: str, seed: int) -> tuple[str, str]:
    """Line-aligned files named as LASER's Tatoeba (``family.a-b.a``): noisy copies, imperfect retrieval."""
    rng = np.random.default_rng(seed)
    letters = list("abcdefghijklmnop")
    src = [" ".join("".join(rng.choice(letters, 4)) for _ in range(3)) for _ in range(40)]
    tgt = [" ".join(w[:2] + "".join(rng.choice(letters, 2)) for w in s.split()) for s in src]
    paths = folder / f"{family}.{a}-{b}.{a}", folder / f"{family}.{a}-{b}.{b}"
    for path, lines in zip(paths, (src, tgt)):
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(paths[0]), str(paths[1])


def _accuracy(encoder: MtebEncoder, task) -> float:
    res = mteb.evaluate(encoder, [task], cache=None, show_progress_bar=False, co2_tracker=False)
    return res.task_results[0].scores["test"][0]["accuracy"]


def test_mteb_evaluate_through_the_adapter_equals_xlbench_eval(tmp_path):
    src, tgt = _pair(tmp_path, "tatoeba", "spa", "eng", 0)
    lines = [open(f, encoding="utf-8").read().splitlines() for f in (src, tgt)]
    assert _clear_choices(prompty(lines[0], "query"), prompty(lines[1], "query"))
    model = (prompty, MODEL)
    ours = xlbench.evaluate("bitext-retrieval", model=model, src=src, tgt=tgt, use_cache=False)
    entry = ours.scores["test"][0]
    assert entry["subset"] == "spa_Latn-eng_Latn" and ours.dataset["langs"] == [
        "spa_Latn",
        "eng_Latn",
    ]
    adapter = MtebEncoder(model, use_cache=False)
    task = filepair_task([(src, tgt)])
    assert _accuracy(adapter, task) == pytest.approx(entry["cosine_src2tgt_acc"], abs=1e-9)
    # the prompt matters for this model: without it mteb would score another number
    assert _accuracy(MtebEncoder(model, role=None, use_cache=False), task) != pytest.approx(
        entry["cosine_src2tgt_acc"], abs=1e-9
    )
    meta = adapter.mteb_model_meta
    assert (meta.name, meta.revision) == (mteb_model_name(ours.model), ours.model["revision"])


def test_export_of_languages_and_families_loads_in_one_result_cache(tmp_path):
    from mteb.models.model_meta import ModelMeta

    results = tmp_path / "results"
    for family, a, seed in [("tatoeba", "spa", 1), ("tatoeba", "deu", 2), ("flores", "fra", 3)]:
        src, tgt = _pair(tmp_path, family, a, "eng", seed)
        xlbench.evaluate(
            "bitext-retrieval", model=(prompty, MODEL), src=src, tgt=tgt, out=str(results),
            use_cache=False,
        )  # fmt: skip
    for lang in ("deu", "fra"):  # two local builds of one family: two tasks, not one name twice
        (tmp_path / f"c.{lang}").write_text(
            "".join(f"{lang} satz {i} wort{i % 7}\n" for i in range(120)), encoding="utf-8"
        )
        (tmp_path / "c.en").write_text(
            "".join(f"sentence {i} word{i % 7}\n" for i in range(120)), encoding="utf-8"
        )
        build = tmp_path / f"bucc-{lang}"
        argv = ["build", "bucc", "--lang", f"{lang}-eng", "--parallel", str(tmp_path / f"c.{lang}")]
        argv += [str(tmp_path / "c.en"), "--gold-pairs", "10", "--parallel-fraction", "0.5"]
        assert main([*argv, "--out", str(build)]) == 0
        xlbench.evaluate(
            "bucc", model="random", dataset=str(build), out=str(results), use_cache=False
        )
    out = tmp_path / "mteb"
    assert main(["export", "mteb", str(results), "--out", str(out)]) == 0
    for meta in out.rglob("model_meta.json"):
        ModelMeta.model_validate(json.loads(meta.read_text()))  # mteb's own class
    loaded = mteb.ResultCache(cache_path=out).load_results(
        require_model_meta=True, include_remote=False
    )
    tasks = {tr.task_name: tr for mr in loaded.model_results for tr in mr.task_results}
    assert len(loaded.model_results) == 2  # prompty and random, each listed once
    tatoeba = tasks["xlbench-bitext-retrieval-tatoeba"]
    assert sorted(e["hf_subset"] for e in tatoeba.scores["test"]) == [
        "deu_Latn-eng_Latn",
        "spa_Latn-eng_Latn",
    ]
    assert "xlbench-bitext-retrieval-flores" in tasks
    bucc = sorted(name for name in tasks if name.startswith("xlbench-bucc-"))
    assert len(bucc) == 2
    for tr in tasks.values():
        assert all(e["languages"] for e in tr.scores["test"])
        assert np.isfinite(tr.get_score())
