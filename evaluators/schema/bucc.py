"""BUCC-style bitext mining (Zweigenbaum et al. 2017/2018).

Main table (config ``deu_Latn-eng_Latn``): every sentence of both monolingual
corpora, one row each, ``side`` = ``src`` or ``tgt``. Gold table
(``deu_Latn-eng_Latn-gold``): the parallel pairs by id. Splits share no sentence
text. ``validation`` holds the official BUCC sample set when training files exist
(the shared task's development set). Sentences are handled by id, never by text.
"""

from evaluators.schema.base import Column, FamilySchema, TableSchema

ID = "id"
SIDE = "side"
TEXT = "text"
SRC_ID = "src_id"
TGT_ID = "tgt_id"
SIDES = ("src", "tgt")

COLUMNS: dict[str, Column] = {ID: "string", SIDE: "string", TEXT: "string"}
GOLD_COLUMNS: dict[str, Column] = {SRC_ID: "string", TGT_ID: "string"}

CITATION = """@inproceedings{zweigenbaum2018overview,
  title     = {Overview of the Third BUCC Shared Task: Spotting Parallel Sentences in Comparable Corpora},
  author    = {Zweigenbaum, Pierre and Sharoff, Serge and Rapp, Reinhard},
  booktitle = {Proceedings of the 11th Workshop on Building and Using Comparable Corpora},
  year      = {2018}
}"""

SCHEMA = FamilySchema(
    name="bucc",
    pretty_name="xlbench BUCC-style bitext mining",
    tables=(
        TableSchema(
            "",
            COLUMNS,
            splits=("train", "validation", "test"),
            description="sentences of both corpora",
        ),
        TableSchema(
            "gold",
            GOLD_COLUMNS,
            splits=("train", "validation", "test"),
            key=(SRC_ID, TGT_ID),
            description="gold parallel pairs by id",
            refers_to=((SRC_ID, ""), (TGT_ID, "")),
        ),
    ),
    task_categories=("translation", "sentence-similarity"),
    tags=("bitext-mining", "parallel-corpus", "xlbench"),
    citation=CITATION,
    disjoint_column=TEXT,
)
#: Suffix of the gold table's configs (``<pair>-gold``).
GOLD = SCHEMA.tables[1].suffix


def gold_config(pair: str) -> str:
    """Return the config of ``pair``'s gold pairs.

    >>> gold_config("deu_Latn-eng_Latn")
    'deu_Latn-eng_Latn-gold'
    """
    return SCHEMA.config_name(pair, GOLD)
