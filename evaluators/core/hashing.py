"""sha256 of files and folders: the one implementation every pin and revision uses.

Builders pin their input files with it (``manifest.json``), evaluators use it as the
revision of local files, folders and models (the ``@<hash>`` of a signature), so the
byte layout of each digest below is part of the published numbers: changing it
changes every signature made from a local file. Files are read in 1 MiB blocks.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from evaluators.core.errors import InputFileError

#: Read size: large enough to be fast on big files (the 218 MB Bible DB), small enough for memory.
BLOCK = 1 << 20


def _update_from(digest: hashlib._Hash, path: Path, *also: hashlib._Hash) -> int:
    size = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(BLOCK), b""):
            digest.update(block)
            for other in also:
                other.update(block)
            size += len(block)
    return size


def sha256_file_size(path: str | os.PathLike) -> tuple[str, int]:
    """Return ``(sha256 hex digest, size in bytes)`` of a file.

    Raises:
        InputFileError: the file does not exist or cannot be read.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"; _ = p.write_bytes(b"abc")
    >>> sha256_file_size(p)
    ('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 3)
    >>> sha256_file_size(p.parent / "missing.txt")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.InputFileError: Input file '...missing.txt' does not exist; check the path.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"Input file {str(p)!r} does not exist; check the path.")
    digest = hashlib.sha256()
    try:
        size = _update_from(digest, p)
    except OSError as err:
        raise InputFileError(
            f"Cannot read {str(p)!r} ({err.strerror}); check its permissions."
        ) from err
    return digest.hexdigest(), size


def sha256_file(path: str | os.PathLike) -> str:
    """Return the sha256 hex digest of a file's bytes.

    Raises:
        InputFileError: the file does not exist or cannot be read.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"; _ = p.write_bytes(b"abc")
    >>> sha256_file(p)[:12]
    'ba7816bf8f01'
    """
    return sha256_file_size(path)[0]


def sha256_file_or_none(path: str | os.PathLike) -> str | None:
    """Return the sha256 of a file, or ``None`` when it is missing or unreadable.

    >>> sha256_file_or_none("/no/such/file") is None
    True
    """
    try:
        return sha256_file(path)
    except InputFileError:
        return None


def sha256_tree(
    root: str | os.PathLike, files: Iterable[str | os.PathLike], *, end_marker: bool = False
) -> str:
    """Return the sha256 over ``files`` of ``root``, in the order given: relative path, NUL, bytes.

    Args:
        root: the folder the paths are made relative to (the path goes into the digest, so a
            renamed file changes it and the same folder copied elsewhere does not).
        files: files under ``root``; missing ones are skipped.
        end_marker: also write a NUL after each file's bytes (the layout of model-folder
            revisions, :func:`evaluators.encoders.hf.folder_hash`; built datasets have none).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("x")
    >>> sha256_tree(d, [d / "a.txt"]) == sha256_tree(d, [d / "a.txt", d / "missing"])
    True
    >>> sha256_tree(d, [d / "a.txt"]) == sha256_tree(d, [d / "a.txt"], end_marker=True)
    False
    """
    digest = hashlib.sha256()
    update_tree(digest, root, files, end_marker=end_marker)
    return digest.hexdigest()


def update_tree(
    digest: hashlib._Hash,
    root: str | os.PathLike,
    files: Iterable[str | os.PathLike],
    *,
    end_marker: bool = False,
) -> dict[str, tuple[str, int]]:
    """Feed ``files`` of ``root`` into ``digest`` in the layout of :func:`sha256_tree` (for digests with a header).

    Returns:
        ``relative posix path -> (sha256, size)`` of each file fed, from the same single read
        (what a built folder's ``manifest.json`` records per data file).
    """
    base = Path(root)
    seen: dict[str, tuple[str, int]] = {}
    for file in map(Path, files):
        if not file.is_file():
            continue
        rel = file.relative_to(base).as_posix()
        digest.update(rel.encode("utf-8") + b"\0")
        own = hashlib.sha256()
        size = _update_from(digest, file, own)
        seen[rel] = (own.hexdigest(), size)
        if end_marker:
            digest.update(b"\0")
    return seen
