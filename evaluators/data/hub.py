"""Resolve, read and load xlbench datasets on the Hugging Face Hub (or any ``HF_ENDPOINT``).

Every Hub reference is pinned to a commit sha before scoring. Offline
(``HF_HUB_OFFLINE=1`` or ``HF_DATASETS_OFFLINE=1``) ``datasets`` ignores the
requested revision and serves the newest cached one ("Using the latest cached
version of the dataset"), even for a full commit sha; so offline a tag or
branch is refused, and a sha is loaded from the Hub cache's snapshot of
exactly that commit, never through ``load_dataset(repo_id, revision=...)``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator

from evaluators.core.errors import InputFileError, RemoteError, RevisionError, SchemaError
from evaluators.data.cardio import check_parquet_folder
from evaluators.data.cardio import read_card as read_card_file
from evaluators.data.dsref import DatasetRef
from evaluators.data.hubclient import hub_errors, with_retries

log = logging.getLogger("xlbench.hub")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_VERSION_TAG = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
_TRUE = {"1", "true", "yes", "on"}


def offline() -> bool:
    """Return whether the Hub clients are in offline mode (read from the environment)."""
    return any(
        os.environ.get(k, "0").strip().lower() in _TRUE
        for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def is_sha(revision: str | None) -> bool:
    """Return whether ``revision`` is a full 40-character commit sha.

    >>> is_sha("0123456789abcdef0123456789abcdef01234567"), is_sha("v1.0.0"), is_sha(None)
    (True, False, False)
    """
    return revision is not None and bool(_SHA.match(revision))


def newest_version_tag(tags: list[str]) -> str | None:
    """Return the highest ``vX.Y.Z`` tag, or ``None``.

    >>> newest_version_tag(["v1.2.0", "v1.10.0", "draft", "v1.9.9"])
    'v1.10.0'
    """
    versions = [
        (tuple(int(g) for g in m.groups()), t) for t in tags if (m := _VERSION_TAG.match(t))
    ]
    return max(versions)[1] if versions else None


@contextlib.contextmanager
def _remote(repo_id: str, revision: str | None, action: str = "") -> Iterator[None]:
    """Turn Hub, ``datasets`` and network errors into one-sentence xlbench errors (see :mod:`evaluators.data.hubclient`)."""
    with hub_errors(action, repo_id, revision):
        yield


def _read(call, repo_id: str, revision: str | None, action: str = ""):
    """Return ``call()``, a Hub read repeated on rate limits, server errors and dropped connections."""
    return with_retries(call, action, repo_id, revision, log=log.warning)


def _superseded(repo_id: str, sha: str) -> str | None:
    """Return the newest version tag when ``sha`` is an older tagged version, else ``None``."""
    from huggingface_hub import HfApi

    refs = HfApi().list_repo_refs(repo_id, repo_type="dataset")
    tags = {t.name: t.target_commit for t in refs.tags}
    newest = newest_version_tag(list(tags))
    if newest is None or tags[newest] == sha:
        return None
    mine = [t for t, s in tags.items() if s == sha and _VERSION_TAG.match(t)]
    return newest if mine else None


def resolve(repo_id: str, revision: str | None):
    """Resolve ``revision`` (tag, branch, sha or ``None`` for main) to a commit sha.

    Offline, ``datasets`` may silently serve the newest cached revision instead
    of the requested one, so a tag or branch cannot be trusted there: only a
    full 40-character sha whose snapshot is in the local Hub cache is accepted.
    Online, a version tag older than the repo's newest one is logged as superseded.

    Raises:
        RevisionError: offline with a non-sha or uncached revision, or the revision does not exist.
        RemoteError: the Hub could not be reached or refused the request.
    """
    return resolve_with_card(repo_id, revision)[0]


def resolve_with_card(repo_id: str, revision: str | None) -> tuple[DatasetRef, dict]:
    """Like :func:`resolve`, also returning the parsed card (read once)."""
    from huggingface_hub import HfApi

    sha: str | None
    if offline():
        if revision is None or not is_sha(revision):
            raise RevisionError(
                f"HF_HUB_OFFLINE is set and revision {revision or 'main'!r} of {repo_id} is not a full commit sha; "
                f"offline, datasets may silently load another cached version, so pass --revision <40-char sha>."
            )
        sha = revision
    else:
        sha = _read(lambda: HfApi().dataset_info(repo_id, revision=revision).sha, repo_id, revision)
        if not sha:
            raise RevisionError(
                f"The Hub gave no commit sha for {repo_id}@{revision or 'main'}; pass --revision <40-char sha>."
            )
        try:
            newest = _superseded(repo_id, sha)
        except (
            Exception
        ):  # the warning is a courtesy: never fail a run because refs could not be listed
            newest = None
        if newest:
            log.warning(
                "%s@%s is superseded by %s; pass --revision %s for the current version.",
                repo_id,
                revision,
                newest,
                newest,
            )
    ref = DatasetRef(repo_id, "hub", revision, sha, None, None, None)
    card = read_card(ref)
    xl = card.get("xlbench") or {}
    return DatasetRef(
        repo_id, "hub", revision, sha, xl.get("version"), xl.get("family"), None, xl.get("name")
    ), card


def _download(ref, filename: str) -> str:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return _read(
            lambda: hf_hub_download(ref.id, filename, repo_type="dataset", revision=ref.revision),
            ref.id,
            ref.revision,
        )
    except LocalEntryNotFoundError:
        if offline():
            raise RevisionError(
                f"{ref.id}@{ref.revision[:12]} is not in the local Hub cache; load it once online (or unset HF_HUB_OFFLINE)."
            ) from None
        raise RemoteError(
            f"Cannot download {filename} of {ref.id}@{ref.revision[:12]}; check the network and HF_ENDPOINT."
        ) from None


def read_card(ref) -> dict:
    """Return the YAML front matter of a pinned Hub dataset's card.

    Raises:
        RevisionError: offline and the pinned commit is not cached.
        SchemaError: the card has no parseable front matter.
    """
    return read_card_file(_download(ref, "README.md"))


@contextlib.contextmanager
def _damaged(ref, config: str, split: str, folder: str | None) -> Iterator[None]:
    """Turn ``datasets``' failure to read the downloaded files (a damaged parquet file) into one sentence."""
    from datasets.exceptions import DatasetGenerationError

    try:
        yield
    except DatasetGenerationError as err:
        if folder is not None:
            check_parquet_folder(folder)  # names the damaged file
        cause = err.__cause__ or err.__context__ or err
        first = " ".join(str(cause).split()).split(". ")[0].rstrip(".")[:160]
        # datasets prepares every split of a config at once: the damaged file may be another split's
        raise InputFileError(
            f"The data files of config {config} in {ref.id}@{ref.revision[:12]} cannot be read "
            f"({type(cause).__name__}: {first}); the published copy is damaged: "
            f"republish it, or delete it from the Hub cache and load it again."
        ) from None


