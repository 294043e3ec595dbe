"""What the SilverAlign builder produces and its defaults (data, no logic)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from builders.base import device_param, seed_param
from builders.corpora import corpus_options_param, corpus_param
from builders.silver import logic
from builders.silver.tokenize import SCHEMES
from evaluators.core.errors import UsageError
from evaluators.core.params import param

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
    "as many tokens as t ({tokenizer} tokenisation of both sides) and keeps at least one of them (as in the "
    "authors' notebook, so a one-token translation is never linked).",
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
_NOSIG: dict[str, Any] = {"sig": False}
#: Spelled out in the signature.
_KEY: dict[str, Any] = {"key": True}
#: Sections of ``xlbench build silver --help``.
SOURCE, MT, SUBS, RULE = (
    "source sentences (default: World English Bible verses)",
    "machine translation",
    "substitutes",
    "decision rule",
)
#: The decision rule: spelled out in the signature and copied into the manifest's parameters.
_RULE: dict[str, Any] = {"key": True, "manifest": True, "section": RULE}


@dataclass(frozen=True)
class Params:
    """Every parameter of ``xlbench build silver`` (``--seed`` included), declared once."""

    lang: str = param(help="language pair, source first: eng-spa, eng-deu, eng_Latn-fra_Latn")
    src: str | None = param(
        None, "monolingual source sentences, one per line (Silver_Large)", section=SOURCE, **_NOSIG
    )
    corpus: str | None = corpus_param(
        "the source sentences, sampled with --seed (Silver_Large; e.g. c4:realnewslike)", SOURCE
    )
    corpus_opt: tuple[str, ...] = corpus_options_param(SOURCE)
    small_src: str | None = param(
        None,
        "source side of a gold alignment set (Silver_Small; ids are 0-based line numbers); "
        "'src ||| tgt' lines are read on their left side",
        aliases=("--gold-src",),
        section=SOURCE,
        **_NOSIG,
    )
    max_sentences: int | None = param(
        None,
        f"use at most N sentences (default {DEFAULT_MAX_SENTENCES} Bible verses sampled with --seed; all lines of a file)",
        type=int,
        section=SOURCE,
        min=1,
        hint="leave it out to use every sentence",
        **_KEY,
    )
    min_words: int | None = param(
        None,
        f"skip shorter sentences (default {DEFAULT_MIN_WORDS} for the Bible)",
        type=int,
        section=SOURCE,
        min=0,
    )
    max_words: int | None = param(
        None,
        f"skip longer sentences (default {DEFAULT_MAX_WORDS} for the Bible)",
        type=int,
        section=SOURCE,
        min=0,
    )
    mt: str = param(
        "auto",
        "auto (offline engine if one serves the pair, else google) | apertium | apertium:<mode> | bergamot | "
        "google | mymemory | deepl | microsoft | ... | hf:<model id or folder>",
        section=MT,
    )
    mt_revision: str | None = param(None, "Hub revision of an hf: MT model", section=MT)
    mt_cache: str | None = param(
        None,
        "SQLite translation cache (default $XLBENCH_CACHE/mt-cache.sqlite)",
        section=MT,
        **_NOSIG,
    )
    no_mt_cache: bool = param(
        False, "translate everything afresh, keep nothing", section=MT, **_NOSIG
    )
    mt_batch_size: int = param(
        1000,
        "sentences per engine call; the cache commits after each (default 1000)",
        section=MT,
        min=1,
        **_NOSIG,
    )
    mt_rate: float = param(
        4.0,
        "online engines: requests per second (default 4)",
        section=MT,
        min=0,
        open_min=True,
        must="positive (requests per second)",
        **_NOSIG,
    )
    mt_retries: int = param(
        4, "online engines: retries with backoff (default 4)", section=MT, min=0, **_NOSIG
    )
    mt_beams: int = param(1, "hf: MT models: beam size (default 1, greedy)", section=MT, min=1)
    #: Where a run puts its translations (``--engine ray``), never what they are.
    mt_store: str | None = param(
        None,
        "--engine ray: shared folder of translation shards (default <mt-cache>.shards)",
        section=MT,
        **_NOSIG,
    )
    substitutes: str = param(
        "wordnet",
        "wordnet (offline, English: antonyms, co-hyponyms, synonyms) or mlm (fill-mask, the paper's method)",
        choices=SUBSTITUTES,
        section=SUBS,
    )
    mlm: str = param(
        "bert-large-cased",
        "masked LM for --substitutes mlm (default bert-large-cased)",
        section=SUBS,
    )
    mlm_revision: str | None = param(None, "Hub revision of the masked LM", section=SUBS)
    mlm_batch_size: int = param(
        64, "masked sentences per forward pass (default 64)", section=SUBS, min=1, **_NOSIG
    )
    mlm_search: int = param(
        MLM_SEARCH,
        f"--substitutes mlm: top predictions read per word (default {MLM_SEARCH}, the authors')",
        section=SUBS,
        min=1,
    )
    no_count_original: bool = param(
        False,
        "--substitutes mlm: do not let the original word, when predicted, take one of the alternatives' places "
        "(the authors count it, so a word often has one alternative fewer)",
        section=SUBS,
    )
    no_substitute_punctuation: bool = param(
        False,
        "never substitute (so never align) punctuation tokens (the authors substitute and align them)",
        section=SUBS,
    )
    wordnet_senses: int = param(
        2, "most frequent senses searched by --substitutes wordnet", section=SUBS, min=1
    )
    no_closed_class: bool = param(
        False, "wordnet: do not substitute function words from the built-in table", section=SUBS
    )
    alternatives: int = param(N_ALTERNATIVES, "alternatives per word (paper: 5)", min=1, **_RULE)
    min_valid: int = param(MIN_VALID, "valid alternatives needed (paper: 4)", **_RULE)
    max_targets: int = param(
        MAX_TARGETS, "target words one source word may change (paper: 1)", min=1, **_RULE
    )
    tokenizer: str = param(
        "punct",
        "tokenisation of the translations (and sources) (default punct)",
        choices=SCHEMES,
        section=RULE,
    )
    src_tokenizer: str | None = param(
        None,
        "tokenisation of the sources (default: whitespace for --small-src, whose gold text is pre-tokenised; else --tokenizer)",
        choices=SCHEMES,
        section=RULE,
    )
    lowercase: bool = param(False, "lowercase tokens before comparing", section=RULE)
    export: str | None = param(
        None,
        "also write '<config>.src-tgt' (src ||| tgt) + '<config>.align' (0-based Pharaoh) here",
        **_NOSIG,
    )
    device: str | None = device_param("the masked LM (--substitutes mlm) and hf: MT models")
    seed: int = seed_param()

    def __post_init__(self) -> None:
        # Both given (the Bible's defaults apply only to the Bible): caught here, not as "config is empty".
        lo, hi = self.min_words, self.max_words
        if lo is not None and hi is not None and lo > hi:
            raise UsageError(
                f"--min-words {lo} is more than --max-words {hi}: no sentence can pass both; "
                f"lower --min-words or raise --max-words."
            )


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
