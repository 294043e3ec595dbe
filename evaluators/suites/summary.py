"""A suite's leaderboard as data: one row per model, family means, an overall mean and a rank.

Pure: it takes the suite, the models and the main scores of the cells that ran, and returns
the ``summary.json`` dict and its Markdown. A missing cell (an entry skipped for what it
needs, or a failed one) is ``null``, listed under the model's ``missing`` and left out of
every mean: a family mean is the mean of the model's entries of that family, the overall mean
the mean of its family means (each family weighs the same, however many entries it has).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.modelfacts import FACTS, fact_label, read_facts
from evaluators.core.untrusted import md_cell
from evaluators.suites.spec import Suite

#: How the means are taken, said in the summary and on every page that shows them.
MEANS_RULE = (
    "family mean: mean of the model's main scores on that family's entries; overall: mean of the "
    "family means; missing cells are excluded from both and listed"
)


@dataclass(frozen=True)
class Cell:
    """One model's score on one entry.

    Attributes:
        main_score: the result's main score (``None``: the evaluator reported none).
        result: the result file (relative to the suite's output folder).
        signature: the result's signature.
        model_id: the model's identity (id@revision) from the result.
        model_facts: parameters, embedding size, layers, max tokens as the result recorded them
            (:mod:`evaluators.core.modelfacts`; empty when unknown).
    """

    main_score: float | None
    result: str
    signature: str
    model_id: str
    model_facts: Mapping[str, int] = field(default_factory=dict)


def mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values that exist (``None`` when none does).

    >>> mean([0.5, None, 1.0]), mean([None])
    (0.75, None)
    """
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return sum(kept) / len(kept) if kept else None


def ranks(values: Sequence[float | None]) -> list[int | None]:
    """Competition ranks, best (highest) first; ``None`` is unranked.

    >>> ranks([0.5, 0.9, None, 0.5])
    [2, 1, None, 2]
    """
    present = [v for v in values if v is not None]
    return [None if v is None else 1 + sum(1 for o in present if o > v) for v in values]


def summarize(
    suite: Suite,
    models: Sequence[str],
    cells: Mapping[tuple[str, str], Cell],
    skipped: Mapping[str, str],
    revisions: Mapping[str, str | None],
) -> dict[str, Any]:
    """Return ``summary.json``: the suite, its datasets and entries, and one row per model.

    Args:
        suite: the suite.
        models: the model specs, as given.
        cells: ``(model spec, entry id) -> Cell`` for every cell that ran.
        skipped: ``entry id -> why`` for entries that did not run.
        revisions: ``dataset name -> revision`` (content id or Hub sha) of the datasets used.
    """
    families = suite.families()
    rows: list[dict[str, Any]] = []
    for model in models:
        scores = {e.id: _score(cells.get((model, e.id))) for e in suite.entries}
        fam = {f: mean([scores[e.id] for e in suite.entries if e.family == f]) for f in families}
        ids = {c.model_id for (m, _), c in cells.items() if m == model}
        facts: dict[str, int] = {}
        for (m, _), given in sorted(cells.items(), key=lambda kv: kv[0]):
            if m == model:
                facts.update(read_facts(given.model_facts))
        rows.append(
            {
                "model": model,
                "model_id": sorted(ids)[0] if ids else None,
                "facts": facts,
                "scores": scores,
                "results": {
                    e.id: c.result for e in suite.entries if (c := cells.get((model, e.id)))
                },
                "family_means": fam,
                "overall": mean(list(fam.values())),
                "missing": [k for k, v in scores.items() if v is None],
            }
        )
    for row, rank in zip(rows, ranks([r["overall"] for r in rows])):
        row["rank"] = rank
    return {
        "suite": {
            "name": suite.name,
            "version": suite.version,
            "description": suite.description,
            "citation": suite.citation,
        },
        "means": MEANS_RULE,
        "families": families,
        "datasets": [
            {
                "name": d.name,
                "family": d.family,
                "source": d.source,
                "hub": d.hub,
                "requested": d.revision or d.content_id,
                "revision": revisions.get(d.name),
            }
            for d in suite.datasets
        ],  # fmt: skip
        "entries": [
            {
                "id": e.id,
                "evaluator": e.evaluator,
                "dataset": e.dataset,
                "family": e.family,
                "params": e.param_values(),
                "skipped": skipped.get(e.id),
            }
            for e in suite.entries
        ],  # fmt: skip
        "models": sorted(rows, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["model"])),
    }


def _score(cell: Cell | None) -> float | None:
    if cell is None or cell.main_score is None or math.isnan(cell.main_score):
        return None
    return cell.main_score


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _model_cell(row: Mapping[str, Any]) -> str:
    """A model's short name (its spec when the results gave none)."""
    return md_cell(row.get("display") or row["model"])


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The leaderboard as Markdown (for a paper's appendix): header, family means, every entry.

    >>> print(summary_markdown({"suite": {"name": "s", "version": "1.0.0"}, "means": "m", "families": [],
    ...     "datasets": [], "entries": [], "models": []}).splitlines()[0])
    # Suite s v1.0.0
    """
    suite = summary["suite"]
    fams = list(summary["families"])
    entries = list(summary["entries"])
    lines = [f"# Suite {md_cell(suite['name'])} v{md_cell(suite['version'])}", ""]
    lines += ["| dataset | family | source | revision |", "| --- | --- | --- | --- |"]
    for d in summary["datasets"]:
        rev = (d.get("revision") or "not resolved")[:12]
        lines.append(
            f"| {md_cell(d['name'])} | {md_cell(d['family'])} | {md_cell(d.get('hub') or 'recipe')} | {md_cell(rev)} |"
        )
    facts = list(FACTS) if any(row.get("facts") for row in summary["models"]) else []
    heads = [FACTS[k] for k in facts] + [md_cell(f) for f in fams]
    lines += ["", "| rank | model | " + " | ".join(heads) + " | overall |"]
    lines.append("| ---: | --- |" + " ---: |" * (len(heads) + 1))
    for row in summary["models"]:
        known = read_facts(row.get("facts"))
        cells = [fact_label(k, known.get(k)) for k in facts]
        cells += [_fmt(row["family_means"].get(f)) for f in fams]
        rank = row["rank"] if row["rank"] is not None else "–"
        lines.append(
            f"| {rank} | {_model_cell(row)} | {' | '.join(cells)} | {_fmt(row['overall'])} |"
        )
    lines += ["", "| model | " + " | ".join(md_cell(e["id"]) for e in entries) + " |"]
    lines.append("| --- |" + " ---: |" * len(entries))
    for row in summary["models"]:
        lines.append(
            f"| {_model_cell(row)} | "
            + " | ".join(_fmt(row["scores"].get(e["id"])) for e in entries)
            + " |"
        )
    lines += ["", f"Means: {summary['means']}. – : missing."]
    for e in entries:
        if e.get("skipped"):
            lines.append(f"- {md_cell(e['id'])} skipped: {md_cell(e['skipped'])}")
    return "\n".join(lines) + "\n"
