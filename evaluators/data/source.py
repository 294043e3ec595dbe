"""Where a dataset comes from: a local folder or a Hub repo at a revision, as one object.

:func:`open_source` resolves a reference once (the card is parsed once, the
revision pinned once); the source then lists configs and loads splits. All Hub
calls stay in :mod:`evaluators.data.hub`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluators.core.errors import (
    ConfigError,
    InputFileError,
    RemoteError,
    RevisionError,
    SchemaError,
)
from evaluators.data import hub
from evaluators.data.dsref import DatasetRef, configs_of
from evaluators.data.folder import BuiltFolder, check_rows, open_folder
from evaluators.schema import get_family

if TYPE_CHECKING:
    from evaluators.schema.base import TableSchema

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
        if self.ref.family and self.ref.family != expected:
            raise SchemaError(
                f"{self.ref.id} is a {self.ref.family!r} dataset but this evaluator needs a {expected!r} dataset."
            )
        return get_family(expected)

    def select_configs(
        self,
        family: str,
        requested: str | None = None,
        *,
        scored: Callable[[str, TableSchema], bool] | None = None,
        **how: Any,
    ) -> list[str]:
        """Return the configs to score: ``requested`` (checked) or every scored config of the dataset.

        A config is scored when ``scored(config, table)`` says so (default: the
        family's main table); ``how`` goes to :func:`select_configs` (``what``,
        ``fix``, ``flag``, ``single``).

        Raises:
            SchemaError: the dataset is of another family.
            ConfigError: see :func:`select_configs`.
        """
        schema = self.check_family(family)

        def keep(config: str) -> bool:
            table = schema.split_config(config)[1]
            return table is schema.main if scored is None else scored(config, table)

        candidates = [c for c in self._configs if keep(c)]
        return select_configs(self._configs, candidates, requested, dataset=self.ref.id, **how)

    def load(self, config: str, split: str, *, empty_ok: bool = False):
        """Load one config/split as a ``datasets.Dataset`` (loaded once per source).

        Args:
            config: the config.
            split: the split.
            empty_ok: a split without rows is returned (an optional side table), not refused.

        Raises:
            SchemaError: the config or split does not exist (the message lists those that do),
                or the split has no rows to score.
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
        if not empty_ok and len(self._loaded[key]) == 0:
            others = [s for s in splits if s != split]
            raise SchemaError(
                f"Split {split!r} of config {config!r} in {self.ref.id} has no rows, so there is nothing to score; "
                + (f"choose another split ({', '.join(others)}) or " if others else "")
                + "rebuild the dataset."
            )
        return self._loaded[key]

    def rows(self, config: str, split: str, *, empty_ok: bool = False) -> list[dict]:
        """Load one config/split as a list of row dicts (see :meth:`load`)."""
        ds = self.load(config, split, empty_ok=empty_ok)
        return ds.to_list() if hasattr(ds, "to_list") else list(ds)

    def _load(self, config: str, split: str):  # pragma: no cover - overridden
        raise NotImplementedError


def select_configs(
    configs: Iterable[str],
    candidates: Iterable[str],
    requested: str | None,
    *,
    dataset: str,
    what: str = "main config",
    fix: str = "rebuild it with 'xlbench build'",
    flag: str = "--config",
    single: bool = False,
) -> list[str]:
    """THE choice of the configs an evaluator scores (every evaluator and the mteb export call it).

    ``requested`` (the ``--config`` value) must be one of ``candidates`` (the configs scored by
    default, a subset of ``configs``, all the dataset has); without it every candidate is
    scored, sorted, or with ``single`` the only one.

    >>> select_configs(["a", "a-gold", "b"], ["a", "b"], None, dataset="d")
    ['a', 'b']
    >>> select_configs(["a", "a-gold", "b"], ["a", "b"], "b", dataset="d")
    ['b']
    >>> select_configs(["a", "a-gold"], ["a"], "a-gold", dataset="d")
    Traceback (most recent call last):
    ...
    evaluators.core.errors.ConfigError: --config 'a-gold' is not a main config of d; choose one of: a (a-gold is not scored).

    Args:
        configs: every config of the dataset.
        candidates: the configs scored by default.
        requested: the requested config, or ``None``.
        dataset: the dataset's id, for messages.
        what: what a candidate is, for messages ("main config", "cross-lingual config").
        fix: what to do when the dataset has no candidate.
        flag: how the user names a config, for messages.
        single: exactly one config is scored; several candidates and no request is an error.

    Raises:
        ConfigError: ``requested`` is not in the dataset or not a candidate, there is no
            candidate, or (``single``) several and none requested.
    """
    everything = sorted(configs)
    chosen = sorted(candidates)
    if requested:
        if requested not in chosen:
            also = sorted(set(everything) - set(chosen))
            others = (
                f" ({', '.join(also)} {'is' if len(also) == 1 else 'are'} not scored)"
                if also
                else ""
            )
            raise ConfigError(
                f"{flag} {requested!r} is not {'an' if what[:1] in 'aeiou' else 'a'} {what} of "
                f"{dataset}; choose one of: "
                f"{', '.join(chosen) or 'none'}{others}."
            )
        return [requested]
    if not chosen:
        raise ConfigError(f"{dataset} has no {what}; {fix}.")
    if single and len(chosen) > 1:
        raise ConfigError(
            f"{dataset} has several {what}s ({', '.join(chosen)}); choose one with {flag}."
        )
    return chosen


class LocalSource(DatasetSource):
    """A folder written by ``xlbench build``, verified once (:func:`evaluators.data.folder.open_folder`)."""

    def __init__(self, ref: DatasetRef, folder: BuiltFolder):
        """Wrap a pinned reference and the verified folder."""
        super().__init__(ref, folder.card)
        self.folder = folder

    def manifest(self) -> dict | None:
        """Return ``manifest.json`` of the folder (as verified at open), or ``None``."""
        return self.folder.manifest

    def _load(self, config: str, split: str):
        return as_dataset(self.folder.read(config, split), split)


class HubSource(DatasetSource):
    """A Hub dataset repo pinned to a commit sha."""

    def _load(self, config: str, split: str):
        ds = hub.load_split(self.ref, config, split)  # exact revision, also offline
        if self.ref.family:  # the same row checks as a local folder's read
            check_rows(ds.data.table, get_family(self.ref.family), config, split)
        return ds


def as_dataset(table: Any, split: str):
    """Wrap a verified Arrow table as an in-memory ``datasets.Dataset`` (what the evaluators read).

    The table's schema metadata carries the family's ``datasets.Features`` (see
    :func:`evaluators.schema.base.to_arrow`), so the columns have the types ``load_dataset`` gives.
    """
    from datasets import Dataset, NamedSplit
    from datasets.table import InMemoryTable

    return Dataset(InMemoryTable(table), split=NamedSplit(split))


def _local(reference: str, path: Path, revision: str | None) -> LocalSource:
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
    folder = open_folder(path)
    xl = folder.card.get("xlbench") or {}
    resolved = str(path.resolve())
    name = xl.get("name") or path.resolve().name
    ref = DatasetRef(
        name, "local", None, folder.content_id, xl.get("version"), xl.get("family"), resolved, name
    )
    return LocalSource(ref, folder)


def open_source(reference: str, revision: str | None = None) -> DatasetSource:
    """Resolve a dataset reference (local folder or Hub repo) into a pinned source.

    Raises:
        InputFileError: a local path that is not a built dataset folder, or a
            path that exists nowhere (not shaped like a Hub id, or offline).
        RevisionError: a Hub revision that cannot be resolved.
    """
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
