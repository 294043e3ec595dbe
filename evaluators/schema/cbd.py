"""Contextual bilingual dictionaries (Gaschi et al. 2022): translated word pairs in context.

Offsets are 0-based Python character offsets, end exclusive:
``src_sentence[src_start:src_end] == src_word``.
"""

from evaluators.schema.base import Column, FamilySchema, TableSchema

ID = "id"
SENT_ID = "sent_id"
SRC_SENTENCE = "src_sentence"
TGT_SENTENCE = "tgt_sentence"
SRC_WORD = "src_word"
TGT_WORD = "tgt_word"
SRC_START, SRC_END = "src_start", "src_end"
TGT_START, TGT_END = "tgt_start", "tgt_end"
#: "dictionary" (unique-candidate rule) or the aligner that proposed the pair.
METHOD = "method"

#: What a "word" is, for the builder and for evaluators that draw random word
#: pairs: a maximal run of word characters, combining marks and Indic/Thai
#: vowel signs included (Python's ``\\w`` alone splits Devanagari words).
WORD_PATTERN = (
    r"[\w\u0300-\u036F\u0483-\u0489\u0591-\u05C7\u064B-\u065F\u0900-\u0DFF\u0E31-\u0E4E]+"
)

COLUMNS: dict[str, Column] = {
    ID: "string",
    SENT_ID: "int64",
    SRC_SENTENCE: "string",
    TGT_SENTENCE: "string",
    SRC_WORD: "string",
    TGT_WORD: "string",
    SRC_START: "int32",
    SRC_END: "int32",
    TGT_START: "int32",
    TGT_END: "int32",
    METHOD: "string",
}

CITATION = """@inproceedings{gaschi2022multilingual,
  title     = {Multilingual Transformer Encoders: a Word-Level Task-Agnostic Evaluation},
  author    = {Gaschi, F{\\'e}lix and Plesse, Fran{\\c{c}}ois and Rastin, Parisa and Toussaint, Yannick},
  booktitle = {International Joint Conference on Neural Networks (IJCNN)},
  year      = {2022}
}"""

SCHEMA = FamilySchema(
    name="cbd",
    pretty_name="xlbench contextual bilingual dictionaries",
    tables=(
        TableSchema(
            "",
            COLUMNS,
            splits=("test", "aligner"),
            description="word pairs kept by the unique-candidate rule (test) and, for comparison, pairs from a statistical aligner (aligner)",
        ),
    ),
    task_categories=("feature-extraction", "translation"),
    tags=("word-alignment", "bilingual-lexicon", "cross-lingual", "xlbench"),
    citation=CITATION,
)
