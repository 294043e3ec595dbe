"""alee's build on a local Ray cluster equals the local build byte for byte, also when a worker is killed.

The AMR parser and generator are scripted stand-ins (no amrlib model exists offline): a
rule-based sentence-to-graph and graph-to-sentence pair, deterministic, sent to the workers
by value. The NLI model is a real (tiny, random) transformers model saved to a folder and
loaded by the ordinary :class:`builders.adapters.nli.NliModel` on every worker.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from builders.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.ray]

NOUNS = ["dog", "cat", "boy", "girl", "bird"]
VERBS = ["chased", "saw", "liked"]
SENTENCE = re.compile(r"^The (\w+) (\w+) the (\w+)\.$")


@dataclass(frozen=True)
class ScriptedAmr:
    """Stands in for :class:`builders.alee.stages.AmrStage` (same fields): a rule-based AMR pair.

    ``parse``: "The A V the B." -> ``(v / V-01 :ARG0 (a / A) :ARG1 (b / B))``, anything else fails.
    ``generate``: the inverse, "did not" for ``:polarity -``. Each chunk leaves a marker file in
    ``path`` (the model folder); with a ``gate`` (a KillGate), the first parse chunk a Ray
    worker runs waits there to be killed.
    """

    role: str
    path: str | None
    batch_size: int
    device: str | None = None
    gate: Any = None

    def identity(self) -> tuple[str, str]:
        return f"scripted-{self.role}", "1"

    def open(self):
        folder = Path(self.path or ".")
        one = _parse if self.role == "parse" else _generate
        role, gate = self.role, self.gate if self.role == "parse" else None

        class Loaded:
            model_id, revision = self.identity()

            def __call__(self, chunks):
                out = []
                for chunk in chunks:
                    if gate is not None:
                        gate.wait()  # the first parse chunk in a Ray worker, once
                    out.append([one(x) for x in chunk])
                    marker = f"done-{role}-{os.getpid()}-{hashlib.sha256(repr(chunk).encode()).hexdigest()[:8]}"
                    (folder / marker).write_text("1")
                return out

        return Loaded()


def _parse(sentence: str):
    m = SENTENCE.match(sentence)
    if not m:
        return None, "parse-none"
    a, verb, b = m.groups()
    return f"(v / {verb}-01 :ARG0 (a / {a}) :ARG1 (b / {b}))", "ok"


def _generate(graph: str):
    import penman

    g = penman.decode(graph)
    concept = {v: c for v, _, c in g.instances()}
    args = {role: concept[t] for _, role, t in g.edges()}
    negated = any(a[1] == ":polarity" for a in g.attributes())
    verb = concept[g.top].removesuffix("-01")
    return (
        f"The {args[':ARG0']} {'did not ' if negated else ''}{verb} the {args[':ARG1']}.",
        False,
        "ok",
    )


def _sources() -> list[str]:
    """Sentences (some unchanged under RS, some unparsable) and two-sentence paragraphs."""
    out = []
    for i, verb in enumerate(VERBS):
        for j, a in enumerate(NOUNS):
            b = NOUNS[(j + i) % len(NOUNS)]  # i == 0: "The dog chased the dog." (RS gives it back)
            out.append(f"The {a} {verb} the {b}.")
    out += [
        "It rains.",
        "Hello there. The cat saw the dog.",
        "The boy liked the girl. The girl saw the boy.",
    ]
    return out


def _tiny_nli(folder: Path) -> None:
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    words = sorted({w.strip(".").lower() for s in _sources() for w in s.split()} | {"did", "not"})
    vocab = folder / "vocab.txt"
    folder.mkdir()
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *words]) + "\n")
    torch.manual_seed(0)
    labels = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}
    cfg = BertConfig(
        vocab_size=len(vocab.read_text().split()), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, num_labels=3, initializer_range=1.0,
        id2label=labels, label2id={v: k for k, v in labels.items()},
    )  # fmt: skip
    model = BertForSequenceClassification(cfg).eval()
    with (
        torch.no_grad()
    ):  # an unsaturated pooler, so that the label depends on the pair (both ways)
        model.bert.pooler.dense.weight.mul_(0.02)
        model.classifier.weight.mul_(10.0)
        model.classifier.bias.zero_()
    model.save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True).save_pretrained(folder)


def digest(folder: Path) -> dict[str, str]:
    """sha256 of every parquet file of a built folder."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.parquet"))
    }


def manifest(folder: Path) -> dict:
    """The manifest without its clock times, its ``run`` section and the checkout's state.

    ``git_commit`` gains ``-dirty`` when the working tree is edited between the two builds,
    which says nothing about the engines compared.
    """
    data = json.loads((folder / "manifest.json").read_text())
    for key in ("started_at", "finished_at", "run", "git_commit"):
        data.pop(key, None)
    return data


