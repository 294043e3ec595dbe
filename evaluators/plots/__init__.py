"""Plots saved as PNG (headless): the helpers every evaluator's figures use.

An evaluator draws in its own module (its ``plot`` hook, or ``tasks/<name>/plots.py``) with
:func:`pyplot` and :func:`save_figure`; ``cbd``, ``alignment`` and ``tacc`` here hold the
figures of the existing evaluators. A new evaluator adds nothing here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evaluators.core.errors import OutputError, cannot_write
from evaluators.core.fileio import atomic_write
from evaluators.core.optional import require


def pyplot() -> Any:
    """Return ``matplotlib.pyplot`` on the non-interactive Agg backend.

    Raises:
        EngineUnavailableError: matplotlib is missing (it ships in the ``plots`` extra).
    """
    matplotlib = require("matplotlib", feature="--plot", extra="plots")
    matplotlib.use("Agg", force=True)
    return require("matplotlib.pyplot", feature="--plot", extra="plots")


def save_figure(fig: Any, path: str | os.PathLike) -> Path:
    """Lay out ``fig``, write it to ``path`` as a 120-dpi PNG, close it and return the path.

    The PNG is written atomically: a full disk leaves no partial file.

    Raises:
        OutputError: the file cannot be written.
    """
    fig.tight_layout()
    path = Path(path)
    try:
        atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120, format="png"))
    except OSError as err:
        raise OutputError(
            cannot_write(f"the plot {str(path)!r}", err, "pass a writable --out or --no-plots")
        ) from err
    finally:
        pyplot().close(fig)
    return path
