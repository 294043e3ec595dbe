"""PNG figures for the aligner experiments (SilverAlign, Köksal et al. 2022, Figures 3-6)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from evaluators.plots import pyplot, save_figure


def silver_vs_gold(
    points: dict[str, list[tuple[str, float, float]]], path: str | os.PathLike
) -> str:
    """Scatter silver F1 (x) against gold F1 (y), one colour per pair, each point labelled.

    Args:
        points: pair -> list of ``(label, silver_f1, gold_f1)``.
        path: PNG file to write.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    for pair, rows in points.items():
        xs = [r[1] for r in rows]
        ys = [r[2] for r in rows]
        ax.scatter(xs, ys, label=pair)
        for label, x, y in rows:
            ax.annotate(label, (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
    ax.set_xlabel("F1 on silver (partial)")
    ax.set_ylabel("F1 on gold")
    ax.set_title("Aligner configurations: silver vs gold")
    ax.grid(alpha=0.3)
    ax.legend()
    save_figure(fig, path)
    return str(path)


def sweep(
    curves: dict[str, list[tuple[int, float, float]]], path: str | os.PathLike, tokenizer: str
) -> str:
    """Plot F1 against vocabulary size, silver (solid) and gold (dashed), one colour per pair."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for n, (pair, rows) in enumerate(sorted(curves.items())):
        rows = sorted(rows)
        color = f"C{n}"
        ax.plot(
            [r[0] for r in rows], [r[1] for r in rows], "o-", color=color, label=f"{pair} silver"
        )
        if any(r[2] is not None for r in rows):
            ax.plot(
                [r[0] for r in rows], [r[2] for r in rows], "s--", color=color, label=f"{pair} gold"
            )
    ax.set_xscale("log")
    sizes = sorted({r[0] for rows in curves.values() for r in rows})
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(v) for v in sizes])
    ax.minorticks_off()
    ax.set_xlabel(f"{tokenizer} vocabulary size (shared)")
    ax.set_ylabel("F1")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    save_figure(fig, path)
    return str(path)


def breakdown(
    groups: Sequence[str],
    series: dict[str, Sequence[float | None]],
    path: str | os.PathLike,
    title: str,
    xlabel: str,
) -> str:
    """Grouped bars: one group per bin (frequency bin or POS), one bar per series."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series.items()):
        xs = [g + k * width for g in range(len(groups))]
        ax.bar(xs, [v if v is not None else 0.0 for v in values], width, label=name)
    ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))])
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("F1")
    ax.set_title(title)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    save_figure(fig, path)
    return str(path)
