"""Suite files: what loads, and the one sentence for each thing refused."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluators.core.errors import UsageError
from evaluators.core.params import param
from evaluators.suites.spec import load_suite, parse_suite, suite_names

TINY = Path(__file__).resolve().parents[2] / "builders" / "suites" / "tiny-suite.json"


@dataclass(frozen=True)
class FakeBucc:
    lang: str = param(help="pair")
    gold_pairs: int = param(100, "gold", min=1)


@dataclass(frozen=True)
class FakeOptions:
    license: str | None = param(None, "license")


def fake_params(family: str) -> list[type]:
    return [FakeBucc, FakeOptions]


def suite(**change) -> dict:
    data = {
        "name": "t",
        "version": "1.0.0",
        "description": "d",
        "datasets": {
            "b": {"family": "bucc", "recipe": {"lang": "deu-eng"}, "content_id": "a" * 64},
            "h": {"family": "cbd", "hub": "org/cbd", "revision": "v1.0.0"},
        },
        "entries": [
            {"evaluator": "bucc", "dataset": "b", "params": {"k": 4}},
            {"evaluator": "word-retrieval", "dataset": "h", "params": {"n": 10}},
        ],
    }
    for key, value in change.items():
        data[key] = value
    return data


def test_a_suite_loads_with_its_entries_families_and_needs():
    s = parse_suite(suite(), recipe_params=fake_params)
    assert [e.id for e in s.entries] == ["bucc:b", "word-retrieval:h"]
    assert s.families() == ["cbd", "bucc"]
    assert s.entries[1].needs == ("internet",) and s.entries[0].needs == ()
    assert not s.offline
    assert s.dataset("b").recipe_values() == {"lang": "deu-eng"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["entries"][0].update(evaluator="buc"), "unknown evaluator 'buc'"),
        (lambda d: d["entries"][0].update(dataset="nope"), "unknown dataset 'nope'"),
        (lambda d: d["datasets"]["b"].update(family="cdb"), "unknown dataset family 'cdb'"),
        (lambda d: d["entries"][0]["params"].update(kk=3), "Unknown parameter 'kk'"),
        (lambda d: d["entries"][0]["params"].update(k="four"), "--k must be"),
        (lambda d: d["datasets"]["b"]["recipe"].update(gold=3), "Unknown parameter 'gold'"),
        (lambda d: d["datasets"]["b"]["recipe"].update(gold_pairs=0), "--gold-pairs must be"),
        (lambda d: d["datasets"]["b"]["recipe"].update(out="x"), "cannot set 'out'"),
        (lambda d: d["datasets"]["b"].pop("content_id"), "needs the 'content_id'"),
        (lambda d: d["datasets"]["b"].update(content_id="xyz"), "content_id must be"),
        (lambda d: d["entries"][1].update(dataset="b"), "scores cbd datasets, but b is a bucc"),
        (
            lambda d: d["entries"].append({"evaluator": "aligners", "dataset": "b"}),
            "cannot be a suite entry",
        ),
        (lambda d: d["entries"].append(dict(d["entries"][0])), "two entries are called 'bucc:b'"),
        (lambda d: d.update(extra=1), "unknown key 'extra'"),
        (lambda d: d.update(version="1"), "MAJOR.MINOR.PATCH"),
        (lambda d: d["datasets"]["b"].update(needs=["gpu"]), "'needs' must be a list of"),
    ],
)
def test_a_bad_suite_is_refused_in_one_sentence(edit, message):
    data = copy.deepcopy(suite())
    edit(data)
    with pytest.raises(UsageError, match=message) as err:
        parse_suite(data, recipe_params=fake_params)
    text = str(err.value)
    assert text.startswith("suite") and "\n" not in text


def test_only_a_recipe_that_needs_the_internet_or_models_may_go_unpinned():
    data = suite()
    data["datasets"]["b"].pop("content_id")
    data["datasets"]["b"]["needs"] = ["internet"]
    data["datasets"]["b"]["recipe"]["license"] = "cc0-1.0"
    assert parse_suite(data, recipe_params=fake_params).dataset("b").content_id is None


def test_a_recipe_with_shared_data_needs_it():
    data = suite()
    data["datasets"]["b"]["recipe"]["lang"] = "${shared}/x"
    s = parse_suite(data)
    assert s.dataset("b").needs == ("shared-data",)
    assert s.dataset("b").recipe_values("/data") == {"lang": "/data/x"}


def test_suite_files_resolve_their_own_folder_and_unknown_names_are_refused(tmp_path, monkeypatch):
    tiny = load_suite(TINY)
    tsv = dict(tiny.dataset("cbd-eng-deu").recipe or ())["tsv"]
    assert tsv == str(TINY.parent / "tiny" / "cbd.tsv")
    with pytest.raises(
        UsageError, match="Unknown suite 'xlbench-ofline'.*Did you mean xlbench-offline"
    ):
        load_suite("xlbench-ofline")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(UsageError, match="not valid JSON"):
        load_suite(bad)
    (tmp_path / "notes").write_text("{", encoding="utf-8")  # an existing file, named otherwise
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="suite file 'notes' is not valid JSON"):
        load_suite("notes")


def test_every_shipped_suite_loads():
    assert {"xlbench-offline", "gaschi2022", "silveralign2022", "alee", "bucc2018"} <= set(
        suite_names()
    )
    for name in suite_names():
        s = load_suite(name)
        assert s.name == name and s.entries
        json.dumps([e.param_values() for e in s.entries])
