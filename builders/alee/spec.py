"""Constants of the alee builder: perturbation names, stoplists, thresholds (data, no logic).

Perturbations follow the alee paper (Table 1), which builds on Sentence Smith:
PN polarity negation, RS role swap (ARG0 <-> ARG1), AR antonym replacement,
HS hypernym substitution.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
_NOSIG = {"signature": False}


@dataclass(frozen=True)
class Params:
    """Every parameter of ``xlbench build alee`` (``--seed`` included); see ``build.add_arguments``."""

    langs: tuple[str, ...]
    foils: str | None = field(default=None, metadata=_NOSIG)
    pawsx: str | None = field(default=None, metadata=_NOSIG)
    parallel: tuple[str, ...] = field(default=(), metadata=_NOSIG)
    tsv: tuple[str, ...] = field(default=(), metadata=_NOSIG)
    bible: bool = False
    bible_books: tuple[int, ...] | None = field(default=None, metadata={"key": "bible-books"})
    limit: int | None = field(default=None, metadata={"key": "limit"})
    types: tuple[str, ...] = field(default=tuple(PERTURBATIONS), metadata={"key": "types"})
    amr_parser: str | None = field(default=None, metadata=_NOSIG)
    amr_generator: str | None = field(default=None, metadata=_NOSIG)
    amr_batch_size: int = field(default=16, metadata=_NOSIG)
    splitter: str = "pysbd"
    nli_model: str = DEFAULT_NLI_MODEL
    nli_revision: str | None = None
    no_nli: bool = field(default=False, metadata={"key": "no-nli"})
    entail_threshold: float = ENTAIL_THRESHOLD
    keep_bidirectional: bool = field(default=False, metadata={"key": "keep-bidirectional"})
    nli_batch_size: int = field(default=16, metadata=_NOSIG)
    device: str | None = field(default=None, metadata=_NOSIG)
    seed: int = 13

    @classmethod
    def from_args(cls, args) -> Params:
        """Build from an argparse namespace (or return ``args`` if it already is one)."""
        from builders.base import params_from

        return params_from(cls, args)


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
