"""Publishing under injected faults: after any single fault, a rerun finishes the publication verified.

Every scenario injects ONE fault into the loopback Hub (an HTTP status, a
``Retry-After``, a slow answer, a dropped connection, or a SIGKILL of the
publishing process) at a named step: ``upload``, ``commit``, ``tag`` or
``verify``; ``after`` means the Hub carried the request out and only the answer
was lost. The invariant checked after each run: a version tag exists only on a
commit that holds exactly the folder's files and was loaded back; a failed run
prints one sentence; the rerun (or the same run, through its retries) ends
with the tag on that commit, with a single publish commit on ``main``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from builders.cli import main
from evaluators.data.hubclient import ATTEMPTS

ROOT = Path(__file__).resolve().parents[3]


def _parquet(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.parquet"))}


def _publish_titles(hub, repo: str) -> list[str]:
    return [c.title for c in hub.history(repo) if c.title.startswith("Publish")]


def _assert_invariant(hub, repo: str, folder: Path, tag: str = "v1.0.0") -> None:
    """A tag, if any, is on a commit holding exactly the folder's parquet files."""
    if ("dataset", repo) not in hub.repos:
        return
    tags = hub.repos[("dataset", repo)].tags
    if tag in tags:
        files = hub.files_at(repo, tag)
        assert {p: b for p, b in files.items() if p.endswith(".parquet")} == _parquet(folder)


def _assert_published(hub, repo: str, folder: Path, tag: str = "v1.0.0") -> None:
    r = hub.repos[("dataset", repo)]
    assert r.tags[tag] == r.branches["main"]
    _assert_invariant(hub, repo, folder, tag)
    assert _publish_titles(hub, repo) == [f"Publish xlbench-bucc-test {tag}"]


def _last_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _run(folder: Path, repo: str, capfd) -> tuple[int, dict | None, str]:
    code = main(["publish", str(folder), "--repo", repo, "--yes"])
    out, err = capfd.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


# -- faults the same run absorbs (retries) ------------------------------------------------------
@pytest.mark.parametrize("step", ["refs", "upload", "commit", "tag", "verify"])
@pytest.mark.parametrize("status", [500, 503])
def test_one_server_error_at_any_step_is_retried(
    faults, token, make_folder, capfd, waits, step, status
):
    repo = f"xlbench-test/5xx-{step}-{status}"
    folder = make_folder()
    fault = faults.inject(step, status=status)
    code, report, err = _run(folder, repo, capfd)
    assert code == 0, err
    assert fault.hits == 1  # the fault did fire
    assert report["status"] == "published"
    _assert_published(faults, repo, folder)


def test_rate_limit_waits_for_retry_after(faults, token, make_folder, capfd, waits):
    repo = "xlbench-test/ratelimited"
    folder = make_folder()
    faults.inject("refs", status=429, retry_after=3, times=2)
    faults.inject("tag", status=429, retry_after=1)
    code, report, err = _run(folder, repo, capfd)
    assert code == 0, err
    assert waits == [3.0, 3.0, 1.0]  # exactly the server's Retry-After, not the backoff
    _assert_published(faults, repo, folder)


def test_long_retry_after_is_not_waited_and_says_when(faults, token, make_folder, capfd, waits):
    faults.inject("refs", status=429, retry_after=900)
    code, _, err = _run(make_folder(), "xlbench-test/ratelimited-long", capfd)
    assert code == 1
    assert _last_line(err) == (
        f"error: reading the repo's refs: the Hub at {faults.url} rate-limited the requests (429); retry after 900 s "
        "and run the same command again."
    )
    assert waits == []


def test_persistent_server_error_is_bounded(faults, token, make_folder, capfd, waits):
    faults.inject("refs", status=502, times=ATTEMPTS)
    code, _, err = _run(make_folder(), "xlbench-test/down", capfd)
    assert code == 1
    assert _last_line(err) == (
        f"error: reading the repo's refs: the Hub at {faults.url} failed (HTTP 502); wait a minute and run the same command again."
    )
    assert len(waits) == ATTEMPTS - 1


