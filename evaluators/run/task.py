"""What an evaluator is: metadata, a frozen parameters dataclass and one scoring function.

An evaluator module defines:

``TASK``
    a :class:`TaskMetadata` (name, family, splits read, main score, chance level,
    output keys, table columns ...).
``Params``
    a frozen dataclass; each field declared with :func:`param` carries its
    command-line help, choices and its signature label, so the CLI options, the
    Python API keywords and the signature come from one declaration.
``score(data, model, params, rng) -> Scores``
    the pure scoring function: ``data`` is a :class:`~evaluators.data.source.DatasetSource`
    (or ``None`` for file-based evaluators), ``model`` an
    :class:`~evaluators.encoders.base.Encoder` (or ``None``), ``rng`` a
    ``numpy.random.Generator`` seeded from ``--seed`` and used for nothing but scoring.

and optionally:

``clamp(params, data) -> Params``
    the EFFECTIVE parameters before scoring (what will really be used);
``plot(scores, params, data, model, prefix, rng) -> list[str]``
    write PNGs; ``rng`` is its own stream (:data:`PLOT_STREAM`), so plots never change a score;
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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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

#: Second seed component of the plotting rng: ``np.random.default_rng([seed, PLOT_STREAM])``.
PLOT_STREAM = 0x9E37


@dataclass(frozen=True)
class TaskMetadata:
    """Declarative facts about an evaluator (in the spirit of mteb's ``TaskMetadata``).

    Attributes:
        name: the evaluator name (``xlbench eval <name>``).
        family: the dataset family it reads (``None``: it reads files, not datasets).
        help: one line.
        splits: the splits it reads (by default).
        main_score: the entry key that is the main score.
        main_score_name: the human description of the aggregated main score.
        chance: the main score of a random model, when known (``None`` otherwise).
        output_keys: the keys every score entry has (besides ``subset`` and ``main_score``).
        table: the entry keys shown as columns of the Markdown table.
        model: ``"required"``, ``"optional"`` or ``"none"`` (``--model``).
        dataset: ``"required"``, ``"optional"`` or ``"none"`` (``--dataset``/``--revision``/``--config``).
        plots: whether it writes plots (adds ``--no-plots``).
        epilog: examples shown under ``--help``.
    """

    name: str
    family: str | None
    help: str
    splits: tuple[str, ...] = ("test",)
    main_score: str = "main_score"
    main_score_name: str = ""
    chance: float | None = None
    output_keys: tuple[str, ...] = ()
    table: tuple[str, ...] = ()
    model: str = "required"
    dataset: str = "required"
    plots: bool = False
    epilog: str | None = None


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
