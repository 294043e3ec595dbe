"""Thin adapter over ``huggingface_hub`` for publishing dataset folders.

It holds no dataset logic: it reads a repo's refs and files, creates repos,
commits, tags, and loads a revision back with ``datasets``. Every Hub or
network failure becomes a :class:`~evaluators.core.errors.RemoteError` whose
message never contains the token. The endpoint is ``HF_ENDPOINT``
(``huggingface_hub`` reads it once, at import).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.core.errors import RemoteError, RevisionError, UsageError, XlbenchError

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
    """Return ``text`` with ``token`` (and anything shaped like a Hub token) replaced by ``***``.

    >>> scrub("Bearer hf_abc failed", "hf_abc")
    'Bearer *** failed'
    >>> scrub("nothing secret", None)
    'nothing secret'
    """
    from evaluators.data.hubclient import scrub as _scrub

    return _scrub(text, token)


def local_oids(path: str | Path | bytes) -> set[str]:
    """Return the ids the Hub may report for a file: its sha256 (LFS) and its git blob sha1 (regular).

    >>> sorted(local_oids(b""))[0]
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    import hashlib

    data = path if isinstance(path, bytes) else Path(path).read_bytes()
    return {
        hashlib.sha256(data).hexdigest(),
        hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(),
    }


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
        """Turn Hub and network errors into one-sentence xlbench errors (see :mod:`evaluators.data.hubclient`)."""
        from evaluators.data.hubclient import hub_errors

        try:
            with hub_errors(action, repo_id, token=self._token, endpoint=self.endpoint):
                yield
        except (RuntimeError, ValueError) as err:
            # upload helpers wrap failures that are not HTTP ones in RuntimeError; keep the cause's class only
            cause = err.__cause__ or err
            detail = " ".join(str(err).split())[:200]
            raise RemoteError(
                scrub(
                    f"{action}: {detail} ({cause.__class__.__name__}); the same command can be run again.",
                    self._token,
                )
            ) from None

    def _retried(self, action: str, repo_id: str, call):
        """Run a call that is safe to repeat, retrying rate limits, 5xx and network faults (bounded)."""
        from evaluators.data.hubclient import with_retries

        with self.errors(action, repo_id):
            return with_retries(
                call, action, repo_id, token=self._token, endpoint=self.endpoint, log=log.warning
            )

    # -- reads (all retried: repeating a read is always safe) --------------------------------
    def state(self, repo_id: str) -> RemoteState | None:
        """Return the repo's ``main`` sha and tags, or ``None`` when it does not exist."""
        from huggingface_hub.errors import RepositoryNotFoundError

        def call():
            try:
                return self.api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
            except RepositoryNotFoundError:
                return None

        refs = self._retried("reading the repo's refs", repo_id, call)
        if refs is None:
            return None
        main = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        return RemoteState(main=main, tags={t.name: t.target_commit for t in refs.tags})

    def files(self, repo_id: str, revision: str) -> dict[str, RemoteFile]:
        """Return ``path -> RemoteFile`` for every file at ``revision``."""
        from huggingface_hub.hf_api import RepoFile

        def call():
            out = {}
            for e in self.api.list_repo_tree(
                repo_id, revision=revision, recursive=True, repo_type=REPO_TYPE
            ):
                if isinstance(e, RepoFile):
                    out[e.path] = RemoteFile(
                        e.path, e.lfs.sha256 if e.lfs else e.blob_id, e.lfs is not None
                    )
            return out

        return self._retried("listing the repo's files", repo_id, call)

    def read_text(self, repo_id: str, path: str, revision: str) -> str | None:
        """Return a text file at ``revision``, or ``None`` when it is absent."""
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

        def call():
            try:
                return hf_hub_download(
                    repo_id, path, repo_type=REPO_TYPE, revision=revision, token=self._token
                )
            except LocalEntryNotFoundError:
                raise  # not "absent": the Hub could not be asked (the cause is a network fault)
            except EntryNotFoundError:
                return None

        local = self._retried(f"reading {path}", repo_id, call)
        return None if local is None else Path(local).read_text(encoding="utf-8")

    def resolve(self, repo_id: str, revision: str) -> str:
        """Return the commit sha ``revision`` points to."""
        return self._retried(
            f"resolving {revision}",
            repo_id,
            lambda: self.api.dataset_info(repo_id, revision=revision).sha,
        )

    def holds(
        self, repo_id: str, revision: str, adds: dict[str, str | bytes], deletes: list[str]
    ) -> bool:
        """Return whether ``revision`` holds every file of ``adds`` with that content, and none of ``deletes``."""
        remote = self.files(repo_id, revision)
        for path, src in adds.items():
            if path not in remote or remote[path].oid not in local_oids(
                src if isinstance(src, bytes) else Path(src)
            ):
                return False
        return not any(p in remote for p in deletes)

    # -- writes ----------------------------------------------------------------------------
    def create_repo(self, repo_id: str, private: bool) -> None:
        """Create the dataset repo if it does not exist (repeatable: ``exist_ok``)."""
        self._retried(
            "creating the repo",
            repo_id,
            lambda: self.api.create_repo(
                repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True
            ),
        )

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
        fails, ``main`` is unchanged. A commit is not blindly repeated, since
        the Hub may have applied it and lost the answer: after a fault worth
        repeating, ``main`` is read again; if it moved to a commit holding
        exactly these files, that commit is the result; if it is still
        ``parent``, the commit is repeated (bounded, honouring ``Retry-After``).

        Raises:
            RemoteError: the commit failed; the message says whether ``main`` is unchanged.
        """
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        from evaluators.data import hubclient

        action = "uploading the commit"
        attempt = 1
        while True:
            ops: list[CommitOperationAdd | CommitOperationDelete] = [
                CommitOperationDelete(path_in_repo=p) for p in sorted(deletes)
            ]
            ops += [
                CommitOperationAdd(path_in_repo=p, path_or_fileobj=src)
                for p, src in sorted(adds.items())
            ]
            try:
                with self.errors(action, repo_id):
                    try:
                        info = self.api.create_commit(
                            repo_id,
                            ops,
                            commit_message=message,
                            commit_description=description,
                            repo_type=REPO_TYPE,
                            parent_commit=parent,
                        )
                        return info.oid
                    except Exception as err:
                        landed, delay = self._after_fault(
                            err, attempt, action, repo_id, parent, adds, deletes
                        )
                        if landed is not None:
                            return landed
            except RemoteError as err:
                try:
                    now = self.state(repo_id)
                except XlbenchError:
                    now = None  # cannot tell: say nothing about main rather than guess
                raise RemoteError(_unchanged_note(str(err), now, parent)) from None
            hubclient.sleep(delay)
            attempt += 1

    def _after_fault(
        self,
        err: Exception,
        attempt: int,
        action: str,
        repo_id: str,
        parent: str | None,
        adds: dict[str, str | bytes],
        deletes: list[str],
    ) -> tuple[str | None, float]:
        """Decide what a failed commit call means; raise ``err`` unless it is worth repeating.

        Returns ``(sha, 0)`` when ``main`` holds the commit anyway (the answer was lost),
        ``(None, delay)`` when ``main`` is unchanged and the commit may be repeated.
        """
        from evaluators.data import hubclient

        fault = hubclient.classify(err)
        if fault is None or not fault.retryable:
            raise err
        delay = hubclient.wait_for(fault, attempt)
        now = self.state(repo_id)
        head = now.main if now else None
        if head != parent and head is not None and self.holds(repo_id, head, adds, deletes):
            log.warning(
                "%s: the answer was lost, but main holds the commit (%s)", action, head[:12]
            )
            return head, 0
        if head != parent or delay is None:
            raise err
        log.warning(
            "%s: %s; main is unchanged, retrying in %g s", action, fault.name or fault.status, delay
        )
        return None, delay

    def tag(self, repo_id: str, tag: str, revision: str, message: str) -> None:
        """Tag ``revision``; a tag already on ``revision`` (an earlier attempt whose answer was lost) is fine.

        Raises:
            RevisionError: the tag exists on another commit (a concurrent publish).
            RemoteError: the Hub failed.
        """
        from huggingface_hub.errors import HfHubHTTPError

        def call():
            try:
                self.api.create_tag(
                    repo_id, tag=tag, revision=revision, tag_message=message, repo_type=REPO_TYPE
                )
            except HfHubHTTPError as err:
                if err.response is None or err.response.status_code != 409:
                    raise
                now = self.state(repo_id)
                target = (now.tags if now else {}).get(tag)
                if target != revision:
                    raise RevisionError(
                        f"creating tag {tag}: {repo_id} already has {tag} on commit {str(target)[:12]}, not on "
                        f"{revision[:12]}; another publish ran at the same time, so check the repo before retrying."
                    ) from None

        self._retried(f"creating tag {tag}", repo_id, call)

    def delete_tag(self, repo_id: str, tag: str) -> None:
        """Delete a tag (a tag already gone is fine)."""
        from huggingface_hub.errors import RevisionNotFoundError

        def call():
            try:
                self.api.delete_tag(repo_id, tag=tag, repo_type=REPO_TYPE)
            except RevisionNotFoundError:
                pass

        self._retried(f"deleting tag {tag}", repo_id, call)

    def load_config(self, repo_id: str, config: str, revision: str, cache_dir: str):
        """Load one config at ``revision`` with ``datasets.load_dataset`` (a ``DatasetDict``); retried."""
        from datasets import load_dataset
        from datasets.exceptions import DatasetsError

        if not revision:
            raise UsageError("A revision is required to load a published dataset back.")

        def call():
            try:
                return load_dataset(
                    repo_id,
                    config,
                    revision=revision,
                    cache_dir=cache_dir,
                    token=self._token,
                    download_mode="force_redownload",  # a stale or corrupt cached copy must not verify
                )
            except DatasetsError as err:  # e.g. split sizes differ from the card's dataset_info
                raise RemoteError(
                    f"loading {repo_id} {config}@{revision[:12]} back: datasets rejected what the Hub served "
                    f"({err.__class__.__name__})."
                ) from None

        return self._retried(f"loading {config}@{revision[:12]} back", repo_id, call)


def _unchanged_note(message: str, now: RemoteState | None, parent: str | None) -> str:
    """Add to a failed commit's message whether ``main`` is unchanged (nothing published).

    >>> _unchanged_note("uploading the commit: the Hub failed (HTTP 500); run it again.", RemoteState("a"), "a")
    'uploading the commit: the Hub failed (HTTP 500); nothing was published (main is unchanged), so run it again.'
    """
    if now is None or now.main != parent:
        return message
    head, sep, fix = message.rpartition("; ")
    if not sep:
        return message.rstrip(".") + "; nothing was published (main is unchanged)."
    return f"{head}; nothing was published (main is unchanged), so {fix}"
