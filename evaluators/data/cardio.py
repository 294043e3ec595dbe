"""Read a built dataset's card and data files safely: every defect is one xlbench error.

The dataset card (``README.md``) is user input like any other file: it may not
be UTF-8, its YAML may be nested thousands of levels deep (PyYAML's composer
recurses and overflows the stack) and a parquet file may be truncated. These
readers turn each case into one sentence naming the file and the fix.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from evaluators.core.errors import InputFileError, SchemaError
from evaluators.data.textio import read_text

#: Deepest YAML nesting a card may have; real cards use fewer than 10 levels.
MAX_YAML_DEPTH = 100


def _depth_ok(text: str, limit: int) -> bool:
    """Cheap pre-check: flow-style brackets and indentation may not exceed ``limit`` levels."""
    depth = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth = max(depth - 1, 0)
    for line in text.splitlines():
        stripped = line.lstrip(" -")
        if stripped and (len(line) - len(stripped)) // 2 > limit:
            return False
    return True


def parse_card_yaml(text: str, where: str = "The dataset card") -> dict:
    r"""Return the YAML front matter of a dataset card as a mapping.

    >>> parse_card_yaml("---\nlicense: cc-by-4.0\n---\n# Title\n")
    {'license': 'cc-by-4.0'}
    >>> parse_card_yaml("---\na: " + "[" * 5000 + "]" * 5000 + "\n---\n")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.SchemaError: The dataset card's YAML is nested deeper than 100 levels; rebuild the card with xlbench build.

    Args:
        text: the whole card.
        where: the card, for messages.

    Raises:
        SchemaError: no front matter, unclosed, too deep, not parseable or not a mapping.
    """
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        raise SchemaError(
            f"{where} has no YAML front matter (a first line '---'); rebuild it with xlbench build."
        )
    body_start = text.index("\n") + 1
    end = text.find("\n---", body_start - 1)
    if end < 0:
        raise SchemaError(
            f"{where}'s YAML front matter is not closed by a '---' line; rebuild it with xlbench build."
        )
    block = text[body_start:end]
    if not _depth_ok(block, MAX_YAML_DEPTH):
        raise SchemaError(
            f"{where}'s YAML is nested deeper than {MAX_YAML_DEPTH} levels; rebuild the card with xlbench build."
        )
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError as err:
        first = " ".join(str(err).split())
        raise SchemaError(
            f"{where}'s YAML does not parse ({first[:160]}); fix it or rebuild the card."
        ) from err
    except (RecursionError, MemoryError) as err:
        raise SchemaError(
            f"{where}'s YAML is too deeply nested to read; rebuild the card with xlbench build."
        ) from err
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SchemaError(
            f"{where}'s YAML front matter is a {type(data).__name__}, not a mapping; rebuild the card."
        )
    return data


def read_card(folder_or_file: str | os.PathLike) -> dict:
    """Read the card of a built folder (or a README.md path) and return its YAML mapping.

    Raises:
        InputFileError: the card is missing, a directory, unreadable or not UTF-8.
        SchemaError: its YAML front matter is missing or malformed.
    """
    p = Path(folder_or_file)
    card = p / "README.md" if p.is_dir() else p
    text = read_text(
        card,
        "Dataset card",
        missing=f"{{path}} does not exist: {str(p)!r} is not a built xlbench dataset folder (no README.md).",
        invalid="Dataset card {path} is not valid UTF-8 (line {line}, byte {byte}); re-encode it with "
        "'iconv -f <encoding> -t UTF-8' or rebuild it with xlbench build.",
    )
    return parse_card_yaml(text, f"The dataset card {str(card)!r}")


def card_splits(
    card: dict[str, Any],
) -> tuple[dict[str, dict[str, str]], dict[str, dict[Any, Any]]]:
    """Return a built card's ``config -> split -> data file`` and ``config -> split -> its dataset_info entry``.

    >>> card_splits({"configs": [{"config_name": "c", "data_files": [{"split": "test", "path": "p"}]}],
    ...              "dataset_info": [{"config_name": "c", "splits": [{"name": "test", "num_examples": 2}]}]})
    ({'c': {'test': 'p'}}, {'c': {'test': {'name': 'test', 'num_examples': 2}}})

    Raises:
        SchemaError: a config without ``config_name`` or ``data_files``, or a file entry without split/path.
    """
    files: dict[str, dict[str, str]] = {}
    for cfg in card.get("configs") or []:
        if not isinstance(cfg, dict) or not isinstance(cfg.get("config_name"), str):
            raise SchemaError(
                f"README.md: a 'configs' entry has no config_name ({str(cfg)[:60]}); rebuild the folder."
            )
        name, entries = cfg["config_name"], cfg.get("data_files")
        if not isinstance(entries, list) or not entries:
            raise SchemaError(f"README.md: config {name} lists no data_files; rebuild the folder.")
        files[name] = {}
        for entry in entries:
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("path"), str)
                or "split" not in entry
            ):
                raise SchemaError(
                    f"README.md: config {name} has a data_files entry without split/path; rebuild the folder."
                )
            files[name][str(entry["split"])] = entry["path"]
    # Values as the card's YAML has them (a hand-edited card may lack a name or a count).
    counts: dict[str, dict[Any, Any]] = {}
    for info in card.get("dataset_info") or []:
        if isinstance(info, dict) and "config_name" in info:
            counts[info["config_name"]] = {
                s.get("name"): s for s in info.get("splits") or [] if isinstance(s, dict)
            }
    return files, counts


def check_parquet(path: str | os.PathLike) -> int:
    """Open a parquet file's footer and return its row count; a damaged file is one clear error.

    Raises:
        InputFileError: missing, a directory, or not a readable parquet file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = Path(path)
    if p.is_dir():
        raise InputFileError(f"Parquet file {str(p)!r} is a directory, expected a file.")
    if not p.is_file():
        raise InputFileError(
            f"Parquet file {str(p)!r} does not exist; the dataset folder is incomplete, rebuild it."
        )
    try:
        return pq.ParquetFile(p).metadata.num_rows
    except (pa.ArrowException, OSError, ValueError) as err:
        raise InputFileError(
            f"{str(p)!r} is not a readable parquet file ({' '.join(str(err).split())[:120]}); "
            f"the dataset is damaged: rebuild it or download it again."
        ) from err


def check_parquet_folder(folder: str | os.PathLike) -> int:
    """Check every ``*.parquet`` under ``folder`` (see :func:`check_parquet`); return the total row count.

    Raises:
        InputFileError: a damaged parquet file (the first one, in path order).
    """
    return sum(check_parquet(p) for p in sorted(Path(folder).rglob("*.parquet")))
