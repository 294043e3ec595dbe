"""Plots saved as PNG (headless). One module per evaluator family."""

from __future__ import annotations

import os
from pathlib import Path


def pyplot():
    """Return ``matplotlib.pyplot`` on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | os.PathLike) -> Path:
    """Lay out ``fig``, write it to ``path`` as a 120-dpi PNG, close it and return the path."""
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    pyplot().close(fig)
    return path
