"""A built dataset folder, verified: THE check every local read and ``xlbench validate`` share.

A folder promises, in its card (``README.md``) and ``manifest.json``, which data files it
holds, how many rows each has, their sha256 and sizes, and how it was built.
:func:`open_folder` checks those promises once (layout, links, listing, counts, digests, the
build signature), computing the content id from the same single read of every file.
:meth:`BuiltFolder.read` then reads a split's bytes, checks them against the digest taken
at open (an edit made after opening is refused, never scored under the old id) and against
the family's schema (columns, types, nulls, unique keys, references between tables).

Reading the verified bytes directly, rather than through ``datasets.load_dataset``, is
what keeps an edited folder from being scored stale: ``datasets`` caches a local folder
under a key that does not change when a data file is rewritten in place.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluators.core.errors import InputFileError, SchemaError
from evaluators.data.cardio import card_splits, check_parquet, read_card
from evaluators.data.dsref import content_digests
from evaluators.schema import get_family
from evaluators.schema.base import check_no_nulls, check_unique, data_file, to_arrow
from evaluators.schema.meta import Manifest, check_version

if TYPE_CHECKING:
    import pyarrow as pa

    from evaluators.schema.base import FamilySchema

CARD, MANIFEST = "README.md", "manifest.json"
_REBUILD = "rebuild the folder with 'xlbench build'"


@dataclass
class BuiltFolder:
    """A built folder whose promises were checked by :func:`open_folder`.

    Attributes:
        root: the folder.
        card: the card's YAML front matter.
        manifest: ``manifest.json`` as read (``None`` when absent and not required).
        family: the dataset family's schema (``None`` when the card names none).
        splits: ``config -> split -> data file`` (relative posix path).
        rows: ``config -> split -> rows`` (parquet footers).
        digests: ``data file -> (sha256, size)`` taken at open.
        content_id: the folder's revision (:func:`evaluators.data.dsref.content_id`).
    """

    root: Path
    card: dict[str, Any]
    manifest: dict[str, Any] | None
    family: FamilySchema | None
    splits: dict[str, dict[str, str]]
    rows: dict[str, dict[str, int]]
    digests: dict[str, tuple[str, int]]
    content_id: str
    _tables: dict[tuple[str, str], pa.Table] = field(default_factory=dict, repr=False)

    def read(self, config: str, split: str) -> pa.Table:
        """Read one split: the bytes verified at open, checked against the family schema.

        Raises:
            InputFileError: the file vanished, changed since the folder was opened, or is damaged.
            SchemaError: columns, types, nulls, duplicate keys or a reference to a missing row.
        """
        key = (config, split)
        if key not in self._tables:
            self._tables[key] = self._read(config, split)
        return self._tables[key]

    def _read(self, config: str, split: str) -> pa.Table:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rel = self.splits[config][split]
        try:
            raw = (self.root / rel).read_bytes()
        except OSError as err:
            raise InputFileError(
                f"Cannot read {rel} of {self.root} ({err.strerror}); the folder changed while in use: "
                f"{_REBUILD}."
            ) from err
        if hashlib.sha256(raw).hexdigest() != self.digests[rel][0]:
            raise InputFileError(
                f"{rel} of {self.root} changed after the folder was opened (its content id no longer "
                f"matches); run the command again once nothing writes to the folder."
            )
        try:
            data = pq.read_table(pa.BufferReader(raw))
        except (pa.ArrowException, OSError, ValueError) as err:
            raise InputFileError(
                f"{rel} of {self.root} is not a readable parquet file ({' '.join(str(err).split())[:120]}); "
                f"the dataset is damaged: {_REBUILD}."
            ) from err
        if self.family is None:
            return data
        where = f"config {config}/{split}"
        subset, table = self.family.split_config(config)
        data = to_arrow(data, table, where)
        check_rows(data, self.family, config, split)
        for column, suffix in table.refers_to:
            self._check_refs(data, column, self.family.config_name(subset, suffix), split, where)
        return data

    def _check_refs(self, data: pa.Table, column: str, target: str, split: str, where: str) -> None:
        """Every value of ``column`` is an ``id`` of ``target``'s same split."""
        if split not in self.splits.get(target, {}):
            raise SchemaError(
                f"{where}: {column} refers to {target}/{split}, which the card does not list; {_REBUILD}."
            )
        ids = set(self.read(target, split).column("id").to_pylist())
        for value in data.column(column).to_pylist():
            if value not in ids:
                raise SchemaError(
                    f"{where}: {column} {value!r:.60} names no row of {target}/{split}; {_REBUILD}."
                )