def test_slow_answers_still_publish(faults, token, make_folder, capfd):
    repo = "xlbench-test/slow"
    folder = make_folder()
    for step in ("refs", "commit", "tag"):
        faults.inject(step, status=None, delay=0.3)
    code, _, err = _run(folder, repo, capfd)
    assert code == 0, err
    _assert_published(faults, repo, folder)


# -- lost answers: the Hub did it, the client never heard ---------------------------------------
@pytest.mark.parametrize("mode", ["drop", "500"])
@pytest.mark.parametrize("step", ["commit", "tag"])
def test_lost_answer_after_the_hub_applied_it(faults, token, make_folder, capfd, waits, step, mode):
    repo = f"xlbench-test/lost-{step}-{mode}"
    folder = make_folder()
    kwargs = {"drop": True} if mode == "drop" else {"status": 500}
    faults.inject(step, after=True, **kwargs)
    code, report, err = _run(folder, repo, capfd)
    assert code == 0, err
    assert report["status"] == "published"
    _assert_published(faults, repo, folder)  # one commit: the landed one was found, not made twice


# -- dropped connections: the run may fail, the rerun finishes ---------------------------------
@pytest.mark.slow  # huggingface_hub's own download/upload retries sleep for real
@pytest.mark.parametrize("step", ["refs", "upload", "commit", "tag", "verify"])
def test_dropped_connection_then_rerun(faults, token, make_folder, capfd, waits, step):
    repo = f"xlbench-test/drop-{step}"
    folder = make_folder()
    faults.inject(step, drop=True, times=ATTEMPTS + 1)  # beyond every retry: this run must give up
    code, report, err = _run(folder, repo, capfd)
    if code != 0:
        assert code == 1
        last = _last_line(err)
        assert last.startswith("error: ") and "Traceback" not in err and last.endswith("."), err
        r = faults.repos.get(("dataset", repo))
        assert r is None or "v1.0.0" not in r.tags  # a failed run never leaves the tag
    faults.clear_faults()
    _assert_invariant(faults, repo, folder)
    code, report, err = _run(folder, repo, capfd)
    assert code == 0, err
    assert report["status"] in ("published", "unchanged")
    assert report["verified"]
    _assert_published(faults, repo, folder)


