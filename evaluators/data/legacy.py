"""Open an xlbench dataset for scoring, pinned to an exact revision (function API over :mod:`evaluators.data.source`).

A reference is a local folder (built by ``xlbench build``) or a Hub repo id with
a tag, branch or sha. Either way it is resolved to something immutable before
scoring: the Hub commit sha, or for a folder a content id over its data files
and the stable part of its manifest (:func:`evaluators.data.dsref.content_id`). The
resolved revision goes into every result and signature.

New code should use :func:`evaluators.data.source.open_source`, which parses the card
once; these functions remain for callers that hold a :class:`DatasetRef`.
"""

from __future__ import annotations

import os

from evaluators.data.cardio import read_card
from evaluators.data.dsref import DatasetRef, configs_of, content_id, read_card_yaml
from evaluators.core.errors import SchemaError

__all__ = [
    "DatasetRef",
    "family_of",
    "folder_hash",
    "list_configs",
    "load_split",
    "read_card_yaml",
    "resolve",
]


def folder_hash(folder: str | os.PathLike) -> str:
    """Return the revision of a built folder (its content id; timestamps and run statistics excluded)."""
    return content_id(folder)


def resolve(reference: str, revision: str | None = None) -> DatasetRef:
    """Pin a dataset reference (local folder or Hub repo) to an immutable revision.

    Raises:
        InputFileError: a local path that is not a built dataset folder.
        RevisionError: a Hub revision that cannot be resolved (or would be
            silently replaced offline).
    """
    from evaluators.data.source import open_source

    return open_source(reference, revision).ref


def _source(ref: DatasetRef):
    from evaluators.data.source import HubSource, LocalSource

    if ref.source == "local":
        return LocalSource(ref, read_card(ref.folder))
    from evaluators.data import hub

    return HubSource(ref, hub.read_card(ref))


def load_split(ref: DatasetRef, config: str, split: str):
    """Load one config/split of a pinned dataset as a ``datasets.Dataset``.

    Raises:
        SchemaError: the config or split does not exist; the message lists those that do.
    """
    return _source(ref).load(config, split)


def list_configs(ref: DatasetRef) -> dict[str, list[str]]:
    """Return ``config -> splits`` from the pinned card."""
    if ref.source == "local":
        return configs_of(read_card(ref.folder))
    from evaluators.data import hub

    return configs_of(hub.read_card(ref))


def family_of(ref: DatasetRef, expected: str):
    """Check the pinned dataset is of the ``expected`` family and return its schema.

    Raises:
        SchemaError: the card names another family.
    """
    from evaluators.schema import get_family

    if ref.family and ref.family != expected:
        raise SchemaError(
            f"{ref.id} is a {ref.family!r} dataset but this evaluator needs a {expected!r} dataset."
        )
    return get_family(expected)