def check_rows(data: pa.Table, family: FamilySchema, config: str, split: str) -> None:
    """The row checks of every read (local or Hub): no null cell (but in optional columns), unique keys.

    Raises:
        SchemaError: a null cell or a duplicate key, naming the config and split.
    """
    where = f"config {config}/{split}"
    table = family.split_config(config)[1]
    check_no_nulls(data, where, nullable=table.optional)
    check_unique(data, table, where)


def open_folder(folder: str | os.PathLike, *, strict: bool = False) -> BuiltFolder:
    """Open a built folder and check what its card and manifest promise (THE check; see module doc).

    Args:
        folder: the folder written by ``xlbench build``.
        strict: also require a complete ``manifest.json`` with data-file digests (``xlbench
            validate``, publish); without it a folder from an older build is read with the checks
            its manifest allows.

    Raises:
        InputFileError: a link, a path leaving the folder, a missing or damaged data file, a file
            that is not the one the manifest records.
        SchemaError: the card, manifest and files disagree (configs, splits, counts, sizes,
            build signature), or the manifest does not parse.
    """
    root = Path(folder).expanduser()
    _refuse_links(root)
    card = read_card(root)
    splits, infos = card_splits(card)
    if not splits:
        raise SchemaError(f"README.md of {root} lists no configs; {_REBUILD}.")
    manifest = _read_manifest(root, strict)
    family = _family(card, manifest)
    _check_layout(root, splits, family)
    content, digests = content_digests(root)
    rows = {c: {s: check_parquet(root / rel) for s, rel in sp.items()} for c, sp in splits.items()}
    _check_counts(rows, infos, manifest, strict)
    if manifest is not None:
        _check_manifest(manifest, card, splits, digests, infos, strict)
    return BuiltFolder(root, card, manifest, family, splits, rows, digests, content)


def _refuse_links(root: Path) -> None:
    """A folder holds its own files: a symbolic link (to an edited copy elsewhere) is refused."""
    entries = [root / CARD, root / MANIFEST, root / "data"]
    data = root / "data"
    if data.is_dir() and not data.is_symlink():
        for top, dirs, files in os.walk(data):
            entries += [Path(top) / n for n in dirs + files]
    for path in entries:
        if path.is_symlink():
            raise InputFileError(
                f"{path.relative_to(root).as_posix()} in {root} is a symbolic link; a dataset folder must hold "
                f"its own files: replace the link by the file, or {_REBUILD}."
            )


def _read_manifest(root: Path, strict: bool) -> dict[str, Any] | None:
    """``manifest.json`` as a dict, checked by :meth:`Manifest.from_dict`; ``None`` when absent and not strict."""
    path = root / MANIFEST
    if not path.is_file():
        if strict:
            raise SchemaError(f"{root}: manifest.json is missing; {_REBUILD}.")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise SchemaError(
            f"manifest.json of {root} does not parse as JSON ({getattr(err, 'msg', err)}); {_REBUILD}."
        ) from err
    if not isinstance(data, dict):
        raise SchemaError(f"manifest.json of {root} is not a JSON object; {_REBUILD}.")
    try:
        parsed = Manifest.from_dict(data)
    except (TypeError, ValueError, AttributeError) as err:  # a record of the wrong shape
        raise SchemaError(
            f"manifest.json of {root} is malformed ({str(err)[:100]}); {_REBUILD}."
        ) from err
    check_version(parsed.version)
    get_family(parsed.family)
    if strict:
        lacking = sorted({*Manifest.__dataclass_fields__, "build_signature"} - set(data))
        if lacking:
            raise SchemaError(f"manifest.json lacks {lacking}; {_REBUILD}.")
        if not parsed.configs:
            raise SchemaError(f"manifest.json lists no configs; {_REBUILD}.")
    return data


