"""Fixtures for the Hub tests: a loopback Hub-compatible server and small real datasets.

The server runs in this process on the port that tests/conftest.py reserved and
exported as HF_ENDPOINT before huggingface_hub and datasets were imported; the
real clients talk to it over the socket. Nothing in huggingface_hub or datasets
is patched: only environment variables are set.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from builders.adapters import bible
from builders.base import BuildResult
from builders.release.artifact import write_dataset
from evaluators.schema import get_family
from evaluators.schema.meta import Manifest

_HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("xlbench_test_hubserver", _HERE / "hubserver.py")
hubserver = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = hubserver
_spec.loader.exec_module(hubserver)

#: A recognisable fake token: tests grep every written file and all output for it.
GOOD_TOKEN = "hf_xlbenchFAKEtokenDoNotLeak0123456789"
BAD_TOKEN = "hf_xlbenchWRONGtokenDoNotLeak987654321"
#: Verses of 1 John (book 62): short, public domain, in both German and English.
BOOK = 62


@pytest.fixture(scope="session")
def hub(tmp_path_factory):
    """The running loopback Hub (session-wide); its request log is cleared per test by ``hub_log``."""
    from huggingface_hub import constants

    port = int(os.environ["XLBENCH_TEST_HUB_PORT"])
    expected = f"http://127.0.0.1:{port}"
    if constants.ENDPOINT != expected:
        pytest.fail(
            f"huggingface_hub talks to {constants.ENDPOINT}, not the loopback Hub {expected}: "
            f"unset HF_ENDPOINT before running the tests (tests/conftest.py sets it)."
        )
    if not constants.HF_HUB_DISABLE_XET:
        pytest.fail(
            "HF_HUB_DISABLE_XET must be 1 for the loopback Hub (tests/conftest.py sets it)."
        )
    server = hubserver.HubServer(tmp_path_factory.mktemp("hub"), {GOOD_TOKEN}, port=port).start()
    yield server
    server.stop()


@pytest.fixture
def hub_log(hub):
    """The hub with an empty request log; fails the test if a client called an unknown endpoint."""
    hub.clear_log()
    yield hub
    assert hub.unknown == [], (
        f"the clients called endpoints the loopback Hub does not implement: {hub.unknown}"
    )


@pytest.fixture
def token(monkeypatch):
    """Publish with the fake (accepted) token from HF_TOKEN."""
    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    return GOOD_TOKEN


_VERSES: dict[str, tuple[list, list]] = {}


def _verses(src: str):
    """``(verse_id, src text, English)`` of 1 John from the packaged Bibles, and the two pinned inputs (cached)."""
    if src not in _VERSES:
        a, eng = bible.translation_for(src), bible.translation_for("eng_Latn")
        _VERSES[src] = (
            bible.parallel_verses(a, eng, books=[BOOK]),
            [bible.input_record(a), bible.input_record(eng)],
        )
    return _VERSES[src]


def bucc_result(src: str, n_train: int, n_test: int) -> BuildResult:
    """A BUCC-schema table: the first verses as train, the next as test, gold pairs by id."""
    verses, inputs = _verses(src)
    pair = f"{src}-eng_Latn"
    prefix = src[:3]
    tables: dict[str, dict[str, list]] = {pair: {}, f"{pair}-gold": {}}
    for split, chunk in (("train", verses[:n_train]), ("test", verses[n_train : n_train + n_test])):
        rows, gold = [], []
        for vid, text, eng in chunk:
            rows += [
                {"id": f"{prefix}-{vid}", "side": "src", "text": text},
                {"id": f"eng-{vid}", "side": "tgt", "text": eng},
            ]
            gold.append({"src_id": f"{prefix}-{vid}", "tgt_id": f"eng-{vid}"})
        tables[pair][split] = rows
        tables[f"{pair}-gold"][split] = gold
    return BuildResult(
        tables=tables,
        parameters={"book": BOOK, "n_train": n_train, "n_test": n_test},
        inputs=inputs,
        construction=["Verses of 1 John aligned by (book, chapter, verse)."],
        license="cc0-1.0",
        name="xlbench-bucc-test",
    )


@pytest.fixture
def make_folder(tmp_path):
    """Build a small real BUCC folder: ``make_folder(version, n_train, n_test, changes, name, src)``."""

    def make(
        version: str = "1.0.0",
        n_train: int = 6,
        n_test: int = 4,
        changes: str = "first release",
        name: str | None = None,
        src: str = "deu_Latn",
    ):
        result = bucc_result(src, n_train, n_test)
        manifest = Manifest(
            name=result.name,
            family="bucc",
            version=version,
            builder="tests.hub",
            seed=13,
            parameters=result.parameters,
            inputs=result.inputs,
            changelog=[{"version": version, "date": "2026-11-30", "changes": changes}],
        )
        return write_dataset(
            tmp_path / (name or f"bucc-{version}"), get_family("bucc"), result, manifest
        )

    return make


@pytest.fixture
def waits(monkeypatch):
    """Record the retry waits of evaluators.data.hubclient instead of sleeping them (a list of seconds)."""
    from evaluators.data import hubclient

    seen: list[float] = []
    monkeypatch.setattr(hubclient, "sleep", seen.append)
    return seen


@pytest.fixture
def faults(hub_log):
    """The hub, with every injected fault that did not fire cleared after the test."""
    yield hub_log
    hub_log.clear_faults()


@pytest.fixture
def bad_token():
    """A token the loopback Hub rejects with 401."""
    return BAD_TOKEN
