"""``xlbench eval aligners``: the SilverAlign experiments (Köksal et al. 2022, section 5).

For each language pair and configuration, one statistical aligner is trained
per setting, as the authors did: on the silver sentences + the extra parallel
text for the silver scores, on the gold sentences + the extra text for the gold
scores, with extra pairs that repeat an evaluation pair (or an earlier extra
pair) removed (:func:`evaluators.metrics.aligner_corpus.setting_corpus`;
``--training joint`` trains one aligner on silver + gold + extra text, the
earlier behaviour). Every configuration is scored on the silver alignment
(partial evaluation) and on the gold alignment (full evaluation):

* aligner comparison: each ``--methods`` aligner on words (``grow-diag-final-and``);
* tokenizer comparison: word, BPE, WordPiece, Unigram (HF ``tokenizers``,
  one shared vocabulary of ``--vocab-size`` trained on the aligner's text),
  aligned with ``--tokenizer-method``, links mapped back to words;
* vocabulary sweep: ``--sweep-tokenizer`` (default WordPiece, the paper's) at
  each ``--sweep`` size.

The paper's claim is that silver scores rank configurations like gold ones:
the Pearson r between silver F1 and gold F1 over the configurations is
reported per pair (paper: r = 0.86 on average), with Spearman's ρ beside it;
both only from three configurations on (over two, r is always ±1), so a pair
with fewer never gives the main score. Silver sets are small (80 links for
eng-tur Silver_Small): every F1 carries its bootstrap spread over sentences
(``--bootstrap`` resamples, drawn from their own rng stream so the spread never
changes an F1), so a reader can see when a ranking is noise. Breakdowns by source-word
frequency bin (Figures 4/6) are computed for the aligner comparison; a
part-of-speech breakdown needs nltk's averaged perceptron tagger, used only
when its data is installed (no download is attempted).

A pair is given as comma-separated ``key=value`` fields::

    --pair name=eng-fra,silver=DIR,gold_text=F,gold_links=F[,gold_reversed=1][,train_src=F,train_tgt=F]

``silver`` is a SilverAlign folder (``parallel.txt`` + ``gold.txt``) or
``dataset=<built silver folder or Hub repo>[,config=<pair>]``; gold is optional.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.alignio import (
    detect_base,
    open_lines,
    read_alignments,
    read_parallel_text,
    resolve_base,
    shift,
)
from evaluators.errors import InputFileError, UsageError
from evaluators.metrics.aligner_corpus import PAPER_SWEEP_TOKENIZER, setting_corpus
from evaluators.metrics.alignment import (
    FREQ_BINS,
    freq_bin_label,
    restrict_source,
    score_alignments,
)
from evaluators.metrics.correlation import MIN_N, bootstrap_f1, correlate, sentence_counts
from evaluators.task import Scores, TaskMetadata, param, seed_of

TASK = TaskMetadata(
    name="aligners",
    family="silver",
    help="Run eflomal/fast_align with several tokenizers; score each on silver and gold; Pearson r, Spearman rho (SilverAlign).",
    splits=("test",),
    main_score="pearson_r_tokenizer",
    main_score_name="pearson_r_tokenizer (silver vs gold F1, mean over pairs)",
    output_keys=("config", "method", "tokenizer", "vocab_size", "silver_f1", "gold_f1", "pearson_r_tokenizer"),
    table=("config", "silver_precision", "silver_recall", "silver_f1", "silver_f1_std", "gold_precision",
           "gold_recall", "gold_f1", "gold_f1_std", "gold_aer", "pearson_r_tokenizer", "spearman_rho_tokenizer",
           "n_configs_tokenizer", "pearson_r_sweep", "spearman_rho_sweep", "n_configs_sweep",
           "pearson_r_all", "spearman_rho_all", "n_configs_all"),
    model="none",
    dataset="none",
    plots=True,
    epilog="""example (SilverAlign Silver_Small eng-fra with Hansards gold):
  D=../shared/data
  xlbench eval aligners \\
    --pair name=eng-fra,silver=$D/silveralign_small/eng_fra,gold_text=$D/gold_align_awesome/enfr.src-tgt,gold_links=$D/gold_align_awesome/enfr.gold \\
    --train-text bible.eng bible.fra --max-train 2000 --out results/aligners
