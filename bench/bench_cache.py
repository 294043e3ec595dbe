"""Benchmark: what the embedding cache writes per sentence, its hit rate, and one pass vs one pass per pair.

A random 384-wide, 12-block BERT (as in ``bench_memory.py``) encodes ``--n`` synthetic
sentences twice into a fresh cache folder:

1. word vectors (one word per sentence, all 13 layers) and sentence embeddings at all
   13 layers x (mean, cls): bytes written per sentence (target < 50 KB), then the same
   requests again: hit rate, and hit vs encode time;
2. the same sentence grid with the cache off: ``embed_sentences`` (one forward pass per
   batch for all 26 (layer, pooling) pairs) against one ``sentence_embeddings`` call per
   pair (the evaluators' loop before), timed on ``--grid-n`` sentences.

3. ``--scale 10000,100000,1000000``: the store alone (no model), ``put_many``/``get_many``
   per row as the cache grows, at its cap (every put evicts as many rows as it adds) and
   with every read touching its rows (the LRU minute set to 0, the worst case): the
   current store beside the one before issue #28 (a SUM over the table on every put, one
   ``UPDATE`` per row read), in the same run, wall and CPU time per row; then the same
   rows read again within the minute (the normal clock: no write).

    .venv/bin/python bench/bench_cache.py            # 300 sentences
    .venv/bin/python bench/bench_cache.py --scale 10000,100000,1000000 --n 0
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

#: Rows per put_many / get_many call, and calls timed at each size.
SCALE_BATCH, SCALE_CALLS = 1000, 10


def legacy_cache_class():
    """The store before issue #28, as a baseline: SUM over the table per put, UPDATE per row read."""
    import time as _time

    from evaluators.encoders import cache as mod

    class LegacyCache(mod.EmbeddingCache):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            # the old file: no triggers keeping a total, default sync and page cache
            for name in ("insert", "delete", "update"):
                self._db.execute(f"DROP TRIGGER IF EXISTS entries_total_{name}")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA mmap_size=0")

        def get_many(self, keys):
            out, stale, now = {}, [], _time.time_ns()
            by_digest = {mod._digest(self.model, k): k for k in keys}
            digests = list(by_digest)
            for i in range(0, len(digests), 500):
                chunk = digests[i : i + 500]
                rows = self._db.execute(
                    f"SELECT k, data, used FROM entries WHERE k IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                out.update((by_digest[d], data) for d, data, _ in rows)
                stale.extend(d for d, _, used in rows if used < now - mod._TOUCH_NS)
            if stale:
                with self._db:
                    self._db.executemany(
                        "UPDATE entries SET used = ? WHERE k = ?",
                        [(now + i, d) for i, d in enumerate(stale)],
                    )
            return out

        def put_many(self, items):
            now = _time.time_ns()
            rows = [
                (mod._digest(self.model, k), self._model_id, v, len(v) + 16, now + i)
                for i, (k, v) in enumerate(items)
            ]
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO entries (k, model, data, nbytes, used) VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            db = self._db
            total = db.execute("SELECT COALESCE(SUM(nbytes), 0) FROM entries").fetchone()[0]
            if self.max_bytes and total > self.max_bytes:
                excess, freed, doomed = total - self.max_bytes, 0, []
                for rowid, nbytes in db.execute("SELECT id, nbytes FROM entries ORDER BY used, id"):
                    doomed.append((rowid,))
                    freed += nbytes
                    if freed >= excess:
                        break
                with db:
                    db.executemany("DELETE FROM entries WHERE id = ?", doomed)

    return LegacyCache


def _timed(fn) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def scale_run(cls, folder: Path, sizes: list[int]) -> list[dict]:
    """Grow one store through ``sizes`` rows; at each, time puts at the cap and reads of live rows."""
    import numpy as np

    from evaluators.encoders import cache as mod

    touch_ns = mod._TOUCH_NS
    mod._TOUCH_NS = 0  # every read touches its rows: the worst case of the LRU
    blob = mod.pack(np.arange(8, dtype=np.float32))  # small vectors: 1M rows in seconds
    entry = len(blob) + 16
    store = cls(folder, "bench", "r", max_bytes=0)
    rng = np.random.default_rng(0)
    made = 0
    out = []
    for size in sizes:
        store.max_bytes = 0
        while made < size:  # grow (untimed) through the store's own writes
            step = min(10 * SCALE_BATCH, size - made)
            store.put_many((f"k{i}", blob) for i in range(made, made + step))
            made += step
        store.max_bytes = size * entry  # at the cap: each put evicts as many rows as it adds
        put_wall = put_cpu = get_wall = get_cpu = reread_wall = reread_cpu = 0.0
        for _ in range(SCALE_CALLS):
            batch = [(f"k{i}", blob) for i in range(made, made + SCALE_BATCH)]
            made += SCALE_BATCH
            w, c = _timed(lambda b=batch: store.put_many(b))
            put_wall, put_cpu = put_wall + w, put_cpu + c
            # live rows: the newer half (eviction takes the oldest, far fewer than size / 2)
            keys = [f"k{i}" for i in rng.integers(made - size // 2, made, SCALE_BATCH)]
            got: dict = {}
            w, c = _timed(lambda k=keys, g=got: g.update(store.get_many(k)))
            get_wall, get_cpu = get_wall + w, get_cpu + c
            assert len(got) == len(set(keys)), "a live row was not found"
            # the same rows again within the minute: the normal clock writes nothing
            mod._TOUCH_NS = touch_ns
            w, c = _timed(lambda k=keys: store.get_many(k))
            mod._TOUCH_NS = 0
            reread_wall, reread_cpu = reread_wall + w, reread_cpu + c
        rows = SCALE_CALLS * SCALE_BATCH
        held = store._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        out.append(
            {
                "size": size,
                "held": held,
                "put_us": 1e6 * put_wall / rows,
                "put_cpu_us": 1e6 * put_cpu / rows,
                "get_us": 1e6 * get_wall / rows,
                "get_cpu_us": 1e6 * get_cpu / rows,
                "reread_us": 1e6 * reread_wall / rows,
                "reread_cpu_us": 1e6 * reread_cpu / rows,
            }
        )
    store.close()
    mod._TOUCH_NS = touch_ns
    return out


def scale_main(sizes: list[int]) -> None:
    """Print the per-row table of :func:`scale_run` for the store before #28 and the current one."""
    from evaluators.encoders.cache import EmbeddingCache

    print(
        f"[3] store alone, {SCALE_BATCH} rows per call, {SCALE_CALLS} calls timed per size, at the cap, "
        "every read touching (us per row: wall / CPU)"
    )
    print(
        f"    {'rows':>9}  {'store':<8}{'put wall':>10}{'put CPU':>9}{'get wall':>10}{'get CPU':>9}"
        f"{'re-read wall':>14}{'re-read CPU':>13}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        results = {
            name: scale_run(cls, Path(tmp) / name, sizes)
            for name, cls in (("before", legacy_cache_class()), ("now", EmbeddingCache))
        }
    for i, size in enumerate(sizes):
        for name, res in results.items():
            r = res[i]
            print(
                f"    {size:>9,}  {name:<8}{r['put_us']:>10.1f}{r['put_cpu_us']:>9.1f}"
                f"{r['get_us']:>10.1f}{r['get_cpu_us']:>9.1f}"
                f"{r['reread_us']:>14.1f}{r['reread_cpu_us']:>13.1f}",
                flush=True,
            )
    first, last = results["now"][0], results["now"][-1]
    print(
        f"    now, {sizes[-1]:,} vs {sizes[0]:,} rows: put {last['put_cpu_us'] / first['put_cpu_us']:.2f}x, "
        f"get {last['get_cpu_us'] / first['get_cpu_us']:.2f}x per row (CPU); before: put "
        f"{results['before'][-1]['put_cpu_us'] / results['before'][0]['put_cpu_us']:.2f}x, get "
        f"{results['before'][-1]['get_cpu_us'] / results['before'][0]['get_cpu_us']:.2f}x; "
        f"re-read within the minute, now: {last['reread_cpu_us'] / first['reread_cpu_us']:.2f}x"
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--grid-n", type=int, default=64)
    ap.add_argument(
        "--scale",
        default="",
        help="comma-separated cache sizes in rows for [3], e.g. 10000,100000,1000000 (default: skip [3])",
    )
    args = ap.parse_args()
    if args.scale:
        scale_main([int(v) for v in args.scale.split(",")])
    if args.n <= 0:
        return 0
    from evaluators.encoders.cached import with_cache
    from evaluators.encoders.hf import HFEncoder

    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(Path(tmp) / "bert-384x12")
        texts = sentences(args.n)
        spans = [[(0, len(t.split(" ")[0]))] for t in texts]
        layers = list(range(13))
        cache = Path(tmp) / "cache"
        enc = with_cache(HFEncoder(model, device="cpu", runtime="torch"), cache)
        t0 = time.perf_counter()
        enc.word_vectors(texts, spans, None)
        enc.embed_sentences(texts, layers, ["mean", "cls"])
        cold = time.perf_counter() - t0
        first = enc.cache_stats()
        again = with_cache(HFEncoder(model, device="cpu", runtime="torch"), cache)
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
        off = HFEncoder(model, device="cpu", runtime="torch")
        t0 = time.perf_counter()
        one = off.embed_sentences(grid_texts, layers, ["mean", "cls"])
        t_one, calls_one = time.perf_counter() - t0, off.forward_calls
        loop = HFEncoder(model, device="cpu", runtime="torch")
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
