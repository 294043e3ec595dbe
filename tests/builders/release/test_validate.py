"""``xlbench validate``: a good folder passes; each broken invariant is named with its config."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from builders.cli import main
from builders.release.validate import table_digest, validate_folder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
import tiny_folders as tf  # noqa: E402  (four-family folders and folder surgery)

MAIN, GOLD = "deu_Latn-eng_Latn", "deu_Latn-eng_Latn-gold"


def _parquet(folder, config, split):
    return folder / "data" / config / f"{split}-00000-of-00001.parquet"


def _edit_card(folder, edit):
    text = (folder / "README.md").read_text(encoding="utf-8")
    end = text.find("\n---", 4)
    front = yaml.safe_load(text[4:end])
    edit(front)
    (folder / "README.md").write_text(
        "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + text[end + 1 :],
        encoding="utf-8",
    )


def _set_counts(folder, config, split, n):
    def edit(front):
        for info in front["dataset_info"]:
            if info["config_name"] == config:
                for s in info["splits"]:
                    if s["name"] == split:
                        s["num_examples"] = n

    _edit_card(folder, edit)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["configs"][config][split] = n
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_valid_folder_summary(make_folder, capsys):
    folder = make_folder()
    assert main(["validate", str(folder)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "ok" and out["family"] == "bucc" and out["version"] == "1.0.0"
    assert out["configs"] == {MAIN: {"test": 8, "train": 12}, GOLD: {"test": 4, "train": 6}}
    assert out["rows"] == 30
    assert out["digests"][MAIN]["train"] == table_digest(
        pq.read_table(_parquet(folder, MAIN, "train"))
    )
    assert out["files"] == [
        "README.md",
        f"data/{GOLD}/test-00000-of-00001.parquet",
        f"data/{GOLD}/train-00000-of-00001.parquet",
        f"data/{MAIN}/test-00000-of-00001.parquet",
        f"data/{MAIN}/train-00000-of-00001.parquet",
        "manifest.json",
    ]


def _duplicate_id(folder):
    t = pq.read_table(_parquet(folder, MAIN, "train"))
    pq.write_table(pa.concat_tables([t, t.slice(0, 1)]), _parquet(folder, MAIN, "train"))
    tf.reseal(folder)  # counts and digests agree again: only the duplicate is wrong


def _wrong_count(folder):
    _set_counts(folder, GOLD, "test", 5)


def _empty_config(folder):
    for split in ("train", "test"):
        t = pq.read_table(_parquet(folder, GOLD, split))
        pq.write_table(t.slice(0, 0), _parquet(folder, GOLD, split))
    tf.reseal(folder)


def _no_manifest(folder):
    (folder / "manifest.json").unlink()


def _manifest_typo(folder):
    m = json.loads((folder / "manifest.json").read_text())
    m["versoin"] = m.pop("version")
    (folder / "manifest.json").write_text(json.dumps(m))


def _stray_file(folder):
    pq.write_table(
        pq.read_table(_parquet(folder, GOLD, "test")),
        folder / "data" / GOLD / "dev-00000-of-00001.parquet",
    )


def _bad_yaml(folder):
    text = (folder / "README.md").read_text()
    (folder / "README.md").write_text(text.replace("license:", "license: [unclosed", 1))


def _missing_column(folder):
    t = pq.read_table(_parquet(folder, MAIN, "test"))
    pq.write_table(t.drop_columns(["side"]), _parquet(folder, MAIN, "test"))
    tf.reseal(folder)


def _card_drops_config(folder):
    _edit_card(
        folder, lambda f: f.update(configs=[c for c in f["configs"] if c["config_name"] != GOLD])
    )


@pytest.mark.parametrize(
    ("breaker", "message"),
    [
        (_duplicate_id, f"config {MAIN}/train: duplicate id ('deu-62:1:1',); ids must be unique."),
        (
            _wrong_count,
            f"config {GOLD}/test: the card says num_examples=5 but data/{GOLD}/test-00000-of-00001.parquet has 4 rows.",
        ),
        (_empty_config, f"config {GOLD} is empty (0 rows in every split); drop it or rebuild."),
        (
            _no_manifest,
            "{folder}: manifest.json is missing; rebuild the folder with 'xlbench build'.",
        ),
        (
            _manifest_typo,
            "manifest.json has unknown keys ['versoin']; expected only ['builder', 'changelog', 'configs', "
            "'counts', 'family', 'files', 'finished_at', 'git_commit', 'inputs', 'key_params', 'license', 'models', 'name', "
            "'nondeterministic', 'parameters', 'params', 'run', 'seed', 'started_at', 'version', 'xlbench_version'].",
        ),
        (
            _stray_file,
            f"data/{GOLD}/dev-00000-of-00001.parquet is not listed in the card's configs; delete it or rebuild the folder.",
        ),
        (
            _missing_column,
            f"config {MAIN}/test: columns ['id', 'text'] do not match the schema's ['id', 'side', 'text'].",
        ),
        (
            _card_drops_config,
            f"data/{GOLD}/test-00000-of-00001.parquet is not listed in the card's configs; delete it or rebuild the folder.",
        ),
    ],
)
def test_each_broken_invariant_is_named(make_folder, capsys, breaker, message):
    folder = make_folder()
    breaker(folder)
    assert main(["validate", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == "error: " + message.format(folder=folder)


def test_bad_yaml_is_named(make_folder, capsys):
    folder = make_folder()
    _bad_yaml(folder)
    assert main(["validate", str(folder)]) == 1
    assert capsys.readouterr().err.startswith(
        "error: README.md: The dataset card's YAML does not parse ("
    )


def test_not_a_folder(tmp_path):
    with pytest.raises(
        Exception, match="is not a folder; pass the output folder of 'xlbench build'"
    ):
        validate_folder(tmp_path / "nope")
