"""Benchmark: contextual-dictionary extraction on 1,000,000 synthetic sentence pairs.

Synthetic data shaped like news text (100,000 distinct pairs repeated to 1M by
default): Zipf-distributed words (20 per sentence),
a 50,000-entry dictionary with 1-3 translations per word, 5,000 two-word
entries and shared translations (so every drop reason occurs). Measures:

* ``python``: :func:`builders.cbd.logic.extract` (the builder's code) over
  chunks, with ``--workers`` processes (fork; the lexicon is shared copy-on-write).
* ``polars``: the same rule for one-word entries as joins and group-bys in
  polars, in batches (multi-word entries and overlap resolution left out, so it
  does less work than the Python path).

Prints wall time, pairs/s and peak resident memory (parent + children).

    python bench/bench_cbd_extract.py                     # 1M pairs, python with 2 workers, then polars
    python bench/bench_cbd_extract.py --pairs 100000 --impl python --workers 1
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from multiprocessing import get_context
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builders.cbd import logic  # noqa: E402

_LEX = None


def synthetic(n_pairs: int, seed: int = 0, vocab: int = 50_000, length: int = 20):
    """Return ``(pairs, entries)``: synthetic sentence pairs and dictionary entries."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))

    def words(n, lo, hi):
        lens = rng.integers(lo, hi, size=n)
        chars = rng.integers(0, 26, size=(n, hi))
        return list(dict.fromkeys("".join(letters[row[:k]]) for row, k in zip(chars, lens)))

    src_vocab = words(vocab + 2000, 3, 11)[:vocab]
    tgt_vocab = words(int(vocab * 1.2) + 2000, 4, 12)[: int(vocab * 1.2)]
    n_tr = rng.choice([1, 2, 3], p=[0.8, 0.15, 0.05], size=vocab)
    trans = [[tgt_vocab[j] for j in rng.integers(0, len(tgt_vocab), size=k)] for k in n_tr]
    entries = [(s, t) for s, ts in zip(src_vocab, trans) for t in ts]
    for _ in range(5000):  # two-word entries
        a, b = rng.integers(0, vocab, size=2)
        entries.append((f"{src_vocab[a]} {src_vocab[b]}", f"{trans[a][0]} {trans[b][0]}"))
    ranks = np.arange(1, vocab + 1)
    p = 1.0 / ranks**1.1
    p /= p.sum()
    pairs = []
    block = 100_000
    for start in range(0, n_pairs, block):
        m = min(block, n_pairs - start)
        ids = rng.choice(vocab, size=(m, length), p=p)
        keep = rng.random((m, length)) < 0.7
        noise = rng.integers(0, len(tgt_vocab), size=(m, length))
        pick = rng.integers(0, 3, size=(m, length))
        for r in range(m):
            src = " ".join(src_vocab[i] for i in ids[r])
            tgt = " ".join(
                trans[i][pick[r, c] % len(trans[i])] if keep[r, c] else tgt_vocab[noise[r, c]]
                for c, i in enumerate(ids[r])
            )
            pairs.append((start + r, src.capitalize() + ".", tgt.capitalize() + "."))
    return pairs, entries


def _work(chunk):
    records, counts = logic.extract(chunk, _LEX)
    return [
        (r["sent_id"], r["src_start"], r["src_end"], r["tgt_start"], r["tgt_end"]) for r in records
    ], counts


def run_python(pairs, lex, workers: int, chunk: int = 10_000):
    global _LEX
    _LEX = lex
    chunks = [pairs[i : i + chunk] for i in range(0, len(pairs), chunk)]
    total = {}
    kept = 0
    if workers <= 1:
        results = map(_work, chunks)
    else:
        pool = get_context("fork").Pool(workers)
        results = pool.imap(_work, chunks, chunksize=1)
    for recs, counts in results:
        kept += len(recs)
        for k, v in counts.items():
            total[k] = total.get(k, 0) + v
    if workers > 1:
        pool.close()
        pool.join()
    return kept, total


def run_polars(pairs, entries, batch: int = 100_000):
    import polars as pl

    from evaluators.schema.cbd import WORD_PATTERN

    single = [(a, b) for a, b in entries if " " not in a and " " not in b]
    dic = pl.DataFrame({"s_key": [a for a, _ in single], "t_key": [b for _, b in single]}).unique()
    kept = 0
    for start in range(0, len(pairs), batch):
        part = pairs[start : start + batch]
        df = pl.DataFrame(
            {
                "sent_id": [p[0] for p in part],
                "src": [p[1] for p in part],
                "tgt": [p[2] for p in part],
            }
        )

        def tokens(col, name, df=df):
            return (
                df.select("sent_id", pl.col(col).str.extract_all(WORD_PATTERN).alias(name))
                .explode(name)
                .with_columns(pl.int_range(pl.len()).over("sent_id").alias(name + "_pos"))
            )

        s = tokens("src", "s_key")
        t = tokens("tgt", "t_key")
        edges = s.join(dic, on="s_key").join(t, on=["sent_id", "t_key"])
        edges = edges.with_columns(
            pl.len().over(["sent_id", "s_key_pos"]).alias("n_s"),
            pl.len().over(["sent_id", "t_key_pos"]).alias("n_t"),
        )
        kept += edges.filter((pl.col("n_s") == 1) & (pl.col("n_t") == 1)).height
    return kept


def cpu_s() -> float:
    """User + system CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def peak_mib() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + kids) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument(
        "--distinct",
        type=int,
        default=100_000,
        help="distinct synthetic pairs, repeated up to --pairs (generation is slower than extraction)",
    )
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--impl", choices=["python", "polars", "both"], default="both")
    args = ap.parse_args()
    t0 = time.perf_counter()
    base, entries = synthetic(min(args.distinct, args.pairs))
    pairs = [(i, base[i % len(base)][1], base[i % len(base)][2]) for i in range(args.pairs)]
    t1 = time.perf_counter()
    print(
        f"generated {len(pairs):,} pairs ({len(base):,} distinct), {len(entries):,} dictionary entries in {t1 - t0:.1f}s",
        flush=True,
    )
    lex = logic.build_lexicon(entries)
    t2 = time.perf_counter()
    print(
        f"lexicon: {lex.counts['source_keys']:,} source keys in {t2 - t1:.1f}s; peak RSS so far {peak_mib():.0f} MiB",
        flush=True,
    )
    if args.impl in ("python", "both"):
        t, c = time.perf_counter(), cpu_s()
        kept, counts = run_python(pairs, lex, args.workers)
        dt, dc = time.perf_counter() - t, cpu_s() - c
        print(
            f"python ({args.workers} worker(s)): {kept:,} pairs kept from {counts['source_units']:,} dictionary units "
            f"in {dt:.1f}s = {len(pairs) / dt:,.0f} sentence pairs/s; dropped "
            + ", ".join(
                f"{k}={counts[k]:,}"
                for k in ("no_candidate", "ambiguous_source", "ambiguous_target", "overlap")
            )
            + f"; CPU {dc:.1f}s; peak RSS (parent + largest child) {peak_mib():.0f} MiB; load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    if args.impl in ("polars", "both"):
        t, c = time.perf_counter(), cpu_s()
        kept = run_polars(pairs, entries)
        dt, dc = time.perf_counter() - t, cpu_s() - c
        print(
            f"polars (one-word entries only, no offsets): {kept:,} pairs in {dt:.1f}s = {len(pairs) / dt:,.0f} sentence pairs/s; "
            f"CPU {dc:.1f}s; peak RSS {peak_mib():.0f} MiB; load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
