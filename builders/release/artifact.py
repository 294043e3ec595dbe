"""Write a built dataset as a folder shaped exactly like a Hub dataset repo.

```
README.md                                   card: YAML front matter + body
data/<config>/<split>-00000-of-00001.parquet
manifest.json                               how it was built
```

The folder is written to a temporary sibling and renamed into place, so an
interrupted build never leaves a folder that looks complete. Parquet files are
written with fixed settings, so equal rows give byte-identical files.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builders.base import BuildResult
from builders.release.card import render_card, split_file
from evaluators.core.errors import OutputError, SchemaError
from evaluators.core.fileio import clean_stale, make_temp_dir, rename_exchange, rename_noreplace
from evaluators.core.hashing import sha256_file_size
from evaluators.data.folder import CARD, MANIFEST
from evaluators.schema import FamilySchema
from evaluators.schema.base import check_unique, to_arrow
from evaluators.schema.meta import Manifest

log = logging.getLogger("xlbench.build")
_PARQUET_OPTS = {
    "compression": "zstd",
    "compression_level": 9,
    "use_dictionary": True,
    "write_statistics": True,
}


def check_output(out: str | os.PathLike, overwrite: bool) -> Path:
    """Check, before any work, that ``out`` can be written.

    Raises:
        OutputError: ``out`` is a file, a folder that is not empty and not a dataset folder
            (``overwrite`` would delete it), exists (without ``overwrite``), or its parent is
            not writable.
    """
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise OutputError(
            f"Output path {str(path)!r} is a file, not a folder; choose another --out."
        )
    if path.is_dir():
        _check_replaceable(path)
        if not overwrite:
            raise OutputError(
                f"Output folder {str(path)!r} already exists; pass --overwrite or choose another --out."
            )
    parent = path.parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    # A real write probe: os.access says yes to root on read-only or virtual filesystems.
    try:
        tempfile.TemporaryDirectory(dir=probe, prefix=".xlbench-probe-").cleanup()
    except OSError as err:
        raise OutputError(
            f"Cannot write to {str(probe)!r} ({err.strerror or 'permission denied'}); choose a writable --out."
        ) from err
    return path


#: What a dataset folder holds (``.gitattributes``: a Hub snapshot's), the only names --overwrite replaces.
_DATASET_ENTRIES = frozenset({CARD, MANIFEST, "data", ".gitattributes"})


def _check_replaceable(path: Path) -> None:
    """Refuse to replace a folder that is not empty and not a dataset folder (--overwrite deletes it)."""
    names = sorted(p.name for p in path.iterdir())
    foreign = [n for n in names if n not in _DATASET_ENTRIES]
    if foreign or (names and MANIFEST not in names):
        shown = ", ".join(foreign[:3] or names[:3]) + (", ..." if len(foreign or names) > 3 else "")
        raise OutputError(
            f"Output folder {str(path)!r} is not an xlbench dataset folder (it holds {shown}), and "
            "--overwrite would delete it; choose another --out, or empty that folder first."
        )


def prepare_tables(family: FamilySchema, result: BuildResult) -> dict[str, dict[str, pa.Table]]:
    """Validate every table against the family schema and convert it to Arrow.

    Raises:
        SchemaError: empty output, unknown split, schema mismatch, duplicate ids,
            or a disjoint column shared between splits.
    """
    if not result.tables or not any(result.tables.values()):
        raise SchemaError(
            "The build produced no rows; check the inputs (empty corpus or no matches)."
        )
    out: dict[str, dict[str, pa.Table]] = {}
    for config, splits in sorted(result.tables.items()):
        _, table = family.split_config(config)
        out[config] = {}
        for split, rows in sorted(splits.items()):
            if split not in table.splits:
                raise SchemaError(f"{config}: split {split!r} is not one of {list(table.splits)}.")
            where = f"{config}/{split}"
            data = to_arrow(rows, table, where)
            check_unique(data, table, where)
            out[config][split] = data
        if not any(t.num_rows for t in out[config].values()):
            raise SchemaError(
                f"Config {config} is empty; drop it or check why every item was filtered out."
            )
        if family.disjoint_column and table is family.main:
            check_disjoint(out[config], family.disjoint_column, config)
    return out


def check_disjoint(splits: dict[str, pa.Table], column: str, config: str) -> None:
    """Raise if a value of ``column`` occurs in two splits.

    Raises:
        SchemaError: names the config, the splits and one shared value.
    """
    seen: dict[str, str] = {}
    for split, data in sorted(splits.items()):
        for value in set(data.column(column).to_pylist()):
            if value in seen and seen[value] != split:
                raise SchemaError(
                    f"{config}: {column} {value!r:.60} occurs in both {seen[value]} and {split}; splits must be disjoint."
                )
            seen[value] = split


def write_dataset(
    out: str | os.PathLike,
    family: FamilySchema,
    result: BuildResult,
    manifest: Manifest,
    overwrite: bool = False,
    repo_id: str | None = None,
) -> Path:
    """Validate and write a dataset folder atomically; return its path.

    ``manifest.configs`` and ``manifest.files`` (each data file's sha256 and sizes, what every
    later read checks) are filled here from the tables and files actually written.

    Raises:
        SchemaError: the rows break the family's contract (nothing is written).
        OutputError: the folder cannot be written (nothing is left behind).
    """
    final = check_output(out, overwrite)
    tables = prepare_tables(family, result)
    manifest.configs = {
        c: {s: t.num_rows for s, t in splits.items()} for c, splits in tables.items()
    }
    final.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(final.parent, stale_prefixes(final.name))
    tmp = make_temp_dir(f".{final.name}.tmp-", final.parent)
    try:
        stats = _write_tables(tmp, tables, manifest)
        fault_point("manifest")
        (tmp / "manifest.json").write_text(manifest.to_json(), encoding="utf-8")
        card = render_card(
            family,
            manifest,
            stats,
            result.license,
            result.construction,
            result.limitations,
            repo_id,
            tables=tables,
            summary=result.summary,
        )
        fault_point("card")
        (tmp / "README.md").write_text(card, encoding="utf-8")
        fault_point("rename")
        _swap_into_place(tmp, final, overwrite)
        fault_point("done")
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        _drop_exports(result.exports)
        raise OutputError(
            f"Cannot write {str(final)!r} ({err.strerror}); choose a writable --out."
        ) from err
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _drop_exports(result.exports)
        raise
    _move_exports(result.exports)
    return final


def _write_tables(
    tmp: Path, tables: dict[str, dict[str, pa.Table]], manifest: Manifest
) -> dict[str, dict[str, dict[str, int]]]:
    """Write every split's parquet file under ``tmp``; record its digest in the manifest; return the card's stats."""
    stats: dict[str, dict[str, dict[str, int]]] = {}
    manifest.files = {}
    for config, splits in tables.items():
        stats[config] = {}
        for split, data in splits.items():
            rel = split_file(config, split)
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            fault_point("parquet")
            pq.write_table(data, path, **_PARQUET_OPTS)
            sha, size = sha256_file_size(path)
            manifest.files[rel] = {"sha256": sha, "bytes": size, "num_bytes": data.nbytes}
            stats[config][split] = {
                "num_examples": data.num_rows,
                "num_bytes": data.nbytes,
                "file_bytes": size,
            }
    return stats


def check_export_folder(directory: str | os.PathLike, option: str) -> None:
    """Check, before any work, that ``directory`` can hold the export files ``option`` asks for.

    Raises:
        OutputError: it is a file (the files would be refused only after the build).
    """
    folder = Path(directory).expanduser()
    if folder.exists() and not folder.is_dir():
        raise OutputError(
            f"{option} {str(folder)!r} is a file, not a folder; name a folder for the export files."
        )


def stage_exports(
    directory: str | os.PathLike, files: dict[str, str], option: str
) -> dict[str, str]:
    """Write side files (``name -> text``) into a temporary folder beside ``directory``; return ``final -> staged``.

    :func:`write_dataset` moves them into ``directory`` after the dataset
    folder is in place (``BuildResult.exports``), and drops them if it fails.

    Raises:
        OutputError: the temporary folder cannot be written (names ``option``).
    """
    folder = Path(directory).expanduser()
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        clean_stale(folder.parent, stale_prefixes(folder.name))
        staging = make_temp_dir(f".{folder.name}.tmp-", folder.parent)
        out = {}
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
            out[str(folder / name)] = str(staging / name)
    except OSError as err:
        raise OutputError(
            f"Cannot write the export to {str(folder)!r} ({err.strerror}); choose a writable {option}."
        ) from err
    return out


def _move_exports(exports: dict[str, str]) -> None:
    """Move staged side files into place (each ``os.replace`` is atomic) and remove their staging folders.

    Raises:
        OutputError: a destination cannot be written (the dataset folder is already in place).
    """
    for final, staged in sorted(exports.items()):
        dest = Path(final)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, dest)
        except OSError as err:
            _drop_exports(exports)
            raise OutputError(
                f"The dataset was written, but not the export file {str(dest)!r} ({err.strerror}); choose a writable export folder."
            ) from err
        log.info("exported %s", dest)
    _drop_exports(exports)


def _drop_exports(exports: dict[str, str]) -> None:
    for folder in {Path(staged).parent for staged in exports.values()}:
        shutil.rmtree(folder, ignore_errors=True)


def stale_prefixes(name: str) -> tuple[str, ...]:
    """Return the name prefixes of the temporary siblings a build of folder ``name`` makes.

    >>> stale_prefixes("bucc")
    ('.bucc.tmp-', '.bucc.old-')
    """
    return (f".{name}.tmp-", f".{name}.old-")


#: Named steps of :func:`write_dataset`, in order; ``XLBENCH_FAULT_AT=<step>`` kills the process there.
WRITE_STEPS = ("parquet", "manifest", "card", "rename", "done")


def fault_point(step: str) -> None:
    """Die with SIGKILL at ``step`` when ``XLBENCH_FAULT_AT`` names it (a test hook; a no-op otherwise).

    ``XLBENCH_FAULT_AT=parquet:2`` dies at the second time the step is reached.
    Tests use it to prove that a kill at any write step leaves no complete-looking folder.
    """
    spec = os.environ.get("XLBENCH_FAULT_AT")
    if not spec:
        return
    name, _, nth = spec.partition(":")
    if name != step:
        return
    _FAULT_HITS[step] = _FAULT_HITS.get(step, 0) + 1
    if _FAULT_HITS[step] >= int(nth or 1):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


_FAULT_HITS: dict[str, int] = {}


def _swap_into_place(tmp: Path, final: Path, overwrite: bool) -> None:
    """Move the finished ``tmp`` to ``final``: create-or-fail, or (with ``overwrite``) an atomic swap.

    Raises:
        OutputError: ``final`` appeared during the build (another build or process made it) and
            ``overwrite`` is off; that folder is left untouched.
    """
    try:
        rename_noreplace(tmp, final)
        return
    except FileExistsError:
        if not overwrite:
            raise OutputError(
                f"Output folder {str(final)!r} was created by another process while this build ran; it was left "
                f"untouched: pass --overwrite to replace it, or choose another --out."
            ) from None
    if not final.is_dir() or final.is_symlink():
        raise OutputError(f"Output path {str(final)!r} is not a folder; choose another --out.")
    rename_exchange(tmp, final)  # tmp now holds the previous folder
    shutil.rmtree(tmp, ignore_errors=True)
