"""The one Hub client (reads AND writes) and the one place that turns Hub and network exceptions into xlbench errors.

:class:`HubClient` reads a repo's refs and files, creates repos, commits, tags
and loads a revision back (publishing, :mod:`builders.release.publish`; it holds
no dataset logic); :mod:`evaluators.data.hub` resolves and loads datasets for
scoring. Both go through the fault mapping below and the one token scrub
(:func:`scrub`).

``huggingface_hub`` 2.x talks HTTP through ``httpx2``, whose exceptions are
*not* subclasses of ``httpx.HTTPError``; ``datasets`` adds its own tree, and
upload helpers wrap the real cause in a ``RuntimeError``. Code that catches one
family and lets the others escape ends in a traceback. Everything that talks to
the Hub (loading, resolving, publishing) goes through :func:`hub_errors`::

    with hub_errors("load dataset org/x", repo_id="org/x", revision="v1.0.0"):
        load_dataset("org/x", "deu_Latn-eng_Latn", revision="v1.0.0")

and every failure becomes ONE sentence ``"<action>: <what happened>; <what to do>."``
with an exit code (1 for a remote failure, 2 for a bad id or revision). The token
is never part of a message. :func:`with_retries` repeats a call on the faults worth
repeating (429 honouring ``Retry-After``, 5xx, dropped connections, timeouts),
a bounded number of times. Clients are imported lazily, so importing this module
costs nothing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from evaluators.core.errors import (
    InputFileError,
    RemoteError,
    RevisionError,
    UsageError,
    XlbenchError,
)

T = TypeVar("T")
log = logging.getLogger("xlbench.hub")

#: Attempts of one retried call (the first one included).
ATTEMPTS = 4
#: First backoff in seconds for a 5xx or a network fault; doubled each time (1, 2, 4 s).
BACKOFF_S = 1.0
#: The longest ``Retry-After`` that is waited for; a longer one fails at once and says when to retry.
MAX_WAIT_S = 60.0
#: Statuses that say "try again later": the request was not (or may not have been) carried out.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Tokens in the Hub's format, scrubbed from every message even when the caller did not name the token.
_TOKEN_RE = re.compile(r"hf_[A-Za-z0-9]{16,}")

#: ``time.sleep``, replaceable by tests that want to see the waits without waiting.
sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True)
class Fault:
    """What a client exception means: its kind, HTTP status, server detail and ``Retry-After``.

    ``kind`` is one of ``offline``, ``connect``, ``timeout``, ``dropped``,
    ``not-cached``, ``repo-not-found``, ``gated``, ``revision-not-found``, ``entry-not-found``,
    ``http`` and ``datasets``.
    """

    kind: str
    status: int | None = None
    detail: str = ""
    retry_after: float | None = None
    name: str = ""

    @property
    def retryable(self) -> bool:
        """Whether repeating the same request may succeed (rate limit, server error, dropped connection).

        A refused connection is not repeated: it almost always means a wrong
        ``HF_ENDPOINT`` or no network, which a few seconds do not change.
        """
        if self.kind in ("timeout", "dropped"):
            return True
        return self.kind == "http" and self.status in RETRY_STATUSES


def scrub(text: str, token: str | None = None) -> str:
    """Return ``text`` without ``token``, ``HF_TOKEN`` or anything shaped like a Hub token.

    >>> scrub("Bearer hf_abcdefghijklmnopqrstuvwx failed")
    'Bearer *** failed'
    >>> scrub("my secret failed", "secret")
    'my *** failed'
    """
    for secret in (token, os.environ.get("HF_TOKEN")):
        if secret:
            text = text.replace(secret, "***")
    return _TOKEN_RE.sub("***", text)


def parse_retry_after(value: str | None) -> float | None:
    """Return the seconds of a ``Retry-After`` header (delay-seconds form), else ``None``.

    >>> parse_retry_after("3"), parse_retry_after(" 1.5 "), parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")
    (3.0, 1.5, None)
    """
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None  # the HTTP-date form: rare on the Hub; treated as "no hint"
    return max(0.0, seconds)


def _chain(err: BaseException) -> Iterator[BaseException]:
    """Yield ``err`` and its causes/contexts (upload helpers wrap the real failure)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [err]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen or len(seen) > 8:
            continue
        seen.add(id(e))
        yield e
        todo += [e.__cause__, e.__context__]


def _first_line(text: str | None) -> str:
    text = " ".join((text or "").strip().splitlines()[:1])
    return text[:120]


