"""Check a built dataset folder before it is published (``xlbench validate``).

A folder passes when its card's YAML parses and agrees with the parquet files
(configs, splits, ``num_examples``), ``manifest.json`` is complete and agrees
with both, no config is empty, ids are unique per split and the splits that
must be disjoint are, and the card passes the Hub's local metadata checks and
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
import pyarrow.parquet as pq

from builders.release.artifact import check_disjoint
from builders.release.card import check_card, check_card_body, split_file
from evaluators.core.errors import InputFileError, SchemaError, ValidationError
from evaluators.data.cardio import parse_card_yaml
from evaluators.data.textio import read_text
from evaluators.schema import get_family
from evaluators.schema.base import check_unique, to_arrow
from evaluators.schema.meta import Manifest, check_version

#: Files of a built folder that are published (besides ``data/**/*.parquet``).
CARD, MANIFEST = "README.md", "manifest.json"


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


def _read_manifest(root: Path) -> Manifest:
    path = root / MANIFEST
    if not path.is_file():
        raise _fail(f"{root}: manifest.json is missing; rebuild the folder with 'xlbench build'.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise _fail(
            f"manifest.json does not parse as JSON ({err.msg}, line {err.lineno}); rebuild the folder."
        ) from err
    if not isinstance(data, dict):
        raise _fail("manifest.json is not a JSON object; rebuild the folder.")
    try:
        manifest = Manifest.from_dict(data)
        check_version(manifest.version)
        get_family(manifest.family)
    except SchemaError as err:
        raise _fail(str(err)) from err
    if not manifest.configs:
        raise _fail("manifest.json lists no configs; rebuild the folder with 'xlbench build'.")
    return manifest


def _card_splits(
    card: dict[str, Any],
) -> tuple[dict[str, dict[str, str]], dict[str, dict[Any, Any]]]:
    """Return ``config -> split -> path`` from ``configs`` and ``config -> split -> num_examples``."""
    files: dict[str, dict[str, str]] = {}
    for cfg in card.get("configs") or []:
        if not isinstance(cfg, dict) or "config_name" not in cfg:
            raise _fail(f"README.md: a 'configs' entry has no config_name ({str(cfg)[:60]}).")
        entries = cfg.get("data_files")
        if not isinstance(entries, list) or not entries:
            raise _fail(f"README.md: config {cfg['config_name']} lists no data_files.")
        files[cfg["config_name"]] = {}
        for entry in entries:
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("path"), str)
                or "split" not in entry
            ):
                raise _fail(
                    f"README.md: config {cfg['config_name']} has a data_files entry without split/path."
                )
            files[cfg["config_name"]][entry["split"]] = entry["path"]
    # Values as the card's YAML has them (a hand-edited card may lack a name or a count).
    counts: dict[str, dict[Any, Any]] = {}
    for info in card.get("dataset_info") or []:
        if isinstance(info, dict) and "config_name" in info:
            counts[info["config_name"]] = {
                s.get("name"): s.get("num_examples")
                for s in info.get("splits") or []
                if isinstance(s, dict)
            }
    return files, counts


def validate_folder(folder: str | os.PathLike) -> FolderReport:
    """Validate a built dataset folder and return what it holds.

    Raises:
        ValidationError: the first failed check, naming the config and the problem.
    """
    root = Path(folder).expanduser()
    text, card = _read_card(root)
    manifest = _read_manifest(root)
    family = get_family(manifest.family)
    xl = card.get("xlbench") or {}
    if xl.get("version") != manifest.version or xl.get("family") != manifest.family:
        raise _fail(
            f"README.md says {xl.get('family')!r} v{xl.get('version')} but manifest.json says "
            f"{manifest.family!r} v{manifest.version}; rebuild the folder."
        )
    card_files, card_counts = _card_splits(card)
    listed = _check_listing(root, card_files, manifest)
    configs: dict[str, dict[str, int]] = {}
    digests: dict[str, dict[str, str]] = {}
    for config in sorted(card_files):
        tables = _read_config(root, config, card_files[config], card_counts, manifest, family)
        configs[config] = {s: t.num_rows for s, t in tables.items()}
        digests[config] = {s: table_digest(t) for s, t in tables.items()}
    # The card as a Hub user sees it: metadata the Hub accepts, and a body that documents the data.
    try:
        check_card(text)
        check_card_body(text, family, sorted(configs))
    except SchemaError as err:
        raise _fail(str(err)) from err
    return FolderReport(
        folder=root,
        family=manifest.family,
        version=manifest.version,
        name=manifest.name,
        configs=configs,
        digests=digests,
        files=sorted([CARD, MANIFEST, *listed]),
        manifest=manifest,
        card=card,
    )


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


def _check_listing(root: Path, card_files: dict, manifest: Manifest) -> list[str]:
    """The card lists every data file on disk and the manifest's configs; return the listed files."""
    if not card_files:
        raise _fail("README.md lists no configs; rebuild the folder with 'xlbench build'.")
    on_disk = (
        sorted(p.relative_to(root).as_posix() for p in (root / "data").rglob("*.parquet"))
        if (root / "data").is_dir()
        else []
    )
    listed = sorted(p for splits in card_files.values() for p in splits.values())
    unlisted = sorted(set(on_disk) - set(listed))
    if unlisted:
        raise _fail(
            f"{unlisted[0]} is not listed in the card's configs; delete it or rebuild the folder."
        )
    if sorted(card_files) != sorted(manifest.configs):
        only_card = sorted(set(card_files) - set(manifest.configs))
        only_manifest = sorted(set(manifest.configs) - set(card_files))
        raise _fail(
            f"configs differ between README.md and manifest.json (card only: {only_card}, manifest only: {only_manifest})."
        )
    return listed


