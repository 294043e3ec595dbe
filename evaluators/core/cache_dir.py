"""Where xlbench keeps its caches: ``$XLBENCH_CACHE`` or ``~/.cache/xlbench``.

Light on purpose (standard library only) so that builders and evaluators share it.
"""

from __future__ import annotations

import os
from pathlib import Path


def xlbench_cache_root() -> Path:
    """Return ``$XLBENCH_CACHE`` or ``~/.cache/xlbench`` (not created)."""
    env = os.environ.get("XLBENCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "xlbench"
