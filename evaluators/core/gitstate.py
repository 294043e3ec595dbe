"""The code version recorded in manifests and results: the checkout's commit, marked when the tree is dirty.

One function for builders (``manifest.json``) and evaluators (result JSON), so a
dataset and a score made from the same uncommitted tree say so the same way.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git_commit_state(path: str | os.PathLike | None = None) -> str | None:
    """Return the xlbench checkout's commit, ``<sha>-dirty`` when tracked files have changes, or ``None``.

    Untracked files do not count (build outputs and caches live in the tree).

    Args:
        path: a folder inside the checkout (default: this package's folder).
    """
    where = str(Path(path) if path else Path(__file__).resolve().parent)
    try:
        head = subprocess.run(
            ["git", "-C", where, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0 or not head.stdout.strip():
            return None
        status = subprocess.run(
            ["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = head.stdout.strip()
    return f"{sha}-dirty" if status.returncode != 0 or status.stdout.strip() else sha


__all__ = ["git_commit_state"]
