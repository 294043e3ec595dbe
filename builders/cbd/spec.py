"""Constants of the contextual-dictionary builder. Each one shapes the rows, so each goes into the manifest."""

from __future__ import annotations

from dataclasses import dataclass, field

from builders.cbd.logic import (
    MAX_NGRAM,
    PAPER_AVOID_REPETITION,
    PAPER_FOLD_ACCENTS,
    PAPER_FOLD_CASE,
)

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
_PATH = {"signature": False}


@dataclass(frozen=True)
class Params:
    """Every parameter of ``xlbench build cbd`` (``--seed`` included); see ``build.add_arguments``."""

    lang: str
    src_file: str | None = field(default=None, metadata=_PATH)
    tgt_file: str | None = field(default=None, metadata=_PATH)
    tsv: str | None = field(default=None, metadata=_PATH)
    dict: tuple[str, ...] | None = field(default=None, metadata=_PATH)
    max_sentences: int | None = field(default=None, metadata={"key": "max-sentences"})
    reverse_dict: bool = field(default=False, metadata={"key": "reverse-dict"})
    #: The authors' settings (on by default); a build that turns one off is spelled out in
    #: the signature (``fold-case:false``), the defaults are in its hash.
    fold_case: bool = field(
        default=PAPER_FOLD_CASE, metadata={"key": "fold-case", "key_omit": (True,)}
    )
    fold_accents: bool = field(
        default=PAPER_FOLD_ACCENTS, metadata={"key": "fold-accents", "key_omit": (True,)}
    )
    avoid_repetition: bool = field(
        default=PAPER_AVOID_REPETITION, metadata={"key": "avoid-repetition", "key_omit": (True,)}
    )
    max_pairs: int = field(default=DEFAULT_MAX_PAIRS, metadata={"key": "max-pairs"})
    aligner: str = DEFAULT_ALIGNER  # spelled out by its model record (aligner:<method>+<symmetrisation>@<package>)
    aligner_extra: tuple[str, ...] | None = field(default=None, metadata=_PATH)
    #: Processes only: extraction is split in fixed chunks, so the rows do not depend on it.
    workers: int = field(default=1, metadata={"signature": False})
    gold: str | None = field(default=None, metadata=_PATH)
    gold_one_based: bool = False
    seed: int = 13

    @classmethod
    def from_args(cls, args) -> Params:
        """Build from an argparse namespace (or return ``args`` if it already is one)."""
        from builders.base import params_from

        return params_from(cls, args)


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
    if not (args.src_file or args.tsv):
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