@pytest.fixture
def alee_inputs(tmp_path, monkeypatch, ray_cluster):
    """The scripted AMR stages in place, a tiny NLI model, two target languages; returns the common argv."""
    import builders.alee.stages as stage_specs

    ray_cluster.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(stage_specs, "AmrStage", ScriptedAmr)
    models = {}
    for role in ("parse", "generate"):
        models[role] = tmp_path / f"amr-{role}"
        models[role].mkdir()
        (models[role] / "amrlib_meta.json").write_text('{"version": "1"}')
    _tiny_nli(tmp_path / "nli")
    sources = _sources()
    (tmp_path / "fr.tsv").write_text("".join(f"{s}\tFR {i}\n" for i, s in enumerate(sources)))
    (tmp_path / "de.tsv").write_text(
        "".join(f"{s}\tDE {i}\n" for i, s in enumerate(sources) if i % 3)
    )
    argv = ["build", "alee", "--langs", "fr,de", "--tsv", f"fr={tmp_path / 'fr.tsv'}", "--tsv",
            f"de={tmp_path / 'de.tsv'}", "--types", "PN,RS", "--amr-parser", str(models["parse"]),
            "--amr-generator", str(models["generate"]), "--amr-batch-size", "4",
            "--nli-model", str(tmp_path / "nli"), "--nli-batch-size", "3"]  # fmt: skip
    return argv, models


def _check_local(folder: Path) -> None:
    """The local build exercises what the cluster must reproduce: parse failures, NLI both ways, paragraphs."""
    counts = json.loads((folder / "manifest.json").read_text())["counts"]
    total = counts["total"]
    assert total["sources"] > total["parsed"] > 0 and total["generated"] > total["nli_kept"] > 0
    assert counts["pairing"]["deu_Latn"]["no_translation"] > 0
    import pyarrow.parquet as pq

    rows = pq.read_table(folder / "data" / "eng_Latn" / "test-00000-of-00001.parquet").to_pylist()
    assert {r["level"] for r in rows} == {"sentence", "paragraph"}


def test_alee_on_ray_equals_local(tmp_path, alee_inputs):
    argv, models = alee_inputs
    assert main([*argv, "--out", str(tmp_path / "local")]) == 0
    _check_local(tmp_path / "local")
    local_chunks = {p.name.split("-", 3)[3] for p in models["parse"].glob("done-*")}
    for p in models["parse"].glob("done-*"):
        p.unlink()
    assert main([*argv, "--out", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"]) == 0
    assert (
        digest(tmp_path / "ray") == digest(tmp_path / "local")
        and len(digest(tmp_path / "local")) == 3
    )
    assert manifest(tmp_path / "ray") == manifest(tmp_path / "local")
    # The same parse chunks as locally, computed on the workers (this process ran none of them).
    ray_marks = list(models["parse"].glob("done-*"))
    assert {p.name.split("-", 3)[3] for p in ray_marks} == local_chunks
    assert str(os.getpid()) not in {p.name.split("-")[2] for p in ray_marks}


def test_alee_on_ray_survives_a_killed_worker(tmp_path, alee_inputs, killer, monkeypatch):
    import builders.alee.stages as stage_specs

    argv, models = alee_inputs
    k, gate = killer
    assert main([*argv, "--out", str(tmp_path / "local")]) == 0
    monkeypatch.setattr(stage_specs, "AmrStage", functools.partial(ScriptedAmr, gate=gate))
    assert main([*argv, "--out", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"]) == 0
    k.join(timeout=5)
    assert k.killed is not None, "the test did not manage to kill a worker"
    assert digest(tmp_path / "ray") == digest(tmp_path / "local")
    assert manifest(tmp_path / "ray") == manifest(tmp_path / "local")


def test_alee_from_foils_on_ray_equals_local(tmp_path, alee_inputs):
    """``--foils``: only the NLI stage runs, on the workers; kept and rejected foils as locally."""
    argv, _ = alee_inputs
    sources = _sources()[:12]
    lines = ["en_orig,en_foil,type"]
    for i, s in enumerate(sources):
        _, verb, _ = SENTENCE.match(s).groups()
        lines.append(
            f"{s},{s.replace(verb, 'did not ' + verb)},PN" if i % 2 else f"{s},{s[::-1]},RS"
        )
    (tmp_path / "foils.csv").write_text("\n".join(lines) + "\n")
    common = [*argv, "--foils", str(tmp_path / "foils.csv")]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    total = json.loads((tmp_path / "local" / "manifest.json").read_text())["counts"]["total"]
    assert total["sources"] > total["nli_kept"] > 0
    assert main([*common, "--out", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"]) == 0
    assert digest(tmp_path / "ray") == digest(tmp_path / "local")
    assert manifest(tmp_path / "ray") == manifest(tmp_path / "local")
