"""Resolve and read xlbench datasets on the Hugging Face Hub (or any HF_ENDPOINT)."""

from __future__ import annotations

import os

from evaluators.errors import RemoteError, RevisionError

_SHA_LEN = 40


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in {"1", "true", "yes"} or os.environ.get(
        "HF_DATASETS_OFFLINE", "0"
    ).lower() in {"1", "true", "yes"}


def resolve(repo_id: str, revision: str | None):
    """Resolve ``revision`` (tag, branch, sha or ``None`` for main) to a commit sha.

    Offline, ``datasets`` may silently serve the newest cached revision instead
    of the requested one, so a tag or branch cannot be trusted there: only a
    full 40-character sha is accepted offline.

    Raises:
        RevisionError: offline with a non-sha revision, or the revision does not exist.
        RemoteError: the Hub could not be reached or refused the request.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    from evaluators.data import DatasetRef, read_card_yaml

    if _offline():
        if not (revision and len(revision) == _SHA_LEN and all(c in "0123456789abcdef" for c in revision)):
            raise RevisionError(
                f"HF_HUB_OFFLINE is set and revision {revision or 'main'!r} of {repo_id} is not a full commit sha; "
                f"offline, datasets may silently load another cached version, so pass --revision <40-char sha>."
            )
        sha = revision
    else:
        try:
            info = HfApi().dataset_info(repo_id, revision=revision)
        except RevisionNotFoundError as err:
            raise RevisionError(f"Revision {revision!r} does not exist in {repo_id}; list tags with 'xlbench list --repo {repo_id}'.") from err
        except RepositoryNotFoundError as err:
            raise RevisionError(f"Dataset repo {repo_id!r} does not exist or is private; check the id and HF_TOKEN.") from err
        except HfHubHTTPError as err:
            raise RemoteError(f"The Hub refused to resolve {repo_id}@{revision or 'main'} ({err.__class__.__name__}).") from err
        sha = info.sha
    from huggingface_hub import hf_hub_download

    card_path = hf_hub_download(repo_id, "README.md", repo_type="dataset", revision=sha)
    with open(card_path, encoding="utf-8") as fh:
        card = read_card_yaml(fh.read())
    xl = card.get("xlbench") or {}
    return DatasetRef(repo_id, "hub", revision, sha, xl.get("version"), xl.get("family"), None)


def read_card(ref) -> dict:
    """Return the YAML front matter of a pinned Hub dataset's card."""
    from huggingface_hub import hf_hub_download

    from evaluators.data import read_card_yaml

    path = hf_hub_download(ref.id, "README.md", repo_type="dataset", revision=ref.revision)
    with open(path, encoding="utf-8") as fh:
        return read_card_yaml(fh.read())