def _status_fault(e: BaseException) -> Fault | None:
    response = getattr(e, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int):
        return None
    headers = getattr(response, "headers", None) or {}
    try:
        after = parse_retry_after(headers.get("Retry-After") or headers.get("retry-after"))
    except AttributeError:
        after = None
    detail = _first_line(getattr(e, "server_message", None) or "")
    return Fault("http", status, detail, after, type(e).__name__)


def classify(err: BaseException) -> Fault | None:
    """Return what a client exception means, or ``None`` when it is not a Hub or network failure.

    >>> classify(ConnectionRefusedError(111, "refused")).kind
    'connect'
    >>> classify(ValueError("x")) is None
    True
    """
    hf = _import("huggingface_hub.errors")
    ds = _import("datasets.exceptions")
    net = [m for m in (_import("httpx2"), _import("httpx")) if m is not None]
    req = _import("requests.exceptions")
    not_cached = None
    for e in _chain(err):
        name = type(e).__name__
        if hf is not None:
            if isinstance(e, hf.LocalEntryNotFoundError):
                # a download that could not reach the Hub and found no cached copy: the cause says why
                not_cached = not_cached or Fault("not-cached", name=name)
                continue
            if isinstance(e, hf.OfflineModeIsEnabled):
                # offline, a download that found no cached copy: the cache is the problem, not the mode
                return not_cached or Fault("offline", name=name)
            if isinstance(e, hf.GatedRepoError):
                return Fault("gated", 403, name=name)
            if isinstance(e, hf.RepositoryNotFoundError):
                return Fault("repo-not-found", 404, name=name)
            if isinstance(e, hf.RevisionNotFoundError):
                return Fault("revision-not-found", 404, name=name)
            if isinstance(e, hf.EntryNotFoundError):
                return Fault("entry-not-found", 404, name=name)
            if isinstance(e, hf.HfHubHTTPError):
                return _status_fault(e) or Fault("http", None, _first_line(str(e)), name=name)
        if ds is not None and isinstance(e, ds.DatasetNotFoundError):
            # datasets wraps the Hub's GatedRepoError in DatasetNotFoundError("... is a gated dataset ...").
            if "gated dataset" in str(e):
                return Fault("gated", 403, name=name)
            return Fault("repo-not-found", 404, name=name)
        for mod in net:
            if isinstance(e, mod.HTTPStatusError):
                return _status_fault(e)
            if isinstance(e, mod.TimeoutException):
                return Fault("timeout", name=name)
            if isinstance(e, mod.ConnectError):
                return Fault("connect", name=name)
            if isinstance(
                e, mod.HTTPError
            ):  # RemoteProtocolError, ReadError: the peer went away mid-answer
                return Fault("dropped", name=name)
        if req is not None:
            if isinstance(e, req.HTTPError) and _status_fault(e):
                return _status_fault(e)
            if isinstance(e, req.Timeout):
                return Fault("timeout", name=name)
            if isinstance(e, req.ConnectionError):
                return Fault("connect", name=name)
        if isinstance(e, TimeoutError):
            return Fault("timeout", name=name)
        if isinstance(e, ConnectionRefusedError):
            return Fault("connect", name=name)
        if isinstance(e, ConnectionError):
            return Fault("dropped", name=name)
    return not_cached


