"""Publish v1.0.0 and v1.1.0 of a real (tiny) BUCC dataset to the loopback Hub and load both back.

The dataset is made of verses of 1 John from the packaged public-domain Bibles
(German Elberfelder 1932, English WEB), written by builders.release.artifact.write_dataset.
The clients are the real huggingface_hub and datasets, over HTTP.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from datasets import load_dataset

from builders.cli import main
from evaluators.data.source import open_source

REPO = "xlbench-test/bucc-roundtrip"
CONFIG = "deu_Latn-eng_Latn"


def _publish(args, capsys) -> dict:
    code = main(["publish", *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_two_versions_round_trip(hub_log, token, make_folder, capsys, caplog):
    v1 = make_folder("1.0.0", n_train=6, n_test=4, changes="first release")
    v2 = make_folder(
        "1.1.0", n_train=8, n_test=5, changes="two more train verses, one more test verse"
    )
    v1_files = {p: p.read_bytes() for p in v1.rglob("*") if p.is_file()}

    first = _publish([str(v1), "--repo", REPO, "--yes"], capsys)
    assert first["status"] == "published" and first["tag"] == "v1.0.0"
    assert first["verified"][f"{CONFIG}/train"]["rows"] == 12  # 6 verses x 2 sides
    assert first["verified"][f"{CONFIG}/test"]["rows"] == 8
    second = _publish([str(v2), "--repo", REPO, "--yes"], capsys)
    assert second["status"] == "published" and second["previous"] == "1.0.0"
    assert second["commit"] != first["commit"]

    # the remote is git-like: initial commit, then exactly one commit per version, tags on them
    history = hub_log.history(REPO)
    assert [c.title for c in history] == [
        "Publish xlbench-bucc-test v1.1.0",
        "Publish xlbench-bucc-test v1.0.0",
        "initial commit",
    ]
    repo = hub_log.repos[("dataset", REPO)]
    assert repo.tags == {"v1.0.0": first["commit"], "v1.1.0": second["commit"]}
    assert repo.branches["main"] == second["commit"]
    # publishing never touches the local folder
    assert {p: p.read_bytes() for p in v1.rglob("*") if p.is_file()} == v1_files

    # third parties: load_dataset by tag returns each version's own rows
    old = load_dataset(REPO, CONFIG, split="train", revision="v1.0.0")
    new = load_dataset(REPO, CONFIG, split="train", revision="v1.1.0")
    assert (
        list(old["id"])
        == pq.read_table(v1 / "data" / CONFIG / "train-00000-of-00001.parquet")
        .column("id")
        .to_pylist()
    )
    assert (
        list(new["id"])
        == pq.read_table(v2 / "data" / CONFIG / "train-00000-of-00001.parquet")
        .column("id")
        .to_pylist()
    )
    assert (len(old), len(new)) == (12, 16)
    assert old["text"][0].startswith("Was von Anfang war")  # 1 John 1:1, Elberfelder 1932

    # the v1.1.0 card carries the changelog of both versions, newest first, with row counts
    card = hub_log.files_at(REPO, "v1.1.0")["README.md"].decode()
    changelog = card.split("## Changelog", 1)[1].split("## Citation", 1)[0]
    assert changelog.strip().splitlines() == [
        "- **1.1.0** (2026-11-30): two more train verses, one more test verse (39 rows)",
        "",
        "- **1.0.0** (2026-11-30): first release (30 rows)",
    ]
    assert f'load_dataset("{REPO}"' in card
    manifest = json.loads(hub_log.files_at(REPO, "v1.1.0")["manifest.json"])
    assert [e["version"] for e in manifest["changelog"]] == ["1.1.0", "1.0.0"]
    # the older tag still holds the older card, untouched
    assert (
        "1.1.0"
        not in hub_log.files_at(REPO, "v1.0.0")["README.md"].decode().split("## Changelog", 1)[1]
    )

    # evaluators: --dataset REPO --revision vX.Y.Z resolves to the commit sha of that version
    caplog.clear()
    source1, source2 = open_source(REPO, "v1.0.0"), open_source(REPO, "v1.1.0")
    ref1, ref2 = source1.ref, source2.ref
    assert [r.getMessage() for r in caplog.records if r.name == "xlbench.hub"] == [
        f"{REPO}@v1.0.0 is superseded by v1.1.0; pass --revision v1.1.0 for the current version."
    ]
    assert (ref1.revision, ref1.version, ref1.family, ref1.requested) == (
        first["commit"],
        "1.0.0",
        "bucc",
        "v1.0.0",
    )
    assert (ref2.revision, ref2.version) == (second["commit"], "1.1.0")
    assert (
        list(source1.load(CONFIG, "test")["id"])
        == pq.read_table(v1 / "data" / CONFIG / "test-00000-of-00001.parquet")
        .column("id")
        .to_pylist()
    )
    assert len(source2.load(CONFIG, "test")) == 10
    assert open_source(REPO, None).ref.revision == second["commit"]  # main


def test_republish_same_version_is_a_noop(hub_log, token, make_folder, capsys):
    folder = make_folder("1.0.0")
    first = _publish([str(folder), "--repo", "xlbench-test/noop", "--yes"], capsys)
    hub_log.clear_log()
    again = _publish([str(folder), "--repo", "xlbench-test/noop", "--yes"], capsys)
    assert again["status"] == "unchanged" and again["commit"] == first["commit"]
    assert "already published with the same content" in again["message"]
    # read-only: refs, tree and manifest; no commit, no tag
    assert not [r for r in hub_log.requests if r[0] in ("POST", "PUT", "DELETE")]
    assert len(hub_log.history("xlbench-test/noop")) == 2


def test_unknown_revision_and_repo_are_named(hub_log, token, make_folder, capsys):
    _publish([str(make_folder("1.0.0")), "--repo", "xlbench-test/names", "--yes"], capsys)
    import pytest

    from evaluators.core.errors import RevisionError

    with pytest.raises(RevisionError) as err:
        open_source("xlbench-test/names", "v9.9.9")
    assert (
        str(err.value)
        == "Revision 'v9.9.9' does not exist in xlbench-test/names; pass a version tag like v1.0.0 or a commit sha."
    )
    with pytest.raises(RevisionError) as err:
        open_source("xlbench-test/missing", "v1.0.0")
    assert (
        str(err.value)
        == "Dataset repo 'xlbench-test/missing' does not exist or is private; check the id and HF_TOKEN."
    )


def test_evaluator_scores_each_published_version(hub_log, token, make_folder, capsys, tmp_path):
    """``xlbench eval bucc --dataset <repo> --revision vX`` records the resolved sha of that version."""
    repo = "xlbench-test/bucc-eval"
    shas = {}
    for version, n_train in (("1.0.0", 6), ("1.1.0", 8)):
        shas[version] = _publish(
            [str(make_folder(version, n_train=n_train)), "--repo", repo, "--yes"], capsys
        )["commit"]
    for version, sha in shas.items():
        code = main(
            [
                "eval",
                "bucc",
                "--dataset",
                repo,
                "--revision",
                f"v{version}",
                "--model",
                "random",
                "--out",
                str(tmp_path / "results"),
                "--json",
                "--no-cache",
            ]
        )
        captured = capsys.readouterr()
        assert code == 0, captured.err[-2000:]
        result = json.loads(captured.out)
        assert result["dataset"]["id"] == repo
        assert result["dataset"]["requested"] == f"v{version}"
        assert result["dataset"]["revision"] == sha
        assert result["dataset"]["version"] == version
        assert f"ds:{repo}@{version}:{sha[:12]}" in result["signature"]


def test_gone_files_are_deleted_and_older_tags_keep_them(hub_log, token, make_folder, capsys):
    repo = "xlbench-test/repaired"
    _publish([str(make_folder("1.0.0")), "--repo", repo, "--yes"], capsys)
    report = _publish(
        [
            str(make_folder("2.0.0", src="fra_Latn", changes="French instead of German")),
            "--repo",
            repo,
            "--yes",
        ],
        capsys,
    )
    assert report["deletes"] == [
        "data/deu_Latn-eng_Latn-gold/test-00000-of-00001.parquet",
        "data/deu_Latn-eng_Latn-gold/train-00000-of-00001.parquet",
        "data/deu_Latn-eng_Latn/test-00000-of-00001.parquet",
        "data/deu_Latn-eng_Latn/train-00000-of-00001.parquet",
    ]
    assert sorted(hub_log.files_at(repo, "v2.0.0")) == [
        ".gitattributes",
        "README.md",
        "data/fra_Latn-eng_Latn-gold/test-00000-of-00001.parquet",
        "data/fra_Latn-eng_Latn-gold/train-00000-of-00001.parquet",
        "data/fra_Latn-eng_Latn/test-00000-of-00001.parquet",
        "data/fra_Latn-eng_Latn/train-00000-of-00001.parquet",
        "manifest.json",
    ]
    assert len(load_dataset(repo, CONFIG, split="test", revision="v1.0.0")) == 8
    assert (
        load_dataset(repo, "fra_Latn-eng_Latn", split="test", revision="v2.0.0")["id"][0]
        == "fra-62:1:7"
    )
