"""Readers for alee's inputs: foils made elsewhere, PAWS-X folders, parallel corpora.

Each returns plain values; bad input raises one :class:`InputFileError` naming
the file and the fix.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

from builders.adapters.parallel import read_lines
from builders.alee.spec import EXTRA_TYPES, PERTURBATIONS, SENTENCE_SMITH_TYPES
from evaluators.core.errors import InputFileError
from evaluators.core.fileio import why_not_a_folder
from evaluators.schema.langs import language_name, script, script_name, to_card_language

#: Accepted header spellings: alee's own and Sentence Smith's CSV.
FOIL_COLUMNS = (
    ("en_orig", "en_foil", "type"),
    ("original_sentence", "modified_sentence", "modification_type"),
)


def map_type(label: str) -> str | None:
    """Return alee's perturbation for a foil type label, ``None`` for a known extra type (RD).

    >>> map_type("polarity_negation"), map_type("RS"), map_type("antonym"), map_type("hypernym"), map_type("RD")
    ('PN', 'RS', 'AR', 'HS', None)

    Raises:
        InputFileError: an unknown label.
    """
    clean = label.strip()
    if clean in PERTURBATIONS:
        return clean
    low = clean.lower()
    if low in SENTENCE_SMITH_TYPES:
        return SENTENCE_SMITH_TYPES[low]
    if low in EXTRA_TYPES:
        return None
    raise InputFileError(
        f"Unknown foil type {label!r}; use one of {', '.join(PERTURBATIONS)} or Sentence Smith's "
        f"{', '.join(sorted(SENTENCE_SMITH_TYPES))} (RD is skipped)."
    )


def _csv_rows(lines: list[str], delimiter: str, path: Path) -> list[list[str]]:
    """Parse CSV/TSV lines; a broken quote becomes one error naming the line the bad row starts on.

    Raises:
        InputFileError: an unbalanced quote or another CSV syntax error.
    """
    # A newline inside a quoted field must survive, so the reader sees the lines with their ends.
    reader = csv.reader((line + "\n" for line in lines), delimiter=delimiter, strict=True)
    rows: list[list[str]] = []
    last_ok = 0
    try:
        for fields in reader:
            rows.append(fields)
            last_ok = reader.line_num
    except csv.Error as err:
        raise InputFileError(
            f"Foils file {str(path)!r} line {last_ok + 1} is not valid "
            f"{'TSV' if delimiter == chr(9) else 'CSV'} ({err}); balance the quotes or quote the whole field."
        ) from err
    return rows


def read_foils(path: str | os.PathLike) -> tuple[list[tuple[str, str, str, str]], Counter]:
    """Read a CSV/TSV of foils: ``(row id, en_orig, en_foil, type)`` and a counter of skipped types.

    Row ids are 0-based data-row numbers, so the same file gives the same ids.

    Raises:
        InputFileError: missing file, no known header, empty cells or no usable row.
    """
    p = Path(path)
    lines = read_lines(p)
    if not lines:
        raise InputFileError(
            f"Foils file {str(p)!r} is empty; pass a CSV/TSV with columns en_orig, en_foil, type."
        )
    delimiter = "\t" if p.suffix.lower() == ".tsv" or "\t" in lines[0] else ","
    rows = _csv_rows(lines, delimiter, p)
    header = [h.strip() for h in rows[0]]
    for cols in FOIL_COLUMNS:
        if all(c in header for c in cols):
            idx = [header.index(c) for c in cols]
            break
    else:
        raise InputFileError(
            f"Foils file {str(p)!r} has columns {header[:6]}; expected a header with en_orig, en_foil, type "
            f"(or Sentence Smith's original_sentence, modified_sentence, modification_type)."
        )
    out, skipped = [], Counter[str]()
    for i, fields in enumerate(rows[1:]):
        if not any(f.strip() for f in fields):
            continue
        if len(fields) <= max(idx):
            raise InputFileError(
                f"{str(p)!r} data row {i + 1} has {len(fields)} fields; expected at least {max(idx) + 1}."
            )
        orig, foil, label = (fields[j].strip() for j in idx)
        if not orig or not foil:
            raise InputFileError(
                f"{str(p)!r} data row {i + 1} has an empty original or foil; remove the row."
            )
        etype = map_type(label)
        if etype is None:
            skipped[label.strip()] += 1
            continue
        out.append((str(i), orig, foil, etype))
    if not out:
        raise InputFileError(
            f"Foils file {str(p)!r} has no row of types {', '.join(PERTURBATIONS)}."
        )
    return out, skipped


#: PAWS-X's languages (its file suffixes) and the script each is written in: its ``zh`` is
#: Simplified Chinese (Yang et al. 2019), so ``zh-TW`` (Traditional) has no PAWS-X file.
PAWSX_SCRIPTS = {"de": "Latn", "es": "Latn", "fr": "Latn", "ja": "Jpan", "ko": "Hang", "zh": "Hans"}


def pawsx_files(folder: str | os.PathLike, lang: str, split: str) -> Path:
    """Return the PAWS-X file of a canonical language and split (``test-de.tsv``).

    Raises:
        InputFileError: PAWS-X has no text of this language in this script.
    """
    suffix = to_card_language(lang)
    if PAWSX_SCRIPTS.get(suffix) != script(lang):
        raise InputFileError(
            f"PAWS-X has no {lang} ({language_name(lang)} in {script_name(lang)} script): it has "
            f"de, es, fr, ja, ko and zh (Simplified Chinese, zh-CN); choose one of those in --langs "
            f"or give this language's text with --parallel/--tsv."
        )
    return Path(folder) / f"{split}-{suffix}.tsv"


def read_pawsx(
    folder: str | os.PathLike, langs: list[str], splits: tuple[str, ...] = ("test", "dev")
):
    """Read PAWS-X's line-aligned TSVs (XTREME layout: s1, s2, label).

    The same (split, line, column) in ``<split>-<xx>.tsv`` is a human translation
    of the English sentence there; the first occurrence (test before dev) wins.

    Returns:
        ``(english sentences in file order, {lang: {English: translation}}, files read)``.

    Raises:
        InputFileError: a missing or misaligned file.
    """
    root = Path(folder)
    if not root.is_dir():
        raise InputFileError(
            f"PAWS-X folder {str(root)!r} {why_not_a_folder(root)}; pass the folder holding test-en.tsv."
        )
    for lang in langs:
        pawsx_files(root, lang, splits[0])  # a language PAWS-X lacks fails before any reading
    english: list[str] = []
    seen: set[str] = set()
    targets: dict[str, dict[str, str]] = {lang: {} for lang in langs}
    files: list[Path] = []
    for split in splits:
        en_path = root / f"{split}-en.tsv"
        if not en_path.is_file():
            continue
        en_rows = [line.split("\t") for line in read_lines(en_path)]
        files.append(en_path)
        for row in en_rows:
            for s in row[:2]:
                s = s.strip()
                if s and s not in seen:
                    seen.add(s)
                    english.append(s)
        for lang in langs:
            path = pawsx_files(root, lang, split)
            if not path.is_file():
                raise InputFileError(
                    f"PAWS-X file {str(path)!r} is missing; PAWS-X has de, es, fr, ja, ko, zh (check --langs)."
                )
            rows = [line.split("\t") for line in read_lines(path)]
            if len(rows) != len(en_rows):
                raise InputFileError(
                    f"{str(path)!r} has {len(rows)} lines but {str(en_path)!r} has {len(en_rows)}; PAWS-X files must be line-aligned."
                )
            files.append(path)
            for en_row, row in zip(en_rows, rows):
                for col in (0, 1):
                    if col < len(en_row) and col < len(row):
                        en, tgt = en_row[col].strip(), row[col].strip()
                        if en and tgt:
                            targets[lang].setdefault(en, tgt)
    if not files:
        raise InputFileError(
            f"{str(root)!r} holds no test-en.tsv or dev-en.tsv; pass a PAWS-X (XTREME layout) folder."
        )
    return english, targets, files
