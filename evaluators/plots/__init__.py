"""Plots saved as PNG (headless). One module per evaluator family."""

from __future__ import annotations


def pyplot():
    """Return ``matplotlib.pyplot`` on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt
