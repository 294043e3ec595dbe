"""Pure Markdown summary: leaderboards, BUCC table, provenance (for a paper appendix or a README).

Every value from a result file goes through :mod:`evaluators.core.untrusted` (``escape_md``,
``md_code``, ``md_link``): no model id or dataset name can add markup, links or table cells.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluators.core.modelfacts import FACTS, fact_label
from evaluators.core.untrusted import escape_md, md_code, md_link
from evaluators.report.html import fmt
from evaluators.report.views import (
    BUCC_COLUMNS,
    LANGUAGE_MEANS_RULE,
    BuccRow,
    DatasetRef,
    LanguageView,
    Leaderboard,
    ModelInfo,
    ModelRef,
)
from evaluators.run.results import markdown_table


def _cell(cell) -> str:
    if cell is None:
        return ""
    text = md_link(fmt(cell.score), cell.href)
    if cell.ci is not None:
        text += f" [{fmt(cell.ci[0])}, {fmt(cell.ci[1])}]"
    return text


def _leaderboard_section(lb: Leaderboard) -> list[str]:
    parts = [f"## {escape_md(lb.title)}", ""]
    headers = ["model"] + [
        escape_md(" · ".join(x for x in (c.evaluator, c.dataset, c.variant, c.languages) if x))
        for c in lb.columns
    ]
    rows = [
        [escape_md(model)] + [_cell(cells.get(c.key)) for c in lb.columns]
        for model, cells in lb.rows
    ]
    parts += [markdown_table(headers, rows), ""]
    names = sorted({escape_md(f"{c.evaluator}: {c.score_name}") for c in lb.columns})
    return parts + ["Main scores: " + "; ".join(names) + ".", ""]


def _bucc_section(bucc: list[BuccRow]) -> list[str]:
    rows = [
        [
            escape_md(b.model),
            escape_md(b.dataset),
            escape_md(b.subset),
            fmt(b.precision),
            fmt(b.recall),
            fmt(b.f1),
            fmt(b.threshold, 4),
            fmt(b.oracle_f1),
        ]
        for b in bucc
    ]
    return [
        "## BUCC precision / recall / F1",
        "",
        markdown_table(list(BUCC_COLUMNS), rows),
        "",
        "The oracle F1 picks the threshold on the test split itself: an upper bound, not a score.",
        "",
    ]


def languages_section(view: LanguageView, infos: Mapping[str, ModelInfo]) -> list[str]:
    """The per-language view: languages x models (with each model's mean and rank), then every task."""
    names = [escape_md(infos[m].name if m in infos else m) for m in view.models]
    rows = [
        [escape_md(name)] + [fmt(view.means[(lang, m)]) for m in view.models]
        for lang, name in view.languages
    ]
    rows.append(["**mean over languages**"] + [fmt(view.overall[m]) for m in view.models])
    rows.append(["**rank**"] + [str(view.rank[m] or "–") for m in view.models])
    detail = [
        [escape_md(name), escape_md(f"{t.evaluator} · {t.dataset}")]
        + [fmt(view.scores.get((lang, t.key, m))) for m in view.models]
        for lang, name in view.languages
        for t in view.tasks_of(lang)
    ]
    return [
        "## Languages",
        "",
        markdown_table(["language", *names], rows),
        "",
        markdown_table(["language", "task", *names], detail),
        "",
        f"Means: {escape_md(LANGUAGE_MEANS_RULE)}. – : missing.",
        "",
    ]


def _provenance_section(datasets: list[DatasetRef], models: list[ModelRef]) -> list[str]:
    return [
        "## Provenance",
        "",
        markdown_table(
            ["dataset", "version", "resolved revision", "card", "evaluators"],
            [
                [
                    md_code(d.id),
                    escape_md(d.version),
                    md_code(d.revision),
                    md_link("card", d.card) if d.card else "",
                    escape_md(", ".join(d.evaluators)),
                ]
                for d in datasets
            ],
        ),
        "",
        markdown_table(
            ["model", "revision", "spec", *FACTS.values(), "evaluators"],
            [
                [
                    md_code(m.id),
                    md_code(m.revision),
                    md_code(m.spec) if m.spec else "",
                    *(fact_label(k, m.facts.get(k)) for k in FACTS),
                    escape_md(", ".join(m.evaluators)),
                ]
                for m in models
            ],
        ),
        "",
    ]


def summary(
    leaderboards: list[Leaderboard],
    bucc: list[BuccRow],
    datasets: list[DatasetRef],
    models: list[ModelRef],
    figures: list[tuple[str, str]],
    languages: LanguageView | None = None,
    infos: Mapping[str, ModelInfo] | None = None,
) -> str:
    """Return the whole Markdown report.

    Args:
        leaderboards: one per family.
        bucc: BUCC precision/recall/F1 rows.
        datasets: provenance of the datasets.
        models: provenance of the models.
        figures: ``(png path, caption)`` pairs to embed.
        languages: the per-language view, when some result has languages.
        infos: the models' display names (``model label -> ModelInfo``).
    """
    parts = ["# xlbench report", ""]
    for lb in leaderboards:
        parts += _leaderboard_section(lb)
    if languages is not None:
        parts += languages_section(languages, infos or {})
    if bucc:
        parts += _bucc_section(bucc)
    if figures:
        parts += ["## Figures", ""]
        parts += [f"!{md_link(cap, png)}" for png, cap in figures]
        parts.append("")
    parts += _provenance_section(datasets, models)
    return "\n".join(parts)