""",
)
NAME, HELP, EPILOG = TASK.name, TASK.help, TASK.epilog


@dataclass(frozen=True)
class Params:
    """Parameters of ``aligners``."""

    pair: tuple[str, ...] | None = param(None, "a language pair spec (see the description); repeatable",
                                         action="append", sig=False)
    train_text: tuple | None = param(
        None, "extra line-aligned training text (tokenised, one sentence per line); repeatable; added to every pair",
        action="append", nargs=2, metavar=("SRC", "TGT"), sig=False,
    )
    max_train: int | None = param(None, "use at most this many extra training lines per pair", type=int, sig="max-train")
    methods: tuple[str, ...] = param(("eflomal", "fast_align"), "aligners to compare on words", nargs="+", sig=False)
    symmetrize: str = param("grow-diag-final-and", "symmetrisation (default grow-diag-final-and)", sig="sym")
    tokenizers: tuple[str, ...] = param(("word", "bpe", "wordpiece", "unigram"), "tokenizers to compare", nargs="+", sig="tok")
    vocab_size: int = param(8000, "shared vocabulary size of the tokenizer comparison (default 8000)", sig="vocab")
    sweep: tuple[int, ...] = param((1000, 2000, 4000, 16000), "vocabulary sizes of the sweep", nargs="*", type=int)
    sweep_tokenizer: str = param(PAPER_SWEEP_TOKENIZER, f"tokenizer of the sweep (default {PAPER_SWEEP_TOKENIZER}, the paper's)",
                                 sig="sweep-tok")
    tokenizer_method: str = param(
        "fast_align", "aligner of the tokenizer comparison and sweep (default fast_align: deterministic)", sig="tok-aligner",
    )
    lowercase: bool = param(True, "lowercase all text (default on)", action=argparse.BooleanOptionalAction, sig="lc")
    training: str = param(
        "per-setting", "per-setting (default, the paper's): one aligner per setting, trained on that setting's "
        "sentences + the extra text; joint: one aligner on silver + gold + extra text",
        choices=("per-setting", "joint"), sig="train",
    )
    dedup: bool = param(True, "drop extra training pairs that repeat an evaluation pair or an earlier extra pair "
                        "(default on, as the authors)", action=argparse.BooleanOptionalAction, sig="dedup")
    bootstrap: int = param(1000, "bootstrap resamples of sentences for the spread of each F1 (0: none; default 1000)",
                           type=int, sig="boot")

    def __post_init__(self):
        from evaluators.aligners import METHODS
        from evaluators.aligners.subword import KINDS

        for m in [*self.methods, self.tokenizer_method]:
            if m not in METHODS:
                raise UsageError(f"Unknown aligner {m!r}; choose from {', '.join(METHODS)}.")
        for t in [*self.tokenizers, self.sweep_tokenizer]:
            if t not in KINDS:
                raise UsageError(f"Unknown tokenizer {t!r}; choose from {', '.join(KINDS)}.")
        if self.bootstrap < 0:
            raise UsageError(f"--bootstrap must be 0 or more resamples; got {self.bootstrap}.")


#: Second seed component of the bootstrap rng: ``np.random.default_rng([seed, BOOTSTRAP_STREAM])``.
BOOTSTRAP_STREAM = 0xB007


def signature_extra(values: dict) -> dict:
    """Silver scored with partial evaluation, micro-averaged; correlations from MIN_N configurations."""
    return {"silver": "partial", "avg": "micro", "corr-min-n": MIN_N}


PAIR_KEYS = (
    "name",
    "silver",
    "dataset",
    "config",
    "gold_text",
    "gold_links",
    "gold_reversed",
    "train_src",
    "train_tgt",
)


def parse_pair(spec: str) -> dict[str, str]:
    """Parse a ``--pair`` spec of ``key=value`` fields.

    >>> parse_pair("name=eng-fra,silver=/d/eng_fra")["silver"]
    '/d/eng_fra'

    Raises:
        UsageError: unknown key, missing ``=``, or neither ``silver`` nor ``dataset``.
    """
    out: dict[str, str] = {}
    for field in spec.split(","):
        key, eq, value = field.partition("=")
        key = key.strip()
        if not eq or key not in PAIR_KEYS:
            raise UsageError(
                f"Bad --pair field {field!r}; use comma-separated key=value with keys {', '.join(PAIR_KEYS)}."
            )
        out[key] = value.strip()
    if "silver" not in out and "dataset" not in out:
        raise UsageError(
            f"--pair {spec!r} needs silver=<SilverAlign folder> or dataset=<built silver dataset>."
        )
    if ("gold_text" in out) != ("gold_links" in out):
        raise UsageError(f"--pair {spec!r} needs both gold_text and gold_links (or neither).")
    if ("train_src" in out) != ("train_tgt" in out):
        raise UsageError(f"--pair {spec!r} needs both train_src and train_tgt (or neither).")
    out.setdefault("name", Path(out.get("silver") or out["dataset"]).name)
    return out


def _read_lines(path: str) -> list[list[str]]:
    return [ln.split() for ln in open_lines(path, "training text")]


def load_silver(spec: dict) -> dict:
    """Load a pair's silver sentences and links (0-based)."""
    if "dataset" in spec or "source" in spec:
        from evaluators.schema import silver
        from evaluators.source import open_source

        data = spec.get("source") or open_source(spec["dataset"])
        schema = data.check_family("silver")
        configs = [c for c in data.configs() if "details" not in schema.split_config(c)[1].suffix]
        config = spec.get("config") or (configs[0] if len(configs) == 1 else None)
        if config is None:
            raise UsageError(
                f"{data.id} has several configs ({', '.join(configs)}); add config=<pair> to --pair."
            )
        ds = data.load(config, "test")
        ref = data.ref
        sure = [{(int(a), int(b)) for a, b in x} for x in ds[silver.SURE]]
        possible = [{(int(a), int(b)) for a, b in x} | s for x, s in zip(ds[silver.POSSIBLE], sure)]
        return {
            "src": list(ds[silver.SRC_TOKENS]),
            "tgt": list(ds[silver.TGT_TOKENS]),
            "sure": sure,
            "possible": possible,
            "source": {
                "id": ref.id,
                "revision": ref.revision,
                "version": ref.version,
                "config": config,
            },
        }
    folder = Path(spec["silver"])
    src, tgt = read_parallel_text(folder / "parallel.txt")
    links = read_alignments(folder / "gold.txt", "id")
    base, _ = detect_base(
        links.possible,
        [len(src[int(k)]) for k in links.keys],
        [len(tgt[int(k)]) for k in links.keys],
    )
    links = shift(links, base)
    by_key = links.as_dict()
    sure = [by_key.get(str(n), (set(), set()))[0] for n in range(len(src))]
    possible = [by_key.get(str(n), (set(), set()))[1] for n in range(len(src))]
    from evaluators.tasks.alignment import file_sha256

    return {
        "src": src,
        "tgt": tgt,
        "sure": sure,
        "possible": possible,
        "source": {
            "id": str(folder),
            "revision": file_sha256(str(folder / "gold.txt")),
            "version": None,
        },
    }