def _xlbench(card: dict[str, Any]) -> dict[str, Any]:
    """The card's ``xlbench`` block (empty when absent or not a mapping)."""
    block = card.get("xlbench")
    return block if isinstance(block, dict) else {}


def _family(card: dict[str, Any], manifest: dict[str, Any] | None) -> FamilySchema | None:
    xl = _xlbench(card)
    if manifest is not None:
        if xl.get("version") != manifest["version"] or xl.get("family") != manifest["family"]:
            raise SchemaError(
                f"README.md says {xl.get('family')!r} v{xl.get('version')} but manifest.json says "
                f"{manifest['family']!r} v{manifest['version']}; {_REBUILD}."
            )
        return get_family(manifest["family"])
    return get_family(xl["family"]) if xl.get("family") else None


def _check_layout(
    root: Path, splits: dict[str, dict[str, str]], family: FamilySchema | None
) -> None:
    """Every data file is where a build puts it, inside the folder, present, and listed."""
    for config, files in sorted(splits.items()):
        table = family.split_config(config)[1] if family else None
        for split, rel in sorted(files.items()):
            if table is not None and split not in table.splits:
                raise SchemaError(
                    f"config {config}: split {split!r} is not one of {list(table.splits)}."
                )
            if rel != data_file(config, split):
                raise SchemaError(
                    f"config {config}/{split}: data file {rel!r} should be {data_file(config, split)!r} "
                    f"(a built folder reads only its own files); {_REBUILD}."
                )
            if not (root / rel).is_file():
                raise InputFileError(
                    f"config {config}/{split}: data file {rel} of {root} is missing; the folder is incomplete: "
                    f"{_REBUILD}."
                )
    on_disk = sorted(p.relative_to(root).as_posix() for p in (root / "data").rglob("*.parquet"))
    listed = {rel for files in splits.values() for rel in files.values()}
    unlisted = [p for p in on_disk if p not in listed]
    if unlisted:
        raise SchemaError(
            f"{unlisted[0]} is not listed in the card's configs; delete it or rebuild the folder."
        )


def _num_examples(infos: dict[str, dict[Any, Any]], config: str, split: str) -> Any:
    info = infos.get(config, {}).get(split)
    return info.get("num_examples") if isinstance(info, dict) else None


def _check_counts(
    rows: dict[str, dict[str, int]], infos: dict, manifest: dict[str, Any] | None, strict: bool
) -> None:
    """The card's (and the manifest's) row counts are the files' row counts.

    Not strict, a card that declares no count (a folder made by hand) promises none.
    """
    listed = (manifest or {}).get("configs") or {}
    for config, splits in sorted(rows.items()):
        for split, n in sorted(splits.items()):
            rel = data_file(config, split)
            declared = _num_examples(infos, config, split)
            if declared != n and (strict or declared is not None):
                raise SchemaError(
                    f"config {config}/{split}: the card says num_examples={declared} but {rel} has {n} rows."
                )
            if manifest is not None and (listed.get(config) or {}).get(split) != n:
                raise SchemaError(
                    f"config {config}/{split}: manifest.json says {(listed.get(config) or {}).get(split)} rows "
                    f"but {rel} has {n}."
                )
    if manifest is not None and sorted(listed) != sorted(rows):
        raise SchemaError(
            f"configs differ between README.md and manifest.json (card only: {sorted(set(rows) - set(listed))}, "
            f"manifest only: {sorted(set(listed) - set(rows))})."
        )
    for config in sorted(listed):
        if sorted(listed[config]) != sorted(rows[config]):
            raise SchemaError(
                f"config {config}: splits differ between README.md {sorted(rows[config])} and manifest.json "
                f"{sorted(listed[config])}."
            )


