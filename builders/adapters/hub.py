"""Thin adapter over ``huggingface_hub`` for publishing dataset folders.

It holds no dataset logic: it reads a repo's refs and files, creates repos,
commits, tags, and loads a revision back with ``datasets``. Every Hub or
network failure becomes a :class:`~evaluators.errors.RemoteError` whose
message never contains the token. The endpoint is ``HF_ENDPOINT``
(``huggingface_hub`` reads it once, at import).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.errors import RemoteError, RevisionError, UsageError

log = logging.getLogger("xlbench.hub")
REPO_TYPE = "dataset"


@dataclass(frozen=True)
class RemoteFile:
    """A file at a revision: its path, and its sha256 (LFS) or git blob id (regular)."""

    path: str
    oid: str
    lfs: bool


@dataclass
class RemoteState:
    """What a dataset repo holds now."""

    main: str | None
    tags: dict[str, str] = field(default_factory=dict)


def find_token() -> str | None:
    """Return the token from ``HF_TOKEN`` or the ``huggingface_hub`` login, else ``None``."""
    from huggingface_hub import get_token

    return get_token()


def scrub(text: str, token: str | None) -> str:
    """Return ``text`` with ``token`` replaced by ``***``.

    >>> scrub("Bearer hf_abc failed", "hf_abc")
    'Bearer *** failed'
    >>> scrub("nothing secret", None)
    'nothing secret'
    """
    return text.replace(token, "***") if token else text


class HubClient:
    """One authenticated connection to the Hub (or any ``HF_ENDPOINT``).

    Args:
        token: a user access token with write access for publishing.
    """

    def __init__(self, token: str | None):
        from huggingface_hub import HfApi

        self._token = token
        self.api = HfApi(token=token)
        self.endpoint = self.api.endpoint

    @contextlib.contextmanager
    def errors(self, action: str, repo_id: str) -> Iterator[None]:
        """Turn Hub and network errors into one-sentence :class:`RemoteError`s."""
        import httpx
        from huggingface_hub.errors import (
            HfHubHTTPError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        try:
            yield
        except RevisionNotFoundError:
            raise RevisionError(scrub(f"{action}: {repo_id} has no such revision; list its tags with 'hf' or the Hub page.", self._token)) from None
        except RepositoryNotFoundError:
            raise RemoteError(
                f"{action}: dataset repo {repo_id} does not exist or the token cannot see it; check --repo and HF_TOKEN."
            ) from None
        except HfHubHTTPError as err:
            status = err.response.status_code if err.response is not None else None
            if status == 401:
                raise RemoteError(
                    f"{action}: the Hub at {self.endpoint} rejected the token (401 Unauthorized); set HF_TOKEN to a valid "
                    f"token with write access or run 'hf auth login'."
                ) from None
            if status == 403:
                raise RemoteError(f"{action}: the token may not write to {repo_id} (403 Forbidden); use a token with write access to that namespace.") from None
            if status == 412:
                raise RemoteError(f"{action}: {repo_id} changed while publishing (412); run the same command again.") from None
            detail = scrub((err.server_message or "").strip().splitlines()[0] if err.server_message else "", self._token)
            raise RemoteError(
                f"{action}: the Hub answered HTTP {status}{' (' + detail[:120] + ')' if detail else ''}; nothing was "
                f"published if the commit failed, so the same command can be run again."
            ) from None
        except httpx.HTTPError as err:
            raise RemoteError(
                f"{action}: cannot reach the Hub at {self.endpoint} ({err.__class__.__name__}); check the network or HF_ENDPOINT."
            ) from None
        except (RuntimeError, ValueError, OSError) as err:
            # upload helpers wrap HTTP failures in RuntimeError("Error while uploading ..."); keep the cause's class only
            cause = err.__cause__ or err
            detail = " ".join(str(err).split())[:200]
            raise RemoteError(
                scrub(f"{action}: {detail} ({cause.__class__.__name__}); the same command can be run again.", self._token)
            ) from None

    # -- reads -----------------------------------------------------------------------------
    def state(self, repo_id: str) -> RemoteState | None:
        """Return the repo's ``main`` sha and tags, or ``None`` when it does not exist."""
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            refs = self.api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
        except RepositoryNotFoundError:
            return None
        except Exception:
            with self.errors("reading the repo's refs", repo_id):
                raise
        main = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        return RemoteState(main=main, tags={t.name: t.target_commit for t in refs.tags})

    def files(self, repo_id: str, revision: str) -> dict[str, RemoteFile]:
        """Return ``path -> RemoteFile`` for every file at ``revision``."""
        from huggingface_hub.hf_api import RepoFile

        with self.errors("listing the repo's files", repo_id):
            entries = self.api.list_repo_tree(repo_id, revision=revision, recursive=True, repo_type=REPO_TYPE)
            out = {}
            for e in entries:
                if isinstance(e, RepoFile):
                    out[e.path] = RemoteFile(e.path, e.lfs.sha256 if e.lfs else e.blob_id, e.lfs is not None)
        return out

    def read_text(self, repo_id: str, path: str, revision: str) -> str | None:
        """Return a text file at ``revision``, or ``None`` when it is absent."""
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError

        try:
            local = hf_hub_download(repo_id, path, repo_type=REPO_TYPE, revision=revision, token=self._token)
        except EntryNotFoundError:
            return None
        except Exception:
            with self.errors(f"reading {path}", repo_id):
                raise
        return Path(local).read_text(encoding="utf-8")

    # -- writes ----------------------------------------------------------------------------
    def create_repo(self, repo_id: str, private: bool) -> None:
        """Create the dataset repo if it does not exist."""
        with self.errors("creating the repo", repo_id):
            self.api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)

    def commit(
        self,
        repo_id: str,
        adds: dict[str, str | bytes],
        deletes: list[str],
        message: str,
        description: str,
        parent: str | None,
    ) -> str:
        """Commit ``adds`` (path -> local file or bytes) and ``deletes`` to ``main`` in ONE commit; return its sha.

        The Hub applies a commit atomically: if any upload or the commit call
        fails, ``main`` is unchanged. Unchanged files are skipped by the client;
        when nothing changed, the current ``main`` sha is returned.
        """
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        ops = [CommitOperationDelete(path_in_repo=p) for p in sorted(deletes)]
        ops += [CommitOperationAdd(path_in_repo=p, path_or_fileobj=src) for p, src in sorted(adds.items())]
        with self.errors("uploading the commit", repo_id):
            info = self.api.create_commit(
                repo_id,
                ops,
                commit_message=message,
                commit_description=description,
                repo_type=REPO_TYPE,
                parent_commit=parent,
            )
        return info.oid

    def tag(self, repo_id: str, tag: str, revision: str, message: str) -> None:
        """Tag ``revision``."""
        with self.errors(f"creating tag {tag}", repo_id):
            self.api.create_tag(repo_id, tag=tag, revision=revision, tag_message=message, repo_type=REPO_TYPE)

    def delete_tag(self, repo_id: str, tag: str) -> None:
        """Delete a tag (only used to withdraw a tag this run created and could not verify)."""
        with self.errors(f"deleting tag {tag}", repo_id):
            self.api.delete_tag(repo_id, tag=tag, repo_type=REPO_TYPE)

    def resolve(self, repo_id: str, revision: str) -> str:
        """Return the commit sha ``revision`` points to."""
        with self.errors(f"resolving {revision}", repo_id):
            return self.api.dataset_info(repo_id, revision=revision).sha

    def load_config(self, repo_id: str, config: str, revision: str, cache_dir: str):
        """Load one config at ``revision`` with ``datasets.load_dataset`` (a ``DatasetDict``)."""
        from datasets import load_dataset

        if not revision:
            raise UsageError("A revision is required to load a published dataset back.")
        from datasets.exceptions import DatasetsError

        with self.errors(f"loading {config}@{revision} back", repo_id):
            try:
                return load_dataset(
                    repo_id, config, revision=revision, cache_dir=cache_dir, token=self._token,
                    download_mode="force_redownload",  # a stale or corrupt cached copy must not verify
                )
            except DatasetsError as err:  # e.g. split sizes differ from the card's dataset_info
                raise RemoteError(
                    f"loading {repo_id} {config}@{revision} back: datasets rejected what the Hub served ({err.__class__.__name__})."
                ) from None
