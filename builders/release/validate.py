"""Check a built dataset folder before it is published (``xlbench validate``).

A folder passes when it keeps every promise its card and ``manifest.json`` make
(:mod:`evaluators.data.folder`, the same check every ``xlbench eval`` of a folder
runs: no links, files where a build puts them, row counts, sizes and sha256 of
every data file, the build signature, the family schema with no nulls, unique ids
and gold pairs naming existing rows), no config is empty, the splits that must be
disjoint are, and the card passes the Hub's local metadata checks and
documents the data (field tables, one example per config, statistics, citation;
see :func:`builders.release.card.check_card`). Every failure names the config (or file) and the problem.

The row digest (:func:`table_digest`) is what ``xlbench publish`` compares
after loading a published revision back with ``datasets``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from builders.release.artifact import check_disjoint
from builders.release.card import check_card, check_card_body
from evaluators.core.errors import InputFileError, SchemaError, ValidationError
from evaluators.data.cardio import parse_card_yaml
from evaluators.data.folder import CARD, MANIFEST, open_folder
from evaluators.data.textio import read_text
from evaluators.schema import get_family
from evaluators.schema.meta import Manifest


@dataclass
class FolderReport:
    """What validation found in a folder that passed.

    Attributes:
        folder: the folder.
        family: dataset family from the manifest.
        version: semantic version from the manifest.
        name: dataset name from the manifest.
        configs: ``config -> split -> rows``.
        digests: ``config -> split -> row digest`` (see :func:`table_digest`).
        files: published files, relative posix paths, sorted.
        manifest: the parsed manifest.
        card: the card's YAML front matter.
    """

    folder: Path
    family: str
    version: str
    name: str
    configs: dict[str, dict[str, int]]
    digests: dict[str, dict[str, str]]
    files: list[str]
    manifest: Manifest = field(repr=False)
    card: dict[str, Any] = field(repr=False)

    def summary(self) -> dict[str, Any]:
        """Return the JSON-ready summary printed by ``xlbench validate``."""
        return {
            "folder": str(self.folder),
            "name": self.name,
            "family": self.family,
            "version": self.version,
            "configs": self.configs,
            "rows": sum(sum(s.values()) for s in self.configs.values()),
            "digests": self.digests,
            "files": self.files,
        }


def table_digest(table: pa.Table) -> str:
    """Return a sha256 over a table's rows in order (column names included, types as JSON).

    Two tables with equal rows give equal digests whatever their chunking or
    file encoding, so a local parquet file and the same split loaded back with
    ``datasets`` can be compared.

    >>> t = pa.table({"id": ["a", "b"], "n": [1, 2]})
    >>> table_digest(t) == table_digest(pa.concat_tables([t.slice(0, 1), t.slice(1)]))
    True
    >>> table_digest(t) == table_digest(t.slice(0, 1))
    False
    """
    digest = hashlib.sha256()
    digest.update(json.dumps(table.column_names).encode())
    for batch in table.to_batches(max_chunksize=4096):
        for row in batch.to_pylist():
            digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode())
            digest.update(b"\n")
    return digest.hexdigest()


def _fail(message: str) -> ValidationError:
    return ValidationError(message)


def validate_folder(folder: str | os.PathLike) -> FolderReport:
    """Validate a built dataset folder and return what it holds.

    The checks of the folder's promises (links, layout, counts, sizes, digests, signature, schema,
    references) are :func:`evaluators.data.folder.open_folder` and :meth:`BuiltFolder.read`, the
    ones every ``xlbench eval`` of a folder runs; validation adds what publishing needs: every
    split read, no empty config, disjoint splits, and a card that documents the data.

    Raises:
        ValidationError: the first failed check, naming the config and the problem.
    """
    root = Path(folder).expanduser()
    text, _ = _read_card(root)
    try:
        built = open_folder(root, strict=True)
        family = get_family(
            built.card["xlbench"]["family"]
        )  # strict: card and manifest agree on it
        manifest = Manifest.from_dict(built.manifest or {})
        configs: dict[str, dict[str, int]] = {}
        digests: dict[str, dict[str, str]] = {}
        for config in sorted(built.splits):
            tables = {s: built.read(config, s) for s in sorted(built.splits[config])}
            _check_config(config, tables, family)
            configs[config] = {s: t.num_rows for s, t in tables.items()}
            digests[config] = {s: table_digest(t) for s, t in tables.items()}
        # The card as a Hub user sees it: metadata the Hub accepts, and a body that documents the data.
        check_card(text)
        check_card_body(text, family, sorted(configs))
    except (SchemaError, InputFileError) as err:
        raise _fail(str(err)) from err
    listed = [rel for files in built.splits.values() for rel in files.values()]
    return FolderReport(
        folder=root,
        family=manifest.family,
        version=manifest.version,
        name=manifest.name,
        configs=configs,
        digests=digests,
        files=sorted([CARD, MANIFEST, *listed]),
        manifest=manifest,
        card=built.card,
    )


def _check_config(config: str, tables: dict[str, pa.Table], family) -> None:
    """What publishing adds to a read: no empty config, splits disjoint where the family says so."""
    if not any(t.num_rows for t in tables.values()):
        raise _fail(f"config {config} is empty (0 rows in every split); drop it or rebuild.")
    if family.disjoint_column and family.split_config(config)[1] is family.main:
        check_disjoint(tables, family.disjoint_column, config)


def _read_card(root: Path) -> tuple[str, dict]:
    """The card's text and parsed metadata; a path that is no built folder is a usage error."""
    # Not a dataset folder at all is a usage error (exit 2); a damaged one fails the check (exit 1).
    if not root.exists():
        raise InputFileError(
            f"{str(root)!r} is not a folder; pass the output folder of 'xlbench build' (nothing exists there)."
        )
    if not root.is_dir():
        raise InputFileError(
            f"{str(root)!r} is not a folder; pass the output folder of 'xlbench build'."
        )
    if not (root / CARD).is_file():
        raise InputFileError(
            f"{root}: README.md (the dataset card) is missing, so this is not a built dataset folder; "
            f"pass the output folder of 'xlbench build' (or rebuild it)."
        )
    try:
        text = read_text(root / CARD, "Dataset card")
    except InputFileError as err:
        raise _fail(str(err)) from err
    try:
        card = parse_card_yaml(text)
    except SchemaError as err:
        raise _fail(f"README.md: {err}") from err
    return text, card
