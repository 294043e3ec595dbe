"""Benchmark: what the embedding cache writes per sentence, its hit rate, and one pass vs one pass per pair.

A random 384-wide, 12-block BERT (as in ``bench_memory.py``) encodes ``--n`` synthetic
sentences twice into a fresh cache folder:

1. word vectors (one word per sentence, all 13 layers) and sentence embeddings at all
   13 layers x (mean, cls): bytes written per sentence (target < 50 KB), then the same
   requests again: hit rate, and hit vs encode time;
2. the same sentence grid with the cache off: ``embed_sentences`` (one forward pass per
   batch for all 26 (layer, pooling) pairs) against one ``sentence_embeddings`` call per
   pair (the evaluators' loop before), timed on ``--grid-n`` sentences.

    .venv/bin/python bench/bench_cache.py            # 300 sentences
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memory import build_model, sentences  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--grid-n", type=int, default=64)
    args = ap.parse_args()
    from evaluators.encoders.cached import with_cache
    from evaluators.encoders.hf import HFEncoder

    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(Path(tmp) / "bert-384x12")
        texts = sentences(args.n)
        spans = [[(0, len(t.split(" ")[0]))] for t in texts]
        layers = list(range(13))
        cache = Path(tmp) / "cache"
        enc = with_cache(HFEncoder(model, device="cpu"), cache)
        t0 = time.perf_counter()
        enc.word_vectors(texts, spans, None)
        enc.embed_sentences(texts, layers, ["mean", "cls"])
        cold = time.perf_counter() - t0
        first = enc.cache_stats()
        again = with_cache(HFEncoder(model, device="cpu"), cache)
        t0 = time.perf_counter()
        again.word_vectors(texts, spans, None)
        again.embed_sentences(texts, layers, ["mean", "cls"])
        warm = time.perf_counter() - t0
        second = again.cache_stats()
        enc.cache.close()
        again.cache.close()  # folds the write-ahead log into the file
        file_bytes = sum(p.stat().st_size for p in cache.glob("*"))
        print(
            f"[1] {args.n} sentences, 1 word each x 13 layers + 13 layers x 2 poolings per sentence:"
        )
        print(
            f"    wrote {first.written_bytes / args.n / 1024:.1f} KB payload per sentence "
            f"({file_bytes / args.n / 1024:.1f} KB of SQLite file per sentence; target < 50 KB; "
            f"float16, {first.entries} entries)"
        )
        print(f"    second run: {second.line()}")
        print(
            f"    encode {cold:.1f} s vs cache hit {warm:.2f} s ({cold / max(warm, 1e-9):.0f}x); forward passes on the hit: "
            f"{again.forward_calls}"
        )
        grid_texts = texts[: args.grid_n]
        off = HFEncoder(model, device="cpu")
        t0 = time.perf_counter()
        one = off.embed_sentences(grid_texts, layers, ["mean", "cls"])
        t_one, calls_one = time.perf_counter() - t0, off.forward_calls
        loop = HFEncoder(model, device="cpu")
        t0 = time.perf_counter()
        same = True
        for layer in layers:
            for pooling in ("mean", "cls"):
                same &= bool(
                    (
                        loop.sentence_embeddings(grid_texts, pooling=pooling, layer=layer)
                        == one[(layer, pooling)]
                    ).all()
                )
        t_loop = time.perf_counter() - t0
        print(
            f"[2] {len(grid_texts)} sentences x 26 (layer, pooling): one pass {t_one:.1f} s ({calls_one} forward calls) vs "
            f"one call per pair {t_loop:.1f} s ({loop.forward_calls} forward calls): {t_loop / t_one:.1f}x; "
            f"identical vectors: {same}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
