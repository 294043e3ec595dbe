"""``xlbench eval alignment``: score a predicted word alignment against gold or silver links.

Same numbers as awesome-align's ``tools/aer.py`` on the same files (micro
averages, S ⊆ P, F1 with alpha 0.5), plus: automatic 0/1-based index
detection, id-prefixed / SilverAlign / NAACL files, empty hypotheses, and
*partial* evaluation for silver data (only predicted links whose source word
is aligned in the reference count; on by default with ``--dataset``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluators.core.errors import InputFileError, UsageError
from evaluators.core.hashing import sha256_file_or_none
from evaluators.data.alignio import (
    FORMATS,
    AlignmentFile,
    read_alignments,
    read_parallel_text,
    resolve_base,
)
from evaluators.metrics.alignment import (
    SCORE_KEYS,
    AlignmentScore,
    partial_filter,
    score_alignments,
)
from evaluators.run.task import Evaluator, Scores, TaskMetadata, param
from evaluators.schema import silver

if TYPE_CHECKING:
    import numpy as np

    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder

POSSIBLE_MODES = ("keep", "as-sure", "ignore")

TASK = TaskMetadata(
    name="alignment",
    family="silver",
    splits=("test",),
    main_score="f1",
    main_score_name="f1",
    output_keys=SCORE_KEYS,
    table=("precision", "recall", "f1", "aer", "n_pred", "n_sure", "n_possible", "n_sentences"),
    model="none",
    dataset="optional",
    epilog="""examples:
  xlbench eval alignment --gold ../shared/data/gold_align_awesome/enfr.gold --pred pred.txt
  xlbench eval alignment --gold silver/gold.txt --pred pred.txt --partial --text silver/parallel.txt
  xlbench eval alignment --dataset out/silver-eng_Latn-spa_Latn --pred pred.txt