# -- a killed publisher: the rerun finishes ---------------------------------------------------
def _publish_killed_at(
    hub, folder: Path, repo: str, step: str, after: bool
) -> tuple[int, int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    fault = hub.inject(step, status=None, after=after)
    proc = subprocess.Popen(
        [sys.executable, "-m", "builders", "publish", str(folder), "--repo", repo, "--yes"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    fault.kill_pid = proc.pid  # the client needs seconds to import before its first request
    _, err = proc.communicate(timeout=180)
    return proc.pid, proc.returncode, err


@pytest.mark.slow
@pytest.mark.parametrize(
    ("step", "after"),
    [
        ("upload", False),
        ("commit", False),
        ("commit", True),
        ("verify", False),
        ("tag", False),
        ("tag", True),
    ],
)
def test_killed_publisher_then_rerun(faults, token, make_folder, capfd, step, after):
    repo = f"xlbench-test/kill-{step}-{'after' if after else 'before'}"
    folder = make_folder()
    pid, returncode, stderr = _publish_killed_at(faults, folder, repo, step, after)
    assert returncode == -9, stderr[-2000:]
    assert faults.wait_idle()  # the dead client's other connections are finished with
    r = faults.repos.get(("dataset", repo))
    if step in ("upload",) or (step == "commit" and not after):
        assert _publish_titles(faults, repo) == []  # the repo is as before: no commit, no tag
    if r is not None and "v1.0.0" in r.tags:
        assert step == "tag" and after  # the only way to a tag: verified, then tagged, then killed
    _assert_invariant(faults, repo, folder)
    staging = list(Path(tempfile.gettempdir()).glob(f"xlbench-*-{pid}-*"))
    assert staging  # the dead run left its staging folder behind: the rerun must clean it

    code, report, err = _run(folder, repo, capfd)
    assert code == 0, err
    assert report["verified"] and report["status"] in ("published", "unchanged")
    _assert_published(faults, repo, folder)
    assert [p for p in staging if p.exists()] == []  # the dead run's temp folders were cleaned


# -- content rules ------------------------------------------------------------------------------
def test_card_only_edit_is_refused(hub_log, token, make_folder, capfd):
    repo = "xlbench-test/card-edit"
    folder = make_folder()
    assert _run(folder, repo, capfd)[0] == 0
    sha = hub_log.repos[("dataset", repo)].tags["v1.0.0"]
    card = folder / "README.md"
    card.write_text(
        card.read_text(encoding="utf-8").replace(
            "## Limitations\n", "## Limitations\n\n- One more limitation.\n"
        ),
        encoding="utf-8",
    )
    code, _, err = _run(folder, repo, capfd)
    assert code == 2
    assert _last_line(err) == (
        f"error: {repo} already has v1.0.0 (commit {sha[:12]}) with the same rows but a different card (README.md); "
        "published versions are immutable, so rebuild with a new --version (e.g. a patch version) and a --changelog "
        "line to publish the card change."
    )
    assert hub_log.repos[("dataset", repo)].tags == {"v1.0.0": sha}


def test_rebuild_with_other_timestamps_is_unchanged_and_verified(
    hub_log, token, make_folder, capfd
):
    repo = "xlbench-test/rebuilt"
    folder = make_folder()
    assert _run(folder, repo, capfd)[0] == 0
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["started_at"] = "2099-01-01T00:00:00Z"
    (folder / "manifest.json").write_text(
        json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    hub_log.clear_log()
    code, report, err = _run(folder, repo, capfd)
    assert code == 0, err
    assert report["status"] == "unchanged" and report["verified"]
    assert "verified now" in report["message"]
    assert not [r for r in hub_log.requests if "/commit/" in r[1] or "/tag/" in r[1]]


def test_an_unverified_tag_is_verified_before_unchanged(hub_log, token, make_folder, capfd):
    """A tag that an older xlbench (tag first, verify later) left behind is loaded back on the rerun."""
    repo = "xlbench-test/legacy-tag"
    folder = make_folder()
    train = "data/deu_Latn-eng_Latn/train-00000-of-00001.parquet"
    french = make_folder(src="fra_Latn", name="french")
    assert _run(folder, repo, capfd)[0] == 0
    # the Hub now serves other bytes: "the same files" is not enough to call it published
    hub_log.tamper[train] = (french / train.replace("deu_Latn", "fra_Latn")).read_bytes()
    try:
        code, _, err = _run(folder, repo, capfd)
    finally:
        hub_log.tamper.clear()
    assert code == 1
    assert _last_line(err).endswith(
        "v1.0.0 exists with the same files but did not load back correctly, so it is NOT reported as published: "
        "check the repo on the Hub, then run the same command again."
    )
    assert (
        "v1.0.0" in hub_log.repos[("dataset", repo)].tags
    )  # someone's published version: never withdrawn here
    code, report, _ = _run(folder, repo, capfd)
    assert code == 0 and report["status"] == "unchanged" and report["verified"]


# -- connection-level failures are one sentence ------------------------------------------------
def test_unreachable_hub_is_one_sentence(make_folder, tmp_path):
    """The issue's reproduction: nothing listens at the endpoint; httpx2 errors must not escape."""
    folder = make_folder()
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_TOKEN="x", HF_ENDPOINT="http://127.0.0.1:9")
    proc = subprocess.run(
        [sys.executable, "-m", "builders", "publish", str(folder), "--repo", "org/x", "--yes"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "error: reading the repo's refs: cannot reach the Hub at http://127.0.0.1:9 (ConnectError); "
        "check the network or HF_ENDPOINT."
    )
    assert proc.stdout == ""
