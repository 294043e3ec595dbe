"""The Python API: an in-memory object with encode() scores like the CLI on the same model."""

from __future__ import annotations

import json

import pytest
from xl_tiny_model import TinyModel

import xlbench
from builders.cli import main
from evaluators.core.errors import UsageError


@pytest.fixture
def aligned_files(tmp_path):
    src, tgt = tmp_path / "s.txt", tmp_path / "t.txt"
    words = [f"word{i} thing{i * 7 % 13} item{i % 5}" for i in range(30)]
    src.write_text("\n".join(words) + "\n", encoding="utf-8")
    tgt.write_text(
        "\n".join(w.upper() if i % 3 == 0 else w for i, w in enumerate(words)) + "\n",
        encoding="utf-8",
    )
    return src, tgt


def test_object_with_encode_gives_the_cli_numbers(aligned_files, tmp_path, capsys):
    src, tgt = aligned_files
    model = TinyModel()
    api = xlbench.evaluate("bitext-retrieval", model=(model, "tiny-v1"), src=str(src), tgt=str(tgt))
    assert model.calls > 0
    assert api.model["revision"] == "tiny-v1" and api.model["revision_source"] == "user"
    code = main(
        [
            "eval",
            "bitext-retrieval",
            "--src",
            str(src),
            "--tgt",
            str(tgt),
            "--model",
            "callable:xl_tiny_model:encode@tiny-v1",
            "--no-cache",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ]
    )
    assert code == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["model"]["revision"] == "tiny-v1" and cli["model"]["revision_source"] == "user"
    assert cli["scores"] == api.scores and cli["main_score"] == api.main_score
    assert (
        0 < api.main_score < 1
    )  # the upper-cased lines are not all retrieved: a number that can move


def test_xlbench_package_reexports_evaluate_lazily(aligned_files):
    src, tgt = aligned_files
    result = xlbench.evaluate(
        "bitext-retrieval", model=TinyModel(), model_revision="r2", src=str(src), tgt=str(tgt)
    )
    assert result.model["revision"] == "r2" and result.signature.startswith(
        "bitext-retrieval|ds:files:"
    )


def test_a_model_revision_only_names_callables_and_objects(aligned_files, tmp_path, capsys):
    """A spec that records its own revision (a random model's seed, a folder's digest) keeps it:
    a user's revision over it gave two different models one identity, so one skipped the other."""
    src, tgt = aligned_files
    args = ["eval", "bitext-retrieval", "--src", str(src), "--tgt", str(tgt)]
    args += ["--out", str(tmp_path)]
    for spec in ("random:16:1:5", "random:16:1:7"):
        assert main([*args, "--model", spec, "--model-revision", "v2"]) == 2
        assert "--model-revision names the revision of a callable: model" in (
            capsys.readouterr().err
        )
    with pytest.raises(UsageError, match="records its own"):
        xlbench.run_grid(
            "bitext-retrieval",
            ["random"],
            [None],
            model_revision="v2",
            params={"src": str(src), "tgt": str(tgt)},
        )
    assert not list(tmp_path.glob("*.json"))


def test_object_without_revision_gets_one_from_its_vectors_and_says_so(aligned_files):
    src, tgt = aligned_files
    with pytest.warns(UserWarning, match=r'pass model=\(obj, "name@rev"\)'):
        result = xlbench.evaluate("bitext-retrieval", model=TinyModel(), src=str(src), tgt=str(tgt))
    assert result.model["revision_source"] == "content" and len(result.model["revision"]) == 64
    assert "@unknown" not in result.signature
    named = xlbench.evaluate(
        "bitext-retrieval", model=(TinyModel(), "tiny@v3"), src=str(src), tgt=str(tgt)
    )
    assert (named.model["id"], named.model["revision"]) == ("tiny", "v3")


def test_api_refuses_unknown_parameters_and_objects():
    with pytest.raises(UsageError, match="Unknown parameter 'marign'.*margin"):
        xlbench.evaluate("bitext-retrieval", model=TinyModel(), marign="ratio")
    with pytest.raises(UsageError, match="encode"):
        xlbench.evaluate("bitext-retrieval", model=42, src="a", tgt="b")
    with pytest.raises(UsageError, match="Unknown evaluator 'bitext-retreival'"):
        xlbench.evaluate("bitext-retreival", model=TinyModel())
    with pytest.raises(UsageError, match="Unknown evaluator 3; valid: word-retrieval"):
        xlbench.evaluate(3, model=TinyModel())  # not a name: was a TypeError from difflib
    with pytest.raises(UsageError, match="Unknown dataset family None; valid: cbd"):
        xlbench.build(None)
