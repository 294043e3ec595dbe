"""Read parallel corpora from files: two aligned text files, a TSV, Tatoeba-style pairs.

Every reader returns ``(pair_id, src_text, tgt_text)`` triples and raises one
clear :class:`~evaluators.core.errors.InputFileError` on bad input.
"""

from __future__ import annotations

import os

from evaluators.core.errors import InputFileError
from evaluators.data.textio import read_lines  # builders read text files through this module


def read_aligned_files(
    src: str | os.PathLike, tgt: str | os.PathLike
) -> list[tuple[str, str, str]]:
    """Read two line-aligned files; blank pairs are skipped, ids are 0-based line numbers.

    Raises:
        InputFileError: different line counts or no non-empty pair.
    """
    a, b = read_lines(src), read_lines(tgt)
    if len(a) != len(b):
        raise InputFileError(
            f"Parallel files are not aligned: {str(src)!r} has {len(a)} lines but {str(tgt)!r} has {len(b)}; "
            f"they must have one sentence per line, line i translating line i."
        )
    out = [
        (str(i), s.strip(), t.strip())
        for i, (s, t) in enumerate(zip(a, b))
        if s.strip() and t.strip()
    ]
    if not out:
        raise InputFileError(
            f"The parallel corpus {str(src)!r} / {str(tgt)!r} is empty; pass files with sentences."
        )
    return out


def read_tsv(path: str | os.PathLike) -> list[tuple[str, str, str]]:
    """Read ``src<TAB>tgt`` or ``id<TAB>src<TAB>tgt`` lines.

    Raises:
        InputFileError: a line without 2 or 3 tab-separated fields, or an empty file.
    """
    out = []
    for i, line in enumerate(read_lines(path)):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) == 2:
            out.append((str(i), fields[0].strip(), fields[1].strip()))
        elif len(fields) == 3:
            out.append((fields[0].strip(), fields[1].strip(), fields[2].strip()))
        else:
            raise InputFileError(
                f"{str(path)!r} line {i + 1} has {len(fields)} tab-separated fields; expected 'src<TAB>tgt' or 'id<TAB>src<TAB>tgt'."
            )
    if not out:
        raise InputFileError(
            f"The parallel corpus {str(path)!r} is empty; pass a file with sentence pairs."
        )
    return out


def read_parallel(
    src: str | os.PathLike, tgt: str | os.PathLike | None = None
) -> list[tuple[str, str, str]]:
    """Read a parallel corpus in any supported layout.

    ``src`` + ``tgt``: two aligned files (Tatoeba's ``*.eng``/``*.xxx`` included).
    ``src`` alone: a TSV.
    """
    if tgt is None:
        return read_tsv(src)
    return read_aligned_files(src, tgt)
