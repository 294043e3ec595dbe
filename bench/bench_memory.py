"""Benchmark: peak memory of word vectors for 2k, 10k and 50k sentences (streaming pooling).

A randomly initialised BERT with the output size of multilingual-e5-small (384 wide,
12 blocks: 13 representations) but a thin feed-forward layer (so that it runs fast
on two cores) encodes synthetic 8-word sentences. Each step runs in its own
subprocess and reports its max RSS minus the RSS after loading the model:

``words``    ``encoder.word_vectors(texts, spans, layers=None)`` with one word per sentence
             (word retrieval asks for the dictionary word of each sentence), all 13 layers;
``allwords`` the same with every word of every sentence (the embedding aligner's request);
``tokens``   the old path for comparison: ``encoder.token_states(texts, None)`` held for
             every sentence (what evaluators kept before pooling per batch), 2k only.

Memory must grow with words x layers x dim (13 x 384 x 4 bytes = 20 KB per word), not
with tokens x layers. The last line projects the paper's word-retrieval setting
(n = 5,000, 10 repeats, 50k-pair corpus: at most 100k sentences to encode, one word
each, 13 layers), EXTRAPOLATED linearly from the measured slope.

    .venv/bin/python bench/bench_memory.py                       # 2k, 10k, 50k (a few minutes on 2 cores)
    .venv/bin/python bench/bench_memory.py --sizes 2000,10000

This is a benchmark, not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def rss_mib() -> float:
    """Current resident set size (``/proc/self/statm``), MiB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def build_model(folder: Path, hidden: int = 384, layers: int = 12) -> str:
    """Save a random BERT (``layers`` blocks, ``hidden`` wide) with a 3,000-word WordPiece vocab."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    words = [f"w{i}" for i in range(3000)]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(
        vocab={w: i for i, w in enumerate(vocab)}, model_max_length=128
    ).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=6,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).eval().save_pretrained(folder)
    return str(folder)


def sentences(n: int, words_per: int = 8, seed: int = 0) -> list[str]:
    """Distinct synthetic sentences of vocabulary words."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 3000, size=(n, words_per))
    return [" ".join(f"w{j}" for j in row) + f" w{i % 3000}" for i, row in enumerate(ids)]


def step(model: str, mode: str, n: int, batch_size: int) -> dict:
    """Encode in this process; return figures."""
    from evaluators.encoders.hf import HFEncoder

    enc = HFEncoder(model, batch_size=batch_size, use_cache=False, device="cpu")
    texts = sentences(n)
    base = rss_mib()
    t0 = time.perf_counter()
    if mode == "tokens":
        held = enc.token_states(texts, None)
        units = sum(len(t.tokens) for t in held)
    else:
        spans = []
        for t in texts:
            cuts, pos = [], 0
            for w in t.split(" "):
                cuts.append((pos, pos + len(w)))
                pos += len(w) + 1
            spans.append(cuts if mode == "allwords" else cuts[:1])
        wv = enc.word_vectors(texts, spans, None)
        units = int(wv.found.sum())
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "mode": mode,
        "n": n,
        "units": units,
        "wall_s": wall,
        "base_mib": base,
        "peak_mib": peak,
        "grown_mib": peak - base,
        "layers": enc.num_layers + 1,
        "dim": enc.dim,
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="2000,10000,50000")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--step", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step:
        mode, n, _ = args.step
        print(json.dumps(step(args.model, mode, int(n), args.batch_size)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(Path(tmp) / "bert-384x12")
        plan = [("tokens", sizes[0])] + [("words", n) for n in sizes] + [("allwords", sizes[0])]
        rows = []
        for mode, n in plan:
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--model",
                    model,
                    "--step",
                    mode,
                    str(n),
                    "x",
                    "--batch-size",
                    str(args.batch_size),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                print(f"{mode} {n}: failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
                continue
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            unit = "token" if mode == "tokens" else "word"
            print(
                f"{mode:<9}{n:>7,} sentences: {r['units']:>9,} {unit}s x {r['layers']} layers, "
                f"grew {r['grown_mib']:>7.1f} MiB over the loaded model ({r['base_mib']:.0f} MiB), "
                f"{r['grown_mib'] * 2**20 / max(1, r['units']) / 1024:>6.1f} KiB per {unit}; peak RSS {r['peak_mib']:.0f} MiB; "
                f"{r['wall_s']:.0f} s",
                flush=True,
            )
    words = [r for r in rows if r["mode"] == "words"]
    if len(words) >= 2:
        a, b = words[0], words[-1]
        slope = (b["grown_mib"] - a["grown_mib"]) / max(1, b["units"] - a["units"])  # MiB per word
        ideal = a["layers"] * a["dim"] * 4 / 2**20
        print(
            f"slope {slope * 1024:.1f} KiB per word (pooled output alone: {ideal * 1024:.1f} KiB = "
            f"{a['layers']} layers x {a['dim']} x 4 bytes)"
        )
        paper = b["peak_mib"] + slope * (100_000 - b["units"])
        print(
            f"paper word-retrieval setting (n=5,000 x 10 repeats, 50k pairs -> <= 100k sentences, 1 word each, "
            f"{a['layers']} layers): EXTRAPOLATED peak ~{paper / 1024:.1f} GiB (target: within 24 GB)"
        )
    tok = [r for r in rows if r["mode"] == "tokens"]
    if tok and words:
        print(
            f"old token-state path at {tok[0]['n']:,} sentences grew {tok[0]['grown_mib']:.0f} MiB vs "
            f"{words[0]['grown_mib']:.0f} MiB pooled ({tok[0]['grown_mib'] / max(words[0]['grown_mib'], 1):.0f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
