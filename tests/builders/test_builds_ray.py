"""Builds on a local Ray cluster equal local builds byte for byte, also when a worker is killed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from builders.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.ray]

HAS_APERTIUM = (
    shutil.which("apertium") is not None
    and Path("/usr/share/apertium/modes/eng-spa.mode").is_file()
)
HAS_WORDNET = Path("/usr/share/wordnet/data.noun").is_file()

SENTENCES = [
    "The old man reads a book .",
    "A small dog sleeps in the garden .",
    "She drinks cold water every morning .",
    "The children play with a red ball .",
]


def digest(folder: Path) -> dict[str, str]:
    """sha256 of every parquet file of a built folder."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.parquet"))
    }


def manifest(folder: Path) -> dict:
    """The manifest without its clock times and the checkout's state (``run.mt``, the cache counts, is kept)."""
    data = json.loads((folder / "manifest.json").read_text())
    for key in ("started_at", "finished_at", "git_commit"):
        data.pop(key, None)
    data["run"] = {k: v for k, v in data.get("run", {}).items() if not k.startswith("seconds")}
    return data


# An `apertium` first on PATH that stops in a KillGate (tests/support/ray_fixtures.py) before
# translating, when `gate` holds the gate's folder and a Ray worker runs it: the worker is
# killed in the middle of its batch whatever the machine's load.
_GATED_APERTIUM = """#!/bin/sh
gate=$(cat "{gate}" 2>/dev/null)
if [ -n "$gate" ] && [ ! -e "$gate/killed" ] && tr '\\0' ' ' < /proc/$PPID/cmdline | grep -q '^ray::'; then
    echo 1 > "$gate/running-$PPID"
    i=0
    while [ ! -e "$gate/killed" ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done
fi
exec {apertium} "$@"
"""


@pytest.fixture(scope="module", autouse=True)
def gated_apertium(tmp_path_factory):
    """Put the gated `apertium` on PATH before the module's cluster starts (its workers inherit PATH).

    Returns the file in which a test writes a KillGate's folder to arm the gate.
    """
    real = shutil.which("apertium")
    if real is None:
        yield None
        return
    bin_dir = tmp_path_factory.mktemp("gated-bin")
    arm = bin_dir / "gate"
    script = bin_dir / "apertium"
    script.write_text(_GATED_APERTIUM.format(gate=arm, apertium=real))
    script.chmod(0o755)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        yield arm


@pytest.mark.skipif(
    not (HAS_APERTIUM and HAS_WORDNET),
    reason="needs Debian apertium-eng-spa and wordnet-base (offline silver)",
)
def test_silver_on_ray_equals_local_survives_a_killed_worker_and_resumes(
    tmp_path, gated_apertium, ray_cluster, killer, monkeypatch
):
    monkeypatch.setenv("XLBENCH_OFFLINE", "1")
    src = tmp_path / "src.txt"
    src.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    common = ["build", "silver", "--lang", "eng-spa", "--mt", "apertium", "--src", str(src)]
    assert (
        main(
            [
                *common,
                "--out",
                str(tmp_path / "local"),
                "--mt-cache",
                str(tmp_path / "local.sqlite"),
            ]
        )
        == 0
    )
    store = tmp_path / "shards"
    k, gate = killer
    gated_apertium.write_text(gate.folder)
    argv = [
        *common,
        "--engine",
        "ray",
        "--workers",
        "2",
        "--mt-cache",
        str(tmp_path / "ray.sqlite"),
        "--mt-store",
        str(store),
    ]
    assert main([*argv, "--out", str(tmp_path / "ray")]) == 0
    k.join(timeout=5)
    assert k.killed is not None, "the test did not manage to kill a worker"
    assert (
        digest(tmp_path / "ray") == digest(tmp_path / "local")
        and len(digest(tmp_path / "local")) == 2
    )
    assert manifest(tmp_path / "ray") == manifest(
        tmp_path / "local"
    )  # run.mt (cache counts) included
    # The SQLite cache got every translation: a rebuild on Ray translates nothing and is the same.
    assert main([*argv, "--out", str(tmp_path / "ray2")]) == 0
    again = manifest(tmp_path / "ray2")
    assert again["run"]["mt"]["translated"] == 0 and again["run"]["mt"]["cached"] > 0
    assert digest(tmp_path / "ray2") == digest(tmp_path / "local")
    # Without the SQLite cache (a driver that died before merging), the shards alone serve every request.
    (tmp_path / "ray.sqlite").unlink()
    assert main([*argv, "--out", str(tmp_path / "ray3")]) == 0
    assert digest(tmp_path / "ray3") == digest(tmp_path / "local")


def test_cbd_on_ray_equals_local(tmp_path, ray_cluster):
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(400)]
    lines = []
    for i in range(4500):  # 3 extraction chunks of 2000 pairs
        words = [vocab[j] for j in rng.choice(len(vocab), size=5, replace=False)]
        lines.append(f"{i}\t{' '.join(words)}\t{' '.join(w.upper() for w in words)}")
    (tmp_path / "c.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "d.txt").write_text("".join(f"{w} {w.upper()}\n" for w in vocab), encoding="utf-8")
    common = ["build", "cbd", "--lang", "eng-deu", "--tsv", str(tmp_path / "c.tsv"), "--dict", str(tmp_path / "d.txt"),
              "--aligner", "none", "--max-pairs", "3000"]  # fmt: skip
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    assert main([*common, "--out", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"]) == 0
    assert digest(tmp_path / "ray") == digest(tmp_path / "local")
    assert manifest(tmp_path / "ray") == manifest(tmp_path / "local")
    assert manifest(tmp_path / "local")["counts"]["extraction"]["in"] == 4500