def _import(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _endpoint() -> str:
    hf = _import("huggingface_hub.constants")
    return (
        getattr(hf, "ENDPOINT", None) or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    )


def to_error(
    fault: Fault,
    action: str,
    repo_id: str | None = None,
    revision: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
) -> XlbenchError:
    # Long on purpose: one branch per fault kind and HTTP status, a mapping table of messages read top to bottom.
    """Return the one-sentence xlbench error for ``fault`` during ``action``.

    >>> str(to_error(Fault("http", 503), "creating tag v1.0.0", "org/x", endpoint="https://hub"))
    'creating tag v1.0.0: the Hub at https://hub failed (HTTP 503); wait a minute and run the same command again.'
    >>> type(to_error(Fault("revision-not-found", 404), "load org/x", "org/x", "v9")).__name__
    'RevisionError'
    >>> str(to_error(Fault("revision-not-found", 404), "", "org/x", "v9"))
    "Revision 'v9' does not exist in org/x; pass a version tag like v1.0.0 or a commit sha."
    >>> str(to_error(Fault("repo-not-found", 404), "", "org/x"))
    "Dataset repo 'org/x' does not exist or is private; check the id and HF_TOKEN."
    """
    where = endpoint or _endpoint()
    repo = repo_id or "the repo"
    rev = f"@{revision}" if revision else ""
    status = fault.status
    kind = fault.kind
    if kind == "offline":
        err: XlbenchError = RevisionError(
            f"{action}: HF_HUB_OFFLINE is set, so the Hub is not contacted; unset it, or pass a local folder "
            f"or a commit sha already in the Hub cache."
        )
    elif kind == "connect":
        err = RemoteError(
            f"{action}: cannot reach the Hub at {where} ({fault.name}); check the network or HF_ENDPOINT."
        )
    elif kind == "timeout":
        err = RemoteError(
            f"{action}: the Hub at {where} did not answer in time ({fault.name}); check the network and run the same command again."
        )
    elif kind == "dropped":
        err = RemoteError(
            f"{action}: the connection to the Hub at {where} dropped ({fault.name}); run the same command again."
        )
    elif kind == "gated":
        err = RemoteError(
            f"{action}: {repo} is gated; accept its conditions on the Hub page and set HF_TOKEN to that account's token."
        )
    elif kind == "repo-not-found":
        named = repr(repo_id) if repo_id else "the repo"
        err = RevisionError(
            f"{action}: dataset repo {named} does not exist or is private; check the id and HF_TOKEN."
        )
    elif kind == "revision-not-found":
        err = RevisionError(
            f"{action}: revision {revision or 'main'!r} does not exist in {repo}; pass a version tag like v1.0.0 or a commit sha."
        )
    elif kind == "not-cached":
        short = f"@{revision[:12]}" if revision else ""
        err = RevisionError(
            f"{action}: {repo}{short} is not in the local Hub cache; load it once online (or unset HF_HUB_OFFLINE)."
        )
    elif kind == "entry-not-found":
        err = InputFileError(
            f"{action}: {repo}{rev} lacks a file it should hold ({fault.name}); check the revision, or republish the folder."
        )
    elif status == 401:
        err = RemoteError(
            f"{action}: the Hub at {where} rejected the token (401 Unauthorized); set HF_TOKEN to a valid "
            f"token with write access or run 'hf auth login'."
        )
    elif status == 403:
        err = RemoteError(
            f"{action}: the token may not access {repo} (403 Forbidden); use a token with access to that namespace."
        )
    elif status == 404:
        err = RevisionError(
            f"{action}: the Hub has no {repo}{rev} (404); check the id, the revision and HF_TOKEN."
        )
    elif status == 409:
        err = RemoteError(
            f"{action}: {repo} is in conflict (409{', ' + fault.detail if fault.detail else ''}); run the same command again."
        )
    elif status == 412:
        err = RemoteError(
            f"{action}: {repo} changed while publishing (412); run the same command again."
        )
    elif status == 429:
        wait = (
            f"retry after {fault.retry_after:g} s"
            if fault.retry_after is not None
            else "wait a few minutes"
        )
        err = RemoteError(
            f"{action}: the Hub at {where} rate-limited the requests (429); {wait} and run the same command again."
        )
    elif status is not None and status >= 500:
        err = RemoteError(
            f"{action}: the Hub at {where} failed (HTTP {status}); wait a minute and run the same command again."
        )
    else:
        detail = f" ({fault.detail})" if fault.detail else ""
        err = RemoteError(
            f"{action}: the Hub answered HTTP {status}{detail}; check the request and run the same command again."
        )
    text = str(err) if action else str(err)[2:]
    if not action and not (
        repo_id and text.startswith(repo_id)
    ):  # the problem alone, as a sentence
        text = text[:1].upper() + text[1:]
    return type(err)(scrub(text, token))


@contextlib.contextmanager
def hub_errors(
    action: str,
    repo_id: str | None = None,
    revision: str | None = None,
    *,
    token: str | None = None,
    endpoint: str | None = None,
) -> Iterator[None]:
    """Translate Hub, ``datasets`` and network exceptions raised inside the block into xlbench errors.

    ``action`` opens the message (``"loading org/x: ..."``); with ``""`` the
    message is the problem alone. ``token`` is scrubbed from it (``HF_TOKEN``
    and anything shaped like a Hub token always are).
    xlbench errors pass through unchanged; exceptions that are not remote
    failures (bugs, local ``OSError``) propagate as they are.

    Raises:
        RemoteError: the Hub could not be reached, refused or failed the request.
        RevisionError: the repo or revision does not exist, or offline mode forbids the call.
        InputFileError: the revision lacks an expected file.
    """
    check_endpoint()  # a malformed HF_ENDPOINT is a setting to fix, not a dropped connection
    try:
        yield
    except XlbenchError:
        raise
    except Exception as err:
        fault = classify(err)
        if fault is None:
            raise
        raise to_error(fault, action, repo_id, revision, endpoint, token) from None


def check_endpoint() -> str:
    """Return the Hub endpoint after checking it is an http(s) URL with a host (``HF_ENDPOINT``).

    huggingface_hub reads ``HF_ENDPOINT`` as it is; ``not a url`` failed only at the first
    request, as "the connection dropped", retried four times.

    Raises:
        UsageError: ``HF_ENDPOINT`` is not an http(s) URL.
    """
    from urllib.parse import urlsplit

    endpoint = _endpoint()
    parts = urlsplit(endpoint)
    if (
        parts.scheme not in ("http", "https")
        or not parts.netloc
        or any(c.isspace() for c in endpoint)
    ):
        raise UsageError(
            f"HF_ENDPOINT {endpoint!r} is not an http(s) URL; set it to the Hub's address "
            f"(e.g. https://huggingface.co) or unset it."
        )
    return endpoint


def check_repo_id(repo_id: str, flag: str = "--repo") -> str:
    """Return ``repo_id`` if huggingface_hub's own check accepts it as ``namespace/name``.

    >>> check_repo_id("my-org/xlbench-bucc")
    'my-org/xlbench-bucc'

    Raises:
        UsageError: not ``org/name`` or refused by ``huggingface_hub.utils.validate_repo_id``
            (``--``, ``..``, a newline, over 96 characters ...).
    """
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    if not isinstance(repo_id, str) or repo_id.count("/") != 1:
        raise UsageError(f"{flag} must look like 'org/name', got {repo_id!r}.")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise UsageError(
            f"{flag} {repo_id!r} is not a Hub repo id: {' '.join(str(err).split())}"
        ) from None
    return repo_id


def wait_for(fault: Fault, attempt: int) -> float | None:
    """Return the seconds to wait before attempt ``attempt + 1``, or ``None`` to give up.

    A 429 waits for its ``Retry-After`` (when it is at most :data:`MAX_WAIT_S`);
    other retryable faults back off exponentially from :data:`BACKOFF_S`.

    >>> wait_for(Fault("http", 429, retry_after=2.0), 1), wait_for(Fault("http", 503), 2)
    (2.0, 2.0)
    >>> wait_for(Fault("http", 404), 1) is None, wait_for(Fault("http", 429, retry_after=600.0), 1) is None
    (True, True)
    """
    if not fault.retryable or attempt >= ATTEMPTS:
        return None
    if fault.retry_after is not None:
        return fault.retry_after if fault.retry_after <= MAX_WAIT_S else None
    return BACKOFF_S * 2 ** (attempt - 1)


def with_retries(
    call: Callable[[], T],
    action: str,
    repo_id: str | None = None,
    revision: str | None = None,
    *,
    token: str | None = None,
    endpoint: str | None = None,
    log: Callable[[str], None] | None = None,
) -> T:
    """Return ``call()``, repeating it on rate limits, server errors and network faults (bounded).

    Only for calls that are safe to repeat (reads, or writes whose effect a repeat
    cannot double). The last failure is translated like :func:`hub_errors` does.

    Raises:
        RemoteError: still failing after :data:`ATTEMPTS` attempts, or a fault not worth repeating.
        RevisionError: as :func:`hub_errors`.
    """
    check_endpoint()
    attempt = 1
    while True:
        try:
            return call()
        except XlbenchError:
            raise
        except Exception as err:
            fault = classify(err)
            if fault is None:
                raise
            delay = wait_for(fault, attempt)
            if delay is None:
                raise to_error(fault, action, repo_id, revision, endpoint, token) from None
            if log is not None:
                log(
                    f"{action}: {fault.name or fault.kind} {fault.status or ''}".rstrip()
                    + f"; retrying in {delay:g} s (attempt {attempt + 1}/{ATTEMPTS})"
                )
            sleep(delay)
            attempt += 1


# -- the client: reads and writes (publishing) ---------------------------------------------------
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
        """Turn Hub and network errors into one-sentence xlbench errors (:func:`hub_errors`)."""
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
            sleep(delay)
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
        fault = classify(err)
        if fault is None or not fault.retryable:
            raise err
        delay = wait_for(fault, attempt)
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


__all__ = [
    "Fault",
    "HubClient",
    "RemoteFile",
    "RemoteState",
    "classify",
    "find_token",
    "hub_errors",
    "local_oids",
    "parse_retry_after",
    "scrub",
    "to_error",
    "wait_for",
    "with_retries",
]
