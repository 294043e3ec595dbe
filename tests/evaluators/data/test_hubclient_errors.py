"""evaluators.data.hubclient: every client exception family maps to one xlbench sentence; the token never shows."""

from __future__ import annotations

import httpx2
import pytest
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from evaluators.core.errors import InputFileError, RemoteError, RevisionError
from evaluators.data import hubclient
from evaluators.data.hubclient import hub_errors, with_retries

HUB = "http://hub.test"
TOKEN = "hf_xlbenchFAKEtokenDoNotLeak0123456789"


def _response(status: int, headers: dict | None = None) -> httpx2.Response:
    return httpx2.Response(
        status, headers=headers or {}, request=httpx2.Request("GET", f"{HUB}/api/x")
    )


def _http(cls, status: int, headers: dict | None = None):
    return cls(f"{status} error for {HUB} with token {TOKEN}", response=_response(status, headers))


def _raise(err: BaseException):
    with hub_errors("load dataset org/x", "org/x", "v1.0.0", endpoint=HUB, token=TOKEN):
        raise err


def _wrapped(cause: BaseException) -> RuntimeError:
    try:
        raise RuntimeError("Error while uploading 'data/x.parquet' to the Hub.") from cause
    except RuntimeError as err:
        return err


@pytest.mark.parametrize(
    ("err", "kind", "words"),
    [
        (
            httpx2.ConnectError("[Errno 111] Connection refused"),
            RemoteError,
            "cannot reach the Hub at http://hub.test (ConnectError)",
        ),
        (httpx2.ReadTimeout("timed out"), RemoteError, "did not answer in time (ReadTimeout)"),
        (
            httpx2.RemoteProtocolError("Server disconnected"),
            RemoteError,
            "connection to the Hub at http://hub.test dropped",
        ),
        (httpx2.ReadError("reset"), RemoteError, "dropped (ReadError)"),
        (ConnectionResetError(104, "reset"), RemoteError, "dropped"),
        (TimeoutError("slow"), RemoteError, "did not answer in time"),
        (OfflineModeIsEnabled("offline"), RevisionError, "HF_HUB_OFFLINE is set"),
        (
            _http(RepositoryNotFoundError, 404),
            RevisionError,
            "dataset repo 'org/x' does not exist or is private",
        ),
        (_http(GatedRepoError, 403), RemoteError, "org/x is gated"),
        (
            _http(RevisionNotFoundError, 404),
            RevisionError,
            "revision 'v1.0.0' does not exist in org/x",
        ),
        (_http(HfHubHTTPError, 401), RemoteError, "rejected the token (401 Unauthorized)"),
        (_http(HfHubHTTPError, 403), RemoteError, "may not access org/x (403 Forbidden)"),
        (_http(HfHubHTTPError, 412), RemoteError, "org/x changed while publishing (412)"),
        (
            _http(HfHubHTTPError, 429, {"Retry-After": "30"}),
            RemoteError,
            "rate-limited the requests (429); retry after 30 s",
        ),
        (_http(HfHubHTTPError, 503), RemoteError, "failed (HTTP 503); wait a minute"),
        (_wrapped(_http(HfHubHTTPError, 500)), RemoteError, "failed (HTTP 500)"),
        (_wrapped(httpx2.ConnectError("refused")), RemoteError, "cannot reach the Hub"),
        (
            LocalEntryNotFoundError("not cached"),
            RevisionError,
            "org/x@v1.0.0 is not in the local Hub cache; load it once online",
        ),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else None,
)
def test_each_exception_family_is_one_sentence(err, kind, words):
    with pytest.raises(kind) as raised:
        _raise(err)
    message = str(raised.value)
    assert message.startswith("load dataset org/x: ") and message.endswith(".")
    assert words in message
    assert TOKEN not in message and "\n" not in message
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_entry_not_found_with_a_network_cause_names_the_network():
    try:
        try:
            raise httpx2.ConnectError("refused")
        except httpx2.ConnectError as cause:
            raise LocalEntryNotFoundError(
                "cannot find the requested files in the local cache"
            ) from cause
    except LocalEntryNotFoundError as err:
        with pytest.raises(RemoteError, match="cannot reach the Hub"):
            _raise(err)


def test_offline_cache_miss_names_the_cache():
    try:
        try:
            raise OfflineModeIsEnabled("offline")
        except OfflineModeIsEnabled as cause:
            raise LocalEntryNotFoundError(
                "cannot find the requested files in the local cache"
            ) from cause
    except LocalEntryNotFoundError as err:
        with pytest.raises(RevisionError) as raised:
            with hub_errors("", "org/x", "f" * 40):
                raise err
    assert (
        str(raised.value)
        == "org/x@ffffffffffff is not in the local Hub cache; load it once online (or unset HF_HUB_OFFLINE)."
    )


def test_missing_datasets_repo_is_a_revision_error():
    from datasets.exceptions import DatasetNotFoundError

    with pytest.raises(RevisionError, match="does not exist or is private"):
        _raise(
            DatasetNotFoundError("Dataset 'org/x' doesn't exist on the Hub or cannot be accessed.")
        )


def test_other_errors_pass_through():
    with pytest.raises(KeyError):
        _raise(KeyError("a bug, not a Hub failure"))
    with pytest.raises(InputFileError):  # xlbench errors are kept as they are
        _raise(InputFileError("already one sentence."))


def test_retries_honour_retry_after_then_succeed(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(hubclient, "sleep", waits.append)
    answers = [
        _http(HfHubHTTPError, 429, {"Retry-After": "7"}),
        _http(HfHubHTTPError, 502),
        httpx2.RemoteProtocolError("x"),
    ]

    def call():
        if answers:
            raise answers.pop(0)
        return "ok"

    assert with_retries(call, "reading refs", "org/x") == "ok"
    assert waits == [7.0, 2.0, 4.0]  # Retry-After as sent, then exponential backoff


def test_retries_are_bounded_and_skip_what_cannot_improve(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(hubclient, "sleep", waits.append)
    calls = []

    def failing(err):
        def call():
            calls.append(1)
            raise err

        return call

    with pytest.raises(RemoteError, match="HTTP 500"):
        with_retries(failing(_http(HfHubHTTPError, 500)), "reading refs", "org/x", endpoint=HUB)
    assert len(calls) == hubclient.ATTEMPTS and waits == [1.0, 2.0, 4.0]
    calls.clear()
    with pytest.raises(RemoteError, match="rejected the token"):
        with_retries(failing(_http(HfHubHTTPError, 401)), "reading refs", "org/x", endpoint=HUB)
    with pytest.raises(RemoteError, match="cannot reach"):
        with_retries(failing(httpx2.ConnectError("refused")), "reading refs", "org/x", endpoint=HUB)
    assert len(calls) == 2  # neither a bad token nor a refused connection is repeated
