"""The build runner: one family's build end to end, for the command line and for Python.

``xlbench.build("bucc", lang="deu-eng", gold_pairs=40, out="out/bucc")`` and
``xlbench build bucc --lang deu-eng --gold-pairs 40 --out out/bucc`` are the same
call: the keywords are the fields of the family's parameters class
(``builders/<family>/spec.py: Params``) and of :class:`BuildOptions` and
:class:`EngineOptions`, each declared once with :func:`evaluators.core.params.param`.
:func:`build` checks every value as the command line does, runs the builder,
derives the license, assembles the :class:`~evaluators.schema.meta.Manifest` and
writes the folder (:func:`builders.release.artifact.write_dataset`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from builders.base import BuildResult, git_commit_state, key_params, signature_params
from builders.registry import Builder, get_builder
from builders.release.licenses import license_block
from evaluators import __version__
from evaluators.compute.engine import Engine, EngineOptions
from evaluators.core.errors import UsageError, did_you_mean
from evaluators.core.params import api_names, make_params, param, split_values
from evaluators.core.progress import scope
from evaluators.run.results import utc_now
from evaluators.schema.meta import Manifest, check_version


@dataclass(frozen=True)
class BuildOptions:
    """Options every build takes: where and how the folder is written (none changes a row)."""

    out: str | None = param(None, "output folder (default: out/<family>-<languages>)", sig=False)
    version: str | None = param(
        None, "semantic version of this build (default {default_version})", sig=False
    )
    overwrite: bool = param(
        False,
        "replace an existing dataset folder (or an empty one); any other folder is never deleted",
        sig=False,
    )
    changelog: str | None = param(
        None,
        "one line for the card's changelog (what changed in this version)",
        sig=False,
    )
    license: str | None = param(
        None,
        "license of the produced data (SPDX id), overriding the one derived from the inputs; needs --license-reason",
        sig=False,
    )
    license_reason: str | None = param(
        None,
        "why --license applies instead of the inputs' license (goes on the card)",
        sig=False,
    )


@dataclass(frozen=True)
class Built:
    """What :func:`build` wrote.

    Attributes:
        path: the dataset folder.
        manifest: its manifest (``manifest.json``; ``manifest.build_signature()`` is the signature).
    """

    path: str
    manifest: Any


def option_classes(builder: Builder) -> list[type]:
    """Return the parameter classes of a build, in precedence order (the family's own first)."""
    classes = [builder.params_class(), BuildOptions]
    if builder.engine:
        classes.append(EngineOptions)
    return classes


def build(family: str, **values: Any) -> Built:
    """Build one dataset folder; the Python twin of ``xlbench build <family> ...``.

    Args:
        family: the dataset family (``cbd``, ``silver``, ``alee``, ``bucc``).
        **values: the family's parameters and the build options, named as their flags
            without dashes (``lang="deu-eng"``, ``gold_pairs=40``, ``out="out/bucc"``,
            ``overwrite=True``, ``engine="ray"``); every value is checked as on the command line.

    Returns:
        the folder written and its manifest.

    Raises:
        UsageError: an unknown family or keyword, a value outside its declaration, or a
            combination of options the builder refuses; the project's other errors for bad
            inputs (missing files, unknown language codes ...).
    """
    builder = get_builder(family)
    classes = option_classes(builder)
    shares, unknown = split_values(classes, values)
    if unknown:
        names = api_names(classes)
        raise UsageError(
            f"xlbench.build({family!r}) has no parameter {unknown[0]!r}; valid: {', '.join(names)}."
            + did_you_mean(unknown[0], names)
        )
    params, options, *engine = (make_params(cls, share) for cls, share in zip(classes, shares))
    return run_build(builder, params, options, engine[0] if engine else None)


def run_build(
    builder: Builder, params: Any, options: BuildOptions, engine: EngineOptions | None = None
) -> Built:
    """Check the options, run ``builder`` with ``params`` and write its folder.

    The version, the license flags and the output folder are checked before any work.
    """
    # late: the artifact writer renders the card (jinja2, yaml); `xlbench build <family> --help`
    # imports this module for its options and needs neither
    from builders.release.artifact import check_output

    version = check_version(options.version or builder.default_version)
    license_block([], options.license, options.license_reason)  # flags checked before any work
    if getattr(params, "corpus_opt", None) and not getattr(params, "corpus", None):
        raise UsageError("--corpus-opt is an option of --corpus; add --corpus NAME or drop it.")
    out = options.out or builder.out_folder(params)
    check_output(out, options.overwrite)
    backend = (engine or EngineOptions()).open() if builder.engine else None
    return _build_and_write(builder, params, options, version, out, backend)


def _build_and_write(
    builder: Builder,
    params: Any,
    options: BuildOptions,
    version: str,
    out: str,
    backend: Engine | None,
) -> Built:
    from builders.release.artifact import write_dataset  # late: jinja2, yaml (see run_build)

    family = builder.schema()
    started = utc_now()
    t0 = time.perf_counter()
    with scope(build_scope(builder.name, params)):  # "cbd eng-deu: extract" in progress lines
        result: BuildResult = builder.run_function()(params, backend)
    data_inputs = [(i.name, i.license) for i in result.inputs if i.role == "data"]
    license_info = license_block(data_inputs, options.license, options.license_reason)
    result.license = license_info["hub"]
    manifest = _manifest(builder, result, options, version, license_info, started, t0)
    path = write_dataset(out, family, result, manifest, overwrite=options.overwrite)
    return Built(str(path), manifest)


def build_scope(family: str, params: Any) -> str:
    """What a build's progress lines begin with: the family and its languages.

    >>> from types import SimpleNamespace
    >>> build_scope("cbd", SimpleNamespace(lang="eng-deu")), build_scope("alee", SimpleNamespace(langs=("deu", "fra")))
    ('cbd eng-deu', 'alee deu,fra')
    """
    langs = getattr(params, "lang", None) or ",".join(getattr(params, "langs", None) or ())
    return f"{family} {langs}".strip()


def _manifest(
    builder: Builder,
    result: Any,
    options: BuildOptions,
    version: str,
    license_info: Mapping[str, Any],
    started: str,
    t0: float,
) -> Any:
    """Assemble the manifest of a finished build (shape: :mod:`evaluators.schema.meta`)."""
    return Manifest(
        name=result.name or f"xlbench-{builder.name}",
        family=builder.name,
        version=version,
        builder=f"builders.{builder.name}",
        seed=result.params.seed,
        xlbench_version=__version__,
        git_commit=git_commit_state(),
        params=signature_params(result.params),
        key_params=key_params(result.params),
        parameters=result.parameters,
        inputs=result.inputs,
        models=result.models,
        license=dict(license_info),
        nondeterministic=sorted(result.nondeterministic),
        counts=result.counts,
        run={**result.run, "seconds": round(time.perf_counter() - t0, 1)},
        changelog=[
            {
                "version": version,
                "date": started[:10],
                "changes": options.changelog or builder.changelog_line(version),
            }
        ],
        started_at=started,
        finished_at=utc_now(),
    )


def namespace_values(classes: Sequence[type], args: Any) -> dict[str, Any]:
    """Return the values of parsed command-line options that the classes declare."""
    return {name: getattr(args, name) for name in api_names(classes) if hasattr(args, name)}
