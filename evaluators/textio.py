"""Read UTF-8 text files into lines, with one clear error on bad input.

Shared by the evaluators' readers and, through :mod:`builders.adapters.parallel`,
by the builders (builders may import evaluators, never the reverse).
"""

from __future__ import annotations

import os
from pathlib import Path

from evaluators.errors import InputFileError

#: Default message for a missing file; ``{path}`` is the quoted path.
MISSING = "Input file {path} does not exist; check the path."
#: Default message for invalid UTF-8; ``{path}`` is the quoted path, ``{byte}`` the offset.
INVALID = "{path} is not valid UTF-8 (byte {byte}); convert it with 'iconv -t UTF-8'."


def split_lines(text: str) -> list[str]:
    r"""Split text on newlines, without line ends; a final newline starts no extra line.

    >>> split_lines("a\r\nb\n")
    ['a', 'b']
    >>> split_lines("a\n\nb")
    ['a', '', 'b']
    >>> split_lines("")
    []
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def read_lines(path: str | os.PathLike, *, missing: str = MISSING, invalid: str = INVALID) -> list[str]:
    """Read a UTF-8 text file (BOM tolerated) into lines without newlines.

    Args:
        path: the file.
        missing: message when ``path`` is not a file (``{path}`` is filled in).
        invalid: message for invalid UTF-8 (``{path}`` and ``{byte}`` are filled in).

    Raises:
        InputFileError: missing file or invalid UTF-8.
    """
    p = Path(path)
    shown = repr(str(p))
    if not p.is_file():
        raise InputFileError(missing.format(path=shown))
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputFileError(invalid.format(path=shown, byte=err.start)) from err
    return split_lines(text)
