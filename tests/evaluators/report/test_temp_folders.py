"""The report's and the mteb export's temporary folders have an owner (issue 27, item 4).

A killed ``report`` left ``.site.tmp-*`` folders forever and a full disk during ``export mteb``
left a temporary folder and an empty ``--out``: each temporary folder now carries its
owner's PID, the next run removes those of dead owners, and a failure removes its own.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest

from evaluators.core.errors import OutputError


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_the_next_report_removes_what_a_killed_one_left(corpus, tmp_path):
    from evaluators.report.site import build_site

    dead = _dead_pid()
    stale = [tmp_path / f".site.tmp-{dead}-0a1b2c3d", tmp_path / f".site.old-{dead}"]
    for folder in stale:
        folder.mkdir()
        (folder / "index.html").write_text("half", encoding="utf-8")
    live = tmp_path / f".site.tmp-{os.getpid()}-00000000"  # a report still running here
    live.mkdir()
    build_site([corpus], tmp_path / "site", fmt="md")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "site"])
    # A second report over the first swaps folders and leaves no temporary one.
    live.rmdir()
    build_site([corpus], tmp_path / "site", fmt="md")
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_a_report_on_a_full_disk_leaves_nothing(corpus, tmp_path, monkeypatch):
    from evaluators.report import site

    def full(records, folder, *_):
        (folder / "index.html").write_text("half", encoding="utf-8")
        raise _enospc()

    monkeypatch.setattr(site, "_write", full)
    with pytest.raises(OutputError, match=r"Cannot write the report to .*No space left on device"):
        site.build_site([corpus], tmp_path / "new" / "site")
    assert list(tmp_path.iterdir()) == []


def test_an_mteb_export_on_a_full_disk_leaves_nothing_and_sweeps_stale_folders(
    corpus, tmp_path, monkeypatch
):
    from evaluators.report import mteb

    real = mteb._write_export
    out = tmp_path / "mteb"

    def full(tmp, target, written):
        (tmp / "half.json").write_text("{", encoding="utf-8")
        raise _enospc()

    monkeypatch.setattr(mteb, "_write_export", full)
    with pytest.raises(
        OutputError, match=r"Cannot write mteb results to .*No space left on device"
    ):
        mteb.export_results([corpus], out)
    assert not out.exists()
    out.mkdir()
    stale = out / f".tmp-export-{_dead_pid()}-0a1b2c3d"
    stale.mkdir()
    with pytest.raises(OutputError):
        mteb.export_results([corpus], out)
    assert list(out.iterdir()) == [], "a failed export left its temporary folder"
    monkeypatch.setattr(mteb, "_write_export", real)
    stale.mkdir()
    written = mteb.export_results([corpus], out)
    assert written and not [p for p in out.iterdir() if p.name.startswith(".")]
