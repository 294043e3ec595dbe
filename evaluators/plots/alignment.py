"""PNG figures for the aligner experiments (SilverAlign, Köksal et al. 2022, Figures 3-6)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from evaluators.plots import pyplot, save_figure


def spread_labels(ys: Sequence[float], gap: float, low: float, high: float) -> list[float]:
    """Label heights near ``ys``, at least ``gap`` apart and inside ``[low, high]`` where they fit.

    Greedy in the order of ``ys``: labels keep their points' order, so a reader follows each
    leader line without crossings, and a label moves only as far as its neighbours force it.
    """
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = [0.0] * len(ys)
    prev = low - gap
    for i in order:
        prev = max(ys[i], prev + gap)
        out[i] = prev
    # Pushed past the top: walk back down from it (the bottom wins if there is no room at all).
    nxt = high + gap
    for i in reversed(order):
        if out[i] <= nxt - gap:
            break
        nxt = max(nxt - gap, low)
        out[i] = min(out[i], nxt)
    return out


def silver_vs_gold(
    points: dict[str, list[tuple[str, float, float]]], path: str | os.PathLike
) -> str:
    """Scatter silver F1 (x) against gold F1 (y): one panel per pair, one colour per aligner.

    Configurations of one pair sit within a few points of each other, so each panel has its own
    axes, and labels are spread apart vertically with leader lines instead of overlapping.

    Args:
        points: pair -> list of ``(label, silver_f1, gold_f1)``; a label's text before ``/`` is
            the aligner (``eflomal/wordpiece-4000``).
        path: PNG file to write.
    """
    plt = pyplot()
    pairs = list(points)
    fig, axes = plt.subplots(1, len(pairs), figsize=(5.2 * len(pairs), 4.6), squeeze=False)
    methods = sorted({label.split("/")[0] for rows in points.values() for label, _, _ in rows})
    for ax, pair in zip(axes[0], pairs):
        rows = points[pair]
        for m, method in enumerate(methods):
            sel = [r for r in rows if r[0].split("/")[0] == method]
            if sel:
                xs, ys = [r[1] for r in sel], [r[2] for r in sel]
                ax.scatter(xs, ys, color=f"C{m}", label=method, zorder=3)
        _label_points(ax, rows)
        ax.set_xlabel("F1 on silver (partial)")
        ax.set_ylabel("F1 on gold")
        ax.set_title(pair)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=7)
    fig.suptitle("Aligner configurations: silver vs gold F1")
    save_figure(fig, path)
    return str(path)


def _label_points(ax, rows: Sequence[tuple[str, float, float]]) -> None:
    """Write each row's tokenizer in a column right of the points, with a leader line to it.

    The colour already says the aligner, so the text is the part after ``/``; a column keeps
    the labels off the points, and spreading them in the points' order keeps lines uncrossed.
    """
    xs = [r[1] for r in rows]
    ys = [r[2] for r in rows]
    x_span = (max(xs) - min(xs)) or 0.01
    y_span = (max(ys) - min(ys)) or 0.01
    x_text = max(xs) + 0.08 * x_span
    ax.set_xlim(min(xs) - 0.08 * x_span, max(xs) + 0.45 * x_span)
    low, high = min(ys) - 0.08 * y_span, max(ys) + 0.08 * y_span
    ax.set_ylim(low, high)
    # A label is about 1/22 of the panel's height at this font size.
    gap = (high - low) / 22
    for (label, x, y), y_text in zip(rows, spread_labels(ys, gap, low + gap / 2, high - gap / 2)):
        ax.annotate(
            label.split("/", 1)[-1],
            (x, y),
            xytext=(x_text, y_text),
            textcoords="data",
            fontsize=7,
            va="center",
            arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "0.6", "shrinkA": 0, "shrinkB": 3},
        )


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
