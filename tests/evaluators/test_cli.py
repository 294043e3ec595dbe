"""The CLI over the runner: fast start (nothing heavy imported), registries as the single source of tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from builders.cli import main, registry_markdown
from builders.registry import family_table, with_family_table
from evaluators.tasks import TASKS

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("datasets", "torch", "transformers", "matplotlib", "polars", "pyarrow", "huggingface_hub")
PROBE = """
import sys, contextlib, io
from builders.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main({argv!r})
    except SystemExit:
        pass
print(",".join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["eval", "--help"], ["list", "--markdown"]])
def test_help_and_list_import_nothing_heavy(argv):
    code = PROBE.format(argv=argv, heavy=HEAVY)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1:] in ([], [""]), (
        f"{argv} imported {out.stdout.strip()}"
    )


def test_readme_family_table_and_docs_come_from_the_registry():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert family_table() in readme, "README family table is stale: run 'make docs'"
    assert (REPO / "docs" / "registry.md").read_text(encoding="utf-8") == registry_markdown(), (
        "docs/registry.md is stale: run 'make docs'"
    )


def test_make_docs_regenerates_a_stale_readme_family_table():
    """A new evaluator or family changes the table; ``make docs`` rewrites it, nothing else."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert with_family_table(readme) == readme
    stale = readme.replace(family_table(), family_table().rsplit("\n", 1)[0])
    assert stale != readme and with_family_table(stale) == readme


def test_task_metadata_agrees_with_the_registry():
    for entry in TASKS.entries():
        meta = TASKS.load(entry.name).meta
        assert meta.name == entry.name and meta.family == entry.extra["family"]
        assert meta.epilog and f"xlbench eval {entry.name}" in meta.epilog


def test_eval_help_of_one_evaluator_shows_its_params_and_the_common_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["eval", "bucc", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for flag in (
        "--threshold-from",
        "--sample-fraction",
        "--model",
        "--dataset",
        "--rerun",
        "--overwrite",
    ):
        assert flag in text


def test_threshold_options_stay_mutually_exclusive(capsys):
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "eval",
                "bucc",
                "--dataset",
                "x",
                "--model",
                "random",
                "--threshold",
                "0.5",
                "--threshold-from",
                "r.json",
            ]
        )
    assert exc.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize("name", TASKS.names())
def test_every_evaluator_documents_itself(name, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["eval", name, "--help"])
    assert exc.value.code == 0 and "--out" in capsys.readouterr().out


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("import numpy as np\nfrom pathlib import Path\nimport xlbench")
    code = readme[start : readme.index("```", start)]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    score, signature = capsys.readouterr().out.split(" ", 1)
    assert 0 <= float(score) <= 1 and signature.startswith(
        "bitext-retrieval|ds:files:src.txt+tgt.txt@"
    )
