"""``xlbench eval``: run one evaluator, write its result JSON, print a Markdown table.

JSON goes to stdout when ``--json`` is given, logs and tables to stderr/stdout.
Exit codes: 0 ok, 1 failed check, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time

from evaluators import __version__
from evaluators.errors import XlbenchError
from evaluators.results import finalize, save_result
from evaluators.tasks import available_tasks

log = logging.getLogger("xlbench")


def add_eval_parsers(sub: argparse._SubParsersAction) -> None:
    """Add one ``eval <name>`` subparser per registered evaluator."""
    for name, module in available_tasks().items():
        p = sub.add_parser(
            name,
            help=module.HELP,
            description=module.HELP,
            epilog=getattr(module, "EPILOG", None),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.add_argument("--out", default="results", help="folder for the result JSON and plots (default: results)")
        p.add_argument("--seed", type=int, default=0, help="random seed for sampling (default 0)")
        p.add_argument("--json", action="store_true", help="print the result JSON on stdout instead of the table")
        p.set_defaults(_eval_module=module, _eval_name=name)


def run_eval(args: argparse.Namespace) -> int:
    """Run the evaluator chosen on the command line; return the exit code."""
    start = time.perf_counter()
    result = args._eval_module.run(args)
    result.wall_time_s = round(time.perf_counter() - start, 3)
    finalize(result)
    path = save_result(result, args.out)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        table = getattr(result, "_table", None)
        if table:
            print(table)
        main = "n/a" if result.main_score is None else f"{result.main_score:.4f}"
        print(f"\nmain score ({result.main_score_name}): {main}")
        print(f"signature: {result.signature}")
    log.info("wrote %s", path)
    return 0


def configure_logging(verbose: bool = False) -> None:
    """Send logs to stderr."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(message)s", stream=sys.stderr
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``xlbench-eval`` and ``python -m evaluators``."""
    parser = argparse.ArgumentParser(prog="xlbench-eval", description="Score any model on xlbench datasets.")
    parser.add_argument("--version", action="version", version=f"xlbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="evaluator", required=True, metavar="EVALUATOR")
    add_eval_parsers(sub)
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    try:
        return run_eval(args)
    except XlbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except BrokenPipeError:
        # `xlbench ... | head`: the reader left; silence the flush at exit instead of a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
