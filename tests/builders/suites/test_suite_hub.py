"""A suite whose dataset is a Hub repo at a tag, read from the loopback Hub through the existing reader."""

from __future__ import annotations

import json
import re

import pytest

import xlbench
from builders.cli import main


def _suite(tmp_path, repo: str, revision: str):
    data = {
        "name": "hubby",
        "version": "1.0.0",
        "description": "one published bucc folder",
        "datasets": {"b": {"family": "bucc", "hub": repo, "revision": revision}},
        "entries": [{"evaluator": "bucc", "dataset": "b"}],
    }
    path = tmp_path / "hubby.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_hub_dataset_is_read_at_its_tag_and_its_sha_recorded(
    faults, token, make_folder, tmp_path, capsys
):
    repo = "xlbench-test/suite-hub"
    assert main(["publish", str(make_folder()), "--repo", repo, "--yes"]) == 0
    capsys.readouterr()
    suite = _suite(tmp_path, repo, "v1.0.0")
    skipped = xlbench.run_suite(suite, ["random"], tmp_path / "off", bootstrap=0)
    assert (
        skipped.computed == 0 and "needs the internet" in skipped.summary["entries"][0]["skipped"]
    )
    run = xlbench.run_suite(suite, ["random"], tmp_path / "on", allow=["internet"], bootstrap=0)
    assert run.computed == 1
    (ds,) = run.summary["datasets"]
    assert ds["requested"] == "v1.0.0" and re.fullmatch(r"[0-9a-f]{40}", ds["revision"])
    assert run.summary["models"][0]["missing"] == []


@pytest.mark.slow
def test_an_unreadable_hub_dataset_is_a_missing_column_not_a_failed_suite(
    faults, token, make_folder, tmp_path, capsys
):
    repo = "xlbench-test/suite-hub-missing"
    assert main(["publish", str(make_folder()), "--repo", repo, "--yes"]) == 0
    capsys.readouterr()
    run = xlbench.run_suite(
        _suite(tmp_path, repo, "v9.9.9"), ["random"], tmp_path / "r", allow=["internet"]
    )
    assert "could not be read" in run.summary["entries"][0]["skipped"]
    assert run.summary["models"][0]["missing"] == ["bucc:b"]
    assert (tmp_path / "r" / "summary.json").is_file()
