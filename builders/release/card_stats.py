"""Descriptive statistics for dataset cards: pure functions over a config's rows.

Each family gets the figures a user checks before trusting a benchmark: sentence
lengths, links per sentence for silver alignments, pairs per sentence for
contextual dictionaries, triplets per edit type for alee, the parallel fraction
for BUCC. Inputs are plain row dicts (``pyarrow.Table.to_pylist()``), outputs
are ``{statistic: value}`` dicts of numbers and short strings, ordered for
display.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Row = Mapping[str, Any]


def words(text: str) -> int:
    """Return the number of whitespace-separated words (characters for unspaced scripts are not split).

    >>> words("In the beginning  God"), words("")
    (4, 0)
    """
    return len(text.split())


def summary(values: Iterable[float]) -> str:
    """Return ``mean / median / min–max`` of ``values`` as one short string, ``-`` when empty.

    >>> summary([1, 2, 3, 10])
    '4.0 / 2.5 / 1–10'
    >>> summary([])
    '-'
    """
    vals = list(values)
    if not vals:
        return "-"
    mean, med = statistics.fmean(vals), statistics.median(vals)
    return f"{mean:.1f} / {med:g} / {min(vals):g}–{max(vals):g}"


def share(part: int, whole: int) -> str:
    """Return ``part/whole`` as a percentage with one decimal.

    >>> share(1, 8), share(0, 0)
    ('12.5%', '-')
    """
    return f"{100 * part / whole:.1f}%" if whole else "-"


def top_counts(values: Iterable[str], n: int = 6) -> str:
    """Return the ``n`` most common values with their counts, most common first.

    >>> top_counts(["b", "a", "b", "c", "b", "a"])
    'b 3, a 2, c 1'
    """
    return ", ".join(
        f"{v or '(empty)'} {c}"
        for v, c in sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    )


def cbd_stats(rows: Sequence[Row]) -> dict[str, Any]:
    """Statistics of a contextual-dictionary split.

    >>> rows = [
    ...     {"sent_id": 0, "src_sentence": "a b c", "tgt_sentence": "x y", "src_word": "a", "tgt_word": "x"},
    ...     {"sent_id": 0, "src_sentence": "a b c", "tgt_sentence": "x y", "src_word": "b", "tgt_word": "y"},
    ...     {"sent_id": 1, "src_sentence": "a", "tgt_sentence": "x", "src_word": "a", "tgt_word": "x"},
    ... ]
    >>> s = cbd_stats(rows)
    >>> s["word pairs"], s["sentence pairs"], s["distinct word pairs"], s["pairs per sentence"]
    (3, 2, 2, '1.5 / 1.5 / 1–2')
    """
    sentences: dict[Any, Row] = {}
    per_sentence: Counter = Counter()
    for r in rows:
        sentences.setdefault(r["sent_id"], r)
        per_sentence[r["sent_id"]] += 1
    return {
        "word pairs": len(rows),
        "sentence pairs": len(sentences),
        "distinct word pairs": len({(r["src_word"], r["tgt_word"]) for r in rows}),
        "pairs per sentence": summary(per_sentence.values()),
        "source sentence length (words)": summary(
            words(r["src_sentence"]) for r in sentences.values()
        ),
        "target sentence length (words)": summary(
            words(r["tgt_sentence"]) for r in sentences.values()
        ),
    }


def silver_stats(rows: Sequence[Row]) -> dict[str, Any]:
    """Statistics of a silver-alignment split (main or small table).

    >>> rows = [
    ...     {"src_tokens": ["a", "b"], "tgt_tokens": ["x", "y", "z"], "sure": [[0, 0], [1, 2]]},
    ...     {"src_tokens": ["a", "b", "c", "d"], "tgt_tokens": ["x"], "sure": [[0, 0]]},
    ... ]
    >>> s = silver_stats(rows)
    >>> s["links per sentence"], s["source tokens with a link"]
    ('1.5 / 1.5 / 1–2', '50.0%')
    """
    linked = sum(len({link[0] for link in r["sure"]}) for r in rows)
    tokens = sum(len(r["src_tokens"]) for r in rows)
    return {
        "sentences": len(rows),
        "links per sentence": summary(len(r["sure"]) for r in rows),
        "source tokens with a link": share(linked, tokens),
        "sentences without a link": sum(1 for r in rows if not r["sure"]),
        "source length (tokens)": summary(len(r["src_tokens"]) for r in rows),
        "target length (tokens)": summary(len(r["tgt_tokens"]) for r in rows),
    }


def silver_details_stats(rows: Sequence[Row]) -> dict[str, Any]:
    """Statistics of a silver ``details`` split: how many source words were kept, and why the others were not.

    >>> s = silver_details_stats([{"status": "kept", "reason": ""}, {"status": "dropped", "reason": "too_few_valid"}])
    >>> s["kept"], s["drop reasons"]
    ('50.0%', 'too_few_valid 1')
    """
    kept = sum(1 for r in rows if r["status"] == "kept")
    return {
        "source words": len(rows),
        "kept": share(kept, len(rows)),
        "drop reasons": top_counts(r["reason"] for r in rows if r["status"] != "kept") or "-",
    }


def alee_stats(rows: Sequence[Row]) -> dict[str, Any]:
    """Statistics of an alee split: triplets per edit type, level, domain (when the rows have one) and lengths.

    >>> rows = [{"perturbation": "PN", "level": "sentence", "en_orig": "a b", "en_foil": "a not b", "target_orig": "x y"},
    ...         {"perturbation": "RS", "level": "sentence", "en_orig": "a b c", "en_foil": "c b a", "target_orig": ""}]
    >>> s = alee_stats(rows)
    >>> s["triplets per edit type"], s["foil − original length (words)"]
    ('PN 1, RS 1', '0.5 / 0.5 / 0–1')
    """
    targets = [r["target_orig"] for r in rows if r["target_orig"]]
    return {
        "triplets": len(rows),
        "triplets per edit type": top_counts((r["perturbation"] for r in rows), n=10),
        "levels": top_counts(r["level"] for r in rows),
        # Only a build whose corpus states domains has the column (evaluators/schema/alee.py).
        **(
            {"domains": top_counts(r["domain"] or "unstated" for r in rows)}
            if rows and "domain" in rows[0]
            else {}
        ),
        "English original length (words)": summary(words(r["en_orig"]) for r in rows),
        "foil − original length (words)": summary(
            abs(words(r["en_foil"]) - words(r["en_orig"])) for r in rows
        ),
        "translation length (words)": summary(words(t) for t in targets),
    }


def bucc_stats(rows: Sequence[Row]) -> dict[str, Any]:
    """Statistics of a BUCC sentences split.

    >>> s = bucc_stats([{"side": "src", "text": "a b"}, {"side": "tgt", "text": "x"}, {"side": "tgt", "text": "x"}])
    >>> s["sentences (src / tgt)"], s["duplicated texts"]
    ('1 / 2', 1)
    """
    sides = Counter(r["side"] for r in rows)
    texts = Counter((r["side"], r["text"]) for r in rows)
    return {
        "sentences (src / tgt)": f"{sides['src']} / {sides['tgt']}",
        "duplicated texts": sum(c - 1 for c in texts.values() if c > 1),
        "src sentence length (words)": summary(
            words(r["text"]) for r in rows if r["side"] == "src"
        ),
        "tgt sentence length (words)": summary(
            words(r["text"]) for r in rows if r["side"] == "tgt"
        ),
    }


def bucc_gold_stats(rows: Sequence[Row], sentences: Sequence[Row] = ()) -> dict[str, Any]:
    """Statistics of a BUCC gold split; with the split's sentences, the parallel fraction of each side.

    >>> bucc_gold_stats([{"src_id": "s1", "tgt_id": "t1"}], [{"side": "src"}] * 4 + [{"side": "tgt"}] * 2)
    {'gold pairs': 1, 'parallel fraction (src / tgt)': '25.0% / 50.0%'}
    """
    out: dict[str, Any] = {"gold pairs": len(rows)}
    if sentences:
        sides = Counter(r["side"] for r in sentences)
        out["parallel fraction (src / tgt)"] = (
            f"{share(len(rows), sides['src'])} / {share(len(rows), sides['tgt'])}"
        )
    return out


def config_stats(
    family: str,
    suffix: str,
    splits: Mapping[str, Sequence[Row]],
    main: Mapping[str, Sequence[Row]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Return ``split -> {statistic: value}`` for one config of a family.

    Args:
        family: the family name.
        suffix: the table suffix of the config (``""`` for the main table).
        splits: ``split -> rows`` of the config.
        main: ``split -> rows`` of the matching main-table config (BUCC gold needs the sentences).

    >>> config_stats("bucc", "gold", {"test": [{"src_id": "a", "tgt_id": "b"}]})
    {'test': {'gold pairs': 1}}
    """
    out: dict[str, dict[str, Any]] = {}
    for split, rows in sorted(splits.items()):
        if family == "cbd":
            out[split] = cbd_stats(rows)
        elif family == "silver":
            out[split] = (
                silver_details_stats(rows) if suffix.endswith("details") else silver_stats(rows)
            )
        elif family == "alee":
            out[split] = alee_stats(rows)
        elif family == "bucc":
            out[split] = (
                bucc_gold_stats(rows, (main or {}).get(split, ()))
                if suffix == "gold"
                else bucc_stats(rows)
            )
        else:
            out[split] = {"rows": len(rows)}
    return out


def pairs_per_language(configs: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """Return, per language, the number of rows of the configs it appears in (main-table rows only).

    Args:
        configs: ``subset -> split -> rows`` of the main table (subset = ``src-tgt`` or one language).

    >>> pairs_per_language({"eng_Latn-deu_Latn": {"test": 5}, "eng_Latn-fra_Latn": {"test": 2, "aligner": 1}})
    {'deu_Latn': 5, 'eng_Latn': 8, 'fra_Latn': 3}
    """
    out: Counter = Counter()
    for subset, splits in configs.items():
        for lang in subset.split("-"):
            out[lang] += sum(splits.values())
    return dict(sorted(out.items()))