def load_split(ref, config: str, split: str):
    """Load one split of a pinned Hub dataset, exactly at ``ref.revision``.

    Online this is ``load_dataset(repo, config, split=split, revision=sha)``.
    Offline it reads the Hub cache's snapshot folder of that very commit, since
    ``load_dataset(repo, revision=...)`` would fall back to the newest cache.

    Raises:
        RevisionError: offline and the split's files at that commit are not cached.
    """
    from datasets import load_dataset

    if not offline():
        with (
            _damaged(ref, config, split, None),
            _remote(
                ref.id, ref.revision, f"loading config {config} of {ref.id}@{ref.revision[:12]}"
            ),
        ):
            return load_dataset(ref.id, config, split=split, revision=ref.revision)
    if not is_sha(ref.revision):
        raise RevisionError(
            f"Offline, {ref.id} must be pinned to a commit sha, got {ref.revision!r}."
        )
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        folder = snapshot_download(
            ref.id, repo_type="dataset", revision=ref.revision, local_files_only=True
        )
    except (LocalEntryNotFoundError, FileNotFoundError) as err:
        raise RevisionError(
            f"Offline, {ref.id}@{ref.revision[:12]} is not in the local Hub cache "
            f"({err.__class__.__name__}); load it once online at that revision."
        ) from None
    try:
        with _damaged(ref, config, split, folder):
            return load_dataset(folder, config, split=split)
    except (LocalEntryNotFoundError, FileNotFoundError, SchemaError, ValueError) as err:
        raise RevisionError(
            f"Offline, {config}/{split} of {ref.id}@{ref.revision[:12]} is not in the local Hub cache "
            f"({err.__class__.__name__}); load it once online at that revision."
        ) from None