def load_gold(spec: dict) -> dict | None:
    """Load a pair's gold sentences and links (0-based, reversed when asked)."""
    if "gold_text" not in spec:
        return None
    src, tgt = read_parallel_text(spec["gold_text"])
    links = read_alignments(spec["gold_links"])
    if links.fmt == "pharaoh" and len(links.keys) != len(src):
        raise InputFileError(
            f"{spec['gold_links']} has {len(links.keys)} lines but {spec['gold_text']} has {len(src)} sentence pairs."
        )
    if not all(k.isdigit() and int(k) < len(src) for k in links.keys):
        raise InputFileError(
            f"{spec['gold_links']} has sentence ids that are not line numbers of {spec['gold_text']}; "
            f"use one Pharaoh line per sentence pair."
        )
    keyed = {k: n for n, k in enumerate(links.keys)}
    lens_s = [len(src[int(k)]) for k in links.keys]
    lens_t = [len(tgt[int(k)]) for k in links.keys]
    links, base, reason = resolve_base(links, "auto", lens_s, lens_t, what=f"the gold file {str(spec['gold_links'])!r}")
    sure = [links.sure[keyed[str(n)]] if str(n) in keyed else set() for n in range(len(src))]
    possible = [
        links.possible[keyed[str(n)]] if str(n) in keyed else set() for n in range(len(src))
    ]
    if spec.get("gold_reversed", "0") in ("1", "yes", "true"):
        src, tgt = tgt, src
        sure = [{(j, i) for i, j in s} for s in sure]
        possible = [{(j, i) for i, j in p} for p in possible]
    return {
        "src": src,
        "tgt": tgt,
        "sure": sure,
        "possible": possible,
        "base": base,
        "base_reason": reason,
    }


