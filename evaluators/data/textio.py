"""Open input files for every reader, with one clear error on bad input.

Shared by the evaluators' readers and, through :mod:`builders.adapters.parallel`,
by the builders (builders may import evaluators, never the reverse). Every
problem an input file can have (missing, a directory, unreadable, not gzip,
not UTF-8) becomes one :class:`~evaluators.core.errors.InputFileError` sentence that
names the file and the fix; no reader opens files another way.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from evaluators.core.errors import InputFileError

#: Default message for a missing file; ``{path}`` is the quoted path.
MISSING = "Input file {path} does not exist; check the path."
#: Default message for invalid UTF-8; ``{path}`` is the quoted path, ``{byte}`` the offset, ``{line}`` the line.
INVALID = "{path} is not valid UTF-8 (line {line}, byte {byte}); re-encode it with 'iconv -f <encoding> -t UTF-8'."
_GZIP_MAGIC = b"\x1f\x8b"
#: The longest line any text reader accepts, in characters. A line holds one sentence, a
#: paragraph, a dictionary entry or one sentence's links: the longest in the corpora xlbench
#: reads (BUCC, Tatoeba, NTREX, PAWS-X, the Bibles, MUSE) is under 2,000. A longer one is a
#: file that is not one-item-per-line (a document, a minified dump); matching and splitting are
#: superlinear in its length (a 1 MB line ran cbd out of memory after 482 s; 10,000 characters
#: of adversarial text already take cbd about a minute).
MAX_LINE_CHARS = 10_000


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


def check_line_lengths(lines: list[str], path: str | os.PathLike, what: str = "Input file") -> None:
    """Refuse a line longer than :data:`MAX_LINE_CHARS` (the one length guard of every text reader).

    >>> check_line_lengths(["short", "lines"], "x.txt")

    Raises:
        InputFileError: one sentence naming the file, the line and the limit.
    """
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            raise InputFileError(
                f"{what} {str(path)!r} line {number} has {len(line):,} characters, more than the "
                f"{MAX_LINE_CHARS:,} a line of one sentence or paragraph may have; split that line "
                f"(one sentence per line) or remove it."
            )


def _stat_kind(p: Path, what: str) -> str:
    """Return ``dir``, ``file``, ``missing`` or ``other``; a folder that cannot be searched is an error.

    ``Path.is_dir()`` raises ``PermissionError`` when a folder above ``p`` denies search (x).
    """
    try:
        if p.is_dir():
            return "dir"
        if p.is_file():
            return "file"
        return "other" if p.exists() else "missing"
    except PermissionError as err:
        raise InputFileError(
            f"Cannot reach {what.lower()} {str(p)!r}: permission denied on it or a folder above it "
            f"({err.strerror}); give your user read and search (x) permission on the path, or copy "
            f"the file somewhere readable."
        ) from err


def _check_file(p: Path, what: str, missing: str | None) -> None:
    shown = repr(str(p))
    kind = _stat_kind(p, what)
    if kind == "dir":
        raise InputFileError(
            f"{what} {shown} is a directory, expected a file; pass the file inside it."
        )
    if kind == "missing":
        if missing is not None:
            raise InputFileError(missing.format(path=shown))
        raise InputFileError(f"{what} {shown} does not exist; check the path.")
    if kind != "file":
        raise InputFileError(f"{what} {shown} is not a regular file; pass a file.")


def read_bytes(
    path: str | os.PathLike,
    what: str = "Input file",
    *,
    gz: bool = False,
    missing: str | None = None,
) -> bytes:
    """Return the bytes of a file (decompressed when ``gz``).

    Args:
        path: the file.
        what: what the file is, for messages ("Dictionary data file").
        gz: the file is gzip (dictd ``.dict.dz`` is gzip-readable).
        missing: message when the file does not exist (``{path}`` is filled in).

    Raises:
        InputFileError: missing, a directory, unreadable, or not gzip when ``gz``.
    """
    p = Path(path)
    _check_file(p, what, missing)
    shown = repr(str(p))
    try:
        data = p.read_bytes()
    except OSError as err:
        raise InputFileError(
            f"Cannot read {what.lower()} {shown} ({err.strerror}); check its permissions."
        ) from err
    if not gz:
        return data
    if not data.startswith(_GZIP_MAGIC):
        raise InputFileError(
            f"{what} {shown} is not gzip data (it does not start with the gzip magic bytes); "
            f"pass the gzip file or decompress it and pass the plain file."
        )
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as err:
        raise InputFileError(
            f"{what} {shown} is a damaged or truncated gzip file ({err}); download or copy it again."
        ) from err


def decode_utf8(data: bytes, path: str | os.PathLike, invalid: str = INVALID) -> str:
    r"""Decode UTF-8 bytes (a leading BOM is dropped); the error names the line and byte.

    >>> decode_utf8(b"\xef\xbb\xbfa\nb", "x.txt")
    'a\nb'

    Raises:
        InputFileError: the bytes are not UTF-8.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputFileError(
            invalid.format(path=repr(str(path)), byte=err.start, line=line)
        ) from err


def read_text(
    path: str | os.PathLike,
    what: str = "Input file",
    *,
    gz: bool = False,
    missing: str | None = None,
    invalid: str = INVALID,
) -> str:
    """Read a UTF-8 text file (BOM tolerated; gzip when ``gz``).

    Raises:
        InputFileError: missing, a directory, unreadable, not gzip, or not UTF-8.
    """
    return decode_utf8(read_bytes(path, what, gz=gz, missing=missing), path, invalid)


def read_lines(
    path: str | os.PathLike,
    *,
    missing: str | None = MISSING,
    invalid: str = INVALID,
    what: str = "Input file",
    gz: bool = False,
) -> list[str]:
    """Read a UTF-8 text file (BOM tolerated) into lines without newlines.

    Args:
        path: the file.
        missing: message when ``path`` does not exist (``{path}`` is filled in).
        invalid: message for invalid UTF-8 (``{path}``, ``{line}`` and ``{byte}`` are filled in).
        what: what the file is, for the other messages.
        gz: the file is gzip-compressed.

    Raises:
        InputFileError: missing file, a directory, unreadable, not gzip, invalid UTF-8, or a
            line longer than :data:`MAX_LINE_CHARS`.
    """
    lines = split_lines(read_text(path, what, gz=gz, missing=missing, invalid=invalid))
    check_line_lengths(lines, path, what)
    return lines
