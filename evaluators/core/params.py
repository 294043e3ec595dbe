"""Parameters declared once: :func:`param` fields, and what is generated from them.

A frozen dataclass whose fields are declared with :func:`param` is the single
declaration of a command's parameters, for evaluators (``evaluators/tasks``) and
builders (``builders/<family>/spec.py``) alike. From it come:

* the command-line options (:func:`add_param_arguments`: flag, aliases, help,
  choices, type, required, argument sections, mutually exclusive groups);
* the Python API keywords and their validation (:func:`make_params`: unknown
  names, types, choices, numeric ranges, NaN), so that ``xlbench.build(...)`` and
  ``xlbench.evaluate(...)`` refuse exactly what the command line refuses, with one
  sentence that names the flag and the fix;
* the signature labels (:func:`sig_label`, :func:`key_label`).

This module imports nothing but the standard library and :mod:`evaluators.core.errors`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from evaluators.core.errors import UsageError, did_you_mean

#: Values a ``key`` parameter leaves out of the signature unless told otherwise (unset ones).
KEY_OMIT_DEFAULT: tuple[Any, ...] = (None, False, (), "")
_SCALARS = (bool, int, float, str)


def param(
    default: Any = dataclasses.MISSING,
    help: str = "",
    *,
    choices: Sequence[Any] | None = None,
    type: Any = None,
    flag: str | None = None,
    aliases: Sequence[str] = (),
    sig: str | bool = True,
    key: str | bool = False,
    key_omit: Sequence[Any] | None = None,
    manifest: bool = False,
    nargs: Any = None,
    metavar: Any = None,
    action: Any = None,
    group: str | None = None,
    section: str | None = None,
    consts: Sequence[tuple[str, Any, str]] = (),
    cli: bool = True,
    min: float | None = None,
    max: float | None = None,
    open_min: bool = False,
    open_max: bool = False,
    must: str | None = None,
    hint: str | None = None,
) -> Any:
    # Long on purpose: one documented argument per facet of a parameter, then one flat metadata dict.
    """Declare one parameter (a dataclass field carrying its CLI, validation and signature facts).

    Args:
        default: the default value (also the CLI default); leave it out for a required
            parameter (``--lang``), which then has no default and ``required=True`` on the CLI.
        help: the ``--help`` line; ``{name}`` placeholders are filled from the ``fmt``
            mapping of :func:`add_param_arguments` (e.g. a builder's default version).
        choices: allowed values (checked by argparse and by the Python API).
        type: the CLI value type; default: the type of ``default`` (``str`` when it is
            ``None``). A callable that is not a builtin type (e.g. a comma-list parser) also
            converts a string given to the Python API.
        flag: the option name; default ``--<field-name-with-dashes>``.
        aliases: more option names.
        sig: the signature label (``True``: the field name with dashes), or ``False`` when
            the parameter cannot change a number or a row (worker counts, batch sizes,
            paths whose bytes are pinned); it is then left out of the signature.
        key: builders: spell the value out in the build signature (``gold-pairs:200``);
            ``True`` labels it with the field name with dashes.
        key_omit: with ``key``, the values left out of the signature (default: unset ones;
            ``(True,)`` for a flag that is on by default, so that only ``false`` is spelled out).
        manifest: builders: copy the value as it is into the manifest's descriptive ``parameters``.
        nargs: argparse ``nargs``.
        metavar: argparse ``metavar``.
        action: argparse action (e.g. ``argparse.BooleanOptionalAction``); bools default to ``store_true``.
        group: options with the same group name are mutually exclusive.
        section: the ``--help`` section the option is listed under (an argparse argument group).
        consts: shortcut flags ``(flag, value, help)`` that store ``value`` (e.g. ``--one-based``),
            mutually exclusive with the option itself.
        cli: ``False`` to keep the parameter out of the command line (API only).
        min: the smallest allowed value (numbers; each item of a sequence).
        max: the largest allowed value.
        open_min: ``min`` itself is not allowed (``(0, 1]``).
        open_max: ``max`` itself is not allowed.
        must: the allowed range in words for the error (default: from ``min``/``max``), as in
            ``--max-pairs must be 0 (keep all) or positive, got -1.``
        hint: the fix appended to a range error (``leave it out to use every sentence``).
    """
    meta = {
        "help": help,
        "choices": tuple(choices) if choices is not None else None,
        "type": type,
        "flag": flag,
        "aliases": tuple(aliases),
        "sig": sig,
        "key": key,
        "key_omit": tuple(key_omit) if key_omit is not None else None,
        "manifest": manifest,
        "nargs": nargs,
        "metavar": metavar,
        "action": action,
        "group": group,
        "section": section,
        "consts": tuple(consts),
        "cli": cli,
        "min": min,
        "max": max,
        "open_min": open_min,
        "open_max": open_max,
        "must": must,
        "hint": hint,
    }
    if isinstance(default, (list, dict, set)):
        raise TypeError("param defaults must be immutable (use a tuple)")
    if default is dataclasses.MISSING:
        return field(metadata={"xlbench": meta})
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


def key_label(f: dataclasses.Field) -> str | None:
    """Return the label a builder spells out in its build signature, or ``None``."""
    key = _meta(f).get("key", False)
    if not key:
        return None
    return f.name.replace("_", "-") if key is True else str(key)


def key_omit(f: dataclasses.Field) -> tuple[Any, ...]:
    """Return the values of a ``key`` field that stay out of the signature."""
    omit = _meta(f).get("key_omit")
    return KEY_OMIT_DEFAULT if omit is None else omit


def in_manifest(f: dataclasses.Field) -> bool:
    """Return whether a builder copies this field into the manifest's descriptive parameters."""
    return bool(_meta(f).get("manifest", False))


def params_fields(params_cls: type) -> list[dataclasses.Field]:
    """Return the declared fields of a parameters dataclass."""
    return list(dataclasses.fields(params_cls))


def required(f: dataclasses.Field) -> bool:
    """Return whether a field has no default (it must be given)."""
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def make_params(params_cls: type, values: Mapping[str, Any]) -> Any:
    """Build a parameters object from keyword values, checking each against its declaration.

    Refuses unknown names, missing required ones, wrong types, values outside their
    choices or range, and NaN; lists become tuples (parameters stay hashable).

    Raises:
        UsageError: one sentence naming the flag and the fix.
    """
    fields = {f.name: f for f in params_fields(params_cls)}
    unknown = [k for k in values if k not in fields]
    if unknown:
        raise UsageError(
            f"Unknown parameter {unknown[0]!r}; valid: {', '.join(fields)}.{did_you_mean(unknown[0], fields)}"
        )
    missing = [f for f in fields.values() if required(f) and values.get(f.name) is None]
    if missing:
        f = missing[0]
        raise UsageError(f"{flag_of(f)} is required: {_meta(f).get('help') or f.name}.")
    clean = {name: check_value(fields[name], value) for name, value in values.items()}
    return params_cls(**clean)


def check_value(f: dataclasses.Field, value: Any) -> Any:
    """Return ``value`` checked against the declaration of ``f`` (lists frozen to tuples).

    Raises:
        UsageError: a wrong type, a value outside the choices or the range, or NaN.
    """
    meta = _meta(f)
    flag = flag_of(f)
    parse = meta.get("type")
    if isinstance(value, str) and callable(parse) and parse not in _SCALARS:
        try:
            value = parse(value)
        except (TypeError, ValueError) as err:
            raise UsageError(f"{flag}: cannot read {value!r} ({err}).") from err
    value = _freeze(value)
    if value is None:
        if f.default is not None and not required(f):
            # None is "unset" only where the declaration says so (its default is None).
            raise UsageError(f"{flag} must be {_expected(f, meta)}; got None.")
        return value
    kind = _kind(f, meta)
    many = isinstance(value, tuple)
    if _is_multi(f, meta) and not many:
        raise UsageError(f"{flag} takes a list of values; got {value!r}.")
    count = meta.get("nargs")
    if (
        isinstance(count, int)
        and meta.get("action") != "append"
        and not (many and len(value) == count)
    ):
        raise UsageError(f"{flag} takes {count} values; got {value!r}.")
    if many and kind in _SCALARS and not _is_multi(f, meta) and count is None:
        raise UsageError(f"{flag} takes one value, not a list; got {value!r}.")
    items = value if many else (value,)
    if kind is float:
        items = tuple(
            float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in items
        )
        value = items if many else items[0]
    for one in items:
        _check_one(flag, meta, kind, one)
    return value


def _check_one(flag: str, meta: Mapping[str, Any], kind: type | None, one: Any) -> None:
    choices = meta.get("choices")
    if choices and one is not None and one not in choices:
        raise UsageError(f"{flag} must be one of {', '.join(map(str, choices))}; got {one!r}.")
    if kind in (bool, int, float) and not isinstance(one, tuple) and not _is_a(one, kind):
        raise UsageError(f"{flag} must be {_KIND_WORDS[kind]}; got {one!r}.")
    if kind is str and not isinstance(one, (str, os.PathLike, tuple)):  # a path may be a Path
        raise UsageError(f"{flag} must be a string; got {type(one).__name__} {one!r}.")
    if isinstance(one, float) and not isinstance(one, bool):
        lo, hi = meta.get("min"), meta.get("max")
        if math.isnan(one) or (math.isinf(one) and lo is None and hi is None):
            words = meta.get("must") or _range_words(meta) or "a finite number"
            raise UsageError(f"{flag} must be {words}, got {one}.")
    if isinstance(one, (int, float)) and not isinstance(one, bool) and not _in_range(meta, one):
        hint = meta.get("hint")
        raise UsageError(
            f"{flag} must be {meta.get('must') or _range_words(meta)}, got {one}"
            + (f"; {hint}." if hint else ".")
        )


_KIND_WORDS = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


def _expected(f: dataclasses.Field, meta: Mapping[str, Any]) -> str:
    """What a value of ``f`` must be, in words (for the error when ``None`` arrives)."""
    kind = _kind(f, meta)
    if meta.get("choices"):
        return "one of " + ", ".join(map(str, meta["choices"]))
    words = _KIND_WORDS.get(kind, "a value") if kind is not None else "a value"
    if _is_multi(f, meta):
        words = "a list of values"
    bounds = meta.get("must") or _range_words(meta)
    return f"{words} ({bounds})" if bounds and kind in (int, float) else words


def _is_a(value: Any, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


def _in_range(meta: Mapping[str, Any], value: float) -> bool:
    lo, hi = meta.get("min"), meta.get("max")
    if lo is not None and not (value > lo if meta.get("open_min") else value >= lo):
        return False
    if hi is not None and not (value < hi if meta.get("open_max") else value <= hi):
        return False
    return True


def _range_words(meta: Mapping[str, Any]) -> str:
    """Describe the allowed range: ``at least 1``, ``in (0, 1]``, ``between 1 and 66``."""
    lo, hi = meta.get("min"), meta.get("max")
    if lo is not None and hi is not None:
        if meta.get("open_min") or meta.get("open_max"):
            left = "(" if meta.get("open_min") else "["
            right = ")" if meta.get("open_max") else "]"
            return f"in {left}{lo}, {hi}{right}"
        return f"between {lo} and {hi}"
    if lo is not None:
        return f"greater than {lo}" if meta.get("open_min") else f"at least {lo}"
    if hi is not None:
        return f"less than {hi}" if meta.get("open_max") else f"at most {hi}"
    return ""


def _is_multi(f: dataclasses.Field, meta: Mapping[str, Any]) -> bool:
    return (
        isinstance(f.default, tuple)
        or meta.get("nargs") in ("+", "*")
        or meta.get("action") == "append"
    )


def _kind(f: dataclasses.Field, meta: Mapping[str, Any]) -> type | None:
    """The Python type of one value of ``f`` (``None``: a custom parser's output).

    Numbers and flags are checked strictly; a string parameter accepts what its parser does.
    """
    declared = meta.get("type")
    action = meta.get("action")
    if action in ("store_true", "store_false", argparse.BooleanOptionalAction):
        return bool
    if declared in _SCALARS:
        return declared
    if declared is not None:
        return None
    default = f.default
    if isinstance(default, tuple):
        default = default[0] if default else None
    if isinstance(default, _SCALARS):
        return type(default)
    return str if default is None or default is dataclasses.MISSING else None


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def add_param_arguments(
    parser: argparse.ArgumentParser,
    params_cls: type,
    *,
    fmt: Mapping[str, Any] | None = None,
) -> None:
    """Add one command-line option per parameter field (help, choices, type from its metadata).

    Args:
        parser: the (sub)command's parser.
        params_cls: the parameters dataclass.
        fmt: values for ``{placeholders}`` in help lines.
    """
    groups: dict[str, Any] = {}
    sections: dict[str, Any] = {}
    for f in params_fields(params_cls):
        meta = _meta(f)
        if not meta.get("cli", True):
            continue
        target: Any = parser
        if meta.get("section"):
            if meta["section"] not in sections:
                sections[meta["section"]] = parser.add_argument_group(meta["section"])
            target = sections[meta["section"]]
        group = meta.get("group") or (f.name if meta.get("consts") else None)
        if group:
            if group not in groups:
                groups[group] = target.add_mutually_exclusive_group()
            target = groups[group]
        _add_one(target, f, meta, fmt or {})


def _add_one(target: Any, f: dataclasses.Field, meta: Mapping[str, Any], fmt: Mapping) -> None:
    default = None if required(f) else f.default
    for flag, const, text in meta.get("consts", ()):
        target.add_argument(
            flag, dest=f.name, action="store_const", const=const, default=default, help=text
        )
    text = meta["help"].format(**fmt) if fmt and "{" in meta["help"] else meta["help"]
    kwargs: dict[str, Any] = {"dest": f.name, "default": default, "help": text}
    if required(f):
        kwargs["required"] = True
    action = meta.get("action")
    if action is None and isinstance(default, bool):
        action = "store_true"
    if action is not None:
        kwargs["action"] = action
    if action == "append" and isinstance(default, tuple):
        kwargs["default"] = list(default)  # argparse appends to a copy of a list default
    if action in (None, "append"):
        if meta.get("type"):
            kind = meta["type"]
        elif isinstance(default, tuple):
            kind = type(default[0]) if default else str
        else:
            kind = type(default) if default is not None else str
        kwargs["type"] = kind
        if meta.get("choices"):
            kwargs["choices"] = meta["choices"]
        if meta.get("nargs") is not None:
            kwargs["nargs"] = meta["nargs"]
        if meta.get("metavar") is not None:
            kwargs["metavar"] = meta["metavar"]
    target.add_argument(flag_of(f), *meta.get("aliases", ()), **kwargs)


def params_from_namespace(params_cls: type, args: argparse.Namespace) -> Any:
    """Build the parameters object from parsed command-line options (checked as :func:`make_params`)."""
    values = {
        f.name: getattr(args, f.name) for f in params_fields(params_cls) if hasattr(args, f.name)
    }
    return make_params(params_cls, values)


def split_values(
    classes: Sequence[type], values: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Share keyword ``values`` out among parameter classes (the first that declares a name takes it).

    Returns one ``dict`` per class and the names no class declares.
    """
    out: list[dict[str, Any]] = [{} for _ in classes]
    unknown = []
    for name, value in values.items():
        for i, cls in enumerate(classes):
            if name in {f.name for f in params_fields(cls)}:
                out[i][name] = value
                break
        else:
            unknown.append(name)
    return out, unknown


def api_names(classes: Sequence[type]) -> list[str]:
    """Return every keyword the classes declare, first declaration first (no duplicates)."""
    return list(dict.fromkeys(f.name for cls in classes for f in params_fields(cls)))


__all__ = [
    "add_param_arguments",
    "api_names",
    "check_value",
    "flag_of",
    "in_manifest",
    "key_label",
    "key_omit",
    "make_params",
    "param",
    "params_fields",
    "params_from_namespace",
    "required",
    "sig_label",
    "split_values",
]
