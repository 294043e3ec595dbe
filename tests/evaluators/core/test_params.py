"""``param()``: one declaration gives the CLI options, the API keywords and their checks."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import pytest

from evaluators.core.errors import UsageError
from evaluators.core.params import (
    add_param_arguments,
    api_names,
    key_label,
    make_params,
    param,
    params_from_namespace,
    split_values,
)


def _csv(value: str) -> list[str]:
    return [v for v in value.split(",") if v]


@dataclass(frozen=True)
class Demo:
    lang: str = param(help="language pair")
    k: int = param(10, "neighbours", min=1, section="search")
    share: float = param(0.5, "share", min=0, max=1, open_min=True, section="search")
    limit: int | None = param(None, "first N", type=int, min=1, hint="leave it out to use all")
    files: tuple[str, ...] = param((), "files", action="append", metavar="F")
    types: tuple[str, ...] = param(("a", "b"), "types", type=_csv, key=True)
    mode: str = param("x", "mode", choices=("x", "y"), key="the-mode", sig=False)
    free: float = param(1.0, "any finite number")
    pair: tuple[str, str] | None = param(None, "two files", nargs=2, metavar=("A", "B"))


def _parse(argv):
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_param_arguments(parser, Demo)
    return parser, params_from_namespace(Demo, parser.parse_args(argv))


def test_the_command_line_comes_from_the_declaration():
    parser, params = _parse(["--lang", "eng-deu", "--files", "a", "--files", "b", "--types", "c,d"])
    assert params == Demo("eng-deu", files=("a", "b"), types=("c", "d"))
    assert _parse(["--lang", "x"])[1].files == ()  # the append default is not shared
    sections = {g.title: [a.dest for a in g._group_actions] for g in parser._action_groups}
    assert sections["search"] == ["k", "share"]
    with pytest.raises(SystemExit):
        parser.parse_args([])  # --lang is required


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"k": 0}, "--k must be at least 1, got 0."),
        ({"share": 0.0}, "--share must be in (0, 1], got 0.0."),
        ({"share": math.nan}, "--share must be in (0, 1], got nan."),
        ({"free": math.nan}, "--free must be a finite number, got nan."),
        ({"free": math.inf}, "--free must be a finite number, got inf."),
        ({"limit": 0}, "--limit must be at least 1, got 0; leave it out to use all."),
        ({"k": "3"}, "--k must be a whole number; got '3'."),
        ({"mode": "z"}, "--mode must be one of x, y; got 'z'."),
        ({"files": "a"}, "--files takes a list of values; got 'a'."),
        ({"lang": None}, "--lang is required: language pair."),
        ({"kk": 1}, "Unknown parameter 'kk'"),
        ({"lang": ["eng-deu"]}, "--lang takes one value, not a list; got ('eng-deu',)."),
        ({"lang": 7}, "--lang must be a string; got int 7."),
        ({"pair": ["a"]}, "--pair takes 2 values; got ('a',)."),
        ({"pair": "a"}, "--pair takes 2 values; got 'a'."),
    ],
)
def test_bad_values_get_one_sentence_naming_the_flag(values, message):
    with pytest.raises(UsageError) as err:
        make_params(Demo, {"lang": "eng-deu", **values})
    assert message in str(err.value)


def test_api_values_are_normalised_like_the_command_line():
    params = make_params(Demo, {"lang": "l", "types": "c,d", "files": ["a"], "share": 1})
    assert params.types == ("c", "d") and params.files == ("a",)
    assert params.share == 1.0 and isinstance(params.share, float)


def test_labels_and_sharing_out_keywords():
    from dataclasses import fields

    labels = {f.name: key_label(f) for f in fields(Demo)}
    assert labels["types"] == "types" and labels["mode"] == "the-mode" and labels["k"] is None

    @dataclass(frozen=True)
    class Other:
        k: int = param(1, "shadowed by Demo's k")
        extra: bool = param(False, "extra")

    shares, unknown = split_values([Demo, Other], {"k": 2, "extra": True, "nope": 1})
    assert shares == [{"k": 2}, {"extra": True}] and unknown == ["nope"]
    assert api_names([Demo, Other])[-1] == "extra"


def test_mutable_defaults_are_refused():
    with pytest.raises(TypeError, match="immutable"):
        param([], "a list")
