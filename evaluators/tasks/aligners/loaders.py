"""Reading a pair's silver and gold sentences and links (0-based) and extra training text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evaluators.core.errors import InputFileError
from evaluators.data.alignio import (
    detect_base,
    open_lines,
    read_alignments,
    read_parallel_text,
    resolve_base,
    shift,
)
from evaluators.data.source import open_source
from evaluators.schema import silver
from evaluators.tasks.alignment import file_sha256

if TYPE_CHECKING:
    from evaluators.tasks.aligners import Params


def _read_lines(path: str) -> list[list[str]]:
    return [ln.split() for ln in open_lines(path, "training text")]


def load_silver(spec: dict) -> dict:
    """Load a pair's silver sentences and links (0-based)."""
    if "dataset" in spec or "source" in spec:
        data = spec.get("source") or open_source(spec["dataset"])
        (config,) = data.select_configs(
            "silver",
            spec.get("config"),
            scored=silver.alignment_table,
            what="alignment config",
            flag=spec.get("flag", "config=<pair> in --pair"),
            single=True,
        )
        ds = data.load(config, "test")
        ref = data.ref
        sure = [{(int(a), int(b)) for a, b in x} for x in ds[silver.SURE]]
        possible = [{(int(a), int(b)) for a, b in x} | s for x, s in zip(ds[silver.POSSIBLE], sure)]
        return {
            "src": list(ds[silver.SRC_TOKENS]),
            "tgt": list(ds[silver.TGT_TOKENS]),
            "sure": sure,
            "possible": possible,
            "source": {
                "id": ref.id,
                "revision": ref.revision,
                "version": ref.version,
                "config": config,
            },
        }
    folder = Path(spec["silver"])
    src, tgt = read_parallel_text(folder / "parallel.txt")
    links = read_alignments(folder / "gold.txt", "id")
    base, _ = detect_base(
        links.possible,
        [len(src[int(k)]) for k in links.keys],
        [len(tgt[int(k)]) for k in links.keys],
    )
    links = shift(links, base)
    by_key = links.as_dict()
    sure = [by_key.get(str(n), (set(), set()))[0] for n in range(len(src))]
    possible = [by_key.get(str(n), (set(), set()))[1] for n in range(len(src))]

    return {
        "src": src,
        "tgt": tgt,
        "sure": sure,
        "possible": possible,
        "source": {
            "id": str(folder),
            "revision": file_sha256(str(folder / "gold.txt")),
            "version": None,
        },
    }


def load_gold(spec: dict) -> dict | None:
    """Load a pair's gold sentences and links (0-based, reversed when asked)."""
    if "gold_text" not in spec:
        return None
    src, tgt = read_parallel_text(spec["gold_text"])
    links = read_alignments(spec["gold_links"])
    if links.fmt == "pharaoh" and len(links.keys) != len(src):
        raise InputFileError(
            f"{spec['gold_links']} has {len(links.keys)} lines but {spec['gold_text']} has {len(src)} sentence pairs."
        )
    if not all(k.isdigit() and int(k) < len(src) for k in links.keys):
        raise InputFileError(
            f"{spec['gold_links']} has sentence ids that are not line numbers of {spec['gold_text']}; "
            f"use one Pharaoh line per sentence pair."
        )
    keyed = {k: n for n, k in enumerate(links.keys)}
    lens_s = [len(src[int(k)]) for k in links.keys]
    lens_t = [len(tgt[int(k)]) for k in links.keys]
    links, base, reason = resolve_base(
        links, "auto", lens_s, lens_t, what=f"the gold file {str(spec['gold_links'])!r}"
    )
    sure = [links.sure[keyed[str(n)]] if str(n) in keyed else set() for n in range(len(src))]
    possible = [
        links.possible[keyed[str(n)]] if str(n) in keyed else set() for n in range(len(src))
    ]
    if spec.get("gold_reversed", "0") in ("1", "yes", "true"):
        src, tgt = tgt, src
        sure = [{(j, i) for i, j in s} for s in sure]
        possible = [{(j, i) for i, j in p} for p in possible]
    return {
        "src": src,
        "tgt": tgt,
        "sure": sure,
        "possible": possible,
        "base": base,
        "base_reason": reason,
    }


def _read_extra(spec: dict, args: Params) -> tuple[list[list[str]], list[list[str]]]:
    train_src, train_tgt = [], []
    files = list(args.train_text or ())
    if "train_src" in spec:
        files.append((spec["train_src"], spec["train_tgt"]))
    for fs, ft in files:
        s, t = _read_lines(fs), _read_lines(ft)
        if len(s) != len(t):
            raise InputFileError(
                f"Training files {fs!r} and {ft!r} differ in length ({len(s)} vs {len(t)} lines)."
            )
        train_src += s
        train_tgt += t
    if args.max_train is not None:
        train_src, train_tgt = train_src[: args.max_train], train_tgt[: args.max_train]
    return train_src, train_tgt
