"""``xlbench compare RESULT_A RESULT_B``: is B's score significantly different from A's?

Reads the per-item predictions beside each result JSON (:mod:`evaluators.run.predictions`),
checks that both results scored the same dataset revision and the same items, and
runs a paired bootstrap and an approximate randomisation test (as sacrebleu does
for MT systems) on the items behind the main score.

Which rows count: the rows with ``main == True`` if the predictions carry a ``main``
column, else the rows of ``--subset``, else every row when there is a single subset.
The statistic is the mean of ``correct`` (accuracy), or micro F1 when the rows
carry ``tp``, ``n_pred`` and ``n_gold`` columns (BUCC-style mining).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.core.errors import UsageError
from evaluators.metrics.bootstrap import (
    DEFAULT_RESAMPLES,
    PairedTest,
    approximate_randomization,
    f1_from_counts,
    paired_bootstrap,
)
from evaluators.report.records import setup_fields
from evaluators.run.predictions import counts_of, predictions_path, read_predictions
from evaluators.run.results import read_result


@dataclass(frozen=True)
class Comparison:
    """Both tests of B against A on the same items."""

    result_a: str
    result_b: str
    model_a: str
    model_b: str
    dataset: str
    revision: str
    subset: str
    statistic: str
    n_items: int
    alpha: float
    tests: tuple[PairedTest, ...]
    notes: tuple[str, ...] = ()

    @property
    def significant(self) -> bool:
        """Significant when every test run rejects the null hypothesis at ``alpha``."""
        return all(t.significant(self.alpha) for t in self.tests)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict."""
        out = asdict(self)
        out["significant"] = self.significant
        return out

    def text(self) -> str:
        """A human summary, sacrebleu-like."""
        lines = [
            f"dataset: {self.dataset}@{self.revision[:12]}  subset: {self.subset}  items: {self.n_items}  statistic: {self.statistic}",
            f"A: {self.model_a}  ({self.result_a})",
            f"B: {self.model_b}  ({self.result_b})",
        ]
        for t in self.tests:
            ci = (
                f", 95% CI of B-A [{t.ci_low:+.4f}, {t.ci_high:+.4f}]"
                if t.ci_low is not None
                else ""
            )
            lines.append(
                f"{t.method} ({t.trials} {'resamples' if 'bootstrap' in t.method else 'trials'}): "
                f"A {t.score_a:.4f}  B {t.score_b:.4f}  B-A {t.delta:+.4f}{ci}  p = {t.p_value:.4f}"
            )
        verdict = "significant" if self.significant else "not significant"
        lines.append(f"=> the difference is {verdict} at alpha = {self.alpha}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _load(path: str | os.PathLike) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    p = Path(path)
    return read_result(p).data, read_predictions(predictions_path(p))


def _select(
    rows: list[dict[str, Any]], subset: str | None, label: str
) -> tuple[str, list[dict[str, Any]]]:
    if subset is not None:
        chosen = [r for r in rows if r["subset"] == subset]
        if not chosen:
            raise UsageError(
                f"Result {label} has no predictions for subset {subset!r}; subsets: {', '.join(sorted({r['subset'] for r in rows}))}."
            )
        return subset, chosen
    if rows and "main" in rows[0]:
        return "main", [r for r in rows if r.get("main")]
    subsets = sorted({r["subset"] for r in rows})
    if len(subsets) == 1:
        return subsets[0], rows
    raise UsageError(
        f"Result {label} has predictions for several subsets; pick one with --subset ({', '.join(subsets[:8])})."
    )


def _check_comparable(da: dict, db: dict):
    """Refuse results of different evaluators or dataset revisions; return the revision."""
    if da.get("evaluator") != db.get("evaluator"):
        raise UsageError(
            f"The results come from different evaluators ({da.get('evaluator')!r} and {db.get('evaluator')!r}); compare results of one evaluator."
        )
    rev_a, rev_b = (
        (da.get("dataset") or {}).get("revision"),
        (db.get("dataset") or {}).get("revision"),
    )
    if rev_a != rev_b:
        raise UsageError(
            f"The results scored different dataset revisions ({str(rev_a)[:12]} and {str(rev_b)[:12]}); "
            "rerun both models on one revision."
        )
    return rev_a


def _paired(sel_a: list[dict], sel_b: list[dict]):
    """Match the items of A and B by ``(subset, item_id)``; the sorted keys and one vector per side.

    Rows with link counts give count vectors scored by micro F1; others, 0/1 correctness.
    Returns ``(keys, xa, xb, statistic or None, statistic name)``.
    """
    ka = {(r["subset"], r["item_id"]): r for r in sel_a}
    kb = {(r["subset"], r["item_id"]): r for r in sel_b}
    if len(ka) != len(sel_a) or len(kb) != len(sel_b):
        raise UsageError(
            "The predictions repeat an item id within a subset; each (subset, item_id) must be unique."
        )
    if ka.keys() != kb.keys():
        only_a, only_b = sorted(ka.keys() - kb.keys()), sorted(kb.keys() - ka.keys())
        example = (only_a or only_b)[0]
        raise UsageError(
            f"The results scored different items ({len(only_a)} only in A, {len(only_b)} only in B, e.g. "
            f"{example[1]!r} in {example[0]!r}); rerun both with the same parameters."
        )
    keys = sorted(ka)
    counts = all(c in sel_a[0] for c in ("tp", "n_pred", "n_gold")) if sel_a else False
    if counts:
        hits = all("tp_p" in r for r in (*sel_a, *sel_b))
        xa = np.array([counts_of(ka[k], hits) for k in keys], dtype=float)
        xb = np.array([counts_of(kb[k], hits) for k in keys], dtype=float)
        return keys, xa, xb, f1_from_counts, "micro F1 over items"
    xa = np.array([bool(ka[k]["correct"]) for k in keys], dtype=float)
    xb = np.array([bool(kb[k]["correct"]) for k in keys], dtype=float)
    return keys, xa, xb, None, "mean of correct"


def compare(
    result_a: str | os.PathLike,
    result_b: str | os.PathLike,
    subset: str | None = None,
    method: str = "both",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
) -> Comparison:
    """Compare two results item by item.

    Raises:
        InputFileError: a result or its predictions are missing or unreadable.
        UsageError: different evaluators, dataset revisions or items, or a bad option.
    """
    if method not in ("both", "bs", "ar"):
        raise UsageError(f"--method must be bs, ar or both, got {method!r}.")
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha must lie strictly between 0 and 1, got {alpha!r}.")
    if seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {seed}.")
    if resamples < 1:
        raise UsageError(f"--resamples must be at least 1, got {resamples}.")
    da, ra = _load(result_a)
    db, rb = _load(result_b)
    rev_a = _check_comparable(da, db)
    name_a, sel_a = _select(ra, subset, "A")
    name_b, sel_b = _select(rb, subset, "B")
    keys, xa, xb, stat, stat_name = _paired(sel_a, sel_b)
    if len(keys) == 0:
        raise UsageError("The predictions hold no items to compare.")
    tests = []
    if method in ("both", "bs"):
        tests.append(
            paired_bootstrap(
                xa, xb, np.random.default_rng(seed), resamples=resamples, statistic=stat
            )
        )
    if method in ("both", "ar"):
        tests.append(
            approximate_randomization(
                xa, xb, np.random.default_rng(seed + 1), trials=resamples, statistic=stat
            )
        )
    notes = []
    if setup_fields(str(da.get("signature", ""))) != setup_fields(str(db.get("signature", ""))):
        notes.append(
            "the signatures differ in more than the model: "
            f"A {da.get('signature')!r} vs B {db.get('signature')!r}"
        )
    ds = da.get("dataset") or {}
    return Comparison(
        str(result_a),
        str(result_b),
        str((da.get("model") or {}).get("id")),
        str((db.get("model") or {}).get("id")),
        str(ds.get("id")),
        str(rev_a),
        name_a if name_a == name_b else f"{name_a}/{name_b}",
        stat_name,
        len(keys),
        alpha,
        tuple(tests),
        tuple(notes),
    )
