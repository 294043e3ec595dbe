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

    .venv/bin/python bench/bench_memory.py                       # 2k, 10k (make bench)
    .venv/bin/python bench/bench_memory.py --sizes 2000,10000,50000
    .venv/bin/python bench/bench_memory.py --paper-word-retrieval  # the paper's setting, RUN (10-25 min)

``--paper-word-retrieval`` runs the paper's word-retrieval setting for real instead of
extrapolating it: a synthetic cbd dataset folder of 50,000 distinct sentence pairs (one
dictionary word each, written by the builders' own writer against the cbd schema, plus an
``aligner`` split as real builds have) and a random BERT with multilingual-e5-small's shape
(384 wide, 12 blocks, 12 heads, feed-forward 1,536, vocabulary 250,037: 13 representations)
are scored by ``xlbench.evaluate("word-retrieval", n=5000, repeats=10, layers="all",
use_cache=False)`` in a child process; the child's wall time and peak RSS
(``getrusage(RUSAGE_CHILDREN)``) are printed against the 24 GB target.

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

    enc = HFEncoder(model, batch_size=batch_size, device="cpu", runtime="torch")
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


#: multilingual-e5-small's vocabulary size: the embedding matrix is part of the resident model.
E5_SMALL_VOCAB = 250_037


def build_e5_small_shape(folder: Path, ffn: int = 1536) -> str:
    """Save a random BERT with multilingual-e5-small's shape (only 3,005 of its ids are tokenised)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(3000)]
    BertTokenizerFast(
        vocab={w: i for i, w in enumerate(vocab)}, model_max_length=512
    ).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=E5_SMALL_VOCAB,
        hidden_size=384,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=ffn,
        max_position_embeddings=512,
    )
    BertModel(config).eval().save_pretrained(folder)
    return str(folder)


def write_cbd_corpus(folder: Path, pairs: int, seed: int = 0) -> str:
    """Write a cbd dataset folder of ``pairs`` distinct synthetic sentence pairs (builders' writer, cbd schema).

    Each pair has 8 words a side; the ``test`` split holds one dictionary pair per sentence pair
    and the ``aligner`` split one other pair for a tenth of them (the Fig. 5 histogram reads it).
    """
    import numpy as np

    from builders.base import BuildResult
    from builders.release.artifact import write_dataset
    from evaluators.schema import cbd as S
    from evaluators.schema import get_family
    from evaluators.schema.langs import pair_config
    from evaluators.schema.meta import Manifest

    rng = np.random.default_rng(seed)
    words = rng.integers(0, 3000, size=(pairs, 2, 8))
    # the sentence number as a word makes every pair distinct (and stays one token for < 3000)
    words[:, :, 7] = np.arange(pairs)[:, None] % 3000
    where = rng.integers(0, 7, size=(pairs, 2))

    def row(i: int, ws: int, wt: int, method: str) -> dict:
        src = [f"w{j}" for j in words[i, 0]]
        tgt = [f"w{j}" for j in words[i, 1]]
        src_text, tgt_text = " ".join(src), " ".join(tgt)
        s0 = sum(len(w) + 1 for w in src[:ws])
        t0 = sum(len(w) + 1 for w in tgt[:wt])
        s1, t1 = s0 + len(src[ws]), t0 + len(tgt[wt])
        return {
            S.ID: f"{i}:{s0}-{s1}:{t0}-{t1}",
            S.SENT_ID: i,
            S.SRC_SENTENCE: src_text,
            S.TGT_SENTENCE: tgt_text,
            S.SRC_WORD: src[ws],
            S.TGT_WORD: tgt[wt],
            S.SRC_START: s0,
            S.SRC_END: s1,
            S.TGT_START: t0,
            S.TGT_END: t1,
            S.METHOD: method,
        }

    test = [row(i, int(where[i, 0]), int(where[i, 1]), "dictionary") for i in range(pairs)]
    aligner = [
        row(i, (int(where[i, 0]) + 1) % 7, (int(where[i, 1]) + 1) % 7, "eflomal")
        for i in range(0, pairs, 10)
    ]
    config = pair_config("eng_Latn", "deu_Latn")
    result = BuildResult(
        tables={config: {"test": test, "aligner": aligner}},
        parameters={"synthetic_pairs": pairs, "seed": seed},
        construction=["Synthetic 8-word sentence pairs, one dictionary word each (benchmark)."],
        limitations=["Synthetic: for memory and speed measurements only."],
        license="cc0-1.0",
        name="xlbench-cbd-bench",
    )
    manifest = Manifest(
        name="xlbench-cbd-bench",
        family="cbd",
        version="1.0.0",
        builder="bench.bench_memory",
        seed=seed,
        parameters=result.parameters,
        changelog=[{"version": "1.0.0", "date": "2026-12-01", "changes": "benchmark corpus"}],
    )
    return str(write_dataset(folder, get_family("cbd"), result, manifest))


def paper_step(model: str, dataset: str, n: int, repeats: int) -> dict:
    """Run word retrieval through the runner in this process; return figures."""
    import logging

    import xlbench

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    t0 = time.perf_counter()
    res = xlbench.evaluate(
        "word-retrieval",
        model=f"hf:{model}",
        dataset=dataset,
        use_cache=False,
        device="cpu",
        backend="torch",  # the figures in docs/performance.md were measured on torch
        n=n,
        repeats=repeats,
        layers="all",
    )
    entries = next(iter(res.scores.values()))
    return {
        "wall_s": time.perf_counter() - t0,
        "peak_self_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "layers": len(entries),
        "n": entries[0]["n"],
        "repeats": entries[0]["repeats"],
        "main_score": res.main_score,
    }


def paper_word_retrieval(pairs: int, n: int, repeats: int, ffn: int = 1536) -> int:
    """Build the corpus and the model, run the evaluator in a child, print its wall time and peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        model = build_e5_small_shape(Path(tmp) / "e5-small-shape", ffn)
        dataset = write_cbd_corpus(Path(tmp) / "cbd-synthetic", pairs)
        print(
            f"built a random e5-small-shaped BERT and a {pairs:,}-pair cbd folder in "
            f"{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        t1 = time.perf_counter()
        # the child's log and progress bars pass through (a long run shows where it is)
        proc = subprocess.run(
            [sys.executable, __file__, "--paper-step", model, dataset, str(n), str(repeats)],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - t1
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if proc.returncode != 0:
        print(
            f"failed (exit {proc.returncode}) after {wall:.0f} s; peak RSS of the child {peak:.0f} MiB"
        )
        return 1
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    print(
        f"word retrieval, {pairs:,}-pair corpus, n={r['n']:,} x {r['repeats']} repeats, "
        f"{r['layers']} layers (random BERT 384 x 12, feed-forward {ffn}), no cache: MEASURED "
        f"wall {wall:.0f} s (evaluate() {r['wall_s']:.0f} s), peak RSS of the child "
        f"{peak:.0f} MiB = {peak / 1024:.2f} GiB -> {'within' if peak < 24 * 1024 else 'OVER'} 24 GB; "
        f"load average {os.getloadavg()[0]:.1f} (main score {r['main_score']:.4f}: chance-level, a random model)"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="2000,10000")
    ap.add_argument(
        "--paper-word-retrieval",
        action="store_true",
        help="run word retrieval at the paper's setting over a 50k-pair corpus (10-25 min)",
    )
    ap.add_argument(
        "--pairs", type=int, default=50_000, help="corpus size of --paper-word-retrieval"
    )
    ap.add_argument("--n", type=int, default=5000, help="--paper-word-retrieval: pairs per sample")
    ap.add_argument("--repeats", type=int, default=10, help="--paper-word-retrieval: samples")
    ap.add_argument(
        "--ffn",
        type=int,
        default=1536,
        help="--paper-word-retrieval: feed-forward width (e5-small: 1536; smaller runs faster, "
        "same outputs' memory)",
    )
    ap.add_argument("--paper-step", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--step", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.paper_step:
        model, dataset, n, repeats = args.paper_step
        print(json.dumps(paper_step(model, dataset, int(n), int(repeats))))
        return 0
    if args.paper_word_retrieval:
        return paper_word_retrieval(args.pairs, args.n, args.repeats, args.ffn)
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
