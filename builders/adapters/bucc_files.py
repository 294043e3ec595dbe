"""Read the official BUCC 2017/2018 shared-task files.

Layout (Zweigenbaum et al. 2017, 2018), for a pair ``xx-en`` and a split
``sample``, ``training`` or ``test``::

    xx-en.<split>.xx     id<TAB>sentence   (ids like ``de-000000001``)
    xx-en.<split>.en     id<TAB>sentence   (ids like ``en-000000001``)
    xx-en.<split>.gold   id_xx<TAB>id_en   (absent for test: the organisers held it back)

Files may sit directly in the folder or in an ``xx-en/`` subfolder. Every
problem raises one :class:`~evaluators.core.errors.InputFileError` naming the file,
the line and the fix. Duplicate *texts* are legal (BUCC has them) and kept:
sentences are identified by id, never by text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evaluators.core.errors import InputFileError, truncate
from evaluators.core.fileio import why_not_a_folder
from evaluators.data.textio import read_lines

SPLITS = ("sample", "training", "test")


@dataclass(frozen=True)
class OfficialSplit:
    """One official split of one pair.

    Attributes:
        name: ``sample``, ``training`` or ``test``.
        src: ``(id, text)`` of the xx side in file order.
        tgt: ``(id, text)`` of the English side in file order.
        gold: ``(id_xx, id_en)`` pairs in file order, or ``None`` when no gold file exists.
        files: the files read (for pinning).
    """

    name: str
    src: list[tuple[str, str]]
    tgt: list[tuple[str, str]]
    gold: list[tuple[str, str]] | None
    files: tuple[Path, ...]


def _read_text(path: Path) -> list[str]:
    return read_lines(
        path,
        what="BUCC file",
        missing="BUCC file {path} does not exist; check --bucc-dir and --lang.",
        invalid="{path} is not valid UTF-8 (line {line}, byte {byte}); BUCC files are UTF-8, "
        "re-encode it with 'iconv -f <encoding> -t UTF-8'.",
    )


def _two_columns(path: Path, expected: str) -> Iterator[tuple[int, str, str]]:
    """Yield ``(line number, first, second)``, stripped, for each non-blank two-column line.

    Raises:
        InputFileError: a line without exactly one tab (``expected`` names the layout).
    """
    for n, line in enumerate(_read_text(path), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise InputFileError(
                f"{str(path)!r} line {n} has {len(fields)} tab-separated fields; expected '{expected}' "
                f"(got {truncate(line, 60)})."
            )
        yield n, fields[0].strip(), fields[1].strip()


def read_sentences(path: str | os.PathLike, prefix: str) -> list[tuple[str, str]]:
    """Read one ``id<TAB>sentence`` file whose ids must look like ``<prefix>-<9 digits>``.

    Raises:
        InputFileError: invalid UTF-8, a line without exactly one tab, a bad id,
            an empty sentence, a duplicate id, or an empty file.
    """
    path = Path(path)
    pattern = re.compile(rf"^{re.escape(prefix)}-\d{{9}}$")
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for n, sid, text in _two_columns(path, "id<TAB>sentence"):
        if not pattern.match(sid):
            raise InputFileError(
                f"{str(path)!r} line {n}: id {truncate(sid, 40)} is not of the form '{prefix}-000000001'; "
                f"check that the file belongs to this language."
            )
        if not text:
            raise InputFileError(
                f"{str(path)!r} line {n}: sentence {sid} is empty; remove the line or fill it."
            )
        if sid in seen:
            raise InputFileError(
                f"{str(path)!r} line {n}: duplicate id {sid} (first on line {seen[sid]}); ids must be unique."
            )
        seen[sid] = n
        out.append((sid, text))
    if not out:
        raise InputFileError(f"{str(path)!r} holds no sentences; expected 'id<TAB>sentence' lines.")
    return out


def read_gold(
    path: str | os.PathLike, src_ids: set[str], tgt_ids: set[str]
) -> list[tuple[str, str]]:
    """Read a ``.gold`` file and check every id exists in its corpus.

    Raises:
        InputFileError: invalid UTF-8, a line without two ids, an id missing from
            its corpus, or a repeated pair.
    """
    path = Path(path)
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for n, s, t in _two_columns(path, "id_xx<TAB>id_en"):
        for sid, ids, side in ((s, src_ids, "first"), (t, tgt_ids, "second")):
            if sid not in ids:
                raise InputFileError(
                    f"{str(path)!r} line {n}: gold id {truncate(sid, 40)} ({side} column) is not in the "
                    f"corresponding sentence file; the gold file does not match the corpus."
                )
        if (s, t) in seen:
            raise InputFileError(
                f"{str(path)!r} line {n}: gold pair {s} {t} is listed twice; remove the repeat."
            )
        seen.add((s, t))
        out.append((s, t))
    return out


def find_files(folder: str | os.PathLike, xx: str, split: str) -> tuple[Path, Path, Path] | None:
    """Return the ``(.xx, .en, .gold)`` paths of a split, or ``None`` if its sentence files are absent.

    Raises:
        InputFileError: only one of the two sentence files exists.
    """
    root = Path(folder)
    for base in (root, root / f"{xx}-en"):
        stem = base / f"{xx}-en.{split}"
        src, tgt, gold = Path(f"{stem}.{xx}"), Path(f"{stem}.en"), Path(f"{stem}.gold")
        if src.is_file() and tgt.is_file():
            return src, tgt, gold
        if src.is_file() != tgt.is_file():
            have, miss = (src, tgt) if src.is_file() else (tgt, src)
            raise InputFileError(
                f"Found {str(have)!r} but not {str(miss)!r}; a BUCC split needs both sides."
            )
    return None


def read_split(folder: str | os.PathLike, xx: str, split: str) -> OfficialSplit | None:
    """Read one official split (``None`` if absent); a missing gold file gives ``gold=None``."""
    files = find_files(folder, xx, split)
    if files is None:
        return None
    src_path, tgt_path, gold_path = files
    src = read_sentences(src_path, xx)
    tgt = read_sentences(tgt_path, "en")
    gold = None
    read = [src_path, tgt_path]
    if gold_path.is_file():
        gold = read_gold(gold_path, {i for i, _ in src}, {i for i, _ in tgt})
        read.append(gold_path)
    return OfficialSplit(split, src, tgt, gold, tuple(read))


def read_official(folder: str | os.PathLike, xx: str) -> dict[str, OfficialSplit]:
    """Read every official split present for ``xx-en`` (``sample``, ``training``, ``test``).

    Raises:
        InputFileError: the folder does not exist or holds no split of this pair.
    """
    root = Path(folder)
    if not root.is_dir():
        raise InputFileError(
            f"BUCC folder {str(root)!r} {why_not_a_folder(root)}; pass the folder holding {xx}-en.* files."
        )
    out = {}
    for split in SPLITS:
        got = read_split(root, xx, split)
        if got is not None:
            out[split] = got
    if not out:
        raise InputFileError(
            f"No BUCC files for {xx}-en in {str(root)!r}; expected e.g. {xx}-en.training.{xx} and "
            f"{xx}-en.training.en (optionally inside {xx}-en/)."
        )
    return out
