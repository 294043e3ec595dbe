"""The declarative pieces: parameter fields -> argparse options, API keywords and signature entries."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest

from evaluators.core.errors import UsageError
from evaluators.core.registry import Registry
from evaluators.run.task import (
    add_param_arguments,
    make_params,
    param,
    params_from_namespace,
    signature_params,
)


@dataclass(frozen=True)
class Demo:
    n: int = param(5, "how many")
    csls_k: int = param(10, "neighbours")
    mode: str = param("a", "mode", choices=("a", "b"))
    tags: tuple[str, ...] = param(("x",), "tags", nargs="+", choices=("x", "y"))
    quiet: bool = param(False, "no output", sig=False)
    base: str = param(
        "auto", "index base", choices=("auto", "0", "1"), consts=(("--one", "1", "1-based"),)
    )
    limit: int | None = param(None, "cap", type=int, group="cap")
    share: float | None = param(None, "share", type=float, group="cap", sig="share_of")


def _parse(argv):
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_param_arguments(parser, Demo)
    return params_from_namespace(Demo, parser.parse_args(argv))


def test_options_come_from_the_fields():
    p = _parse(
        ["--n", "7", "--csls-k", "3", "--tags", "x", "y", "--quiet", "--one", "--share", "0.5"]
    )
    assert p == Demo(n=7, csls_k=3, tags=("x", "y"), quiet=True, base="1", share=0.5)
    assert _parse([]) == Demo()


def test_mutually_exclusive_groups_and_choices_hold():
    parser = argparse.ArgumentParser()
    add_param_arguments(parser, Demo)
    with pytest.raises(SystemExit):
        parser.parse_args(["--limit", "1", "--share", "0.5"])
    with pytest.raises(SystemExit):
        parser.parse_args(["--one", "--base", "0"])
    with pytest.raises(UsageError, match="--tags must be one of x, y; got 'z'"):
        make_params(Demo, {"tags": ["x", "z"]})


def test_signature_entries_use_labels_skip_non_scoring_fields_and_take_extras():
    values = {**{f: getattr(Demo(), f) for f in Demo.__dataclass_fields__}, "n": 3, "seed": 1}
    sig = signature_params(Demo, values, {"const": "c", "mode": None})
    assert list(sig) == [
        "n",
        "csls-k",
        "mode",
        "tags",
        "base",
        "limit",
        "share_of",
        "seed",
        "const",
    ]
    assert sig["n"] == 3 and sig["mode"] is None and "quiet" not in sig


def test_registry_suggests_close_names_and_imports_lazily():
    reg = Registry("widget", "--widget")
    reg.register("alpha", "json:dumps", "a json dumper", family="x")
    reg.register("beta", "evaluators.tasks.not_written_yet")
    assert reg.names() == ["alpha", "beta"] and reg.load("alpha")([1]) == "[1]"
    with pytest.raises(
        UsageError, match=r"Unknown widget 'alpah' \(--widget\); valid: alpha, beta.*alpha"
    ):
        reg.entry("alpah")
    assert list(reg.available()) == ["alpha"]  # a module that does not exist yet is skipped
    assert "| `alpha` | a json dumper | x |" in reg.markdown(
        ("name", "what", "family"), ("family",)
    )
