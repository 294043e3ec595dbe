"""Issue 27 item 3: a built folder is read only as its card and manifest promise, never stale.

Every content edit of a folder (all four families) is refused by ``xlbench validate`` and by
the eval-time read, which share :func:`evaluators.data.folder.open_folder`; an edit between two
evals is seen (refused), never scored under the old rows.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from builders.release.validate import validate_folder
from evaluators.core.errors import InputFileError, SchemaError, ValidationError
from evaluators.data.dsref import content_id
from evaluators.data.source import open_source
from evaluators.schema.meta import stable_manifest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
import tiny_folders as tf  # noqa: E402  (four-family folders and folder surgery)

FAMILIES = sorted(tf.TABLES)
PAIR = tf.PAIR


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    return {f: tf.tiny_folder(f, root / f) for f in FAMILIES}


@pytest.fixture
def fresh(pristine, tmp_path):
    def copy(family: str) -> Path:
        return Path(shutil.copytree(pristine[family], tmp_path / family))

    return copy


def _refused(folder: Path, *words: str) -> None:
    """Both validate (exit 1) and the eval-time open/read refuse the folder, naming ``words``."""
    with pytest.raises(ValidationError) as caught:
        validate_folder(folder)
    with pytest.raises((SchemaError, InputFileError)) as at_eval:
        source = open_source(str(folder))
        for config, splits in source.configs().items():
            for split in splits:
                source.load(config, split, empty_ok=True)
    for err in (caught.value, at_eval.value):
        assert "Traceback" not in str(err) and str(err).count("\n") == 0
        for word in words:
            assert word in str(err), (word, str(err))


@pytest.mark.parametrize("family", FAMILIES)
def test_each_tiny_folder_is_valid_and_readable(pristine, family):
    report = validate_folder(pristine[family])
    source = open_source(str(pristine[family]))
    config, split, column = tf.TEXT[family]
    assert len(source.rows(config, split)) == report.configs[config][split] > 0
    assert source.ref.revision == content_id(pristine[family])


@pytest.mark.parametrize("family", FAMILIES)
def test_edited_sentence_is_refused(fresh, family):
    folder = fresh(family)
    config, split, column = tf.TEXT[family]
    tf.edit_split(folder, config, split, tf.set_cell(column, "an edited sentence"))
    _refused(folder, tf.data_file(config, split), "manifest.json records")


@pytest.mark.parametrize("family", FAMILIES)
def test_null_text_cell_is_refused(fresh, family):
    folder = fresh(family)
    config, split, column = tf.TEXT[family]
    tf.edit_split(folder, config, split, tf.set_cell(column, None))
    tf.reseal(folder)  # even with consistent digests, a null cell is refused
    _refused(folder, f"column '{column}' has a null value in row 0")


@pytest.mark.parametrize("family", FAMILIES)
def test_symlink_to_an_edited_copy_outside_is_refused(fresh, family, tmp_path):
    folder = fresh(family)
    config, split, _ = tf.TEXT[family]
    path = tf.parquet(folder, config, split)
    outside = tmp_path / "elsewhere.parquet"
    shutil.copy(path, outside)
    path.unlink()
    path.symlink_to(outside)
    _refused(folder, "is a symbolic link")


@pytest.mark.parametrize("family", FAMILIES)
def test_card_num_bytes_falsified_is_refused(fresh, family):
    folder = fresh(family)

    def falsify(card):
        card["dataset_info"][0]["splits"][0]["num_bytes"] += 1

    tf.edit_card(folder, falsify)
    _refused(folder, "num_bytes=")


@pytest.mark.parametrize("family", FAMILIES)
def test_manifest_parameters_edited_is_refused(fresh, family):
    folder = fresh(family)
    tf.edit_manifest(folder, lambda m: m["parameters"].update(tiny=False))
    _refused(folder, "manifest.json was edited after the build")


def test_manifest_inputs_dropped_is_refused(fresh):
    folder = fresh("bucc")
    tf.edit_manifest(folder, lambda m: m.pop("inputs"))
    with pytest.raises(ValidationError, match=r"manifest.json lacks \['inputs'\]"):
        validate_folder(folder)


def test_train_and_test_swapped_is_refused(fresh):
    folder = fresh("bucc")
    train, test = tf.parquet(folder, PAIR, "train"), tf.parquet(folder, PAIR, "test")
    a, b = train.read_bytes(), test.read_bytes()
    train.write_bytes(b)
    test.write_bytes(a)
    _refused(folder, "manifest.json records")


def test_gold_naming_a_missing_id_is_refused(fresh):
    folder = fresh("bucc")
    tf.edit_split(folder, f"{PAIR}-gold", "test", tf.set_cell("src_id", "eng-nowhere-9"))
    tf.reseal(folder)
    _refused(folder, "src_id 'eng-nowhere-9' names no row of eng_Latn-deu_Latn/test")


def test_duplicate_ids_are_refused_at_eval(fresh):
    folder = fresh("cbd")
    tf.edit_split(folder, PAIR, "test", lambda t: pa.concat_tables([t, t.slice(0, 1)]))
    tf.reseal(folder)
    _refused(folder, "duplicate id")


def test_card_data_files_outside_the_folder_are_refused(fresh, tmp_path):
    folder = fresh("cbd")
    outside = tmp_path / "outside.parquet"
    shutil.copy(tf.parquet(folder, PAIR, "test"), outside)

    def point_out(card):
        card["configs"][0]["data_files"][0]["path"] = str(outside)

    tf.edit_card(folder, point_out)
    _refused(folder, "should be 'data/eng_Latn-deu_Latn/test-00000-of-00001.parquet'")


def test_data_folder_deleted(fresh):
    folder = fresh("cbd")
    shutil.rmtree(folder / "data")
    _refused(folder, "is missing; the folder is incomplete")


def test_truncated_parquet(fresh):
    folder = fresh("alee")
    path = tf.parquet(folder, PAIR, "test")
    path.write_bytes(path.read_bytes()[:-40])
    _refused(folder, "not a readable parquet file")


def test_card_config_without_name(fresh):
    folder = fresh("cbd")
    tf.edit_card(folder, lambda card: card["configs"][0].pop("config_name"))
    _refused(folder, "has no config_name")


@pytest.mark.parametrize("family", FAMILIES)
def test_edit_in_place_between_two_reads_is_seen(fresh, family):
    """The datasets cache once served the old rows of a rewritten file; the second open sees the edit."""
    folder = fresh(family)
    config, split, column = tf.TEXT[family]
    first = open_source(str(folder))
    before = first.rows(config, split)[0][column]
    tf.edit_split(folder, config, split, tf.set_cell(column, "an edited sentence"))
    tf.reseal(folder)  # a consistent re-seal: the edit is legitimate content, with a new id
    second = open_source(str(folder))
    assert second.ref.revision != first.ref.revision
    assert second.rows(config, split)[0][column] == "an edited sentence" != before


def test_edit_after_open_is_refused_not_scored_stale(fresh):
    folder = fresh("cbd")
    source = open_source(str(folder))
    tf.edit_split(folder, PAIR, "test", tf.set_cell("tgt_sentence", "changed under our feet"))
    with pytest.raises(InputFileError, match="changed after the folder was opened"):
        source.load(PAIR, "test")


def test_zero_row_split_is_one_sentence(fresh):
    folder = fresh("bucc")
    for config in (PAIR, f"{PAIR}-gold"):
        tf.edit_split(folder, config, "train", lambda t: t.slice(0, 0))
    tf.reseal(folder)
    source = open_source(str(folder))
    with pytest.raises(
        SchemaError,
        match="'train' .* has no rows, so there is nothing to score; choose another split",
    ):
        source.load(PAIR, "train")
    assert len(source.load(PAIR, "train", empty_ok=True)) == 0


def test_file_digests_stay_out_of_the_content_id(pristine):
    """Recording per-file digests did not change any content id: the id is computed without them."""
    folder = pristine["cbd"]
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert set(manifest["files"]) == {tf.data_file(PAIR, "test")}
    assert "files" not in stable_manifest(manifest)


def test_folder_without_digests_still_reads(fresh):
    """A folder from before digests were recorded is scored (checked against its open-time digests)."""
    folder = fresh("cbd")
    before = content_id(folder)
    tf.edit_manifest(folder, lambda m: m.pop("files"))
    assert content_id(folder) == before  # the digests never were part of the content id
    assert open_source(str(folder)).rows(PAIR, "test")
    with pytest.raises(ValidationError, match=r"manifest.json lacks \['files'\]"):
        validate_folder(folder)
