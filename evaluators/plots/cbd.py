"""Plots of the contextual-dictionary evaluators (Gaschi et al. 2022, Figs. 4-7), saved as PNG."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from evaluators.plots import pyplot, save_figure


def layer_curves(entries: Sequence[Mapping], path: str | Path, title: str) -> Path:
    """Plot S_weak and S_strong per layer, both directions, with ± std bands (Figs. 6/7)."""
    plt = pyplot()
    layers = [e["layer"] for e in entries]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    styles = {
        "s_weak_src_tgt": ("S_weak src→tgt", "tab:blue", "-"),
        "s_weak_tgt_src": ("S_weak tgt→src", "tab:blue", "--"),
        "s_strong_src_tgt": ("S_strong src→tgt", "tab:red", "-"),
        "s_strong_tgt_src": ("S_strong tgt→src", "tab:red", "--"),
    }
    for key, (label, color, ls) in styles.items():
        mean = np.array([e[key] for e in entries])
        std = np.array([e.get(key + "_std", 0.0) for e in entries])
        ax.plot(layers, mean, ls, color=color, marker="o", ms=3, label=label)
        ax.fill_between(layers, mean - std, mean + std, color=color, alpha=0.12)
    ax.set_xlabel("layer")
    ax.set_ylabel("retrieval accuracy")
    ax.set_ylim(0, 1)
    ax.set_xticks(layers)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=9)
    return save_figure(fig, path)


def similarity_histograms(groups: Mapping[str, np.ndarray], path: str | Path, title: str) -> Path:
    """Overlay cosine-similarity histograms, one per group of word pairs (Fig. 5)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    values = [np.asarray(v) for v in groups.values() if len(v)]
    lo = min(float(v.min()) for v in values) if values else -1.0
    hi = max(float(v.max()) for v in values) if values else 1.0
    bins = np.linspace(lo, hi, 50)
    for name, vals in groups.items():
        if len(vals):
            ax.hist(
                vals,
                bins=bins,
                alpha=0.45,
                density=True,
                label=f"{name} (n={len(vals)}, mean {np.mean(vals):.2f})",
            )
    ax.set_xlabel("cosine similarity")
    ax.set_ylabel("density")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    return save_figure(fig, path)


def sentence_curves(
    entries: Sequence[Mapping],
    path: str | Path,
    title: str,
    pooling: str = "mean",
    criterion: str = "csls",
) -> Path:
    """Plot one pooling's per-layer sentence retrieval and translated-vs-random cosine (Fig. 4).

    Left: retrieval accuracy per direction and their mean with ``criterion``; right: the cosine of
    translated and of random sentence pairs (mean ± std), from the ``*_{pooling}`` entry keys.
    """
    plt = pyplot()
    layers = [e["layer"] for e in entries]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for key, label, style in (
        (f"acc_{pooling}", "both directions", "-"),
        (f"acc_{pooling}_src_tgt", "src→tgt", "--"),
        (f"acc_{pooling}_tgt_src", "tgt→src", ":"),
    ):
        a1.plot(
            layers,
            [e[key] for e in entries],
            style,
            marker="o",
            ms=3,
            color="tab:blue",
            label=label,
        )
    a1.set_xlabel("layer")
    a1.set_ylabel(f"retrieval accuracy ({criterion}, {pooling} pooling)")
    a1.set_ylim(0, 1)
    a1.set_xticks(layers)
    a1.grid(alpha=0.3)
    a1.legend(fontsize=8)
    for key, label, color in (
        ("cos_translated", "translated pairs", "tab:green"),
        ("cos_random", "random pairs", "tab:gray"),
    ):
        mean = np.array([e[f"{key}_{pooling}"] for e in entries])
        std = np.array([e[f"{key}_{pooling}_std"] for e in entries])
        a2.plot(layers, mean, marker="o", ms=3, color=color, label=label)
        a2.fill_between(layers, mean - std, mean + std, color=color, alpha=0.15)
    a2.set_xlabel("layer")
    a2.set_ylabel(f"cosine similarity ({pooling} pooling)")
    a2.set_xticks(layers)
    a2.grid(alpha=0.3)
    a2.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    return save_figure(fig, path)