def _read_config(
    root: Path, config: str, files: dict, card_counts: dict, manifest: Manifest, family
) -> dict[str, pa.Table]:
    """Read and check every split of one config: schema, unique ids, counts, disjoint splits."""
    try:
        _, table = family.split_config(config)
    except SchemaError as err:
        raise _fail(f"config {config}: {err}") from err
    tables: dict[str, pa.Table] = {}
    for split, rel in sorted(files.items()):
        tables[split] = _read_split(root, config, split, rel, table, card_counts, manifest)
    if sorted(manifest.configs[config]) != sorted(tables):
        raise _fail(
            f"config {config}: splits differ between README.md {sorted(tables)} and manifest.json {sorted(manifest.configs[config])}."
        )
    if not any(t.num_rows for t in tables.values()):
        raise _fail(f"config {config} is empty (0 rows in every split); drop it or rebuild.")
    if family.disjoint_column and table is family.main:
        try:
            check_disjoint(tables, family.disjoint_column, config)
        except SchemaError as err:
            raise _fail(str(err)) from err
    return tables


def _read_split(
    root: Path, config: str, split: str, rel: str, table, card_counts: dict, manifest: Manifest
) -> pa.Table:
    """Read one split's parquet file and check it against the schema, the card and the manifest."""
    if split not in table.splits:
        raise _fail(f"config {config}: split {split!r} is not one of {list(table.splits)}.")
    if rel != split_file(config, split):
        raise _fail(
            f"config {config}/{split}: data file {rel!r} should be {split_file(config, split)!r}."
        )
    path = root / rel
    if not path.is_file():
        raise _fail(f"config {config}/{split}: data file {rel} is missing.")
    try:
        data = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise _fail(
            f"config {config}/{split}: {rel} is not a readable parquet file ({str(err)[:80]})."
        ) from err
    where = f"config {config}/{split}"
    try:
        data = to_arrow(data, table, where)
        check_unique(data, table, where)
    except SchemaError as err:
        raise _fail(str(err)) from err
    declared = card_counts.get(config, {}).get(split)
    if declared != data.num_rows:
        raise _fail(
            f"config {config}/{split}: the card says num_examples={declared} but {rel} has {data.num_rows} rows."
        )
    if manifest.configs[config].get(split) != data.num_rows:
        raise _fail(
            f"config {config}/{split}: manifest.json says {manifest.configs[config].get(split)} rows "
            f"but {rel} has {data.num_rows}."
        )
    return data
