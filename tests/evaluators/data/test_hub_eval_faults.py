"""``xlbench eval --dataset <hub id>`` under Hub faults: one sentence and the right exit code (issue 13).

The evaluators' dataset loading (``evaluators.data.hub``) goes through
``evaluators.data.hubclient.hub_errors``/``with_retries``; these tests drive the real
CLI against the loopback Hub, with faults injected there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builders.cli import main
from evaluators.data import hubclient

ROOT = Path(__file__).resolve().parents[3]
TRAIN = "data/deu_Latn-eng_Latn/train-00000-of-00001.parquet"


def _publish(repo: str, make_folder, capsys, **kw) -> Path:
    folder = make_folder(**kw)
    assert main(["publish", str(folder), "--repo", repo, "--yes"]) == 0
    json.loads(capsys.readouterr().out)
    return folder


def _eval(dataset: str, out: Path, capsys, *extra: str) -> tuple[int, list[str]]:
    import datasets

    datasets.disable_progress_bars()  # progress bars on stderr are not error lines
    code = main(
        ["eval", "bucc", "--dataset", dataset, "--model", "random", "--out", str(out), *extra]
    )
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, [
        line
        for line in err.splitlines()
        if line.strip() and not line.startswith(("INFO", "WARNING"))
    ]


def test_missing_repo_shaped_like_a_path_names_both(hub_log, tmp_path, capsys, monkeypatch):
    """'out/typo' is not a folder and not a Hub repo: the message says both, exit 2."""
    monkeypatch.chdir(tmp_path)
    code, lines = _eval("out/typo", tmp_path / "r", capsys)
    assert code == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: No such folder 'out/typo', and as a Hub dataset:")
    assert "does not exist or is private" in lines[0]
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_unreachable_hub_on_eval_is_one_sentence(tmp_path):
    """The issue's reproduction for eval: nothing listens at HF_ENDPOINT (httpx2 errors must not escape)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_ENDPOINT="http://127.0.0.1:9")
    env.pop("HF_HUB_OFFLINE", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "builders",
            "eval",
            "word-retrieval",
            "--dataset",
            "out/typo",
            "--model",
            "random",
            "--out",
            str(tmp_path / "r"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "error: No such folder 'out/typo', and as a Hub dataset: cannot reach the Hub at http://127.0.0.1:9 "
        "(ConnectError); check the network or HF_ENDPOINT."
    )
    assert not (tmp_path / "r").exists()


def test_unknown_revision_is_one_sentence(faults, token, make_folder, tmp_path, capsys):
    repo = "xlbench-test/eval-revision"
    _publish(repo, make_folder, capsys)
    code, lines = _eval(repo, tmp_path / "r", capsys, "--revision", "v9.9.9")
    assert code == 2
    assert lines == [
        f"error: Revision 'v9.9.9' does not exist in {repo}; pass a version tag like v1.0.0 or a commit sha."
    ]


def test_rate_limit_on_resolve_is_retried(
    faults, token, make_folder, tmp_path, capsys, monkeypatch
):
    """A 429 with Retry-After on the revision lookup is waited for (as asked) and the run succeeds."""
    repo = "xlbench-test/eval-429"
    _publish(repo, make_folder, capsys)
    waits: list[float] = []
    monkeypatch.setattr(hubclient, "sleep", waits.append)
    faults.inject(rf"^GET /api/datasets/{repo}/revision/", status=429, retry_after=2, times=2)
    code, lines = _eval(repo, tmp_path / "r", capsys, "--revision", "v1.0.0")
    assert code == 0, lines
    assert waits == [2.0, 2.0]
    assert len(list((tmp_path / "r").glob("*.json"))) == 1


def _fresh(tmp_path, monkeypatch) -> None:
    """Empty Hub and ``datasets`` caches, so a load really downloads (publishing verified through the shared ones)."""
    import datasets.config
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "ds-cache"))


def test_persistent_server_error_on_the_data_is_one_sentence(
    faults, token, make_folder, tmp_path, capsys, monkeypatch
):
    repo = "xlbench-test/eval-503"
    _publish(repo, make_folder, capsys)
    monkeypatch.setattr(hubclient, "sleep", lambda s: None)
    _fresh(tmp_path, monkeypatch)
    faults.inject(r"^GET /datasets/[^ ]+/resolve/[^ ]+/data/", status=503, times=100)
    code, lines = _eval(repo, tmp_path / "r", capsys, "--revision", "v1.0.0")
    assert code == 1
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: loading config deu_Latn-eng_Latn of {repo}@"), lines[0]
    assert "failed (HTTP 503); wait a minute and run the same command again." in lines[0]
    assert not (tmp_path / "r").exists()


def test_damaged_parquet_on_the_hub_is_one_sentence(
    hub_log, token, make_folder, tmp_path, capsys, monkeypatch
):
    """A published parquet file whose bytes are damaged: ``datasets`` fails to read it; one sentence, exit 2."""
    repo = "xlbench-test/eval-damaged"
    folder = _publish(repo, make_folder, capsys)
    _fresh(tmp_path, monkeypatch)
    hub_log.tamper[TRAIN] = (folder / TRAIN).read_bytes()[:-40]
    try:
        code, lines = _eval(repo, tmp_path / "r", capsys, "--revision", "v1.0.0")
    finally:
        hub_log.tamper.clear()
    assert code == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: The data files of config deu_Latn-eng_Latn in {repo}@"), (
        lines[0]
    )
    assert (
        "cannot be read (ArrowInvalid: " in lines[0]
        and "the published copy is damaged: republish it" in lines[0]
    )
    assert not (tmp_path / "r").exists()
