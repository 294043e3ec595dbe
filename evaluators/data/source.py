"""Where a dataset comes from: a local folder or a Hub repo at a revision, as one object.

:func:`open_source` resolves a reference once (the card is parsed once, the
revision pinned once); the source then lists configs and loads splits. All Hub
calls stay in :mod:`evaluators.data.hub`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from evaluators.data.dsref import DatasetRef, configs_of, content_id
from evaluators.core.errors import InputFileError, RemoteError, RevisionError, SchemaError

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


class DatasetSource:
    """A pinned dataset: its reference, its parsed card, its configs, and split loading (with a cache)."""

    def __init__(self, ref: DatasetRef, card: dict[str, Any]):
        """Wrap a pinned reference and its parsed card."""
        self.ref = ref
        self.card = card
        self._configs = configs_of(card)
        self._loaded: dict[tuple[str, str], Any] = {}

    @property
    def id(self) -> str:
        """The dataset id (Hub repo id, or the card's name for a local folder)."""
        return self.ref.id

    def configs(self) -> dict[str, list[str]]:
        """Return ``config -> splits`` from the card."""
        return dict(self._configs)

    def manifest(self) -> dict | None:
        """Return the build manifest, when the source has one (local folders)."""
        return None

    def check_family(self, expected: str):
        """Check the dataset is of the ``expected`` family and return its schema.

        Raises:
            SchemaError: the card names another family.
        """
        from evaluators.schema import get_family

        if self.ref.family and self.ref.family != expected:
            raise SchemaError(
                f"{self.ref.id} is a {self.ref.family!r} dataset but this evaluator needs a {expected!r} dataset."
            )
        return get_family(expected)

    def main_configs(self, family: str, requested: str | None = None) -> list[str]:
        """Return the configs of the family's main table (or the requested one, checked)."""
        schema = self.check_family(family)
        mains = sorted(c for c in self._configs if schema.split_config(c)[1] is schema.main)
        if requested:
            if requested not in self._configs:
                raise SchemaError(
                    f"Config {requested!r} is not in {self.ref.id}; available: {', '.join(sorted(self._configs))}."
                )
            return [requested]
        return mains

    def load(self, config: str, split: str):
        """Load one config/split as a ``datasets.Dataset`` (loaded once per source).

        Raises:
            SchemaError: the config or split does not exist; the message lists those that do.
        """
        if config not in self._configs:
            raise SchemaError(
                f"Config {config!r} is not in {self.ref.id}; available: {', '.join(sorted(self._configs)) or 'none'}."
            )
        splits = self._configs[config]
        if split not in splits:
            raise SchemaError(
                f"Split {split!r} is not in config {config!r} of {self.ref.id}; available: {', '.join(splits)}."
            )
        key = (config, split)
        if key not in self._loaded:
            self._loaded[key] = self._load(config, split)
        return self._loaded[key]

    def rows(self, config: str, split: str) -> list[dict]:
        """Load one config/split as a list of row dicts."""
        ds = self.load(config, split)
        return ds.to_list() if hasattr(ds, "to_list") else list(ds)

    def _load(self, config: str, split: str):  # pragma: no cover - overridden
        raise NotImplementedError


class LocalSource(DatasetSource):
    """A folder written by ``xlbench build``."""

    def manifest(self) -> dict | None:
        """Return ``manifest.json`` of the folder, or ``None``."""
        import json

        path = self.ref.folder / "manifest.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def _load(self, config: str, split: str):
        return load_local(self.ref.folder, config, split)


class HubSource(DatasetSource):
    """A Hub dataset repo pinned to a commit sha."""

    def _load(self, config: str, split: str):
        from evaluators.data import hub

        return hub.load_split(self.ref, config, split)  # exact revision, also offline


def load_local(folder: str | os.PathLike, config: str, split: str):
    """Load one config/split of a dataset folder with ``datasets``; a damaged parquet file is one error.

    The parquet footers are only checked when ``load_dataset`` fails, so a good
    folder costs nothing extra.

    Raises:
        InputFileError: a parquet file of the folder is truncated or not parquet.
    """
    from datasets import load_dataset

    from evaluators.data.cardio import check_parquet_folder

    try:
        return load_dataset(str(folder), config, split=split)
    except Exception:
        check_parquet_folder(folder)  # names the damaged file when there is one
        raise


def _local(reference: str, path: Path, revision: str | None) -> LocalSource:
    from evaluators.data.cardio import read_card

    if not path.exists():
        raise InputFileError(
            f"No such folder {reference!r}: it is not a built xlbench dataset folder; check the path, "
            f"or build one with 'xlbench build'."
        )
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
    card = read_card(path)
    xl = card.get("xlbench") or {}
    resolved = str(path.resolve())
    name = xl.get("name") or path.resolve().name
    ref = DatasetRef(
        name, "local", None, content_id(path), xl.get("version"), xl.get("family"), resolved, name
    )
    return LocalSource(ref, card)


def open_source(reference: str, revision: str | None = None) -> DatasetSource:
    """Resolve a dataset reference (local folder or Hub repo) into a pinned source.

    Raises:
        InputFileError: a local path that is not a built dataset folder, or a
            path that exists nowhere (not shaped like a Hub id, or offline).
        RevisionError: a Hub revision that cannot be resolved.
    """
    from evaluators.data import hub

    path = Path(reference).expanduser()
    if path.exists() or reference.startswith((".", "/", "~")):
        return _local(reference, path, revision)
    if not _REPO_ID.match(reference):
        raise InputFileError(
            f"No such dataset folder {reference!r}, and it is not a Hub repo id (org/name); "
            f"build one with 'xlbench build' or check the path."
        )
    if hub.offline() and revision is None:
        # Most likely a mistyped local path; a Hub copy needs a pinned sha offline anyway.
        raise InputFileError(
            f"No such folder {reference!r} (and offline, so not tried on the Hub); check the path, "
            f"or pass --revision <commit sha> of a cached Hub copy."
        )
    try:
        ref, card = hub.resolve_with_card(reference, revision)
    except (RevisionError, RemoteError) as err:
        if revision is not None:
            raise  # a pinned revision means a Hub dataset was meant: the Hub's answer is the whole story
        # 'out/typo' is as likely a mistyped folder as a Hub id: say both
        text = str(err)
        raise type(err)(
            f"No such folder {reference!r}, and as a Hub dataset: {text[:1].lower() + text[1:]}"
        ) from None
    return HubSource(ref, card)


def describe(source: DatasetSource) -> dict[str, Any]:
    """Return the dataset record stored in a result (the reference plus the folder, if any)."""
    out = source.ref.to_dict()
    if os.environ.get("XLBENCH_HIDE_PATHS"):
        out["path"] = None
    return out
