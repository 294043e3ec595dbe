"""``xlbench.build``: the Python twin of ``xlbench build``, checked as the command line is."""

from __future__ import annotations

import json
import math

import pytest

import xlbench
from builders.cli import main
from builders.runner import Built
from evaluators.core.errors import UsageError
from evaluators.schema.meta import VOLATILE_KEYS


def _parallel(tmp_path, n=300):
    """Two line-aligned files of distinct synthetic sentences (as the bucc builder tests use)."""
    import numpy as np

    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lines = [" ".join("".join(rng.choice(letters, 6)) for _ in range(4)) for _ in range(n)]
    src, tgt = tmp_path / "c.de", tmp_path / "c.en"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return src, tgt


def _content(folder):
    manifest = json.loads((folder / "manifest.json").read_text())
    for key in VOLATILE_KEYS:
        manifest.pop(key)
    files = {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted((folder / "data").rglob("*.parquet"))
    }
    return manifest, files


def test_build_writes_what_the_command_line_writes(tmp_path, capsys):
    src, tgt = _parallel(tmp_path)
    built = xlbench.build(
        "bucc",
        lang="deu-eng",
        parallel=[str(src), str(tgt)],
        gold_pairs=20,
        parallel_fraction=0.2,
        out=str(tmp_path / "api"),
    )
    assert isinstance(built, Built) and built.path == str(tmp_path / "api")
    assert built.manifest.key_params == {
        "gold-pairs": "20",
        "parallel-fraction": "0.2",
        "test-fraction": "0.5",
    }
    argv = ["build", "bucc", "--lang", "deu-eng", "--parallel", str(src), str(tgt)]
    argv += ["--gold-pairs", "20", "--parallel-fraction", "0.2", "--out", str(tmp_path / "cli")]
    assert main(argv) == 0
    assert "built " in capsys.readouterr().out
    api, cli = _content(tmp_path / "api"), _content(tmp_path / "cli")
    assert api == cli
    assert api[0]["build_signature"] == built.manifest.build_signature()
    # An int for a float parameter is the same parameter (the manifest keeps 1.0, not 1).
    again = xlbench.build(
        "bucc",
        lang="deu-eng",
        parallel=(str(src), str(tgt)),
        gold_pairs=20,
        parallel_fraction=1,
        out=str(tmp_path / "one"),
    )
    assert again.manifest.params["parallel_fraction"] == 1.0
    assert isinstance(again.manifest.params["parallel_fraction"], float)


def test_build_options_and_version_come_from_the_builder(tmp_path):
    src, tgt = _parallel(tmp_path, n=120)
    out = tmp_path / "o"
    common = dict(
        lang="deu-eng",
        parallel=(str(src), str(tgt)),
        gold_pairs=10,
        parallel_fraction=0.2,
        out=str(out),
    )
    built = xlbench.build("bucc", **common, changelog="smaller", version="1.2.0")
    assert built.manifest.version == "1.2.0"
    assert built.manifest.changelog[0]["changes"] == "smaller"
    with pytest.raises(Exception, match="--overwrite"):
        xlbench.build("bucc", **common)
    assert xlbench.build("bucc", **common, overwrite=True).manifest.version == "1.0.0"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"gold_pair": 20}, "has no parameter 'gold_pair'"),
        ({"gold_pair": 20}, "Did you mean gold_pairs?"),
        ({"engine": "ray"}, "has no parameter 'engine'"),  # bucc runs no engine
        ({"gold_pairs": 1}, "--gold-pairs must be at least 2 (one per split), got 1."),
        ({"gold_pairs": "40"}, "--gold-pairs must be a whole number; got '40'."),
        ({"gold_pairs": 2.5}, "--gold-pairs must be a whole number; got 2.5."),
        ({"parallel_fraction": math.nan}, "--parallel-fraction must be in (0, 1], got nan."),
        ({"parallel_fraction": 0}, "--parallel-fraction must be in (0, 1], got 0.0."),
        ({"test_fraction": 1.0}, "--test-fraction must be in (0, 1), got 1.0."),
        ({"seed": -1}, "--seed must be at least 0, got -1."),
        ({"seed": True}, "--seed must be a whole number; got True."),
        ({"overwrite": "yes"}, "--overwrite must be true or false; got 'yes'."),
        ({"lang": None}, "--lang is required"),
        ({"version": "1.2"}, "semantic version"),
    ],
)
def test_build_refuses_bad_keywords_and_values_before_any_work(tmp_path, values, message):
    out = tmp_path / "never"
    kwargs = {"lang": "deu-eng", "out": str(out), **values}
    with pytest.raises(Exception) as err:
        xlbench.build("bucc", **kwargs)
    assert message in str(err.value)
    assert not out.exists()


def test_unknown_family_names_the_valid_ones():
    with pytest.raises(UsageError, match="Unknown dataset family 'cdb'.*cbd"):
        xlbench.build("cdb", lang="eng-deu")


def test_workers_is_the_engine_option_of_every_family(monkeypatch):
    """One --workers: a family that declared its own (cbd did) fixed the count, so the Ray
    default (2) and XLBENCH_WORKERS never reached its builds."""
    from builders.registry import BUILDERS, get_builder
    from builders.runner import EngineOptions, option_classes
    from evaluators.core.params import split_values

    for name in BUILDERS.names():
        builder = get_builder(name)
        if builder.engine:
            classes = option_classes(builder)
            (own, options, engine), unknown = split_values(classes, {"workers": 3})
            assert classes[-1] is EngineOptions and engine == {"workers": 3}, name
            assert own == {} and options == {} and not unknown, name
    monkeypatch.setenv("XLBENCH_WORKERS", "3")
    assert EngineOptions().open().workers == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bucc", "--lang", "deu-eng", "--seed", "-1"], "--seed must be at least 0, got -1."),
        (
            ["bucc", "--lang", "deu-eng", "--parallel-fraction", "nan"],
            "--parallel-fraction must be in (0, 1], got nan.",
        ),
        (
            ["alee", "--langs", "de", "--limit", "-1"],
            "--limit must be a positive number of sources",
        ),
        (
            ["alee", "--langs", "de", "--bible-books", "70"],
            "--bible-books must be between 1 and 66",
        ),
        (["silver", "--lang", "eng-spa", "--mt-rate", "0"], "--mt-rate must be positive"),
        (["silver", "--lang", "eng-spa", "--workers", "0"], "--workers must be at least 1, got 0."),
        (["cbd", "--lang", "eng-deu", "--max-pairs", "-5"], "--max-pairs must be 0 (keep all)"),
    ],
)
def test_the_command_line_refuses_values_outside_their_declaration(tmp_path, capsys, argv, message):
    out = tmp_path / "never"
    assert main(["build", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("error:") == 1
    assert not out.exists()


def test_manifest_parameters_are_plain_json_values():
    """The card prints the manifest's parameters: a tuple would read ``('PN', ...)``, not ``['PN', ...]``."""
    from builders.alee.spec import Params
    from builders.base import manifest_params

    values = manifest_params(Params(("deu_Latn",), bible_books=(40, 41)))
    assert values["types"] == ["PN", "RS", "AR", "HS"] and isinstance(values["types"], list)
    assert values["bible_books"] == [40, 41] and isinstance(values["bible_books"], list)
