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

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluators.core.errors import UsageError, did_you_mean


def param(
    default: Any,
    help: str,
    *,
    choices: Sequence[Any] | None = None,
    type: Any = None,
    flag: str | None = None,
    aliases: Sequence[str] = (),
    sig: str | bool = True,
    nargs: Any = None,
    metavar: Any = None,
    action: Any = None,
    group: str | None = None,
    consts: Sequence[tuple[str, Any, str]] = (),
    cli: bool = True,
) -> Any:
    """Declare one parameter of an evaluator (a dataclass field with CLI and signature metadata).

    Args:
        default: the default value (also the CLI default).
        help: the ``--help`` line.
        choices: allowed values (checked by argparse and by the Python API).
        type: the CLI value type; default: the type of ``default`` (``str`` when it is ``None``).
        flag: the option name; default ``--<field-name-with-dashes>``.
        aliases: more option names.
        sig: the signature label (``True``: the field name with dashes), or ``False`` when
            the parameter cannot change a number (it is then left out of the signature).
        nargs: argparse ``nargs``.
        metavar: argparse ``metavar``.
        action: argparse action (e.g. ``argparse.BooleanOptionalAction``); bools default to ``store_true``.
        group: options with the same group name are mutually exclusive.
        consts: shortcut flags ``(flag, value, help)`` that store ``value`` (e.g. ``--one-based``),
            mutually exclusive with the option itself.
        cli: ``False`` to keep the parameter out of the command line (API only).
    """
    meta = {
        "help": help,
        "choices": tuple(choices) if choices is not None else None,
        "type": type,
        "flag": flag,
        "aliases": tuple(aliases),
        "sig": sig,
        "nargs": nargs,
        "metavar": metavar,
        "action": action,
        "group": group,
        "consts": tuple(consts),
        "cli": cli,
    }
    if isinstance(default, (list, dict, set)):
        raise TypeError("param defaults must be immutable (use a tuple)")
    return field(default=default, metadata={"xlbench": meta})


def _meta(f: dataclasses.Field) -> dict[str, Any]:
    return f.metadata.get(
        "xlbench", {"help": "", "sig": True, "cli": False, "flag": None, "aliases": ()}
    )


def flag_of(f: dataclasses.Field) -> str:
    """Return the command-line option of a parameter field."""
    return _meta(f).get("flag") or "--" + f.name.replace("_", "-")


def sig_label(f: dataclasses.Field) -> str | None:
    """Return the signature label of a field, or ``None`` when it does not change the number."""
    sig = _meta(f).get("sig", True)
    if sig is False:
        return None
    return f.name.replace("_", "-") if sig is True else str(sig)


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


def params_fields(params_cls: type) -> list[dataclasses.Field]:
    """Return the declared fields of a parameters dataclass."""
    return list(dataclasses.fields(params_cls))


def make_params(params_cls: type, values: Mapping[str, Any]) -> Any:
    """Build a parameters object from keyword values, refusing unknown names and bad choices.

    Raises:
        UsageError: an unknown parameter name or a value outside its choices.
    """
    fields = {f.name: f for f in params_fields(params_cls)}
    unknown = [k for k in values if k not in fields]
    if unknown:
        raise UsageError(
            f"Unknown parameter {unknown[0]!r}; valid: {', '.join(fields)}.{did_you_mean(unknown[0], fields)}"
        )
    for name, value in values.items():
        choices = _meta(fields[name]).get("choices")
        for one in value if isinstance(value, (list, tuple)) else [value]:
            if choices and one is not None and one not in choices:
                raise UsageError(
                    f"{flag_of(fields[name])} must be one of {', '.join(map(str, choices))}; got {one!r}."
                )
    clean = {k: _freeze(v) for k, v in values.items()}
    return params_cls(**clean)


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def add_param_arguments(parser: argparse.ArgumentParser, params_cls: type) -> None:
    """Add one command-line option per parameter field (help, choices, type from its metadata)."""
    groups: dict[str, Any] = {}
    for f in params_fields(params_cls):
        meta = _meta(f)
        if not meta.get("cli", True):
            continue
        target = parser
        group = meta.get("group") or (f.name if meta.get("consts") else None)
        if group:
            if group not in groups:
                groups[group] = parser.add_mutually_exclusive_group()
            target = groups[group]
        for flag, const, text in meta.get("consts", ()):
            target.add_argument(
                flag, dest=f.name, action="store_const", const=const, default=f.default, help=text
            )
        kwargs: dict[str, Any] = {"dest": f.name, "default": f.default, "help": meta["help"]}
        action = meta.get("action")
        if action is None and isinstance(f.default, bool):
            action = "store_true"
        if action is not None:
            kwargs["action"] = action
        if action in (None, "append"):
            if meta.get("type"):
                kind = meta["type"]
            elif isinstance(f.default, tuple):
                kind = type(f.default[0]) if f.default else str
            else:
                kind = type(f.default) if f.default is not None else str
            kwargs["type"] = kind
            if meta.get("choices"):
                kwargs["choices"] = meta["choices"]
            if meta.get("nargs") is not None:
                kwargs["nargs"] = meta["nargs"]
            if meta.get("metavar") is not None:
                kwargs["metavar"] = meta["metavar"]
        target.add_argument(flag_of(f), *meta.get("aliases", ()), **kwargs)


def params_from_namespace(params_cls: type, args: argparse.Namespace) -> Any:
    """Build the parameters object from parsed command-line options."""
    values = {
        f.name: getattr(args, f.name) for f in params_fields(params_cls) if hasattr(args, f.name)
    }
    return make_params(params_cls, values)


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
