"""Benchmark: the GPU paths against the CPU path in the same run (``make bench-gpu``).

Without a CUDA device it prints one line saying so and exits 0 (the paths' logic is tested
on CPU tensors in ``make test``: tests/evaluators/compute/test_knn.py,
tests/evaluators/metrics/test_csls.py, tests/evaluators/encoders/test_hf.py). With one:

1. encoding: a random BERT of multilingual-e5-small's shape (384 wide, 12 blocks, feed-forward
   1,536; built from a transformers config, nothing downloaded), ``word_vectors`` of every
   word at all 13 layers of ``--n`` synthetic sentences: the CPU path (fp32) and the GPU in
   fp32, bf16 and fp16: tokens/s, ratio to the CPU path, and the least per-layer cosine of
   the word vectors to the CPU's;
2. exact kNN, ``--knn-n`` x ``--knn-n`` random unit vectors (dim 384, k = 4 both ways): the numpy
   index on the CPU against the torch index on the GPU: seconds, ratio, and the share of
   identical neighbour indices (fp32 on both; rounding may differ in the last bit);
3. CSLS retrieval counts (both directions, S_weak and S_strong) on ``--csls-n`` pairs: numpy
   against the torch backend on the GPU: seconds, ratio, equal counts.

``--device cpu`` runs the "GPU" side on CPU tensors: a smoke test of this script, not a GPU
figure (the line says so).

    .venv/bin/python bench/bench_gpu.py                      # make bench-gpu
    .venv/bin/python bench/bench_gpu.py --n 4000 --knn-n 50000
    .venv/bin/python bench/bench_gpu.py --device cpu --n 64 --knn-n 2000 --csls-n 500
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

import numpy as np  # noqa: E402
from bench_memory import sentences  # noqa: E402


def build_e5_shaped(folder: Path) -> str:
    """Save a random BERT of multilingual-e5-small's shape with a 3,000-word vocabulary."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(3000)]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(
        vocab={w: i for i, w in enumerate(vocab)}, model_max_length=128
    ).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=384,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=128,
    )
    BertModel(config).eval().save_pretrained(folder)
    return str(folder)


def model_spec(spec: str) -> tuple[str, tempfile.TemporaryDirectory | None]:
    """``spec``, or for ``random-e5`` an ``hf:`` folder of :func:`build_e5_shaped`.

    That folder is temporary: it lives as long as the returned handle (keep it while the
    model is in use; it is removed when the handle goes, at exit at the latest).
    """
    if spec != "random-e5":
        return spec, None
    scratch = tempfile.TemporaryDirectory(prefix="xlbench-random-e5-")
    return "hf:" + build_e5_shaped(Path(scratch.name) / "random-e5"), scratch


def _spans(texts: list[str]) -> list[list[tuple[int, int]]]:
    out = []
    for t in texts:
        cuts, pos = [], 0
        for w in t.split(" "):
            cuts.append((pos, pos + len(w)))
            pos += len(w) + 1
        out.append(cuts)
    return out


def _timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def _min_layer_cosine(a: np.ndarray, b: np.ndarray) -> float:
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return float(np.nanmin(cos.min(axis=1)))


def encode_part(model: str, device: str, n: int, batch_size: int) -> None:
    from evaluators.encoders.hf import HFEncoder

    texts = sentences(n)
    spans = _spans(texts)
    cpu = HFEncoder(model, device="cpu", runtime="torch")
    tokens = sum(len(t) for t in cpu.tokenize(texts))
    ref, cpu_s = _timed(lambda: cpu.word_vectors(texts, spans, None).vectors)
    print(
        f"[1] encode {n} sentences ({tokens:,} tokens), word vectors at 13 layers, batch "
        f"{cpu.batch_size} on the CPU (torch), {batch_size} on {device}"
    )
    print(f"    {'path':<22}{'tokens/s':>10}{'vs CPU':>8}  least per-layer cosine to CPU fp32")
    print(f"    {'cpu float32':<22}{tokens / cpu_s:>10.0f}{1.0:>8.2f}  (reference)", flush=True)
    for dtype in ("float32", "bfloat16", "float16"):
        enc = HFEncoder(model, device=device, dtype=dtype, batch_size=batch_size, runtime="torch")
        enc.word_vectors(texts[:32], spans[:32], None)  # warm-up: kernels, allocator
        got, secs = _timed(lambda e=enc: e.word_vectors(texts, spans, None).vectors)
        print(
            f"    {device + ' ' + dtype:<22}{tokens / secs:>10.0f}{cpu_s / secs:>8.2f}  "
            f"{_min_layer_cosine(ref, got):.6f}",
            flush=True,
        )


