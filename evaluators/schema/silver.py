"""SilverAlign silver word alignments (Köksal et al. 2022).

Links are 0-based ``[src_index, tgt_index]`` pairs over ``src_tokens`` /
``tgt_tokens`` (Pharaoh ``i-j``). Silver alignments are *partial*: only source
words listed in ``sure`` (or ``possible``) were decided; evaluate with partial
scoring. The ``details`` table explains every source word's fate.

Two subsets, as in the paper: *Silver_Large* (monolingual source sentences) is
the main config ``<pair>`` with ``<pair>-details``; *Silver_Small* (the source
side of a gold-aligned test set, ids = the gold set's 0-based line numbers, so
silver and gold can be joined) is ``<pair>-small`` with ``<pair>-small-details``.
"""

from evaluators.schema.base import Column, FamilySchema, Seq, TableSchema

ID = "id"
SRC_TEXT, TGT_TEXT = "src_text", "tgt_text"
SRC_TOKENS, TGT_TOKENS = "src_tokens", "tgt_tokens"
#: 0-based [src, tgt] pairs.
SURE = "sure"
#: 0-based [src, tgt] pairs; sure links are also possible (S ⊆ P) by convention.
POSSIBLE = "possible"

COLUMNS: dict[str, Column] = {
    ID: "string",
    SRC_TEXT: "string",
    TGT_TEXT: "string",
    SRC_TOKENS: Seq("string"),
    TGT_TOKENS: Seq("string"),
    SURE: Seq(Seq("int32")),
    POSSIBLE: Seq(Seq("int32")),
}

SRC_INDEX = "src_index"
WORD = "word"
ALTERNATIVES = "alternatives"
ALT_TRANSLATIONS = "alt_translations"
STATUS = "status"
REASON = "reason"
TGT_INDICES = "tgt_indices"
#: alternatives whose translation kept the length of the base translation.
N_VALID = "n_valid"

DETAILS_COLUMNS: dict[str, Column] = {
    ID: "string",
    SRC_INDEX: "int32",
    WORD: "string",
    ALTERNATIVES: Seq("string"),
    ALT_TRANSLATIONS: Seq("string"),
    STATUS: "string",
    REASON: "string",
    N_VALID: "int32",
    TGT_INDICES: Seq("int32"),
}

CITATION = """@article{koksal2022silveralign,
  title   = {SilverAlign: MT-Based Silver Data Algorithm For Evaluating Word Alignment},
  author  = {K{\\"o}ksal, Abdullatif and Severini, Silvia and Sch{\\"u}tze, Hinrich},
  journal = {arXiv preprint arXiv:2210.06207},
  year    = {2022}
}"""

SCHEMA = FamilySchema(
    name="silver",
    pretty_name="xlbench SilverAlign silver word alignments",
    # "small-details" precedes "small" and "details" so that split_config() matches the longest suffix.
    tables=(
        TableSchema(
            "",
            COLUMNS,
            splits=("test",),
            description="Silver_Large: monolingual sentences with partial silver alignments",
        ),
        TableSchema(
            "small-details",
            DETAILS_COLUMNS,
            splits=("test",),
            key=(ID, SRC_INDEX),
            description="Silver_Small per source word: alternatives, their translations, kept or dropped and why",
        ),
        TableSchema(
            "small",
            COLUMNS,
            splits=("test",),
            description="Silver_Small: the source side of a gold set, with partial silver alignments",
        ),
        TableSchema(
            "details",
            DETAILS_COLUMNS,
            splits=("test",),
            key=(ID, SRC_INDEX),
            description="Silver_Large per source word: alternatives, their translations, kept or dropped and why",
        ),
    ),
    task_categories=("translation", "token-classification"),
    tags=("word-alignment", "silver-data", "xlbench"),
    citation=CITATION,
)


def alignment_table(config: str, table: TableSchema) -> bool:
    """Whether a config holds alignments (Silver_Large or Silver_Small), not per-word details.

    The configs an alignment evaluator scores (``DatasetSource.select_configs(scored=...)``).

    >>> alignment_table("eng_Latn-deu_Latn-small", SCHEMA.table("small"))
    True
    >>> alignment_table("eng_Latn-deu_Latn-details", SCHEMA.table("details"))
    False
    """
    return "details" not in table.suffix
