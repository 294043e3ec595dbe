"""The aligners experiment's PNGs (matplotlib through :mod:`evaluators.plots`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluators.metrics.alignment import (
    FREQ_BINS,
    freq_bin_label,
)
from evaluators.plots import alignment as aplots
from evaluators.run.task import Scores

if TYPE_CHECKING:
    import numpy as np

    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder
    from evaluators.tasks.aligners import Params


def plot(
    scores: Scores,
    params: Params,
    data: DatasetSource | None,
    model: Encoder | None,
    prefix: Path,
    rng: np.random.Generator,
) -> list[str]:
    """Silver-vs-gold scatter, vocabulary sweep, F1 by source-word frequency per pair."""
    scatter, sweep_curves, freq_tables = scores.plot_data
    os.makedirs(prefix.parent, exist_ok=True)
    artifacts = []
    if scatter:
        artifacts.append(aplots.silver_vs_gold(scatter, Path(f"{prefix}__silver_vs_gold.png")))
    if any(sweep_curves.values()):
        artifacts.append(
            aplots.sweep(sweep_curves, Path(f"{prefix}__vocab_sweep.png"), params.sweep_tokenizer)
        )
    for pair in sorted({f["subset"] for f in freq_tables}):
        rows = [f for f in freq_tables if f["subset"] == pair]
        groups = [freq_bin_label(lo, hi) for lo, hi in FREQ_BINS]
        series: dict[str, Any] = {}
        for f in rows:
            series.setdefault(f"{f['method']} {f['data']}", {})[f["bin"]] = (
                f["f1"] if f["n_sure"] else None
            )
        artifacts.append(
            aplots.breakdown(
                groups,
                {k: [v.get(g) for g in groups] for k, v in series.items()},
                Path(f"{prefix}__freq_{pair}.png"),
                f"{pair}: F1 by source-word frequency",
                "frequency of the source word in the aligner's training text",
            )
        )
    return artifacts
