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
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evaluators.aligners import METHODS, align_subwords
from evaluators.aligners.subword import KINDS
from evaluators.core.errors import UsageError
from evaluators.core.progress import Progress, scope
from evaluators.metrics.aligner_corpus import PAPER_SWEEP_TOKENIZER
from evaluators.metrics.alignment import score_alignments
from evaluators.metrics.correlation import MIN_N, sentence_counts
from evaluators.run.rng import bootstrap_rng
from evaluators.run.task import Evaluator, MtebExport, Scores, TaskMetadata, param, seed_of
from evaluators.tasks.aligners.analyses import (
    _bins,
    _pos_tagger,
    _spread,
    correlation,
    correlation_entry,
    frequency_rows,
    main_items,
    training_corpora,
)
from evaluators.tasks.aligners.grid import config_label, configurations
from evaluators.tasks.aligners.loaders import _read_extra, _read_lines, load_gold, load_silver
from evaluators.tasks.aligners.plots import plot
from evaluators.tasks.aligners.spec import PAIR_KEYS, parse_pair, parse_pairs

if TYPE_CHECKING:
    import numpy as np

    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder

# The task is a package: spec parsing, loaders, the grid, analyses and plots live apart;
# these names stay importable from here (the runner reads TASK, Params, score, plot).
__all__ = [
    "PAIR_KEYS",
    "TASK",
    "Params",
    "_bins",
    "_pos_tagger",
    "_read_extra",
    "_read_lines",
    "_spread",
    "config_label",
    "configurations",
    "correlation",
    "load_gold",
    "load_silver",
    "parse_pair",
    "plot",
    "score",
    "signature_extra",
    "training_corpora",
]

TASK = TaskMetadata(
    name="aligners",
    family="silver",
    splits=("test", "correlation", "frequency"),
    main_score="pearson_r_tokenizer",
    main_score_name="pearson_r_tokenizer (silver vs gold F1, mean over pairs)",
    output_keys=(
        "config",
        "method",
        "tokenizer",
        "vocab_size",
        "silver_f1",
        "gold_f1",
        "pearson_r_tokenizer",
    ),
    table=(
        "config",
        "silver_precision",
        "silver_recall",
        "silver_f1",
        "silver_f1_std",
        "gold_precision",
        "gold_recall",
        "gold_f1",
        "gold_f1_std",
        "gold_aer",
        "pearson_r_tokenizer",
        "spearman_rho_tokenizer",
        "n_configs_tokenizer",
        "pearson_r_sweep",
        "spearman_rho_sweep",
        "n_configs_sweep",
        "pearson_r_all",
        "spearman_rho_all",
        "n_configs_all",
    ),
    model="none",
    dataset="none",
    plots=True,
    silver_gold_scatter=True,
    mteb=MtebExport(main_keys=("gold_f1",), subset_parts=("{config}",)),
    epilog="""example (SilverAlign Silver_Small eng-fra with Hansards gold):
  D=../shared/data
  xlbench eval aligners \\
    --pair name=eng-fra,silver=$D/silveralign_small/eng_fra,gold_text=$D/gold_align_awesome/enfr.src-tgt,gold_links=$D/gold_align_awesome/enfr.gold \\
    --train-text bible.eng bible.fra --max-train 2000 --out results/aligners
""",
)


@dataclass(frozen=True)
class Params:
    """Parameters of ``aligners``."""

    pair: tuple[str, ...] | None = param(
        None, "a language pair spec (see the description); repeatable", action="append", sig=False
    )
    train_text: tuple | None = param(
        None,
        "extra line-aligned training text (tokenised, one sentence per line); repeatable; added to every pair",
        action="append",
        nargs=2,
        metavar=("SRC", "TGT"),
        sig=False,
    )
    max_train: int | None = param(
        None,
        "use at most this many extra training lines per pair",
        type=int,
        sig="max-train",
        min=1,
        must="a positive number of lines",
        hint="leave it out to use every line of --train-text",
    )
    methods: tuple[str, ...] = param(
        ("eflomal", "fast_align"), "aligners to compare on words", nargs="+", sig=False
    )
    symmetrize: str = param(
        "grow-diag-final-and", "symmetrisation (default grow-diag-final-and)", sig="sym"
    )
    tokenizers: tuple[str, ...] = param(
        ("word", "bpe", "wordpiece", "unigram"), "tokenizers to compare", nargs="+", sig="tok"
    )
    vocab_size: int = param(
        8000, "shared vocabulary size of the tokenizer comparison (default 8000)", sig="vocab"
    )
    sweep: tuple[int, ...] = param(
        (1000, 2000, 4000, 16000), "vocabulary sizes of the sweep", nargs="*", type=int
    )
    sweep_tokenizer: str = param(
        PAPER_SWEEP_TOKENIZER,
        f"tokenizer of the sweep (default {PAPER_SWEEP_TOKENIZER}, the paper's)",
        sig="sweep-tok",
    )
    tokenizer_method: str = param(
        "fast_align",
        "aligner of the tokenizer comparison and sweep (default fast_align: deterministic)",
        sig="tok-aligner",
    )
    lowercase: bool = param(
        True, "lowercase all text (default on)", action=argparse.BooleanOptionalAction, sig="lc"
    )
    training: str = param(
        "per-setting",
        "per-setting (default, the paper's): one aligner per setting, trained on that setting's "
        "sentences + the extra text; joint: one aligner on silver + gold + extra text",
        choices=("per-setting", "joint"),
        sig="train",
    )
    dedup: bool = param(
        True,
        "drop extra training pairs that repeat an evaluation pair or an earlier extra pair "
        "(default on, as the authors)",
        action=argparse.BooleanOptionalAction,
        sig="dedup",
    )
    bootstrap: int = param(
        1000,
        "bootstrap resamples of sentences for the spread of each F1 (0: none; default 1000)",
        type=int,
        sig="boot",
    )

    def __post_init__(self) -> None:
        for m in [*self.methods, self.tokenizer_method]:
            if m not in METHODS:
                raise UsageError(f"Unknown aligner {m!r}; choose from {', '.join(METHODS)}.")
        for t in [*self.tokenizers, self.sweep_tokenizer]:
            if t not in KINDS:
                raise UsageError(f"Unknown tokenizer {t!r}; choose from {', '.join(KINDS)}.")
        if self.bootstrap < 0:
            raise UsageError(
                f"--bootstrap must be 0 (no interval) or a positive number of resamples, got {self.bootstrap}."
            )
        parse_pairs(self.pair or ())  # a bad or repeated --pair fails before any work


def signature_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """Silver scored with partial evaluation, micro-averaged; correlations from MIN_N configurations."""
    return {"silver": "partial", "avg": "micro", "corr-min-n": MIN_N}


def _dataset_info(spec: dict, silver: dict, gold: dict | None, n_extra: int, corpora: dict) -> dict:
    """The result's record of one pair: source, sizes, training corpora, gold index base."""
    return {
        **silver["source"],
        "pair": spec["name"],
        "n_silver": len(silver["src"]),
        "n_gold": len(gold["src"]) if gold else 0,
        "n_train_extra": n_extra,
        "training": {
            name: {
                "lines": len(c.src),
                "extra": c.n_extra,
                "dropped_duplicates": c.dropped_duplicates,
            }
            for name, c in corpora.items()
        },
        "gold_base": gold["base"] if gold else None,
    }


def _score_config(
    spec: dict,
    c: dict,
    sil_pred: Any,
    gold_pred: Any,
    silver: dict,
    gold: dict | None,
    boot_rng: np.random.Generator,
    args: Any,
) -> tuple[dict, Any, Any]:
    """Score one configuration's predictions on silver (partial) and gold; the entry and both scores.

    The bootstrap draws silver's spread, then gold's, from ``boot_rng`` (in this order).
    """
    s_score = score_alignments(silver["sure"], silver["possible"], sil_pred, partial=True)
    entry = {
        "subset": spec["name"],
        "config": config_label(c),
        "method": c["method"],
        "tokenizer": c["tokenizer"],
        "vocab_size": c["vocab"],
        "groups": c["groups"],
        **{f"silver_{k}": v for k, v in s_score.to_dict().items() if k != "partial"},
        **_spread(
            "silver",
            sentence_counts(silver["sure"], silver["possible"], sil_pred, partial=True),
            boot_rng,
            args.bootstrap,
        ),
    }
    g_score = None
    if gold:
        g_score = score_alignments(gold["sure"], gold["possible"], gold_pred)
        entry.update({f"gold_{k}": v for k, v in g_score.to_dict().items() if k != "partial"})
        entry.update(
            _spread(
                "gold",
                sentence_counts(gold["sure"], gold["possible"], gold_pred),
                boot_rng,
                args.bootstrap,
            )
        )
    return entry, s_score, g_score


