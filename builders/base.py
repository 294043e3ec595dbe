"""What a builder returns, and helpers every builder uses (hashing inputs, progress)."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from evaluators.errors import InputFileError
from evaluators.schema.meta import InputRecord, ModelRecord

Rows = list[Mapping[str, Any]] | pa.Table


@dataclass
class BuildResult:
    """Everything a builder produced, before it is written.

    Attributes:
        tables: ``config -> split -> rows``.
        parameters: every parameter that shaped the rows (go into manifest and card).
        inputs: pinned inputs (files with sha256, package resources).
        models: models / engines / dictionaries with their revisions.
        counts: per-stage counts: ``{"stage": {"in": n, "kept": n, "dropped": {reason: n}}}``.
        construction: numbered steps for the card's "how it was built" section.
        limitations: known limitations for the card.
        license: SPDX id (or Hub license id) of the produced data.
        name: dataset name (default: ``xlbench-<family>``).
        exports: ``final path -> staged path`` of side files (e.g. ``silver --export``), moved into
            place by :func:`builders.artifact.write_dataset` only after the dataset folder is.
    """

    tables: dict[str, dict[str, Rows]]
    parameters: dict[str, Any] = field(default_factory=dict)
    inputs: list[InputRecord] = field(default_factory=list)
    models: list[ModelRecord] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    construction: list[str] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    license: str = "cc-by-sa-4.0"
    name: str | None = None
    exports: dict[str, str] = field(default_factory=dict)


def sha256_file(path: str | os.PathLike) -> str:
    """Return the sha256 hex digest of a file.

    Raises:
        InputFileError: the file does not exist or cannot be read.
    """
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"Input file {str(p)!r} does not exist; check the path.")
    digest = hashlib.sha256()
    try:
        with p.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as err:
        raise InputFileError(f"Cannot read {str(p)!r} ({err.strerror}); check its permissions.") from err
    return digest.hexdigest()


def sha256_text(lines: Iterable[str]) -> str:
    """Return the sha256 of lines joined by newlines.

    >>> sha256_text(["a", "b"])[:12]
    '911169ddaaf1'
    """
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def file_input(name: str, path: str | os.PathLike) -> InputRecord:
    """Pin a local file as a build input."""
    return InputRecord(name=name, origin=f"file:{Path(path).name}", sha256=sha256_file(path))


def progress(iterable=None, **kwargs):
    """Return a tqdm progress bar on stderr, silenced when stderr is not a terminal and XLBENCH_PROGRESS is unset."""
    from tqdm.auto import tqdm

    disable = kwargs.pop("disable", None)
    if disable is None:
        disable = not (sys.stderr.isatty() or os.environ.get("XLBENCH_PROGRESS") == "1")
    return tqdm(iterable, file=sys.stderr, disable=disable, **kwargs)
