"""The ``report``, ``compare`` and ``export`` subcommands (argparse only; work is imported lazily)."""

from __future__ import annotations

import argparse
import json
import logging

from evaluators.core.progress import quiet_libraries

log = logging.getLogger("xlbench")

REPORT_EPILOG = """examples:
  xlbench report results/ --out site/
  xlbench report results/cbd results/bucc --out site/ --format md

Opens from disk (site/index.html): no server and no CDN. Each number links to its result JSON.
"""
COMPARE_EPILOG = """examples:
  xlbench compare results/bucc__ds@1__model-a@1.json results/bucc__ds@1__model-b@2.json
  xlbench compare A.json B.json --subset eng_Latn-deu_Latn --method ar --resamples 10000

Needs the per-item predictions (<result>.predictions.parquet) beside each result:
run the evaluators with --save-predictions. Exit 0 whether or not the difference is significant.
"""
EXPORT_EPILOG = """examples:
  xlbench export mteb results/ --out mteb-results/
  xlbench export mteb results/suite --out mteb-suite/      # a suite run: + benchmark.py, benchmark.json

Load with mteb: mteb.ResultCache(cache_path="mteb-results").load_results(require_model_meta=False, include_remote=False)
A suite run's benchmark: runpy.run_path("mteb-suite/benchmark.py")["BENCHMARK"] is an mteb.Benchmark
for mteb.evaluate (its tasks are the suite's cbd and bucc datasets as bitext mining).
"""


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``report``, ``compare`` and ``export mteb`` to the ``xlbench`` subcommands."""
    p = sub.add_parser(
        "report",
        help="static HTML (or Markdown) report and leaderboard of result folders",
        description="Build a self-contained static site from xlbench result JSONs.",
        epilog=REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS_DIR",
        help="folders holding result JSONs (searched recursively)",
    )
    p.add_argument("--out", required=True, metavar="SITE_DIR", help="folder to write the site into")
    p.add_argument(
        "--format",
        dest="fmt",
        choices=("html", "md"),
        default="html",
        help="html site (default) or a Markdown summary",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a non-empty --out that is not a report (never its own results or a dataset)",
    )
    p.set_defaults(_report_run=run_report)

    p = sub.add_parser(
        "compare",
        help="paired significance test of two results on the same items",
        description="Paired bootstrap and approximate randomisation test of RESULT_B against RESULT_A.",
        epilog=COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("result_a", metavar="RESULT_A")
    p.add_argument("result_b", metavar="RESULT_B")
    p.add_argument(
        "--subset",
        default=None,
        help="subset whose items are compared (default: the main-score rows)",
    )
    p.add_argument(
        "--method",
        choices=("both", "bs", "ar"),
        default="both",
        help="paired bootstrap, approximate randomisation, or both (default)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=1000,
        help="bootstrap resamples / randomisation trials (default 1000)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the tests' random stream (default 0)"
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(_report_run=run_compare)

    p = sub.add_parser(
        "export",
        help="export results to other tools' formats",
        description="Export xlbench results to other tools' formats.",
        epilog=EXPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fmt = p.add_subparsers(dest="export_format", required=True, metavar="FORMAT")
    m = fmt.add_parser(
        "mteb",
        help="mteb result files (results/<model>/<revision>/<task>.json)",
        epilog=EXPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    m.add_argument("results", nargs="+", metavar="RESULTS_DIR")
    m.add_argument("--out", required=True, metavar="DIR", help="folder for the mteb results")
    m.set_defaults(_report_run=run_export_mteb)


def run_report(args: argparse.Namespace) -> int:
    """Build the site; print where it is."""
    # late (numpy through metrics.correlation): `xlbench --help` imports this module for its parsers
    from evaluators.report.site import build_site

    quiet_libraries(getattr(args, "verbose", False))
    index = build_site(args.results, args.out, fmt=args.fmt, overwrite=args.overwrite)
    print(f"wrote {index}")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """Run the paired tests and print the verdict."""
    from evaluators.report.compare import compare  # late: numpy, as build_site above

    result = compare(
        args.result_a,
        args.result_b,
        subset=args.subset,
        method=args.method,
        resamples=args.resamples,
        seed=args.seed,
        alpha=args.alpha,
    )
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.text())
    return 0


def run_export_mteb(args: argparse.Namespace) -> int:
    """Write mteb result files (and a suite run's mteb Benchmark)."""
    from evaluators.report.mteb import export_results  # late: numpy (encoders), as build_site
    from evaluators.report.mteb_benchmark import split_folders, write_benchmark

    folders, suite_run = split_folders(args.results)
    paths = export_results(folders, args.out)
    print(f"wrote {len(paths)} mteb result file(s) under {args.out}")
    if suite_run is not None:
        for path in write_benchmark(suite_run, args.out):
            print(f"wrote {path}")
    return 0
