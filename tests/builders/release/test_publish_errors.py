"""Publishing failures: bad token, invalid folder, missing --yes, immutable versions, failed uploads, token leaks."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builders.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
import tiny_folders as tf  # noqa: E402  (folder surgery: reseal after an edit)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_wrong_token_gives_a_clear_error(hub_log, make_folder, monkeypatch, capfd, bad_token):
    monkeypatch.setenv("HF_TOKEN", bad_token)
    folder = make_folder()
    assert main(["publish", str(folder), "--repo", "xlbench-test/denied", "--yes"]) == 1
    out, err = capfd.readouterr()
    assert out == ""
    assert err.strip() == (
        f"error: reading the repo's refs: the Hub at {hub_log.url} rejected the token (401 Unauthorized); "
        "set HF_TOKEN to a valid token with write access or run 'hf auth login'."
    )
    # The server thread logs a request after answering it: under load the client can be faster.
    deadline = time.monotonic() + 5
    while not hub_log.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [r[2] for r in hub_log.requests] == [401]
    assert ("dataset", "xlbench-test/denied") not in hub_log.repos
    assert bad_token not in out + err


def test_no_token_is_refused(hub_log, make_folder, monkeypatch, capfd):
    monkeypatch.delenv(
        "HF_TOKEN", raising=False
    )  # and the tests' HF_HOME (tests/conftest.py) holds no login
    assert (
        main(["publish", str(make_folder(name="x")), "--repo", "xlbench-test/anon", "--yes"]) == 2
    )
    assert (
        capfd.readouterr().err.strip()
        == "error: No Hugging Face token: set HF_TOKEN or run 'hf auth login' before publishing."
    )
    assert hub_log.requests == []


def test_invalid_folder_is_refused_before_any_network_call(hub_log, token, make_folder, capfd):
    folder = make_folder()
    path = folder / "data" / "deu_Latn-eng_Latn" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    train = pq.read_table(path.with_name("train-00000-of-00001.parquet"))
    pq.write_table(table.set_column(2, "text", train.column("text").slice(0, table.num_rows)), path)
    tf.reseal(folder)  # digests agree again: the overlap is what validation must find
    assert main(["publish", str(folder), "--repo", "xlbench-test/invalid", "--yes"]) == 1
    err = capfd.readouterr().err.strip()
    # the shared sentence named is the first one found (set order); any of the copied ones is right
    assert err.startswith("error: deu_Latn-eng_Latn: text '")
    assert err.endswith(" occurs in both test and train; splits must be disjoint.")
    assert hub_log.requests == []


def test_publish_requires_yes(hub_log, token, make_folder, capfd):
    assert main(["publish", str(make_folder()), "--repo", "xlbench-test/noyes"]) == 2
    assert capfd.readouterr().err.strip() == (
        "error: Publishing to xlbench-test/noyes creates an immutable version; add --yes to confirm (or --dry-run to see the plan)."
    )
    assert hub_log.requests == []


def test_bad_repo_id(hub_log, token, make_folder, capfd):
    assert main(["publish", str(make_folder()), "--repo", "no-slash", "--yes"]) == 2
    assert (
        capfd.readouterr().err.strip() == "error: --repo must look like 'org/name', got 'no-slash'."
    )
    assert hub_log.requests == []


def test_dry_run_writes_nothing(hub_log, token, make_folder, capfd):
    assert main(["publish", str(make_folder()), "--repo", "xlbench-test/dry", "--dry-run"]) == 0
    report = json.loads(capfd.readouterr().out)
    assert report["status"] == "dry-run"
    assert (
        report["message"]
        == "would create xlbench-test/dry and commit 6 files, verify and tag v1.0.0."
    )
    assert report["commit_message"] == "Publish xlbench-bucc-test v1.0.0"
    assert {r[0] for r in hub_log.requests} == {"GET"}
    assert ("dataset", "xlbench-test/dry") not in hub_log.repos


def test_versions_are_immutable_and_only_move_forward(hub_log, token, make_folder, capfd):
    repo = "xlbench-test/immutable"
    assert main(["publish", str(make_folder("1.1.0")), "--repo", repo, "--yes"]) == 0
    sha = json.loads(capfd.readouterr().out)["commit"]
    changed = make_folder("1.1.0", n_train=7, name="changed")
    assert main(["publish", str(changed), "--repo", repo, "--yes"]) == 2
    err = capfd.readouterr().err.strip().splitlines()[-1]
    assert err == (
        f"error: {repo} already has v1.1.0 (commit {sha[:12]}) with different content "
        "(data/deu_Latn-eng_Latn-gold/test-00000-of-00001.parquet, data/deu_Latn-eng_Latn-gold/train-00000-of-00001.parquet, "
        "data/deu_Latn-eng_Latn/test-00000-of-00001.parquet); published versions are immutable, so rebuild with a new --version and --changelog."
    )
    assert main(["publish", str(make_folder("1.0.5")), "--repo", repo, "--yes"]) == 2
    assert capfd.readouterr().err.strip() == (
        f"error: {repo} already has v1.1.0, newer than v1.0.5; versions only move forward, so rebuild with --version above 1.1.0."
    )
    assert len(hub_log.history(repo)) == 2 and list(hub_log.repos[("dataset", repo)].tags) == [
        "v1.1.0"
    ]


def test_failed_commit_leaves_remote_unchanged_and_retry_is_safe(
    faults, token, make_folder, capfd, waits
):
    from evaluators.data.hubclient import ATTEMPTS

    hub_log = faults
    repo = "xlbench-test/faulty"
    assert main(["publish", str(make_folder("1.0.0")), "--repo", repo, "--yes"]) == 0
    capfd.readouterr()
    v2 = make_folder("1.1.0", n_train=8)
    before = _files(v2)
    head = hub_log.repos[("dataset", repo)].branches["main"]

    # the commit keeps failing: retried with backoff, then refused with main untouched
    hub_log.inject("commit", status=500, times=ATTEMPTS)
    assert main(["publish", str(v2), "--repo", repo, "--yes"]) == 1
    err = capfd.readouterr().err.strip().splitlines()[-1]  # after the upload progress bars
    assert err == (
        f"error: uploading the commit: the Hub at {hub_log.url} failed (HTTP 500); nothing was published "
        "(main is unchanged), so wait a minute and run the same command again."
    )
    assert waits == [1.0, 2.0, 4.0]
    assert hub_log.repos[("dataset", repo)].branches["main"] == head
    assert list(hub_log.repos[("dataset", repo)].tags) == ["v1.0.0"]
    assert _files(v2) == before

    # the commit lands and verifies but tagging keeps failing: the message says main holds a verified commit
    hub_log.inject("tag", status=503, times=ATTEMPTS)
    assert main(["publish", str(v2), "--repo", repo, "--yes"]) == 1
    err = capfd.readouterr().err.strip().splitlines()[-1]
    committed = hub_log.repos[("dataset", repo)].branches["main"]
    assert err == (
        f"error: creating tag v1.1.0: the Hub at {hub_log.url} failed (HTTP 503); commit {committed[:12]} on main is "
        "verified but not tagged v1.1.0 yet, so run the same command again to tag it."
    )
    assert committed != head and list(hub_log.repos[("dataset", repo)].tags) == ["v1.0.0"]

    # the rerun reuses that commit (no second upload), verifies it again and tags it
    hub_log.clear_log()
    assert main(["publish", str(v2), "--repo", repo, "--yes"]) == 0
    report = json.loads(capfd.readouterr().out)
    assert (
        report["status"] == "published"
        and report["commit"] == committed
        and report["resumed"] is True
    )
    assert not [r for r in hub_log.requests if re.search(r"/commit/|/preupload/|/lfs/", r[1])]
    assert hub_log.repos[("dataset", repo)].tags["v1.1.0"] == committed
    assert [c.title for c in hub_log.history(repo)] == [
        "Publish xlbench-bucc-test v1.1.0",
        "Publish xlbench-bucc-test v1.0.0",
        "initial commit",
    ]
    assert _files(v2) == before


def test_token_never_leaks(
    hub_log, token, make_folder, capfd, caplog, tmp_path, bad_token, monkeypatch
):
    caplog.set_level(logging.DEBUG)  # every log record of every library, down to HTTP traces
    folder = make_folder("1.0.0")
    codes = [
        main(["-v", "publish", str(folder), "--repo", "xlbench-test/secret", "--yes"]),
        main(["-v", "publish", str(folder), "--repo", "xlbench-test/secret", "--yes"]),  # no-op
        main(
            [
                "-v",
                "publish",
                str(make_folder("1.0.0", n_train=5, name="other")),
                "--repo",
                "xlbench-test/secret",
                "--yes",
            ]
        ),
        main(["-v", "validate", str(folder)]),
    ]
    monkeypatch.setenv("HF_TOKEN", bad_token)
    codes.append(
        main(
            [
                "-v",
                "publish",
                str(make_folder("1.2.0", name="bad")),
                "--repo",
                "xlbench-test/secret",
                "--yes",
            ]
        )
    )
    assert codes == [0, 0, 2, 0, 1]
    out, err = capfd.readouterr()
    printed = out + err + caplog.text
    assert "HTTP Request: POST" in caplog.text  # the logs were captured
    assert "published xlbench-test/secret v1.0.0" in printed and "rejected the token" in printed
    written = [hub_log.root, tmp_path, Path(os.environ["HF_HOME"])]
    leaks = [
        str(p)
        for root in written
        for p in root.rglob("*")
        if p.is_file()
        and (token.encode() in p.read_bytes() or bad_token.encode() in p.read_bytes())
    ]
    assert leaks == []
    assert token not in printed and bad_token not in printed
    # the server did receive it: the check above is not vacuous
    assert any(
        {k.lower(): v for k, v in h.items()}.get("authorization") == f"Bearer {token}"
        for h in hub_log.headers_seen
    )


def test_verification_failure_leaves_no_tag(hub_log, token, make_folder, capfd):
    repo = "xlbench-test/tampered"
    folder = make_folder("1.0.0")
    french = make_folder("1.0.0", src="fra_Latn", name="french")
    fewer = make_folder("1.0.0", n_train=5, name="fewer")
    train = "data/deu_Latn-eng_Latn/train-00000-of-00001.parquet"

    # the Hub serves other rows, as many as declared: only the row digest can tell
    hub_log.tamper[train] = (french / train.replace("deu_Latn", "fra_Latn")).read_bytes()
    try:
        assert main(["publish", str(folder), "--repo", repo, "--yes"]) == 1
    finally:
        hub_log.tamper.clear()
    err = capfd.readouterr().err.strip().splitlines()[-1]
    sha = hub_log.repos[("dataset", repo)].branches["main"]
    assert re.fullmatch(
        rf"error: {repo}@{sha[:12]} config deu_Latn-eng_Latn/train: loaded back 12 rows \(digest [0-9a-f]{{12}}\), "
        rf"expected 12 \(digest [0-9a-f]{{12}}\); main holds commit {sha[:12]} but it was NOT tagged v1\.0\.0, so run "
        r"the same command again to verify and tag it\.",
        err,
    ), err
    assert hub_log.repos[("dataset", repo)].tags == {}

    # fewer rows than the card declares: datasets' own split check refuses them first
    hub_log.tamper[train] = (fewer / train).read_bytes()
    try:
        assert main(["publish", str(folder), "--repo", repo, "--yes"]) == 1
    finally:
        hub_log.tamper.clear()
    assert capfd.readouterr().err.strip().splitlines()[-1] == (
        f"error: loading {repo} deu_Latn-eng_Latn@{sha[:12]} back: datasets rejected what the Hub served (NonMatchingSplitsSizesError); "
        f"main holds commit {sha[:12]} but it was NOT tagged v1.0.0, so run the same command again to verify and tag it."
    )
    assert hub_log.repos[("dataset", repo)].tags == {}

    # with the Hub serving the right bytes, a retry verifies and tags that same commit
    assert main(["publish", str(folder), "--repo", repo, "--yes"]) == 0
    assert hub_log.repos[("dataset", repo)].tags == {"v1.0.0": sha}
    assert len(hub_log.history(repo)) == 2


def test_concurrent_change_is_named(hub_log, token, make_folder, capfd):
    hub_log.fail_next(r"^POST /api/datasets/.*/commit/", 412)
    assert main(["publish", str(make_folder()), "--repo", "xlbench-test/race", "--yes"]) == 1
    assert capfd.readouterr().err.strip().splitlines()[-1] == (
        "error: uploading the commit: xlbench-test/race changed while publishing (412); nothing was published "
        "(main is unchanged), so run the same command again."
    )


def test_private_repo(hub_log, token, make_folder, capfd, monkeypatch):
    repo = "xlbench-test/private"
    assert main(["publish", str(make_folder()), "--repo", repo, "--private", "--yes"]) == 0
    report = json.loads(capfd.readouterr().out)
    assert report["private"] is True and report["status"] == "published"  # verified with the token
    assert hub_log.repos[("dataset", repo)].private
    monkeypatch.delenv("HF_TOKEN")
    from evaluators.core.errors import RevisionError
    from evaluators.data.source import open_source

    with pytest.raises(
        RevisionError, match="does not exist or is private; check the id and HF_TOKEN"
    ):
        open_source(repo, "v1.0.0")