def knn_part(device: str, n: int) -> None:
    from evaluators.compute import knn
    from evaluators.metrics.vectors import normalize

    rng = np.random.default_rng(0)
    x = normalize(rng.standard_normal((n, 384), dtype=np.float32))
    y = normalize(rng.standard_normal((n, 384), dtype=np.float32))
    (cf, cb), cpu_s = _timed(lambda: knn.knn_numpy(x, y, 4, 4))
    knn.knn_torch(x[:256], y[:256], 4, 4, 256, device)  # warm-up
    (tf, tb), dev_s = _timed(lambda: knn.knn_torch(x, y, 4, 4, 2048, device))
    same = float(np.concatenate([(cf.idx == tf.idx).ravel(), (cb.idx == tb.idx).ravel()]).mean())
    print(
        f"[2] exact kNN {n:,} x {n:,}, dim 384, k 4 both ways: numpy CPU {cpu_s:.2f} s, torch {device} "
        f"{dev_s:.2f} s ({cpu_s / dev_s:.2f}x); identical neighbour indices {same:.4%}",
        flush=True,
    )


def csls_part(device: str, n: int) -> None:
    from evaluators.compute.knn import similarity_backend
    from evaluators.metrics import csls

    rng = np.random.default_rng(1)
    u = rng.standard_normal((n, 384)).astype(np.float32)
    v = (u + rng.standard_normal(u.shape)).astype(np.float32)
    backend = similarity_backend(device, backend="torch")
    want, cpu_s = _timed(lambda: csls.retrieval_counts_pair(u, v))
    csls.retrieval_counts_pair(u[:64], v[:64], backend=backend)  # warm-up
    got, dev_s = _timed(lambda: csls.retrieval_counts_pair(u, v, backend=backend))
    print(
        f"[3] CSLS counts, {n:,} pairs, both directions: numpy CPU {cpu_s:.2f} s, torch {device} "
        f"{dev_s:.2f} s ({cpu_s / dev_s:.2f}x); counts equal: {got == want}",
        flush=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=2000, help="sentences to encode")
    ap.add_argument("--knn-n", type=int, default=20000, help="rows per side of the kNN step")
    ap.add_argument("--csls-n", type=int, default=5000, help="pairs of the CSLS step")
    ap.add_argument(
        "--batch-size", type=int, default=32, help="sentences per forward pass on the GPU side"
    )
    ap.add_argument(
        "--device", default=None, help="torch device of the GPU side (default cuda when present)"
    )
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("bench_gpu: skipped: torch is not installed (pip install 'xlbench[encoders]').")
        return 0
    device = args.device or ("cuda" if torch.cuda.is_available() else None)
    if device is None:
        print(
            f"bench_gpu: skipped: no CUDA device (torch {torch.__version__} sees none); "
            "the GPU paths' logic runs on CPU tensors in make test."
        )
        return 0
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else "CPU tensors"
    print(
        f"bench_gpu on {device} ({name}), torch {torch.__version__}, CPU path with "
        f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}"
        + ("; NOT a GPU figure: --device cpu smoke test" if not device.startswith("cuda") else "")
    )
    with tempfile.TemporaryDirectory() as tmp:
        encode_part(
            build_e5_shaped(Path(tmp) / "bert-e5-small-shape"), device, args.n, args.batch_size
        )
    knn_part(device, args.knn_n)
    csls_part(device, args.csls_n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
