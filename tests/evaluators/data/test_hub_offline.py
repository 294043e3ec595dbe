"""The HF_HUB_OFFLINE pitfall: datasets serves the newest cached version whatever revision is asked.

The offline runs happen in a subprocess, because huggingface_hub and datasets
read HF_HUB_OFFLINE once, at import; the subprocess shares this session's caches.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from builders.cli import main
from evaluators.data.source import open_source

REPO = "xlbench-test/offline"
CONFIG = "deu_Latn-eng_Latn"
PROBE = """
import json, sys
from datasets import load_dataset
from evaluators.data.source import open_source
from evaluators.core.errors import XlbenchError
out = {}
for rev in sys.argv[2:]:
    try:
        source = open_source(sys.argv[1], rev)
        out[rev] = {"revision": source.ref.revision, "ids": list(source.load("deu_Latn-eng_Latn", "train")["id"])}
    except XlbenchError as err:
        out[rev] = {"error": f"{type(err).__name__}: {err}"}
    try:
        raw = load_dataset(sys.argv[1], "deu_Latn-eng_Latn", split="train", revision=rev)
        out[rev]["raw_datasets_rows"] = len(raw)
    except Exception as err:
        out[rev]["raw_datasets_rows"] = None
print(json.dumps(out))
"""


def _offline(*revisions: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env.pop("HF_TOKEN", None)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, REPO, *revisions],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_offline_loads_exactly_the_pinned_sha_and_refuses_tags(hub_log, token, make_folder, capsys):
    shas = {}
    for version, n_train in (("1.0.0", 6), ("1.1.0", 8)):
        assert (
            main(["publish", str(make_folder(version, n_train=n_train)), "--repo", REPO, "--yes"])
            == 0
        )
        shas[version] = json.loads(capsys.readouterr().out)["commit"]
    online = {
        v: list(open_source(REPO, f"v{v}").load(CONFIG, "train")["id"]) for v in shas
    }  # fills the caches
    assert [len(ids) for ids in online.values()] == [12, 16]

    got = _offline(shas["1.0.0"], shas["1.1.0"], "v1.0.0", "f" * 40)
    # the pitfall itself: datasets answers the newest cached rows (16) even for v1.0.0's sha
    assert got[shas["1.0.0"]]["raw_datasets_rows"] == 16
    # xlbench loads each sha's own rows from the Hub cache snapshot of that commit
    assert (
        got[shas["1.0.0"]]["ids"] == online["1.0.0"]
        and got[shas["1.0.0"]]["revision"] == shas["1.0.0"]
    )
    assert got[shas["1.1.0"]]["ids"] == online["1.1.0"]
    assert got["v1.0.0"]["error"] == (
        f"RevisionError: HF_HUB_OFFLINE is set and revision 'v1.0.0' of {REPO} is not a full commit sha; "
        "offline, datasets may silently load another cached version, so pass --revision <40-char sha>."
    )
    assert got["f" * 40]["error"] == (
        f"RevisionError: {REPO}@ffffffffffff is not in the local Hub cache; load it once online (or unset HF_HUB_OFFLINE)."
    )