def _check_manifest(
    manifest: dict[str, Any],
    card: dict[str, Any],
    splits: dict[str, dict[str, str]],
    digests: dict[str, tuple[str, int]],
    infos: dict,
    strict: bool,
) -> None:
    """The data files are those the manifest records; the manifest is the one the build signed."""
    recorded = manifest.get("files") or {}
    if not recorded and strict:
        raise SchemaError(
            f"manifest.json records no data-file digests (a folder from an older xlbench); {_REBUILD}."
        )
    if recorded:
        _check_digests(recorded, splits, digests, infos)
        _check_sizes(card, splits, digests, recorded)
    signed = manifest.get("build_signature")
    # compared as a set of parts: manifest.json sorts its keys, so key_params lose their order
    if signed is not None and _parts(Manifest.from_dict(manifest).build_signature()) != _parts(
        signed
    ):
        raise SchemaError(
            f"manifest.json was edited after the build: its parameters, inputs or models no longer give its "
            f"build signature {str(signed)[:80]!r}; {_REBUILD}."
        )
    xl = _xlbench(card)
    if signed is not None and xl.get("build_signature") not in (None, signed):
        raise SchemaError(
            f"README.md's build signature {str(xl.get('build_signature'))[:80]!r} is not manifest.json's; {_REBUILD}."
        )


def _parts(signature: Any) -> list[str]:
    """The ``|``-separated parts of a build signature, sorted.

    >>> _parts("cbd|seed:13|a:1") == _parts("cbd|a:1|seed:13")
    True
    """
    return sorted(str(signature).split("|"))


def _check_digests(recorded: dict, splits: dict, digests: dict, infos: dict) -> None:
    """Each data file's sha256 and size are the manifest's; the card's sizes are the manifest's."""
    listed = {rel: (c, s) for c, files in splits.items() for s, rel in files.items()}
    if sorted(recorded) != sorted(listed):
        raise SchemaError(
            f"manifest.json records the data files {sorted(recorded)[:4]} but the card lists "
            f"{sorted(listed)[:4]}; {_REBUILD}."
        )
    for rel, (config, split) in sorted(listed.items()):
        want = recorded[rel] if isinstance(recorded[rel], dict) else {}
        sha, size = digests[rel]
        if want.get("sha256") != sha or want.get("bytes") != size:
            raise SchemaError(
                f"{rel} is not the file manifest.json records (sha256 {sha[:12]}, expected "
                f"{str(want.get('sha256'))[:12]}): the folder was changed after it was built; {_REBUILD}."
            )
        info = infos.get(config, {}).get(split) or {}
        if info.get("num_bytes") != want.get("num_bytes"):
            raise SchemaError(
                f"config {config}/{split}: the card says num_bytes={info.get('num_bytes')} but manifest.json "
                f"records {want.get('num_bytes')}; {_REBUILD}."
            )


def _check_sizes(card: dict[str, Any], splits: dict, digests: dict, recorded: dict) -> None:
    """Each config's ``download_size`` (file bytes) and ``dataset_size`` (Arrow bytes) on the card are the files'."""
    for info in card.get("dataset_info") or []:
        config = info.get("config_name") if isinstance(info, dict) else None
        if config not in splits:
            continue
        files = list(splits[config].values())
        sizes = {
            "download_size": sum(digests[rel][1] for rel in files),
            "dataset_size": sum(recorded[rel].get("num_bytes") or 0 for rel in files),
        }
        for name, value in sizes.items():
            if info.get(name) != value:
                raise SchemaError(
                    f"config {config}: the card says {name}={info.get(name)} but the data files give {value}; "
                    f"{_REBUILD}."
                )
