"""A silver build SIGKILLed mid-translation resumes to byte-identical parquet (issue 13).

The kill is real (``SIGKILL`` from inside the engine call, so nothing is flushed
or closed) and the engine is the offline Apertium eng-spa pair. The resumed run
reports how many segments it re-translated, and that is at most one batch.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
HAS_APERTIUM = (
    shutil.which("apertium") is not None
    and Path("/usr/share/apertium/modes/eng-spa.mode").is_file()
)
HAS_WORDNET = Path("/usr/share/wordnet/data.noun").is_file()

SENTENCES = [
    "The old man saw a small dog .",
    "She reads a long book .",
]
BATCH = 12

# Runs the real CLI in a child; the engine kills its own process on call number KILL_AT (1-based).
DRIVER = """
import os, signal, sys
from builders.adapters import mt
kill_at = int(os.environ.get("KILL_AT", "0"))
real = mt.ApertiumTranslator.translate_batch
calls = [0]
def translate_batch(self, texts):
    calls[0] += 1
    if calls[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, texts)
mt.ApertiumTranslator.translate_batch = translate_batch
from builders.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _build(tmp_path: Path, out: Path, cache: Path, kill_at: int = 0) -> subprocess.CompletedProcess:
    src = tmp_path / "src.txt"
    src.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO), KILL_AT=str(kill_at))
    argv = ["build", "silver", "--lang", "eng-spa", "--src", str(src), "--mt", "apertium:eng-spa",
            "--mt-cache", str(cache), "--mt-batch-size", str(BATCH), "--out", str(out)]  # fmt: skip
    return subprocess.run(
        [sys.executable, "-c", DRIVER, *argv], env=env, capture_output=True, text=True, timeout=600
    )


def _parquet_bytes(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted((folder / "data").rglob("*.parquet"))
    }


@pytest.mark.slow
@pytest.mark.skipif(
    not HAS_APERTIUM,
    reason="Debian package apertium-eng-spa is not installed (make setup installs it)",
)
@pytest.mark.skipif(
    not HAS_WORDNET, reason="Debian packages wordnet-base/wordnet-sense-index are not installed"
)
def test_silver_build_killed_mid_translation_resumes_byte_identical(tmp_path):
    cold = _build(tmp_path, tmp_path / "cold", tmp_path / "cold.sqlite")
    assert cold.returncode == 0, cold.stderr
    cold_counts = json.loads((tmp_path / "cold" / "manifest.json").read_text())["run"]["mt"]
    assert cold_counts["engine_batches"] > 3, (
        cold_counts
    )  # batches small enough to kill in the middle

    out, cache = tmp_path / "resumed", tmp_path / "resumed.sqlite"
    killed = _build(tmp_path, out, cache, kill_at=3)
    assert killed.returncode == -signal.SIGKILL
    assert not out.exists()  # nothing complete-looking after the kill
    resumed = _build(tmp_path, out, cache)
    assert resumed.returncode == 0, resumed.stderr
    counts = json.loads((out / "manifest.json").read_text())["run"]["mt"]
    # Two batches were committed before the kill; only the one in flight is redone, and it is reported.
    assert 0 < counts["retranslated"] <= BATCH
    assert (
        counts["cached"] >= 2
    )  # the two batches committed before the kill are served from the cache
    assert counts["translated"] == cold_counts["translated"] - counts["cached"]
    assert _parquet_bytes(out) == _parquet_bytes(tmp_path / "cold")
    assert _parquet_bytes(out)
