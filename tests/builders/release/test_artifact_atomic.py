"""Build atomicity: create-or-fail into --out, umask permissions, stale temp cleanup, kill at every write step."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from builders.base import BuildResult
from builders.release import artifact
from builders.release.artifact import WRITE_STEPS, write_dataset
from builders.release.validate import validate_folder
from evaluators.core import fileio
from evaluators.core.errors import OutputError
from evaluators.schema import get_family

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_artifact import bucc_tables, manifest  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
BUCC = get_family("bucc")

#: A build as its own process, so that XLBENCH_FAULT_AT can SIGKILL it at a named step.
BUILD = """
import sys
sys.path.insert(0, sys.argv[2])
from test_artifact import bucc_tables, manifest
from builders.release.artifact import write_dataset
from builders.base import BuildResult
from evaluators.schema import get_family
result = BuildResult(bucc_tables(extra=sys.argv[3]), construction=["insert pairs"], limitations=["toy"])
write_dataset(sys.argv[1], get_family("bucc"), result, manifest(), overwrite=sys.argv[4] == "1")
"""


def _result(extra: str = "") -> BuildResult:
    return BuildResult(bucc_tables(extra=extra), construction=["insert pairs"], limitations=["toy"])


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _parquet(folder: Path) -> dict[str, bytes]:
    return {k: v for k, v in _files(folder).items() if k.endswith(".parquet")}


def _build_process(out: Path, fault: str | None, extra: str = "", overwrite: bool = False) -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("XLBENCH_FAULT_AT", None)
    if fault:
        env["XLBENCH_FAULT_AT"] = fault
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            BUILD,
            str(out),
            str(Path(__file__).resolve().parent),
            extra,
            "1" if overwrite else "0",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, -9), proc.stderr[-2000:]
    return proc.returncode


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# -- create or fail -----------------------------------------------------------------------------
def _another_process_creates(final: Path, monkeypatch) -> None:
    """Make a folder appear at ``final`` while the build runs (after its up-front check)."""
    real = artifact.render_card

    def render_and_race(*args, **kwargs):
        final.mkdir()
        (final / "theirs.txt").write_text("someone else's build\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(artifact, "render_card", render_and_race)


def test_folder_created_during_the_build_is_never_replaced(tmp_path, monkeypatch):
    final = tmp_path / "ds"
    _another_process_creates(final, monkeypatch)
    with pytest.raises(OutputError) as err:
        write_dataset(final, BUCC, _result(), manifest())
    assert str(err.value) == (
        f"Output folder {str(final)!r} was created by another process while this build ran; it was left untouched: "
        "pass --overwrite to replace it, or choose another --out."
    )
    assert _files(final) == {"theirs.txt": b"someone else's build\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # no temp folder left either


def test_empty_folder_created_during_the_build_is_not_replaced_either(tmp_path, monkeypatch):
    """os.rename silently replaces an EMPTY folder: the create-or-fail rename must not."""
    final = tmp_path / "ds"
    monkeypatch.setattr(
        artifact,
        "render_card",
        lambda *a, real=artifact.render_card, **k: (final.mkdir(), real(*a, **k))[1],
    )
    with pytest.raises(OutputError, match="created by another process"):
        write_dataset(final, BUCC, _result(), manifest())
    assert final.is_dir() and list(final.iterdir()) == []


@pytest.mark.parametrize("renameat2", [True, False], ids=["renameat2", "lock-fallback"])
def test_overwrite_swaps_and_leaves_nothing(tmp_path, monkeypatch, renameat2):
    if not renameat2:
        monkeypatch.setattr(fileio, "_RENAMEAT2", None)
    elif fileio._RENAMEAT2 is None:
        pytest.skip("this system has no renameat2")
    final = write_dataset(tmp_path / "ds", BUCC, _result(), manifest())
    write_dataset(final, BUCC, _result(extra="!"), manifest(), overwrite=True)
    assert validate_folder(final).configs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
    assert _parquet(final) != {}


def test_two_concurrent_builds_second_fails(tmp_path):
    """Two real processes build into one --out: exactly one wins; the other says so and exits non-zero."""
    out = tmp_path / "ds"
    script = BUILD + "\nimport time\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("XLBENCH_FAULT_AT", None)
    here = str(Path(__file__).resolve().parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(out), here, extra, "0"],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for extra in ("A", "B")
    ]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes[0] == 0 and codes[1] != 0, results
    loser = next(err for code, err in results if code != 0)
    assert "OutputError" in loser and (
        "already exists" in loser or "created by another process" in loser
    )
    assert validate_folder(out).configs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


# -- permissions --------------------------------------------------------------------------------
@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_folders_and_files_follow_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        final = write_dataset(tmp_path / "ds", BUCC, _result(), manifest())
        text = fileio.atomic_write_text(tmp_path / "result.json", "{}\n")
        tmp = fileio.make_temp_dir("xlbench-publish-", tmp_path)
    finally:
        os.umask(old)
    for folder in [final, *(p for p in final.rglob("*") if p.is_dir()), tmp]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~mask, folder
    for path in [text, *(p for p in final.rglob("*") if p.is_file())]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask, path


# -- stale leftovers ----------------------------------------------------------------------------
def test_leftovers_of_dead_processes_are_cleaned_and_live_ones_kept(tmp_path):
    dead, live = _dead_pid(), os.getppid()
    names = [
        f".ds.tmp-{dead}-0a1b",
        f".ds.old-{dead}",
        f".ds.tmp-{live}-0c0d",
        f".other.tmp-{dead}-0e0f",
    ]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text("half a build\n")
    write_dataset(tmp_path / "ds", BUCC, _result(), manifest())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["ds", f".ds.tmp-{live}-0c0d", f".other.tmp-{dead}-0e0f"]
    )


def test_publish_temp_folders_of_dead_processes_are_cleaned(tmp_path, monkeypatch):
    import tempfile

    from builders.release.publish import clean_publish_temps

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = _dead_pid()
    for name in (
        f"xlbench-publish-{dead}-aa11",
        f"xlbench-verify-{dead}-bb22",
        f"xlbench-verify-{os.getpid()}-cc33",
    ):
        (tmp_path / name).mkdir()
    removed = clean_publish_temps()
    assert sorted(p.name for p in removed) == [
        f"xlbench-publish-{dead}-aa11",
        f"xlbench-verify-{dead}-bb22",
    ]
    assert [p.name for p in tmp_path.iterdir()] == [f"xlbench-verify-{os.getpid()}-cc33"]


# -- kill at every write step ---------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("step", [*WRITE_STEPS, "parquet:3"])
def test_kill_at_each_write_step_then_rerun_is_byte_identical(tmp_path, step):
    reference = write_dataset(tmp_path / "reference", BUCC, _result(), manifest())
    out = tmp_path / "ds"
    assert _build_process(out, step) == -9  # the hook fired: the build process died there
    if step == "done":  # killed after the rename: the folder is complete and valid
        assert _parquet(out) == _parquet(reference)
        validate_folder(out)
        return
    assert not out.exists()  # never a complete-looking folder
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".ds.")]
    assert leftovers and all(p.startswith(".ds.tmp-") for p in leftovers)
    write_dataset(out, BUCC, _result(), manifest())  # the rerun
    assert _parquet(out) == _parquet(reference)
    validate_folder(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ds",
        "reference",
    ]  # the dead build's temp folder is gone


@pytest.mark.slow
def test_kill_during_overwrite_keeps_the_old_folder(tmp_path):
    out = write_dataset(tmp_path / "ds", BUCC, _result(), manifest())
    before = _files(out)
    assert _build_process(out, "rename", extra="!", overwrite=True) == -9
    assert _files(out) == before
    write_dataset(out, BUCC, _result(extra="!"), manifest(), overwrite=True)
    assert _files(out) != before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
