"""Loading a published dataset through the real clients under faults: hub_errors gives one sentence.

This is the mapping the evaluators' dataset loading wraps around ``load_dataset``
and ``HfApi`` calls (``with hub_errors("loading org/x@v1.0.0", "org/x", "v1.0.0"): ...``).
"""

from __future__ import annotations

import json

import pytest
from datasets import load_dataset
from huggingface_hub import HfApi

from builders.cli import main
from evaluators.core.errors import RemoteError, RevisionError, XlbenchError
from evaluators.data.hubclient import hub_errors

REPO = "xlbench-test/load-faults"
CONFIG = "deu_Latn-eng_Latn"


@pytest.fixture
def published(faults, token, make_folder, capsys, tmp_path_factory):
    if ("dataset", REPO) not in faults.repos:
        assert main(["publish", str(make_folder()), "--repo", REPO, "--yes"]) == 0
        json.loads(capsys.readouterr().out)
    return faults.repos[("dataset", REPO)].tags["v1.0.0"]


def _load(revision: str, repo: str = REPO, tmp=None):
    with hub_errors(f"loading {repo}@{revision}", repo, revision):
        return load_dataset(
            repo,
            CONFIG,
            split="test",
            revision=revision,
            cache_dir=str(tmp),
            download_mode="force_redownload",
        )


def test_missing_repo_and_revision(published, tmp_path):
    with pytest.raises(RevisionError) as err:
        _load("v1.0.0", "xlbench-test/no-such-repo", tmp_path)
    assert "does not exist or is private" in str(err.value)
    with pytest.raises(RevisionError) as err:
        with hub_errors(f"resolving {REPO}@v9.9.9", REPO, "v9.9.9"):
            HfApi().dataset_info(REPO, revision="v9.9.9")
    assert str(err.value) == (
        f"resolving {REPO}@v9.9.9: revision 'v9.9.9' does not exist in {REPO}; pass a version tag like v1.0.0 or a commit sha."
    )


@pytest.mark.parametrize(
    "fault", [{"status": 503, "times": 50}, {"drop": True, "times": 50}], ids=["503", "drop"]
)
def test_persistent_fault_on_the_data_is_one_sentence(published, faults, tmp_path, fault):
    faults.inject(r"^GET /datasets/[^ ]+/resolve/[^ ]+/data/", **fault)
    with pytest.raises(XlbenchError) as err:
        _load(published, tmp=tmp_path)
    message = str(err.value)
    assert isinstance(err.value, RemoteError), message
    assert message.startswith(f"loading {REPO}@{published}: ") and message.count("\n") == 0


def test_one_dropped_download_is_absorbed(published, faults, tmp_path):
    faults.inject(r"^GET /datasets/[^ ]+/resolve/[^ ]+/data/", drop=True)
    assert len(_load(published, tmp=tmp_path)) == 8
