"""Open an xlbench dataset for scoring, pinned to an exact revision.

A reference is a local folder (built by ``xlbench build``) or a Hub repo id with
a tag, branch or sha. Either way it is resolved to something immutable before
scoring: the Hub commit sha, or for a folder the sha256 of its content. The
resolved revision goes into every result and signature.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from evaluators.errors import InputFileError, RevisionError, SchemaError
from evaluators.schema import FamilySchema, get_family


@dataclass(frozen=True)
class DatasetRef:
    """A dataset pinned for scoring.

    Attributes:
        id: the Hub repo id, or the folder path for a local dataset.
        source: ``"hub"`` or ``"local"``.
        requested: what the user asked for (tag, branch, sha or ``None``).
        revision: the resolved commit sha (hub) or content sha256 (local).
        version: the dataset's semantic version from its card.
        family: the dataset family from the card.
        path: the local folder (for hub datasets, ``None``).
    """

    id: str
    source: str
    requested: str | None
    revision: str
    version: str | None
    family: str | None
    path: str | None = None

    def to_dict(self) -> dict:
        """Return the dict stored in results JSON."""
        return asdict(self)


def read_card_yaml(text: str) -> dict:
    r"""Return the YAML front matter of a dataset card.

    >>> read_card_yaml("---\nlicense: cc-by-4.0\n---\n# Title\n")
    {'license': 'cc-by-4.0'}

    Raises:
        SchemaError: the card has no front matter or it does not parse.
    """
    if not text.startswith("---\n"):
        raise SchemaError("The dataset card README.md has no YAML front matter; rebuild it with xlbench build.")
    end = text.find("\n---", 4)
    if end < 0:
        raise SchemaError("The dataset card's YAML front matter is not closed by '---'.")
    try:
        data = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError as err:
        raise SchemaError(f"The dataset card's YAML does not parse: {err}.") from err
    if not isinstance(data, dict):
        raise SchemaError("The dataset card's YAML front matter is not a mapping.")
    return data


def folder_hash(folder: str | os.PathLike) -> str:
    """Return the sha256 over a built folder's card, manifest and data files (paths included)."""
    root = Path(folder)
    digest = hashlib.sha256()
    files = [root / "README.md", root / "manifest.json", *sorted((root / "data").rglob("*.parquet"))]
    for path in files:
        if not path.is_file():
            continue
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _card_fields(card: dict) -> tuple[str | None, str | None]:
    xl = card.get("xlbench") or {}
    return xl.get("version"), xl.get("family")


def resolve(reference: str, revision: str | None = None) -> DatasetRef:
    """Pin a dataset reference (local folder or Hub repo) to an immutable revision.

    Raises:
        InputFileError: a local path that is not a built dataset folder.
        RevisionError: a Hub revision that cannot be resolved (or would be
            silently replaced offline).
    """
    path = Path(reference).expanduser()
    if path.exists() or reference.startswith((".", "/", "~")):
        if not (path / "README.md").is_file():
            raise InputFileError(
                f"{reference!r} is not a built xlbench dataset folder (no README.md); "
                f"build one with 'xlbench build' or pass a Hub repo id."
            )
        if revision:
            raise RevisionError(
                f"--revision {revision!r} applies to Hub datasets; {reference!r} is a local folder, "
                f"pinned by its content hash instead."
            )
        version, family = _card_fields(read_card_yaml((path / "README.md").read_text(encoding="utf-8")))
        return DatasetRef(str(path), "local", None, folder_hash(path), version, family, str(path.resolve()))
    from evaluators import hub

    return hub.resolve(reference, revision)


def load_split(ref: DatasetRef, config: str, split: str):
    """Load one config/split of a pinned dataset as a ``datasets.Dataset``.

    Raises:
        SchemaError: the config or split does not exist; the message lists those that do.
    """
    from datasets import load_dataset

    available = list_configs(ref)
    if config not in available:
        raise SchemaError(
            f"Config {config!r} is not in {ref.id}; available: {', '.join(sorted(available)) or 'none'}."
        )
    splits = available[config]
    if split not in splits:
        raise SchemaError(f"Split {split!r} is not in config {config!r} of {ref.id}; available: {', '.join(splits)}.")
    if ref.source == "local":
        return load_dataset(ref.path, config, split=split)
    from evaluators import hub

    return hub.load_split(ref, config, split)  # exact revision, also offline


def list_configs(ref: DatasetRef) -> dict[str, list[str]]:
    """Return ``config -> splits`` from the pinned card."""
    if ref.source == "local":
        card = read_card_yaml((Path(ref.path) / "README.md").read_text(encoding="utf-8"))
    else:
        from evaluators import hub

        card = hub.read_card(ref)
    out: dict[str, list[str]] = {}
    for cfg in card.get("configs", []):
        files = cfg.get("data_files", [])
        out[cfg["config_name"]] = [f["split"] for f in files] if isinstance(files, list) else []
    return out


def family_of(ref: DatasetRef, expected: str) -> FamilySchema:
    """Check the pinned dataset is of the ``expected`` family and return its schema.

    Raises:
        SchemaError: the card names another family.
    """
    if ref.family and ref.family != expected:
        raise SchemaError(
            f"{ref.id} is a {ref.family!r} dataset but this evaluator needs a {expected!r} dataset."
        )
    return get_family(expected)


def manifest_of(ref: DatasetRef) -> dict | None:
    """Return the dataset's manifest (local folders only), or ``None``."""
    if ref.source != "local":
        return None
    path = Path(ref.path) / "manifest.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