def configurations(args) -> list[dict]:
    """Return the (method, tokenizer, vocab, group) configurations, deduplicated, in run order."""
    out: list[dict] = []
    seen = set()

    def add(method, tok, vocab, group):
        vocab = None if tok == "word" else vocab
        key = (method, tok, vocab)
        if key in seen:
            for c in out:
                if (c["method"], c["tokenizer"], c["vocab"]) == key:
                    c["groups"].append(group)
            return
        seen.add(key)
        out.append({"method": method, "tokenizer": tok, "vocab": vocab, "groups": [group]})

    for m in args.methods:
        add(m, "word", None, "aligner")
    for tok in args.tokenizers:
        add(args.tokenizer_method, tok, args.vocab_size, "tokenizer")
    for v in args.sweep:
        add(args.tokenizer_method, args.sweep_tokenizer, v, "sweep")
    if args.sweep:
        add(args.tokenizer_method, args.sweep_tokenizer, args.vocab_size, "sweep")
    return out


def config_label(c: dict) -> str:
    """Short label of a configuration.

    >>> config_label({"method": "eflomal", "tokenizer": "bpe", "vocab": 8000})
    'eflomal/bpe-8000'
    """
    return f"{c['method']}/{c['tokenizer']}" + (f"-{c['vocab']}" if c["vocab"] else "")


def correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson r from :data:`MIN_N` points on, ``None`` (JSON null) below or where it is undefined.

    >>> round(correlation([0.1, 0.2, 0.4], [0.5, 0.6, 0.8]), 6)
    1.0
    >>> correlation([0.1, 0.2], [0.3, 0.1]) is None
    True
    """
    return correlate(xs, ys, min_n=MIN_N).pearson


def _pos_tagger():
    try:
        import nltk

        nltk.pos_tag(["test"])
        return nltk.pos_tag
    except LookupError:
        return None
    except ImportError:
        return None


def _bins(counts: Counter, words: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {freq_bin_label(lo, hi): set() for lo, hi in FREQ_BINS}
    for w in words:
        c = counts.get(w, 0)
        for lo, hi in FREQ_BINS:
            if c >= lo and (hi is None or c <= hi):
                out[freq_bin_label(lo, hi)].add(w)
    return out


def _read_extra(spec: dict, args: Params) -> tuple[list[list[str]], list[list[str]]]:
    train_src, train_tgt = [], []
    files = list(args.train_text or ())
    if "train_src" in spec:
        files.append((spec["train_src"], spec["train_tgt"]))
    for fs, ft in files:
        s, t = _read_lines(fs), _read_lines(ft)
        if len(s) != len(t):
            raise InputFileError(
                f"Training files {fs!r} and {ft!r} differ in length ({len(s)} vs {len(t)} lines)."
            )
        train_src += s
        train_tgt += t
    if args.max_train is not None:
        train_src, train_tgt = train_src[: args.max_train], train_tgt[: args.max_train]
    return train_src, train_tgt


def training_corpora(silver: dict, gold: dict | None, extra_src, extra_tgt, args: Params) -> tuple[dict, dict]:
    """Return the aligner training corpora and, per setting, ``(corpus name, first line)`` of its sentences.

    ``per-setting``: a ``silver`` and a ``gold`` corpus, each its setting's sentences
    then the de-duplicated extra text; ``joint``: one corpus, silver then gold then extra text.
    """
    settings = [("silver", silver)] + ([("gold", gold)] if gold else [])
    if args.training == "per-setting":
        corpora = {
            name: setting_corpus(d["src"], d["tgt"], extra_src, extra_tgt, dedup=args.dedup, lowercase=args.lowercase)
            for name, d in settings
        }
        return corpora, {name: (name, 0) for name, _ in settings}
    src = silver["src"] + (gold["src"] if gold else [])
    tgt = silver["tgt"] + (gold["tgt"] if gold else [])
    corpora = {"joint": setting_corpus(src, tgt, extra_src, extra_tgt, dedup=args.dedup, lowercase=args.lowercase)}
    return corpora, {"silver": ("joint", 0), **({"gold": ("joint", len(silver["src"]))} if gold else {})}


def _spread(prefix: str, counts, boot_rng, resamples: int) -> dict:
    if not resamples or not len(counts):
        return {}
    sp = bootstrap_f1(counts, boot_rng, resamples)
    return {f"{prefix}_f1_std": sp.std, f"{prefix}_f1_low": sp.low, f"{prefix}_f1_high": sp.high}


def score(data, model, args: Params, rng) -> Scores:
    """Run every configuration on every pair (``args``: the parameters; the seed is drawn from ``rng``)."""
    import numpy as np

    from evaluators.aligners import align_subwords

    if not args.pair:
        raise UsageError("Pass at least one --pair (name=...,silver=DIR or dataset=FOLDER[,gold_text=F,gold_links=F]).")
    seed = seed_of(rng)  # the aligners take an integer seed: --seed itself
    # The bootstrap has its own stream: its draws never change an alignment or an F1.
    boot_rng = np.random.default_rng([seed, BOOTSTRAP_STREAM])
    pairs = [parse_pair(p) for p in args.pair]
    configs = configurations(args)
    progress_bar: Any
    try:
        from tqdm import tqdm as progress_bar
    except ImportError:  # pragma: no cover
        progress_bar = None

    entries, corr_entries, notes = [], [], []
    scatter, sweep_curves = {}, {}
    freq_tables = []
    tagger = _pos_tagger()
    if tagger is None:
        notes.append(
            "part-of-speech breakdown skipped: nltk's averaged perceptron tagger data is not installed offline"
        )
    datasets_info = []
    for spec in pairs:
        silver = load_silver(spec)
        gold = load_gold(spec)
        train_src, train_tgt = _read_extra(spec, args)
        corpora, where = training_corpora(silver, gold, train_src, train_tgt, args)
        n_sil = len(silver["src"])
        n_gold = len(gold["src"]) if gold else 0
        datasets_info.append(
            {
                **silver["source"],
                "pair": spec["name"],
                "n_silver": n_sil,
                "n_gold": n_gold,
                "n_train_extra": len(train_src),
                "training": {name: {"lines": len(c.src), "extra": c.n_extra, "dropped_duplicates": c.dropped_duplicates}
                             for name, c in corpora.items()},
                "gold_base": gold["base"] if gold else None,
            }
        )
        counts = {name: Counter(w for s in c.src for w in s) for name, c in corpora.items()}

        def lines(setting, n, _where=where, _corpora=corpora):
            name, first = _where[setting]
            return [list(x) for x in _corpora[name].src[first : first + n]]

        sil_src_l = lines("silver", n_sil)
        gold_src_l = lines("gold", n_gold) if gold else []
        iterator = (
            progress_bar(configs, desc=f"aligners {spec['name']}", file=__import__("sys").stderr)
            if progress_bar
            else configs
        )
        per_pair = []
        for c in iterator:
            preds = {
                name: align_subwords(
                    [list(x) for x in corp.src], [list(x) for x in corp.tgt], c["tokenizer"], c["vocab"] or 0,
                    c["method"], args.symmetrize, seed,
                )
                for name, corp in corpora.items()
            }
            sil_name, sil_first = where["silver"]
            sil_pred = preds[sil_name][sil_first : sil_first + n_sil]
            s_score = score_alignments(silver["sure"], silver["possible"], sil_pred, partial=True)
            entry = {
                "subset": spec["name"],
                "config": config_label(c),
                "method": c["method"],
                "tokenizer": c["tokenizer"],
                "vocab_size": c["vocab"],
                "groups": c["groups"],
                **{f"silver_{k}": v for k, v in s_score.to_dict().items() if k != "partial"},
                **_spread("silver", sentence_counts(silver["sure"], silver["possible"], sil_pred, partial=True),
                          boot_rng, args.bootstrap),
            }
            g_score = None
            gold_pred = []
            if gold:
                g_name, g_first = where["gold"]
                gold_pred = preds[g_name][g_first : g_first + n_gold]
                g_score = score_alignments(gold["sure"], gold["possible"], gold_pred)
                entry.update(
                    {f"gold_{k}": v for k, v in g_score.to_dict().items() if k != "partial"}
                )
                entry.update(_spread("gold", sentence_counts(gold["sure"], gold["possible"], gold_pred),
                                     boot_rng, args.bootstrap))
            entries.append(entry)
            per_pair.append((c, s_score, g_score))
            if "aligner" in c["groups"]:
                sil_words = {
                    sil_src_l[k][i] for k, s in enumerate(silver["possible"]) for i, _ in s
                }
                gold_words = (
                    {gold_src_l[k][i] for k, s in enumerate(gold["possible"]) for i, _ in s}
                    if gold
                    else set()
                )
                for name, words_by_bin, sure, poss, hyp, src_l, partial in (
                    (
                        "silver",
                        _bins(counts[where["silver"][0]], sil_words),
                        silver["sure"],
                        silver["possible"],
                        sil_pred,
                        sil_src_l,
                        True,
                    ),
                    (
                        "gold",
                        _bins(counts[where["gold"][0]], gold_words) if gold else {},
                        gold["sure"] if gold else [],
                        gold["possible"] if gold else [],
                        gold_pred,
                        gold_src_l,
                        False,
                    ),
                ):
                    if name == "gold" and not gold:
                        continue
                    for label, words in words_by_bin.items():
                        sc = score_alignments(
                            restrict_source(sure, src_l, words),
                            restrict_source(poss, src_l, words),
                            restrict_source(hyp, src_l, words),
                            partial=partial,
                        )
                        freq_tables.append(
                            {
                                "subset": spec["name"],
                                "method": c["method"],
                                "data": name,
                                "bin": label,
                                "n_words": len(words),
                                "f1": sc.f1,
                                "n_sure": sc.n_sure,
                                "n_pred": sc.n_pred,
                            }
                        )
        if gold:
            entry = {"subset": spec["name"]}
            for key, group in (("tokenizer", "tokenizer"), ("sweep", "sweep"), ("all", None)):
                # With gold every config has a gold score (g is never None here).
                chosen = [(s, g) for c, s, g in per_pair if g is not None and (group is None or group in c["groups"])]
                corr = correlate([s.f1 for s, _ in chosen], [g.f1 for _, g in chosen], min_n=MIN_N)
                entry[f"pearson_r_{key}"] = corr.pearson
                entry[f"spearman_rho_{key}"] = corr.spearman
                entry[f"n_configs_{key}"] = corr.n
            corr_entries.append(entry)
            scatter[spec["name"]] = [(config_label(c), s.f1, g.f1) for c, s, g in per_pair if g is not None]
        sweep_curves[spec["name"]] = [
            (c["vocab"], s.f1, g.f1 if g else None)
            for c, s, g in per_pair
            if "sweep" in c["groups"]
        ]

    rs = [c["pearson_r_tokenizer"] for c in corr_entries if c["pearson_r_tokenizer"] is not None]
    main = sum(rs) / len(rs) if rs else None
    if not corr_entries:
        notes.append("no gold alignment given: silver scores only, no silver-gold correlation")
    elif len(rs) < len(corr_entries):
        notes.append(
            f"Pearson r and Spearman rho are reported only from {MIN_N} configurations on (over two, r is always ±1); "
            f"{len(corr_entries) - len(rs)} pair(s) have no tokenizer correlation and are left out of the main score"
        )
    if args.training == "per-setting":
        dropped = sum(c["dropped_duplicates"] for d in datasets_info for c in d["training"].values())
        notes.append(
            "one aligner per setting (silver; gold), each trained on its sentences + the extra text"
            + (f"; {dropped} repeated extra pairs dropped" if args.dedup else "; duplicates kept")
        )
    if args.bootstrap:
        notes.append(
            f"*_f1_std/_low/_high: spread of each F1 over {args.bootstrap} bootstrap resamples of sentences "
            f"(95% interval); configurations whose intervals overlap are not reliably ranked"
        )
    if "eflomal" in {c["method"] for c in configs}:
        notes.append(
            "eflomal seeds itself from /dev/urandom (no seed option): its scores vary slightly between runs"
        )
    return Scores(
        scores={"test": entries, "correlation": corr_entries, "frequency": freq_tables},
        main_score=main,
        notes=notes,
        dataset={
            "id": "+".join(p["name"] for p in pairs),
            "source": "files",
            "version": "+".join(d["version"] for d in datasets_info if d.get("version")) or None,
            "revision": "+".join((d.get("revision") or "")[:8] for d in datasets_info) or None,
            "pairs": datasets_info,
        },
        model={"id": "+".join(args.methods), "revision": None, "revision_source": "encoder",
               "methods": sorted({c["method"] for c in configs})},
        plot_data=(scatter, sweep_curves, freq_tables),
    )


def plot(scores: Scores, params: Params, data, model, prefix: Path, rng) -> list[str]:
    """Silver-vs-gold scatter, vocabulary sweep, F1 by source-word frequency per pair."""
    from evaluators.plots import alignment as aplots

    scatter, sweep_curves, freq_tables = scores.plot_data
    os.makedirs(prefix.parent, exist_ok=True)
    artifacts = []
    if scatter:
        artifacts.append(aplots.silver_vs_gold(scatter, Path(f"{prefix}__silver_vs_gold.png")))
    if any(sweep_curves.values()):
        artifacts.append(aplots.sweep(sweep_curves, Path(f"{prefix}__vocab_sweep.png"), params.sweep_tokenizer))
    for pair in sorted({f["subset"] for f in freq_tables}):
        rows = [f for f in freq_tables if f["subset"] == pair]
        groups = [freq_bin_label(lo, hi) for lo, hi in FREQ_BINS]
        series: dict[str, Any] = {}
        for f in rows:
            series.setdefault(f"{f['method']} {f['data']}", {})[f["bin"]] = f["f1"] if f["n_sure"] else None
        artifacts.append(
            aplots.breakdown(
                groups,
                {k: [v.get(g) for g in groups] for k, v in series.items()},
                Path(f"{prefix}__freq_{pair}.png"),
                f"{pair}: F1 by source-word frequency",
                "frequency of the source word in the aligner's training text",
            )
        )
    return artifacts
