"""What the foil types of other generators really are (data), for ``--foils`` inputs.

Sentence Smith (impresso/sentence-smith, the code behind the PAWS foils in
``paws_samples_1737x6.csv``) names its edits after alee's perturbations, but two
of them do something else (audit of its code, xlbench issue #16):

* its role swap exchanges the names of two arbitrary leaves of the AMR graph,
  not the ``:ARG0``/``:ARG1`` of one predicate (alee's RS): ``RS-leafswap``;
* its "hypernym" edit falls back to a synonym when WordNet offers no hypernym,
  so some foils are paraphrases (alee's HS never is): ``HS-or-synonym``.

Its polarity negation and antonym edits keep alee's names but are broader than
alee's definitions (issue #26, audit of its code): it adds ``:polarity -`` to any
node, not only to a PropBank predicate (on held-out AMR graphs 74 of 200 of its PN
edits were on predicates), and it takes an antonym from any WordNet sense of the
lemma, not the sense the concept means. RD (argument deletion) has no alee
counterpart. Labels are recorded as what they are; those in :data:`MEETS_ALEE` are
pooled with alee's own types under alee's names, with the card stating the difference.
"""

from __future__ import annotations

#: The generator whose labels this table describes (repository@commit of the code and data).
SENTENCE_SMITH = "impresso/sentence-smith@b497c3a90f687f910900e35935cccb047d833fd6"

#: Sentence Smith ``modification_type`` -> honest label.
SENTENCE_SMITH_LABELS: dict[str, str] = {
    "polarity_negation": "PN",
    "antonym": "AR",
    "rs": "RS-leafswap",
    "role_swap": "RS-leafswap",
    "hypernym": "HS-or-synonym",
    "rd": "RD",
}
#: Labels pooled with alee's own types (Table 1) under alee's names; their edits are broader
#: (PN on any node, AR over every sense: see the module docstring and :data:`SENTENCE_SMITH_NOTE`).
MEETS_ALEE = frozenset({"PN", "AR"})


def honest_label(label: str, generator: str = SENTENCE_SMITH) -> str:
    """Return the honest label of a foil type produced by ``generator``.

    >>> [honest_label(t) for t in ("polarity_negation", "RS", "hypernym", "antonym", "RD")]
    ['PN', 'RS-leafswap', 'HS-or-synonym', 'AR', 'RD']

    Raises:
        ValueError: a label or generator this table does not know.
    """
    if generator != SENTENCE_SMITH:
        raise ValueError(
            f"No label table for foil generator {generator!r}; only {SENTENCE_SMITH} is described."
        )
    low = label.strip().lower()
    if low not in SENTENCE_SMITH_LABELS:
        raise ValueError(
            f"Unknown Sentence Smith foil type {label!r}; known: {', '.join(sorted(SENTENCE_SMITH_LABELS))}."
        )
    return SENTENCE_SMITH_LABELS[low]


def meets_alee(label: str) -> bool:
    """Whether an honest label is one of alee's own perturbations (safe to pool for Macro-TACC).

    >>> meets_alee("PN"), meets_alee("RS-leafswap")
    (True, False)
    """
    return label in MEETS_ALEE


#: Card limitation for builds from Sentence Smith foils.
SENTENCE_SMITH_NOTE = (
    "Foils come from Sentence Smith ("
    + SENTENCE_SMITH
    + "): its RS swaps two arbitrary leaf names "
    "(RS-leafswap, not alee's ARG0/ARG1 swap) and its HS falls back to a synonym when WordNet has no "
    "hypernym (HS-or-synonym); its PN and AR keep alee's names but are broader than alee's definitions: "
    "PN adds :polarity - to any node (not only to a predicate) and AR takes an antonym from any WordNet "
    "sense of the lemma (not the sense the concept means)."
)


def generator_of(path) -> str:
    """Name the generator of a foils file from its header (Sentence Smith's columns or ``unknown``).

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        header = fh.readline()
    return (
        SENTENCE_SMITH
        if "modification_type" in header and "original_sentence" in header
        else "unknown"
    )
