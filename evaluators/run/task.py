"""What an evaluator is: one :class:`Evaluator` object (metadata, parameters, scoring, hooks).

An evaluator module defines ``EVALUATOR = Evaluator(...)`` and
:mod:`evaluators.tasks` registers it by name (one line). Its fields:

``meta``
    a :class:`TaskMetadata` (name, family, splits read, main score, chance level,
    output keys, table columns, report views ...).
``params``
    a frozen dataclass; each field declared with :func:`param` carries its
    command-line help, choices and its signature label, so the CLI options, the
    Python API keywords and the signature come from one declaration.
``score(data, model, params, rng) -> Scores``
    the pure scoring function: ``data`` is a :class:`~evaluators.data.source.DatasetSource`
    (or ``None`` for file-based evaluators), ``model`` an
    :class:`~evaluators.encoders.base.Encoder` (or ``None``), ``rng`` a
    ``numpy.random.Generator`` seeded from ``--seed`` and used for nothing but scoring.

and optional hooks (``None`` when the evaluator has none):

``clamp(params, data) -> Params``
    the EFFECTIVE parameters before scoring (what will really be used);
``plot(scores, params, data, model, prefix, rng) -> list[str]``
    write PNGs; ``rng`` is its own stream (:data:`evaluators.run.rng.PLOT_STREAM`), so plots never change a score;
``plot_grid(results, prefix, rng) -> list[str]``
    one plot over every model of a grid on the same dataset (e.g. tacc's fertility scatter);
``write_artifacts(scores, params, prefix) -> list[str]``
    write other outputs next to the result (e.g. predicted links), also with ``--no-plots``;
``check(params, model)``
    refuse a combination of parameters and model before scoring;
``signature_extra(params: dict) -> dict``
    constants and conditional entries of the signature (a ``None`` value drops a key).

Everything else (dataset resolution, encoder loading, signature, result file,
Markdown table, resume) is :mod:`evaluators.run.runner`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from evaluators.core.errors import UsageError

# Parameters are declared once with param(); the helpers live in evaluators.core.params
# (shared with the builders) and are re-exported here for the evaluators.
from evaluators.core.params import (  # noqa: F401 - re-exported
    add_param_arguments,
    flag_of,
    make_params,
    param,
    params_fields,
    params_from_namespace,
    sig_label,
)

if TYPE_CHECKING:  # types only: the runner imports these modules when it needs them
    import numpy as np

    from evaluators.data.source import DatasetSource
    from evaluators.encoders.base import Encoder
    from evaluators.run.results import EvalResult


@dataclass(frozen=True)
class LayerCurve:
    """How the report draws an evaluator's per-layer curves (entries with an int ``layer``).

    Attributes:
        keys: the entry keys drawn: one per direction (source→target, target→source), or
            one key drawn once per value of ``by``.
        ylabel: the y-axis label.
        by: an entry field whose values each get a line (e.g. ``method``); ``None``: one
            line per direction.
    """

    keys: tuple[str, ...]
    ylabel: str
    by: str | None = None


@dataclass(frozen=True)
class HeatmapView:
    """A language x model heatmap of the main score in the report.

    Attributes:
        title: the title; ``{dataset}`` and ``{group}`` are filled in.
        metric: the colour scale's label.
        split: the split whose entries are drawn (``None``: every split).
        groups: entry ``group`` values that each get a heatmap, with the order of their ``key``
            rows (rows are then languages x keys); empty: one heatmap, one row per subset.
    """

    title: str
    metric: str
    split: str | None = "test"
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class LanguageScores:
    """How the report's per-language view reads one number per language (pair) from a result.

    The entries of ``split`` whose ``subset`` names languages (``deu_Latn-eng_Latn``, a
    ``/split`` suffix aside) give their ``key``; an entry of another subset (``all``) has no
    language and is left out.

    Attributes:
        split: the split read (``None``: every split).
        key: the entry key read (``None``: the metadata's ``main_score``).
        where: ``(field, value)`` pairs an entry must match (e.g. TACC's ``("group", "macro")``).
        best_over: an entry field the number is the best over, as the main score is (``layer``:
            the best layer of each language, as the main score takes it).
    """

    split: str | None = "test"
    key: str | None = None
    where: tuple[tuple[str, str], ...] = ()
    best_over: str | None = None


@dataclass(frozen=True)
class MtebPivot:
    """mteb export of an evaluator whose entries are one number per (language, group, key).

    One mteb entry per language: the ``main_group`` entry gives the main score (``main_key``)
    and the ``copy`` fields; each ``groups`` entry adds ``<main_key>_<key>``.
    """

    main_group: str
    main_key: str
    copy: tuple[str, ...]
    groups: tuple[str, ...]


@dataclass(frozen=True)
class MtebExport:
    """How ``xlbench report --mteb`` turns an evaluator's result into mteb's shape.

    Attributes:
        split: the split exported (``None``: the result's first split).
        main_keys: the entry key of the mteb main score; the first one an entry has.
        subset_parts: ``.``-joined after the subset into the mteb ``hf_subset``; each a format
            string of entry fields, left out when the entry lacks the field (e.g. ``layer{layer}``).
        pair_only: drop a subset's ``/split`` suffix from ``hf_subset``.
        pivot: one entry per language instead of one per score entry (see :class:`MtebPivot`).
    """

    split: str | None = "test"
    main_keys: tuple[str, ...] = ("main_score",)
    subset_parts: tuple[str, ...] = ()
    pair_only: bool = False
    pivot: MtebPivot | None = None


@dataclass(frozen=True)
class TaskMetadata:
    """Declarative facts about an evaluator (in the spirit of mteb's ``TaskMetadata``).

    Attributes:
        name: the evaluator name (``xlbench eval <name>``); its one-line help is the registry's
            (:mod:`evaluators.tasks`), readable without importing the evaluator.
        family: the dataset family it reads (``None``: it reads files, not datasets).
        splits: the sections of its result's ``scores``: the dataset splits it reads, then any
            derived section (aligners' ``correlation``); a result has no other.
        main_score: the entry key that is the main score.
        main_score_name: the human description of the aggregated main score.
        chance: the main score of a random model, when known (``None`` otherwise).
        chance_one_in_n: the chance level is one correct answer among ``n`` candidates
            (``1/n``, ``n`` read from the entries; drawn as the chance line of layer curves).
        output_keys: the keys of its score entries (besides ``subset`` and ``main_score``): each
            appears in a result, and a key that every entry of a result carries is one of them
            (checked on every evaluator's mock run by ``tests/evaluators/run/test_every_evaluator.py``).
        table: the entry keys shown as columns of the Markdown table.
        model: ``"required"``, ``"optional"`` or ``"none"`` (``--model``).
        dataset: ``"required"``, ``"optional"`` or ``"none"`` (``--dataset``/``--revision``/``--config``).
        plots: whether it writes plots (adds ``--no-plots``).
        epilog: examples shown under ``--help``.
        layer_curve: how the report draws its per-layer curves (``None``: none).
        heatmap: the report's language x model heatmap of it (``None``: none).
        languages: how the report's per-language view reads its score per language (``None``:
            it has no per-language score).
        threshold_table: the report shows its precision/recall/F1 at a learned threshold.
        silver_gold_scatter: the report draws silver-vs-gold F1 scatters of its entries.
        mteb: how its results export to mteb (``None``: not exportable).
    """

    name: str
    family: str | None
    splits: tuple[str, ...] = ("test",)
    main_score: str = "main_score"
    main_score_name: str = ""
    chance: float | None = None
    chance_one_in_n: bool = False
    output_keys: tuple[str, ...] = ()
    table: tuple[str, ...] = ()
    model: str = "required"
    dataset: str = "required"
    plots: bool = False
    epilog: str | None = None
    layer_curve: LayerCurve | None = None
    heatmap: HeatmapView | None = None
    languages: LanguageScores | None = None
    threshold_table: bool = False
    silver_gold_scatter: bool = False
    mteb: MtebExport | None = None


@dataclass
class Scores:
    """What a scoring function returns.

    Attributes:
        scores: ``split -> [entry]``; each entry has ``subset`` and ``main_score`` (mteb's shape).
        main_score: the aggregated main score (``None`` when there is none).
        effective: parameter name -> the value really used, where it differs from the
            request (clamped to the data); the signature is built from these.
        notes: sentences for the reader (dropped pairs, clamping ...).
        main_score_name: overrides the metadata's when it depends on the parameters.
        dataset: the identity of file inputs, for evaluators that read files instead of a dataset.
        model: the identity of what was scored, when it is not an encoder (prediction files, vectors).
        plot_data: whatever the evaluator's ``plot`` needs (never written to the result).
        items: per-item prediction rows (:mod:`evaluators.run.predictions` columns: ``item_id``,
            ``subset``, ``correct``, ``score``, ``retrieved``, ``tie``; ``main`` marks the rows
            behind the main score; ``tp``/``n_pred``/``n_gold`` make it a micro F1). The runner
            bootstraps the main score's interval from the ``main`` rows and writes every row with
            ``--save-predictions``; rows never change a score.
    """

    scores: dict[str, list[dict[str, Any]]]
    main_score: float | None
    effective: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    main_score_name: str | None = None
    dataset: dict[str, Any] | None = None
    model: dict[str, Any] | None = None
    plot_data: Any = None
    items: list[dict[str, Any]] | None = None


P = TypeVar("P")
T = TypeVar("T")


def required(value: T | None, option: str, evaluator: str) -> T:
    """Return ``value``, which the runner passes whenever the metadata marks it ``required``.

    >>> required(3, "--model", "bucc")
    3

    Raises:
        UsageError: ``value`` is ``None`` (a direct call of ``score`` without it).
    """
    if value is None:
        raise UsageError(f"{evaluator} needs {option}.")
    return value


#: ``score(data, model, params, rng) -> Scores``.
ScoreFn = Callable[["DatasetSource | None", "Encoder | None", P, "np.random.Generator"], Scores]
#: ``plot(scores, params, data, model, prefix, rng) -> paths``.
PlotFn = Callable[
    [Scores, P, "DatasetSource | None", "Encoder | None", Path, "np.random.Generator"], list[str]
]
#: ``plot_grid(results, prefix, rng) -> paths``.
PlotGridFn = Callable[[list["EvalResult"], Path, "np.random.Generator"], list[str]]


@dataclass(frozen=True)
class Evaluator(Generic[P]):
    """One evaluator: its metadata, its parameters class, its scoring function and optional hooks.

    The runner reads these fields; a hook left ``None`` is simply not called (no probing).

    Attributes:
        meta: the declarative facts (:class:`TaskMetadata`).
        params: the frozen parameters dataclass (every field a :func:`param`).
        score: ``(data, model, params, rng) -> Scores``, the pure scoring function.
        check: ``(params, model)``: refuse a parameter/model combination before scoring.
        clamp: ``(params, data) -> params``: the effective parameters before scoring.
        signature_extra: ``(effective values) -> entries`` added to the signature (``None`` drops one).
        plot: draw the result's figures (own rng stream); returns the files written.
        plot_grid: draw one figure over every model of a grid on one dataset.
        write_artifacts: ``(scores, params, prefix) -> files`` written beside the result.
    """

    meta: TaskMetadata
    params: type[P]
    score: ScoreFn[P]
    check: Callable[[P, Encoder | None], None] | None = None
    clamp: Callable[[P, DatasetSource], P] | None = None
    signature_extra: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    plot: PlotFn[P] | None = None
    plot_grid: PlotGridFn | None = None
    write_artifacts: Callable[[Scores, P, Path], list[str]] | None = None

    @property
    def name(self) -> str:
        """The evaluator name (``xlbench eval <name>``)."""
        return self.meta.name


def seed_of(rng: Any) -> int:
    """Return the integer seed the runner made ``rng`` from, for external tools that take an int seed.

    >>> import numpy as np
    >>> seed_of(np.random.default_rng(13))
    13
    """
    entropy = rng.bit_generator.seed_seq.entropy
    return int(entropy[0] if isinstance(entropy, (list, tuple)) else entropy)


def signature_params(
    params_cls: type, values: Mapping[str, Any], extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return the ordered ``label -> value`` entries of the signature from (effective) parameter values.

    Fields declared with ``sig=False`` are left out; ``extra`` adds constants and
    overrides (a ``None`` value drops the key, see :func:`evaluators.run.signature.make_signature`).
    """
    out: dict[str, Any] = {}
    for f in params_fields(params_cls):
        label = sig_label(f)
        if label is not None and f.name in values:
            out[label] = values[f.name]
    if "seed" in values:
        out["seed"] = values["seed"]
    for key, value in (extra or {}).items():
        out[key] = value
    return out
