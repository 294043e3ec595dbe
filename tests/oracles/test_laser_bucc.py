"""``eval bucc --unify`` against LASER's ``mine_bitexts.py --unify`` + ``bucc.py`` on a corpus with repeated texts.

Always: against the transcription (``laser_bucc_reference.py`` + ``mining_reference.py``).
With ``XLBENCH_LASER_DIR`` (a LASER checkout), faiss and torch: LASER's two scripts run
unmodified as subprocesses. ``mine_bitexts.py`` imports LASER's encoder stack
(``embed``, ``lib.text_processing``) only to load embeddings; a stub ``embed`` module
with the same ``EmbedLoad`` (float32 file -> ``(n, dim)``) stands in for it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evaluators.metrics import mining as M


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_HERE = Path(__file__).parent
ref = _load("laser_bucc_reference", _HERE / "laser_bucc_reference.py")
mine_ref = _load("bucc_mining_reference_for_unify", _HERE / "mining_reference.py")

DIM = 16


def corpus(seed: int = 0):
    """60 German and 80 English sentences, 20 gold pairs; some texts repeat on a side.

    Repeats: German gold text 0 twice (its gold pair can never be predicted by LASER),
    an English distractor three times, a German distractor twice.
    """
    rng = np.random.default_rng(seed)
    de = [f"satz {i}" for i in range(60)]
    en = [f"sentence {i}" for i in range(80)]
    de[50] = de[0]
    en[70] = en[71] = en[60]
    de[55] = de[45]
    base = {t: rng.standard_normal(DIM) for t in set(de) | set(en)}
    for i in range(20):  # gold: de i <-> en i, near-identical vectors
        base[en[i]] = base[de[i]] + 0.3 * rng.standard_normal(DIM)
    x = np.stack([base[t] for t in de]).astype(np.float32)
    y = np.stack([base[t] for t in en]).astype(np.float32)
    de_ids = [f"de-{i:09d}" for i in range(60)]
    en_ids = [f"en-{i:09d}" for i in range(80)]
    gold = {(de_ids[i], en_ids[i]) for i in range(20)}
    return de, en, x, y, de_ids, en_ids, gold


def xlbench_unified(de, en, x, y, de_ids, en_ids, gold):
    """What ``eval bucc --unify`` does (tasks/bucc.py: _mine_split), learned threshold and predictions."""
    src_rows, src_single = M.unify(de)
    tgt_rows, tgt_single = M.unify(en)
    cands = M.restore_unified(
        M.mine(x[src_rows], y[tgt_rows], index="numpy"), src_single, tgt_single
    )
    gold_idx = {(de_ids.index(s), en_ids.index(t)) for s, t in gold}
    best = M.sweep_threshold(cands, gold_idx)
    keep = cands.scores > best.threshold
    pred = {(de_ids[i], en_ids[j]) for i, j in zip(cands.src[keep], cands.tgt[keep])}
    return best, pred


def test_unify_equals_laser_transcription():
    de, en, x, y, de_ids, en_ids, gold = corpus()
    _, pred = xlbench_unified(de, en, x, y, de_ids, en_ids, gold)
    src_inds, src_sents = ref.text_load_unify(de)
    trg_inds, trg_sents = ref.text_load_unify(en)
    xu = x[[src_inds.index(u) for u in range(len(src_sents))]]
    yu = y[[trg_inds.index(u) for u in range(len(trg_sents))]]
    mined = mine_ref.reference_mine(xu, yu, k=4, margin="ratio", retrieval="max")
    cand2score = ref.candidate_scores(
        [(s, src_sents[i], trg_sents[j]) for i, j, s in mined],
        ref.sent2id(de_ids, de),
        ref.sent2id(en_ids, en),
    )
    laser = ref.bucc_extract(cand2score, ref.bucc_optimize(cand2score, gold))
    assert pred == laser
    assert (de_ids[0], en_ids[0]) not in laser  # a repeated text is never predicted
    # without --unify the same corpus gives other pairs (repeated texts are found by id)
    plain = M.mine(x, y, index="numpy")
    gold_idx = {(de_ids.index(s), en_ids.index(t)) for s, t in gold}
    cut = M.sweep_threshold(plain, gold_idx).threshold
    keep = plain.scores > cut
    assert {(de_ids[i], en_ids[j]) for i, j in zip(plain.src[keep], plain.tgt[keep])} != laser


_LASER = os.environ.get("XLBENCH_LASER_DIR")
_STUB = """import numpy as np
def EmbedLoad(fname, dim=1024, verbose=False, fp16=False):
    x = np.fromfile(fname, dtype=(np.float16 if fp16 else np.float32), count=-1)
    x.resize(x.shape[0] // dim, dim)
    return x
SentenceEncoder = EncodeLoad = EncodeFile = None
"""


@pytest.mark.skipif(
    not _LASER or any(importlib.util.find_spec(m) is None for m in ("faiss", "torch")),
    reason="set XLBENCH_LASER_DIR to a facebookresearch/LASER checkout (with faiss-cpu and torch) "
    "to run mine_bitexts.py and tasks/bucc/bucc.py unmodified",
)
def test_unify_equals_laser_scripts_unmodified(tmp_path):
    de, en, x, y, de_ids, en_ids, gold = corpus()
    _, pred = xlbench_unified(de, en, x, y, de_ids, en_ids, gold)
    stub = tmp_path / "stub"
    (stub / "lib").mkdir(parents=True)
    (stub / "embed.py").write_text(_STUB)
    (stub / "lib" / "__init__.py").write_text("")
    (stub / "lib" / "text_processing.py").write_text("Token = BPEfastApply = SPMApply = None\n")
    for lang, texts, ids, emb in (("de", de, de_ids, x), ("en", en, en_ids, y)):
        (tmp_path / f"b.txt.{lang}").write_text("\n".join(texts) + "\n", encoding="utf-8")
        (tmp_path / f"b.id.{lang}").write_text("\n".join(ids) + "\n", encoding="utf-8")
        emb.astype(np.float32).tofile(tmp_path / f"b.enc.{lang}")
    (tmp_path / "gold").write_text("".join(f"{s}\t{t}\n" for s, t in sorted(gold)))
    env = {**os.environ, "LASER": _LASER, "PYTHONPATH": str(stub)}
    run = [sys.executable, str(Path(_LASER) / "source" / "mine_bitexts.py")]
    subprocess.run(
        [*run, str(tmp_path / "b.txt.de"), str(tmp_path / "b.txt.en"), "--src-lang", "de",
         "--trg-lang", "en", "--src-embeddings", str(tmp_path / "b.enc.de"), "--trg-embeddings",
         str(tmp_path / "b.enc.en"), "--unify", "--mode", "mine", "--retrieval", "max",
         "--margin", "ratio", "-k", "4", "--dim", str(DIM), "--output", str(tmp_path / "cand.tsv")],
        check=True, env=env, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        [sys.executable, str(Path(_LASER) / "tasks" / "bucc" / "bucc.py"), "--src-lang", "de",
         "--trg-lang", "en", "--bucc-texts", str(tmp_path / "b.txt"), "--bucc-ids",
         str(tmp_path / "b.id"), "--candidates", str(tmp_path / "cand.tsv"), "--gold",
         str(tmp_path / "gold"), "--output", str(tmp_path / "extracted")],
        check=True, env=env, capture_output=True,
    )  # fmt: skip
    lines = (tmp_path / "extracted").read_text().split("\n")
    laser = {tuple(line.split("\t")) for line in lines if line}
    assert pred == laser