index base: auto (default) decides per file. With --text (or --dataset): 1-based if an index equals
the sentence length, else 0-based. Without: 0-based if an index 0 occurs, else 1-based.
--one-based / --zero-based (or --index-base) force it for both files; --gold-base / --pred-base for one.
""",
)


@dataclass(frozen=True)
class Params:
    """Parameters of ``alignment``."""

    gold: str | None = param(
        None,
        "reference alignment file (Pharaoh, id<TAB>links, SilverAlign gold.txt or NAACL)",
        sig=False,
    )
    pred: str | None = param(None, "predicted alignment file (an empty line = no links)", sig=False)
    config: str | None = param(None, "config of --dataset (default: its only main config)")
    text: str | None = param(
        None,
        "'src ||| tgt' file of the gold sentences (enables range checks and length-based base detection)",
        sig=False,
    )
    gold_format: str = param("auto", "format of --gold (default: auto)", choices=FORMATS, sig=False)
    pred_format: str = param("auto", "format of --pred (default: auto)", choices=FORMATS, sig=False)
    index_base: str = param(
        "auto",
        "auto (default), 0 or 1",
        choices=("auto", "0", "1"),
        sig=False,
        consts=(
            ("--one-based", "1", "both files are 1-based"),
            ("--zero-based", "0", "both files are 0-based"),
        ),
    )
    gold_base: str | None = param(
        None,
        "index base of --gold: auto, 0 or 1 (default: --index-base)",
        choices=("auto", "0", "1"),
        sig=False,
    )
    pred_base: str | None = param(
        None,
        "index base of --pred: auto, 0 or 1 (default: --index-base)",
        choices=("auto", "0", "1"),
        sig=False,
    )
    possible: str = param(
        "keep",
        "possible links: keep (default, aer.py), as-sure (aer.py --allSure), ignore (aer.py --ignorePossible)",
        choices=POSSIBLE_MODES,
    )
    partial: bool | None = param(
        None,
        "count only predicted links whose source word is aligned in the reference (default: on with --dataset)",
        action=argparse.BooleanOptionalAction,
    )
    reverse_gold: bool = param(
        False, "swap src/tgt in the reference (aer.py --reverseRef)", sig="rev-gold"
    )
    reverse_pred: bool = param(
        False, "swap src/tgt in the prediction (aer.py --reverseHyp)", sig="rev-pred"
    )


def signature_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """The index bases actually used (detected or forced), micro averages, no seed."""
    return {
        "gold-base": values.get("gold_base"),
        "pred-base": values.get("pred_base"),
        "avg": "micro",
        "seed": None,
    }


def _apply_base(
    afile: AlignmentFile,
    requested: str,
    src_lens: Any,
    tgt_lens: Any,
    reverse: bool,
    what: str = "the alignment file",
    flag: str = "--index-base",
) -> tuple[AlignmentFile, int, str]:
    if reverse:
        afile = AlignmentFile(
            afile.keys,
            [{(j, i) for i, j in s} for s in afile.sure],
            [{(j, i) for i, j in p} for p in afile.possible],
            afile.fmt,
            afile.path,
        )
    # alignio decides (NAACL: 1-based, NULL links dropped; Pharaoh: never a silent guess).
    return resolve_base(afile, requested, src_lens, tgt_lens, what=what, flag=flag)


def apply_possible_mode(
    sure: list[set], possible: list[set], mode: str
) -> tuple[list[set], list[set]]:
    """Apply ``--possible``: keep (S, P), as-sure (P, P) or ignore (S, S).

    >>> s, p = apply_possible_mode([{(0, 0)}], [{(0, 0), (1, 1)}], "as-sure")
    >>> sorted(s[0]), sorted(p[0])
    ([(0, 0), (1, 1)], [(0, 0), (1, 1)])
    """
    if mode == "as-sure":
        return [set(p) for p in possible], [set(p) for p in possible]
    if mode == "ignore":
        return [set(s) for s in sure], [set(s) for s in sure]
    return sure, possible


def pair_up(
    gold: AlignmentFile, pred: AlignmentFile
) -> tuple[list[str], list[set], list[set], list[set]]:
    """Match prediction to reference sentences; return ``(keys, sure, possible, pred)``.

    Two Pharaoh files must have the same number of lines. Otherwise sentences
    match by key (line number or id); a key present on one side only means no
    links on the other side. A Pharaoh prediction against an id file with
    non-numeric ids pairs by order when the counts agree.

    Raises:
        InputFileError: line counts differ, or no sentence key is shared.
    """
    if gold.fmt == "pharaoh" and pred.fmt == "pharaoh" and len(gold.keys) != len(pred.keys):
        raise InputFileError(
            f"The reference has {len(gold.keys)} sentences but the prediction has {len(pred.keys)} lines; "
            f"write one line per sentence (an empty line for no links)."
        )
    g, p = gold.as_dict(), pred.as_dict()
    if pred.fmt == "pharaoh" and gold.fmt == "id" and not all(k.isdigit() for k in gold.keys):
        if len(gold.keys) != len(pred.keys):
            raise InputFileError(
                f"The reference has {len(gold.keys)} sentence ids but the Pharaoh prediction has {len(pred.keys)} lines; "
                f"write id<TAB>links lines or one line per reference sentence."
            )
        p = {gk: p[pk] for gk, pk in zip(gold.keys, pred.keys)}
    if g and p and not set(g) & set(p):
        raise InputFileError(
            f"No sentence id is shared by the reference ({truncate_keys(g)}) and the prediction ({truncate_keys(p)}); "
            f"check the id column or use plain one-line-per-sentence files."
        )
    keys = list(g) + [k for k in p if k not in g]
    if all(k.isdigit() for k in keys):
        keys.sort(key=int)
    empty: tuple[set, set] = (set(), set())
    return (
        keys,
        [g.get(k, empty)[0] for k in keys],
        [g.get(k, empty)[1] for k in keys],
        [p.get(k, empty)[1] for k in keys],
    )


def truncate_keys(d: dict) -> str:
    """Return the first few keys of ``d`` for an error message.

    >>> truncate_keys({"a": 1, "b": 2, "c": 3, "d": 4})
    'a, b, c, ...'
    """
    keys = list(d)
    return ", ".join(keys[:3]) + (", ..." if len(keys) > 3 else "")


def file_sha256(path: str | os.PathLike | None) -> str | None:
    """Return the sha256 of a file (the revision of a reference or prediction file), or None if unreadable."""
    return sha256_file_or_none(path) if path else None


def _gold_from_dataset(
    data: DatasetSource, args: Any
) -> tuple[AlignmentFile, list[int], list[int], dict, str]:
    (config,) = data.select_configs(
        "silver", args.config, scored=silver.alignment_table, what="alignment config", single=True
    )
    ds = data.load(config, "test")
    keys = [str(x) for x in ds[silver.ID]]
    sure = [{(int(a), int(b)) for a, b in links} for links in ds[silver.SURE]]
    possible = [
        {(int(a), int(b)) for a, b in links} | s for links, s in zip(ds[silver.POSSIBLE], sure)
    ]
    src_lens = [len(t) for t in ds[silver.SRC_TOKENS]]
    tgt_lens = [len(t) for t in ds[silver.TGT_TOKENS]]
    return (
        AlignmentFile(keys, sure, possible, "id", data.id),
        src_lens,
        tgt_lens,
        data.ref.to_dict(),
        config,
    )


def _lengths_by_key(
    afile: AlignmentFile, src_lens: Any, tgt_lens: Any, order_keys: list[str]
) -> Any:
    if src_lens is None:
        return None, None
    pos = {k: n for n, k in enumerate(order_keys)}
    if not all(k in pos for k in afile.keys):
        return None, None
    return [src_lens[pos[k]] for k in afile.keys], [tgt_lens[pos[k]] for k in afile.keys]


def _gold_from_files(args: Params) -> Any:
    """The gold file (and the tokenised text, for lengths and line order); its dataset record.

    Returns ``(gold, source lengths, target lengths, dataset record, key order)``; lengths
    and order are ``None`` without ``--text``.
    """
    assert args.gold, "checked by evaluate_files"
    gold_raw = read_alignments(args.gold, args.gold_format)
    ds_info = {
        "id": args.gold,
        "source": "file",
        "revision": file_sha256(args.gold),
        "version": None,
    }
    src_lens = tgt_lens = order_keys = None
    if args.text:
        src_tok, tgt_tok = read_parallel_text(args.text)
        if gold_raw.fmt == "pharaoh" and len(gold_raw.keys) != len(src_tok):
            raise InputFileError(
                f"{args.gold} has {len(gold_raw.keys)} lines but {args.text} has {len(src_tok)} "
                "sentence pairs; line i of --gold must align line i of --text."
            )
        src_lens, tgt_lens = [len(s) for s in src_tok], [len(t) for t in tgt_tok]
        order_keys = [str(n) for n in range(len(src_lens))]
    return gold_raw, src_lens, tgt_lens, ds_info, order_keys


def evaluate_files(args: Params, data: DatasetSource | None = None) -> tuple[AlignmentScore, dict]:
    """Read, convert and score; return the score and the parameters that shaped it."""
    if data is not None and args.gold:
        raise UsageError("Pass either --gold or --dataset, not both.")
    if data is None and not args.gold:
        raise UsageError("Pass --gold FILE or --dataset FOLDER (the reference alignment).")
    if not args.pred:
        raise UsageError("Pass --pred FILE (the predicted alignment).")
    if data is not None:
        gold_raw, src_lens, tgt_lens, ds_info, config = _gold_from_dataset(data, args)
        order_keys = list(gold_raw.keys)
        gold_base_req = "0"  # the dataset contract is 0-based
    else:
        gold_raw, src_lens, tgt_lens, ds_info, order_keys = _gold_from_files(args)
        config = None
        gold_base_req = args.gold_base or args.index_base
    pred_raw = read_alignments(args.pred, args.pred_format)
    gl_s, gl_t = _lengths_by_key(gold_raw, src_lens, tgt_lens, order_keys or [])
    if gl_s is not None and args.reverse_gold:
        gl_s, gl_t = gl_t, gl_s
    gold, gold_base, gold_reason = _apply_base(
        gold_raw,
        gold_base_req,
        gl_s,
        gl_t,
        args.reverse_gold,
        f"the gold file {args.gold!r}" if args.gold else f"the gold links of {ds_info['id']!r}",
        "--gold-base",
    )
    if data is not None and pred_raw.fmt == "pharaoh":
        # Line i is sentence i of the config: as with two Pharaoh files, the counts must agree
        # (a short file would score its missing lines as empty predictions).
        if len(pred_raw.keys) != len(gold_raw.keys):
            raise InputFileError(
                f"{config} of {ds_info['id']!r} has {len(gold_raw.keys)} sentences but the prediction "
                f"{str(args.pred)!r} has {len(pred_raw.keys)} lines; write one line per sentence "
                f"(an empty line for no links)."
            )
        pred_raw = AlignmentFile(
            [gold_raw.keys[int(k)] if int(k) < len(gold_raw.keys) else k for k in pred_raw.keys],
            pred_raw.sure,
            pred_raw.possible,
            "id",
            pred_raw.path,
        )
    pl_s, pl_t = _lengths_by_key(pred_raw, src_lens, tgt_lens, order_keys or [])
    pred, pred_base, pred_reason = _apply_base(
        pred_raw,
        args.pred_base or args.index_base,
        pl_s,
        pl_t,
        args.reverse_pred,
        f"the prediction file {str(args.pred)!r}",
        "--pred-base",
    )
    keys, sure, possible, hyp = pair_up(gold, pred)
    sure, possible = apply_possible_mode(sure, possible, args.possible)
    partial = args.partial if args.partial is not None else data is not None
    score = score_alignments(sure, possible, hyp, partial=partial)
    items = sentence_items(config or "all", keys, sure, possible, hyp, partial)
    params = {
        "gold_base": gold_base,
        "pred_base": pred_base,
        "gold_base_reason": gold_reason,
        "pred_base_reason": pred_reason,
        "possible": args.possible,
        "partial": partial,
        "reverse_gold": args.reverse_gold,
        "reverse_pred": args.reverse_pred,
        "gold_format": gold.fmt,
        "pred_format": pred_raw.fmt,
        "dataset": ds_info,
        "config": config,
        "items": items,
    }
    return score, params


def sentence_items(
    subset: str,
    keys: Any,
    sure: Any,
    possible: Any,
    pred: Any,
    partial: bool = False,
    words: Sequence[tuple[Sequence[str], Sequence[str]]] | None = None,
) -> list[dict]:
    """Per-sentence rows of an alignment score: summed, their counts give its micro P/R/F1.

    ``tp`` = |A∩S|, ``tp_p`` = |A∩P|, ``n_pred`` = |A|, ``n_gold`` = |S| (after the partial
    filter); ``score`` is the sentence's own F1, ``correct`` a perfect sentence. With ``words``
    (each sentence's source and target words) the rows carry the text columns of
    :data:`evaluators.run.predictions.TEXT_COLUMNS`, so an error table reads as words: the
    source sentence over the target one, the sure links the aligner missed, and its links that
    are neither sure nor possible (after the partial filter).

    >>> row = sentence_items("s", ["0"], [{(0, 0), (1, 1)}], None, [{(0, 0), (1, 0)}],
    ...                      words=[(["the", "house"], ["la", "casa"])])[0]
    >>> row["query_text"], row["query_context"], row["expected_text"], row["retrieved_text"]
    ('the house', 'la casa', 'missed: house–casa', 'wrong: house–la')
    """
    possible = possible if possible is not None else [()] * len(sure)
    texts = words if words is not None else [None] * len(sure)
    rows = []
    for key, s_links, p_links, a_links, said in zip(keys, sure, possible, pred, texts):
        one = score_alignments([s_links], [p_links], [a_links], partial=partial)
        rows.append(
            {
                "item_id": str(key),
                "subset": subset,
                "correct": one.a_and_s == one.n_sure and one.a_and_p == one.n_pred,
                "score": one.f1,
                "retrieved": str(one.n_pred),
                "tie": False,
                "main": True,
                "tp": one.a_and_s,
                "tp_p": one.a_and_p,
                "n_pred": one.n_pred,
                "n_gold": one.n_sure,
                **({} if said is None else _link_texts(said, s_links, p_links, a_links, partial)),
            }
        )
    return rows


def _link_texts(
    words: tuple[Sequence[str], Sequence[str]],
    sure: Any,
    possible: Any,
    pred: Any,
    partial: bool,
) -> dict[str, str]:
    src, tgt = words
    s, p = set(sure), set(possible) | set(sure)
    a = partial_filter(pred, s, p) if partial else set(pred)

    def said(links: set) -> str:
        return ", ".join(
            f"{src[i] if 0 <= i < len(src) else i}–{tgt[j] if 0 <= j < len(tgt) else j}"
            for i, j in sorted(links)
        )

    missed, wrong = s - a, a - p
    return {
        "query_text": " ".join(src),
        "query_context": " ".join(tgt),
        "expected_text": f"missed: {said(missed)}" if missed else "",
        "expected_context": "",
        "retrieved_text": f"wrong: {said(wrong)}" if wrong else "",
        "retrieved_context": "",
    }


def score(
    data: DatasetSource | None, model: Encoder | None, params: Params, rng: np.random.Generator
) -> Scores:
    """Score ``--pred`` against ``--gold`` or ``--dataset``."""
    score, used = evaluate_files(params, data)
    ds_info = used.pop("dataset")
    items = used.pop("items")
    entry = {"subset": used["config"] or "all", **score.to_dict()}
    notes = [
        f"gold index base {used['gold_base']} ({used['gold_base_reason']})",
        f"pred index base {used['pred_base']} ({used['pred_base_reason']})",
    ]
    if score.n_pred == 0:
        notes.append("the prediction has no (counted) links: precision is reported as 0")
    return Scores(
        scores={"test": [entry]},
        main_score=score.f1,
        notes=notes,
        effective={k: v for k, v in used.items() if not k.endswith("_reason")},
        dataset=ds_info,
        model={
            "id": Path(params.pred or "").name,
            "revision": file_sha256(params.pred),
            "revision_source": "encoder",
            "path": params.pred,
        },
        items=items,
    )


EVALUATOR = Evaluator(TASK, Params, score, signature_extra=signature_extra)
