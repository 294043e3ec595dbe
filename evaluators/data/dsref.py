"""The pinned reference of a dataset and the card/manifest readers both data sources share.

A leaf module (no import of :mod:`evaluators.data.hub` or :mod:`evaluators.data.source`), so
the two data sources can import it without a circle.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from evaluators.core.errors import SchemaError
from evaluators.core.hashing import update_tree
from evaluators.schema.meta import stable_manifest


@dataclass(frozen=True)
class DatasetRef:
    """A dataset pinned for scoring.

    Attributes:
        id: the dataset's identity: the Hub repo id, or for a local folder the
            ``name`` from its card (so a folder does not get one id per path spelling).
        source: ``"hub"`` or ``"local"``.
        requested: what the user asked for (tag, branch, sha or ``None``).
        revision: the resolved commit sha (hub) or content id (local, see :func:`content_id`).
        version: the dataset's semantic version from its card.
        family: the dataset family from the card.
        path: the local folder (for hub datasets, ``None``).
        name: the dataset name from its card (the same for a folder and its Hub copy).
    """

    id: str
    source: str
    requested: str | None
    revision: str
    version: str | None
    family: str | None
    path: str | None = None
    name: str | None = None

    @property
    def folder(self) -> Path:
        """The local folder of a ``local`` reference.

        Raises:
            SchemaError: the reference is not a local folder.
        """
        if self.path is None:
            raise SchemaError(f"{self.id} is a {self.source} dataset, not a local folder.")
        return Path(self.path)

    def to_dict(self) -> dict:
        """Return the dict stored in results JSON."""
        return asdict(self)


def configs_of(card: dict) -> dict[str, list[str]]:
    """Return ``config -> splits`` from a parsed card.

    Raises:
        SchemaError: a ``configs`` entry is not a mapping with a ``config_name``.
    """
    out: dict[str, list[str]] = {}
    for cfg in card.get("configs", []) or []:
        if not isinstance(cfg, dict) or not isinstance(cfg.get("config_name"), str):
            raise SchemaError(
                f"The dataset card has a 'configs' entry without a config_name ({str(cfg)[:60]}); "
                f"rebuild the card with 'xlbench build'."
            )
        files = cfg.get("data_files", [])
        out[cfg["config_name"]] = (
            [f["split"] for f in files if isinstance(f, dict) and "split" in f]
            if isinstance(files, list)
            else []
        )
    return out


def content_id(folder: str | os.PathLike) -> str:
    """Return the sha256 over a built folder's data files and the stable part of its manifest.

    The stable part is :func:`evaluators.schema.meta.stable_manifest` (the changelog text is
    content; its dates and the run's timestamps and cache statistics are not).
    The card is left out: it is rendered from the manifest and the data (its
    changelog carries a build date). Two byte-identical rebuilds get the same id.
    """
    return content_digests(folder)[0]


def content_digests(folder: str | os.PathLike) -> tuple[str, dict[str, tuple[str, int]]]:
    """Return :func:`content_id` and ``data file -> (sha256, size)``, from one read of each file.

    Raises:
        SchemaError: ``manifest.json`` is not valid JSON.
    """
    root = Path(folder)
    digest = hashlib.sha256()
    manifest = root / "manifest.json"
    if manifest.is_file():
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise SchemaError(
                f"{manifest} is not valid JSON ({err.msg if isinstance(err, json.JSONDecodeError) else err.reason}); rebuild the dataset."
            ) from err
        digest.update(b"manifest.json\0")
        digest.update(
            json.dumps(stable_manifest(data), sort_keys=True, ensure_ascii=False).encode("utf-8")
        )
    files = update_tree(digest, root, sorted((root / "data").rglob("*.parquet")))
    return digest.hexdigest(), files
