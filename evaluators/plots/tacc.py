"""Fertility vs Macro-TACC scatter (alee paper, Figure 7)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from evaluators.metrics.correlation import correlate, finite_pairs
from evaluators.plots import pyplot, save_figure


def fertility_scatter(
    points: Mapping[str, Sequence[tuple[str, float, float]]], path: str | os.PathLike
) -> Path:
    """Plot ``model -> [(lang, median subtokens, Macro-TACC)]`` as one series per model; return the PNG path."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for model, pts in points.items():
        if not pts:
            continue
        xs = [p[1] for p in pts]
        ys = [p[2] for p in pts]
        rho = correlate(*finite_pairs(xs, ys)).spearman
        ax.scatter(xs, ys, label=f"{model} (ρ={'n/a' if rho is None else f'{rho:.2f}'})")
        for lang, x, y in pts:
            ax.annotate(
                lang.split("_")[0], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points"
            )
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("median subtokens per target sentence")
    ax.set_ylabel("Macro-TACC")
    ax.set_title("Fertility vs triplet accuracy")
    ax.legend(fontsize=7)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return save_figure(fig, path)


def paper_fertility_scatter(analysis, path: str | os.PathLike, n_models: int) -> Path:
    """Plot the paper's analysis: one tokenizer's fertility against TACC averaged over ``n_models`` models."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    rho = "n/a" if analysis.spearman is None else f"{analysis.spearman:.2f}"
    ax.scatter(
        analysis.fertility, analysis.mean_tacc, label=f"mean over {n_models} models (ρ={rho})"
    )
    for lang, x, y in zip(analysis.languages, analysis.fertility, analysis.mean_tacc):
        ax.annotate(
            lang.split("_")[0], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points"
        )
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    import textwrap

    ax.set_xlabel(
        textwrap.fill(f"median subtokens per target sentence ({analysis.tokenizer})", 70),
        fontsize=8,
    )
    ax.set_ylabel("TACC averaged over models")
    ax.set_title("Fertility vs triplet accuracy (the paper's definition)")
    ax.legend(fontsize=7)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return save_figure(fig, path)
