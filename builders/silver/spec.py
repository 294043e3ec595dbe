"""What the SilverAlign builder produces and its defaults (data, no logic)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from builders.silver import logic

NAME = "silver"

#: Subsets of the paper: Silver_Large (monolingual input) and Silver_Small (a gold set's source side).
LARGE, SMALL = "large", "small"
#: Config suffix of each subset's (main, details) tables; see evaluators/schema/silver.py.
CONFIG_SUFFIX = {LARGE: ("", "details"), SMALL: ("small", "small-details")}

#: Default number of Bible verses: about 3 minutes with Apertium + WordNet on 2 cores.
DEFAULT_MAX_SENTENCES = 300
#: Verse length bounds (in word tokens) for the default corpus: the paper's yield drops with
#: length and every word costs five translations.
DEFAULT_MIN_WORDS = 4
DEFAULT_MAX_WORDS = 25

N_ALTERNATIVES = logic.N_ALTERNATIVES
MIN_VALID = logic.MIN_VALID
MAX_TARGETS = logic.MAX_TARGETS

SUBSTITUTES = ("wordnet", "mlm")
#: Top masked-LM predictions read per word (the authors': 10; see builders.adapters.mlm).
MLM_SEARCH = 10


class SubstituteGenerator(Protocol):
    """What SilverAlign needs from a substitute generator (WordNet or a masked LM).

    Implementations: :class:`builders.silver.substitutes.WordNetSubstitutes`,
    :class:`builders.adapters.mlm.MLMSubstitutes`.
    """

    #: ``--substitutes`` value (``wordnet``, ``mlm``): goes into the build parameters.
    name: str

    @property
    def model_id(self) -> str:
        """Identifier for the manifest's model record."""
        ...

    @property
    def revision(self) -> str:
        """Pin of the model or database files."""
        ...

    def batch(
        self,
        texts: Sequence[str],
        spans: Sequence[Sequence[tuple[int, int]]],
        positions: Sequence[Sequence[int]],
        k: int,
    ) -> list[list[list[str]]]:
        """Return, per sentence and per requested token position, up to ``k`` alternative words."""
        ...


CONSTRUCTION = [
    "Each source sentence s is translated into t with the MT engine named in the build signature.",
    "For every word of s, {k} alternative sentences are made by substituting that word alone ({substitutes}).",
    "Every alternative is translated with the same engine; an alternative is valid when its translation has "
    "as many tokens as t ({tokenizer} tokenisation of both sides).",
    "A word is aligned when at least {min_valid} of its alternatives are valid and all valid alternatives change "
    "the same target position(s) (at most {max_targets}); it is then linked to that position.",
    "The links of a sentence form its partial silver alignment (sure = possible); sentences without a link are "
    "left out of the main table but kept in the details table, which records every word's alternatives, their "
    "translations and why the word was kept or dropped.",
]

LIMITATIONS = [
    "Silver alignments are partial: only words listed in `sure` were decided; score with partial evaluation "
    "(predicted links of undecided source words do not count).",
    "The links reflect one MT system's choices: a word is aligned where the engine translates it "
    "compositionally, so idioms, function words that vanish in translation and long-distance reorderings are "
    "under-represented (yield is low by design).",
    "Rule-based engines (Apertium) translate more compositionally than neural ones, which makes the silver "
    "data easier than alignments of human translations.",
]


#: Fields that name files (pinned as inputs) or only set speed, retries and caching.
_NOSIG = {"signature": False}


@dataclass(frozen=True)
class Params:
    """Every parameter of ``xlbench build silver`` (``--seed`` included); see ``build.add_arguments``."""

    lang: str
    src: str | None = field(default=None, metadata=_NOSIG)
    small_src: str | None = field(default=None, metadata=_NOSIG)
    max_sentences: int | None = field(default=None, metadata={"key": "max-sentences"})
    min_words: int | None = None
    max_words: int | None = None
    mt: str = "auto"
    mt_revision: str | None = None
    mt_cache: str | None = field(default=None, metadata=_NOSIG)
    no_mt_cache: bool = field(default=False, metadata=_NOSIG)
    mt_batch_size: int = field(default=1000, metadata=_NOSIG)
    mt_rate: float = field(default=4.0, metadata=_NOSIG)
    mt_retries: int = field(default=4, metadata=_NOSIG)
    mt_beams: int = 1
    substitutes: str = "wordnet"
    mlm: str = "bert-large-cased"
    mlm_revision: str | None = None
    mlm_batch_size: int = field(default=64, metadata=_NOSIG)
    mlm_search: int = MLM_SEARCH
    no_count_original: bool = False
    no_substitute_punctuation: bool = False
    wordnet_senses: int = 2
    no_closed_class: bool = False
    alternatives: int = field(default=N_ALTERNATIVES, metadata={"key": "alternatives"})
    min_valid: int = field(default=MIN_VALID, metadata={"key": "min-valid"})
    max_targets: int = field(default=MAX_TARGETS, metadata={"key": "max-targets"})
    tokenizer: str = "punct"
    src_tokenizer: str | None = None
    lowercase: bool = False
    export: str | None = field(default=None, metadata=_NOSIG)
    seed: int = 13

    @classmethod
    def from_args(cls, args) -> Params:
        """Build from an argparse namespace (or return ``args`` if it already is one)."""
        from builders.base import params_from

        return params_from(cls, args)


def construction(args: Params, *, wordnet: bool, tokenizer: str) -> list[str]:
    """The card's construction prose: :data:`CONSTRUCTION` filled in, then the options' own steps.

    ``wordnet``: the substitutes come from WordNet (else from the masked LM ``args.mlm``);
    ``tokenizer``: the tokenisation as the card names it.
    """
    construction = [
        step.format(
            k=args.alternatives,
            substitutes="WordNet 3.0 antonyms, co-hyponyms and synonyms"
            + (
                "; function words from a fixed table of same-class words"
                if not args.no_closed_class
                else ""
            )
            if wordnet
            else f"top predictions of the masked LM {args.mlm}",
            tokenizer=tokenizer,
            min_valid=args.min_valid,
            max_targets=args.max_targets,
        )
        for step in CONSTRUCTION
    ]
    construction.append(
        "Punctuation tokens are substituted and aligned like words (the authors' choice)."
        if not args.no_substitute_punctuation
        else "Punctuation tokens are never substituted, so never aligned (--no-substitute-punctuation)."
    )
    if args.substitutes == "mlm":
        construction.append(
            f"The masked LM's top {args.mlm_search} predictions are read per word; the original word, when predicted, "
            + (
                "takes one of the alternatives' places (the authors' code)."
                if not args.no_count_original
                else "is skipped without taking a place (--no-count-original)."
            )
        )
    return construction
