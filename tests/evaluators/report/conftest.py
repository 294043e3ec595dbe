from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest


def _load_maker():
    spec = importlib.util.spec_from_file_location(
        "xlbench_make_results", Path(__file__).resolve().parents[2] / "support" / "make_results.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def maker():
    """``tests/support/make_results.py`` as a module (its dataset builders and ``_quiet`` runner)."""
    return _load_maker()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    """Real result JSONs: 3 seeded random encoders x 6 evaluators on tiny offline datasets, plus aligners."""
    root = tmp_path_factory.mktemp("corpus")
    return _load_maker().make_results(root)


@pytest.fixture
def results(corpus, tmp_path) -> Path:
    """A private copy of the corpus a test may change."""
    dest = tmp_path / "results"
    shutil.copytree(corpus, dest)
    return dest


def result_files(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.rglob("*.json"))]


@pytest.fixture(scope="session")
def site(corpus, tmp_path_factory) -> Path:
    """The HTML report of the corpus, built once."""
    from evaluators.report.site import build_site

    out = tmp_path_factory.mktemp("site") / "site"
    build_site([corpus], out)
    return out