def _run_pair(
    spec: dict,
    args: Params,
    configs: list,
    seed: int,
    boot_rng: np.random.Generator,
) -> tuple:
    """Align and score every configuration on one pair.

    Returns the pair's dataset record, whether it has gold, its entries, ``(config, silver score, gold score)`` per
    configuration, and its frequency-bin rows.
    """
    silver = load_silver(spec)
    gold = load_gold(spec)
    train_src, train_tgt = _read_extra(spec, args)
    corpora, where = training_corpora(silver, gold, train_src, train_tgt, args)
    n_sil = len(silver["src"])
    n_gold = len(gold["src"]) if gold else 0
    info = _dataset_info(spec, silver, gold, len(train_src), corpora)
    counts = {name: Counter(w for s in c.src for w in s) for name, c in corpora.items()}

    def lines(setting: Any, n: Any, _where: Any = where, _corpora: Any = corpora) -> Any:
        name, first = _where[setting]
        return [list(x) for x in _corpora[name].src[first : first + n]]

    sil_src_l = lines("silver", n_sil)
    gold_src_l = lines("gold", n_gold) if gold else []
    entries, per_pair, freq_rows = [], [], []
    bar = Progress(
        len(configs), f"aligners {spec['name']}", unit="configurations", quiet_if_short=True
    )
    for c in configs:
        with scope(f"aligners {spec['name']} {config_label(c)}"):  # the aligners' own lines
            preds = {
                name: align_subwords(
                    [list(x) for x in corp.src],
                    [list(x) for x in corp.tgt],
                    c["tokenizer"],
                    c["vocab"] or 0,
                    c["method"],
                    args.symmetrize,
                    seed,
                )
                for name, corp in corpora.items()
            }
        sil_name, sil_first = where["silver"]
        sil_pred = preds[sil_name][sil_first : sil_first + n_sil]
        gold_pred = []
        if gold:
            g_name, g_first = where["gold"]
            gold_pred = preds[g_name][g_first : g_first + n_gold]
        entry, s_score, g_score = _score_config(
            spec, c, sil_pred, gold_pred, silver, gold, boot_rng, args
        )
        entries.append(entry)
        per_pair.append((c, s_score, g_score))
        if "aligner" in c["groups"]:
            freq_rows += frequency_rows(
                spec["name"],
                c["method"],
                (silver, sil_pred, sil_src_l, counts[where["silver"][0]]),
                (gold, gold_pred, gold_src_l, counts[where["gold"][0]]) if gold else None,
            )
        bar.update(1)
    bar.close()
    return info, bool(gold), entries, per_pair, freq_rows


def _notes(
    args: Params, configs: list, corr_entries: list, n_main: int, datasets_info: list
) -> Any:
    """The notes after the grid: correlations left out, training, bootstrap, eflomal's seeding."""
    notes = []
    if not corr_entries:
        notes.append("no gold alignment given: silver scores only, no silver-gold correlation")
    elif n_main < len(corr_entries):
        notes.append(
            f"Pearson r and Spearman rho are reported only from {MIN_N} configurations on (over two, r is always ±1); "
            f"{len(corr_entries) - n_main} pair(s) have no tokenizer correlation and are left out of the main score"
        )
    if args.training == "per-setting":
        dropped = sum(
            c["dropped_duplicates"] for d in datasets_info for c in d["training"].values()
        )
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
    return notes


def score(
    data: DatasetSource | None, model: Encoder | None, args: Params, rng: np.random.Generator
) -> Scores:
    """Run every configuration on every pair (``args``: the parameters; the seed is drawn from ``rng``)."""
    if not args.pair:
        raise UsageError(
            "Pass at least one --pair (name=...,silver=DIR or dataset=FOLDER[,gold_text=F,gold_links=F])."
        )
    seed = seed_of(rng)  # the aligners take an integer seed: --seed itself
    # The bootstrap has its own stream: its draws never change an alignment or an F1.
    boot_rng = bootstrap_rng(seed)
    pairs = parse_pairs(args.pair)
    configs = configurations(args)
    entries, corr_entries, notes, items = [], [], [], []
    scatter, sweep_curves = {}, {}
    freq_tables = []
    tagger = _pos_tagger()
    if tagger is None:
        notes.append(
            "part-of-speech breakdown skipped: nltk's averaged perceptron tagger data is not installed offline"
        )
    datasets_info = []
    for spec in pairs:
        info, has_gold, pair_entries, per_pair, freq_rows = _run_pair(
            spec, args, configs, seed, boot_rng
        )
        datasets_info.append(info)
        entries += pair_entries
        freq_tables += freq_rows
        if has_gold:
            entry = correlation_entry(spec["name"], per_pair)
            corr_entries.append(entry)
            scatter[spec["name"]] = [
                (config_label(c), s.f1, g.f1) for c, s, g in per_pair if g is not None
            ]
            items += main_items(spec["name"], per_pair, entry["pearson_r_tokenizer"] is not None)
        sweep_curves[spec["name"]] = [
            (c["vocab"], s.f1, g.f1 if g else None)
            for c, s, g in per_pair
            if "sweep" in c["groups"]
        ]

    rs = [c["pearson_r_tokenizer"] for c in corr_entries if c["pearson_r_tokenizer"] is not None]
    main = sum(rs) / len(rs) if rs else None
    notes += _notes(args, configs, corr_entries, len(rs), datasets_info)
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
        model={
            "id": "+".join(args.methods),
            "revision": None,
            "revision_source": "encoder",
            "methods": sorted({c["method"] for c in configs}),
        },
        plot_data=(scatter, sweep_curves, freq_tables),
        items=items or None,
    )


EVALUATOR = Evaluator(TASK, Params, score, signature_extra=signature_extra, plot=plot)
