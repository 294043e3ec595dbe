"""alee foil triplets: (en_orig, en_foil, target_orig) from AMR edits validated by NLI.

Configs: one per target language (``eng_Latn-deu_Latn``) plus the English-only
``eng_Latn`` (no target side: ``target_orig`` is empty).
"""

from evaluators.schema.base import Column, FamilySchema, TableSchema

ID = "id"
LANG = "lang"
EN_ORIG = "en_orig"
EN_FOIL = "en_foil"
TARGET_ORIG = "target_orig"
#: One of PERTURBATIONS, or (foils made by another generator) one of OTHER_PERTURBATIONS.
PERTURBATION = "perturbation"
#: "sentence" or "paragraph": the corpus' own level where it states one (BOUQuET's
#: ``sentence_level``/``paragraph_level``), else from the English original's sentence count.
LEVEL = "level"
NLI_ORIG_FOIL = "nli_orig_foil"
NLI_FOIL_ORIG = "nli_foil_orig"
AMR_ORIG = "amr_orig"
AMR_FOIL = "amr_foil"
EDIT = "edit"
#: The corpus' domain of the source segment (WMT24++ literary/news/social/speech, BOUQuET's,
#: FLORES+'s): an optional column, written only when the corpus states domains; null for a
#: row from an input without one.
DOMAIN = "domain"

#: Polarity negation, role swap, antonym, hypernym (alee paper, Table 1).
PERTURBATIONS = ("PN", "RS", "AR", "HS")
#: Honest labels of other generators' edits that do not meet alee's definitions
#: (builders/alee/logic/foil_types.py): Sentence Smith's leaf-name swap and its hypernym
#: edit that falls back to a synonym.
OTHER_PERTURBATIONS = ("RS-leafswap", "HS-or-synonym")
#: Every value the ``perturbation`` column may hold.
LABELS = PERTURBATIONS + OTHER_PERTURBATIONS


_NLI: dict[str, Column] = {
    "entailment": "float32",
    "neutral": "float32",
    "contradiction": "float32",
}

COLUMNS: dict[str, Column] = {
    ID: "string",
    LANG: "string",
    EN_ORIG: "string",
    EN_FOIL: "string",
    TARGET_ORIG: "string",
    PERTURBATION: "string",
    LEVEL: "string",
    NLI_ORIG_FOIL: _NLI,
    NLI_FOIL_ORIG: _NLI,
    AMR_ORIG: "string",
    AMR_FOIL: "string",
    EDIT: "string",
}
#: Written only when the input states them (:attr:`~evaluators.schema.base.TableSchema.optional`),
#: so a dataset of other inputs keeps its bytes.
OPTIONAL: dict[str, Column] = {DOMAIN: "string"}

CITATION = """@misc{alee2025,
  title = {alee: Any-Language Evaluation of Embeddings via English-Centric Minimal Pairs},
  year  = {2025},
  note  = {Builds on Sentence Smith (EMNLP 2025)}
}"""

SCHEMA = FamilySchema(
    name="alee",
    pretty_name="xlbench alee foil triplets",
    tables=(
        TableSchema(
            "",
            COLUMNS,
            splits=("test",),
            description="(en_orig, en_foil, target_orig) triplets",
            optional=OPTIONAL,
        ),
    ),
    task_categories=("sentence-similarity",),
    tags=("minimal-pairs", "amr", "cross-lingual", "xlbench"),
    citation=CITATION,
)
