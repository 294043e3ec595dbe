"""Shared test fixtures: isolated HF caches, the real-data folder, tiny helpers."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

# Keep every cache the tests touch out of the user's home and make runs hermetic.
_TMP = Path(tempfile.mkdtemp(prefix="xlbench-tests-"))
os.environ.setdefault("HF_HOME", str(_TMP / "hf"))
os.environ.setdefault("HF_DATASETS_CACHE", str(_TMP / "hf" / "datasets"))
os.environ.setdefault("XLBENCH_CACHE", str(_TMP / "xlbench"))
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")
# Progress lines (evaluators/core/progress.py) come every 25 s: a slow machine would add lines to
# stderr that tests compare. A day's interval keeps them out; the progress tests set 0 themselves.
os.environ["XLBENCH_PROGRESS_INTERVAL"] = "86400"
os.environ.pop("XLBENCH_PROGRESS", None)  # bars off a terminal would put \r into captured stderr
# The default runtime (auto) exports each transformers model to ONNX once; the suite's hundreds of
# tiny models run on torch instead. The tests of `auto` itself unset this (tests/evaluators/encoders/
# test_onnxrt.py).
os.environ["XLBENCH_BACKEND"] = "torch"
# The loopback Hub of tests/support/hubserver.py: huggingface_hub and datasets read HF_ENDPOINT and
# HF_HUB_DISABLE_XET once, at import, so the port is reserved here, before any test imports them.
with socket.socket() as _sock:
    _sock.bind(("127.0.0.1", 0))
    os.environ.setdefault("XLBENCH_TEST_HUB_PORT", str(_sock.getsockname()[1]))
os.environ.setdefault("HF_ENDPOINT", f"http://127.0.0.1:{os.environ['XLBENCH_TEST_HUB_PORT']}")
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")


def pytest_unconfigure(config) -> None:
    """Remove the run's caches (models, exports, Hub files): a run leaves nothing in the temp folder."""
    shutil.rmtree(_TMP, ignore_errors=True)


REPO = Path(__file__).resolve().parents[1]
#: Where ``xlbench eval`` writes without ``--out``: a test must never leave files in the checkout.
_REPO_RESULTS = REPO / "results"
#: What was in it when the session started.
_BEFORE = pytest.StashKey[set]()


@pytest.fixture(autouse=True)
def _cwd_outside_the_checkout(tmp_path_factory, monkeypatch) -> None:
    """Run each test in a folder of its own, so that a default output path (``results/``) lands there."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


def _results_in_checkout() -> set[Path]:
    return set(_REPO_RESULTS.rglob("*")) if _REPO_RESULTS.is_dir() else set()


def pytest_sessionstart(session) -> None:
    session.config.stash[_BEFORE] = _results_in_checkout()


def pytest_sessionfinish(session, exitstatus) -> None:
    """Fail the run when a test wrote into the checkout's ``results/`` (a subprocess run there without ``--out``)."""
    before = session.config.stash.get(_BEFORE, None)
    if before is None:
        return
    added = sorted(_results_in_checkout() - before)
    if added:
        names = ", ".join(p.name for p in added[:3]) + (" ..." if len(added) > 3 else "")
        writer = session.config.get_terminal_writer()
        writer.line()
        writer.line(
            f"tests wrote {len(added)} file(s) into {_REPO_RESULTS} ({names}); "
            "give the command that wrote them an --out under tmp_path.",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


SHARED_DATA = Path(os.environ.get("XLBENCH_SHARED_DATA", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def torch_device(request) -> str:
    """The torch device of a GPU path's test: the CPU always; CUDA too under ``pytest -m gpu``.

    The CUDA paths take an explicit device, so their logic runs on CPU tensors in ``make test``;
    on a machine with CUDA, ``pytest -m gpu`` runs the same assertions on the GPU.
    """
    if request.param == "cuda":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("needs a CUDA device (torch sees none)")
    return request.param


@pytest.fixture
def shared_data() -> Path:
    """The read-only real-data folder (../shared/data); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"real-data check: {SHARED_DATA} is absent (set XLBENCH_SHARED_DATA to the shared data folder)"
        )
    return SHARED_DATA


# --- fixtures shared by test folders far apart (tests/support/) ---
# pytest only sees a conftest's fixtures in and below its folder. The loopback Hub and the local
# Ray cluster serve tests in evaluators/ and builders/ alike, so their fixtures live in
# tests/support/ and are re-exported here (loaded by path, as the tests load their helpers).


def _load_support(name: str):
    import importlib.util
    import sys

    path = Path(__file__).resolve().parent / "support" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"xlbench_tests_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


_HUB = _load_support("hub_fixtures")
hub, hub_log, token, make_folder = _HUB.hub, _HUB.hub_log, _HUB.token, _HUB.make_folder
waits, faults, bad_token = _HUB.waits, _HUB.faults, _HUB.bad_token
_RAY = _load_support("ray_fixtures")
ray_cluster, killer = _RAY.ray_cluster, _RAY.killer
