"""Constants of the alee builder: perturbation names, stoplists, thresholds (data, no logic).

Perturbations follow the alee paper (Table 1), which builds on Sentence Smith:
PN polarity negation, RS role swap (ARG0 <-> ARG1), AR antonym replacement,
HS hypernym substitution.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from builders.base import device_param, seed_param
from builders.corpora import corpus_options_param, corpus_param
from evaluators.core.params import param
from evaluators.schema.alee import PERTURBATIONS

#: Sentence Smith's ``modification_type`` labels -> alee perturbations. ``RD``
#: (Sentence Smith's role/argument deletion) is not one of alee's four types.
SENTENCE_SMITH_TYPES: dict[str, str] = {
    "polarity_negation": "PN",
    "pn": "PN",
    "rs": "RS",
    "role_swap": "RS",
    "antonym": "AR",
    "ar": "AR",
    "hypernym": "HS",
    "hs": "HS",
}
#: Known foil types outside alee's four (kept out of the dataset, counted in the manifest).
EXTRA_TYPES = frozenset({"rd"})

#: A PropBank frame concept: ``lemma-NN`` (``see-01``, ``look-up-05``).
FRAME_RE = re.compile(r"^(?P<lemma>[a-z][a-z'-]*?)-(?P<sense>\d\d)$")
#: AMR special frames (``have-org-role-91``, ``rate-entity-91``): not lexical words, never replaced.
SPECIAL_FRAME_RE = re.compile(r"-9\d$")
#: Sense suffix given to a replaced frame: sense numbers belong to one lemma, so the
#: new lemma gets its first (most frequent) PropBank sense.
NEW_FRAME_SENSE = "01"

#: AMR concepts that are structure, not words: never antonym/hypernym targets.
STRUCTURAL_CONCEPTS = frozenset(
    {
        "and",
        "or",
        "either",
        "neither",
        "multi-sentence",
        "name",
        "amr-unknown",
        "amr-choice",
        "imperative",
        "expressive",
        "interrogative",
        "date-entity",
        "date-interval",
        "string-entity",
        "ordinal-entity",
        "percentage-entity",
        "phone-number-entity",
        "email-address-entity",
        "url-entity",
        "score-entity",
        "value-interval",
        "relative-position",
        "temporal-quantity",
        "monetary-quantity",
        "distance-quantity",
        "mass-quantity",
        "volume-quantity",
        "person",
        "thing",
        "product",
        "organization",
        "country",
        "city",
        "byline",
        "slash",
    }
)
#: Pronoun concepts: WordNet reads ``i`` as iodine and ``it`` as information technology.
PRONOUN_CONCEPTS = frozenset(
    {
        "i",
        "you",
        "he",
        "she",
        "it",
        "we",
        "they",
        "this",
        "that",
        "these",
        "those",
        "one",
        "something",
        "anything",
        "everything",
        "nothing",
        "someone",
        "anyone",
        "everyone",
        "somebody",
        "anybody",
        "everybody",
        "nobody",
        "who",
        "what",
        "which",
        "here",
        "there",
        "all",
        "each",
        "both",
        "some",
        "any",
        "other",
        "else",
    }
)

#: NLI thresholds of the alee paper: reject when P(entail) > 0.8 in either direction.
ENTAIL_THRESHOLD = 0.8
#: Default NLI model: the robust NLI model of Steen et al. (2023), as in the paper.
DEFAULT_NLI_MODEL = "juliussteen/DeBERTa-v3-FaithAug"

#: Fields that name files (pinned as inputs) or only set speed and placement.
_NOSIG: dict[str, Any] = {"sig": False}
#: Sections of ``xlbench build alee --help``.
SOURCES, AMR, NLI = "English sources and target sentences", "AMR stages", "NLI filter"


def csv_list(value: str) -> list[str]:
    """Split a comma-separated option value (``de,fr``), dropping blanks.

    >>> csv_list("de, fr,,")
    ['de', 'fr']
    """
    return [v.strip() for v in value.split(",") if v.strip()]


def int_list(value: str) -> list[int]:
    """Split a comma-separated list of integers (``--bible-books 40,41``).

    >>> int_list("40,41")
    [40, 41]
    """
    return [int(x) for x in csv_list(value)]


@dataclass(frozen=True)
class Params:
    """Every parameter of ``xlbench build alee`` (``--seed`` included), declared once."""

    langs: tuple[str, ...] = param(
        help="target languages, comma-separated (deu_Latn,fra_Latn or de,fr; all: every language of --corpus)",
        type=csv_list,
    )
    foils: str | None = param(
        None,
        "CSV/TSV of ready foils (en_orig, en_foil, type; Sentence Smith's columns accepted): skips parse/edit/generate",
        section=SOURCES,
        **_NOSIG,
    )
    pawsx: str | None = param(
        None,
        "PAWS-X folder (XTREME layout: test-en.tsv, test-de.tsv ...): line-aligned translations",
        section=SOURCES,
        **_NOSIG,
    )
    parallel: tuple[str, ...] = param(
        (),
        "two line-aligned files for one target language (repeatable)",
        action="append",
        metavar="LANG=EN_FILE,TGT_FILE",
        section=SOURCES,
        **_NOSIG,
    )
    tsv: tuple[str, ...] = param(
        (),
        "English<TAB>target (or id<TAB>English<TAB>target) file (repeatable)",
        action="append",
        metavar="LANG=FILE",
        section=SOURCES,
        **_NOSIG,
    )
    corpus: str | None = corpus_param(
        "English sources and their translations into --langs (e.g. flores200:DIR, ntrex128:DIR)",
        SOURCES,
    )
    corpus_opt: tuple[str, ...] = corpus_options_param(SOURCES)
    bible: bool = param(
        False,
        "packaged public-domain Bible verses (offline default when no other corpus is given)",
        section=SOURCES,
    )
    bible_books: tuple[int, ...] | None = param(
        None,
        "Bible book numbers 1-66 to use (default: all)",
        type=int_list,
        section=SOURCES,
        key=True,
        manifest=True,
        min=1,
        max=66,
    )
    limit: int | None = param(
        None,
        "use only the first N English sources (or foils)",
        type=int,
        section=SOURCES,
        key=True,
        manifest=True,
        min=1,
        must="a positive number of sources",
    )
    types: tuple[str, ...] = param(
        tuple(PERTURBATIONS),
        "perturbations to make (default PN,RS,AR,HS)",
        type=csv_list,
        section=AMR,
        key=True,
        manifest=True,
    )
    amr_parser: str | None = param(
        None,
        "amrlib parse model folder (default: amrlib's data/model_stog, parse_xfm BART-large)",
        section=AMR,
        **_NOSIG,
    )
    amr_generator: str | None = param(
        None,
        "amrlib generate model folder (default: amrlib's data/model_gtos)",
        section=AMR,
        **_NOSIG,
    )
    amr_batch_size: int = param(
        16, "sentences per AMR batch (default 16)", section=AMR, min=1, **_NOSIG
    )
    splitter: str = param(
        "pysbd",
        "sentence splitter for paragraphs (default pysbd)",
        choices=("pysbd", "punkt"),
        section=AMR,
        manifest=True,
    )
    nli_model: str = param(
        DEFAULT_NLI_MODEL,
        f"transformers NLI model id or folder (default {DEFAULT_NLI_MODEL})",
        section=NLI,
    )
    nli_revision: str | None = param(None, "NLI model revision (Hub commit sha)", section=NLI)
    no_nli: bool = param(
        False, "skip the NLI filter (recorded in manifest and card)", section=NLI, key=True
    )
    entail_threshold: float = param(
        ENTAIL_THRESHOLD,
        "reject when P(entailment) > this in either direction (default 0.8)",
        section=NLI,
        min=0,
        max=1,
        open_min=True,
    )
    keep_bidirectional: bool = param(
        False,
        "do not reject foils predicted entailment in both directions",
        section=NLI,
        key=True,
    )
    nli_batch_size: int = param(
        16, "pairs per NLI batch (default 16)", section=NLI, min=1, **_NOSIG
    )
    device: str | None = device_param("the AMR parser, generator and NLI models")
    seed: int = seed_param()


__all__ = [
    "EXTRA_TYPES",
    "FRAME_RE",
    "NEW_FRAME_SENSE",
    "PERTURBATIONS",
    "Params",
    "PRONOUN_CONCEPTS",
    "SENTENCE_SMITH_TYPES",
    "SPECIAL_FRAME_RE",
    "STRUCTURAL_CONCEPTS",
]
