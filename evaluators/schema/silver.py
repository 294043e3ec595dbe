"""SilverAlign silver word alignments (Köksal et al. 2022).

Links are 0-based ``[src_index, tgt_index]`` pairs over ``src_tokens`` /
``tgt_tokens`` (Pharaoh ``i-j``). Silver alignments are *partial*: only source
words listed in ``sure`` (or ``possible``) were decided; evaluate with partial
scoring. The ``details`` table explains every source word's fate.
"""

from datasets import Features, Sequence, Value

from evaluators.schema.base import FamilySchema, TableSchema

ID = "id"
SRC_TEXT, TGT_TEXT = "src_text", "tgt_text"
SRC_TOKENS, TGT_TOKENS = "src_tokens", "tgt_tokens"
#: 0-based [src, tgt] pairs.
SURE = "sure"
#: 0-based [src, tgt] pairs; sure links are also possible (S ⊆ P) by convention.
POSSIBLE = "possible"

FEATURES = Features(
    {
        ID: Value("string"),
        SRC_TEXT: Value("string"),
        TGT_TEXT: Value("string"),
        SRC_TOKENS: Sequence(Value("string")),
        TGT_TOKENS: Sequence(Value("string")),
        SURE: Sequence(Sequence(Value("int32"))),
        POSSIBLE: Sequence(Sequence(Value("int32"))),
    }
)

SRC_INDEX = "src_index"
WORD = "word"
ALTERNATIVES = "alternatives"
ALT_TRANSLATIONS = "alt_translations"
STATUS = "status"
REASON = "reason"
TGT_INDICES = "tgt_indices"

DETAILS_FEATURES = Features(
    {
        ID: Value("string"),
        SRC_INDEX: Value("int32"),
        WORD: Value("string"),
        ALTERNATIVES: Sequence(Value("string")),
        ALT_TRANSLATIONS: Sequence(Value("string")),
        STATUS: Value("string"),
        REASON: Value("string"),
        TGT_INDICES: Sequence(Value("int32")),
    }
)

CITATION = """@article{koksal2022silveralign,
  title   = {SilverAlign: MT-Based Silver Data Algorithm For Evaluating Word Alignment},
  author  = {K{\\"o}ksal, Abdullatif and Severini, Silvia and Sch{\\"u}tze, Hinrich},
  journal = {arXiv preprint arXiv:2210.06207},
  year    = {2022}
}"""

SCHEMA = FamilySchema(
    name="silver",
    pretty_name="xlbench SilverAlign silver word alignments",
    tables=(
        TableSchema("", FEATURES, splits=("test",), description="sentence pairs with partial silver alignments"),
        TableSchema(
            "details",
            DETAILS_FEATURES,
            splits=("test",),
            key=(ID, SRC_INDEX),
            description="per source word: alternatives, their translations, kept or dropped and why",
        ),
    ),
    task_categories=("translation", "token-classification"),
    tags=("word-alignment", "silver-data", "xlbench"),
    citation=CITATION,
)
