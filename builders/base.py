"""What a builder returns, and helpers every builder uses (parameters, pinning inputs, progress).

Every builder takes a frozen parameters dataclass (``spec.Params``) whose fields are
declared once with :func:`evaluators.core.params.param`: the command-line options,
the ``xlbench.build`` keywords, their validation and the manifest's labels all come
from it. The manifest records the parameters and the build signature hashes them. A
field declared ``sig=False`` cannot change the rows (worker counts, batch sizes,
cache locations, file paths whose bytes are pinned as inputs); a field declared
``key=True`` is spelled out in the signature (``gold-pairs:200``); ``manifest=True``
copies it as it is into the manifest's descriptive ``parameters``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

import pyarrow as pa

from builders.adapters.provenance import pin
from evaluators.core.gitstate import git_commit_state  # noqa: F401 - re-exported: builders record the commit with it
from evaluators.core.params import (
    in_manifest,
    key_label,
    key_omit,
    param,
    params_from_namespace,
    sig_label,
)
from evaluators.schema.meta import InputRecord, ModelRecord

Rows: TypeAlias = Sequence[Mapping[str, Any]] | pa.Table


@dataclass
class BuildResult:
    """Everything a builder produced, before it is written.

    Attributes:
        tables: ``config -> split -> rows``.
        parameters: every parameter that shaped the rows (go into manifest and card).
        inputs: pinned inputs (files with sha256, package resources).
        models: models / engines / dictionaries with their revisions.
        counts: per-stage counts: ``{"stage": {"in": n, "kept": n, "dropped": {reason: n}}}``.
        construction: numbered steps for the card's "how it was built" section.
        summary: what this build holds, where the family's prose could mislead (which foils,
            whether a filter ran): the card states it under "This build", before the prose.
        limitations: known limitations for the card.
        license: Hub license id of the produced data; set by the CLI from the
            inputs' licenses (:func:`builders.release.licenses.license_block`).
        name: dataset name (default: ``xlbench-<family>``).
        params: the builder's frozen parameters dataclass.
        nondeterministic: stages that cannot be seeded (``eflomal``, ``mt:google``).
        run: this run only (cache hits, stage timings): kept out of content comparisons.
        exports: ``final path -> staged path`` of side files (e.g. ``silver --export``), moved into
            place by :func:`builders.release.artifact.write_dataset` only after the dataset folder is.
    """

    tables: Mapping[str, Mapping[str, Rows]]
    parameters: dict[str, Any] = field(default_factory=dict)
    inputs: list[InputRecord] = field(default_factory=list)
    models: list[ModelRecord] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    construction: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    license: str = "cc-by-sa-4.0"
    name: str | None = None
    params: Any = None
    nondeterministic: list[str] = field(default_factory=list)
    run: dict[str, Any] = field(default_factory=dict)
    exports: dict[str, str] = field(default_factory=dict)


def file_input(
    name: str,
    path: str | os.PathLike,
    *more: str | os.PathLike,
    license: str | None = None,
    citation: str | None = None,
    hint: str | None = None,
) -> InputRecord:
    """Pin a local file (and any companions read with it) as a build input.

    The origin and license come from the package manager when a package
    installed the file (:mod:`builders.adapters.provenance`); otherwise the
    origin is ``file:<file name>`` (never where it lies) and the license ``unknown`` unless given.
    """
    return pin(name, [path, *more], license=license, citation=citation, hint=hint)


P = TypeVar("P")


def seed_param() -> Any:
    """Declare the ``seed`` field every builder's parameters have (one declaration, one default)."""
    return param(13, "random seed (default 13)", min=0)


def device_param(models: str) -> Any:
    """Declare the ``device`` field of a builder that runs ``models`` (one declaration, one check).

    Not in the signature or the content id (the device cannot change what is built, only
    how fast): the builder records the device used in the manifest's ``run`` section.
    :func:`builders.adapters.device.resolve_device` checks it where a model loads.
    """
    return param(
        None,
        f"torch device for {models}: cpu, cuda, cuda:<i>, mps (default: cuda when available)",
        sig=False,
    )


def params_from(cls: type[P], args: Any) -> P:
    """Return ``cls`` (a frozen dataclass) filled from ``args`` (an argparse namespace or ``cls`` itself).

    Values are checked against their :func:`~evaluators.core.params.param` declarations
    and lists become tuples, so the parameters stay hashable and frozen; fields ``args``
    lacks keep their defaults.

    Raises:
        UsageError: a value outside its declaration (one sentence naming the flag).
    """
    if isinstance(args, cls):
        return args
    return params_from_namespace(cls, args)


def signature_params(params: Any) -> dict[str, Any]:
    """Return the parameters that shape the rows (fields not declared ``sig=False``), JSON-ready."""
    if params is None:
        return {}
    return {
        f.name: _plain(getattr(params, f.name))
        for f in dataclasses.fields(params)
        if sig_label(f) is not None
    }


def key_params(params: Any) -> dict[str, str]:
    """Return ``label -> value`` of the fields declared ``key`` (spelled out in the signature), unset ones left out."""
    if params is None:
        return {}
    out = {}
    for f in dataclasses.fields(params):
        label = key_label(f)
        value = getattr(params, f.name)
        # ``key_omit``: the values left out (default: unset ones); a flag on by default spells out ``false``.
        if label and value not in key_omit(f):
            out[label] = (
                ",".join(map(str, value))
                if isinstance(value, tuple)
                else str(value).lower()
                if isinstance(value, bool)
                else str(value)
            )
    return out


def manifest_params(params: Any) -> dict[str, Any]:
    """Return the fields declared ``manifest=True``, JSON-ready (tuples as lists), for the manifest's ``parameters``."""
    return {
        f.name: _plain(getattr(params, f.name))
        for f in dataclasses.fields(params)
        if in_manifest(f)
    }


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
