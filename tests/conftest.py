"""Shared test fixtures: isolated HF caches, the real-data folder, tiny helpers."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest

# Keep every cache the tests touch out of the user's home and make runs hermetic.
_TMP = Path(tempfile.mkdtemp(prefix="xlbench-tests-"))
os.environ.setdefault("HF_HOME", str(_TMP / "hf"))
os.environ.setdefault("HF_DATASETS_CACHE", str(_TMP / "hf" / "datasets"))
os.environ.setdefault("XLBENCH_CACHE", str(_TMP / "xlbench"))
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
# The loopback Hub of tests/hub: huggingface_hub and datasets read HF_ENDPOINT and
# HF_HUB_DISABLE_XET once, at import, so the port is reserved here, before any test imports them.
with socket.socket() as _sock:
    _sock.bind(("127.0.0.1", 0))
    os.environ.setdefault("XLBENCH_TEST_HUB_PORT", str(_sock.getsockname()[1]))
os.environ.setdefault("HF_ENDPOINT", f"http://127.0.0.1:{os.environ['XLBENCH_TEST_HUB_PORT']}")
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("XLBENCH_SHARED_DATA", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture
def shared_data() -> Path:
    """The read-only real-data folder (../shared/data); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"real-data check: {SHARED_DATA} is absent (set XLBENCH_SHARED_DATA to the shared data folder)"
        )
    return SHARED_DATA
