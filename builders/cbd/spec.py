"""Constants of the contextual-dictionary builder. Each one shapes the rows, so each goes into the manifest."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from builders.base import seed_param
from builders.cbd.logic import (
    MAX_NGRAM,
    PAPER_AVOID_REPETITION,
    PAPER_FOLD_ACCENTS,
    PAPER_FOLD_CASE,
)
from builders.corpora import corpus_options_param, corpus_param
from evaluators.core.params import param

#: Pairs kept per split by default after extraction. The paper samples 5,000
#: pairs per evaluation (Gaschi et al. 2022, Section IV.B); 20,000 leaves room
#: for 10 repeated samples that overlap little, and keeps the folder small.
DEFAULT_MAX_PAIRS = 20_000

#: Default statistical aligner of the baseline split (Table II compares the
#: dictionary method with fast_align; eflomal is the stronger alternative).
DEFAULT_ALIGNER = "fast_align"
ALIGNERS = ("fast_align", "eflomal", "none")

#: Symmetrisation of the aligner's two directions (Och & Ney 2003; the usual
#: Moses default, as in the paper's fast_align baseline).
SYMMETRIZATION = "grow-diag-final-and"

#: The dataset license is derived from the inputs' licenses (builders/release/licenses.py):
#: public-domain Bible texts x FreeDict (GPL-3.0-or-later for eng-deu per Debian's
#: copyright file) gives GPL-3.0-or-later; ``--license X --license-reason`` overrides.


#: Fields that name files: their bytes are pinned as inputs, so the signature does not depend on where they lie.
_PATH: dict[str, Any] = {"sig": False}
#: Spelled out in the signature and copied into the manifest's parameters.
_KEY: dict[str, Any] = {"key": True, "manifest": True}
#: The authors' settings (on by default): a build that turns one off is spelled out in
#: the signature (``fold-case:false``), the defaults are in its hash.
_PAPER: dict[str, Any] = {"key": True, "key_omit": (True,), "manifest": True}


@dataclass(frozen=True)
class Params:
    """Every parameter of ``xlbench build cbd`` (``--seed`` included), declared once."""

    lang: str = param(help="language pair, source first, e.g. eng-deu")
    src_file: str | None = param(None, "source sentences, one per line (with --tgt-file)", **_PATH)
    tgt_file: str | None = param(None, "target sentences, line-aligned with --src-file", **_PATH)
    tsv: str | None = param(
        None, "parallel corpus as 'src<TAB>tgt' or 'id<TAB>src<TAB>tgt' lines", **_PATH
    )
    corpus: str | None = corpus_param("the parallel corpus")
    corpus_opt: tuple[str, ...] = corpus_options_param()
    dict: tuple[str, ...] | None = param(
        None,
        "bilingual dictionary (MUSE or muse:FILE, hunalign, dictd .index, or 'cedict'); repeatable; default: FreeDict",
        action="append",
        metavar="FILE",
        **_PATH,
    )
    max_sentences: int | None = param(
        None,
        "read only the first N sentence pairs of the corpus",
        type=int,
        min=1,
        must="positive",
        **_KEY,
    )
    reverse_dict: bool = param(
        False, "the --dict files list target->source (e.g. an en-de dictionary for deu-eng)", **_KEY
    )
    fold_case: bool = param(
        PAPER_FOLD_CASE,
        "match words case-insensitively (default on, as the authors; --no-fold-case to match case)",
        action=argparse.BooleanOptionalAction,
        **_PAPER,
    )
    fold_accents: bool = param(
        PAPER_FOLD_ACCENTS,
        "match words ignoring accents, é = e (default on, as the authors; --no-fold-accents to keep them)",
        action=argparse.BooleanOptionalAction,
        **_PAPER,
    )
    avoid_repetition: bool = param(
        PAPER_AVOID_REPETITION,
        "use each source and target word type at most once (default, as the authors)",
        consts=(
            (
                "--allow-repetition",
                False,
                "keep every occurrence of a word type (more pairs, dominated by frequent words)",
            ),
        ),
        **_PAPER,
    )
    max_pairs: int = param(
        DEFAULT_MAX_PAIRS,
        f"sample at most N pairs per split with the seed (default {DEFAULT_MAX_PAIRS}; 0 = keep all)",
        min=0,
        must="0 (keep all) or positive",
        **_KEY,
    )
    #: Spelled out by its model record (aligner:<method>+<symmetrisation>@<package>).
    aligner: str = param(
        DEFAULT_ALIGNER,
        f"statistical aligner of the baseline split 'aligner' (default {DEFAULT_ALIGNER}; none = skip)",
        choices=ALIGNERS,
        manifest=True,
    )
    aligner_extra: tuple[str, ...] | None = param(
        None,
        "more parallel text to train the aligner on: 'bible' or two aligned files SRC TGT",
        nargs="+",
        metavar="X",
        **_PATH,
    )
    gold: str | None = param(
        None, "gold word alignments (Pharaoh, one line per corpus line) for Table II", **_PATH
    )
    gold_one_based: bool = param(False, "--gold indices start at 1 (awesome-align's WPT files)")
    seed: int = seed_param()


def construction(
    args: Params,
    *,
    n_pairs: int,
    pair: str,
    corpus_desc: str,
    n_lexicon: object,
    dictionaries: str,
    stage: dict,
    n_aligner: int | None,
    table2: dict,
) -> list[str]:
    """The card's construction prose, from the build's parameters and counts."""
    construction = [
        f"Read {n_pairs} sentence pairs ({pair}) from {corpus_desc}.",
        f"Indexed {n_lexicon} distinct dictionary translations from {dictionaries} "
        f"(entries of more than {MAX_NGRAM} words dropped; case folding {'on' if args.fold_case else 'off'}, "
        f"accent folding {'on' if args.fold_accents else 'off'}).",
        "Found every dictionary entry (single and multi-word; substrings in scripts without spaces) in each sentence "
        "and kept a pair only when the source word has exactly one dictionary translation in the target sentence and "
        "that target word exactly one translation back in the source sentence (unique-candidate rule, both directions); "
        "pairs overlapping a longer kept pair were dropped.",
        f"Kept {stage['kept']} pairs from {stage['sentences_with_pairs']} sentences"
        + ("; each word type used at most once" if args.avoid_repetition else "")
        + (f"; sampled at most {args.max_pairs} with seed {args.seed}" if args.max_pairs else "")
        + ". Character offsets of both words are stored (end exclusive).",
    ]
    if args.aligner != "none":
        construction.append(
            f"Baseline split `aligner`: {args.aligner} links symmetrised with {SYMMETRIZATION}, keeping one-to-one "
            f"links only ({n_aligner} pairs before sampling)."
        )
    construction.append(
        "Table II (manifest `counts.table2`): "
        + "; ".join(
            f"{m}: {r['pairs']} pairs, precision "
            + ("n/a" if r["precision"] is None else f"{r['precision']:.3f}")
            + f" vs {r['against']}"
            for m, r in table2.items()
        )
        + "."
    )
    return construction


def limitations(args: Params) -> list[str]:
    """The card's limitations prose; the corpus and aligner add their own."""
    limitations = [
        "The unique-candidate rule favours content words with few dictionary translations; frequent function "
        "words are mostly dropped as ambiguous, so the pairs are not a uniform sample of running text.",
        "Dictionary coverage bounds recall: a correct translation missing from the dictionary is never extracted, "
        "and a wrong dictionary entry can produce a wrong pair.",
    ]
    if not (args.src_file or args.tsv or args.corpus):
        limitations.append(
            "The offline default corpus is the Bible in old public-domain translations: archaic vocabulary and a "
            "narrow domain; pass your own corpus (news, FLORES) for results comparable to the paper's WMT setting."
        )
    if args.aligner == "eflomal":
        limitations.append(
            "The `aligner` split is not reproducible: eflomal's sampler cannot be seeded, so two builds with the "
            "same signature give different links (manifest `nondeterministic`); the `test` split is deterministic."
        )
    return limitations
