"""Optional extras fail with one sentence naming the pip command."""

from __future__ import annotations

import sys

import pytest

from evaluators.core.errors import EngineUnavailableError
from evaluators.core.optional import require


def test_plots_without_matplotlib_name_the_extra(monkeypatch):
    from evaluators import plots

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with pytest.raises(
        EngineUnavailableError, match=r"--plot needs 'matplotlib'.*pip install 'xlbench\[plots\]'"
    ):
        plots.pyplot()


def test_require_looks_up_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(
        EngineUnavailableError, match=r"hf: encoders needs 'torch'.*xlbench\[encoders\]"
    ):
        require("torch", feature="hf: encoders")


def _pyproject_extras() -> dict[str, list[str]]:
    from pathlib import Path

    import tomllib

    path = Path(__file__).resolve().parents[3] / "pyproject.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))["project"]["optional-dependencies"]


def test_every_optional_dependency_names_an_extra_that_exists():
    from evaluators.core.optional import EXTRAS

    extras = _pyproject_extras()
    assert set(EXTRAS.values()) <= set(extras), set(EXTRAS.values()) - set(extras)


def test_the_aligners_name_their_extra_not_a_bare_pip_command(monkeypatch):
    from evaluators.aligners import backends

    monkeypatch.setitem(sys.modules, "eflomal", None)
    with pytest.raises(
        EngineUnavailableError,
        match=r"^The eflomal aligner needs 'eflomal', which is not installed; "
        r"install it with pip install 'xlbench\[aligners\]'\.$",
    ):
        backends.eflomal_directional([["a"]], [["b"]])
    assert any(d.startswith("eflomal") for d in _pyproject_extras()["aligners"])


def test_no_hand_written_import_fallbacks():
    """Optional imports go through evaluators.core.optional (require or find), not ``except ImportError``.

    The exceptions are lookups of the project's own or the user's modules (a registry
    entry, ``callable:<module>:<fn>``), a base dependency the schema may not import
    ``optional`` for, amrlib's imports inside its loader, and the fault classifier's probe.
    """
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    allowed = {
        "evaluators/core/optional.py",  # the one place
        "evaluators/core/registry.py",  # a registry entry's module (the project's own)
        "evaluators/cli.py",  # idem
        "builders/cli.py",  # idem
        "builders/registry.py",  # a builder family's own module (the project's own)
        "evaluators/encoders/callable.py",  # the user's module of callable:<module>:<fn>
        "evaluators/schema/langs.py",  # langcodes: a base dependency; the schema imports no optional
        "evaluators/data/hubclient.py",  # classify() probes which client libraries are loaded
        "builders/adapters/amr.py",  # amrlib imports its own dependencies inside the loader
        "evaluators/metrics/csls.py",  # torch on GPU: moves behind the compute adapter (issue 23, item 4)
    }
    pattern = re.compile(r"except \(?(ImportError|ModuleNotFoundError)")
    found = sorted(
        str(p.relative_to(root))
        for package in ("evaluators", "builders", "cards", "xlbench")
        for p in (root / package).rglob("*.py")
        if pattern.search(p.read_text(encoding="utf-8"))
    )
    assert set(found) <= allowed, sorted(set(found) - allowed)
