r"""The SilverAlign authors' code, transcribed unmodified from github.com/akoksal/SilverAlign (b21a37f).

Each function wraps the lines of one notebook cell, verbatim, so that
``tests/builders/silver/test_silver_reference.py`` can run them on the same inputs as
``builders.silver.tokenize`` and ``builders.silver.logic`` (which share no code with this file):

- :func:`authors_tokenize`: ``Scripts/4. Translation Mapping.ipynb``, cell 9, the tokenisation of
  every translation (the notebooks then compare ``sent.split()`` tokens);
- :func:`authors_links`: ``Scripts/5. Silver Data Algorithm - Partial.ipynb``, cells 4, 5 and 13
  (``which_words_changed``, the per-word counts, and the strict filter ``freq == total`` with
  ``total > 3`` on words with a single target), from a DataFrame shaped like their
  ``{filetype}_translated_pairs.json`` (``sentence_id``, ``word_id`` (-1 for the original),
  ``sentence``, ``translated_sentences``).

The only additions are the function wrappers, their arguments and return values, and
``tqdm`` as the identity (a progress bar).

Comparison (``python tests/oracles/silveralign_reference.py`` prints it): the authors'
tokens of the cases the issue names against the tokeniser xlbench had before issue #26::

    text                     authors (and xlbench now)         xlbench before
    well-known               well - known                      well-known
    3.5                      3 . 5                             3.5
    ¿Dónde está?             ¿Dónde está ?                     ¿ Dónde está ?
    ¡Hola!                   ¡Hola !                           ¡ Hola !
    «Sí», dijo.              «Sí» , dijo .                     « Sí » , dijo .
    don't                    don't                             don't
    a\b                      a\b                               a \ b
    “Ya”—dijo                “ Ya ” —dijo                      “ Ya ” — dijo
"""

from __future__ import annotations

import re
from collections import defaultdict

import pandas as pd


def tqdm(x):
    """The notebooks' progress bar, as the identity."""
    return x


def authors_tokenize(x: str) -> list[str]:
    """Notebook 4, cell 9 (one element of its list comprehension), then ``.split()`` as in cell 4 of notebook 5."""
    return re.sub(
        r"\s+",
        r" ",
        re.sub(r"([{}])".format('”“!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'), r" \1 ", str(x).strip()),
    ).split()


def which_words_changed(sent1, sent2):
    """Notebook 5, cell 4, verbatim."""
    if len(sent1.split()) != len(sent2.split()):
        return [1] * len(sent1.split())
    else:
        x = []
        for a, b in zip(sent1.split(), sent2.split()):
            x.append(int(a != b))
        return x


def _cell5(df: pd.DataFrame) -> list[dict]:
    """Notebook 5, cell 5, verbatim."""
    final_data = []
    sentence_ids = list(set(df["sentence_id"]))
    for sentence_id in tqdm(sentence_ids):
        sub_df = df.query(f"sentence_id=={sentence_id}")

        source_sentence = sub_df.query("word_id==-1")["sentence"].iloc[0]
        target_sentence = sub_df.query("word_id==-1")["translated_sentences"].iloc[0]

        ch = defaultdict(list)

        for word_id in range(0, max(sub_df["word_id"]) + 1):
            elements = sub_df.query(f"word_id=={word_id}").to_dict(orient="records")
            changed_s_sentences = [x["sentence"] for x in elements]
            changed_t_sentences = [x["translated_sentences"] for x in elements]
            for changed_s_sentence, changed_t_sentence in zip(  # noqa: B007 - verbatim
                changed_s_sentences, changed_t_sentences
            ):
                changed_words = which_words_changed(target_sentence, changed_t_sentence)
                if len(changed_words) != sum(changed_words):
                    ch[word_id].append(changed_words)
        alignment = []
        for source_word_id in ch:
            temp_alignment = defaultdict(int)
            total = len(ch[source_word_id])
            for one_al in ch[source_word_id]:
                for target_word_id, el in enumerate(one_al):
                    if el == 1:
                        temp_alignment[(source_word_id, target_word_id)] += 1
            for x in temp_alignment:
                alignment.append(
                    {
                        "source_word_id": x[0],
                        "target_word_id": x[1],
                        "freq": temp_alignment[x],
                        "total": total,
                    }
                )

        final_data.append(
            {
                "source_sentence": source_sentence,
                "target_sentence": target_sentence,
                "alignment": alignment,
                "sentence_id": sentence_id,
            }
        )
    return final_data


def _cell13(final_data: list[dict]) -> dict:
    """Notebook 5, cell 13, verbatim (``&`` binds first: ``freq == total and total > 3``)."""
    temp_gold = {}
    gold = {}
    for idx, x in enumerate(final_data):
        temp_gold[idx] = defaultdict(list)
        multi_keys = set()
        for el in x["alignment"]:
            temp_gold[idx][el["source_word_id"]].append(el["target_word_id"])
            if len(temp_gold[idx][el["source_word_id"]]) > 1:
                multi_keys.add(el["source_word_id"])
        for el in multi_keys:
            del temp_gold[idx][el]

    for idx, x in enumerate(final_data):
        gold[idx] = defaultdict(list)
        for el in x["alignment"]:
            if (
                el["freq"] == el["total"] & el["total"] > 3
                and el["source_word_id"] in temp_gold[idx]
                and el["target_word_id"] in temp_gold[idx][el["source_word_id"]]
            ):
                gold[idx][el["source_word_id"]].append(el["target_word_id"])
    return gold


def authors_links(df: pd.DataFrame) -> dict[int, list[list[int]]]:
    """Cells 5 and 13 on ``df``: sorted ``[source, target]`` links per ``sentence_id``."""
    final_data = _cell5(df)
    gold = _cell13(final_data)
    return {
        final_data[idx]["sentence_id"]: sorted([s, t] for s in gold[idx] for t in gold[idx][s])
        for idx in gold
    }


if __name__ == "__main__":
    cases = (
        "well-known",
        "3.5",
        "¿Dónde está?",
        "¡Hola!",
        "«Sí», dijo.",
        "don't",
        "a\\b",
        "“Ya”—dijo",
    )
    for text in cases:
        print(f"{text:24} {' '.join(authors_tokenize(text))}")
